"""Backfill (issue 14, ``core/backfill.py``): every schedule time of a past range, oldest first.

Jobs are created on 2024-03-01T00:00 (hourly, "0 * * * *") and backfilled from
2024-02-28T22:00 to 2024-02-29T01:00: four times, both ends included. The
anchor does not limit a backfill: it runs times before the job existed.
"""

from __future__ import annotations

import json

import pytest

from cronctl.core.backfill import MAX_BACKFILL_RUNS, BackfillError
from cronctl.core.controller import Controller
from cronctl.core.backfill import preview
from cronctl.core.spec import JobSpec, Options, Policy
from cronctl.core.state import ControllerState, JobState
from cronctl.core.tick import Launch, Replace, Skip
from cronctl.core.times import format_time, parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED, FROM, TO = t("2024-03-01T00:00"), t("2024-02-28T22:00"), t("2024-02-29T01:00")
TIMES = ["2024-02-28T22:00", "2024-02-28T23:00", "2024-02-29T00:00", "2024-02-29T01:00"]


def controller(policy: str = "allow", expression: str = "0 * * * *") -> Controller:
    controller = Controller()
    controller.create_job(CREATED, "etl", expression, policy)
    return controller


def launches(decisions: list[object]) -> list[tuple[str, str]]:
    return [(format_time(d.scheduled_for), d.reason) for d in decisions if isinstance(d, Launch)]


def test_a_preview_lists_every_time_of_the_range_oldest_first_both_ends_included() -> None:
    assert [format_time(m) for m in controller().backfill_preview(CREATED + 5, "etl", FROM, TO)] == TIMES


def test_a_preview_leaves_out_excluded_times() -> None:
    spec = JobSpec("etl", "0 * * * *", Policy.ALLOW, Options(exclude=("2024-02-29",)), CREATED, 0)
    assert [format_time(m) for m in preview(spec, FROM, TO, CREATED)] == TIMES[:2]


@pytest.mark.parametrize("start, end, message", [
    ("2024-02-29T01:00", "2024-02-28T22:00", "the range ends (2024-02-28T22:00) before it starts (2024-02-29T01:00)"),
    ("2024-02-28T22:00", "2024-03-01T01:00", "the range ends at 2024-03-01T01:00, after now (2024-03-01T00:05): "
                                             "a backfill runs past times only"),
    ("2023-01-01T00:00", "2024-02-29T00:00", "the range holds 10177 schedule times, more than the 1000 one "
                                             "backfill may run: ask for a shorter range"),
    ("2020-01-01T00:00", "2024-02-29T00:00", "the range holds 36481 schedule times, more than the 1000 one "
                                             "backfill may run: ask for a shorter range"),
])
def test_a_wrong_or_too_long_range_is_refused_whole(start: str, end: str, message: str) -> None:
    jobs = controller()
    with pytest.raises(BackfillError) as refused:
        jobs.backfill(CREATED + 5, "etl", t(start), t(end), "r1")
    assert refused.value.message == message
    assert jobs.state.jobs["etl"].state.backfill is None
    assert MAX_BACKFILL_RUNS == 1000


def test_backfill_runs_go_one_at_a_time_oldest_first_each_for_its_own_time() -> None:
    jobs = controller()
    jobs.backfill(CREATED + 5, "etl", FROM, TO, "r1")
    assert launches(jobs.tick(CREATED + 5)) == [("2024-02-28T22:00", "backfill")]
    assert launches(jobs.tick(CREATED + 6)) == []  # the first still runs
    jobs.finish(CREATED + 7, "etl-1", "succeeded")
    assert launches(jobs.tick(CREATED + 7)) == [("2024-02-28T23:00", "backfill")]
    jobs.finish(CREATED + 8, "etl-2", "failed")  # a failed run does not stop the backfill
    assert launches(jobs.tick(CREATED + 8)) == [("2024-02-29T00:00", "backfill")]
    jobs.finish(CREATED + 9, "etl-3", "succeeded")
    assert launches(jobs.tick(CREATED + 9)) == [("2024-02-29T01:00", "backfill")]
    jobs.finish(CREATED + 10, "etl-4", "succeeded")
    assert launches(jobs.tick(CREATED + 10)) == []
    backfill = jobs.state.jobs["etl"].state.backfill
    assert backfill is not None and (backfill.done, backfill.launched, backfill.total) == (True, 4, 4)


def test_a_backfill_moves_no_schedule_time_so_nothing_is_missed_or_caught_up_by_it() -> None:
    jobs = controller()
    jobs.tick(CREATED + 5)
    jobs.backfill(CREATED + 5, "etl", FROM, TO, "r1")
    jobs.tick(CREATED + 5)
    assert jobs.state.jobs["etl"].state.last_schedule is None
    assert launches(jobs.tick(t("2024-03-01T01:00"))) == [("2024-03-01T01:00", "scheduled")]


def test_under_allow_a_backfill_run_starts_beside_a_scheduled_one() -> None:
    jobs = controller("allow")
    jobs.tick(t("2024-03-01T01:00"))  # etl-1, scheduled, still running
    jobs.backfill(t("2024-03-01T01:05"), "etl", FROM, TO, "r1")
    assert launches(jobs.tick(t("2024-03-01T01:05"))) == [("2024-02-28T22:00", "backfill")]


def test_under_forbid_a_backfill_run_waits_until_no_run_is_active() -> None:
    jobs = controller("forbid")
    jobs.tick(t("2024-03-01T01:00"))
    jobs.backfill(t("2024-03-01T01:05"), "etl", FROM, TO, "r1")
    assert launches(jobs.tick(t("2024-03-01T01:05"))) == []
    jobs.finish(t("2024-03-01T01:10"), "etl-1", "succeeded")
    assert launches(jobs.tick(t("2024-03-01T01:10"))) == [("2024-02-28T22:00", "backfill")]


def test_under_forbid_a_scheduled_firing_meeting_a_backfill_run_is_skipped() -> None:
    jobs = controller("forbid")
    jobs.backfill(t("2024-03-01T00:30"), "etl", FROM, TO, "r1")
    jobs.tick(t("2024-03-01T00:30"))
    decisions = jobs.tick(t("2024-03-01T01:00"))
    assert [(type(d), format_time(d.scheduled_for)) for d in decisions] == [(Skip, "2024-03-01T01:00")]


def test_under_replace_a_scheduled_firing_replaces_a_backfill_run_and_the_backfill_goes_on() -> None:
    jobs = controller("replace")
    jobs.backfill(t("2024-03-01T00:30"), "etl", FROM, TO, "r1")
    jobs.tick(t("2024-03-01T00:30"))
    decisions = jobs.tick(t("2024-03-01T01:00"))
    assert [type(d) for d in decisions] == [Replace, Launch]
    assert launches(decisions) == [("2024-03-01T01:00", "scheduled")]
    jobs.finish(t("2024-03-01T01:20"), "etl-2", "succeeded")
    assert launches(jobs.tick(t("2024-03-01T01:20"))) == [("2024-02-28T23:00", "backfill")]


def test_a_range_without_a_time_is_done_at_once_and_runs_nothing() -> None:
    jobs = controller("allow", "0 12 * * *")
    backfill = jobs.backfill(CREATED + 5, "etl", FROM, TO, "r1")
    assert (backfill.done, backfill.total) == (True, 0)
    assert launches(jobs.tick(CREATED + 5)) == []


def test_a_new_request_replaces_the_last_one() -> None:
    jobs = controller()
    jobs.backfill(CREATED + 5, "etl", FROM, TO, "r1")
    second = jobs.backfill(CREATED + 5, "etl", TO, TO, "r2")
    assert (second.request, second.total) == ("r2", 1)
    assert launches(jobs.tick(CREATED + 5)) == [("2024-02-29T01:00", "backfill")]


def test_a_backfill_under_way_survives_a_json_round_trip_and_goes_on() -> None:
    jobs = controller()
    jobs.backfill(CREATED + 5, "etl", FROM, TO, "r1")
    jobs.tick(CREATED + 5)
    restored = Controller(ControllerState.from_json(json.loads(json.dumps(jobs.state.to_json()))))
    assert restored.state == jobs.state
    restored.finish(CREATED + 6, "etl-1", "succeeded")
    assert launches(restored.tick(CREATED + 6)) == [("2024-02-28T23:00", "backfill")]


def test_a_job_state_written_before_backfills_reads_with_none() -> None:
    data = JobState().to_json()
    assert "backfill" not in data and JobState.from_json(data).backfill is None


def test_an_every_interval_is_backfilled_on_its_own_grid_carried_back_from_its_creation() -> None:
    jobs = Controller()
    jobs.create_job(CREATED, "tick", "@every 90m", "allow")  # fires 01:30, 03:00, ...: and so 22:30, 00:00 before
    assert [format_time(m) for m in jobs.backfill_preview(CREATED + 5, "tick", FROM, TO)] == \
        ["2024-02-28T22:30", "2024-02-29T00:00"]


def test_a_held_job_launches_no_backfill_run_until_it_is_woken() -> None:
    jobs = controller()
    jobs.backfill(CREATED + 5, "etl", FROM, TO, "r1")
    assert launches([applied.decision for applied in jobs.step(CREATED + 5, holding={"etl"})]) == []
    jobs.wake(CREATED + 6, "etl")
    assert launches([applied.decision for applied in jobs.step(CREATED + 6)]) == [("2024-02-28T22:00", "backfill")]


def test_a_refusal_of_a_range_of_millions_of_times_says_over_a_million() -> None:
    jobs = Controller()
    jobs.create_job(CREATED, "often", "* * * * *", "allow")
    with pytest.raises(BackfillError) as refused:
        jobs.backfill(CREATED, "often", t("2020-01-01T00:00"), CREATED, "r1")
    assert refused.value.message.startswith("the range holds over 101000 schedule times")
