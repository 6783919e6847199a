"""When each job of the in-memory controller is worth a look: pure, no clock of its own.

The ``Controller`` (core/controller.py) asks its agenda which jobs get a turn
at a tick, so that its work follows what is due rather than how many jobs
exist. The agenda keeps two derived indexes, rebuilt from the jobs' state
whenever the controller is made: a heap of job wake-up times (from
``tick.decide``'s ``wake_at``), and the jobs left waiting, whose last
decisions ``tick.decide`` said would repeat (``JobTick.holds``). A waiting job
is not in the heap: its decisions are replayed without deciding again until
the promise runs out or its state changes under them (a run that ends, a
backfill, an edit: ``decide_again``, ``forget``). A tick at which no job is
due and every waiting job's promise holds (most ticks of a long outage with
Forbid jobs stuck or overflowed) is their replays, made once (``Replays``):
measured on the seed's Part 5 daily ticks, where about 30 waiting jobs are
replayed at each of 3,653 ticks.
"""

from __future__ import annotations

import heapq
from itertools import chain
from operator import itemgetter
from typing import Collection, Mapping, NamedTuple

from .schedule import Timeline
from .spec import JobSpec
from .state import Job
from .tick import Decision, JobTick
from .transitions import Applied

POPPED = -1  # a wake time no heap entry can carry: the job's entry was taken, or it waits
_BY_INDEX = itemgetter(0)  # sorts (index, ...) entries into creation order
_DECISION = itemgetter(0)  # an Applied's decision

Looked = tuple[int, Job, JobTick | None]  # (index, job, its last decisions when they still hold)


class Replays(NamedTuple):
    """The waiting jobs' decisions, replayed: a tick's whole answer when no job is due."""

    applied: tuple[Applied, ...]  # every waiting job's replays, in creation order
    decisions: tuple[Decision, ...]  # the same, as tick() gives them
    until: int | None  # the first tick at which some promise may run out (None: none ever does)
    usable: bool  # False while a waiting job has a backfill: a tick may launch its next run


class Agenda:
    """The wake-up heap and the waiting jobs, with their replays."""

    def __init__(self) -> None:
        self._wake: dict[str, int | None] = {}  # name -> its wake time (POPPED: taken, or waiting)
        self._due: list[tuple[int, int, str]] = []  # (wake time, index, name); an entry that differs is stale
        # Jobs left waiting (forbid skips, overflows) whose last decisions repeat at every tick
        # (JobTick.holds): they are not in the wake-up heap, and need no decide() until
        # the promise runs out or one of their runs finishes.
        self._waiting: dict[str, tuple[int, Job, JobTick]] = {}  # name -> (index, job, its last decisions)
        self._repeats: dict[str, tuple[Applied, ...]] = {}  # name -> a waiting job's decisions, replayed
        self._replays: Replays | None = None  # made on first use after the waiting jobs change

    # -- waking jobs --------------------------------------------------------------

    def wake(self, spec: JobSpec, wake_at: int | None) -> None:
        """Look at the job at ``wake_at`` (None: never, until something wakes it)."""
        self._wake[spec.name] = wake_at
        if wake_at is not None:
            heapq.heappush(self._due, (wake_at, spec.index, spec.name))

    def wake_by(self, spec: JobSpec, at: int) -> None:
        """Look at the job at ``at`` unless it is looked at sooner already (a retry's due time)."""
        wake = self._wake.get(spec.name)
        if wake is None or wake == POPPED or at < wake:
            self.wake(spec, at)

    def wake_first(self, job: Job, timeline: Timeline) -> None:
        """Wake the job at a lower bound of its next missed time; decide() moves it on."""
        last = job.state.last_schedule
        wakes = [timeline.next_after(job.spec.created_at if last is None else last),
                 *(pending.due for pending in job.state.pending_retries[:1])]
        self.wake(job.spec, min((w for w in wakes if w is not None), default=None))

    def remove(self, name: str) -> None:
        """The job left (its waiting entry goes with ``forget``)."""
        self._wake.pop(name, None)

    # -- what a tick looks at -----------------------------------------------------

    def any_due(self, now: int) -> bool:
        return bool(self._due) and self._due[0][0] <= now

    def jobs_to_look_at(self, jobs: Mapping[str, Job], now: int, holding: Collection[str],
                        triggers: Mapping[str, int]) -> list[Looked]:
        """(index, job, held) in creation order: the jobs due by the wake-up heap, the waiting
        jobs, with their last decisions when those still hold at ``now``, and the jobs held or
        asked for manual runs."""
        due: list[Looked] = []
        while self.any_due(now):
            wake, index, name = heapq.heappop(self._due)
            if self._wake.get(name) == wake:
                self._wake[name] = POPPED
                due.append((index, jobs[name], None))
        for entry in self._waiting.values():
            due.append(entry if entry[2].holds(now) else (entry[0], entry[1], None))
        if holding or triggers:
            looked = {entry[1].spec.name for entry in due}
            due += [(jobs[name].spec.index, jobs[name], None)
                    for name in {*holding, *triggers} - looked if name in jobs]
        due.sort(key=_BY_INDEX)
        return due

    def repeats(self, name: str) -> tuple[Applied, ...]:
        """A waiting job's decisions, as a replay gives them."""
        return self._repeats[name]

    def replayed(self, now: int) -> Replays | None:
        """The tick's decisions when no job is due and every waiting job's promise holds:
        the waiting jobs' replays, in creation order. None: the tick looks at the jobs."""
        if self.any_due(now):
            return None
        replays = self._replays
        if replays is None:
            replays = self._replays = self._make_replays()
        if not replays.usable or (replays.until is not None and now >= replays.until):
            return None
        return replays

    def _make_replays(self) -> Replays:
        entries = sorted(self._waiting.values(), key=_BY_INDEX)
        applied = tuple(chain.from_iterable(self._repeats[job.spec.name] for _, job, _ in entries))
        ends = [tick.holds_until for _, _, tick in entries if tick.holds_until is not None]
        usable = all(job.state.backfill is None for _, job, _ in entries)
        return Replays(applied, tuple(map(_DECISION, applied)), min(ends, default=None), usable)

    # -- what a job's tick leaves -------------------------------------------------

    def record(self, job: Job, result: JobTick) -> None:
        """Whether the job waits after its tick (its decisions replayed), or when it wakes."""
        spec = job.spec
        if result.waiting:
            self._replays = None
            self._waiting[spec.name] = (spec.index, job, result)
            # Replayed, its skips and overflows change nothing: the same time skipped again, the same
            # overflow going on (transitions' counting rules), so a replay is these, as they are.
            self._repeats[spec.name] = tuple(Applied(decision, news=False) for decision in result.decisions)
            self._wake[spec.name] = POPPED
        else:
            if self._waiting.pop(spec.name, None) is not None:
                self._replays = None
            self.wake(spec, result.wake_at)

    def decide_again(self, job: Job) -> None:
        """The job's state changed under a replayed decision: it must be decided again."""
        waiting = self._waiting.pop(job.spec.name, None)
        if waiting is not None:
            self._replays = None
            self.wake(job.spec, waiting[2].wake_at)

    def forget(self, name: str) -> None:
        """Forget what the job's last tick decided (it does not wait): it is decided afresh when
        next looked at."""
        self._replays = None
        self._waiting.pop(name, None)
        self._repeats.pop(name, None)
