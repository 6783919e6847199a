"""The core's decisions of a tick, as the runner carries them out on its firings.

A launch becomes a firing that waits for a worker slot from its start time
(nominal time plus jitter); an enqueued time keeps the command of the moment
it became due (a snapshot), so an edit changes later firings only; a
coalesced time is a history row; a Forbid time held back waits for the
active run (:mod:`.forbid_waits`); a retry gives the firing its next
attempt; a replace stops the replaced run's process or cancels a run that
has none. Only decisions that are news are carried out: a repeat of an
earlier tick's (the same time held back again) was carried out then. An
overflow is said once and kept for ``cronctl status`` until the schedule
launches on time again.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from ..core.tick import Coalesce, Enqueue, Launch, Overflow, Replace, Retry, Skip, start_time
from ..core.transitions import BACKFILL, MANUAL, Applied
from ..core.zones import UTC
from . import composition, forbid_waits
from .effects import Out
from .firing import Firing, Overflowed
from .journal import SCHEDULED, remember, unrun, zone
from .memory import RunnerState
from .stops import CANCELED, STOPPED, stop_or_drop


def carry_out_turn(memory: RunnerState, applied: list[Applied], triggers: dict[str, list[str]], now: int,
                   out: Out) -> set[str]:
    """The one translator of the core's turn (``Controller.step``) into the runner's firings, history
    rows and lines, schedule by schedule (the controller gives each schedule's together): the tick's
    decisions, the backfill's runs, then the manual runs, each taking the next trigger of its
    schedule (``triggers``: their ids). The ids of the triggers that ran."""
    ran: set[str] = set()
    for schedule, group in groupby(applied, key=lambda item: item.decision.job):
        items = list(group)
        asked = iter(triggers.get(schedule, ()))
        for item in items:
            if not item.news:
                continue
            decision = item.decision
            manual = next(asked, None) if isinstance(decision, Launch) and decision.reason == MANUAL else None
            carry_out(memory, decision, now, out, manual)
            if manual is not None:
                ran.add(manual)
        keep_overflow(memory, schedule, items, now, out)
    forbid_waits.settle(memory, now, out)
    return ran


def keep_overflow(memory: RunnerState, schedule: str, items: list[Applied], now: int, out: Out) -> None:
    """Say an overflow once and keep it for status, with what its tick launched instead,
    until a later tick launches the schedule on time."""
    decisions = [item.decision for item in items]
    overflow = next((item for item in items if isinstance(item.decision, Overflow)), None)
    if overflow is None:
        if any(isinstance(d, Launch) and d.reason == SCHEDULED for d in decisions):
            memory.overflows.pop(schedule, None)
        return
    assert isinstance(overflow.decision, Overflow)
    note = Overflowed.of(now, overflow.decision, decisions)
    if overflow.news:
        memory.overflows[schedule] = note.to_json()
        out.say("overflow", f"{schedule}: {note.describe(zone(memory, schedule) or UTC)}", "warning",
                schedule=schedule, limit=note.limit, dropped=note.dropped)
    elif schedule in memory.overflows and (note.launched or note.queued):
        # The same overflow goes on, and this tick launches (the run that kept it waiting ended).
        memory.overflows[schedule].update(launched=note.launched, queued=note.queued, skipped=None)


LOST_FIRING = "its firing was not in the book (an entry left out)"


def carry_out(memory: RunnerState, decision: object, now: int, out: Out, manual: str | None = None) -> None:
    if isinstance(decision, (Launch, Enqueue)):
        forbid_waits.started(memory, decision, now, out)
    if isinstance(decision, Launch):
        launch(memory, decision, now, manual)
    elif isinstance(decision, Enqueue):
        command = command_of(memory, decision.job)
        if command is not None:
            memory.snapshots[snapshot_key(decision.job, decision.scheduled_for)] = command
    elif isinstance(decision, Coalesce):
        memory.snapshots.pop(snapshot_key(decision.job, decision.scheduled_for), None)
        remember(memory, decision.job, unrun(SCHEDULED, decision.scheduled_for, "coalesced", now))
    elif isinstance(decision, Retry):
        retry(memory, decision, now)
    elif isinstance(decision, Replace):
        replaced = memory.firings.pop(decision.run_id, None)
        if replaced is not None:  # its process, if it has one, is stopped; else it is canceled
            stop_or_drop(memory, replaced, STOPPED if replaced.slot is not None else CANCELED, now, out)
    elif isinstance(decision, Skip):  # it waits for the active run (forbid_waits)
        forbid_waits.wait(memory, decision, now, out)


def launch(memory: RunnerState, decision: Launch, now: int, manual: str | None = None) -> None:
    """A firing for the launch, with the command of the moment its time became due."""
    backfill = backfill_of(memory, decision)
    command = None if backfill is not None else \
        memory.snapshots.pop(snapshot_key(decision.job, decision.scheduled_for), None)
    if command is None:
        command = command_of(memory, decision.job)
    if command is None:  # held invalid since before a restart: nothing to run it with
        composition.drop(memory, decision.run_id)
        remember(memory, decision.job, {**unrun(decision.reason, decision.scheduled_for, CANCELED, now),
                                       "run": decision.run_id, "note": "no valid manifest to run it with"})
        return
    command.pop("reason", None)  # a book written before launches carried their reason has it here
    firing = Firing(decision.run_id, decision.job, decision.scheduled_for, decision.reason, **command,
                    manual=manual, backfill=backfill)
    firing.start_at = start_time(memory.controller.state.jobs[decision.job].spec, decision)
    memory.firings[decision.run_id] = firing


def retry(memory: RunnerState, decision: Retry, now: int) -> None:
    """The core retries a run: its firing takes the next attempt and waits for a slot. A run
    with no firing (lost with a book entry that did not read, and no folder to rebuild it
    from) cannot be retried: it leaves, recorded."""
    firing = memory.firings.get(decision.run_id)
    if firing is not None:
        firing.attempt, firing.retry_due = decision.attempt, None
        return
    run = memory.controller.state.runs[decision.run_id]
    composition.drop(memory, run.id)
    remember(memory, run.job, {**unrun(SCHEDULED, run.scheduled_for, CANCELED, now, note=LOST_FIRING),
                              "run": run.id, "attempts": decision.attempt - 1})


def backfill_of(memory: RunnerState, decision: Launch) -> str | None:
    """The request of the backfill a launch is a run of (None: not a backfill's)."""
    if decision.reason != BACKFILL:
        return None
    backfill = memory.controller.state.jobs[decision.job].state.backfill
    return backfill.request if backfill is not None else decision.run_id


def command_of(memory: RunnerState, schedule: str) -> dict[str, Any] | None:
    """What a run of the schedule runs now: its manifest's command, args, env, workingDir, deadline."""
    definition = memory.definitions.get(schedule)
    if definition is None:
        return None
    command: dict[str, Any] = {"command": list(definition.command), "args": list(definition.args),
                               "env": dict(definition.env)}
    if definition.working_dir is not None:
        command["cwd"] = str(memory.run_folder / definition.working_dir)  # an absolute one stays as it is
    if definition.active_deadline_seconds is not None:
        command["active_deadline_seconds"] = definition.active_deadline_seconds
    job = memory.controller.state.jobs.get(schedule)
    if definition.backoff_limit and job is not None and not job.spec.options.retries:
        # With maxRetries each attempt is tried once, as the operator's Jobs are (backoffLimit 0).
        command["backoff_limit"] = definition.backoff_limit
    return command


def snapshot_key(schedule: str, nominal: int) -> str:
    return f"{schedule}@{nominal}"
