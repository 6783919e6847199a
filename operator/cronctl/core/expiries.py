"""When each active run of the in-memory controller times out: pure, no clock of its own.

The ``Controller`` (core/controller.py) ends a run at its expiry (``tick.expiry``:
its launch plus its job's timeout) when its clock passes it, before anything
else the clock's move does. Its expiries are a heap, so that a move of the
clock looks only at the runs that expired rather than at every active run.
An edit of the job's timeout gives its runs new expiries: the heap's entry of
the old one is stale, and skipped when it comes up.
"""

from __future__ import annotations

import heapq
from typing import Iterator

from .spec import JobSpec
from .state import Run
from .tick import expiry


class Expiries:
    """The heap of run expiries, and each run's current one."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, str]] = []  # (expiry, the job's index, run)
        self._at: dict[str, int] = {}  # run -> its expiry; a heap entry that differs is stale (an edit)

    def expire_at(self, run: Run, spec: JobSpec) -> None:
        """The run expires by its job's timeout (none: it never does)."""
        expires = expiry(run, spec.options.timeout)
        if expires is None:
            self._at.pop(run.id, None)
        else:
            self._at[run.id] = expires
            heapq.heappush(self._heap, (expires, spec.index, run.id))

    def forget(self, run_id: str) -> None:
        """The run left: it expires no more."""
        self._at.pop(run_id, None)

    def due(self, now: int) -> Iterator[tuple[int, str]]:
        """(expiry, run) of each run expired by ``now``, earliest first, each once."""
        while self._heap and self._heap[0][0] <= now:
            at, _, run_id = heapq.heappop(self._heap)
            if self._at.get(run_id) != at:
                continue  # its job's timeout was edited since: the entry of the new one counts
            del self._at[run_id]
            yield at, run_id
