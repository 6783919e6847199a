"""A job's window (startTime, endTime) and its run limit (maxRuns), as the core decides them.

No schedule time before the start or after the end (both included, at the
minute): such a time is not missed, never caught up, never next. At most
``max_runs`` scheduled runs; manual runs and backfills do not count, and a
retry is the same run. Past either, the job has ended, and says why.
"""

from __future__ import annotations

import pytest

from cronctl.core.schedule import Timeline
from cronctl.core.spec import CATCH_UP_ALL, JobSpec, Options, Policy
from cronctl.core.state import Job, JobState, PendingRetry
from cronctl.core.tick import Launch, Retry, decide, manual_launch
from cronctl.core.times import parse_time
from cronctl.core.transitions import adopt, apply, apply_tick
from cronctl.core.window import END_TIME_REACHED, MAX_RUNS_REACHED, Window, ended_reason, remaining_runs


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2027-01-01T00:00")
HOURLY = "0 * * * *"
START, END = t("2027-01-01T03:00"), t("2027-01-01T05:00")


def job(expression: str = HOURLY, created: int = CREATED, **options: object) -> JobSpec:
    return JobSpec("job", expression, Policy.ALLOW, Options(**options), created, 0)  # type: ignore[arg-type]


def timeline(spec: JobSpec) -> Timeline:
    return Timeline(spec.compiled, spec.created_at, spec.options.tz)


# -- the window ---------------------------------------------------------------------------------

@pytest.mark.parametrize("start, end, first, last", [
    (START * 60, END * 60, START, END),
    (START * 60 + 30, END * 60 + 30, START + 1, END),  # a start within a minute allows the next one
    (None, END * 60 + 59, None, END),
    (START * 60 - 1, None, START, None),
])
def test_a_window_in_seconds_keeps_both_ends_at_the_minute(start: int | None, end: int | None,
                                                             first: int | None, last: int | None) -> None:
    assert Window.of_seconds(start, end) == Window(first, last)


def test_no_schedule_time_before_the_start_or_after_the_end() -> None:
    times = timeline(job(window=Window(START, END)))
    assert times.upcoming(CREATED, 10) == [START, t("2027-01-01T04:00"), END]
    assert (times.first, times.end) == (START, END)
    assert times.next_after(END) is None


def test_a_start_between_two_times_fires_first_at_the_next_one() -> None:
    times = timeline(job(window=Window(START + 1, None)))
    assert times.first == t("2027-01-01T04:00")


def test_times_before_the_start_are_not_missed() -> None:
    """Created at midnight, first looked at 03:30: 01:00 and 02:00 were never schedule times."""
    spec = job(window=Window(START, None), catch_up=CATCH_UP_ALL)
    decisions = decide(spec, JobState(), timeline(spec), t("2027-01-01T03:30")).decisions
    assert decisions == (Launch("job", "job-1", 1, START, "catch-up"),)


def test_times_after_the_end_are_never_caught_up() -> None:
    spec = job(window=Window(None, END), catch_up=CATCH_UP_ALL)
    state = JobState(last_schedule=END, launched=5)
    tick = decide(spec, state, timeline(spec), t("2027-01-01T09:00"))
    assert tick.decisions == () and tick.wake_at is None


def test_the_window_narrows_the_count_of_missed_times() -> None:
    times = timeline(job(window=Window(START, END)))
    assert times.count_in(CREATED, t("2027-01-02T00:00"), 100) == 3
    assert times.latest_in(CREATED, t("2027-01-02T00:00")) == END


def test_a_window_with_merged_expressions_and_exclusions_bounds_their_union() -> None:
    spec = job(window=Window(START, END), more_schedules=("30 * * * *",), exclude=("0 4 * * *",))
    assert timeline(spec).upcoming(CREATED, 10) == [START, t("2027-01-01T03:30"), t("2027-01-01T04:30"), END]


def test_a_job_whose_window_closed_has_ended_and_is_not_invalid() -> None:
    spec = job(created=t("2027-01-02T00:00"), window=Window(None, END))
    assert not timeline(spec).fires
    assert spec.fires_from(spec.created_at)


def test_an_expression_that_never_fires_still_never_fires_in_a_window() -> None:
    spec = job("0 0 30 2 *", window=Window(None, END))
    assert not spec.fires_from(spec.created_at)


# -- the run limit ------------------------------------------------------------------------------

def test_scheduled_launches_count_towards_the_limit_and_manual_ones_do_not() -> None:
    spec = job(max_runs=2)
    state = JobState()
    apply(state, manual_launch(spec, state, t("2027-01-01T00:10")))
    apply_tick(state, decide(spec, state, timeline(spec), t("2027-01-01T01:00")).decisions)
    assert (state.launched, state.scheduled_runs) == (2, 1)


def test_a_launch_adopted_from_a_driver_record_counts_once() -> None:
    state = JobState()
    adopt(state, 1, t("2027-01-01T01:00"), "scheduled")
    adopt(state, 2, t("2027-01-01T01:10"), "manual")
    adopt(state, 1, t("2027-01-01T01:00"), "scheduled")  # seen again: already counted
    assert (state.launched, state.scheduled_runs) == (2, 1)


def test_after_the_last_scheduled_run_nothing_fires_and_nothing_wakes() -> None:
    spec = job(max_runs=2)
    state = JobState(last_schedule=t("2027-01-01T02:00"), launched=2, scheduled_runs=2)
    tick = decide(spec, state, timeline(spec), t("2027-01-01T03:00"))
    assert tick.decisions == () and tick.wake_at is None


def test_the_last_scheduled_run_is_launched_and_then_no_wake() -> None:
    spec = job(max_runs=2)
    state = JobState(last_schedule=t("2027-01-01T01:00"), launched=1, scheduled_runs=1)
    tick = decide(spec, state, timeline(spec), t("2027-01-01T02:00"))
    assert tick.decisions == (Launch("job", "job-2", 2, t("2027-01-01T02:00")),)
    assert tick.wake_at is None


def test_catch_up_all_launches_no_more_than_the_runs_left() -> None:
    spec = job(max_runs=3, catch_up=CATCH_UP_ALL)
    state = JobState(last_schedule=t("2027-01-01T01:00"), launched=1, scheduled_runs=1)
    tick = decide(spec, state, timeline(spec), t("2027-01-01T05:30"))
    assert [d.scheduled_for for d in tick.decisions if isinstance(d, Launch)] == [t("2027-01-01T02:00"),
                                                                                 t("2027-01-01T03:00")]
    assert tick.wake_at is None


def test_a_failed_last_run_is_still_retried_after_the_limit() -> None:
    spec = job(max_runs=1, retries=2, retry_delay=5)
    due = t("2027-01-01T01:10")
    state = JobState(last_schedule=t("2027-01-01T01:00"), launched=1, scheduled_runs=1, active=["job-1"],
                     pending_retries=[PendingRetry(due, 1, "job-1", 2)])
    assert decide(spec, state, timeline(spec), due).decisions == (Retry("job", "job-1", 2),)


# -- ended --------------------------------------------------------------------------------------

@pytest.mark.parametrize("window, max_runs, scheduled_runs, next_fire, ended", [
    (Window(), None, 10, START, None),
    (Window(), 3, 2, START, None),
    (Window(), 3, 3, START, MAX_RUNS_REACHED),
    (Window(None, END), None, 0, END, None),
    (Window(None, END), None, 0, None, END_TIME_REACHED),
    (Window(START, None), None, 0, None, None),  # an expression whose own chain ended: not the window's doing
    (Window(None, END), 1, 1, None, MAX_RUNS_REACHED),  # the run limit, reached first, is named
])
def test_why_a_job_has_ended(window: Window, max_runs: int | None, scheduled_runs: int, next_fire: int | None,
                             ended: str | None) -> None:
    assert ended_reason(window, max_runs, scheduled_runs, next_fire) == ended


@pytest.mark.parametrize("max_runs, scheduled_runs, left", [(None, 4, None), (5, 2, 3), (5, 5, 0), (5, 7, 0)])
def test_remaining_runs(max_runs: int | None, scheduled_runs: int, left: int | None) -> None:
    assert remaining_runs(max_runs, scheduled_runs) == left


def test_the_window_the_limit_and_the_count_survive_a_json_round_trip() -> None:
    saved = Job(job(window=Window(START, None), max_runs=4), JobState(scheduled_runs=3))
    assert Job.from_json(saved.to_json()) == saved
