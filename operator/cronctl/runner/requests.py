"""Manual triggers and backfill requests, as the step takes them from the folder.

A trigger file (``cronctl trigger``) is a manual firing, whatever the
policy, or a history row saying why not (the node switch is off, the manifest
is invalid). A backfill request (``cronctl backfill``) is handed to the core
(``Controller.backfill``), which may refuse it. A file that asks for nothing,
or for a schedule there is not, is moved aside and said. A consumed file is
deleted once the book that records it is saved (``RunnerState.taken``), so a
crash in between takes it again, and the book then knows it (by the file's
identity: its name and modification time).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.backfill import BackfillError, finished
from . import composition
from .effects import Out, SetAside
from .firing import SWITCH_OFF_FILE
from .holds import why_holding
from .journal import MANUAL, remember, time_of, unrun
from .memory import RunnerState
from .values import Request, nominal_iso


@dataclass(frozen=True)
class TriggerFile:
    path: Path
    id: str  # the trigger's identity (``intake.trigger_id``)
    schedule: str | None  # None: not a trigger, ``why``
    why: str | None = None


@dataclass(frozen=True)
class RequestFile:
    path: Path
    id: str  # the request's identity (``backfills.request_id``)
    asked: Request | None  # None: not a request, ``why``
    why: str | None = None


def take_backfills(state: RunnerState, requests: list[RequestFile], now: int, out: Out) -> bool:
    """The backfill requests, each taken in order (before the tick, which launches their first
    runs); whether any was."""
    return any([_take_backfill(state, request, now, out) for request in requests])


def asked_triggers(state: RunnerState, triggers: list[TriggerFile]) -> dict[str, list[str]]:
    """The manual runs the trigger files ask of the core's turn (``Controller.step``), by
    schedule: the trigger ids, in order. A file read before a crash, one of no schedule and one
    that may not run (the switch is off, the manifest invalid) asks none."""
    asked: dict[str, list[str]] = {}
    for trigger in triggers:
        name = trigger.schedule
        if name is not None and name in state.controller.state.jobs and not _trigger_known(state, trigger.id) \
                and _why_not(state, name) is None:
            asked.setdefault(name, []).append(trigger.id)
    return asked


def take_triggers(state: RunnerState, triggers: list[TriggerFile], ran: set[str], now: int, out: Out) -> bool:
    """The trigger files, each taken in order once the turn ran the manual runs they asked
    (``ran``: their ids), as ``core.reconcile.turn`` orders them; whether any was."""
    return any([_take_trigger(state, trigger, trigger.id in ran, now, out) for trigger in triggers])


def _take_trigger(state: RunnerState, trigger: TriggerFile, ran: bool, now: int, out: Out) -> bool:
    name = trigger.schedule
    if name is None:
        return _set_aside(trigger.path, trigger.why or "not a trigger", out)
    if ran or _trigger_known(state, trigger.id):  # run now, or consumed before a crash: only delete it
        state.taken[str(trigger.path)] = trigger.path
        return True
    if name not in state.controller.state.jobs:
        return _set_aside(trigger.path, _no_schedule(state, name), out)
    why_not = _why_not(state, name) or "the schedule did not take it"
    remember(state, name, unrun(MANUAL, now, "canceled", now, note=why_not, trigger=trigger.id))
    out.say("canceled", f"{name}: manual trigger {trigger.path.name} not run: {why_not}", "warning",
            schedule=name, firing=MANUAL, outcome="canceled", trigger=trigger.id)
    state.taken[str(trigger.path)] = trigger.path
    return True


def _why_not(state: RunnerState, name: str) -> str | None:
    """Why a manual run of the schedule may not run (None: it may, suspended or not)."""
    if state.switched_off:
        return f"the node switch is off ({SWITCH_OFF_FILE} exists)"
    return f"its manifest is invalid: {state.held[name]}" if name in state.held else None


def _trigger_known(state: RunnerState, manual: str) -> bool:
    return any(f.manual == manual for f in state.firings.values()) or any(
        row.get("trigger") == manual for rows in state.journal.values() for row in rows)


def _no_schedule(state: RunnerState, name: str) -> str:
    bad = next((row["message"] for row in state.invalid if row["schedule"] == name), None)
    return f"no schedule named {name!r}" if bad is None else f"the manifest of {name!r} is invalid: {bad}"


def _set_aside(path: Path, why: str, out: Out, suffix: str = ".broken") -> bool:
    out.add(SetAside(path, why, suffix))
    return False


def _take_backfill(state: RunnerState, request: RequestFile, now: int, out: Out) -> bool:
    """One request file: a backfill handed to the core, which may refuse it."""
    asked = request.asked
    if asked is None:
        return _set_aside(request.path, request.why or "not a backfill request", out)
    name = asked.schedule
    job = state.controller.state.jobs.get(name)
    if job is None:
        return _set_aside(request.path, _no_schedule(state, name), out)
    if _backfill_known(state, name, request.id):  # the book saved has it: only delete it
        state.taken[str(request.path)] = request.path
        return True
    before = job.state.backfill
    try:
        begun = composition.begin_backfill(state, now, name, asked.start, asked.end, request.id)
    except BackfillError as error:
        return _set_aside(request.path, f"backfill of {name} refused: {error.message}", out, ".refused")
    state.taken[str(request.path)] = request.path
    replaced = before if before is not None and not finished(before, job.state.active) else None
    said = f"; it replaces backfill {replaced.request} ({replaced.launched}/{replaced.total} launched)" \
        if replaced is not None else ""
    if name in state.holding and not begun.done:
        said += f"; its runs wait: {why_holding(state, name)}"
    state.backfills_said[name] = (request.id, False)
    out.say("backfill", f"{name}: backfill {request.id} of {begun.total} schedule "
                        f"time{'' if begun.total == 1 else 's'} from {time_of(state, name, begun.start)} to "
                        f"{time_of(state, name, begun.end)}, oldest first, one at a time{said}",
            schedule=name, backfill=request.id, state="started", total=begun.total,
            start=nominal_iso(begun.start), end=nominal_iso(begun.end),
            replaces=None if replaced is None else replaced.request)
    return True


def _backfill_known(state: RunnerState, name: str, request: str) -> bool:
    """Whether the book has the backfill of this request already (consumed before a crash)."""
    job = state.controller.state.jobs[name]
    return (job.state.backfill is not None and job.state.backfill.request == request) or any(
        f.backfill == request for f in state.firings.values()) or any(
        row.get("backfill") == request for row in state.journal.get(name, []))


def backfills_now(state: RunnerState) -> dict[str, tuple[str, bool]]:
    """Each schedule's backfill: (request, finished)."""
    return {name: (job.state.backfill.request, finished(job.state.backfill, job.state.active))
            for name, job in state.controller.state.jobs.items() if job.state.backfill is not None}


def say_backfills(state: RunnerState, out: Out) -> None:
    """One line for each backfill that completed since the last step."""
    now = backfills_now(state)
    for name, (request, finished) in now.items():
        if finished and state.backfills_said.get(name) != (request, True):
            backfill = state.controller.state.jobs[name].state.backfill
            assert backfill is not None
            out.say("backfill", f"{name}: backfill {request} complete: {backfill.launched} of {backfill.total} "
                                f"schedule time{'' if backfill.total == 1 else 's'} from "
                                f"{time_of(state, name, backfill.start)} to {time_of(state, name, backfill.end)} "
                                "launched", schedule=name, backfill=request, state="complete",
                    total=backfill.total, launched=backfill.launched)
    state.backfills_said = now
