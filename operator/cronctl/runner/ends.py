"""How the runner records the end of an attempt its executor reported.

What is read before the turn (``worker_ends``: each report with the firing
whose attempt it ends, and the ends the core is handed) and what is
translated after it (``record_ends``). The core applies the ends first in its
step (``Controller.step``, through ``core.reconcile.ends``), before any turn,
and retries a failed one with retries left: the firing then waits, without a
slot, for the minute of its next attempt. Otherwise the run is over: one
history row with its outcome (the core's ``timed_out`` when its timeout came
first), the exit code or signal of its last attempt, and the executor's note
on a run that did not start or was lost. The end is acknowledged to the
executor only once the book that records it is saved.

A run's timeout is its own elapsed time, as the wrapper measured it on the
monotonic clock: an attempt that ended on its own within it is recorded
before the clock moves (``record_ends_in_time``), so neither a stopped runner
that sees the end late nor a step of the clock makes it ``timed_out``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..core.endings import RunSeen
from ..core.endings import ended_in_time as core_ended_in_time
from ..core.controller import WorkerEnd
from ..core.endings import RunEnd
from ..core.state import FAILED, RETRY_PENDING, RUNNING, SUCCEEDED, TIMED_OUT
from . import composition
from .effects import Out
from .firing import Firing
from .journal import end_facts, entry, facts, how, remember, time_of
from .memory import RunnerState
from .stops import timed_out
from .values import Ended, RunKey, nominal_iso


@dataclass(frozen=True)
class Report:
    """An attempt's end as an executor reported it (``home``: its folder, None for scheduled runs').
    ``acknowledge`` False: reported before, found again for a firing started after a restart."""

    home: str | None
    end: Ended
    acknowledge: bool = True


class Taken(NamedTuple):
    """A report read before the turn, and the firing whose current attempt it ends (None: none)."""

    report: Report
    firing: Firing | None


def worker_ends(memory: RunnerState, reports: list[Report]) -> tuple[list[Taken], list[WorkerEnd]]:
    """The reports, each with its firing, and the ends the core's step is handed (the wrapper
    reports ``timed_out`` when it timed the run on its own clock)."""
    taken = [Taken(report, running_firing(memory, report.home, report.end.key)) for report in reports]
    return taken, [WorkerEnd(item.firing.run_id, item.firing.attempt, verdict(item.report.end.outcome))
                   for item in taken if item.firing is not None]


def record_ends(memory: RunnerState, taken: list[Taken], ended: list[RunEnd], now: int, out: Out) -> bool:
    """After the core's step applied the ends (``ended``: what became of each it had running): each
    firing waits for its next attempt or its run is over; each report is acknowledged once saved."""
    retries = {end.run_id: end.retry.due for end in ended if end.retry is not None}
    for report, firing in taken:
        if firing is not None:
            end_attempt(memory, firing, report.end, now, out, retries.get(firing.run_id))
        if report.acknowledge:
            memory.to_acknowledge.append((report.home, report.end.key))
    return bool(taken)


def verdict(outcome: str) -> str:
    """The outcome the core is told: the wrapper's ``timed_out`` (it timed the run), else
    succeeded or failed (a run that did not start, or was lost, failed)."""
    return outcome if outcome in (SUCCEEDED, TIMED_OUT) else FAILED


def record_ends_in_time(memory: RunnerState, reports: list[Report], now: int, out: Out) -> list[Report]:
    """Record, at the core's last time, the ends the core would time out at ``now`` although their
    attempt ended on its own within its timeout by its own elapsed time; the other reports, left."""
    left: list[Report] = []
    for report in reports:
        firing = running_firing(memory, report.home, report.end.key)
        if firing is None or not ended_in_time(memory, firing, report.end, now):
            left.append(report)
            continue
        at = memory.controller.state.clock or now
        end_attempt(memory, firing, report.end, at, out, finish_attempt(memory, firing, report.end.outcome, at))
        if report.acknowledge:
            memory.to_acknowledge.append((report.home, report.end.key))
    return left


def ended_in_time(memory: RunnerState, firing: Firing, end: Ended, now: int) -> bool:
    """Whether the core's rule (``core.endings.ended_in_time``) says the firing's attempt ended within
    its timeout by its own elapsed time, which the clock would time out at ``now``. The runner's facts:
    the attempt the core knows running, the wrapper's elapsed time, none when the runner stopped it
    (its end was not its own)."""
    controller = memory.controller
    run = controller.state.runs.get(firing.run_id)
    job = controller.state.jobs.get(firing.schedule)
    if run is None or job is None or run.state != RUNNING or run.attempt != firing.attempt \
            or controller.state.clock is None:
        return False
    elapsed = end.elapsed_seconds if firing.stopping is None else None
    seen = RunSeen(run.id, run.number, run.attempt, run.launched_at, (end.outcome, now), elapsed=elapsed)
    return core_ended_in_time(seen, job.spec.options.timeout, now)


def running_firing(memory: RunnerState, home: str | None, key: RunKey) -> Firing | None:
    """The firing whose current attempt is ``key`` in that executor's folder; None for an end
    recorded before (reported again after a restart: the book already moved on) or of a run
    the book does not know."""
    return next((f for f in memory.firings.values()
                 if f.home == home and f.key == key and f.retry_due is None), None)


def end_attempt(memory: RunnerState, firing: Firing, end: Ended, now: int, out: Out, retry_due: int | None) -> None:
    """An attempt ended: the firing waits for its next attempt (at ``retry_due``, the core's),
    or its run is over."""
    if firing.slot is not None:  # None: the restarted runner had not started it again yet
        memory.slots.release(firing.slot)
        firing.slot = None
    firing.actual = firing.actual or end.started_at
    said = how(end)
    if retry_due is not None:
        firing.retry_due = retry_due
        attempts = attempts_of(memory, firing.schedule, firing.attempt + 1)
        out.say("retry", f"{firing.schedule}: {firing.run_id} attempt {firing.attempt}/{attempts} failed ({said}); "
                         f"attempt {firing.attempt + 1}/{attempts} at {time_of(memory, firing.schedule, retry_due)}",
                "warning", **facts(firing), outcome=FAILED, **end_facts(end), retry_at=nominal_iso(retry_due))
        return
    del memory.firings[firing.run_id]
    outcome = end.outcome
    if timed_out(memory, firing):  # the core's verdict: its timeout came first
        outcome = TIMED_OUT
    row = entry(firing, outcome, now, firing.attempt)
    row.update(exit_code=end.exit_code, signal=end.signal)  # of its last attempt
    if end.note and not firing.note:
        row["note"] = end.note  # why it did not start, or was lost
    remember(memory, firing.schedule, row)
    note = f"; {firing.note}" if firing.note else ""
    out.say("ended", f"{firing.schedule}: {firing.run_id} {outcome} ({said}){note}",
            "info" if outcome == SUCCEEDED else "warning", **facts(firing), outcome=outcome, **end_facts(end))


def finish_attempt(memory: RunnerState, firing: Firing, outcome: str, now: int) -> int | None:
    """Tell the core how the firing's running attempt ended; the minute of its next
    attempt when the core retries it, else None (the run is over)."""
    controller = memory.controller
    run = controller.state.runs.get(firing.run_id)
    if run is None or run.state != RUNNING or run.attempt != firing.attempt:
        return None  # the core ended it already (timed out, replaced)
    composition.finish(memory, max(now, controller.state.clock or now), run.id, verdict(outcome), run.attempt)
    if run.state != RETRY_PENDING:
        return None
    pending = controller.state.jobs[run.job].state.pending_retries
    return next(p.due for p in pending if p.run_id == run.id)


def attempts_of(memory: RunnerState, schedule: str, at_least: int) -> int:
    job = memory.controller.state.jobs.get(schedule)
    return max(at_least, job.spec.options.retries + 1 if job is not None else at_least)
