"""How a job's active runs end at a tick, for a driver that sees them from outside: pure.

A driver that rebuilds its state from what it observes (the operator, from a
CronSchedule's status and its Jobs) knows of each active run when it started,
the outcome its worker reported, if any, and whether its worker is gone
(``RunSeen``). ``end_runs`` says which of them have ended by ``now``, in the
order they ended, and applies each end to the job's state:

- a run whose worker is gone (its Job deleted under it) failed at ``now``,
  and is not retried: nothing is left to retry;
- otherwise the reported outcome counts unless the timeout expired first
  (``tick.run_end``);
- a failed attempt with attempts left does not end the run: it waits for
  its next attempt (``JobState.fail_attempt``), unless its timeout expires
  while it waits, when it ends timed out and is not retried;
- a run that ended leaves ``active``, and retention drops the oldest kept
  runs past the job's limits (``JobState.record_finish``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .retention import Finished
from .spec import Options
from .state import FAILED, RETRY_PENDING, JobState, PendingRetry
from .tick import run_end


@dataclass(frozen=True)
class RunSeen:
    """An active run as its driver observes it."""

    run_id: str
    number: int
    attempt: int  # the attempt running (or the one that failed, before its next exists)
    started: int  # the minute it started (its timeout counts from it)
    reported: tuple[str, int] | None = None  # (outcome, minute) its worker reported for this attempt
    gone: bool = False  # its worker vanished (its Job deleted under it)
    held_until: int | None = None  # its worker waits, not started, until this second (its jitter's)


@dataclass(frozen=True)
class RunEnd:
    """What became of an active run at this tick: ``outcome`` is SUCCEEDED, FAILED or TIMED_OUT
    (it ended at ``at``; ``dropped`` are the finished runs retention lets go), or RETRY_PENDING
    (its attempt failed, and ``retry`` is the next one)."""

    run_id: str
    outcome: str
    at: int
    gone: bool = False
    retry: PendingRetry | None = None
    dropped: tuple[Finished, ...] = ()


def end_runs(state: JobState, seen: list[RunSeen], options: Options, now: int) -> list[RunEnd]:
    """The ends of the runs ``seen`` (the job's active ones) by ``now``, oldest end first, each
    applied to ``state``."""
    ending = []
    for run in seen:
        end = (FAILED, now) if run.gone else run_end(run.started, options.timeout, run.reported, now)
        if end is not None:
            ending.append((end[1], run.number, run, end[0]))
    ends = []
    for at, _, run, outcome in sorted(ending, key=lambda item: (item[0], item[1])):
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
