"""One reconcile of one CronSchedule, as data: what to create, delete, post and patch.

``plan`` is pure: the CronSchedule, its owned Jobs and the minute in, a
``Plan`` out. It rebuilds the core's state (``observe``), ends the runs whose
Jobs ended or whose timeout passed, asks ``core.tick.decide`` what to do, and
maps each decision to API actions. ``apply`` carries the plan out.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..core.schedule import Timeline
from ..core.state import FAILED, RETRY_PENDING, RUNNING, SUCCEEDED, TIMED_OUT, Queued
from ..core.tick import (Coalesce, Enqueue, Launch, Overflow, Replace, Retry, Skip, decide, firing_reason,
                         manual_launch, run_end, start_time)
from .manifests import EventSpec, condition, job_manifest, job_name
from .observe import Observed, RunView, observe
from ..manifest import ScheduleSpec, SpecError, read_spec
from .resource import STATUS_VERSION, TRIGGER_ANNOTATION, parse_rfc3339, rfc3339, rfc3339_seconds


@dataclass
class Plan:
    delete_first: list[str] = field(default_factory=list)  # replaced runs' Jobs
    create: list[dict[str, Any]] = field(default_factory=list)
    delete_after: list[str] = field(default_factory=list)  # Jobs of runs retention dropped
    events: list[EventSpec] = field(default_factory=list)
    status: dict[str, Any] | None = None  # the new status, when it differs from the old
    wake_at: int | None = None  # the minute to look again (besides watch events)
    release: list[str] = field(default_factory=list)  # held Jobs whose jittered start has come
    release_at: int | None = None  # the second the next held Job may start
    lost: list[str] = field(default_factory=list)  # runs active in status whose Job is not among the Jobs

    @property
    def wake_second(self) -> float | None:
        """When to look again, in seconds since 1970: the next decision or the next release."""
        candidates = [t for t in (None if self.wake_at is None else self.wake_at * 60, self.release_at)
                      if t is not None]
        return min(candidates) if candidates else None


def plan(schedule: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]], now: int,
         second: float | None = None) -> Plan:
    """``now`` is the minute the core decides at; ``second`` (seconds since 1970, within
    that minute; its start by default) is when a jittered Job may be resumed."""
    second = now * 60 if second is None else second
    metadata = schedule["metadata"]
    status = schedule.get("status") or {}
    anchor = parse_rfc3339(status.get("anchorTime"))
    anchor = now if anchor is None else anchor
    try:
        spec = read_spec(schedule, anchor)
        timeline = Timeline(spec.job.compiled, anchor, spec.job.options.tz)
        if not timeline.fires:
            raise SpecError("spec.schedule", f"{spec.job.expression!r} never fires within 8 years "
                            f"of {rfc3339(anchor)}", "NeverFires")
    except SpecError as error:
        return _refused(schedule, status, anchor, error, now)
    observed = observe(status, jobs, metadata["uid"])
    result = Plan(lost=list(observed.lost))
    _end_runs(spec, observed, now, result)
    state = observed.state
    suspended_through = now if spec.suspend else parse_rfc3339(status.get("suspendedThrough"))
    state.not_before = suspended_through
    last_skipped = parse_rfc3339(status.get("lastSkippedTime"))
    overflowing = False
    if not spec.suspend:
        tick = decide(spec.job, state, timeline, now)
        for decision in tick.decisions:
            if isinstance(decision, Replace):
                state.active.remove(decision.run_id)
                state.forget_retry(decision.run_id)
                result.delete_first.extend(observed.runs[decision.run_id].jobs())
                result.events.append(EventSpec("Normal", "Replaced", f"deleted the active run {decision.run_id}"))
            elif isinstance(decision, Retry):
                _retry(schedule, spec, observed, decision, now, result)
            elif isinstance(decision, Launch):
                _launch(schedule, spec, observed, decision, now, result, second)
            elif isinstance(decision, Skip) and decision.scheduled_for != last_skipped:
                last_skipped = decision.scheduled_for
                state.skipped += 1
                result.events.append(EventSpec("Normal", "Skipped", f"skipped {rfc3339(decision.scheduled_for)}: "
                                               f"{state.active[0]} is still active (Forbid)"))
            elif isinstance(decision, Enqueue):
                state.queue.append(Queued(decision.scheduled_for, decision.reason))
                state.last_schedule = max(decision.scheduled_for, state.last_schedule or decision.scheduled_for)
                result.events.append(EventSpec("Normal", "Queued", f"{rfc3339(decision.scheduled_for)} "
                                               f"({decision.reason}) waits for the active run (WaitForLast)"))
            elif isinstance(decision, Coalesce):
                state.queue = [q for q in state.queue if q.nominal != decision.scheduled_for]
                result.events.append(EventSpec("Normal", "Coalesced", f"{rfc3339(decision.scheduled_for)} gave its "
                                               "place to a newer scheduled time (WaitForLast)"))
            elif isinstance(decision, Overflow):
                overflowing = True
                if not _was_overflowing(status):
                    state.overflowed += 1
                    result.events.append(EventSpec("Warning", "TooManyMissedSchedules", _overflow_message()))
        result.wake_at = _wake_at(spec, observed, tick.wake_at, now)
    trigger = pending_trigger(schedule)
    if trigger is not None:  # consumed once: the status remembers the value it answered
        _launch(schedule, spec, observed, manual_launch(spec.job, state, now), now, result)
    _release_held(observed, second, result)
    new_status = _status(schedule, spec, observed, timeline, anchor, now, last_skipped, suspended_through,
                         overflowing)
    new_status["lastTrigger"] = trigger if trigger is not None else status.get("lastTrigger")
    result.status = _changed(status, new_status)
    return result


def pending_trigger(schedule: Mapping[str, Any]) -> str | None:
    """The value of the trigger annotation, if the status has not answered it yet."""
    annotations = schedule["metadata"].get("annotations") or {}
    value = annotations.get(TRIGGER_ANNOTATION)
    if value is None or value == (schedule.get("status") or {}).get("lastTrigger"):
        return None
    return str(value)


def _end_runs(spec: ScheduleSpec, observed: Observed, now: int, result: Plan) -> None:
    """Runs whose Job ended, whose Job is gone, or whose timeout passed, in the order they ended.

    A failed attempt with retries left does not end its run: the run waits
    for its next attempt (the core's pending retry), rebuilt the same way on
    every reconcile from the failed Job until the next attempt's Job exists.
    """
    timeout = spec.job.options.timeout
    ends: list[tuple[int, int, str, str]] = []
    for name in observed.state.active:
        run = observed.runs[name]
        end = (FAILED, now) if name in observed.lost else run_end(run.started, timeout, run.ended, now)
        if end is not None:
            ends.append((end[1], run.number, name, end[0]))
    options = spec.job.options
    for at, number, name, outcome in sorted(ends):
        run = observed.runs[name]
        pending = None if outcome != FAILED or name in observed.lost else observed.state.fail_attempt(
            name, number, run.attempt, at, options.retries, options.retry_delay)
        expired = None if pending is None else run_end(run.started, timeout, None, now)
        if expired is not None:  # it timed out waiting for its next attempt: a timed-out run is not retried
            observed.state.forget_retry(name)
            pending, (outcome, at) = None, expired
        if pending is not None:
            run.state = RETRY_PENDING
            if observed.reported.get(name) == (RETRY_PENDING, run.attempt):
                continue  # said when the attempt failed; the run still waits for its next one
            result.events.append(EventSpec("Warning", "AttemptFailed", f"attempt {run.attempt} of run {number} "
                                           f"({run.job}) failed; attempt {pending.attempt} at {rfc3339(pending.due)}"))
            continue
        run.state, run.finished = outcome, at
        dropped = observed.state.record_finish(name, number, outcome, at, options.keep_succeeded,
                                               options.keep_failed)
        result.delete_after.extend(job for item in dropped for job in observed.runs[item.run_id].jobs())
        result.events.append(_end_event(run, name in observed.lost))


def _end_event(run: RunView, lost: bool) -> EventSpec:
    if lost:
        return EventSpec("Warning", "JobGone", f"run {run.number}: its Job {run.name} was deleted; counted as failed")
    reason = {SUCCEEDED: "Succeeded", FAILED: "Failed", TIMED_OUT: "TimedOut"}[run.state]
    return EventSpec("Normal" if run.state == SUCCEEDED else "Warning", reason,
                     f"run {run.number} ({run.name}) {run.state.replace('_', ' ')} at {rfc3339(run.finished or 0)}")


def _launch(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, decision: Launch, now: int,
            result: Plan, second: float | None = None) -> None:
    """Create the run's first Job. A scheduled firing whose jitter puts its start after
    ``second`` gets a Job created suspended until then; catch-up and manual ones start now."""
    manual = decision.reason == "manual"
    reason = decision.reason if manual else firing_reason(decision.scheduled_for, now)
    start = start_time(spec.job, dataclasses.replace(decision, reason=reason))
    hold = start if second is not None and start > second else None
    name = job_name(spec.job.name, decision.scheduled_for, manual=manual)
    state = observed.state
    state.active.append(name)
    state.launched = decision.number
    if state.queue and state.queue[0].nominal == decision.scheduled_for and not manual:
        state.queue.pop(0)
    if not manual:
        state.last_schedule = max(decision.scheduled_for, state.last_schedule or decision.scheduled_for)
    observed.runs[name] = RunView(name, decision.number, decision.scheduled_for, now, reason=reason,
                                  held_until=hold)
    result.create.append(job_manifest(schedule, spec.job_template, decision.number, decision.scheduled_for, now,
                                      spec.job.options.timeout, retries=spec.job.options.retries,
                                      reason=reason, start_at=hold))
    note = {"manual": " (manual)", "catch-up": " (catch-up)"}.get(reason, "")
    if hold is not None:
        note += f"; it starts at {rfc3339_seconds(hold)} (jitter)"
    result.events.append(EventSpec("Normal", "Launched", f"launched run {decision.number} ({name}) for "
                                   f"{rfc3339(decision.scheduled_for)}{note}"))


def _release_held(observed: Observed, second: float, result: Plan) -> None:
    """Resume the held Jobs whose jittered start has come; remember the next one's."""
    for name in observed.state.active:
        run = observed.runs[name]
        if run.held_until is None or run.state != RUNNING:
            continue
        if run.held_until <= second:
            result.release.append(run.job)
            run.held_until = None
        elif result.release_at is None or run.held_until < result.release_at:
            result.release_at = run.held_until


def _retry(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, decision: Retry, now: int,
           result: Plan) -> None:
    run = observed.runs[decision.run_id]
    run.state, run.attempt, run.ended = RUNNING, decision.attempt, None
    observed.state.forget_retry(run.name)
    options = spec.job.options
    result.create.append(job_manifest(schedule, spec.job_template, run.number, run.scheduled, run.started,
                                      options.timeout, run.attempt, now, options.retries, run.reason))
    result.events.append(EventSpec("Normal", "Retried", f"started attempt {run.attempt} of run {run.number} "
                                   f"({run.job}) for {rfc3339(run.scheduled)}"))


def _wake_at(spec: ScheduleSpec, observed: Observed, decided: int | None, now: int) -> int | None:
    """The next minute worth a look, never sooner than the next minute: the core's
    wake-up, a run's expiry, or the end of a Job stamped later than our clock (skew)."""
    candidates = [] if decided is None else [decided]
    timeout = spec.job.options.timeout
    for name in observed.state.active:
        run = observed.runs[name]
        if timeout is not None:
            candidates.append(run.started + timeout)
        if run.ended is not None and run.state == RUNNING:
            candidates.append(run.ended[1])
    candidates.extend(pending.due for pending in observed.state.pending_retries)
    if not candidates:
        return None
    return max(min(candidates), now + 1)


def _was_overflowing(status: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("reason") == "TooManyMissedSchedules"
               for c in status.get("conditions") or [])


def _overflow_message() -> str:
    return ("more than 100 schedule times were missed; nothing is launched until fewer are "
            "(set startingDeadlineSeconds to bound the window)")


def _status(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, timeline: Timeline, anchor: int,
            now: int, last_skipped: int | None, suspended_through: int | None,
            overflowing: bool) -> dict[str, Any]:
    state = observed.state
    generation = schedule["metadata"].get("generation", 0)
    previous = (schedule.get("status") or {}).get("conditions") or []
    if overflowing:
        ready = condition("Ready", False, "TooManyMissedSchedules", _overflow_message(), generation, now, previous)
    elif spec.suspend:
        ready = condition("Ready", True, "Suspended", "suspended: nothing fires", generation, now, previous)
    else:
        ready = condition("Ready", True, "Scheduled", "the schedule is valid", generation, now, previous)
    next_fire = None if spec.suspend else timeline.next_after(now)
    history = sorted((observed.runs[item.run_id] for item in state.kept_succeeded + state.kept_failed),
                     key=lambda run: (run.finished, run.number))
    status: dict[str, Any] = {
        "version": STATUS_VERSION,
        "observedGeneration": generation,
        "anchorTime": rfc3339(anchor),
        "lastScheduleTime": None if state.last_schedule is None else rfc3339(state.last_schedule),
        "nextFireTime": None if next_fire is None else rfc3339(next_fire),
        "launched": state.launched,
        "skipped": state.skipped,
        "overflowed": state.overflowed,
        "lastSkippedTime": None if last_skipped is None else rfc3339(last_skipped),
        "suspendedThrough": None if suspended_through is None else rfc3339(suspended_through),
        "activeCount": len(state.active),
        "queue": [{"scheduledTime": rfc3339(q.nominal), "reason": q.reason} for q in state.queue],
        "active": [observed.runs[name].active_entry() for name in state.active],
        "history": [run.history_entry() for run in history],
        "conditions": [ready],
    }
    return status


def _refused(schedule: Mapping[str, Any], status: Mapping[str, Any], anchor: int, error: SpecError,
             now: int) -> Plan:
    generation = schedule["metadata"].get("generation", 0)
    previous = status.get("conditions") or []
    ready = condition("Ready", False, error.reason, error.message, generation, now, previous)
    new = {**status, "version": STATUS_VERSION, "observedGeneration": generation, "anchorTime": rfc3339(anchor),
           "nextFireTime": None, "conditions": [ready]}
    already_said = any(c.get("type") == "Ready" and c.get("message") == error.message for c in previous)
    events = [] if already_said else [EventSpec("Warning", error.reason, error.message)]
    return Plan(events=events, status=_changed(status, new))


def _changed(old: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """The new status if it differs from the old (fields set to None count as absent)."""
    def meaningful(status: Mapping[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in status.items() if value is not None}
    return None if meaningful(old) == meaningful(new) else new
