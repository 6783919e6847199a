"""A CronSchedule's status as a reconcile leaves it: what a user reads in ``kubectl get``
and ``describe``, and what the next reconcile rebuilds its state from (``observe``).

Conditions keep their lastTransitionTime while their status holds. Ready
says whether the spec is valid (or why not), whether the schedule is
suspended or being deleted, and whether the API server refused its last write of a kind
(``refusals``: until a write of that kind goes through); MissedSchedules
is True from the reconcile an overflow began in,
with the core's count, until a firing is launched on time; Ended (for a
schedule with a window or a run limit) says whether and why it fires no
more. A status equal to the old one (fields set to None counting as absent)
is not written.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from ..core.upcoming import Upcoming
from ..core.window import END_TIME_REACHED, MAX_RUNS_REACHED, remaining_runs
from ..manifest import SpecError
from . import refusals
from .context import Context
from .manifests import condition
from .messages import POOL_NOT_FOUND, pool_not_found_message
from .resource import STATUS_VERSION, rfc3339
from .reading import next_schedule_times
from .shard import shard_of

MISSED_SCHEDULES = "MissedSchedules"  # the condition an overflow sets
ENDED = "Ended"  # the condition of a schedule past its endTime or its maxRuns
DELETING = "Deleting"  # Ready's reason while a schedule's deletion waits for its finalizers


class Missed(NamedTuple):
    """What this reconcile says of the MissedSchedules condition."""

    overflow: str | None = None  # the message of an overflow the job went into
    on_time: bool = False  # a firing launched for its own minute, past no overflow


def status_of(context: Context, missed: Missed, upcoming: Upcoming) -> dict[str, Any]:
    """``upcoming``: what the core said the job fires next (``core.upcoming``, in its reconcile's result)."""
    spec, state, observed = context.spec, context.observed.state, context.observed
    generation, previous = context.generation, context.old_status.get("conditions") or []
    options = spec.job.options
    ended, next_fire = upcoming.ended, upcoming.fires
    left = remaining_runs(options.max_runs, state.scheduled_runs)
    history = sorted((observed.runs[item.run_id] for item in state.kept_succeeded + state.kept_failed),
                     key=lambda run: (run.finished, run.number))
    return {
        "version": STATUS_VERSION,
        "observedGeneration": generation,
        "anchorTime": rfc3339(context.anchor),
        "lastScheduleTime": _time(state.last_schedule),
        "nextFireTime": _time(next_fire),
        # Changes only when nextFireTime does (the first of them passes): no write of its own.
        "nextScheduleTimes": next_schedule_times(spec, context.timeline, context.read, next_fire)[:left],
        "launched": state.launched,
        "lastSuccessfulTime": _time(state.last_success),
        "lastFailureTime": _time(state.last_failure),
        "consecutiveFailures": state.consecutive_failures or None,
        "scheduledRuns": state.scheduled_runs or None,
        "remainingRuns": left,
        "skipped": state.skipped,
        "overflowed": state.overflowed,
        "overflowing": True if state.overflowing else None,
        "lastSkippedTime": _time(state.last_skipped),
        "suspendedThrough": _time(state.not_before),
        "suspendReason": spec.suspend_reason if spec.suspend else None,
        "activeCount": len(state.active),
        "queue": [{"scheduledTime": rfc3339(q.nominal), "reason": q.reason} for q in state.queue],
        "active": [observed.runs[name].active_entry() for name in state.active],
        "history": [run.history_entry() for run in history],
        "conditions": [_ready(context, previous), _missed_schedules(context, missed, previous),
                       *_ended(context, ended, previous)],
        "shard": shard_of(context.schedule),
    }


def _time(minute: int | None) -> str | None:
    return None if minute is None else rfc3339(minute)


def _ready(context: Context, previous: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Ready: False while the schedule is being deleted, its pool is missing or the API server's
    refusal stands; True (Suspended) while it is suspended; else True (Scheduled)."""
    spec, generation, now = context.spec, context.generation, context.now
    if context.deleting:
        return condition("Ready", False, DELETING, deleting_message(context.schedule), generation, now, previous)
    if spec.suspend:
        message = "suspended: nothing fires" + (f" ({spec.suspend_reason})" if spec.suspend_reason else "")
        return condition("Ready", True, "Suspended", message, generation, now, previous)
    if context.pool_missing:
        return condition("Ready", False, POOL_NOT_FOUND, pool_not_found_message(spec.pool or "", context.namespace),
                         generation, now, previous)
    refused = _refusal_standing(context, previous)
    if refused is not None:
        return {**refused, "observedGeneration": generation}
    return condition("Ready", True, "Scheduled", "the schedule is valid", generation, now, previous)


def deleting_message(schedule: Mapping[str, Any]) -> str:
    """What Ready says of a schedule being deleted: nothing fires, and what it waits for."""
    finalizers = schedule["metadata"].get("finalizers") or []
    waiting = f" (waiting for its finalizers: {', '.join(map(str, finalizers))})" if finalizers else ""
    return f"being deleted since {schedule['metadata'].get('deletionTimestamp')}: nothing fires{waiting}"


def _refusal_standing(context: Context, previous: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The Ready condition an API server's refusal set, while this plan does not end it."""
    out = context.out
    return refusals.carried(previous, creates=bool(out.creates),
                            patches=bool(out.releases or out.resumes or out.labels), deletes_after=bool(out.deletes))


def _ended(context: Context, ended: str | None, previous: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Ended, for a schedule with a window or a run limit: True once it fires no more, and why."""
    options = context.spec.job.options
    if not options.window and options.max_runs is None:
        return []
    generation, now = context.generation, context.now
    if ended == END_TIME_REACHED:
        return [condition(ENDED, True, ended, "no schedule time is left before spec.endTime", generation, now,
                          previous)]
    if ended == MAX_RUNS_REACHED:
        return [condition(ENDED, True, ended, f"its {options.max_runs} scheduled runs (spec.maxRuns) were "
                          "launched", generation, now, previous)]
    return [condition(ENDED, False, "Scheduling", "schedule times are left", generation, now, previous)]


def _missed_schedules(context: Context, missed: Missed, previous: list[Mapping[str, Any]]) -> dict[str, Any]:
    """True from the reconcile an overflow began in, with its message; False again once a
    firing is on time. Ready stays True meanwhile: the schedule works."""
    generation, now = context.generation, context.now
    if missed.overflow is not None:
        return condition(MISSED_SCHEDULES, True, "TooManyMissedSchedules", missed.overflow, generation, now,
                         previous)
    old = next((c for c in previous if c.get("type") == MISSED_SCHEDULES), None)
    if old is not None and old.get("status") == "True" and not missed.on_time:
        return condition(MISSED_SCHEDULES, True, str(old.get("reason")), str(old.get("message")), generation, now,
                         previous)
    return condition(MISSED_SCHEDULES, False, "OnTime", f"no more than {context.spec.job.options.missed_limit} "
                     "schedule times were missed (missedSchedulesLimit)", generation, now, previous)


def refused_status(schedule: Mapping[str, Any], anchor: int, error: SpecError, now: int) -> dict[str, Any]:
    """The status of a schedule whose spec the core cannot read: Ready False with the reason,
    no fire times; its counters and runs as they were."""
    status = schedule.get("status") or {}
    generation = schedule["metadata"].get("generation", 0)
    ready = condition("Ready", False, error.reason, error.message, generation, now, status.get("conditions") or [])
    return {**status, "version": STATUS_VERSION, "observedGeneration": generation, "anchorTime": rfc3339(anchor),
            "nextFireTime": None, "nextScheduleTimes": [], "conditions": [ready], "shard": shard_of(schedule)}


def changed(old: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """The new status if it differs from the old (fields set to None count as absent)."""
    def meaningful(status: Mapping[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in status.items() if value is not None}
    return None if meaningful(old) == meaningful(new) else new
