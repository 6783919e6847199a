"""Runs the runner ends on its own: stopped (timed out by the core, replaced, retired) or dropped.

A run the core ended while its process runs is stopped (SIGTERM, then
SIGKILL after the grace); one with no process (waiting for a slot or for its
next attempt) only leaves, recorded with the core's outcome, never retried.
"""

from __future__ import annotations

from ..core.state import RETRY_PENDING, RUNNING, TIMED_OUT
from .effects import Out, Stop, line
from .firing import Firing
from .journal import entry, facts, remember
from .memory import RunnerState

STOPPED = "stopped"
CANCELED = "canceled"


def ask_stop(memory: RunnerState, firing: Firing, reason: str, out: Out) -> bool:
    """Stop the firing's process; its run is recorded once the process is gone."""
    firing.stopping = reason
    if reason == TIMED_OUT:
        job = memory.controller.state.jobs.get(firing.schedule)
        timeout = job.spec.options.timeout if job is not None else None
        why = f"timed out (timeoutMinutes {timeout})" if timeout else "timed out"
    elif firing.note:
        why = firing.note
    else:
        why = "replaced by a newer run (Replace)" if reason == STOPPED else reason
    said = line("timeout" if reason == TIMED_OUT else "stopping",
                f"{firing.schedule}: {firing.run_id} {why}: stopping it (SIGTERM, SIGKILL after "
                f"{memory.grace_seconds:g} s)", "warning", **facts(firing))
    out.add(Stop(firing.run_id, firing.schedule, firing.home, firing.key, reason, memory.grace_seconds, said))
    return True


def stop_or_drop(memory: RunnerState, firing: Firing, reason: str, now: int, out: Out) -> None:
    """A firing the core replaced: its process is stopped, or, with none, its run is over."""
    if firing.slot is None:  # not running (never started, or waiting for a retry): it only leaves
        memory.firings.pop(firing.run_id, None)
        remember(memory, firing.schedule, entry(firing, reason, now, firing.attempts_made))
        return
    memory.firings[firing.run_id] = firing  # keeps its slot until the process is gone
    ask_stop(memory, firing, reason, out)


def ended_by_core(memory: RunnerState, firing: Firing) -> str | None:
    """How the core ended a firing's run on its own: timed_out, or, when the run is gone
    (replaced), stopped if a process runs for it, else canceled; None while the run runs
    or waits for its next attempt."""
    run = memory.controller.state.runs.get(firing.run_id)
    if run is not None and run.state in (RUNNING, RETRY_PENDING):
        return None
    if timed_out(memory, firing):
        return TIMED_OUT
    return STOPPED if firing.slot is not None else CANCELED


def timed_out(memory: RunnerState, firing: Firing) -> bool:
    """Whether the core timed the firing's run out (also when the history limits dropped it since)."""
    run = memory.controller.state.runs.get(firing.run_id)
    return (run is not None and run.state == TIMED_OUT) or firing.run_id in memory.timed_out


def stop_expired(memory: RunnerState, out: Out) -> bool:
    """Runs the core timed out (launch + timeout) while their process runs: stop it."""
    stopped = False
    for firing in memory.firings.values():
        reason = ended_by_core(memory, firing) if firing.slot is not None and firing.stopping is None else None
        if reason is not None:
            stopped |= ask_stop(memory, firing, reason, out)
    return stopped


def drop_expired(memory: RunnerState, now: int) -> bool:
    """Runs the core ended while no process runs for them (waiting for a slot or for their
    next attempt): they leave, recorded with the core's outcome, never retried."""
    dropped = False
    for firing in [f for f in memory.firings.values() if f.slot is None]:
        reason = ended_by_core(memory, firing)
        if reason is not None:
            del memory.firings[firing.run_id]
            remember(memory, firing.schedule, entry(firing, reason, now, firing.attempts_made))
            dropped = True
    return dropped
