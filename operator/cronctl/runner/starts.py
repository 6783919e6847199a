"""Which waiting firings start now, and on which worker slot.

A firing waits from its start time (nominal time plus jitter) until a slot is
free; due firings take the free slots in the dispatcher's order (nominal
time, then schedule name, as seed 001 orders workers' work). The shell starts
the process; a start it could not carry out gives the slot back
(``memory.start_refused``) and the firing waits for the next step.
"""

from __future__ import annotations

from .effects import Out, Start, line
from .executor import RunRequest
from .journal import facts, time_of
from .memory import RunnerState
from .slots import order_due


def start_waiting(state: RunnerState, second: float, out: Out) -> bool:
    waiting = [f for f in state.firings.values() if f.startable and f.start_at <= second]
    started = False
    for firing in order_due(waiting, nominal=lambda f: f.nominal, schedule=lambda f: f.schedule):
        slot = state.slots.acquire()
        if slot is None:
            break
        firing.slot = slot
        request = RunRequest(firing.schedule, firing.nominal, firing.command, firing.args, firing.env,
                             firing.reason, firing.attempt, cwd=firing.cwd or str(state.run_folder),
                             active_deadline_seconds=firing.active_deadline_seconds,
                             backoff_limit=firing.backoff_limit)
        said = line("fired", f"{firing.schedule}: fired {firing.run_id} for "
                             f"{time_of(state, firing.schedule, firing.nominal)} ({firing.reason}, attempt "
                             f"{firing.attempt}) on {slot}", **facts(firing), slot=slot)
        out.add(Start(firing.run_id, firing.home, request, said))
        started = True
    return started


def waiting_reason(state: RunnerState) -> str | None:
    """Why due firings wait (all workers busy), or None."""
    if any(f.startable for f in state.firings.values()) and state.slots.free_count == 0:
        return state.slots.describe_wait()
    return None
