"""What to do for one job on one tick: a pure function that returns decisions.

The drivers (the in-memory controller, the operator, the single-node runner)
apply the decisions; none of them decides anything itself. As in the
Kubernetes CronJob controller, at most one run is launched per tick, for the
most recent missed schedule time; unlike it, the missed times are counted
with arithmetic, never enumerated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Union

from .schedule import Timeline
from .spec import JobSpec, Policy
from .state import JobState, Run

MAX_MISSED = 100  # more missed schedule times than this is an overflow


@dataclass(frozen=True)
class Launch:
    job: str
    run_id: str
    number: int
    scheduled_for: int


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
    job: str
    missed: int  # a lower bound: counting stops at MAX_MISSED + 1


@dataclass(frozen=True)
class Timeout:
    run_id: str
    at: int  # launched_at + timeout: when it expired, not when it was noticed


Decision = Union[Launch, Skip, Replace, Overflow]


@dataclass(frozen=True)
class Missed:
    """The missed schedule times in (start, through]: how many (counted up to
    MAX_MISSED + 1) and the latest of them (None when none or too many)."""

    start: int
    through: int
    count: int
    latest: int | None
    upcoming: int | None  # the first schedule time after ``through``: nothing to count before it


@dataclass(frozen=True)
class JobTick:
    decisions: tuple[Decision, ...]
    # The earliest time at which this job can next have a missed schedule:
    # a tick before it needs not look at the job. None: never again.
    wake_at: int | None
    # What was counted, so that the next tick of a job left waiting (forbid
    # with a run active, overflow) only counts the minutes since.
    missed: Missed | None = None


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


def count_missed(timeline: Timeline, start: int, now: int, known: Missed | None = None) -> Missed:
    """The schedule times in (start, now], extending ``known`` when it counted the same window."""
    limit = MAX_MISSED + 1
    if known is not None and known.start == start and known.through <= now:
        if known.upcoming is None or known.upcoming > now or known.count >= limit:
            # Nothing new to count, or already too many: a window only grows.
            upcoming = known.upcoming if known.count < limit else None
            return Missed(start, now, known.count, known.latest, upcoming)
        count = min(limit, known.count + timeline.count_in(known.through, now, limit))
        latest = timeline.latest_in(known.through, now) if count <= MAX_MISSED else None
    else:
        count = timeline.count_in(start, now, limit)
        latest = timeline.latest_in(start, now) if 0 < count <= MAX_MISSED else None
    return Missed(start, now, count, latest, timeline.next_after(now))


def decide(spec: JobSpec, state: JobState, timeline: Timeline, now: int,
           known: Missed | None = None) -> JobTick:
    """The seed's tick rules for one job (Part 2 rules 4-8)."""
    start = window_start(spec, state.last_schedule, now, state.not_before)
    missed = count_missed(timeline, start, now, known)
    if missed.count == 0:
        return JobTick((), timeline.next_after(start))
    if missed.count > MAX_MISSED:
        return JobTick((Overflow(spec.name, missed.count),), now, missed)
    latest = missed.latest
    assert latest is not None
    if spec.policy is Policy.FORBID and state.active:
        return JobTick((Skip(spec.name, latest),), now, missed)
    decisions: list[Decision] = []
    if spec.policy is Policy.REPLACE:
        decisions.extend(Replace(spec.name, victim) for victim in state.active)
    number = state.launched + 1
    decisions.append(Launch(spec.name, run_id(spec.name, number), number, latest))
    return JobTick(tuple(decisions), timeline.next_after(window_start(spec, latest, now, state.not_before)))


def expiry(run: Run, timeout: int | None) -> int | None:
    return None if timeout is None else run.launched_at + timeout


def expired(active: Iterable[Run], timeout: int | None, now: int) -> list[Timeout]:
    """Running runs whose timeout has passed by ``now`` (launched_at + timeout <= now)."""
    timeouts = []
    for run in active:
        at = expiry(run, timeout)
        if at is not None and at <= now:
            timeouts.append(Timeout(run.id, at))
    return timeouts
