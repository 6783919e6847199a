"""Failures in a row, the newest success and failure, and when pauseOnFailures pauses a job.

Only a run's outcome counts: a failed attempt that a retry makes good ends
the streak; a timed-out run is a failure. The job pauses at every Nth failure
in a row, and nothing scheduled fires from that reconcile on.
"""

from __future__ import annotations

import pytest

from cronctl.core.endings import RunSeen, end_runs
from cronctl.core.failures import pauses
from cronctl.core.reconcile import Seen, reconcile
from cronctl.core.schedule import Timeline
from cronctl.core.spec import JobSpec, Options, Policy
from cronctl.core.state import FAILED, RETRY_PENDING, SUCCEEDED, TIMED_OUT, JobState
from cronctl.core.times import parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2027-01-01T00:00")


def finish(state: JobState, run: str, outcome: str, at: int) -> None:
    state.active.append(run)
    state.record_finish(run, 1, outcome, at, 3, 1)


def test_a_success_ends_the_streak_and_is_the_newest_success() -> None:
    state = JobState()
    finish(state, "a", FAILED, CREATED + 1)
    finish(state, "b", TIMED_OUT, CREATED + 2)
    assert (state.consecutive_failures, state.last_failure, state.last_success) == (2, CREATED + 2, None)
    finish(state, "c", SUCCEEDED, CREATED + 3)
    assert (state.consecutive_failures, state.last_failure, state.last_success) == (0, CREATED + 2, CREATED + 3)


def test_an_older_run_ending_later_never_moves_the_newest_times_back() -> None:
    state = JobState(last_success=CREATED + 10, last_failure=CREATED + 10)
    finish(state, "a", SUCCEEDED, CREATED + 5)
    finish(state, "b", FAILED, CREATED + 5)
    assert (state.last_success, state.last_failure) == (CREATED + 10, CREATED + 10)


def test_a_failed_attempt_that_a_retry_makes_good_is_no_failure() -> None:
    options = Options(retries=1)
    state = JobState(active=["r"], consecutive_failures=1)
    first = end_runs(state, [RunSeen("r", 1, 1, CREATED, reported=(FAILED, CREATED + 1))], options, CREATED + 1)
    assert first[0].outcome == RETRY_PENDING and state.consecutive_failures == 1
    second = end_runs(state, [RunSeen("r", 1, 2, CREATED, reported=(SUCCEEDED, CREATED + 2))], options, CREATED + 2)
    assert second[0].outcome == SUCCEEDED and state.consecutive_failures == 0


@pytest.mark.parametrize("limit, before, after, paused", [
    (None, 0, 5, False),
    (3, 1, 2, False),
    (3, 2, 3, True),  # the third failure in a row
    (3, 3, 4, False),  # resumed after three: it counts three more
    (3, 5, 6, True),
    (3, 2, 4, True),  # two runs ended in one reconcile, past the third
    (3, 3, 0, False),  # a success
    (1, 0, 1, True),
])
def test_when_failures_pause_a_job(limit: int | None, before: int, after: int, paused: bool) -> None:
    assert pauses(limit, before, after) is paused


def test_the_failure_that_pauses_a_job_stops_the_launch_of_the_same_reconcile() -> None:
    spec = JobSpec("job", "*/10 * * * *", Policy.ALLOW, Options(pause_on_failures=2), CREATED, 0)
    state = JobState(last_schedule=CREATED + 10, launched=1, active=["job-1"], consecutive_failures=1)
    seen = Seen(runs=[RunSeen("job-1", 1, 1, CREATED + 10, reported=(FAILED, CREATED + 19))],
                known=frozenset({"job-1"}))
    result = reconcile(spec, state, Timeline(spec.compiled, CREATED), seen, CREATED + 20, (CREATED + 20) * 60,
                       key=lambda launch: launch.run_id)
    assert result.paused and state.consecutive_failures == 2
    assert result.launches == [] and state.not_before == CREATED + 20  # held: 00:20 is not missed later


def test_a_job_already_suspended_is_not_paused_again() -> None:
    spec = JobSpec("job", "*/10 * * * *", Policy.ALLOW, Options(pause_on_failures=1), CREATED, 0)
    state = JobState(launched=1, active=["job-1"])
    seen = Seen(runs=[RunSeen("job-1", 1, 1, CREATED + 10, reported=(FAILED, CREATED + 19))],
                known=frozenset({"job-1"}), suspended=True)
    result = reconcile(spec, state, Timeline(spec.compiled, CREATED), seen, CREATED + 20, (CREATED + 20) * 60,
                       key=lambda launch: launch.run_id)
    assert not result.paused and state.consecutive_failures == 1
