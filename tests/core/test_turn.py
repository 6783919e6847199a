"""core.reconcile.turn: the order of a turn of one job, written once for every driver (issue 44).

The operator's ``reconcile`` and the ``Controller`` (the harness, the fleet preview, the runner) both
call it; each test says one rule of the order, on ``turn`` itself and on the Controller that calls it.
"""

from __future__ import annotations

import pytest

from cronctl.core.controller import Controller, WorkerEnd
from cronctl.core.reconcile import Asked, turn
from cronctl.core.schedule import Timeline, parse_expression
from cronctl.core.spec import JobSpec, Options, Policy
from cronctl.core.state import Backfill, JobState, PendingRetry
from cronctl.core.tick import Launch, Retry, Skip
from cronctl.core.times import parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")
NOON = t("2024-03-01T12:00")


def job(policy: Policy = Policy.FORBID, **options: object) -> tuple[JobSpec, Timeline]:
    spec = JobSpec("job", "0 12 * * *", policy, Options(**options), CREATED, 0)  # type: ignore[arg-type]
    return spec, Timeline(parse_expression("0 12 * * *"), CREATED)


def test_a_manual_run_comes_after_the_due_time_so_forbid_launches_both() -> None:
    """The issue's case: a Forbid time due in the turn a manual run is asked for launches too."""
    spec, timeline = job()
    state = JobState()
    turned = turn(spec, state, timeline, NOON, Asked(triggers=1))
    assert [a.decision for a in turned.applied] == [Launch("job", "job-1", 1, NOON)]
    assert [launch for launch, _ in turned.manual] == [Launch("job", "job-2", 2, NOON, "manual")]
    assert state.active == ["job-1", "job-2"]


def test_the_backfill_runs_before_the_manual_run_under_forbid() -> None:
    spec, timeline = job()
    state = JobState(last_schedule=NOON)
    backfill = Backfill("r1", NOON - 1440, NOON - 1440, 1, NOON - 1440)
    turned = turn(spec, state, timeline, NOON + 5, Asked(triggers=1, backfill=backfill))
    assert [launch.reason for launch, _ in (*turned.backfilled, *turned.manual)] == ["backfill", "manual"]


def test_a_held_job_misses_nothing_fires_nothing_but_its_retries_go_on() -> None:
    """A suspension holds the schedule's times, not a run's retries (a suspended CronJob's Job
    finishes its backoff): the retry is the same run, not a new firing."""
    spec, timeline = job(Policy.ALLOW, retries=1)
    state = JobState(last_schedule=NOON - 1440, active=["job-1"], launched=1,
                     pending_retries=[PendingRetry(NOON, 1, "job-1", 2)])
    turned = turn(spec, state, timeline, NOON, Asked(held=True, backfill=Backfill("r", 0, 0, 1, 0)))
    assert [a.decision for a in turned.applied] == [Retry("job", "job-1", 2)]
    assert turned.held and state.not_before == NOON and turned.backfilled == []


def test_the_controller_takes_manual_runs_in_the_same_place() -> None:
    c = Controller()
    c.create_job(CREATED, "job", "0 12 * * *", "forbid")
    assert [a.decision for a in c.step(NOON, triggers={"job": 1})] == [
        Launch("job", "job-1", 1, NOON), Launch("job", "job-2", 2, NOON, "manual")]
    assert [a.decision for a in c.step(NOON + 1440)] == [Skip("job", NOON + 1440)]


def test_a_suspension_lifted_in_the_minute_of_a_due_time_fires_it() -> None:
    """Held up to the minute before, resumed in the due minute: the time was not missed while held
    (the hold's window ends at the last minute held), so it launches, on every driver."""
    c = Controller()
    c.create_job(CREATED, "job", "0 12 * * *", "forbid")
    assert c.step(NOON - 1, holding={"job"}) == []
    c.wake(NOON - 1, "job")
    assert [a.decision for a in c.step(NOON)] == [Launch("job", "job-1", 1, NOON)]


def test_the_failure_that_pauses_a_job_is_said_by_the_ends_of_its_turn() -> None:
    """pauseOnFailures is judged where the runs end (core.reconcile.ends), for the operator and the
    Controller alike: the second failure in a row pauses, the driver holds the job from that turn."""
    spec = JobSpec("job", "*/10 * * * *", Policy.ALLOW, Options(pause_on_failures=2), CREATED, 0)
    c = Controller()
    c.add_job(spec)
    c.step(CREATED + 10)
    c.finish(CREATED + 12, "job-1", "failed")
    assert c.paused == []
    c.step(CREATED + 20)
    c.finish(CREATED + 22, "job-2", "failed")
    assert c.step(CREATED + 30) == [] and c.paused == ["job"]  # held by that very step
    assert c.step(CREATED + 40, holding=set(c.paused)) == [] and c.paused == []


def test_the_ends_a_step_is_handed_come_before_its_turns() -> None:
    """A run over by now frees a Forbid time due now, in the same step (``Controller.step``'s ends,
    which the runner hands it); a failure among them that pauses the job holds it in that step."""
    c = Controller()
    c.add_job(JobSpec("job", "*/10 * * * *", Policy.FORBID, Options(pause_on_failures=2), CREATED, 0))
    c.step(CREATED + 10)
    applied = c.step(CREATED + 20, ends=[WorkerEnd("job-1", 1, "failed")])
    assert [end.outcome for end in c.ended] == ["failed"] and c.paused == []
    assert [a.decision for a in applied] == [Launch("job", "job-2", 2, CREATED + 20)]
    assert c.step(CREATED + 30, ends=[WorkerEnd("job-2", 1, "failed"), WorkerEnd("job-9", 1, "failed")]) == []
    assert [end.run_id for end in c.ended] == ["job-2"] and c.paused == ["job"]  # job-9: no such run running


HOLDS = [  # (what holds the job, the retry due now, a manual run asked for, what launches)
    ("suspended", Asked(held=True, triggers=1), [Retry("job", "job-1", 2)], ["manual"]),
    ("deleting", Asked(held=True, triggers=1, deleting=True), [], []),
]


@pytest.mark.parametrize("asked,retries,manual", [row[1:] for row in HOLDS], ids=[row[0] for row in HOLDS])
def test_a_job_being_deleted_launches_nothing_retries_included(asked: Asked, retries: list, manual: list) -> None:
    """A suspended job's runs retry; one being deleted (a finalizer holds it) launches nothing,
    its runs' retries and the manual runs asked of it included, and misses none of its times."""
    spec, timeline = job(Policy.ALLOW, retries=1)
    state = JobState(last_schedule=NOON - 1440, active=["job-1"], launched=1,
                     pending_retries=[PendingRetry(NOON, 1, "job-1", 2)])
    turned = turn(spec, state, timeline, NOON, asked._replace(backfill=Backfill("r", 0, 0, 1, 0)))
    assert [a.decision for a in turned.applied] == retries
    assert [launch.reason for launch, _ in turned.manual] == manual
    assert turned.backfilled == [] and state.not_before == NOON


def test_a_step_records_a_run_its_worker_timed_out_as_timed_out_and_retries_it_not() -> None:
    """The runner's wrapper times timeoutMinutes on its own clock and reports timed_out; the step
    that is handed that end records it so (not failed), and a timed-out run is not retried."""
    c = Controller()
    c.add_job(JobSpec("job", "*/10 * * * *", Policy.FORBID, Options(retries=2), CREATED, 0))
    c.step(CREATED + 10)
    c.step(CREATED + 15, ends=[WorkerEnd("job-1", 1, "timed_out")])
    assert [(end.outcome, end.retry) for end in c.ended] == [("timed_out", None)]
    assert c.state.runs["job-1"].state == "timed_out" and c.state.jobs["job"].state.pending_retries == []
