"""core.reconcile, one rule per test: the one call a driver that sees its runs from outside
makes per reconcile, and what each part of its answer says.

The job is hourly unless a test says otherwise; runs are keyed ``job-<minute>`` (and
``-manual``/``-backfill``), as a driver names them by their nominal time.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from cronctl.core.endings import RunSeen
from cronctl.core.every import actual_time
from cronctl.core.reconcile import Reconciled, Seen, StagedSeen, reconcile
from cronctl.core.schedule import Timeline, parse_expression
from cronctl.core.spec import PAST_LIMIT_LAUNCH, JobSpec, Options, Policy
from cronctl.core.staging import DELETE, KEEP, RELEASE
from cronctl.core.state import FAILED, RETRY_PENDING, SUCCEEDED, Backfill, JobState
from cronctl.core.tick import Launch, Overflow, Replace, Skip
from cronctl.core.times import parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")
BEFORE = t("2024-03-01T00:59")
HOUR = t("2024-03-01T01:00")
OPERATOR = Options(past_limit=PAST_LIMIT_LAUNCH)


def key(launch: Launch) -> str:
    suffix = "" if launch.reason in ("scheduled", "catch-up") else f"-{launch.reason}"
    return f"job-{launch.scheduled_for}{suffix}"


def step(now: int, state: JobState | None = None, seen: Seen = Seen(), expression: str = "0 * * * *",
         policy: Policy = Policy.ALLOW, options: Options = OPERATOR, second: float | None = None) -> Reconciled:
    spec = JobSpec("job", expression, policy, options, CREATED, 0)
    timeline = Timeline(parse_expression(expression), CREATED)
    state = JobState(last_schedule=CREATED) if state is None else state
    return reconcile(spec, state, timeline, seen, now, now * 60 if second is None else second, key)


def running(run_id: str, number: int, started: int, **seen: object) -> tuple[str, RunSeen]:
    return run_id, RunSeen(run_id, number, 1, started, **seen)  # type: ignore[arg-type]


def with_active(*runs: tuple[str, RunSeen], **state: object) -> tuple[JobState, list[RunSeen]]:
    return (JobState(last_schedule=CREATED, launched=len(runs), active=[r for r, _ in runs], **state),  # type: ignore[arg-type]
            [seen for _, seen in runs])


# -- the runs that ended --------------------------------------------------------------------


def test_a_run_whose_worker_reported_success_ends_and_leaves_active() -> None:
    state, runs = with_active(running("job-0", 1, CREATED, reported=(SUCCEEDED, HOUR - 5)))
    result = step(HOUR - 2, state, Seen(runs=runs))
    assert [(end.run_id, end.outcome, end.at) for end in result.ends] == [("job-0", SUCCEEDED, HOUR - 5)]
    assert result.state.active == []


def test_a_run_whose_worker_is_gone_failed_now_and_is_not_retried() -> None:
    state, runs = with_active(running("job-0", 1, CREATED, gone=True))
    result = step(HOUR - 2, state, Seen(runs=runs), options=replace(OPERATOR, retries=3))
    assert [(end.outcome, end.at, end.gone, end.retry) for end in result.ends] == [(FAILED, HOUR - 2, True, None)]


def test_a_failed_attempt_with_attempts_left_waits_for_its_next_one() -> None:
    state, runs = with_active(running("job-0", 1, CREATED, reported=(FAILED, CREATED + 3)))
    result = step(CREATED + 4, state, Seen(runs=runs), options=replace(OPERATOR, retries=1, retry_delay=5))
    assert [(end.outcome, end.retry and end.retry.due) for end in result.ends] == [(RETRY_PENDING, CREATED + 8)]
    assert result.state.active == ["job-0"] and result.wake_at == CREATED + 8


# -- suspension --------------------------------------------------------------------------------


def test_a_suspended_job_decides_nothing_and_misses_no_time_until_now() -> None:
    result = step(HOUR + 120, seen=Seen(suspended=True))
    assert result.applied == [] and result.launches == [] and result.stage is None
    assert result.state.not_before == HOUR + 120


def test_a_suspended_jobs_staged_firing_is_deleted_and_no_miss() -> None:
    result = step(BEFORE, seen=Seen(staged=[StagedSeen(HOUR)], suspended=True))
    assert result.fates[HOUR].action == DELETE and result.fates[HOUR].missed is None


def test_a_suspended_jobs_running_run_still_times_out_and_is_looked_at_then() -> None:
    state, runs = with_active(running("job-0", 1, CREATED))
    result = step(CREATED + 10, state, Seen(runs=runs, suspended=True), options=replace(OPERATOR, timeout=30))
    assert result.wake_at == CREATED + 30


# -- the tick's launches, and how each is carried out ------------------------------------------


def test_a_launch_whose_firing_was_staged_is_carried_out_by_its_release() -> None:
    result = step(HOUR, seen=Seen(staged=[StagedSeen(HOUR)], staging=True))
    assert result.fates[HOUR].action == RELEASE
    [launched] = result.launches
    assert (launched.run_key, launched.staged, launched.held_until) == (f"job-{HOUR}", True, None)


def test_a_launch_with_no_staged_firing_is_created() -> None:
    [launched] = step(HOUR).launches
    assert (launched.launch.scheduled_for, launched.staged) == (HOUR, False)


def test_a_staged_firing_no_longer_current_is_deleted_and_its_launch_created() -> None:
    result = step(HOUR, seen=Seen(staged=[StagedSeen(HOUR, current=False)], staging=True))
    assert result.fates[HOUR].action == DELETE and not result.launches[0].staged


def test_a_jittered_launch_is_held_until_its_second_when_that_is_later() -> None:
    jittered = replace(OPERATOR, jitter=600)
    start = actual_time(600, "job", HOUR)
    assert start > HOUR * 60
    early, late = step(HOUR, options=jittered), step(HOUR, options=jittered, second=start)
    assert (early.launches[0].held_until, early.release_at) == (start, start)
    assert (late.launches[0].held_until, late.release_at) == (None, None)


def test_a_replace_launch_names_the_runs_it_replaces() -> None:
    state, runs = with_active(running("job-0", 1, CREATED))
    result = step(HOUR, state, Seen(runs=runs), policy=Policy.REPLACE)
    assert [type(d).__name__ for d, _ in result.applied] == ["Replace", "Launch"]
    assert result.launches[0].replaces == ("job-0",)


def test_a_launch_past_an_overflow_carries_it_and_the_overflow_is_reported_once() -> None:
    options = replace(OPERATOR, missed_limit=2)
    first = step(HOUR + 5 * 60, options=options)
    assert isinstance(first.overflow, Overflow) and first.launches[0].overflow == first.overflow
    assert not first.on_time and not first.state.overflowing


def test_an_overflow_blocked_by_an_active_run_is_reported_by_its_first_tick_only() -> None:
    options = replace(OPERATOR, missed_limit=2)
    state, runs = with_active(running("job-0", 1, CREATED))
    first = step(HOUR + 5 * 60, state, Seen(runs=runs), policy=Policy.FORBID, options=options)
    again = step(HOUR + 5 * 60 + 1, first.state, Seen(runs=runs), policy=Policy.FORBID, options=options)
    assert first.overflow is not None and again.overflow is None
    assert again.state.overflowed == 1


def test_the_overflow_adopted_runs_were_launched_past_is_carried_out_as_it_was_decided() -> None:
    recorded = Overflow("job", 3, 2, launches=True)
    result = step(HOUR, seen=Seen(recorded_overflow=recorded))
    assert result.applied[0].decision == recorded and result.overflow == recorded
    assert result.launches[0].overflow == recorded and result.state.overflowed == 1


def test_a_firing_launched_for_its_own_minute_is_on_time() -> None:
    assert step(HOUR).on_time
    assert not step(HOUR + 30).on_time  # a catch-up


def test_a_skip_is_news_once() -> None:
    state, runs = with_active(running("job-0", 1, CREATED))
    first = step(HOUR, state, Seen(runs=runs), policy=Policy.FORBID)
    again = step(HOUR + 1, first.state, Seen(runs=runs), policy=Policy.FORBID)
    assert [(type(d), news) for d, news in first.applied] == [(Skip, True)]
    assert [(type(d), news) for d, news in again.applied] == [(Skip, False)]


# -- staging ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seen, stage", [
    (Seen(staging=True), HOUR),  # the next time, a minute away
    (Seen(), None),  # the driver stages nothing (its default)
    (Seen(staged=[StagedSeen(HOUR)], staging=True), None),  # staged already
    (Seen(staged=[StagedSeen(HOUR, current=False)], staging=True), HOUR),  # its staged Job goes: staged afresh
    (Seen(known=frozenset({f"job-{HOUR}"}), staging=True), None),  # its run exists
], ids=["next", "off", "staged", "edited", "run"])
def test_the_firing_to_stage_is_the_next_one_unless_staged_or_run_already(seen: Seen, stage: int | None) -> None:
    assert step(BEFORE, seen=seen).stage == stage


def test_a_staged_firing_still_to_come_is_kept() -> None:
    assert step(BEFORE, seen=Seen(staged=[StagedSeen(HOUR)], staging=True)).fates[HOUR].action == KEEP


# -- manual runs and backfills ----------------------------------------------------------------------


def test_a_manual_run_is_launched_whatever_the_policy_and_moves_no_schedule_time() -> None:
    state, runs = with_active(running("job-0", 1, CREATED))
    result = step(CREATED + 7, state, Seen(runs=runs, trigger=True), policy=Policy.FORBID)
    assert result.manual is not None and result.manual.run_key == f"job-{CREATED + 7}-manual"
    assert result.state.last_schedule == CREATED and result.state.launched == 2


def test_a_manual_run_asked_twice_in_a_minute_is_launched_once() -> None:
    known = frozenset({f"job-{CREATED + 7}-manual"})
    assert step(CREATED + 7, seen=Seen(trigger=True, known=known)).manual is None


def test_a_backfill_launches_its_next_time_and_one_whose_run_exists_counts_as_launched() -> None:
    backfill = Backfill("r", CREATED + 60, CREATED + 180, 3, CREATED + 60)
    fresh = step(CREATED + 7, seen=Seen(backfill=backfill))
    assert [item.run_key for item in fresh.backfilled] == [f"job-{CREATED + 60}-backfill"]
    assert fresh.backfill is not None and fresh.backfill_running == f"job-{CREATED + 60}-backfill"
    made = step(CREATED + 7, JobState(last_schedule=CREATED, launched=1, active=[f"job-{CREATED + 60}-backfill"]),
                Seen(backfill=backfill, known=frozenset({f"job-{CREATED + 60}-backfill"})))
    assert made.backfilled == [] and made.backfill is not None and made.backfill.launched == 1


def test_a_suspended_jobs_backfill_waits() -> None:
    backfill = Backfill("r", CREATED + 60, CREATED + 180, 3, CREATED + 60)
    result = step(CREATED + 7, seen=Seen(backfill=backfill, suspended=True))
    assert result.backfilled == [] and result.backfill == backfill and not result.backfill_finished


# -- held runs and the next look --------------------------------------------------------------------


def test_held_runs_are_resumed_when_their_second_comes_and_the_next_ones_second_is_said() -> None:
    state, runs = with_active(running("a", 1, HOUR, held_until=HOUR * 60 + 10),
                              running("b", 2, HOUR, held_until=HOUR * 60 + 50))
    result = step(HOUR, state, Seen(runs=runs), second=HOUR * 60 + 20, expression="0 0 1 1 *")
    assert (result.resumed, result.release_at) == (["a"], HOUR * 60 + 50)


@pytest.mark.parametrize("runs, options, wake", [
    ([running("job-0", 1, CREATED)], replace(OPERATOR, timeout=30), CREATED + 30),  # its timeout
    ([running("job-0", 1, CREATED, reported=(SUCCEEDED, CREATED + 20))], OPERATOR, CREATED + 20),  # a skewed end
    ([], OPERATOR, t("2024-03-01T23:59")),  # the next staging (daily job)
], ids=["timeout", "skewed-end", "staging"])
def test_the_next_look_is_the_earliest_minute_something_can_change(runs, options, wake) -> None:  # type: ignore[no-untyped-def]
    state, seen = with_active(*runs)
    observed = Seen(runs=seen, staging=True)
    assert step(CREATED + 10, state, observed, expression="0 0 * * *", options=options).wake_at == wake


def test_a_job_being_deleted_is_held_and_its_retry_waits_for_nothing() -> None:
    """A deleting job (a finalizer holds its schedule) launches nothing, its runs' retries included,
    and its reconcile is not woken for a retry's time (docs/operator.md)."""
    state, runs = with_active(running("job-0", 1, CREATED, reported=(FAILED, CREATED + 3)))
    options = replace(OPERATOR, retries=1, retry_delay=5)
    retrying = step(CREATED + 4, state, Seen(runs=runs), options=options)
    assert [end.outcome for end in retrying.ends] == [RETRY_PENDING] and retrying.wake_at == CREATED + 8
    result = step(CREATED + 8, state, Seen(runs=[RunSeen("job-0", 1, 2, CREATED)], deleting=True, trigger=True),
                  options=options)
    assert result.every_launch() == [] and result.wake_at is None and result.upcoming.fires is None
