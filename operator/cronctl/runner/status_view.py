"""``cronctl status``: the schedules of a runner's folder, their last and next times, runs and queue.

Plain values first (``status``: JSON-ready, stable keys, times RFC 3339 UTC), words for people
second (``status_lines``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.window import MAX_RUNS_REACHED
from ..core.zones import UTC, AnyZone
from . import backfills
from .firing import SWITCH_OFF_FILE, Firing, both_times
from .folder_view import (FolderView, ScheduleView, backfill_waits, expressions, folder_view, rfc3339, rules_of,
                          suspended_line)
from .lock import describe_holder
from .slots import pool_missing, workers_busy


def status(folder: Path, now: int | None = None) -> dict[str, Any]:
    """``cronctl status --json``: stable keys, times RFC 3339 UTC (see docs/quickstart.md)."""
    view = folder_view(folder, now)
    holder = view.holder
    return {
        "folder": str(view.folder),
        "runner": {"running": holder is not None, "pid": (holder or {}).get("pid"),
                   "hostname": (holder or {}).get("hostname"), "since": (holder or {}).get("started_at")},
        "node_switch": "off" if view.switched_off else "on",
        "fires": view.fires,
        "book": view.has_book,
        "clock": rfc3339(view.clock),
        "workers": view.workers,
        "busy": view.busy,
        "schedules": [_schedule_json(s, view.switched_off) for s in view.schedules],
        "invalid_manifests": [{"file": i.file, "schedule": i.schedule, "message": i.line()} for i in view.invalid],
        "retired": [{"schedule": name, "at": rfc3339(at)} for name, at in view.retired.items()],
    }


def _schedule_json(view: ScheduleView, switched_off: bool) -> dict[str, Any]:
    spec = view.spec
    return {
        "name": spec.name, "expression": spec.expression, "schedules": expressions(spec),
        "exclude": list(spec.options.exclude), "daylight_saving": spec.options.daylight_saving.value,
        "time_zone": spec.options.tz.name,
        "policy": spec.policy.value, "last": rfc3339(view.last), "next": rfc3339(view.next),
        "overdue_since": rfc3339(view.overdue_since), "skipped": view.skipped,
        "ended": view.ended, "remaining_runs": view.remaining_runs,
        "last_success": rfc3339(view.last_success), "last_failure": rfc3339(view.last_failure),
        "consecutive_failures": view.consecutive_failures,
        "running": [{"run": f.run_id, "slot": f.slot, "attempt": f.attempt} for f in view.running],
        "queued": [{"run": f.run_id, "attempt": f.attempt} for f in view.queued],
        "pool": None if view.pool is None else {"name": view.pool, "workers": view.pool_workers,
                                                 "busy": view.pool_busy},
        "retrying": [{"run": f.run_id, "failed_attempt": f.attempt, "next_attempt": f.attempt + 1,
                      "due": rfc3339(f.retry_due)} for f in view.retrying],
        "overflow": None if view.overflow is None else {
            "at": rfc3339(view.overflow.at), "limit": view.overflow.limit, "dropped": view.overflow.dropped,
            "message": view.overflow.describe(spec.options.tz)},
        "invalid": view.invalid, "retired": rfc3339(view.retired_at),
        "suspended": None if view.suspension is None else view.suspension.to_json(),
        "backfill": None if view.backfill is None else backfills.progress_json(
            view.backfill, view.active, backfill_waits(view, switched_off)),
    }


def status_lines(folder: Path, now: int | None = None) -> list[str]:
    view = folder_view(folder, now)
    if view.holder is not None:
        lines = [f"runner: {describe_holder(view.holder)}"]
    else:
        lines = [f"no runner is running: nothing fires until 'cronctl local {folder}' runs"]
    if view.switched_off:
        lines.append(f"the node switch is off: nothing fires while {folder / SWITCH_OFF_FILE} exists")
    if not view.schedules and not view.invalid and not view.retired:
        lines.append(f"no schedules: {folder} has no CronSchedule manifest (*.yaml, *.yml); "
                     "put one there (examples/local/hello.yaml is one) and the runner loads it within a second")
        return lines
    if not view.has_book:
        lines.append(f"no book yet ({folder / 'cronctl.json'}): the runner has not run here; "
                     "the manifests' schedules:")
    for schedule in view.schedules:
        lines.extend(_schedule_lines(schedule, view))
    if view.invalid:
        lines.append("invalid manifests (nothing fires for them until they are fixed):")
        lines.extend(f"  {i.line()}" for i in view.invalid)
    if view.retired:
        lines.append("retired schedules (their manifests are gone):")
        lines.extend(f"  {name} at {both_times(at, UTC)}" for name, at in view.retired.items())
    return lines


def _schedule_lines(view: ScheduleView, folder: FolderView) -> list[str]:
    spec = view.spec
    zone = spec.options.tz
    lines = [f"{spec.name}: {'; '.join(expressions(spec))} ({zone.name}, {spec.policy.value})"]
    rules = rules_of(spec)
    if rules:
        lines.append(f"  {rules}")
    if folder.has_book:
        lines.append(f"  last:  {both_times(view.last, zone)}")
    suspended = view.suspension is not None and view.retired_at is None
    if view.suspension is not None and suspended:
        lines.append(f"  {suspended_line(view.suspension, zone)}")
    lines.append(f"  {_next_line(view, suspended)}")
    return lines + _record_lines(view, folder) + _run_lines(view, folder)


def _next_line(view: ScheduleView, suspended: bool) -> str:
    """When the schedule fires next, or why it fires no more."""
    zone = view.spec.options.tz
    if view.retired_at is not None:
        return f"retired at {both_times(view.retired_at, zone)}: its manifest is gone, nothing fires"
    if view.invalid:
        return "its manifest is invalid (below): nothing fires until it is fixed"
    if view.ended is not None:
        return f"ended ({view.ended}): {_ended_why(view)}, nothing fires"
    if suspended:
        return f"next:  {both_times(view.next, zone)} if resumed by then"
    if view.overdue_since is not None:
        return f"next:  {both_times(view.next, zone)}, overdue since {both_times(view.overdue_since, zone)}"
    return f"next:  {both_times(view.next, zone)}"


def _record_lines(view: ScheduleView, folder: FolderView) -> list[str]:
    """What its runs did so far: outcomes, runs left, an overflow, a backfill."""
    zone, lines = view.spec.options.tz, []
    if view.last_success is not None or view.last_failure is not None:
        lines.append(f"  {_outcomes_line(view, zone)}")
    if view.remaining_runs and view.ended is None:
        lines.append(f"  {view.remaining_runs} of its {view.spec.options.max_runs} scheduled runs left (maxRuns)")
    if view.overflow is not None:
        lines.append(f"  {view.overflow.describe(zone)}")
    if view.backfill is not None:
        waits = backfill_waits(view, folder.switched_off)
        lines.append(f"  {backfills.describe(view.backfill, view.active, zone, waits)}")
    return lines


def _run_lines(view: ScheduleView, folder: FolderView) -> list[str]:
    """Its runs now: running, queued for a worker, waiting to be retried."""
    lines = []
    if view.running:
        lines.append("  running: " + ", ".join(f"{f.run_id} on {f.slot}{_attempt_of(f, view.attempts)}"
                                               for f in view.running))
    if view.queued:
        lines.append("  " + ", ".join(f"{f.run_id}{_attempt_of(f, view.attempts)}" for f in view.queued)
                     + f" queued: {_why_queued(view, folder)}")
    lines.extend(f"  {_retry_line(f, view.attempts, view.spec.options.tz)}" for f in view.retrying)
    return lines


def _why_queued(view: ScheduleView, folder: FolderView) -> str:
    """``2/2 workers of CronPool 'reports' busy``, ``CronPool 'reports' is not in the folder``, or the
    node's ``4/4 workers busy``."""
    if view.pool is not None and view.pool_workers is None:
        return pool_missing(view.pool)
    if view.pool is not None and view.pool_workers is not None and view.pool_busy >= view.pool_workers:
        return workers_busy(view.pool_busy, view.pool_workers, view.pool)
    return workers_busy(folder.busy, folder.workers)


def _outcomes_line(view: ScheduleView, zone: AnyZone) -> str:
    """``last success: ...; last failure: ... (2 in a row)``: what failure monitoring reads."""
    parts = []
    if view.last_success is not None:
        parts.append(f"last success: {both_times(view.last_success, zone)}")
    if view.last_failure is not None:
        streak = f" ({view.consecutive_failures} in a row)" if view.consecutive_failures else ""
        parts.append(f"last failure: {both_times(view.last_failure, zone)}{streak}")
    return "; ".join(parts)


def _ended_why(view: ScheduleView) -> str:
    if view.ended == MAX_RUNS_REACHED:
        return f"its {view.spec.options.max_runs} scheduled runs (maxRuns) were launched"
    return "no schedule time is left before its endTime"


def _attempt_of(firing: Firing, attempts: int) -> str:
    """`` (attempt 2/3)`` for a schedule that retries; nothing for one that does not."""
    if attempts == 1 and firing.attempt == 1:
        return ""
    return f" (attempt {firing.attempt}/{max(attempts, firing.attempt)})"


def _retry_line(firing: Firing, attempts: int, zone: AnyZone) -> str:
    """A run waiting for its next attempt, e.g. ``tick-1: attempt 1/3 failed, retry 2/3 at ...``."""
    total = max(attempts, firing.attempt + 1)  # the manifest may have been edited since
    return (f"{firing.run_id}: attempt {firing.attempt}/{total} failed, "
            f"retry {firing.attempt + 1}/{total} at {both_times(firing.retry_due, zone)}")


