"""What a runner takes over from the one before it: the book's firings and the runs still going.

Runs go on under detached wrappers when a runner stops or crashes; the next
one watches them again (``Executor.adopt``) and gives their firings their
worker slots back. A firing the book lost (an entry that did not read) is
rebuilt from its run's folder (``request.json``: the command it runs), or,
with no folder to rebuild it from, its run is canceled and recorded. A run
going that the book lost altogether (deleted, cut, moved aside) is an orphan
(:mod:`.orphans`): the step takes it back once its schedule is read. This is
the shell's part of loading a book (it reads run folders); the rules it
applies to the state are the step's.
"""

from __future__ import annotations

from ..core.state import RETRY_PENDING, RUNNING
from . import composition
from .effects import Out
from .files import read_json
from .firing import BACKFILL_DIR, Firing, origin_of
from .homes import Homes
from .journal import SCHEDULED, remember, unrun
from .launches import LOST_FIRING
from .memory import RunnerState
from .orphans import Orphan, orphan_of
from .stops import CANCELED
from .values import RunKey



def adopt(memory: RunnerState, homes: Homes, out: Out) -> None:
    """Watch the runs a runner before this one left, and give their firings their slots."""
    homes.adopt()
    for firing in memory.firings.values():
        if firing.slot is None:
            continue
        try:
            memory.slots.take(firing.slot)
        except ValueError as error:  # a book edited by hand: the firing queues for a slot again
            out.notice(f"{firing.run_id}: {error}; it takes a free slot again", "warning")
            firing.slot = None
    runs = memory.controller.state.runs
    for firing in memory.firings.values():
        if firing.run_id not in runs and firing.stopping is None:
            firing.note = "its run was not in the book's state (an entry left out)"
    with_firing = {firing.run_id for firing in memory.firings.values()}
    for run in [r for r in runs.values() if r.state in (RUNNING, RETRY_PENDING) and r.id not in with_firing]:
        _firing_from_folder(memory, homes, run.id)
    memory.orphans = _orphans(memory, homes)


def _orphans(memory: RunnerState, homes: Homes) -> list[Orphan]:
    """The runs going that no firing holds (the book lost them): the step takes them back. A run
    that ended meanwhile is not one: the next poll reports its end (recorded, or only acknowledged
    when the book recorded it before a crash)."""
    found = []
    for home, executor in homes.open():
        for handle in executor.active():
            if (handle.run_dir / "exit.json").exists():
                continue
            orphan = orphan_of(home, handle.key, handle.request, memory)
            if orphan is not None:
                found.append(orphan)
    return found


def _firing_from_folder(memory: RunnerState, homes: Homes, run_id: str) -> None:
    """A run the book has no firing for: rebuilt from its attempt's folder (the failed one's, for
    a run waiting for its next attempt), or, when it never had one, canceled."""
    run = memory.controller.state.runs[run_id]
    key = RunKey(run.job, run.scheduled_for, run.attempt)
    backfill = memory.controller.state.jobs[run.job].state.backfill
    home = None if backfill is None or backfill.running != run.id else f"{BACKFILL_DIR}/{backfill.request}"
    request = _request(homes, home, key)
    if request is None and run.state == RETRY_PENDING:
        home, ended = homes.ended(key)
        request = ended.request if ended is not None else None
    if isinstance(request, dict) and isinstance(request.get("command"), list):
        manual, of_backfill = origin_of(home)
        pending = next((p for p in memory.controller.state.jobs[run.job].state.pending_retries
                        if p.run_id == run.id), None)
        memory.firings[run.id] = Firing(run.id, run.job, run.scheduled_for, request.get("reason") or SCHEDULED,
                                       request["command"], request.get("args") or [], request.get("env") or {},
                                       start_at=run.scheduled_for * 60, attempt=run.attempt, manual=manual,
                                       backfill=of_backfill, cwd=request.get("cwd"),
                                       active_deadline_seconds=request.get("active_deadline_seconds"),
                                       backoff_limit=request.get("backoff_limit") or 0,
                                       retry_due=None if pending is None else pending.due)
        return
    composition.drop(memory, run.id)
    remember(memory, run.job, {**unrun(SCHEDULED, run.scheduled_for, CANCELED, run.launched_at, note=LOST_FIRING),
                              "run": run.id})


def _request(homes: Homes, home: str | None, key: RunKey) -> object:
    try:
        return read_json(homes.of(home).run_dir(key) / "request.json")
    except (OSError, ValueError):
        return None
