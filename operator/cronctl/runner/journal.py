"""The runner's history rows (the book's ``journal``) and the wording its lines share.

A run is one row when it is over, with the attempts it took; a time that
never ran (skipped, coalesced, canceled) is a row without a run. Each
schedule keeps its last ``HISTORY_LIMIT`` rows.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ..core.zones import AnyZone
from .firing import Firing, both_times
from .memory import RunnerState
from .values import Ended, nominal_iso

HISTORY_LIMIT = 200
SCHEDULED = "scheduled"
MANUAL = "manual"


def entry(firing: Firing, outcome: str, now: int, attempts: int) -> dict[str, Any]:
    """The row of a firing's run, over with ``outcome`` at ``now``."""
    row = {"run": firing.run_id, "reason": firing.reason, "nominal": firing.nominal, "actual": firing.actual,
           "attempts": attempts, "outcome": outcome, "finished": now}
    if firing.note:
        row["note"] = firing.note
    if firing.manual:
        row["trigger"] = firing.manual
    if firing.backfill:
        row["backfill"] = firing.backfill
    return row


def unrun(reason: str, nominal: int, outcome: str, now: int, **more: Any) -> dict[str, Any]:
    """The row of a time that never ran (skipped, coalesced, canceled)."""
    return {"run": None, "reason": reason, "nominal": nominal, "actual": None, "attempts": 0, "outcome": outcome,
            "finished": now, **more}


def remember(memory: RunnerState, schedule: str, row: dict[str, Any]) -> None:
    rows = memory.journal.setdefault(schedule, [])
    rows.append(row)
    del rows[:-HISTORY_LIMIT]


def facts(firing: Firing) -> dict[str, Any]:
    """The fields a line about a firing carries in JSON."""
    return {"schedule": firing.schedule, "run": firing.run_id, "nominal": nominal_iso(firing.nominal),
            "firing": firing.reason, "attempt": firing.attempt, "trigger": firing.manual,
            "backfill": firing.backfill}


def zone(memory: RunnerState, schedule: str) -> AnyZone | None:
    job = memory.controller.state.jobs.get(schedule)
    return job.spec.options.tz if job is not None else None


def time_of(memory: RunnerState, schedule: str, minute: int) -> str:
    """A schedule time as its lines show it: UTC, and the schedule's zone with its offset."""
    found = zone(memory, schedule)
    return both_times(minute, found) if found is not None else nominal_iso(minute)


def how(end: Ended) -> str:
    """``exit 3 after 12 s``, ``signal 9 after 2 s``, or the executor's note on a run that never ran."""
    if end.exit_code is not None:
        said = f"exit {end.exit_code}" + (f": {end.note}" if end.note else "")
    elif end.signal is not None:
        said = f"signal {end.signal}" + (f": {end.note}" if end.note else "")
    else:
        said = (end.note or "no exit code").split(";")[0]
    seconds = seconds_between(end.started_at, end.finished_at)
    return said if seconds is None else f"{said} after {seconds} s"


def end_facts(end: Ended) -> dict[str, Any]:
    return {"exit_code": end.exit_code, "signal": end.signal,
            "duration_seconds": seconds_between(end.started_at, end.finished_at)}


def seconds_between(started: str | None, finished: str | None) -> int | None:
    if not started or not finished:
        return None
    try:
        parse = [datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
                 for text in (started, finished)]
    except ValueError:
        return None
    return int((parse[1] - parse[0]).total_seconds())
