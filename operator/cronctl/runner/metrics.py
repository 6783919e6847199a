"""The runner's Prometheus metrics (``cronctl local --metrics-port PORT``), as supercronic exports its own.

:class:`RunnerMetrics` owns a registry of its own (never the process-wide
one) and is fed by the shell from the facts of the lines it says and the
runs it starts: each run's end by outcome, how late each run started after its
nominal time, and, at each turn, the runs waiting for a worker, the runs under
way and the schedules loaded. :meth:`RunnerMetrics.serve` answers
``GET /metrics`` from a daemon thread (prometheus-client's HTTP server).
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

# Seconds from a run's nominal time to its process's start: within a second is the goal.
DELAY_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
COUNTED = ("ended", "skipped")  # the lines whose ``outcome`` counts as a run's end


class RunnerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.runs = Counter("cronctl_runner_runs_total", "Runs that ended, by outcome (skipped: a Forbid time "
                            "that could not start once the active run ended)", ["outcome"], registry=self.registry)
        self.start_delay = Histogram("cronctl_runner_start_delay_seconds", "Seconds from a run's nominal time "
                                     "to its process's start (jitter, a wait for a worker, the start's cost)",
                                     buckets=DELAY_BUCKETS, registry=self.registry)
        self.queued = Gauge("cronctl_runner_queue_length", "Runs due and waiting for a worker (of the node or "
                            "of their CronPool)", registry=self.registry)
        self.running = Gauge("cronctl_runner_runs_running", "Runs under way", registry=self.registry)
        self.schedules = Gauge("cronctl_runner_schedules", "Schedules loaded from the folder's manifests",
                               registry=self.registry)

    def said(self, event: str, facts: dict[str, Any]) -> None:
        """A line the runner said: an end (or a skipped time) counts under its outcome."""
        outcome = facts.get("outcome")
        if event in COUNTED and isinstance(outcome, str):
            self.runs.labels(outcome=outcome).inc()

    def started(self, nominal_minute: int, at_second: float) -> None:
        self.start_delay.observe(max(0.0, at_second - nominal_minute * 60))

    def turned(self, queued: int, running: int, schedules: int) -> None:
        self.queued.set(queued)
        self.running.set(running)
        self.schedules.set(schedules)

    def serve(self, port: int, address: str = "") -> None:
        """``GET /metrics`` on ``address:port`` (all addresses by default, as a container needs)."""
        start_http_server(port, addr=address or "0.0.0.0", registry=self.registry)
