"""core.state: the controller's state as plain data, with an exact JSON round trip."""

from __future__ import annotations

import json

import pytest

from cronctl.core.dst import DaylightSaving
from cronctl.core.retention import Finished
from cronctl.core.spec import CATCH_UP_ALL, PAST_LIMIT_LAUNCH, JobSpec, Options, Policy
from cronctl.core.state import (FAILED, RETRY_PENDING, SUCCEEDED, ControllerState, Job, JobState, PendingRetry,
                                Queued, Run)
from cronctl.core.times import parse_time
from cronctl.core.zones import parse_zone


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


ONE, TWO, THREE = t("2024-03-01T01:00"), t("2024-03-01T02:00"), t("2024-03-01T03:00")


def a_full_state() -> ControllerState:
    options = Options(starting_deadline=5, timeout=30, keep_succeeded=2, keep_failed=0,
                      tz=parse_zone("Europe/Berlin"), retries=2, retry_delay=3, catch_up=CATCH_UP_ALL, jitter=40,
                      missed_limit=7, past_limit=PAST_LIMIT_LAUNCH, more_schedules=("30 12 * * *",),
                      exclude=("2024-12-25", "* * 1 1 *"), daylight_saving=DaylightSaving.SKIP)
    spec = JobSpec("etl", "0 * * * *", Policy.WAIT_FOR_LAST, options, ONE - 60, 0)
    state = JobState(last_schedule=TWO, launched=3, active=["etl-2", "etl-3"],
                     kept_succeeded=[Finished(TWO, 1, "etl-1")], skipped=4, last_skipped=THREE,
                     overflowed=2, overflowing=True, not_before=ONE,
                     pending_retries=[PendingRetry(THREE, 2, "etl-2", 2)], queue=[Queued(THREE, "catch-up")])
    runs = {"etl-1": Run("etl-1", "etl", 1, SUCCEEDED, ONE, ONE, TWO),
            "etl-2": Run("etl-2", "etl", 2, RETRY_PENDING, TWO, TWO, attempt=1),
            "etl-3": Run("etl-3", "etl", 3, "running", THREE, THREE, attempt=1)}
    return ControllerState(clock=THREE, jobs={"etl": Job(spec, state)}, runs=runs)


def test_every_field_survives_a_json_round_trip() -> None:
    state = a_full_state()
    text = json.dumps(state.to_json())
    assert ControllerState.from_json(json.loads(text)) == state


def test_a_state_of_another_version_is_refused() -> None:
    data = a_full_state().to_json()
    data["version"] = 2
    with pytest.raises(ValueError, match="state version 2"):
        ControllerState.from_json(data)


def test_a_job_state_written_before_the_counting_rules_reads_with_their_defaults() -> None:
    data = JobState(skipped=3, overflowed=1).to_json()
    for key in ("last_skipped", "overflowing", "not_before", "pending_retries", "queue"):
        del data[key]
    assert JobState.from_json(data) == JobState(skipped=3, overflowed=1)


def test_options_written_before_the_missed_limit_read_as_the_seeds_rule() -> None:
    data = a_full_state().to_json()
    for key in ("missed_limit", "past_limit"):
        del data["jobs"][0]["options"][key]
    options = ControllerState.from_json(data).jobs["etl"].spec.options
    assert (options.missed_limit, options.past_limit) == (100, "hold")


def test_a_failed_attempt_with_retries_left_waits_for_the_next_one() -> None:
    state = JobState(active=["etl-1"])
    pending = state.fail_attempt("etl-1", 1, attempt=1, at=ONE, retries=1, delay=5)
    assert pending == PendingRetry(ONE + 5, 1, "etl-1", 2)
    assert state.pending_retries == [pending]
    assert state.fail_attempt("etl-1", 1, attempt=2, at=ONE + 10, retries=1, delay=5) is None


def test_a_finish_leaves_active_forgets_the_retry_and_applies_retention() -> None:
    state = JobState(active=["etl-1", "etl-2"], kept_failed=[Finished(ONE, 1, "etl-0")],
                     pending_retries=[PendingRetry(THREE, 2, "etl-2", 2)])
    dropped = state.record_finish("etl-2", 2, FAILED, TWO, keep_succeeded=3, keep_failed=1)
    assert dropped == [Finished(ONE, 1, "etl-0")]
    assert (state.active, state.kept_failed, state.pending_retries) == (["etl-1"], [Finished(TWO, 2, "etl-2")], [])
