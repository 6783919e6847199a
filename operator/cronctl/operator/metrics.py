"""Prometheus metrics: what each applied Plan did, per schedule and namespace.

The mapping is pure: ``counts(plan)`` turns a plan's Events into counter
increments and ``launch_delays(plan, now_seconds)`` its new Jobs into
nominal-to-creation delays, and its released staged Jobs into due-to-release
delays, so tables of plans test them without a server.
``Metrics`` owns its own ``CollectorRegistry`` (never the process-wide
default), so every test, and every operator in one process, counts apart.
``serve`` exposes one registry over HTTP at ``/metrics``, and the operator's
readiness at ``/readyz`` (``health.readiness``, told by ``use_readiness``).

Counters are per (namespace, schedule): their series appear at a schedule's
first increment. They and ``cronctl_active_runs`` are plain numbers by schedule
in a collector of their own (``PerSchedule``), not prometheus_client's labelled
children, which cost 0.7 KiB each (issue 47: memory per schedule). ``cronctl_leader`` (whether this replica acts) and
``cronctl_build_info{version}`` are there from the start. The launch-delay histogram is per namespace only, to keep
the number of series bounded on large fleets (17 per namespace). The API
requests of the operator's own transport (``ApiRequests``, told by
``kube.rest``) are by verb, resource and code, never by namespace or name.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import Counter as Tally
from typing import Any, Callable, Iterator, Mapping
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import ThreadingWSGIServer

from ..about import package_version
from ..clock import SkewEstimate
from .effects import Plan, ReleaseJob
from .resource import ATTEMPT_LABEL, REASON_ANNOTATION, SCHEDULED_ANNOTATION, parse_rfc3339
from .status import listed_active

Key = tuple[str, str]  # (namespace, name)

# counter (without cronctl_ and _total) -> (the Event reasons it counts, HELP text)
COUNTERS: dict[str, tuple[tuple[str, ...], str]] = {
    "launches": (("Launched",), "Runs launched (a run's first Job created), scheduled, catch-up or manual."),
    "skips": (("Skipped",), "Schedule times skipped because a run was still active (Forbid)."),
    "replaces": (("Replaced",), "Active runs deleted to make room for a newer one (Replace)."),
    "overflows": (("TooManyMissedSchedules",),
                  "Times a schedule went into overflow: more missed times than its missedSchedulesLimit "
                  "(the most recent still launched through the policy)."),
    "missed": (("MissedSchedule",), "Schedule times never started: a newer time launched in their place, or "
                                    "the starting deadline passed (a fault or an outage outlasted them)."),
    "timeouts": (("TimedOut",), "Runs that reached timeoutMinutes."),
    "retries": (("Retried",), "Later attempts started after a failed attempt (maxRetries)."),
    "successes": (("Succeeded",), "Runs that succeeded."),
    "failures": (("Failed", "JobGone"), "Runs that failed, their Job deleted under them included."),
    "queued": (("Queued",), "Schedule times that waited for the active run (WaitForLast)."),
    "coalesced": (("Coalesced",), "Waiting schedule times that gave their place to a newer one (WaitForLast)."),
    "pauses": (("PausedOnFailures",), "Times a schedule paused itself after pauseOnFailures failed runs in a row."),
}
# Not counted: AttemptFailed (a failed attempt does not end its run; Retried counts what follows).
_COUNTER_OF_REASON = {reason: name for name, (reasons, _) in COUNTERS.items() for reason in reasons}

# From a tenth of a second (on time) to an hour (a long outage caught up).
DELAY_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
# A request's seconds: a healthy API server answers a read or a write in 1-25 ms (etcd's commit
# included), a list of thousands in tens; a loaded one in hundreds, and 1 s is the API server's own
# SLO for a mutating call (client-go's buckets start at 5 ms, which hides a healthy server's
# spread). A write's answer is waited for 10 s, a read's 60 s: the last buckets are timeouts.
API_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0)


def counts(plan: Plan) -> dict[str, int]:
    """The counter increments a plan makes: counter name -> how many, for its counted Events."""
    tally: Tally[str] = Tally()
    for event in plan.events:
        if event.reason in _COUNTER_OF_REASON:
            tally[_COUNTER_OF_REASON[event.reason]] += event.times
    return dict(tally)


def launch_delays(plan: Plan, now_seconds: float, released_seconds: float | None = None) -> list[float]:
    """Seconds from each launched run's nominal time to ``now_seconds``, when its Job was created,
    and from each released staged Job's due second (its nominal time, plus its jitter) to
    ``released_seconds`` (``now_seconds`` if not given), when it was released.

    Only a run's first attempt counts (a retry is late by design, and so is a
    manual run's "nominal" time, which is just the minute it was asked for);
    a catch-up launch counts, since that lateness is what the histogram is for.
    A nominal time after ``now_seconds`` (clock skew) counts as no delay.
    """
    released = now_seconds if released_seconds is None else released_seconds
    delays = [max(0.0, released - effect.due) for effect in plan.effects if isinstance(effect, ReleaseJob)]
    for manifest in plan.create:
        metadata = manifest.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        if (metadata.get("labels") or {}).get(ATTEMPT_LABEL, "1") != "1":
            continue
        if annotations.get(REASON_ANNOTATION) in ("manual", "backfill"):  # asked for by hand: not late
            continue
        nominal = parse_rfc3339(annotations.get(SCHEDULED_ANNOTATION))
        if nominal is not None:
            delays.append(max(0.0, now_seconds - nominal * 60))
    return delays


def active_runs(plan: Plan, status: Mapping[str, Any] | None) -> int:
    """The schedule's active runs once the plan is applied, as the plan counts them (in fleet mode
    too, whose status has no activeCount and whose launches write none); a plan that did not
    count them (a spec refused): the status it wrote, else the old one, by its activeCount or
    the runs it lists (fleet mode's recordedActive)."""
    if plan.active is not None:
        return plan.active
    current = plan.runs if plan.runs is not None else (status or {})
    if current.get("activeCount") is not None:
        return int(current["activeCount"])
    return len(listed_active(current))


class ApiRequests:
    """The requests the operator's own transport made (``kube.rest``; kopf's are not among them):
    counted by verb, resource and code, timed by verb and resource, as client-go's
    ``rest_client_requests_total`` and ``rest_client_request_duration_seconds`` are (with the
    API's verbs and resources for its method and host). The transport tells ``observe`` of each
    (``kube.request_kinds.RequestObserver``); each label set's children are looked up once."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.total = Counter(
            "cronctl_api_requests", "Requests to the API server by verb, resource and the answer's status code "
            "(<error>: no answer, the connection refused, reset or timed out); each try counts, a watch at its "
            "start.", ["verb", "resource", "code"], registry=registry)
        self.duration = Histogram(
            "cronctl_api_request_duration_seconds", "Seconds from a request's send to its answer, by verb and "
            "resource (a watch: to its answer's head; a pipelined request: to its own answer).",
            ["verb", "resource"], buckets=API_BUCKETS, registry=registry)
        self._children: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    def observe(self, verb: str, resource: str, code: str, seconds: float) -> None:
        children = self._children.get((verb, resource, code))
        if children is None:  # a new label set: labels() takes a lock and builds the children's key
            children = self._children[verb, resource, code] = (self.total.labels(verb, resource, code),
                                                               self.duration.labels(verb, resource))
        children[0].inc()
        children[1].observe(seconds)


ACTIVE_HELP = ("Active runs of a schedule (its status.activeCount; in fleet mode, which writes none, the runs "
               "its Jobs and status record).")


class PerSchedule:
    """The series of each schedule (the counters of ``COUNTERS`` and ``cronctl_active_runs``) as
    plain numbers, exposed by ``collect`` as prometheus_client's labelled metrics would expose them
    (without ``_created``, which ``serve`` turns off anyway). A labelled child is an object with
    locks of its own, 0.7 KiB; three a schedule were 2 KiB of the operator's memory per schedule
    (issue 47, ``benchmarks/bench_operator_memory.py``), a number in a dict is 0.1."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, dict[Key, float]] = {name: {} for name in COUNTERS}
        self._active: dict[Key, float] = {}

    def count(self, counter: str, key: Key, n: float) -> None:
        with self._lock:
            counts = self._counts[counter]
            counts[key] = counts.get(key, 0.0) + n

    def set_active(self, key: Key, active: float) -> None:
        with self._lock:
            self._active[key] = float(active)

    def active(self, key: Key) -> float | None:
        with self._lock:
            return self._active.get(key)

    def forget(self, key: Key) -> None:
        """A schedule gone: its gauge goes (its counters stay, as counters do)."""
        with self._lock:
            self._active.pop(key, None)

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            counts = {name: list(values.items()) for name, values in self._counts.items()}
            active = list(self._active.items())
        labels = ["namespace", "schedule"]
        for name, (_, helptext) in COUNTERS.items():
            family = CounterMetricFamily(f"cronctl_{name}", helptext, labels=labels)
            for (namespace, schedule), value in counts[name]:
                family.add_metric([namespace, schedule], value)
            yield family
        gauge = GaugeMetricFamily("cronctl_active_runs", ACTIVE_HELP, labels=labels)
        for (namespace, schedule), value in active:
            gauge.add_metric([namespace, schedule], value)
        yield gauge


class Metrics:
    """The operator's metrics, in a registry of their own."""

    def __init__(self, registry: CollectorRegistry | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._clock = clock
        self.per_schedule = PerSchedule()
        self.registry.register(self.per_schedule)
        self.launch_delay = Histogram(
            "cronctl_launch_delay_seconds",
            "Seconds from a run's nominal (scheduled) time to the creation of its Job, or from the second "
            "a staged Job was due (nominal, plus jitter) to its release; first attempts, scheduled and "
            "catch-up runs.", ["namespace"], buckets=DELAY_BUCKETS, registry=self.registry)
        self.schedules = Gauge("cronctl_schedules", "CronSchedules the operator knows (reconciled, not deleted).",
                               ["namespace"], registry=self.registry)
        # Unlabelled, so that it is exported (at 0) before the first failure: an alert can rely on it.
        self.reconcile_errors = Counter(
            "cronctl_reconcile_errors", "Reconciles that failed, each tried again 0.1 s later, doubling to 5 s; the "
            "log names the schedule and the error.", registry=self.registry)
        self.reconciles_failing = Gauge(
            "cronctl_reconciles_failing", "Schedules whose last reconcile failed and that wait to be tried again.",
            registry=self.registry)
        self.refusals = Counter(
            "cronctl_refusals", "Writes the API server refused (an admission policy, a quota, RBAC, an invalid "
            "object, a namespace being terminated), by verb, resource and the API's reason; each is tried again "
            "as a failed reconcile is.", ["verb", "resource", "reason"], registry=self.registry)
        self.schedules_refused = Gauge(
            "cronctl_schedules_refused", "Schedules whose last reconcile stopped at a write the API server refused, "
            "and that wait to be tried again.", registry=self.registry)
        self.plans_ahead = Counter(
            "cronctl_plans_ahead", "Plans made seconds before the second their schedules were due at, by whether "
            "the schedule took it at that second (taken) or had changed since and was planned again (stale).",
            ["outcome"], registry=self.registry)
        self.clock_skew = Gauge(
            "cronctl_clock_skew_seconds", "The API server's clock minus this node's, estimated from the Date of "
            "the API's answers (NaN until measured): positive, the node's clock is behind.", registry=self.registry)
        self.clock_skew_error = Gauge(
            "cronctl_clock_skew_error_seconds", "How far cronctl_clock_skew_seconds may be off (NaN until measured).",
            registry=self.registry)
        self.clock_skew.set(float("nan"))
        self.clock_skew_error.set(float("nan"))
        pool_labels = ["namespace", "pool"]
        self.pool_queued = Gauge("cronctl_pool_queued", "Attempts waiting for a worker of a CronPool (its queue "
                                 "depth).", pool_labels, registry=self.registry)
        self.pool_busy = Gauge("cronctl_pool_busy", "Runs of a CronPool's schedules whose Jobs run now.",
                               pool_labels, registry=self.registry)
        self.pool_oldest_wait = Gauge(
            "cronctl_pool_oldest_wait_seconds", "How long the first attempt in a CronPool's queue has waited "
            "for a worker (0: none waits).", pool_labels, registry=self.registry)
        self.pool_wait = Histogram(
            "cronctl_pool_wait_seconds", "Seconds an attempt waited in its CronPool's queue before a worker "
            "started it.", pool_labels, buckets=DELAY_BUCKETS, registry=self.registry)
        # Unlabelled and set from the start (0 until told), so that "no replica leads" is a query
        # (CronctlNoLeader), not the absence of the schedules' gauges, which an empty cluster lacks too.
        self.leader = Gauge("cronctl_leader", "1 while this replica holds the Lease and acts (or runs with no "
                            "leader election), else 0.", registry=self.registry)
        self.build_info = Gauge("cronctl_build_info", "Always 1, labelled with the operator's version.",
                                ["version"], registry=self.registry)
        self.build_info.labels(package_version()).set(1)
        self.api_requests = ApiRequests(self.registry)
        self._readiness: Callable[[], tuple[bool, dict[str, Any]]] | None = None
        self._known: set[Key] = set()
        self._per_namespace: Tally[str] = Tally()
        self._lock = threading.Lock()

    def watch_skew(self, estimate: SkewEstimate) -> None:
        """The clock skew gauges read the estimate at each scrape."""
        def part(index: int) -> Callable[[], float]:
            return lambda: float("nan") if (skew := estimate.read()) is None else float(skew[index])
        self.clock_skew.set_function(part(0))
        self.clock_skew_error.set_function(part(1))

    def watch_leading(self, leading: threading.Event | None) -> None:
        """The leader gauge reads ``leading`` at each scrape (None: no leader election, it always acts)."""
        self.leader.set_function(lambda: 1.0 if leading is None or leading.is_set() else 0.0)

    def use_readiness(self, readiness: Callable[[], tuple[bool, dict[str, Any]]]) -> None:
        """What ``/readyz`` answers from now on (``health.readiness`` of the running operator)."""
        self._readiness = readiness

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """(ready, the answer): not ready until the operator has said how to tell."""
        if self._readiness is None:
            return False, {"ready": False, "synced": False, "leading": False, "waitingFor": ["the operator's start"]}
        return self._readiness()

    def use_clock(self, seconds: Callable[[], float]) -> None:
        """Read ``seconds`` for now (the operator's own clock, whichever it fires by)."""
        self._clock = seconds

    def now_seconds(self) -> float:
        """The operator's clock in seconds since 1970 (CRONCTL_CLOCK_FILE in tests)."""
        if self._clock is None:
            from ..clock import clock_from_environment
            self._clock = clock_from_environment().seconds
        return self._clock()

    def record(self, namespace: str, name: str, plan: Plan, now_seconds: float,
               status: Mapping[str, Any] | None = None, released_seconds: float | None = None) -> None:
        """Count what an applied plan did; ``status`` is the schedule's status before it;
        ``now_seconds`` when its Jobs were created, ``released_seconds`` its staged Jobs released."""
        for counter, n in counts(plan).items():
            self.per_schedule.count(counter, (namespace, name), n)
        for delay in launch_delays(plan, now_seconds, released_seconds):
            self.launch_delay.labels(namespace).observe(delay)
        self.set_active(namespace, name, active_runs(plan, status))

    def set_active(self, namespace: str, name: str, active: int) -> None:
        self.per_schedule.set_active((namespace, name), active)
        with self._lock:
            if (namespace, name) not in self._known:
                self._known.add((namespace, name))
                self._per_namespace[namespace] += 1
                self.schedules.labels(namespace).set(self._per_namespace[namespace])

    def forget(self, namespace: str, name: str) -> None:
        """A schedule is gone: drop its gauges (its counters stay, as counters do)."""
        with self._lock:
            if (namespace, name) not in self._known:
                return
            self._known.discard((namespace, name))
            self.per_schedule.forget((namespace, name))
            self._per_namespace[namespace] -= 1
            if self._per_namespace[namespace]:
                self.schedules.labels(namespace).set(self._per_namespace[namespace])
            else:
                del self._per_namespace[namespace]
                self.schedules.remove(namespace)

    def record_pool(self, namespace: str, pool: str, busy: int, queued: int, oldest_wait: float,
                    waits: list[float]) -> None:
        """What one look at a pool found and did."""
        self.pool_busy.labels(namespace, pool).set(busy)
        self.pool_queued.labels(namespace, pool).set(queued)
        self.pool_oldest_wait.labels(namespace, pool).set(oldest_wait)
        for wait in waits:
            self.pool_wait.labels(namespace, pool).observe(wait)

    def forget_pool(self, namespace: str, pool: str) -> None:
        """A pool is gone (or another shard's): its gauges go."""
        for gauge in (self.pool_busy, self.pool_queued, self.pool_oldest_wait):
            with contextlib.suppress(KeyError):
                gauge.remove(namespace, pool)

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format, as /metrics serves it."""
        return generate_latest(self.registry)


METRICS = Metrics()  # the operator's: loop.reconcile records into it, serve() exposes it


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9090`` for IPv6; an empty host means every interface)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host or "0.0.0.0", int(port)


class MetricsServer(ThreadingWSGIServer):
    """prometheus_client's threaded WSGI server, woken only by connections.

    socketserver's ``serve_forever`` wakes every half second to look at its stop flag. Each
    wake-up of an idle process costs, on a virtual machine, a few tenths of a millisecond
    (measured here: 0.7 ms of CPU a second for the wake-ups alone; with the Lease's renewals,
    most of an idle operator's CPU). ``serve`` waits for a connection as long as it takes, and
    ``shutdown`` wakes it with one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout = None  # handle_request waits for a connection however long it takes
        self._stopping = threading.Event()
        self._stopped = threading.Event()

    def serve(self) -> None:
        try:
            while not self._stopping.is_set():
                self.handle_request()
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop ``serve`` and wait until it has."""
        self._stopping.set()
        host, port = self.server_address[:2]
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
        with contextlib.suppress(OSError):
            socket.create_connection((host, port), timeout=5).close()  # the wake: served as nothing
        self._stopped.wait(timeout=5)


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        """Scrapes are not logged: one line every few seconds says nothing."""


def readiness_app(metrics: Metrics, fallback: Callable[..., Any]) -> Callable[..., Any]:
    """A WSGI app that answers ``/readyz`` (200 ready, 503 not yet; JSON saying why) and passes
    every other path to ``fallback``."""
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("PATH_INFO") != "/readyz":
            return fallback(environ, start_response)
        ready, answer = metrics.readiness()
        body = json.dumps(answer).encode()
        start_response("200 OK" if ready else "503 Service Unavailable",
                       [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]
    return app


def serve(address: str, metrics: Metrics = METRICS) -> MetricsServer:
    """Serve ``metrics`` at http://ADDRESS/metrics, and the readiness at /readyz, from a daemon
    thread; returns the server."""
    from prometheus_client import disable_created_metrics, make_wsgi_app

    disable_created_metrics()  # no *_created series: half the series, nothing a dashboard uses
    host, port = parse_address(address)
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    server_class = type("MetricsServer", (MetricsServer,), {"address_family": family})
    server = make_server(host, port, readiness_app(metrics, make_wsgi_app(metrics.registry)), server_class,
                         handler_class=_Quiet)
    threading.Thread(target=server.serve, name="cronctl-metrics", daemon=True).start()
    return server
