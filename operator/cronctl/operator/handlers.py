"""kopf registrations: the operator's process, its life and its probe.

kopf runs the process: the signals, the start-up and clean-up handlers
(``start`` makes the watches and starts the scheduler's task, ``stop`` stops
them), the liveness probe (``health_probe``: the scheduler's last pass, each
watch's freshness), and the process's end when the scheduler's task dies
(``run``: the task's end sets kopf's stop flag, and the process exits 1 so
that the Deployment restarts it). It watches nothing and posts nothing: the
work is cronctl's own. The decisions are the core's, the API work is
``apply``'s, the timing is ``loop``'s. What the loop looks at comes from the
watches started here, each on a thread of its own (``jobwatch``,
``schedulewatch``), not from kopf's per-object event handlers: every launch's
status patch comes back as a watch event of its schedule, and kopf's
processing of it (views, loggers, a worker task, the handler's matching and
call on the event loop) was a fifth of the operator's CPU per launch
(20-32% of its GIL time, benchmarks/README.md), for an event that changes
nothing to look at; of the Jobs' events, about 28%.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import kopf

from .apply import Cluster
from .kube.credentials import load_client
from .kube.cache import Cache
from .kube.jobwatch import watches
from .kube.poolwatch import pool_watches
from .pool_looks import Pools
from ..clock import SkewEstimate, node_clock_from_environment, operator_clock
from .kube.leader import Election, Leadership
from .kube.events import POSTERS, EventRecorder
from .loop import CONCURRENCY, Scheduler
from .kube.schedulewatch import schedule_watches
from .shard import Shard
from .manifests import EventSpec
from .metrics import METRICS
from .skew import DEFAULT_THRESHOLD_SECONDS, EVERY_SECONDS, SkewWatch
from .kube.watch import Watch
from . import health

LEASE_REFERENCE = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}
# The reconciles, the Event posters, a spare; and one per watch (of Jobs, CronSchedules and CronPools).
CONNECTIONS = CONCURRENCY + POSTERS + 1
FLEET_VARIABLE = "CRONCTL_FLEET_MODE"  # on, or off (the default), where ``cronctl operator --[no-]fleet`` is not given
STAGING_VARIABLE = "CRONCTL_STAGING"  # on, or off (the default), where ``cronctl operator --[no-]staging`` is not given
FIRST_LIST_SECONDS = 5.0  # start-up's first list of Jobs, tried again this often while no connection can be made
FLUSH_SECONDS = 3.0  # at stop, how long the Event series' last counts may take (the grace period is 30 s)
SCHEDULER_DIED = 1  # the process's exit status when the scheduler's task died

log = logging.getLogger("cronctl.operator")


@dataclass(frozen=True)
class Options:
    """What ``cronctl operator`` hands the process through kopf's memo (``memo.options``)."""

    namespaces: tuple[str, ...] = ()  # none: every namespace
    staging: bool | None = None  # ``--[no-]staging``; None: STAGING_VARIABLE decides
    shard: Shard = Shard()  # ``--shard``: the CronSchedules this operator owns
    election: Election = Election(enabled=False)
    clock: str = "node"  # ``--clock``: node, or api-server
    skew_threshold: float = DEFAULT_THRESHOLD_SECONDS  # ``--clock-skew-threshold``
    fleet: bool | None = None  # ``--[no-]fleet``; None: FLEET_VARIABLE decides


@dataclass
class Running:
    """What start-up made, for clean-up (``memo.running``)."""

    task: asyncio.Task[None]
    watches: list[Watch]
    events: EventRecorder | None = None
    skew_task: asyncio.Task[None] | None = None
    scheduler: Scheduler | None = None
    leading: threading.Event | None = None


def run(options: Options, liveness: str | None = None) -> int:
    """Run the operator under kopf until a signal stops it (0) or its scheduler's task dies
    (SCHEDULER_DIED). ``liveness``: the URL kopf serves the probe at."""
    memo = kopf.Memo(options=options, stop=asyncio.Event(), exit_status=0)
    logging.getLogger("aiohttp.server").addFilter(_probe_failure_said)
    kopf.run(standalone=True, clusterwide=not options.namespaces, namespaces=list(options.namespaces),
             liveness_endpoint=liveness, memo=memo, stop_flag=memo.stop)
    return int(memo.exit_status)


def staging_from_environment(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether to stage launches (create scheduled firings' Jobs ahead of their minute, suspended).
    Off unless asked: measured, a staged create and its release cost the API server more than one
    create at the minute and the Jobs run later, not sooner (benchmarks/README.md, issue 32)."""
    return _switch(environ, STAGING_VARIABLE)


def fleet_from_environment(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether to run in fleet mode (no per-launch status field: docs/fleet-mode.md). Off unless asked."""
    return _switch(environ, FLEET_VARIABLE)


def _switch(environ: Mapping[str, str], variable: str) -> bool:
    value = environ.get(variable, "off").strip().lower()
    if value not in ("on", "off"):
        raise ValueError(f"{variable}: {value!r} must be on or off")
    return value == "on"


@kopf.on.startup()
async def start(settings: kopf.OperatorSettings, memo: kopf.Memo, logger: logging.Logger, **_: Any) -> None:
    options: Options = memo.get("options") or Options()
    namespaces, shard = list(options.namespaces), options.shard
    settings.posting.enabled = False  # the operator posts its own Events, with reasons
    # No cluster-scoped discovery of namespaces and CRDs: the resources and namespaces are
    # known, and a namespaced install grants nothing cluster-wide.
    settings.scanning.disabled = True
    try:
        staged = staging_from_environment() if options.staging is None else options.staging
        fleet = fleet_from_environment() if options.fleet is None else options.fleet
    except ValueError as error:
        raise kopf.PermanentError(str(error)) from None  # the operator stops: a setting, not a hiccup
    watched = len(namespaces or [None])
    cache = Cache()  # what the watches showed; reconciles read it instead of the API
    node = node_clock_from_environment()
    skew = SkewEstimate(node.seconds)  # told the Date of the API's answers by the operator's connections
    METRICS.watch_skew(skew)
    cluster = Cluster(load_client(CONNECTIONS + 3 * watched), cache, record_events_later=True, shard=shard,
                      skew=skew, requests=METRICS.api_requests)  # cronctl_api_requests_total and its latency
    leadership = Leadership(options.election, cluster.rest)
    leadership.start()
    METRICS.watch_leading(leadership.leading)  # cronctl_leader: 1 while this replica acts
    clock = operator_clock(options.clock, node, skew)
    METRICS.use_clock(clock.seconds)  # a launch's delay measured by the clock it fires by
    if cluster.events is not None:
        cluster.events.use_clock(clock.seconds)  # and its Events stamped by it
    scheduler = Scheduler(cluster, clock, leading=leadership.leading, staging=staged, pools=Pools(cluster, shard),
                          fleet=fleet)
    # Every Job a schedule owns is in the cache before the first reconcile (the schedules' watch
    # lists its schedules on its thread, and the loop reconciles them as they come).
    job_watches = watches(cluster.rest, cache, namespaces, shard.job_selector, scheduler.touch)
    known = sum([await _first_list(watch) for watch in job_watches])
    logger.info("cronctl: %s (label selector %s): %d Jobs of its CronSchedules known", shard.title,
                shard.schedule_selector, known)
    pools = pool_watches(cluster.rest, cache, namespaces, scheduler.pool_changed)
    known_pools = sum([await asyncio.to_thread(_listed_or_none, watch) for watch in pools])
    logger.info("cronctl: %d CronPools known", known_pools)
    started = [*job_watches, *pools,
               *schedule_watches(cluster.rest, cache, namespaces, shard.schedule_selector, scheduler)]
    for watch in started:
        watch.start()
    # What start-up made (the modules of kopf, the kubernetes client and pydantic: most of the
    # heap) lives as long as the process: out of the collector's full passes, which otherwise
    # walked it every few launches (measured: 4 full passes of 40 ms in 2 minutes of 500
    # schedules launching every minute; 1 of 15 ms after this).
    gc.freeze()
    watch = SkewWatch(skew, options.skew_threshold, _lease_poster(cluster, options.election))
    task = asyncio.create_task(scheduler.run(), name="cronctl-scheduler")
    task.add_done_callback(lambda ended: _scheduler_ended(ended, memo))
    memo.running = Running(task, started, cluster.events,
                           asyncio.create_task(_watch_skew(watch), name="cronctl-clock-skew"),
                           scheduler, leadership.leading)
    METRICS.use_readiness(lambda: health.readiness(_seen(started), _leads(leadership.leading)))  # /readyz
    logger.info("cronctl scheduler started; staged launches %s; firing by the %s clock", "on" if staged else "off",
                "API server's" if options.clock == "api-server" else "node's")


def _probe_failure_said(record: logging.LogRecord) -> bool:
    """Not aiohttp's traceback of a probe that failed: kopf said why already, in one line
    ("Activity 'cronctl' failed permanently: ...")."""
    error = record.exc_info[1] if record.exc_info else None
    return not (error is not None and isinstance(error.__cause__, kopf.PermanentError))


def _scheduler_ended(task: asyncio.Task[None], memo: kopf.Memo) -> None:
    """The scheduler's task ended. Cancelled, the operator is stopping; else (an exception escaped
    the loop) nothing is scheduled any more: said once with its traceback, and the process ends
    with SCHEDULER_DIED, so that the Deployment restarts it."""
    if task.cancelled():
        return
    error = task.exception()
    log.error("the scheduler stopped%s; the operator exits", "" if error else " (it returned)", exc_info=error)
    memo.exit_status = SCHEDULER_DIED
    stop = memo.get("stop")
    if stop is not None:
        stop.set()


@kopf.on.probe(id="cronctl", errors=kopf.ErrorsMode.PERMANENT)
async def health_probe(memo: kopf.Memo, **_: Any) -> dict[str, Any]:
    """The probe's answer (``health.report``); a scheduler not alive fails it (kopf answers 500)."""
    running: Running | None = memo.get("running")
    if running is None or running.scheduler is None:
        raise kopf.PermanentError("the operator has not started")
    now = time.monotonic()
    scheduler = health.SchedulerSeen(_task_state(running.task), running.scheduler.passed_at)
    problem = health.not_alive(scheduler, now)
    if problem is not None:
        raise kopf.PermanentError(problem)
    return health.report(scheduler, _seen(running.watches), _leads(running.leading), now)


def _seen(watches: Sequence[Any]) -> list[health.WatchSeen]:
    return [health.WatchSeen(watch.name, watch.listed_at, watch.heard_at) for watch in watches]


def _leads(leading: threading.Event | None) -> bool:
    return leading is None or leading.is_set()


def _task_state(task: asyncio.Task[None]) -> str:
    if not task.done():
        return health.RUNNING
    return health.FAILED if not task.cancelled() and task.exception() is not None else health.ENDED


async def _first_list(watch: Watch) -> int:
    """A watch's list before the loop starts. A connection that cannot be made (the API server
    away, its certificate not trusted, which ``rest.Trust`` says) is tried again every
    FIRST_LIST_SECONDS and said once, instead of failing the start-up, which kopf says with a
    traceback each time it tries it again, a minute later."""
    failing = False
    while True:
        try:
            return await asyncio.to_thread(watch.list)
        except OSError as error:
            if not failing:
                logging.getLogger("cronctl.operator").warning("listing the %s failed (%s); trying again every %g s",
                                                              watch.what, error, FIRST_LIST_SECONDS)
                failing = True
            await asyncio.sleep(FIRST_LIST_SECONDS)


def _listed_or_none(watch: Watch) -> int:
    """The pools' first list; if it fails (the CronPool CRD not installed yet), the watch's own
    retries list them later, and meanwhile pooled schedules say their pool is missing."""
    try:
        return watch.list()
    except Exception as error:
        logging.getLogger("cronctl.operator").warning("listing CronPools failed (%s): is crds/cronpool.yaml "
                                                      "installed? The watch tries again", error)
        return 0


async def _watch_skew(watch: SkewWatch) -> None:
    while True:
        await asyncio.sleep(EVERY_SECONDS)
        await asyncio.to_thread(watch.look)


def _lease_poster(cluster: Cluster, election: Election) -> Callable[[EventSpec], None] | None:
    """Where a clock skew is said: an Event on the operator's Lease, when it elects one."""
    if not election.enabled:
        return None
    return lambda event: cluster.post_event_on(LEASE_REFERENCE | {"namespace": election.namespace,
                                                                   "name": election.name}, event)


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    running: Running | None = memo.get("running")
    if running is None:
        return
    running.task.cancel()
    if running.skew_task is not None:
        running.skew_task.cancel()
    await asyncio.gather(running.task, return_exceptions=True)  # its last pass ends before the watches do
    for watch in running.watches:
        watch.stop()
    if running.events is not None:  # the Event series' counts not written yet, if the API answers soon
        await asyncio.to_thread(running.events.flush, FLUSH_SECONDS)
