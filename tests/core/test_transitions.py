"""transitions.apply_tick, table-tested: a state and one tick's decisions -> the new state, and
which decisions are news (reported by a driver) rather than repeats."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from cronctl.core.state import JobState, PendingRetry, Queued
from cronctl.core.tick import Coalesce, Decision, Enqueue, Launch, Overflow, Replace, Retry, Skip, manual_launch
from cronctl.core.transitions import adopt, apply, apply_tick, hold
from cronctl.core.spec import JobSpec, Options, Policy
from cronctl.core.times import parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


ONE, TWO, THREE = t("2024-03-01T01:00"), t("2024-03-01T02:00"), t("2024-03-01T03:00")


@dataclass
class Row:
    name: str
    before: JobState
    decisions: tuple[Decision, ...]
    after: JobState
    news: tuple[bool, ...] = field(default=())  # default: every decision is news


ROWS = [
    Row("a launch: the run is active, counted, and its time dealt with",
        JobState(), (Launch("job", "job-1", 1, ONE),),
        JobState(last_schedule=ONE, launched=1, scheduled_runs=1, active=["job-1"])),
    Row("a catch-up launch deals with its time as a scheduled one does",
        JobState(last_schedule=ONE, launched=1), (Launch("job", "job-2", 2, TWO, "catch-up"),),
        JobState(last_schedule=TWO, launched=2, scheduled_runs=1, active=["job-2"])),
    Row("the last schedule time never goes back (catch-up all, an older time launched last)",
        JobState(last_schedule=THREE, launched=1), (Launch("job", "job-2", 2, TWO, "catch-up"),),
        JobState(last_schedule=THREE, launched=2, scheduled_runs=1, active=["job-2"])),
    Row("a launch of the oldest waiting firing takes it off the queue",
        JobState(last_schedule=TWO, launched=1, queue=[Queued(TWO, "scheduled")]),
        (Launch("job", "job-2", 2, TWO),),
        JobState(last_schedule=TWO, launched=2, scheduled_runs=1, active=["job-2"])),
    Row("a first skip of a schedule time is counted",
        JobState(last_schedule=ONE, launched=1, active=["job-1"]), (Skip("job", TWO),),
        JobState(last_schedule=ONE, launched=1, active=["job-1"], skipped=1, last_skipped=TWO)),
    Row("the same time skipped again is not counted again, and is no news",
        JobState(last_schedule=ONE, launched=1, active=["job-1"], skipped=1, last_skipped=TWO),
        (Skip("job", TWO),),
        JobState(last_schedule=ONE, launched=1, active=["job-1"], skipped=1, last_skipped=TWO), (False,)),
    Row("a newer time skipped is counted",
        JobState(last_schedule=ONE, launched=1, active=["job-1"], skipped=1, last_skipped=TWO),
        (Skip("job", THREE),),
        JobState(last_schedule=ONE, launched=1, active=["job-1"], skipped=2, last_skipped=THREE)),
    Row("a replace: the run leaves, with any retry it waited for",
        JobState(last_schedule=ONE, launched=1, active=["job-1"],
                 pending_retries=[PendingRetry(TWO, 1, "job-1", 2)]),
        (Replace("job", "job-1"), Launch("job", "job-2", 2, TWO)),
        JobState(last_schedule=TWO, launched=2, scheduled_runs=1, active=["job-2"])),
    Row("an enqueue: the firing waits, its time dealt with",
        JobState(last_schedule=ONE, launched=1, active=["job-1"]), (Enqueue("job", TWO, "scheduled"),),
        JobState(last_schedule=TWO, launched=1, active=["job-1"], queue=[Queued(TWO, "scheduled")])),
    Row("a coalesce: the older waiting firing leaves the queue for the newer one",
        JobState(last_schedule=TWO, launched=1, active=["job-1"], queue=[Queued(TWO, "scheduled")]),
        (Coalesce("job", TWO), Enqueue("job", THREE, "scheduled")),
        JobState(last_schedule=THREE, launched=1, active=["job-1"], queue=[Queued(THREE, "scheduled")])),
    Row("a retry: the run no longer waits for it",
        JobState(last_schedule=ONE, launched=1, active=["job-1"],
                 pending_retries=[PendingRetry(TWO, 1, "job-1", 2)]),
        (Retry("job", "job-1", 2),),
        JobState(last_schedule=ONE, launched=1, active=["job-1"])),
    Row("an overflow is counted when the job goes into it",
        JobState(), (Overflow("job", 101),), JobState(overflowed=1, overflowing=True)),
    Row("an overflow that goes on is not counted again, and is no news",
        JobState(overflowed=1, overflowing=True), (Overflow("job", 101),),
        JobState(overflowed=1, overflowing=True), (False,)),
    Row("a tick without an overflow ends it",
        JobState(overflowed=1, overflowing=True), (),
        JobState(overflowed=1)),
    Row("an overflow past which the latest time launches (CronJob's rule) is reported and ends with that launch",
        JobState(), (Overflow("job", 101, 100, launches=True), Launch("job", "job-1", 1, THREE)),
        JobState(last_schedule=THREE, launched=1, scheduled_runs=1, active=["job-1"], overflowed=1)),
    Row("a second outage after a recovery launch is counted and reported again, with no tick in between",
        JobState(last_schedule=ONE, launched=1, overflowed=1),
        (Overflow("job", 101, 100, launches=True), Launch("job", "job-2", 2, THREE)),
        JobState(last_schedule=THREE, launched=2, scheduled_runs=1, active=["job-2"], overflowed=2)),
    Row("an overflow blocked by a Forbid run still active stays an outage",
        JobState(last_schedule=ONE, launched=1, active=["job-1"]),
        (Overflow("job", 101, 100, launches=True), Skip("job", THREE, "forbid")),
        JobState(last_schedule=ONE, launched=1, active=["job-1"], skipped=1, last_skipped=THREE, overflowed=1,
                 overflowing=True)),
    Row("the blocked outage's launch, once the run ended, is no news of the overflow and ends the outage",
        JobState(last_schedule=ONE, launched=1, skipped=1, last_skipped=THREE, overflowed=1, overflowing=True),
        (Overflow("job", 101, 100, launches=True), Launch("job", "job-2", 2, THREE, "catch-up")),
        JobState(last_schedule=THREE, launched=2, scheduled_runs=1, active=["job-2"], skipped=1, last_skipped=THREE, overflowed=1),
        (False, True)),
    Row("a manual launch does not end an outage",
        JobState(overflowed=1, overflowing=True), (Overflow("job", 101), Launch("job", "job-1", 1, TWO, "manual")),
        JobState(launched=1, active=["job-1"], overflowed=1, overflowing=True), (False, True)),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_apply_tick(row: Row) -> None:
    state = row.before
    applied = apply_tick(state, row.decisions)
    assert state == row.after
    assert [item.decision for item in applied] == list(row.decisions)
    assert tuple(item.news for item in applied) == (row.news or (True,) * len(row.decisions))


def test_a_manual_launch_deals_with_no_schedule_time_and_leaves_the_queue_alone() -> None:
    spec = JobSpec("job", "0 * * * *", Policy.WAIT_FOR_LAST, Options(), ONE, 0)
    state = JobState(last_schedule=ONE, launched=1, active=["job-1"], queue=[Queued(TWO, "scheduled")])
    launch = manual_launch(spec, state, TWO)
    assert launch == Launch("job", "job-2", 2, TWO, "manual")
    apply(state, launch)
    assert state == JobState(last_schedule=ONE, launched=2, active=["job-1", "job-2"],
                             queue=[Queued(TWO, "scheduled")])


def test_a_held_job_counts_no_missed_time_through_the_minute_it_was_held() -> None:
    state = JobState(last_schedule=ONE)
    assert hold(state, THREE) is True
    assert state.not_before == THREE
    assert hold(state, THREE) is False


def test_a_driver_may_name_its_runs() -> None:
    state = JobState()
    apply_tick(state, (Launch("job", "job-1", 1, ONE),), key=lambda launch: f"job-{launch.scheduled_for}")
    assert state.active == [f"job-{ONE}"]


@pytest.mark.parametrize("reason, last_schedule", [("scheduled", THREE), ("catch-up", THREE), ("manual", ONE),
                                                   ("backfill", ONE)])
def test_a_run_adopted_from_its_record_is_counted_and_deals_with_its_time_unless_asked_for_by_hand(
        reason: str, last_schedule: int) -> None:
    state = JobState(last_schedule=ONE, launched=1)
    adopt(state, 2, THREE, reason)
    assert (state.launched, state.last_schedule) == (2, last_schedule)
    adopt(state, 1, ONE, "scheduled")  # an older run seen after: nothing goes back
    assert (state.launched, state.last_schedule) == (2, last_schedule)
