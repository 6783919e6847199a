"""Which waiting firings start now, and on which worker slot.

A firing waits from its start time (nominal time plus jitter) until a slot is
free and, for a schedule of a CronPool (``spec.pool``), a worker of that pool
too; due firings take them in the dispatcher's order (nominal time, then
schedule name, then attempt, as seed 001 orders workers' work: the core's
``admitted_across``). A schedule whose pool is not in the folder waits for
it. The shell starts the process; a start it could not carry out gives the
slot back (``memory.start_refused``) and the firing waits for the next step.
"""

from __future__ import annotations

from .effects import Out, Start, line
from .expansion import expand_each, run_facts, run_variables
from .journal import facts, time_of
from .memory import RunnerState
from .slots import pool_missing, workers_busy
from .values import RunRequest, nominal_iso
from ..core.pool import admitted_across, seed_order


def start_waiting(memory: RunnerState, second: float, out: Out) -> bool:
    waiting = [f for f in memory.firings.values() if f.startable and f.start_at <= second]
    started = False
    chosen = admitted_across(memory.slots.free_count, pool_room(memory), waiting,
                             lambda f: seed_order(f.nominal, f.schedule, f.attempt),
                             lambda f: memory.pool_of.get(f.schedule))
    for firing in chosen:
        slot = memory.slots.acquire()
        if slot is None:  # not reached: admitted_across takes no more than the free slots
            break
        firing.slot = slot
        variables = run_variables(firing.env, run_facts(firing.schedule, nominal_iso(firing.nominal),
                                                        firing.reason, firing.attempt))
        request = RunRequest(firing.schedule, firing.nominal, expand_each(firing.command, variables),
                             expand_each(firing.args, variables), firing.env,
                             firing.reason, firing.attempt, cwd=firing.cwd or str(memory.run_folder),
                             active_deadline_seconds=firing.active_deadline_seconds,
                             backoff_limit=firing.backoff_limit)
        said = line("fired", f"{firing.schedule}: fired {firing.run_id} for "
                             f"{time_of(memory, firing.schedule, firing.nominal)} ({firing.reason}, attempt "
                             f"{firing.attempt}) on {slot}", **facts(firing), slot=slot)
        out.add(Start(firing.run_id, firing.home, request, said))
        started = True
    return started


def pool_room(memory: RunnerState) -> dict[str, int]:
    """Each CronPool's free workers: its workers less the runs of its schedules that run."""
    room = dict(memory.pools)
    for firing in memory.firings.values():
        pool = memory.pool_of.get(firing.schedule)
        if firing.slot is not None and pool in room:
            room[pool] -= 1
    return room


def waiting_reason(memory: RunnerState) -> str | None:
    """Why due firings wait (all workers busy; their pool's workers busy, or their pool
    missing), or None."""
    startable = [f for f in memory.firings.values() if f.startable]
    if startable and memory.slots.free_count == 0:
        return memory.slots.describe_wait()
    room = pool_room(memory)
    for pool in sorted({memory.pool_of[f.schedule] for f in startable if f.schedule in memory.pool_of}):
        if pool not in room:
            return f"queued: {pool_missing(pool)}"
        if room[pool] <= 0:
            return f"queued: {workers_busy(memory.pools[pool] - room[pool], memory.pools[pool], pool)}"
    return None
