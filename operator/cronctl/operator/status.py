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

Fleet mode (``cronctl operator --fleet``, the chart's ``operator.fleetMode``) writes
no per-launch field: ``fleet_status`` says what a reconcile writes there (``to_write``
picks the mode's rule).
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from ..core.upcoming import Upcoming
from ..core.window import END_TIME_REACHED, MAX_RUNS_REACHED, remaining_runs
from ..manifest import SpecError
from . import refusals
from .context import Context
from .effects import RECORDED_ACTIVE
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


# Fleet mode: the fields a launch changes that are shown (kubectl get's LAST SCHEDULE, NEXT FIRE,
# ACTIVE and ATTEMPT, describe's next fires), never written, so never stale: ``kubectl cronctl``
# reads them off the Jobs. What the operator needs of two of them is kept under names no column
# shows (as of the status's last write): where missed times count from, and the runs under way.
FLEET_UNWRITTEN = ("lastScheduleTime", "nextFireTime", "nextScheduleTimes", "activeCount", "remainingRuns", "active")
RECORDED_SCHEDULE = "recordedScheduleTime"
# The bookkeeping a launch changes: written along with a write that has another reason, never a
# reason of its own (the launch's Job records it: ``observe`` adopts a Job whose run the status
# does not know, as after a crash).
FLEET_CARRIED = ("launched", "scheduledRuns", RECORDED_ACTIVE, RECORDED_SCHEDULE)


def fleet_status(old: Mapping[str, Any], new: Mapping[str, Any], on_jobs: frozenset[str]) -> dict[str, Any] | None:
    """The status fleet mode writes, or None: none when what changed is only launches recorded
    on their Jobs. ``on_jobs``: the runs their Jobs record (a jittered launch from a staged Job is
    recorded by the status alone until its second, so it is written). The last schedule time and
    the active runs are kept as ``recordedScheduleTime`` and ``recordedActive``, the shown
    per-launch fields are dropped."""
    written = {**new, **dict.fromkeys(FLEET_UNWRITTEN)}  # None: removed by the merge patch, if there
    written[RECORDED_SCHEDULE] = new.get("lastScheduleTime") or old.get(RECORDED_SCHEDULE)
    written[RECORDED_ACTIVE] = new.get("active") or None
    if _launches_only(old, written, on_jobs):
        return None
    return changed(old, written)


def _launches_only(old: Mapping[str, Any], new: Mapping[str, Any], on_jobs: frozenset[str]) -> bool:
    """Whether ``new`` differs from ``old`` only by launches whose Jobs record them: the
    carried counters, and active runs added (on their Jobs), none changed or gone. A field fleet
    mode never writes that ``old`` still has (written in the default mode) is a reason to write:
    the first write in fleet mode removes it."""
    if any(old.get(key) not in (None, []) for key in FLEET_UNWRITTEN):
        return False
    def rest(status: Mapping[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in status.items() if key not in FLEET_CARRIED and value is not None}
    if rest(old) != rest(new):
        return False
    before = {entry.get("name"): entry for entry in old.get(RECORDED_ACTIVE) or []}
    after = {entry.get("name"): entry for entry in new.get(RECORDED_ACTIVE) or []}
    if any(after.get(name) != entry for name, entry in before.items()):
        return False  # a run ended, failed, retried or was replaced: written
    return all(name in on_jobs for name in after if name not in before)


def listed_active(status: Mapping[str, Any]) -> list[Any]:
    """The active runs a status lists: ``active``, or fleet mode's ``recordedActive``."""
    return list(status.get("active") or status.get(RECORDED_ACTIVE) or [])


def to_write(old: Mapping[str, Any], new: dict[str, Any], fleet: bool = False,
             on_jobs: frozenset[str] = frozenset()) -> dict[str, Any] | None:
    """The status a reconcile writes, None for none: in the default mode the new one when it
    differs (``changed``), in fleet mode ``fleet_status``'s."""
    return fleet_status(old, new, on_jobs) if fleet else changed(old, new)


def fleet_counted(fleet: bool, launched: int, scheduled_runs: int, last_schedule: int | None) -> dict[str, Any] | None:
    """What a Replace's record carries in fleet mode (``effects.ordered``): the runs launched so
    far as the status and the Jobs count them, before the Replace deletes one of those Jobs."""
    if not fleet:
        return None
    return {"launched": launched, "scheduledRuns": scheduled_runs or None, RECORDED_SCHEDULE: _time(last_schedule)}
