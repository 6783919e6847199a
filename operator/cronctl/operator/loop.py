"""The scheduling loop: one task that reconciles the schedules that need it.

Rather than a kopf timer per object (an asyncio task and a finalizer each,
and a status write per tick), one loop keeps a heap of wake-up times that
the core computed (``Plan.wake_second``: a minute for the next decision, or
the second a jittered Job may start) and a set of schedules that watch events
marked dirty. It reconciles exactly those, so an idle schedule costs no API
call at all, and a restart, which marks every schedule dirty, yields the
same decisions because each reconcile reads the status and Jobs afresh.

A batch of due schedules is reconciled in two passes. The first plans each
one and carries out only the writes that start runs at this second (the
releases of staged Jobs, the resumes of held ones, the creates of Jobs not
staged: ``Plan.split``); the second, once every launch of the batch is out,
carries out the rest (status patches, deletes, the next minute's staging,
Events). So at the nominal second the API server sees one request per
launch, and the bookkeeping follows it. In each pass, each reconcile thread
takes a share of the batch and carries out its writes together
(``Cluster.apply_all``: pipelined, a round at a time).

A few seconds before the heap's next second, the loop plans the schedules
due at it ahead (``Prepared``): at the second, a schedule whose object and
Jobs are still exactly those it was planned from takes that plan, so the
busy second spends its CPU on the releases, not on planning them.

A reconcile that failed (the connection, a timeout, 429, 5xx) is looked at
again after ``kube.retry``'s backoff, in real time: 0.1 s, doubling to 5 s.
Planned afresh each time, a minute whose writes failed is launched late, not
dropped, and the core says when its time has passed. While this replica does
not hold the Lease, the loop acts on nothing; once it holds it again, it
reconciles every schedule afresh.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import heapq
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Mapping

import orjson
from kubernetes.client.exceptions import ApiException

from .kube import retry
from .apply import ROUND_PART, Cluster, WriteRefused
from ..clock import Clock
from .logs import event_fields
from .metrics import METRICS, Metrics
from .effects import Plan, runs_of
from .kept import carried_out, kept
from .backfill import pending_backfill
from .pause import pending_resume
from .plan import pending_trigger, plan
from .refusals import Refusal
from .pool_looks import POLL_SECONDS, RETRY_SECONDS, Pools, pool_of

log = logging.getLogger("cronctl.operator")

Key = tuple[str, str]  # (namespace, name)
MAX_IDLE_SECONDS = 30.0  # look at the clock at least this often
LEADER_POLL_SECONDS = 0.5
MIN_SLEEP_SECONDS = 0.001  # the floor of a sleep: the first release goes out within ms of its second
# Reconciles at once: the bound on concurrent writes, so a minute when thousands of schedules
# fire queues its launches here rather than storming the API server (whose own limit is 400
# mutating requests in flight by default).
CONCURRENCY = 16
PREPARE_SECONDS = 5.0  # plan the schedules due at a second this long before it
PREPARE_MARGIN = 0.2  # and stop so long before it, whatever is left is planned at the second
PREPARE_CHUNK = 256  # schedules planned ahead per pass: watch events wait no longer than one


class Scheduler:
    def __init__(self, cluster: Cluster, clock: Clock, concurrency: int = CONCURRENCY,
                 leading: threading.Event | None = None, staging: bool = False, pools: Pools | None = None,
                 fleet: bool = False) -> None:
        self.cluster = cluster
        self.pools = pools  # the CronPools' looks, made between batches (None: no pool is ever started)
        self.clock = clock
        self.staging = staging  # create scheduled firings' Jobs ahead of their minute
        self.fleet = fleet  # fleet mode: no per-launch status field (``status.fleet_status``)
        self.leading = leading  # None: act at once; else only once this replica holds the Lease
        self.known: set[Key] = set()
        self._dirty: set[Key] = set()
        self._wake: dict[Key, float] = {}
        self._heap: list[tuple[float, Key]] = []  # (second since 1970, schedule)
        self._prepared: dict[Key, Prepared] = {}  # plans made ahead for the second they are due at
        self._preparing_for: float | None = None  # the second of the plans being made ahead
        self._to_prepare: list[Key] = []
        self._failures: dict[Key, int] = {}  # failed reconciles in a row, of the schedules failing now
        self._refused_now: set[Key] = set()  # the schedules whose last reconcile the API server refused
        self._polled: set[Key] = set()  # the pools with a queue whose next real-time look is set
        self.passed_at = time.monotonic()  # the loop's last pass or wake (monotonic), for the probe (``health``)
        self._signal = asyncio.Event()
        self._loop = _running_loop()  # the loop ``run`` runs on: made on it, or set when ``run`` starts
        # Its own threads, which bound the writes at once (a thread's pipelined writes are taken
        # one after another by the API server): a batch is handed to them whole, a share each,
        # without waiting for the event loop (busy with the watch events the batch's own writes
        # cause). The default executor has min(32, CPUs + 4) threads, and kopf's sync handlers
        # share it.
        self._concurrency = concurrency
        self._threads = ThreadPoolExecutor(concurrency, thread_name_prefix="cronctl-reconcile")
        self._driver = ThreadPoolExecutor(1, thread_name_prefix="cronctl-pass")  # hands each pass to them

    # -- called by the watches, on their threads ---------------------------------------

    def touch(self, key: Key) -> None:
        """Reconcile this schedule as soon as the loop can."""
        self._on_the_loop(self._touch, key)

    def look(self, body: Mapping[str, Any]) -> None:
        """A schedule as its watch saw it: reconcile it if that is worth it now (``needs_a_look``)."""
        key = (body["metadata"].get("namespace") or "", body["metadata"].get("name") or "")
        if needs_a_look(body, key in self.known):
            self.touch(key)

    def forget(self, key: Key) -> None:
        """The schedule is gone: nothing of it is looked at again, and its gauges go."""
        METRICS.forget(*key)
        self._on_the_loop(self._forget, key)

    def pool_changed(self, key: Key) -> None:
        """A CronPool came, went or changed: look at it, and at the schedules naming it (their
        Ready condition says whether it exists)."""
        if self.pools is not None:
            self.pools.mark(key)
        schedules = self.cluster.cache.schedules_in_pool(*key) if self.cluster.cache is not None else []
        for schedule in schedules:
            self.touch(schedule)
        if not schedules:
            self._on_the_loop(lambda _: self._signal.set(), key)

    def _on_the_loop(self, change: Callable[[Key], None], key: Key) -> None:
        """Change the loop's sets on the loop's own thread, which reads and swaps them between its
        awaits (a set changed from another thread meanwhile could lose the change), and which an
        asyncio.Event set from another thread would not wake from its selector."""
        loop = self._loop
        if loop is None or _running_loop() is loop:
            change(key)
        else:
            loop.call_soon_threadsafe(change, key)

    def _touch(self, key: Key) -> None:
        self.known.add(key)
        self._dirty.add(key)
        self._signal.set()

    def _forget(self, key: Key) -> None:
        self.known.discard(key)
        self._not_refused(key)
        if self._failures.pop(key, None) is not None:
            METRICS.reconciles_failing.set(len(self._failures))
        self._dirty.discard(key)
        self._wake.pop(key, None)
        self._prepared.pop(key, None)

    # -- the loop ---------------------------------------------------------------

    async def run(self) -> None:
        self._loop = asyncio.get_running_loop()
        while True:
            self.passed_at = time.monotonic()
            if self.leading is not None and not self.leading.is_set():
                await self._follow()
            now = await asyncio.to_thread(self.clock.seconds)
            batch = self._take_due(now)
            if batch:
                keys = sorted(batch)
                with no_collection_pauses():
                    started = await self._pass(self._start_share, [(key, now) for key in keys])
                wakes = await self._pass(self._finish_share, [(key, pending, now)
                                                            for key, pending in zip(keys, started)])
                for key, second in zip(keys, wakes):
                    self._wake_at(key, second)
                continue
            if await self._look_at_pools(now):
                continue
            if await self._prepare_some(now):
                continue
            await self._sleep(now)

    async def _follow(self) -> None:
        """Act on nothing until this replica holds the Lease (again); then reconcile every schedule
        afresh, as a restart does: another replica may have acted meanwhile. Meanwhile its
        schedules' gauges are the leader's to report (as a replica that never led reports none)."""
        for key in list(self.known):
            METRICS.forget(*key)
        while not self.leading.is_set():  # type: ignore[union-attr]
            self.passed_at = time.monotonic()  # a follower is alive too
            await asyncio.sleep(LEADER_POLL_SECONDS)  # watch events keep marking schedules meanwhile
        self._prepared.clear()
        self._dirty |= self.known
        if self.pools is not None:
            self.pools.mark_all()

    async def _look_at_pools(self, now: float) -> bool:
        """Look at the pools due (on the pass thread: one look at a time); reconcile the schedules
        whose Jobs they started. False: no pool was due."""
        due = [] if self.pools is None else self.pools.due(now)
        if not due:
            return False
        pools = self.pools
        assert pools is not None
        loop = asyncio.get_running_loop()
        looked = await loop.run_in_executor(self._driver, pools.look_all, due, now)
        for key in looked.started:
            self._touch(key)
        for key in looked.failed:
            loop.call_later(RETRY_SECONDS, self._look_at_pool, key)
        for key in looked.queued:
            if key not in self._polled:  # one timer a pool
                self._polled.add(key)
                loop.call_later(POLL_SECONDS, self._poll_pool, key)
        return True

    def _look_at_pool(self, key: Key) -> None:
        if self.pools is not None:
            self.pools.mark(key)
            self._signal.set()

    def _poll_pool(self, key: Key) -> None:
        self._polled.discard(key)
        self._look_at_pool(key)

    def _take_due(self, now: float) -> set[Key]:
        due, self._dirty = self._dirty, set()
        while self._heap and self._heap[0][0] <= now:
            second, key = heapq.heappop(self._heap)
            if self._wake.get(key) == second:
                del self._wake[key]
                due.add(key)
        return due

    async def _pass(self, step: Callable[[list[Any]], list[Any]], items: list[Any]) -> list[Any]:
        """One pass over a batch: ``step`` of a share of the items on each reconcile thread,
        results in order. Each thread carries out its share's writes a round at a time, pipelined
        (``Cluster.apply_all``). The batch goes to the threads whole (``map``), from a thread of
        its own: one hop of the event loop per pass, not one per schedule."""
        portions = shares(items, self._concurrency)
        done = await asyncio.get_running_loop().run_in_executor(
            self._driver, lambda: list(self._threads.map(step, portions)))
        return [result for share in done for result in share]

    async def _prepare_some(self, now: float) -> bool:
        """Plan ahead a chunk of the schedules due at the heap's next second, once it is
        PREPARE_SECONDS away or less. False: nothing to plan ahead now."""
        upcoming = self._heap[0][0] if self._heap else None
        if upcoming is not None and upcoming != self._preparing_for and now < upcoming <= now + PREPARE_SECONDS:
            self._preparing_for = upcoming
            self._to_prepare = sorted(key for key, second in self._wake.items() if second == upcoming)
        if not self._to_prepare or self._preparing_for is None or now >= self._preparing_for - PREPARE_MARGIN:
            self._to_prepare = []
            return False
        chunk, self._to_prepare = self._to_prepare[:PREPARE_CHUNK], self._to_prepare[PREPARE_CHUNK:]
        second = self._preparing_for
        # On one thread: planning reads the cache (only a schedule just moved in from another
        # shard asks the API for its Jobs), so it is CPU, and sixteen threads taking turns at the
        # GIL for it cost twice the plans themselves (benchmarks/bench_launch_cost.py: 0.19 ms
        # per plan on the reconcile threads, 0.09 on one).
        made = await asyncio.get_running_loop().run_in_executor(
            self._driver, lambda: [self._prepare_one((key, second)) for key in chunk])
        self._prepared.update((key, prepared) for key, prepared in zip(chunk, made) if prepared is not None)
        return True

    def _prepare_one(self, item: tuple[Key, float]) -> Prepared | None:
        key, second = item
        try:
            return prepare(self.cluster, key, int(second), self.staging, fleet=self.fleet)
        except Exception:  # planned again at the second, where an error is counted and logged
            return None

    def _start_share(self, items: list[tuple[Key, float]]) -> list[Started | Exception | None]:
        """The first pass of a share: plan (or take the plans made ahead), and release what
        starts at this second."""
        now = items[0][1]
        return start_all(self.cluster, [(key, self._prepared.pop(key, None)) for key, _ in items], now,
                         self.staging, fleet=self.fleet)

    def _finish_share(self, items: list[tuple[Key, Started | Exception | None, float]]) -> list[float | None]:
        """The second pass of a share: the rest of each plan; the second each asks to be looked
        at again."""
        started = [item[1] for item in items if isinstance(item[1], Started)]
        finished = iter(finish_all(self.cluster, started))  # type: ignore[arg-type]
        wakes = [self._after(key, next(finished) if isinstance(outcome, Started) else outcome, now)
                 for key, outcome, now in items]
        if self.pools is not None:  # a run launched, ended or retried there: its pool may start one
            self.pools.mark_for([key for key, _, _ in items])
        return wakes

    def _after(self, key: Key, outcome: float | Exception | None, now: float) -> float | None:
        """The second to look at a schedule again: its plan's; after a failure, none (``_retry_in``)."""
        if isinstance(outcome, Exception):
            self._retry_in(key, self._failed(key, outcome))
            return None
        failures = self._failures.pop(key, 0)
        self._not_refused(key)
        if failures:
            METRICS.reconciles_failing.set(len(self._failures))
            log.info("reconciled %s/%s after %d failed tries", *key, failures)
        return outcome

    def _failed(self, key: Key, error: Exception) -> float:
        """Count and say a failed reconcile, in one log line a failing streak (the streak's end says
        how many tries it took); the seconds to wait before it is tried again."""
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        wait = retry.delay(error, failures)
        METRICS.reconcile_errors.inc()
        METRICS.reconciles_failing.set(len(self._failures))
        if isinstance(error, WriteRefused):
            self._refused(key, error.refusal, failures == 1)
        elif failures > 1:
            return wait
        elif retry.transient(error) or isinstance(error, ApiException):  # the API's answer: no traceback
            log.warning("reconciling %s/%s failed (%s); trying again in %.1f s", *key, retry.said(error), wait)
        else:  # a bug: its traceback, once a streak
            log.error("reconciling %s/%s failed; trying again in %.1f s", *key, wait, exc_info=error)
        return wait

    def _refused(self, key: Key, refusal: Refusal, first: bool) -> None:
        """A write the API server refused: counted, said in the log once a streak, and on the schedule
        (``Cluster.say_refusal``) unless its namespace is being terminated (the schedule goes next)."""
        METRICS.refusals.labels(refusal.verb, refusal.resource, refusal.reason).inc()
        if first:
            log.warning("%s/%s: the API server refused a write (%s %s): %s; trying again until it is let through",
                        *key, refusal.code, refusal.reason, refusal.said())
        if refusal.terminating:  # not a refusal to alert on: the namespace's controller deletes the schedule
            return
        if key not in self._refused_now:
            self._refused_now.add(key)
            METRICS.schedules_refused.set(len(self._refused_now))
        schedule = self.cluster.schedule(*key)
        if schedule is None:
            return
        try:
            self.cluster.say_refusal(schedule, refusal, int(self.clock.seconds() // 60))
        except Exception as error:  # the Event is queued; only the condition's write can fail here
            log.debug("%s/%s: could not say the refusal on the schedule: %s", *key, retry.said(error))

    def _not_refused(self, key: Key) -> None:
        if key in self._refused_now:
            self._refused_now.discard(key)
            METRICS.schedules_refused.set(len(self._refused_now))

    def _retry_in(self, key: Key, seconds: float) -> None:
        """Reconcile the schedule again in ``seconds`` of real time: a wait for the API server to
        come back is the network's time, not the schedules' clock (which tests set by hand)."""
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(loop.call_later, seconds, self._touch_if_known, key)

    def _touch_if_known(self, key: Key) -> None:
        if key in self.known:
            self._touch(key)

    def _wake_at(self, key: Key, second: float | None) -> None:
        if second is not None and key in self.known:
            self._wake[key] = second  # replaces any earlier entry: this plan is the newest word
            heapq.heappush(self._heap, (second, key))

    async def _sleep(self, now: float) -> None:
        next_second = self._heap[0][0] if self._heap else (now // 60 + 1) * 60
        if self._heap and next_second != self._preparing_for:
            next_second -= PREPARE_SECONDS  # wake in time to plan its schedules ahead
        pool_second = None if self.pools is None else self.pools.next_second()
        if pool_second is not None:
            next_second = min(next_second, pool_second)
        delay = min(MAX_IDLE_SECONDS, await asyncio.to_thread(self.clock.seconds_until, next_second))
        self._signal.clear()
        if self._dirty:
            return
        try:
            await asyncio.wait_for(self._signal.wait(), timeout=max(delay, MIN_SLEEP_SECONDS))
        except asyncio.TimeoutError:
            pass


def needs_a_look(body: Mapping[str, Any], known: bool) -> bool:
    """Whether a schedule seen by its watch is worth a reconcile now (else its wake-up time stands).

    Most events of a schedule are the operator's own status patches, which the cache has already
    (the patch's answer): they change nothing to look at. A schedule is looked at when it is new
    to the loop, when its spec changed (its generation is past the status's
    ``observedGeneration``), or when it asks for a manual run, a backfill or a resume (annotations)."""
    return (not known or _spec_changed(body) or pending_trigger(body) is not None
            or pending_backfill(body) is not None or pending_resume(body))


def _spec_changed(body: Mapping[str, Any]) -> bool:
    return body["metadata"].get("generation") != (body.get("status") or {}).get("observedGeneration")


def shares(items: list[Any], count: int) -> list[list[Any]]:
    """``items`` in at most ``count`` runs in order, all as long as the first but the last."""
    size = -(-len(items) // count) if items else 1
    return [items[start:start + size] for start in range(0, len(items), size)]


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


@contextmanager
def no_collection_pauses() -> Iterator[None]:
    """No garbage collection during the first pass: with thousands of schedules in memory, a full
    collection stops every thread for a tenth of a second or more, and the first pass is the
    busy second's releases. Collection resumes (and catches up) as soon as they are out."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class Prepared:
    """A schedule's plan made ahead for the second it is due at, and what it was made from.

    It is the plan of any moment of that second while the schedule and its Jobs are still
    these: a plan is a pure function of them, the minute and the second, and the second
    only ever meets whole seconds (start times with their jitter, held Jobs' releases).
    Of the schedule and its Jobs it keeps a digest (``made_from``), not the objects: at a
    herd's second every schedule's plan is held at once, and each its own parsed copy of
    the schedule was the plan's size again (issue 47, ``benchmarks/bench_operator_memory.py``).
    The plan is kept (``kept``): its Jobs' bodies JSON, its status patches their changes."""

    second: int
    made_from: bytes  # made_from(schedule, jobs)
    plan: Plan  # kept
    pool_found: bool = True

    def holds(self, schedule: dict[str, Any], jobs: list[dict[str, Any]], now: float, pool_found: bool = True) -> bool:
        return (int(now) == self.second and pool_found == self.pool_found
                and made_from(schedule, jobs) == self.made_from)


def made_from(schedule: Mapping[str, Any], jobs: list[dict[str, Any]]) -> bytes:
    """A digest of a schedule and its Jobs as JSON: the same objects in the same order give the same
    one (the cache's, unchanged, do); any change gives another, but for a 1 in 2^128 chance."""
    digest = hashlib.blake2b(orjson.dumps(schedule, option=orjson.OPT_NON_STR_KEYS), digest_size=16)
    for job in jobs:
        digest.update(orjson.dumps(job, option=orjson.OPT_NON_STR_KEYS))
    return digest.digest()


def pool_found(cluster: Cluster, schedule: Mapping[str, Any]) -> bool:
    """Whether the CronPool a schedule names exists (True for a schedule without one)."""
    pool = pool_of(schedule)  # type: ignore[arg-type]
    return pool is None or cluster.pool(schedule["metadata"]["namespace"], pool) is not None


def prepare(cluster: Cluster, key: Key, second: int, staging: bool = False, *, fleet: bool = False) -> Prepared | None:
    """The plan of a schedule at ``second``, made ahead of it. None: the schedule is gone, or
    runs it records are missing from the cache (``start`` asks the API about those)."""
    schedule = cluster.schedule(*key)
    if schedule is None:
        return None
    jobs = cluster.plan_jobs(schedule)
    found = pool_found(cluster, schedule)
    result = plan(schedule, jobs, second // 60, second=second, staging=staging, pool_found=found, fleet=fleet)
    if result.lost:
        return None
    return Prepared(second, made_from(schedule, jobs), kept(result, schedule.get("status") or {}), found)


@dataclass
class Started:
    """A reconcile between its passes: the plan, and what its first pass did."""

    key: Key
    schedule: dict[str, Any]  # what carrying out its plan reads (``addressed``)
    plan: Plan  # kept (``kept``)
    rest: Plan  # the effects still to carry out
    now: float
    released_at: float | None  # the clock once the first pass's writes were out (None: there were none)
    complete: bool  # False: a staged Job to release was gone, and the plan stopped there
    metrics: Metrics


def reconcile(cluster: Cluster, key: Key, now: float, metrics: Metrics = METRICS,
              staging: bool = False, *, fleet: bool = False) -> float | None:
    """Read one schedule and its Jobs, plan, apply, count and log; the second to look again.
    ``now`` is seconds since 1970: the core decides by the minute, jitter by the second."""
    started = start(cluster, key, now, staging, metrics, fleet=fleet)
    return None if started is None else finish(cluster, started)


def start(cluster: Cluster, key: Key, now: float, staging: bool = False,
          metrics: Metrics = METRICS, prepared: Prepared | None = None, *, fleet: bool = False) -> Started | None:
    """Read one schedule and its Jobs, plan (or take ``prepared``, if it still holds), and
    carry out the plan's first writes: the releases, resumes and creates that start runs at
    this second. None: the schedule is gone."""
    [started] = start_all(cluster, [(key, prepared)], now, staging, metrics, fleet=fleet)
    if isinstance(started, Exception):
        raise started
    return started


def start_all(cluster: Cluster, items: list[tuple[Key, Prepared | None]], now: float, staging: bool = False,
              metrics: Metrics = METRICS, *, fleet: bool = False) -> list[Started | Exception | None]:
    """``start`` of each schedule, their first writes carried out together (``Cluster.apply_all``):
    for each, what ``start`` returns, or the error that stopped it.

    The first ``ROUND_PART`` schedules go first, planned and sent before the rest of the share is
    planned: a plan taken from those made ahead is still checked against the cache
    (``Prepared.holds``), and a herd's share is hundreds, so the first launch of herd 10,000 went
    out 0.29 s after its second, CronJob's 0.10 (issue 47). The rest is planned whole before its
    writes go out, so that the thread's connection then sends part after part: planned a part at
    a time, the connection waits while each part is planned, and herd 10,000 went at 511 requests
    a second against 686 (one run each)."""
    first, rest = items[:ROUND_PART], items[ROUND_PART:]
    return [*_start_part(cluster, first, now, (staging, fleet), metrics),
            *(_start_part(cluster, rest, now, (staging, fleet), metrics) if rest else [])]


def _start_part(cluster: Cluster, items: list[tuple[Key, Prepared | None]], now: float, modes: tuple[bool, bool],
                metrics: Metrics) -> list[Started | Exception | None]:
    """A part of ``start_all``: each schedule planned, then their first writes together."""
    planned = [_planned_or_error(cluster, key, now, modes, metrics, prepared) for key, prepared in items]
    releasing = [(index, each) for index, each in enumerate(planned) if isinstance(each, tuple) and each[1].effects]
    outcomes = cluster.apply_all([(each.schedule, urgent) for _, (each, urgent) in releasing]) if releasing else []
    released_at = metrics.now_seconds() if releasing else None
    started = [each[0] if isinstance(each, tuple) else each for each in planned]
    for (index, (each, urgent)), outcome in zip(releasing, outcomes):
        each.plan = carried_out(each.plan, len(urgent.effects))
        if isinstance(outcome, Exception):
            started[index] = outcome
        else:
            each.complete, each.released_at = outcome is not False, released_at
    return started


def _planned_or_error(cluster: Cluster, key: Key, now: float, modes: tuple[bool, bool], metrics: Metrics,
                      prepared: Prepared | None) -> tuple[Started, Plan] | Exception | None:
    try:
        return _planned(cluster, key, now, modes, metrics, prepared)
    except Exception as error:
        return error


def _planned(cluster: Cluster, key: Key, now: float, modes: tuple[bool, bool], metrics: Metrics,
             prepared: Prepared | None) -> tuple[Started, Plan] | None:
    """The schedule's plan at ``now``, split: (its reconcile between passes, its first writes).
    ``modes``: (staging, fleet)."""
    namespace, name = key
    staging, fleet = modes
    schedule = cluster.schedule(namespace, name)
    if schedule is None:
        metrics.forget(namespace, name)
        return None
    jobs = cluster.plan_jobs(schedule)
    found = pool_found(cluster, schedule)
    result = _taken(prepared, schedule, jobs, now, metrics, found) or plan(
        schedule, jobs, int(now // 60), second=now, staging=staging, pool_found=found, fleet=fleet)
    if result.lost:  # the cache may lag a Job another replica just made: ask the API before calling it gone
        result = plan(schedule, cluster.live_jobs(namespace, name), int(now // 60), second=now, staging=staging,
                      pool_found=found, fleet=fleet)
    result = kept(result, schedule.get("status") or {})  # a plan made ahead is kept already
    urgent, rest = result.split()
    return Started(key, addressed(schedule), result, rest, now, None, True, metrics), urgent


def addressed(schedule: Mapping[str, Any]) -> dict[str, Any]:
    """What a reconcile keeps of its schedule through its passes: what carrying out its plan reads
    (``apply``: the names its writes go to, the uid an Event and an adopted Job name; its plan is
    kept, its status patches made the change from the old status: ``kept``) and of the old status
    the runs the launch's record reads (``_recorded``: the log's fields, the active gauge). A
    herd's second holds every schedule's through its passes, which last as long as the API server
    takes the launches: the parsed spec and the old status were most of each (issue 47)."""
    metadata = schedule["metadata"]
    return {"metadata": {key: metadata[key] for key in ADDRESSING if key in metadata},
            "status": runs_of(schedule.get("status") or {})}


ADDRESSING = ("name", "namespace", "uid")  # what apply and the Events read of a schedule being carried out


def _taken(prepared: Prepared | None, schedule: dict[str, Any], jobs: list[dict[str, Any]], now: float,
           metrics: Metrics, found: bool = True) -> Plan | None:
    """The plan made ahead, if it holds now (counted either way)."""
    if prepared is None:
        return None
    holds = prepared.holds(schedule, jobs, now, found)
    metrics.plans_ahead.labels("taken" if holds else "stale").inc()
    return prepared.plan if holds else None


def finish(cluster: Cluster, started: Started) -> float | None:
    """Carry out the rest of a started reconcile's plan, count and log; the second to look again."""
    [outcome] = finish_all(cluster, [started])
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def finish_all(cluster: Cluster, items: list[Started]) -> list[float | Exception | None]:
    """``finish`` of each started reconcile, their writes carried out together: for each, the
    second to look again, or the error that stopped it."""
    outcomes: list[float | Exception | None] = [each.now for each in items]  # look again at once: a fresh
    # plan launches afresh what could not be released
    going_on = [index for index, each in enumerate(items) if each.complete]
    applied = cluster.apply_all([(items[index].schedule, items[index].rest) for index in going_on]) if going_on else []
    for index, outcome in zip(going_on, applied):
        if isinstance(outcome, Exception):
            outcomes[index] = outcome
        elif outcome is not False:
            try:
                outcomes[index] = _recorded(items[index])
            except Exception as error:
                outcomes[index] = error
    return outcomes


def _recorded(started: Started) -> float | None:
    """Count and log what a carried-out plan did; the second to look again."""
    (namespace, name), schedule, result, metrics = started.key, started.schedule, started.plan, started.metrics
    # The launch delay runs to the moment the Jobs exist (the clock once their create returned, in
    # this pass or the first) or are released.
    if started.rest.create:
        created_at = metrics.now_seconds()
    elif result.create and started.released_at is not None:
        created_at = started.released_at
    else:
        created_at = started.now
    metrics.record(namespace, name, result, created_at, schedule.get("status"), released_seconds=started.released_at)
    for event, fields in zip(result.events, event_fields(namespace, name, result, schedule.get("status"))):
        log.info("%s/%s: %s: %s", namespace, name, event.reason, event.message, extra=fields)
    return result.wake_second
