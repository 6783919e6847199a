"""How a job's active runs end at a tick, for a driver that sees them from outside: pure.

A driver that rebuilds its state from what it observes (the operator, from a
CronSchedule's status and its Jobs) knows of each active run when it started,
the outcome its worker reported, if any, and whether its worker is gone
(``RunSeen``). ``end_runs`` says which of them have ended by ``now``, in the
order they ended, and applies each end to the job's state:

- a run whose worker is gone (its Job deleted under it) failed at ``now``,
  and is not retried: nothing is left to retry;
- otherwise the reported outcome counts unless the timeout expired first
  (``tick.run_end``), by the driver's clock, or, for a first attempt whose
  worker measured its own elapsed time (``RunSeen.elapsed``), by that time:
  an attempt that ended on its own under its timeout is never timed out
  because its driver saw its end late (a stopped runner, a stepped clock);
- a failed attempt with attempts left does not end the run: it waits for
  its next attempt (``JobState.fail_attempt``), unless its timeout expires
  while it waits, when it ends timed out and is not retried;
- a run that ended leaves ``active``, and retention drops the oldest kept
  runs past the job's limits (``JobState.record_finish``).
"""

from __future__ import annotations

from operator import itemgetter
from typing import NamedTuple

from .retention import Finished
from .spec import Options
from .state import FAILED, RETRY_PENDING, JobState, PendingRetry
from .tick import run_end


class RunSeen(NamedTuple):
    """An active run as its driver observes it (a named tuple: the Controller makes one per end)."""

    run_id: str
    number: int
    attempt: int  # the attempt running (or the one that failed, before its next exists)
    started: int  # the minute it started (its timeout counts from it)
    reported: tuple[str, int] | None = None  # (outcome, minute) its worker reported for this attempt
    gone: bool = False  # its worker vanished (its Job deleted under it)
    held_until: int | None = None  # its worker waits, not started, until this second (its jitter's)
    # The seconds its worker measured the reported attempt ran, on its own monotonic clock (None: not
    # measured, or the driver stopped it): a first attempt under its timeout by it ended in time.
    elapsed: float | None = None


class RunEnd(NamedTuple):
    """What became of an active run at this tick: ``outcome`` is SUCCEEDED, FAILED or TIMED_OUT
    (it ended at ``at``; ``dropped`` are the finished runs retention lets go), or RETRY_PENDING
    (its attempt failed, and ``retry`` is the next one)."""

    run_id: str
    outcome: str
    at: int
    gone: bool = False
    retry: PendingRetry | None = None
    dropped: tuple[Finished, ...] = ()


_BY_END = itemgetter(0, 1)  # (minute, number): the oldest end first


def end_runs(state: JobState, seen: list[RunSeen], options: Options, now: int) -> list[RunEnd]:
    """The ends of the runs ``seen`` (the job's active ones) by ``now``, oldest end first, each
    applied to ``state``."""
    ending = [item for item in (_end_of(run, options, now) for run in seen) if item is not None]
    if len(ending) > 1:  # a Controller's end is one: nothing to order
        ending.sort(key=_BY_END)
    return _ends(state, ending, options, now)


def _end_of(run: RunSeen, options: Options, now: int) -> tuple[int, int, RunSeen, str] | None:
    end = (FAILED, now) if run.gone else run_end(run.started, options.timeout, run.reported, now,
                                                 own_time(run, options.timeout))
    return None if end is None else (end[1], run.number, run, end[0])


def _ends(state: JobState, ending: list[tuple[int, int, RunSeen, str]], options: Options,
          now: int) -> list[RunEnd]:
    """Each end, in order, applied to the state: a failed attempt with attempts left waits for the next."""
    ends = []
    for at, _, run, outcome in ending:
        pending = None
        if outcome == FAILED and not run.gone:
            pending = state.fail_attempt(run.run_id, run.number, run.attempt, at, options.retries,
                                         options.retry_delay)
        if pending is not None:
            expired = run_end(run.started, options.timeout, None, now)
            if expired is None:
                ends.append(RunEnd(run.run_id, RETRY_PENDING, at, retry=pending))
                continue
            state.forget_retry(run.run_id)  # timed out waiting for its next attempt: not retried
            outcome, at = expired
        dropped = state.record_finish(run.run_id, run.number, outcome, at, options.keep_succeeded,
                                      options.keep_failed)
        ends.append(RunEnd(run.run_id, outcome, at, run.gone, dropped=tuple(dropped)))
    return ends


def own_time(run: RunSeen, timeout: int | None) -> bool:
    """Whether the run's reported attempt ended within its timeout by its worker's own elapsed
    time: a first attempt only (the core's timeout counts the waits between attempts too)."""
    return (timeout is not None and run.reported is not None and run.attempt == 1 and run.elapsed is not None
            and run.elapsed < timeout * 60)


def ended_in_time(run: RunSeen, timeout: int | None, now: int) -> bool:
    """Whether the clock's timeout would end the run by ``now`` while its worker's own elapsed time
    says it ended within it: a driver then records that end before its clock moves past the expiry."""
    expired = timeout is not None and run.started + timeout <= now
    return expired and own_time(run, timeout)
