"""From what the API shows to the core's state: level-based, no diffs.

The state of one schedule is rebuilt on every reconcile from its status
(history, counters, last schedule and skip times, whether it is overflowing)
and its owned Jobs (active runs and how they ended). The status is written
after a reconcile's Jobs are created and before the Jobs it forgets are
deleted (``effects.ordered``), so whatever point a crash hit, the Jobs tell a
restart what the lost status write would have said:

- a Job whose run the status does not know yet (its run number is above
  ``launched``) is adopted, not launched again: its number, nominal time and
  reason are on it; an overflow it was launched past is on it too;
- a run named by a live Job's ``cronctl.dev/replaces`` was replaced, never
  lost, whether its own Job is still there or already deleted;
- a Job whose run the status counted (number at most ``launched``) but no
  longer holds (retention dropped it, or it was replaced) is left over, and
  deleted, never adopted;
- a manual run's Job carries the trigger value it answers.

A staged Job (created ahead of its minute, suspended, labelled
``cronctl.dev/staged``, no run number) is not a run: it counts neither as
active nor as launched. It is found by its name, which is its nominal
time's (``Observed.staged``), and its fate is the core's
(``core.staging``). Only a status that lists it as an active run makes it
one before its release: a jittered launch is recorded in the status at its
minute and the Job released at its second.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..core.retention import Finished, retention_class
from ..core.state import FAILED, RUNNING, SUCCEEDED, TIMED_OUT, JobState, Queued
from ..core.transitions import adopt
from .manifests import OverflowNote, job_name, replaced_runs, staged_digest
from .resource import (ATTEMPT_LABEL, OVERFLOW_ANNOTATION, POOL_LABEL, REASON_ANNOTATION, RUN_LABEL, SCHEDULE_LABEL, SCHEDULED_ANNOTATION,
                       STAGED_LABEL, START_AT_ANNOTATION, STARTED_ANNOTATION, TRIGGER_ANNOTATION, parse_rfc3339,
                       parse_rfc3339_seconds, rfc3339)


@dataclass
class RunView:
    """One run as the operator knows it. ``name`` is the name of its first attempt's
    Job, which names the run; ``attempt`` is its latest attempt."""

    name: str
    number: int
    scheduled: int
    started: int
    state: str = RUNNING
    finished: int | None = None
    # For a running run: how its latest attempt's Job says it ended (outcome, minute), if it has.
    ended: tuple[str, int] | None = None
    attempt: int = 1
    reason: str = "scheduled"  # a manual run does not count as a schedule time dealt with
    # For a running run whose Job waits, suspended, for the second its jitter names.
    held_until: int | None = None
    staged: bool = False  # its Job is still a staged one: its release makes it this run's
    failure: str | None = None  # why its latest attempt's Job failed, as the job controller says
    queued_in: str | None = None  # the pool whose worker its latest attempt's Job waits for, suspended

    @property
    def job(self) -> str:
        """The name of the latest attempt's Job."""
        return self.name if self.attempt == 1 else f"{self.name}-{self.attempt}"

    def jobs(self) -> list[str]:
        """The Jobs of every attempt."""
        return [self.name] + [f"{self.name}-{attempt}" for attempt in range(2, self.attempt + 1)]

    def history_entry(self) -> dict[str, Any]:
        assert self.finished is not None
        entry = {"name": self.name, "run": self.number, "state": self.state, "attempts": self.attempt,
                 "reason": self.reason,
                 "scheduledTime": rfc3339(self.scheduled), "startedTime": rfc3339(self.started),
                 "finishedTime": rfc3339(self.finished)}
        if self.failure is not None and self.state != SUCCEEDED:
            entry["failure"] = self.failure
        return entry

    def active_entry(self) -> dict[str, Any]:
        entry = {"name": self.name, "run": self.number, "attempt": self.attempt, "state": self.state,
                 "reason": self.reason,
                 "job": self.job, "scheduledTime": rfc3339(self.scheduled), "startedTime": rfc3339(self.started)}
        if self.queued_in is not None and self.state == RUNNING:
            entry.update(state=QUEUED, pool=self.queued_in,
                         message=f"waits for a worker of CronPool {self.queued_in} (its spec.workers all busy)")
        return entry


@dataclass(frozen=True)
class StagedView:
    """A staged Job: the firing it holds, ready before its minute."""

    name: str
    nominal: int
    start_at: int | None  # the second it is due (its jitter's), from cronctl.dev/start-at
    digest: str | None  # what it was staged with
    suspended: bool


@dataclass
class Observed:
    state: JobState
    runs: dict[str, RunView]  # every run the state mentions, by Job name
    lost: list[str]  # active in status, but their Job is gone
    # What the status last said of each active run: (state, attempt), so a plan tells news from repeats.
    reported: dict[str, tuple[str, int]] = field(default_factory=dict)
    # Runs a live Job was launched to replace that the status or a Job still shows: their Jobs go.
    replaced: list[RunView] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)  # Jobs of runs the status counted and forgot
    answered: set[str] = field(default_factory=set)  # trigger values a manual run's Job answers
    # An overflow that the Jobs of launches the status does not know yet were launched past,
    # with those launches' nominal times: the status write that would have recorded it was lost.
    overflow: OverflowNote | None = None
    overflow_launches: list[int] = field(default_factory=list)
    staged: dict[int, StagedView] = field(default_factory=dict)  # staged Jobs that are no run, by nominal time


QUEUED = "queued"  # an active run's state while its Job waits for a worker of its pool
DEADLINE_EXCEEDED = "DeadlineExceeded"  # the job controller's reason: activeDeadlineSeconds passed


def job_outcome(job: Mapping[str, Any]) -> tuple[str, int] | None:
    """A Job's Complete or Failed condition as (outcome, minute). A Job the job controller ended
    at its deadline (the ``activeDeadlineSeconds`` a timeout sets) timed out: its run is not
    retried, whatever minute the operator's clock says its timeout expires."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") != "True":
            continue
        outcome = {"Complete": SUCCEEDED, "Failed": FAILED}.get(condition.get("type"))
        if outcome == FAILED and condition.get("reason") == DEADLINE_EXCEEDED:
            outcome = TIMED_OUT
        at = parse_rfc3339(condition.get("lastTransitionTime"))
        if outcome is not None and at is not None:
            return outcome, at
    return None


FAILURE_CHARACTERS = 300  # of the job controller's message kept in a history entry


def job_failure(job: Mapping[str, Any]) -> str | None:
    """Why the job controller failed a Job ("BackoffLimitExceeded: Job has reached the specified
    backoff limit", "DeadlineExceeded: ..."), from its Failed condition."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Failed" and condition.get("status") == "True":
            text = ": ".join(str(part) for part in (condition.get("reason"), condition.get("message")) if part)
            return text[:FAILURE_CHARACTERS] or None
    return None


def run_of_job(job: Mapping[str, Any], owner_uid: str) -> RunView | None:
    """The run a Job carries, if this schedule controls it and it is not being deleted."""
    metadata = job.get("metadata") or {}
    if metadata.get("deletionTimestamp"):
        return None
    owners = metadata.get("ownerReferences") or []
    if not any(ref.get("controller") and ref.get("uid") == owner_uid for ref in owners):
        return None
    annotations = metadata.get("annotations") or {}
    labels = metadata.get("labels") or {}
    try:
        number, attempt = int(labels[RUN_LABEL]), int(labels.get(ATTEMPT_LABEL, 1))
    except (KeyError, ValueError):
        return None
    scheduled = parse_rfc3339(annotations.get(SCHEDULED_ANNOTATION))
    started = parse_rfc3339(annotations.get(STARTED_ANNOTATION))
    if scheduled is None or started is None or attempt < 1:
        return None
    reason = str(annotations.get(REASON_ANNOTATION, "scheduled"))
    name = job_name(labels.get(SCHEDULE_LABEL, ""), scheduled, reason=reason)
    held = (job.get("spec") or {}).get("suspend") is True
    pool = labels.get(POOL_LABEL)
    # A pooled Job waits for its pool's look, which minds its jitter's second too: the schedule
    # holds nothing of it.
    held_until = parse_rfc3339_seconds(annotations.get(START_AT_ANNOTATION)) if held and pool is None else None
    return RunView(name, number, scheduled, started, ended=job_outcome(job), attempt=attempt, reason=reason,
                   held_until=held_until, failure=job_failure(job), queued_in=pool if held else None)


def staged_of_job(job: Mapping[str, Any], owner_uid: str) -> StagedView | None:
    """The firing a staged Job holds, if this schedule controls it and it is not being deleted."""
    metadata = job.get("metadata") or {}
    labels = metadata.get("labels") or {}
    if labels.get(STAGED_LABEL) != "true" or metadata.get("deletionTimestamp"):
        return None
    if not any(ref.get("controller") and ref.get("uid") == owner_uid for ref in metadata.get("ownerReferences") or []):
        return None
    annotations = metadata.get("annotations") or {}
    nominal = parse_rfc3339(annotations.get(SCHEDULED_ANNOTATION))
    if nominal is None or metadata.get("name") != job_name(labels.get(SCHEDULE_LABEL, ""), nominal):
        return None
    return StagedView(str(metadata["name"]), nominal, parse_rfc3339_seconds(annotations.get(START_AT_ANNOTATION)),
                      staged_digest(job), (job.get("spec") or {}).get("suspend") is True)


def _state_of(status: Mapping[str, Any]) -> JobState:
    """The job's counters and times as the status recorded them (its runs come after)."""
    # Fleet mode writes no lastScheduleTime: where its times count from is recordedScheduleTime.
    last_schedule = status.get("lastScheduleTime") or status.get("recordedScheduleTime")
    return JobState(last_schedule=parse_rfc3339(last_schedule),
                    launched=int(status.get("launched", 0)), skipped=int(status.get("skipped", 0)),
                    last_skipped=parse_rfc3339(status.get("lastSkippedTime")),
                    overflowed=int(status.get("overflowed", 0)), overflowing=status.get("overflowing") is True,
                    not_before=parse_rfc3339(status.get("suspendedThrough")),
                    queue=_queue(status.get("queue")), scheduled_runs=int(status.get("scheduledRuns") or 0),
                    last_success=parse_rfc3339(status.get("lastSuccessfulTime")),
                    last_failure=parse_rfc3339(status.get("lastFailureTime")),
                    consecutive_failures=int(status.get("consecutiveFailures") or 0))


def observe(status: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]], owner_uid: str) -> Observed:
    """The schedule's state and runs from its status and the Jobs it controls (the module's
    docstring says how the Jobs correct a status a crash left behind)."""
    state = _state_of(status)
    observed = Observed(state, _finished_runs(status, state), [])
    jobs = list(jobs)
    owned = [(job, run) for job in jobs if (run := run_of_job(job, owner_uid)) is not None]
    seen = _Seen(_listed_runs(status, observed), {name for job, _ in owned for name in replaced_runs(_annotations(job))})
    counted = int(status.get("launched", 0))
    for job, run in owned:
        _take_job(observed, seen, job, run, counted)
    for view in (view for job in jobs if (view := staged_of_job(job, owner_uid)) is not None):
        _take_staged(observed, seen, view)
    _take_listed(observed, seen)
    observed.replaced = sorted(seen.replacing.values(), key=lambda r: r.number)
    _adopt_all(observed)
    return observed


@dataclass
class _Seen:
    """What ``observe`` gathers before it places each run: the active runs the status lists
    (by name), the runs a live Job says it replaces, and the newest attempt seen of each of those."""

    listed: dict[str, RunView]
    replaced: set[str]
    replacing: dict[str, RunView] = field(default_factory=dict)


def _finished_runs(status: Mapping[str, Any], state: JobState) -> dict[str, RunView]:
    """The finished runs the status's history holds, by name, each kept in its retention class's list."""
    runs = {}
    for entry in status.get("history") or []:
        run = _finished_run(entry)
        if run is not None:
            runs[run.name] = run
            kept = state.kept_succeeded if retention_class(run.state) == SUCCEEDED else state.kept_failed
            kept.append(Finished(run.finished, run.number, run.name))  # type: ignore[arg-type]
    state.kept_succeeded.sort()
    state.kept_failed.sort()
    return runs


def _listed_runs(status: Mapping[str, Any], observed: Observed) -> dict[str, RunView]:
    """The active runs the status lists, by name; what it reported of each is noted in ``observed``."""
    listed = {}
    for entry in status.get("active") or status.get("recordedActive") or []:  # fleet mode's name (``status``)
        run = _active_run(entry)
        if run is not None:
            listed[run.name] = run
            observed.reported[run.name] = (str(entry.get("state", RUNNING)), run.attempt)
    return listed


def _take_job(observed: Observed, seen: _Seen, job: Mapping[str, Any], run: RunView, counted: int) -> None:
    """Place the run an owned Job carries: a replaced run's attempt, a leftover of a run the status
    counted and forgot, or a run (adopted, when the status does not list it yet)."""
    annotations = _annotations(job)
    if run.reason == "manual" and annotations.get(TRIGGER_ANNOTATION) is not None:
        observed.answered.add(str(annotations[TRIGGER_ANNOTATION]))
    runs = observed.runs
    if run.name in runs and runs[run.name].state != RUNNING:
        return  # a finished run: a late change of its Jobs changes nothing
    if run.name in seen.replaced:
        _keep_newest_attempt(seen.replacing, run)
    elif run.name not in seen.listed and run.number <= counted:
        observed.leftovers.append(str(job["metadata"]["name"]))
    elif run.name not in runs or runs[run.name].attempt < run.attempt:
        runs[run.name] = run  # an older attempt's Job, seen after a newer one, changes nothing
        if run.name not in seen.listed and run.attempt == 1:
            _note_overflow(observed, run, annotations)


def _take_staged(observed: Observed, seen: _Seen, view: StagedView) -> None:
    """Place a staged Job: a firing that is no run yet, or the Job of a listed run not yet released."""
    if view.name in observed.runs:
        return  # the Job of a run that ended before its release: part of that run
    run = seen.listed.get(view.name)
    if run is None:
        observed.staged[view.nominal] = view
    elif view.name not in seen.replaced and run.attempt == 1:
        run.staged, run.held_until = True, view.start_at if view.suspended else None
        observed.runs[view.name] = run


def _take_listed(observed: Observed, seen: _Seen) -> None:
    """Place the listed runs no Job placed: replaced, or lost (their Job is gone)."""
    for name, run in seen.listed.items():
        if name in seen.replaced:
            _keep_newest_attempt(seen.replacing, run)
        elif name not in observed.runs:
            observed.runs[name] = run
            observed.lost.append(name)


def _adopt_all(observed: Observed) -> None:
    """The state's active runs, and every run's number and time adopted into its counters, in run order."""
    state = observed.state
    active = sorted((run for run in observed.runs.values() if run.state == RUNNING), key=lambda r: r.number)
    state.active = [run.name for run in active]
    for run in sorted([*observed.runs.values(), *observed.replaced], key=lambda run: run.number):
        adopt(state, run.number, run.scheduled, run.reason)


def _annotations(job: Mapping[str, Any]) -> Mapping[str, Any]:
    return (job.get("metadata") or {}).get("annotations") or {}


def _keep_newest_attempt(views: dict[str, RunView], run: RunView) -> None:
    if run.name not in views or views[run.name].attempt < run.attempt:
        views[run.name] = run


def _note_overflow(observed: Observed, run: RunView, annotations: Mapping[str, Any]) -> None:
    note = OverflowNote.from_annotation(annotations.get(OVERFLOW_ANNOTATION))
    if note is not None:
        observed.overflow = note
        observed.overflow_launches = sorted([*observed.overflow_launches, run.scheduled])


def _queue(entries: object) -> list[Queued]:
    """The firings waiting for the active run (wait-for-last), oldest first."""
    queue = []
    for entry in entries if isinstance(entries, list) else []:
        nominal = parse_rfc3339(entry.get("scheduledTime")) if isinstance(entry, dict) else None
        if nominal is not None:
            queue.append(Queued(nominal, str(entry.get("reason", "scheduled"))))
    return queue


def _active_run(entry: object) -> RunView | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return None
    scheduled, started = parse_rfc3339(entry.get("scheduledTime")), parse_rfc3339(entry.get("startedTime"))
    if scheduled is None or started is None:
        return None
    return RunView(entry["name"], int(entry.get("run", 0)), scheduled, started,
                   attempt=int(entry.get("attempt", 1)), reason=str(entry.get("reason", "scheduled")))


def _finished_run(entry: object) -> RunView | None:
    run = _active_run(entry)
    finished = parse_rfc3339(entry.get("finishedTime")) if run is not None else None  # type: ignore[union-attr]
    if run is None or finished is None:
        return None
    run.state, run.finished = str(entry.get("state")), finished  # type: ignore[union-attr]
    run.attempt = int(entry.get("attempts", 1))  # type: ignore[union-attr]
    failure = entry.get("failure")  # type: ignore[union-attr]
    run.failure = failure if isinstance(failure, str) else None
    return run
