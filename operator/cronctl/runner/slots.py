"""Worker slots, and the order in which due firings wait for them.

The runner runs at most N firings at once (``--workers N``, default the
number of CPUs). A due firing takes the free slot with the smallest name;
with none free it waits, and says why ("queued: 4/4 workers busy"). Slots
are named ``worker-1`` .. ``worker-N``, zero-padded when N >= 10
(``worker-01`` .. ``worker-12``) so that names sort as numbers do.

Waiting firings are served in seed 001's order (``starts``, by the core's
``pool.admitted_across``): by nominal time, then by schedule name compared as
Java's ``String.compareTo`` does, then by attempt.

A run adopted after a restart keeps the slot it had, also when the runner
was started again with another ``--workers`` (``worker-3`` of a runner of 4,
adopted by a runner of 2; ``worker-1`` adopted by a runner of 12, whose names
are ``worker-01`` ..): such a slot counts as busy until its run ends, and no
firing is given it again.

This module holds no process and no clock; the caller owns both.
"""

from __future__ import annotations

import os
import re

_SLOT_NAME = re.compile(r"worker-[0-9]{1,6}")


def default_workers() -> int:
    return os.cpu_count() or 1


def slot_names(size: int) -> list[str]:
    width = len(str(size)) if size >= 10 else 1
    return [f"worker-{n:0{width}d}" for n in range(1, size + 1)]


class SlotPool:
    def __init__(self, size: int) -> None:
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"workers: {size!r} must be a whole number >= 1")
        self.size = size
        self.names = slot_names(size)
        self._busy: set[str] = set()

    @property
    def busy_count(self) -> int:
        return len(self._busy)

    @property
    def free_count(self) -> int:
        return sum(1 for name in self.names if name not in self._busy)

    def busy(self) -> list[str]:
        return sorted(self._busy)

    def acquire(self) -> str | None:
        """The free slot with the smallest name, now busy; None when all are busy."""
        for name in self.names:
            if name not in self._busy:
                self._busy.add(name)
                return name
        return None

    def take(self, name: str) -> None:
        """Mark ``name`` busy again, for a run adopted after a restart: a slot of this pool,
        or one of a runner that had another number of workers (busy until released)."""
        if _SLOT_NAME.fullmatch(name) is None:
            raise ValueError(f"{name!r}: not a slot name (worker-N)")
        if name in self._busy:
            raise ValueError(f"{name}: already busy")
        self._busy.add(name)

    def release(self, name: str) -> None:
        if name not in self._busy:
            self._check(name)
            raise ValueError(f"{name}: is not busy")
        self._busy.remove(name)

    def describe_wait(self) -> str:
        """Why a due firing waits, e.g. ``queued: 4/4 workers busy``."""
        return f"queued: {workers_busy(self.busy_count, self.size)}"

    def _check(self, name: str) -> None:
        if name not in self.names:
            raise ValueError(f"{name!r}: not a slot of this pool ({self.names[0]}..{self.names[-1]})")


def workers_busy(busy: int, workers: int, pool: str | None = None) -> str:
    """Why a firing waits for a worker: ``4/4 workers busy``, ``2/2 workers of CronPool 'reports' busy``."""
    noun = "worker" if workers == 1 else "workers"
    return f"{busy}/{workers} {noun}{'' if pool is None else f' of CronPool {pool!r}'} busy"


def pool_missing(pool: str) -> str:
    """Why a firing of a schedule whose CronPool is not in the folder waits."""
    return f"CronPool {pool!r} is not in the folder"
