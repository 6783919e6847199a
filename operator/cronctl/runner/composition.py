"""The runner's one door to the core's ``Controller``: every call the runner makes on it.

The Controller keeps the runner's schedules and runs in memory and gives each
due schedule its turn through the core's one composition
(``core.reconcile.turn``, the runs' ends through ``core.reconcile.ends``).
The step's modules read its records (``memory.controller.state``) freely, but
change them only through the calls below, so what the runner asks of the core
is in one place: a test in tests/test_drivers_agree.py fails if another runner
module calls a Controller method.
"""

from __future__ import annotations

from typing import Collection, Mapping, Sequence

from ..core.controller import WorkerEnd
from ..core.spec import JobSpec
from ..core.state import Backfill, Job, Run
from ..core.transitions import Applied
from .memory import RunnerState


def move_clock(memory: RunnerState, now: int) -> list[str]:
    """The core's clock moves to ``now``: the runs whose timeout came by then end timed out
    (their ids, returned, the runs the clock's last move timed out)."""
    memory.controller.advance(now)
    return memory.controller.expired


def take_turn(memory: RunnerState, now: int, ends: Sequence[WorkerEnd], holding: Collection[str],
              triggers: Mapping[str, int]) -> list[Applied]:
    """The step of the core (``Controller.step``): the ``ends`` the wrappers reported first, then
    each due schedule's turn: the hold, the tick, the backfill's next runs, the manual runs
    ``triggers`` asks for; its decisions, applied, each saying if it is news. What became of the
    ends is ``memory.controller.ended``, the schedules their failures paused ``.paused``."""
    return memory.controller.step(now, holding=holding, triggers=triggers, ends=ends)


def finish(memory: RunnerState, at: int, run_id: str, outcome: str, attempt: int) -> Run:
    """The end of the run's running attempt, as its wrapper reported it (which may say
    ``timed_out``: the wrapper times ``timeoutMinutes`` on its own clock)."""
    return memory.controller.finish(at, run_id, outcome, attempt, timed_by_worker=True)


def drop(memory: RunnerState, run_id: str) -> None:
    """A run the runner cannot carry out leaves, as a replaced one does."""
    memory.controller.drop(run_id)


def adopt(memory: RunnerState, now: int, name: str, nominal: int, reason: str, attempt: int) -> Run:
    """A run found going with no record of it: active again under the schedule's next number."""
    return memory.controller.adopt_run(now, name, nominal, reason, attempt)


def wake(memory: RunnerState, now: int, name: str) -> None:
    """A schedule's hold ended: it is looked at in this turn (its backfill goes on)."""
    memory.controller.wake(now, name)


def begin_backfill(memory: RunnerState, now: int, name: str, start: int, end: int, request: str) -> Backfill:
    """A backfill of the schedule's times in [start, end]; BackfillError if refused."""
    return memory.controller.backfill(now, name, start, end, request)


def add_schedule(memory: RunnerState, spec: JobSpec, launched: int) -> None:
    """A new schedule, whose run numbers follow ``launched`` (a run id is never reused)."""
    memory.controller.add_job(spec, launched=launched)


def edit_schedule(memory: RunnerState, spec: JobSpec) -> bool:
    """The schedule's manifest changed; whether the core's spec did."""
    return memory.controller.edit(spec)


def retire_schedule(memory: RunnerState, name: str) -> Job:
    """The schedule's manifest is gone: it leaves the core; its job, as it was."""
    return memory.controller.retire(name)
