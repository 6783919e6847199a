"""What a decision does to a job's state: written once, for every driver.

``tick.decide`` says what to do for one job; ``apply_tick`` makes the changes
those decisions make to its ``JobState``, and says of each decision whether
it is news, that is whether a driver reports it (an Event, a history row, a
log line, a metric), or whether it repeats what an earlier tick decided.
The counting rules:

- a skipped schedule time is counted once, however many ticks skip it;
- an overflow is counted once each time the job goes into one (an outage);
  the outage ends with the first tick that launches a schedule time (the
  latest missed one, under CronJob's rule) or that finds no overflow, so the
  next outage is counted and reported again, whether or not the job was
  ticked in between.

How a run ends (its outcome, a retry, retention) is ``JobState.fail_attempt``
and ``JobState.record_finish``. The drivers keep their own records of runs
(the controller's ``Run``, the operator's Jobs, the runner's processes) and
carry out the effects; the changes here are the ones they all make alike.
"""

from __future__ import annotations

from typing import Callable, Iterable, NamedTuple

from .state import JobState, Queued
from .tick import Coalesce, Decision, Enqueue, Launch, Overflow, Replace, Retry, Skip

MANUAL = "manual"
BACKFILL = "backfill"  # core.backfill's runs: each for a past time, asked for by hand


class Applied(NamedTuple):
    decision: Decision
    news: bool = True  # False: a repeat of what an earlier tick decided, not to be reported again


def apply_tick(state: JobState, decisions: Iterable[Decision],
               key: Callable[[Launch], str] | None = None) -> list[Applied]:
    """The decisions of one tick of the job, applied in order.

    ``key`` names the run a launch creates where a driver does not name runs
    by ``Launch.run_id`` (the operator names them by their first Job).
    """
    overflowing = launched = False
    applied = []
    for decision in decisions:
        if type(decision) is Overflow:
            overflowing = True
        elif type(decision) is Launch and decision.reason not in (MANUAL, BACKFILL):
            launched = True
        run_key = key(decision) if key is not None and type(decision) is Launch else None
        applied.append(apply(state, decision, run_key))
    # Still in the outage only while nothing past it launched (a Forbid run still active, or
    # the seed's rule, which launches nothing past an overflow).
    state.overflowing = overflowing and not launched
    return applied


def apply(state: JobState, decision: Decision, run_key: str | None = None) -> Applied:
    """One decision (a tick's, or a manual launch) applied to the job's state."""
    if isinstance(decision, Skip):  # the most frequent: jobs left waiting skip at every tick
        return _skip(state, decision)
    if isinstance(decision, Launch):
        _launch(state, decision, decision.run_id if run_key is None else run_key)
    elif isinstance(decision, Enqueue):
        state.queue.append(Queued(decision.scheduled_for, decision.reason))
        _dealt_with(state, decision.scheduled_for)
    elif isinstance(decision, Coalesce):
        state.queue = [q for q in state.queue if q.nominal != decision.scheduled_for]
    elif isinstance(decision, Retry):
        state.forget_retry(decision.run_id)
    elif isinstance(decision, Replace):
        state.active.remove(decision.run_id)
        state.forget_retry(decision.run_id)
    elif isinstance(decision, Overflow):
        return _overflow(state, decision)
    return Applied(decision)


def adopt(state: JobState, number: int, nominal: int, reason: str) -> None:
    """A run the state learns of from its driver's record rather than from a decision (a Job
    made by a reconcile whose status write was lost): counted, and its time dealt with unless
    it was asked for by hand, as its launch would have done. A run the state counted already
    (its number at most ``launched``) changes nothing; adopt a driver's runs oldest first."""
    if reason not in (MANUAL, BACKFILL):
        if number > state.launched:
            state.scheduled_runs += 1
        _dealt_with(state, nominal)
    state.launched = max(state.launched, number)


def hold(state: JobState, now: int) -> bool:
    """A suspended job (or one on a node whose switch is off) counts no missed run: its window
    of missed times starts after ``now``. Whether that changed its state."""
    if state.not_before == now:
        return False
    state.not_before = now
    return True


def _skip(state: JobState, skip: Skip) -> Applied:
    if skip.scheduled_for == state.last_skipped:
        return Applied(skip, news=False)
    state.skipped += 1
    state.last_skipped = skip.scheduled_for
    return Applied(skip)


def _overflow(state: JobState, overflow: Overflow) -> Applied:
    if state.overflowing:
        return Applied(overflow, news=False)
    state.overflowed += 1
    state.overflowing = True
    return Applied(overflow)


def _launch(state: JobState, launch: Launch, run_key: str) -> None:
    state.active.append(run_key)
    state.launched = launch.number
    if launch.reason in (MANUAL, BACKFILL):  # a firing asked for by hand deals with no schedule time
        return
    state.scheduled_runs += 1
    if state.queue and state.queue[0].nominal == launch.scheduled_for:
        state.queue.pop(0)
    _dealt_with(state, launch.scheduled_for)


def _dealt_with(state: JobState, nominal: int) -> None:
    """The last schedule time dealt with never goes back."""
    state.last_schedule = nominal if state.last_schedule is None else max(nominal, state.last_schedule)
