"""The looks at CronPools: which pools to look at, when, and carrying out what each look decides.

A pool is looked at (``pool_decisions.pool_plan`` on a fresh LIST of its Jobs) when
one of its schedules was reconciled (a run launched, ended or retried there),
when the pool itself came or changed, and at the second a jittered waiting
attempt may start (by the schedules' clock); and, in real time, a second
after a look that failed (the API away: its time is the network's, not the
schedules' clock, which tests set by hand) and every ``POLL_SECONDS`` while
its queue is not empty (a worker freed by a schedule of another shard, whose
Job this shard's watch does not see). ``look_all`` says which pools want
those real-time looks; the scheduling loop keeps the timers. Only the shard
the pool belongs to (by its ``cronctl.dev/shard`` label, as a schedule)
starts its Jobs, and only while it leads (the scheduling loop calls ``look``
only then); looks at one pool never overlap (the loop makes them on one
thread).

``look`` returns the schedules whose Jobs it started, which the loop then
reconciles, so their status says the run is running, no longer queued.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from .apply import Cluster
from .metrics import METRICS, Metrics
from .pool_decisions import pool_plan
from .shard import Shard

log = logging.getLogger("cronctl.operator")

Key = tuple[str, str]  # (namespace, name)
POLL_SECONDS = 10.0  # a pool with a queue is looked at at least this often (real time)
RETRY_SECONDS = 1.0  # a look that failed is made again so soon (real time)


@dataclass
class Looked:
    """What the looks at some pools did: the schedules whose Jobs started, and the pools to look
    at again in real time, a second from now (the look failed) or in ``POLL_SECONDS`` (a queue)."""

    started: list[Key] = field(default_factory=list)
    failed: list[Key] = field(default_factory=list)
    queued: list[Key] = field(default_factory=list)


class Pools:
    def __init__(self, cluster: Cluster, shard: Shard = Shard(), metrics: Metrics = METRICS) -> None:
        self.cluster, self.shard, self.metrics = cluster, shard, metrics
        self._lock = threading.Lock()
        self._dirty: set[Key] = set()
        self._wake: dict[Key, float] = {}  # the second each pool asks to be looked at again

    def mark(self, key: Key) -> None:
        """Look at this pool at the loop's next turn."""
        with self._lock:
            self._dirty.add(key)

    def mark_for(self, schedules: list[Key]) -> None:
        """Look at the pools these schedules name (their runs may have been launched or ended)."""
        for namespace, name in schedules:
            pool = pool_of(self.cluster.schedule(namespace, name))
            if pool is not None:
                self.mark((namespace, pool))

    def mark_all(self) -> None:
        """Look at every pool known (this replica just began to lead: another may have acted)."""
        if self.cluster.cache is not None:
            for key in self.cluster.cache.pools():
                self.mark(key)

    def due(self, now: float) -> list[Key]:
        """The pools to look at now: marked, or a jittered attempt's second come (taken: marked
        again, they come again)."""
        with self._lock:
            due = self._dirty | {key for key, second in self._wake.items() if second <= now}
            self._dirty = set()
            for key in due:
                self._wake.pop(key, None)
        return sorted(due)

    def next_second(self) -> float | None:
        with self._lock:
            return min(self._wake.values(), default=None) if not self._dirty else 0.0

    def look_all(self, keys: list[Key], now: float) -> Looked:
        """Look at each pool (``now``: the schedules' clock, in seconds)."""
        looked = Looked()
        for key in keys:
            try:
                started, queued = self.look(key, now)
            except Exception as error:  # the API away: the queue waits, nothing is lost
                log.warning("looking at CronPool %s/%s failed (%s); again in %g s", *key, error, RETRY_SECONDS)
                looked.failed.append(key)
                continue
            looked.started.extend(started)
            if queued:
                looked.queued.append(key)
        return looked

    def look(self, key: Key, now: float) -> tuple[list[Key], bool]:
        """One look at a pool: start what it admits, write its status; the schedules started, and
        whether attempts still wait."""
        namespace, name = key
        pool = self.cluster.pool(namespace, name)
        if pool is None or not self.shard.owns(pool):
            self.metrics.forget_pool(namespace, name)
            return [], False
        result = pool_plan(pool, self.cluster.pool_jobs(namespace, name), now)
        outcomes = self.cluster.start_pooled(namespace, [(start.job, start.patch) for start in result.starts])
        failed = [outcome for outcome in outcomes if isinstance(outcome, Exception)]
        for start, outcome in zip(result.starts, outcomes):
            if outcome is True:
                log.info("%s/%s: CronPool %s gave Job %s a worker after %.1f s", namespace, start.schedule, name,
                         start.job, start.waited)
        if failed:  # its status would count starts that did not happen: look again instead
            raise failed[0]
        if result.status is not None:
            self.cluster.patch_pool_status(namespace, name, result.status)
        self.metrics.record_pool(namespace, name, result.busy, result.queued, result.oldest_wait,
                                 [start.waited for start in result.starts])
        if result.wake_at is not None:
            with self._lock:
                self._wake[key] = min(result.wake_at, self._wake.get(key, result.wake_at))
        started = {(namespace, start.schedule) for start, outcome in zip(result.starts, outcomes) if outcome is True}
        return sorted(started), result.queued > 0


def pool_of(schedule: dict[str, Any] | None) -> str | None:
    """The pool a schedule's spec names, if any."""
    pool = ((schedule or {}).get("spec") or {}).get("pool")
    return pool if isinstance(pool, str) else None
