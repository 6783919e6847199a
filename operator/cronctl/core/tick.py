"""What to do for one job on one tick: a pure function that returns decisions.

The drivers (the in-memory controller, the operator, the single-node runner)
apply the decisions; none of them decides anything itself. As in the
Kubernetes CronJob controller, at most one run is launched per tick, for the
most recent missed schedule time; unlike it, the missed times are counted
with arithmetic, never enumerated, and a job's next tick starts from what
its previous one counted (``Missed``), so a job that waits costs no search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Union

from .every import actual_time, effective_jitter
from .schedule import Timeline
from .spec import CATCH_UP_ALL, MAX_MISSED, PAST_LIMIT_HOLD, JobSpec, Policy
from .state import TIMED_OUT, JobState, Queued, Run


@dataclass(frozen=True)
class Launch:
    job: str
    run_id: str
    number: int
    scheduled_for: int
    # scheduled (for the very minute it is decided at), catch-up (for a time already past),
    # or manual (asked for by hand, at its own nominal time)
    reason: str = "scheduled"


@dataclass(frozen=True)
class Skip:
    job: str
    scheduled_for: int
    reason: str = "forbid"


@dataclass(frozen=True)
class Replace:
    job: str
    run_id: str


@dataclass(frozen=True)
class Overflow:
    """More missed schedule times than the job's limit (``Options.missed_limit``).

    Under the seed's rule (``PAST_LIMIT_HOLD``, the harness's) nothing else is
    decided for the job. Otherwise (CronJob's rule) the newest missed times
    still go through the policy in the same tick: the most recent one, or
    under catch-up "all" the newest ``limit`` of them, ``dropped`` older ones
    being given up.
    """

    job: str
    missed: int  # a lower bound (counting stops at limit + 1) unless ``dropped`` is counted
    limit: int = MAX_MISSED
    launches: bool = False  # whether the newest missed times still go through the policy
    dropped: int = 0  # catch-up "all" past the limit: the older missed times given up


@dataclass(frozen=True)
class Retry:
    """Start the next attempt of a run whose previous attempt failed."""

    job: str
    run_id: str
    attempt: int


@dataclass(frozen=True)
class Enqueue:
    """A firing waits for the active run to end (wait-for-last); its time is dealt with."""

    job: str
    scheduled_for: int
    reason: str


@dataclass(frozen=True)
class Coalesce:
    """A waiting scheduled firing gave its place to a newer one."""

    job: str
    scheduled_for: int


Decision = Union[Launch, Skip, Replace, Overflow, Retry, Enqueue, Coalesce]


class Missed(NamedTuple):
    """The missed schedule times in (start, through]: how many (counted up to
    the job's limit + 1) and the latest of them (None when none or too many).

    A later window with exactly the same times is described by the same
    object (see count_missed), so start and through are where it was counted.
    A named tuple, not a frozen dataclass: one or two are made at every
    decision, and a frozen dataclass costs 4x as much to make (Part 5 (a)).
    """

    start: int
    through: int
    total: int  # how many: tuple's own ``count`` is a method
    latest: int | None
    upcoming: int | None  # the first schedule time after ``through``: nothing to count before it
    # The first of them (None when there are none, or too many to have looked): while a later
    # window starts before it, that window lost none of them.
    earliest: int | None = None


class JobTick(NamedTuple):
    decisions: tuple[Decision, ...]
    # The earliest time at which this job can next have a missed schedule:
    # a tick before it needs not look at the job. None: never again.
    wake_at: int | None
    # What was counted (after a launch: the empty window it leaves), so that
    # the job's next tick only counts the minutes since.
    missed: Missed | None = None
    # A job left waiting (a skip or an overflow) gets these very decisions again
    # at every tick before ``holds_until`` (None: at every tick) as long as its
    # state does not change: no schedule time enters or leaves its window before.
    waiting: bool = False
    holds_until: int | None = None

    def holds(self, now: int) -> bool:
        """Whether a tick at ``now``, with the job's state unchanged, repeats these decisions."""
        return self.waiting and (self.holds_until is None or now < self.holds_until)


def run_id(job: str, number: int) -> str:
    return f"{job}-{number}"


def window_start(spec: JobSpec, last_schedule: int | None, now: int, not_before: int | None = None) -> int:
    """Missed schedule times are those in (window_start, now]."""
    start = spec.created_at if last_schedule is None else last_schedule
    if not_before is not None:
        start = max(start, not_before)
    deadline = spec.options.starting_deadline
    if deadline is not None:
        start = max(start, now - deadline - 1)  # t >= now - deadline, inclusive
    return start


def count_missed(timeline: Timeline, start: int, now: int, known: Missed | None = None,
                 limit: int = MAX_MISSED) -> Missed:
    """The schedule times in (start, now], from what ``known`` counted when it can.

    ``known`` is what the job's previous tick counted. When it holds exactly
    the times of (start, now] (none came in since, none dropped out at the
    start) it is returned as it is, and a job left waiting costs no search;
    when it lost none of its times, only the new ones are counted. Counting
    stops at ``limit`` + 1: more than ``limit`` is an overflow.
    """
    if known is not None and known.through <= now and known.start <= start:
        if _same_times(known, start, now, limit):
            return known
        if _kept_all(known, start):
            return _add_new_times(timeline, known, start, now, limit)
    count = timeline.count_in(start, now, limit + 1)
    latest = earliest = None
    if 0 < count <= limit:
        latest = timeline.latest_in(start, now)
        earliest = latest if count == 1 else timeline.next_after(start)
    return Missed(start, now, count, latest, timeline.next_after(now), earliest)


def _same_times(known: Missed, start: int, now: int, limit: int) -> bool:
    """Whether (start, now] holds the same schedule times as known's window, which
    starts no later and ends no later."""
    if known.total > limit:
        return start == known.start  # too many already: a window that only grows stays so
    nothing_new = known.upcoming is None or known.upcoming > now
    return nothing_new and _kept_all(known, start)


def _kept_all(known: Missed, start: int) -> bool:
    """Whether (start, known.through] holds all of known's times (start >= known.start)."""
    if start > known.through:
        return False
    return (start == known.start or known.total == 0
            or (known.earliest is not None and start < known.earliest))


def _add_new_times(timeline: Timeline, known: Missed, start: int, now: int, limit: int) -> Missed:
    """known's times plus those in (known.through, now], of which there is at least one."""
    first_new = known.upcoming
    assert first_new is not None and first_new <= now
    following = timeline.next_after(first_new)
    latest: int | None
    if following is None or following > now:  # just one: the usual case between two ticks
        new, latest, upcoming = 1, first_new, following
    else:
        new = timeline.count_in(known.through, now, limit + 1)
        latest = timeline.latest_in(known.through, now) if known.total + new <= limit else None
        upcoming = timeline.next_after(now)
    count = min(limit + 1, known.total + new)
    if count > limit:
        return Missed(start, now, count, None, upcoming, None)
    return Missed(start, now, count, latest, upcoming, known.earliest if known.total else first_new)


def decide(spec: JobSpec, state: JobState, timeline: Timeline, now: int,
           known: Missed | None = None) -> JobTick:
    """The seed's tick rules for one job (Part 2 rules 4-8).

    ``known`` is the ``missed`` of this job's previous JobTick, if any: it only
    saves work, the decisions are the same without it.
    """
    if spec.options.max_runs is not None and state.scheduled_runs >= spec.options.max_runs:
        ended = JobTick((), None)  # MaxRunsReached: no schedule time is a firing any more
        return _with_retries(spec, state, now, ended) if state.pending_retries else ended
    start = window_start(spec, state.last_schedule, now, state.not_before)
    if spec.policy is Policy.WAIT_FOR_LAST or spec.options.catch_up == CATCH_UP_ALL:
        result = _in_order(spec, state, timeline, now, start)
    else:
        missed = count_missed(timeline, start, now, known, spec.options.missed_limit)
        result = _decision(spec, state, timeline, now, start, missed)
    if spec.options.max_runs is not None:
        result = _within_run_limit(spec.options.max_runs - state.scheduled_runs, result)
    return _with_retries(spec, state, now, result) if state.pending_retries else result


def _within_run_limit(left: int, result: JobTick) -> JobTick:
    """At most ``left`` scheduled launches (catch-up "all" may decide more at once); the last
    one allowed ends the job, which then wakes for nothing but its retries."""
    launches = [d for d in result.decisions if type(d) is Launch]
    if len(launches) < left:
        return result
    dropped = {id(d) for d in launches[left:]}
    kept = tuple(d for d in result.decisions if id(d) not in dropped)
    return JobTick(kept, None, None)


def firing_reason(nominal: int, now: int) -> str:
    """A firing for this very minute is scheduled; one for a time already past, catch-up."""
    return "scheduled" if nominal == now else "catch-up"


def _in_order(spec: JobSpec, state: JobState, timeline: Timeline, now: int, start: int) -> JobTick:
    """Catch-up of every missed time, and wait-for-last: firings in nominal order.

    Catch-up "all" hands every missed time (at most the job's limit) to the
    policy oldest first: allow launches them all; forbid launches the oldest
    when nothing is active, the rest staying missed; replace keeps only the
    newest (each would replace the one before). Wait-for-last queues them:
    catch-up firings keep their place, and a scheduled one takes the place of
    the scheduled one already waiting, which is coalesced. Past the limit,
    under CronJob's rule, the newest ``limit`` times go on as if they were
    all that was missed.
    """
    options = spec.options
    limit, every_one = options.missed_limit, options.catch_up == CATCH_UP_ALL
    count = timeline.count_in(start, now, limit + 1)
    overflow: tuple[Decision, ...] = ()
    if count > limit:
        if options.past_limit == PAST_LIMIT_HOLD:
            return JobTick((Overflow(spec.name, count, limit),), now)
        times = _newest_times(timeline, start, now, limit if every_one else 1)
        dropped = timeline.count_in(start, times[0] - 1, MAX_COUNTED_DROPPED) if every_one else 0
        overflow = (Overflow(spec.name, count, limit, launches=True, dropped=dropped),)
    else:
        times = _missed_times(timeline, start, now, count, every_one)
    wake = timeline.next_after(max(start, times[-1]) if times else start)
    if spec.policy is Policy.WAIT_FOR_LAST:
        return JobTick(overflow + _wait_for_last(spec, state, times, now), wake)
    if not times:
        return JobTick((), wake)
    number = state.launched
    decisions: list[Decision] = list(overflow)
    if spec.policy is Policy.FORBID:
        if state.active:
            return JobTick((*overflow, Skip(spec.name, times[0])), now)
        wake = now if len(times) > 1 else wake
        times = times[:1]
    elif spec.policy is Policy.REPLACE:
        decisions.extend(Replace(spec.name, victim) for victim in state.active)
        times = times[-1:]
    for t in times:
        number += 1
        decisions.append(Launch(spec.name, run_id(spec.name, number), number, t, firing_reason(t, now)))
    return JobTick(tuple(decisions), wake)


MAX_COUNTED_DROPPED = 10**6  # an outage that drops more than this says "at least" this many


def _newest_times(timeline: Timeline, start: int, now: int, count: int) -> list[int]:
    """The newest ``count`` schedule times in (start, now], oldest first."""
    times: list[int] = []
    high = now
    while len(times) < count:
        t = timeline.latest_in(start, high)
        if t is None:
            break
        times.append(t)
        high = t - 1
    times.reverse()
    return times


def _missed_times(timeline: Timeline, start: int, now: int, count: int, every_one: bool) -> list[int]:
    if count == 0:
        return []
    if not every_one:
        latest = timeline.latest_in(start, now)
        return [] if latest is None else [latest]
    times: list[int] = []
    t = timeline.next_after(start)
    while t is not None and t <= now:
        times.append(t)
        t = timeline.next_after(t)
    return times


def _wait_for_last(spec: JobSpec, state: JobState, times: list[int], now: int) -> tuple[Decision, ...]:
    decisions: list[Decision] = []
    queue = list(state.queue)
    for t in times:
        reason = firing_reason(t, now)
        if reason == "scheduled":
            for older in [q for q in queue if q.reason == "scheduled"]:
                queue.remove(older)
                decisions.append(Coalesce(spec.name, older.nominal))
        queue.append(Queued(t, reason))
        decisions.append(Enqueue(spec.name, t, reason))
    if queue and not state.active:
        number = state.launched + 1
        decisions.append(Launch(spec.name, run_id(spec.name, number), number, queue[0].nominal, queue[0].reason))
    return tuple(decisions)


def while_held(spec: JobSpec, state: JobState, now: int) -> JobTick:
    """The tick of a held job (suspended, paused, switched off): no schedule time fires, but
    the retries of its runs go on, as a suspended CronJob's Jobs finish their backoff: a retry
    is the same run, not a new firing."""
    return _with_retries(spec, state, now, JobTick((), None)) if state.pending_retries else JobTick((), None)


def _with_retries(spec: JobSpec, state: JobState, now: int, result: JobTick) -> JobTick:
    """Retries whose time has come go first; a run being replaced is not retried.

    While a retry waits, the job is woken at its time and its decisions are
    never replayed (``waiting`` stays False): the retry changes its state.
    """
    replaced = {d.run_id for d in result.decisions if isinstance(d, Replace)}
    retries = tuple(Retry(spec.name, p.run_id, p.attempt) for p in state.pending_retries
                    if p.due <= now and p.run_id not in replaced)
    later = [p.due for p in state.pending_retries if p.due > now and p.run_id not in replaced]
    wakes = [wake for wake in (result.wake_at, min(later, default=None)) if wake is not None]
    return JobTick(retries + result.decisions, min(wakes, default=None), result.missed)


def _decision(spec: JobSpec, state: JobState, timeline: Timeline, now: int, start: int,
              missed: Missed) -> JobTick:
    if missed.total == 0:
        # Nothing in (start, now]: the next schedule time after start is the first after now.
        return JobTick((), missed.upcoming if start <= now else timeline.next_after(start), missed)
    overflow: tuple[Decision, ...] = ()
    latest, limit = missed.latest, spec.options.missed_limit
    if missed.total > limit:
        launches = spec.options.past_limit != PAST_LIMIT_HOLD
        overflow = (Overflow(spec.name, missed.total, limit, launches),)
        if not launches:
            return JobTick(overflow, now, missed, True, _holds_until(spec, missed, now))
        latest = timeline.latest_in(start, now)
    assert latest is not None
    if spec.policy is Policy.FORBID and state.active:
        return JobTick((*overflow, Skip(spec.name, latest)), now, missed, True, _holds_until(spec, missed, now))
    decisions: list[Decision] = list(overflow)
    if spec.policy is Policy.REPLACE:
        decisions.extend(Replace(spec.name, victim) for victim in state.active)
    number = state.launched + 1
    decisions.append(Launch(spec.name, run_id(spec.name, number), number, latest, firing_reason(latest, now)))
    # The launch moves the window's start to ``latest`` (or later, but before now); no schedule
    # time lies in (latest, now], so the next one after that start is the first after now,
    # and the next tick need count only from now on.
    after_launch = Missed(latest, now, 0, None, missed.upcoming)
    return JobTick(tuple(decisions), missed.upcoming, after_launch)


def _holds_until(spec: JobSpec, missed: Missed, now: int) -> int | None:
    """The first tick at which a waiting job's missed times may differ (None: never,
    while its state is unchanged).

    Without a deadline the window's start is fixed by the state, so only a new
    schedule time can change it (and none can change an overflow under the
    seed's rule, which only grows; under CronJob's the newest time it skips
    changes). A deadline moves the start with the clock: the earliest missed
    time drops out at earliest + deadline + 1; for an overflow, whose earliest
    time is not known, the promise does not outlast this minute.
    """
    deadline = spec.options.starting_deadline
    if missed.total > spec.options.missed_limit:
        if deadline is not None:
            return now + 1
        return None if spec.options.past_limit == PAST_LIMIT_HOLD else missed.upcoming
    until = missed.upcoming
    if deadline is not None:
        assert missed.earliest is not None
        leaves = missed.earliest + deadline + 1
        until = leaves if until is None else min(until, leaves)
    return until


def manual_launch(spec: JobSpec, state: JobState, now: int) -> Launch:
    """A firing asked for by hand: a run for ``now`` whatever the policy (as ``kubectl
    create job --from`` does); applying it does not move the last schedule time."""
    number = state.launched + 1
    return Launch(spec.name, run_id(spec.name, number), number, now, "manual")


def start_time(spec: JobSpec, launch: Launch) -> int:
    """When a launch may actually start, in seconds since 1970: its nominal time plus
    its jitter. Jitter moves the actual time, never the nominal one; catch-up and
    manual firings take none. The offset is a deterministic function of the
    schedule's name and the nominal time, so a restart picks the same one."""
    if launch.reason != "scheduled":
        return launch.scheduled_for * 60
    seconds = effective_jitter(spec.compiled, spec.options.jitter)
    return actual_time(seconds, spec.name, launch.scheduled_for)


def run_end(started: int, timeout: int | None, reported: tuple[str, int] | None,
            now: int, in_own_time: bool = False) -> tuple[str, int] | None:
    """How a running run has ended by ``now``, if it has: (outcome, minute). The one rule of a
    run's timeout, which every driver translates.

    The outcome its worker reported counts unless the timeout expired first; a
    report at the very expiry is too late, as in the controller, where
    timeouts apply before anything else an operation does. ``in_own_time``: its
    worker measured the attempt under the timeout (``endings.own_time``), so the
    reported outcome counts however late it is seen, at the last minute before
    the expiry at the latest.
    """
    expires = None if timeout is None else started + timeout
    if reported is not None and reported[1] <= now and (expires is None or reported[1] < expires):
        return reported
    if reported is not None and in_own_time and expires is not None and reported[1] <= now:
        return reported[0], max(started, expires - 1)
    if expires is not None and expires <= now:
        return TIMED_OUT, expires
    return None


def expiry(run: Run, timeout: int | None) -> int | None:
    return None if timeout is None else run.launched_at + timeout
