"""Which schedules fire nothing now, and the lines that say when that changes.

A schedule is held while it is suspended (``spec.suspend: true`` in its
manifest, or a pause record of ``cronctl suspend``), while its manifest is
invalid, and every schedule while the node switch is off. A held schedule
counts no missed run (``core.reconcile.turn`` holds it: its window of missed times starts
after this minute), and its backfill waits; manual triggers of a suspended
schedule still run. Each schedule that becomes suspended (or whose suspension
changes: its reason, by whom) or resumed is one line; the first step says
nothing of the schedules suspended already. ``suspended`` keeps since when
each manifest suspension was seen (None: since before this runner saw it).
"""

from __future__ import annotations

from typing import Any

from ..core.tick import window_start
from . import composition
from .effects import Out
from .firing import SWITCH_OFF_FILE
from .journal import time_of
from .memory import RunnerState
from .values import BY_COMMAND, Pause, Suspension, nominal_iso, pause_path, suspension_of


def take_pauses(memory: RunnerState, pauses: dict[str, Pause] | None) -> None:
    """The pause records as read (None: they could not be read, kept as last read)."""
    if pauses is not None:
        memory.pauses = pauses


def sync_suspensions(memory: RunnerState, now: int, out: Out) -> bool:
    """Say each schedule that became suspended or resumed since the last step. Whether the
    book's ``manifests.suspended`` changed."""
    jobs = memory.controller.state.jobs
    first, memory.suspensions_read = not memory.suspensions_read, True
    suspended: dict[str, dict[str, Any]] = {
        name: {"since": memory.suspended.get(name, {}).get("since", None if first else now), "reason": reason}
        for name, reason in memory.by_manifest.items() if name in jobs}
    for name in memory.pauses:
        if name not in jobs:
            out.notice(f"{pause_path(memory.folder, name)}: no schedule named {name!r}; the pause record is "
                       "ignored until a valid manifest defines it", "warning")
    before, memory.suspensions = memory.suspensions, {}
    for name in jobs:
        since = suspended.get(name, {}).get("since")
        found = suspension_of(memory.pauses.get(name), name in suspended, memory.by_manifest.get(name),
                              None if since is None else nominal_iso(since))
        if found is not None:
            memory.suspensions[name] = found
    if not first:
        for name, suspension in memory.suspensions.items():
            if before.get(name) != suspension:
                _say_suspended(name, suspension, out)
        for name, was in before.items():
            if name not in memory.suspensions and name in jobs:
                _say_resumed(memory, name, was, now, out)
    changed, memory.suspended = suspended != memory.suspended, suspended
    return changed


def _say_suspended(name: str, suspension: Suspension, out: Out) -> None:
    lifted = f"'cronctl resume {name}'" if suspension.by == BY_COMMAND else ""
    if suspension.manifest:
        lifted += f"{' and ' if lifted else ''}its manifest says spec.suspend: false"
    out.say("suspended", f"{name}: suspended {suspension.describe()}; no scheduled firing until {lifted} "
                         "(the time it is off counts no missed run)",
            "warning" if suspension.problem else "info", schedule=name, **suspension.to_json())


def _say_resumed(memory: RunnerState, name: str, was: Suspension, now: int, out: Out) -> None:
    job = memory.controller.state.jobs[name]
    start = window_start(job.spec, job.state.last_schedule, now, job.state.not_before)
    next_fire = job.spec.timeline().next_after(start)
    then = "it fires no more" if next_fire is None else f"next fire {time_of(memory, name, next_fire)}"
    out.say("resumed", f"{name}: resumed (it was suspended {was.describe()}); {then}", schedule=name,
            was=was.to_json(), next=None if next_fire is None else nominal_iso(next_fire))


def hold(memory: RunnerState, switched_off: bool, now: int, out: Out) -> None:
    """Name the schedules that fire nothing now (``holding``: the core's turn holds them); those
    no longer held take up their backfills at this step."""
    if switched_off != memory.switched_off:
        if switched_off:
            out.say("switch", f"the node switch is off ({SWITCH_OFF_FILE} exists): no schedule fires, manual "
                              "triggers included, and the time it is off counts no missed run", switch="off")
        elif memory.switched_off is not None:
            out.say("switch", "the node switch is on again: the schedules fire", switch="on")
        memory.switched_off = switched_off
    controller = memory.controller
    jobs = controller.state.jobs
    names = set(jobs) if switched_off else {n for n in (*memory.held, *memory.suspensions) if n in jobs}
    released, memory.holding = memory.holding - names, names
    for name in sorted(released & set(jobs)):
        composition.wake(memory, now, name)  # its backfill under way goes on at this step


def why_holding(memory: RunnerState, name: str) -> str:
    """Why a held schedule fires nothing."""
    if memory.switched_off:
        return f"the node switch is off ({SWITCH_OFF_FILE} exists)"
    if name in memory.held:
        return "its manifest is invalid"
    return "the schedule is suspended"
