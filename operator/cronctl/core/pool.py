"""Seed 001's order of waiting work, and how much of it a pool of workers admits: pure.

Waiting runs are served by nominal time, then by schedule name as Java's
``String.compareTo`` orders it (UTF-16 code units, which for names outside
the Basic Multilingual Plane differs from Python's code point order), then by
attempt. The dispatcher of seed 001 (``dispatch.py``), the runner's worker
slots and a ``CronPool`` take waiting work in this one order; a pool of
``workers`` with ``busy`` of them running admits the first ``workers - busy``.

``admitted_across`` is the same rule on a node whose workers serve several
pools at once (the runner's ``--workers`` and its folder's CronPools).
``pool_step`` is one look at a pool as a driver sees it: the attempts it
runs and those waiting (a jittered one waits only from its second), and
which of them start now.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence, TypeVar

T = TypeVar("T")


def java_order(text: str) -> bytes:
    """A key that orders (and identifies) strings as Java does: their UTF-16 code units."""
    return text.encode("utf-16-be", "surrogatepass")


def seed_order(nominal: int, schedule: str, attempt: int = 1) -> tuple[int, bytes, int]:
    """The place of a waiting run: nominal time, then schedule name (Java order), then attempt."""
    return nominal, java_order(schedule), attempt


def admitted(workers: int, busy: int, waiting: Sequence[T],
             place: Callable[[T], tuple[int, bytes, int]]) -> list[T]:
    """The waiting runs a pool starts now, in seed 001's order: as many as it has free workers."""
    free = max(0, workers - busy)
    return sorted(waiting, key=place)[:free] if free else []


def admitted_across(free: int, room: Mapping[str, int], waiting: Sequence[T],
                    place: Callable[[T], tuple[int, bytes, int]], pool_of: Callable[[T], str | None]) -> list[T]:
    """The waiting runs that start now on a node with ``free`` workers, whose pools have ``room``
    (free workers, by pool name): in seed 001's order, each taking a worker of the node and one
    of its pool. A run whose pool is full, or missing (not in ``room``), waits, and the runs
    behind it may start; none starts once the node has no worker free."""
    room = dict(room)
    chosen: list[T] = []
    for run in sorted(waiting, key=place):
        if len(chosen) >= free:
            break
        pool = pool_of(run)
        if pool is not None:
            if room.get(pool, 0) <= 0:
                continue
            room[pool] -= 1
        chosen.append(run)
    return chosen


@dataclass(frozen=True)
class PoolRun:
    """One attempt of one run in a pool: ``key`` is the driver's name for it (a Job's name)."""

    key: str
    schedule: str
    nominal: int  # the run's schedule time, minutes since 1970
    attempt: int
    since: float  # the second (since 1970) it has waited from, as its driver says (for the record)
    not_before: float = 0.0  # the second it may start from: its jitter's (0: at once)

    def place(self) -> tuple[int, bytes, int]:
        return seed_order(self.nominal, self.schedule, self.attempt)


@dataclass(frozen=True)
class PoolStep:
    """What a pool does at one look: the attempts it starts, in order; those left waiting, in
    order (a jittered one not yet at its second last); the second worth the next look."""

    start: list[PoolRun] = field(default_factory=list)
    queue: list[PoolRun] = field(default_factory=list)
    wake_at: float | None = None  # the second the first jittered waiting attempt may start


def pool_step(workers: int, busy: int, waiting: Sequence[PoolRun], second: float) -> PoolStep:
    """The attempts a pool of ``workers`` with ``busy`` running starts at ``second``."""
    ready = [run for run in waiting if run.not_before <= second]
    later = sorted((run for run in waiting if run.not_before > second), key=PoolRun.place)
    start = admitted(workers, busy, ready, PoolRun.place)
    chosen = {run.key for run in start}
    left = [run for run in sorted(ready, key=PoolRun.place) if run.key not in chosen]
    return PoolStep(start, left + later, min((run.not_before for run in later), default=None))


__all__ = ["PoolRun", "PoolStep", "admitted", "admitted_across", "java_order", "pool_step", "seed_order"]
