"""Runs a restarted runner finds going that its book does not hold (the book deleted, cut or
moved aside): taken back into the core as active runs, as a CronJob controller rebuilds
``status.active`` from its Jobs, so that Forbid starts no second run beside one and its end
is recorded.

The shell finds them at adoption (each run folder records its request, pid and lock); the
step takes each in once its schedule's manifest is read (the core knows the job then), before
the clock moves and the tick decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.transitions import BACKFILL
from . import composition
from .effects import Out
from .firing import Firing, origin_of
from .journal import SCHEDULED, time_of
from .memory import RunnerState
from .values import RunKey, nominal_iso


@dataclass(frozen=True)
class Orphan:
    """A run going in ``home``'s folder (None: the scheduled runs') that no firing of the book holds."""

    home: str | None
    key: RunKey
    request: dict[str, Any]


def take_orphans(state: RunnerState, manifests_read: bool, now: int, out: Out) -> bool:
    """Each orphan of a known schedule becomes an active run of the core and a firing that
    watches it; one whose schedule no manifest defines is left to end unrecorded, said once."""
    if not state.orphans or not manifests_read:
        return False
    jobs = state.controller.state.jobs
    for orphan in state.orphans:
        key = orphan.key
        if key.schedule not in jobs:
            out.say("orphan", f"{key.schedule}: a run of {nominal_iso(key.nominal)} goes on that the book does not "
                              "hold, and no manifest defines its schedule: its end is not recorded", "warning",
                    schedule=key.schedule, nominal=nominal_iso(key.nominal))
            continue
        _take(state, orphan, now, out)
    state.orphans = []
    return True


def _take(state: RunnerState, orphan: Orphan, now: int, out: Out) -> None:
    key, request = orphan.key, orphan.request
    reason = request.get("reason") or SCHEDULED
    run = composition.adopt(state, now, key.schedule, key.nominal, reason, key.attempt)
    manual, backfill = origin_of(orphan.home)
    state.firings[run.id] = Firing(run.id, key.schedule, key.nominal, reason, list(request["command"]),
                                   list(request.get("args") or []), dict(request.get("env") or {}),
                                   start_at=key.nominal * 60, attempt=key.attempt, manual=manual,
                                   backfill=backfill, cwd=request.get("cwd"),
                                   active_deadline_seconds=request.get("active_deadline_seconds"),
                                   backoff_limit=request.get("backoff_limit") or 0)
    out.say("adopted", f"{run.id}: the run of {time_of(state, key.schedule, key.nominal)} goes on, and the book "
                       "does not hold it: taken back from its folder as a running run", "warning",
            schedule=key.schedule, run=run.id, nominal=nominal_iso(key.nominal))


def orphan_of(home: str | None, key: RunKey, request: object, state: RunnerState) -> Orphan | None:
    """The orphan a going run is, or None: held by a firing, or not readable as a run to take back
    (a backfill's: its request's progress went with the book)."""
    if not isinstance(request, dict) or not isinstance(request.get("command"), list):
        return None
    if request.get("reason") == BACKFILL or origin_of(home)[1] is not None:
        return None
    if any(f.home == home and f.schedule == key.schedule and f.nominal == key.nominal
           for f in state.firings.values()):
        return None
    return Orphan(home, key, request)
