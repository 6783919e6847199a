"""cronctl against kube-controller-manager's own CronJob controller, on the same test API server.

Three controllers take turns on one API server (kube-apiserver + etcd on
loopback, tests/kube/controlplane.py), each alone with a fresh namespace and
the same fleet: cronctl's operator (``python -m cronctl operator``, the wall
clock), and kube-controller-manager with ``--controllers=cronjob-controller``
only, once with its default client limits (``--kube-api-qps 20
--kube-api-burst 30``) and once with raised ones (1000 / 2000). The CronJobs
are made from the CronSchedules the fleet chart renders (same schedule,
concurrencyPolicy, jobTemplate and labels). No job controller runs on either
side: Jobs are created (or released) and never start.

For each size (default 500, then 2000) two workloads, each side in turn:

* herd: N schedules all due at one wall-clock minute (``M H * * *``);
* every-minute: N schedules due at each of K consecutive minutes (``M1,M2,M3
  H * * *``: every minute from the first one the fleet can make, so that no
  firing lands while the fleet is still being created).

A Job "can run" once it exists without ``spec.suspend``, or once an update
sets it false (staged launches): a watch of the namespace's Jobs stamps each
event with the moment it arrived, which is when a job controller could have
seen it (creationTimestamp has one-second resolution). Delays run from the
nominal second. CPU seconds come from /proc/<pid>/stat of the controller, the
API server and etcd, over the window from the moment the fleet is accepted
(cronctl: every CronSchedule has a next fire time; CronJob: all created and
the controller's caches synced) to the moment the controller has gone quiet
after the last launch; API requests come from the audit log, where each
controller has its own user.

``--workloads lifecycle`` (issue 47) measures a run, not only a launch:
every-minute schedules whose Jobs run (a Pod each, about ``--run-seconds``, 5 by
default) and end through the job controller and kube-scheduler on kwok's
simulated Nodes (tests/kube/controlplane.py ``lifecycle=True``; the control
plane's own kube-controller-manager then runs the job controller, not its
CronJob controller, which is the sides' own). The window runs on until every
Job of the phase has ended and the controller has gone quiet, so each side's
end writes (status, Events, the Jobs its history limits delete) are counted:
figures "per launch" are then per run, from its launch to its end. The job
controller, kube-scheduler and kwok are measured too, in a row of their own.
``--sides cronctl-fleet`` is the operator in fleet mode (``--fleet``: no
per-launch status write).

This is a benchmark, not a test: it asserts nothing. Run it from the
repository root on a quiet machine (needs the binaries and helm from
``scripts/build-control-plane.sh --with-helm``):

    python benchmarks/bench_vs_cronjob.py [--sizes 500 2000] [--minutes 3]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import kube_bench as kb
from kube_bench import ROOT

from tests.kube.controlplane import ControlPlane, ensure_binaries  # noqa: E402

PREFIX = "s"
CRONCTL_USER = "cronctl-operator"


@dataclass(frozen=True)
class Side:
    key: str
    label: str
    user: str
    qps: float | None = None  # None: cronctl
    burst: int | None = None
    shards: int = 0  # cronctl: operator processes, each owning the schedules labelled cronctl.dev/shard=s<k>
    args: tuple[str, ...] = ()  # cronctl: the operator's flags
    floor: bool = False  # not a controller: one Job create per launch at its second (floor_controller.py)


SHARD_LABEL = "cronctl.dev/shard"


class ShardedOperator(kb.Controller):
    """Several cronctl operators (``--shard s0``, ``s1``...) as one side: the first stands for all
    where one process is asked for (its pid, log); CPU and requests are summed over them."""

    def __init__(self, shards: list[kb.OperatorProcess]) -> None:
        self.shards = shards
        self.name, self.user = "cronctl", shards[0].user
        self.process, self.log_path = shards[0].process, shards[0].log_path

    def pids(self) -> dict[str, int]:
        return {"controller" if k == 0 else f"controller shard {k}": shard.pid for k, shard in enumerate(self.shards)}

    def cpu_seconds(self) -> float:
        return sum(shard.cpu_seconds() for shard in self.shards)

    def peak_rss_mib(self) -> float:
        return max(shard.peak_rss_mib() for shard in self.shards)

    def rss_per_shard(self) -> list[float]:
        return [shard.peak_rss_mib() for shard in self.shards]

    def alive(self) -> bool:
        return all(shard.alive() for shard in self.shards)

    def stop(self) -> None:
        for shard in self.shards:
            shard.stop()

    def log_text(self) -> str:
        return "\n".join(shard.log_text() for shard in self.shards)


def plans_ahead(controller: kb.Controller) -> dict[str, float]:
    """cronctl's plans made ahead of their second, by outcome, summed over its shards."""
    operators = controller.shards if isinstance(controller, ShardedOperator) else [controller]
    out: dict[str, float] = {}
    for operator in operators:
        if isinstance(operator, kb.OperatorProcess):
            for labels, value in operator.counter("cronctl_plans_ahead").items():
                outcome = dict(labels).get("outcome", "")
                out[outcome] = out.get(outcome, 0.0) + value
    return out


def _answer_of(job: kb.JobSeen, answered: dict[str, list[float]] | None) -> float | None:
    """When the API answered the write that let ``job`` run (its last answered write the watch
    could have shown by then), if the audit log has it."""
    assert job.runnable is not None
    done = [t for t in (answered or {}).get(job.name, ()) if t <= job.runnable + 0.05]
    return max(done) if done else None


def _able_to_run(job: kb.JobSeen, answered: dict[str, list[float]] | None) -> float:
    """When ``job`` could run: the API's answer to its write, else when the watch saw it."""
    answer = _answer_of(job, answered)
    assert job.runnable is not None
    return job.runnable if answer is None else answer


def merged_controllers(used: dict[str, float]) -> dict[str, float]:
    """The CPU of a side's shards summed into "controller"."""
    out = {name: value for name, value in used.items() if not name.startswith("controller shard")}
    out["controller"] = sum(value for name, value in used.items() if name.startswith("controller"))
    return out


def sides(raised_qps: float, raised_burst: int) -> list[Side]:
    return [Side("cronctl", "cronctl", CRONCTL_USER),
            Side("cronctl-2-shards", "cronctl 2 shards", CRONCTL_USER, shards=2),
            Side("cronctl-staged", "cronctl --staging", CRONCTL_USER, args=("--staging",)),
            Side("cronctl-fleet", "cronctl --fleet", CRONCTL_USER, args=("--fleet",)),
            Side("cronjob-default", "CronJob qps 20", "cronjob-controller-default", 20, 30),
            Side("cronjob-raised", f"CronJob qps {raised_qps:g}", "cronjob-controller-raised", raised_qps,
                 raised_burst),
            Side("floor", "floor (one create)", "floor-creator", floor=True)]


@dataclass
class Phase:
    side: str
    workload: str
    size: int
    nominal: list[float]  # the nominal seconds
    expected: int = 0
    created_s: float = 0.0  # the fleet's creation (POSTs, 8 at a time)
    accepted_s: float = 0.0  # creation until accepted
    lead_s: float = 0.0  # accepted until the first nominal second
    delays: list[float] = field(default_factory=list)  # per expected launch; inf: never could run
    staged: int = 0  # Jobs that existed, suspended, before their nominal second
    first_write: list[float] = field(default_factory=list)  # per minute: first write of its Jobs after it (s)
    watch_lag: list[float] = field(default_factory=list)  # per Job: watch arrival - the API's answer (s)
    window_s: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # over the window
    cpu_before: dict[str, float] = field(default_factory=dict)  # accepted until the first minute
    cpu_all: dict[str, float] = field(default_factory=dict)  # from the controller's start on
    burst_s: float = 0.0  # summed nominal-second-to-last-runnable intervals
    burst_cpu: dict[str, float] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)  # "verb resource" -> count, over the window
    requests_all: dict[str, int] = field(default_factory=dict)  # from the controller's start on
    burst_requests: int = 0  # launch work only (see per_launch)
    plane: dict[str, float] = field(default_factory=dict)  # the control plane's counters over the window
    idle: dict[str, float] = field(default_factory=dict)  # API server and etcd cores used with no controller
    rss_mib: float = float("nan")
    rss_per_shard: list[float] = field(default_factory=list)  # a sharded side: each process's peak RSS
    plans_ahead: dict[str, float] = field(default_factory=dict)  # cronctl: "taken" / "stale" (its metrics)
    ended: str = ""  # why the phase ended
    runs_ended: int = 0  # lifecycle: the Jobs that ended (Complete, Failed or deleted) in the window
    names: list[str] = field(default_factory=list, repr=False)  # the fleet's schedules

    @property
    def launched(self) -> int:
        return sum(1 for d in self.delays if math.isfinite(d))


# -- fleets ---------------------------------------------------------------------------------


def herd_schedule(minute: int) -> str:
    when = time.gmtime(minute * 60)
    return f"{when.tm_min} {when.tm_hour} * * *"


def window_schedule(first_minute: int, count: int) -> str:
    """Due at each of ``count`` minutes from ``first_minute`` (UTC); its other matches are in
    the past, which neither controller catches up for a new object, or about an hour on."""
    times = [time.gmtime((first_minute + i) * 60) for i in range(count)]
    minutes = sorted({t.tm_min for t in times})
    hours = sorted({t.tm_hour for t in times})
    return f"{','.join(map(str, minutes))} {','.join(map(str, hours))} * * *"


LIFECYCLE = "lifecycle"
RUN_FOR = "cronctl.test/run-for"  # kwok's Stages run the Pod this long, then end it (tests/kube/kwok-stages.yaml)


def running_for(obj: dict[str, Any], run_seconds: float) -> dict[str, Any]:
    """The fleet's object with its Jobs' Pods running ``run_seconds`` on kwok's Nodes, then ending."""
    template = obj["spec"]["jobTemplate"]["spec"]["template"]
    template.setdefault("metadata", {}).setdefault("annotations", {})[RUN_FOR] = f"{run_seconds:g}s"
    return obj


CRONJOB_FIELDS = ("schedule", "concurrencyPolicy", "jobTemplate", "suspend", "startingDeadlineSeconds",
                  "successfulJobsHistoryLimit", "failedJobsHistoryLimit")


def as_cronjob(schedule: dict[str, Any]) -> dict[str, Any]:
    """The CronJob equivalent to a rendered CronSchedule (refuses options CronJob lacks)."""
    spec = schedule["spec"]
    extra = set(spec) - set(CRONJOB_FIELDS)
    if extra:
        raise ValueError(f"{schedule['metadata']['name']}: no CronJob equivalent for {sorted(extra)}")
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {key: schedule["metadata"][key] for key in ("name", "namespace", "labels")
                         if key in schedule["metadata"]},
            "spec": {key: spec[key] for key in CRONJOB_FIELDS if key in spec}}


def floor_plan(objects: list[dict[str, Any]], nominal: list[float]) -> list[tuple[float, list[dict[str, Any]]]]:
    """The Jobs a CronJob controller would create from these CronSchedules' templates, named as
    both controllers name a scheduled run's Job, at each nominal second."""
    def job(obj: dict[str, Any], second: float) -> dict[str, Any]:
        template = obj["spec"]["jobTemplate"]
        metadata = {**template.get("metadata", {}), "name": f"{obj['metadata']['name']}-{int(second // 60)}"}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": template["spec"]}
    return [(second, [job(obj, second) for obj in objects]) for second in nominal]


# -- one phase --------------------------------------------------------------------------------


class Bench:
    def __init__(self, cp: ControlPlane, helm: Path, audit_log: Path, work: Path, operator_dir: Path,
                 minutes: int, herd_timeout: float | None, grace: float, nice: int | None,
                 run_seconds: float = 5.0) -> None:
        self.cp, self.helm, self.audit_log, self.work = cp, helm, audit_log, work
        self.run_seconds = run_seconds  # lifecycle: how long each Job's Pod runs
        self.operator_dir, self.nice = operator_dir, nice
        self.api = kb.Api(cp)
        self.plane = kb.PlaneCounters(cp, self.api)
        self.quietest = math.inf  # the least the API server and etcd were seen to use idle, cores
        self.minutes, self.herd_timeout, self.grace = minutes, herd_timeout, grace
        self.kubeconfigs: dict[str, Path] = {}
        # Seconds per schedule from creation to acceptance, per side, to pick a minute the fleet can make.
        self.accept_rate: dict[str, float] = {}
        self.pids = {"kube-apiserver": cp._apiserver.pid, "etcd": cp._etcd.pid,  # type: ignore[union-attr]
                     "gc+namespace kcm": cp._controller_manager.pid, "bench": os.getpid()}  # type: ignore[union-attr]
        if cp.lifecycle:  # the cluster's side of a run: the job controller (in that kcm), the scheduler, the nodes
            self.pids.update({"kube-scheduler": cp._scheduler.pid, "kwok": cp._kwok.pid})  # type: ignore[union-attr]

    def kubeconfig(self, user: str) -> Path:
        if user not in self.kubeconfigs:
            self.kubeconfigs[user] = self.cp.user_kubeconfig(user, groups=["system:masters"])
        return self.kubeconfigs[user]

    def run(self, side: Side, workload: str, size: int) -> Phase:
        for attempt in range(3):
            phase = self._attempt(side, workload, size, attempt)
            if phase is not None:
                return phase
            print("    the fleet was not accepted before its minute; again with a longer lead", flush=True)
        raise RuntimeError(f"{side.key} {workload} {size}: never accepted before its minute")

    def _start(self, side: Side, namespace: str) -> kb.Controller:
        controller = self._spawn(side, namespace)
        if self.nice is not None:
            kb.prioritize(controller.pid, self.nice)
        return controller

    def _spawn(self, side: Side, namespace: str) -> kb.Controller:
        if side.floor:
            return kb.FloorProcess(self.cp, self.kubeconfig(side.user), side.user, namespace, self.work)
        if side.qps is None and side.shards:
            sharded = ShardedOperator([self._operator(side, namespace, ["--shard", f"s{k}"], f"-s{k}")
                                       for k in range(side.shards)])
            if self.nice is not None:
                for shard in sharded.shards[1:]:
                    kb.prioritize(shard.pid, self.nice)
            return sharded
        if side.qps is None:
            return self._operator(side, namespace, side.args)
        controller = kb.CronJobControllerProcess(self.cp, self.kubeconfig(side.user), side.user, namespace,
                                                 self.work, side.qps, side.burst or 1, side.key)
        kb.wait_until(f"{side.key} caches", controller.ready, timeout=60, every=0.2)
        return controller

    def _operator(self, side: Side, namespace: str, args: Sequence[str] = (), suffix: str = "") -> kb.OperatorProcess:
        controller = kb.OperatorProcess(self.cp, self.kubeconfig(side.user), side.user, namespace, self.work,
                                        operator_dir=self.operator_dir, args=args, log_suffix=suffix)
        kb.wait_until("the operator's scheduler", lambda: "scheduler started" in controller.log_text()
                      or not controller.alive(), timeout=60, every=0.2)
        if not controller.alive():
            raise RuntimeError("cronctl operator exited:\n" + controller.log_text()[-3000:])
        return controller

    def _attempt(self, side: Side, workload: str, size: int, attempt: int) -> Phase | None:
        namespace = f"{workload}-{size}-{side.key}" + (f"-{attempt}" if attempt else "")
        idle = self._idle()
        kb.kubectl(self.cp, "create", "namespace", namespace)
        missed = False
        watch = kb.JobWatch(self.api, namespace)
        audit = kb.AuditTail(self.audit_log, self.audit_log.stat().st_size, {side.user})
        controller = self._start(side, namespace)
        pids = controller.pids() if isinstance(controller, ShardedOperator) else {"controller": controller.pid}
        sampler = kb.Sampler({**pids, **self.pids}, every=0.25)
        started = time.time()
        try:
            phase, schedule, objects = self._fleet(side, workload, size, attempt, namespace, idle)
            accepted = self._submit(controller, side, phase, objects, namespace)
            if phase.lead_s < 5:
                missed = True
                return None
            print(f"  [{size:>5} {workload:<12} {side.label:<15}] {schedule!r}: created in {phase.created_s:.1f} s, "
                  f"accepted after {phase.accepted_s:.1f} s, {phase.lead_s:.0f} s before the minute", flush=True)
            plane_before = self.plane.snapshot()
            self._launches(phase, watch, controller, side)
            # Its writes after the last launch (status, Events) belong to the launches; a phase cut
            # short by its deadline ends there, where its count of launches was taken.
            window_end = self._settle(controller, audit) if phase.ended == "all launched" else time.time()
            plane_after = self.plane.snapshot()
            phase.plane = {name: plane_after[name] - plane_before[name] for name in plane_after}
            phase.rss_mib = controller.peak_rss_mib()
            phase.plans_ahead = plans_ahead(controller)
            if isinstance(controller, ShardedOperator):
                phase.rss_per_shard = controller.rss_per_shard()
        finally:
            sampler.stop()
            controller.stop()
            watch.stop()
            if missed:
                self._delete(namespace)
        phase.window_s = window_end - accepted
        phase.cpu = merged_controllers(sampler.used(accepted, window_end))
        phase.cpu_before = merged_controllers(sampler.used(accepted, phase.nominal[0]))
        phase.cpu_all = merged_controllers(sampler.used(started, window_end))
        self._bursts(phase, watch.snapshot(), sampler)
        audit.read()
        self._requests(phase, audit.requests, accepted, window_end, watch.snapshot())
        if watch.errors:
            print(f"    watch reconnects: {watch.errors[:3]}", flush=True)
        self._delete(namespace)
        return phase

    def _fleet(self, side: Side, workload: str, size: int, attempt: int, namespace: str,
               idle: dict[str, float]) -> tuple[Phase, str, list[dict[str, Any]]]:
        """The phase's minutes, its schedule expression and the side's objects for it."""
        # Seconds a schedule to accept, first guessed (cronctl measured 0.009-0.013 at 500 and
        # 2000), then the largest seen. The guess sets how long the window before the minute
        # is, and the idle CPU in it counts on both sides: alike guesses, alike windows (0.05
        # gave cronctl's 40-50 s more than CronJob's).
        rate = self.accept_rate.get(side.key, 0.02 if side.qps is None else 0.01)
        lead = (rate * size * 1.25 + 10) * (2 ** attempt)
        # A minute more than acceptance needs: cronctl stages a firing's Job during the minute
        # before it, so that minute starts after the fleet is accepted, and the staging falls
        # in the window measured (accepted as late as the minute before, the staging was done
        # while accepting, and left out of the CPU and requests per launch).
        first = math.ceil((time.time() + lead) / 60) + 1
        count = 1 if workload == "herd" else self.minutes
        schedule = herd_schedule(first) if workload == "herd" else window_schedule(first, count)
        phase = Phase(side.key, workload, size, [float((first + i) * 60) for i in range(count)],
                      expected=size * count, idle=idle)
        objects = kb.fleet_objects(kb.render_fleet(self.helm, namespace, PREFIX, size, schedule))
        if workload == LIFECYCLE:
            objects = [running_for(obj, self.run_seconds) for obj in objects]
        phase.names = [obj["metadata"]["name"] for obj in objects]
        if side.qps is not None:
            objects = [as_cronjob(obj) for obj in objects]
        for index, obj in enumerate(objects if side.shards else []):  # round robin over the shards
            obj["metadata"].setdefault("labels", {})[SHARD_LABEL] = f"s{index % side.shards}"
        return phase, schedule, objects

    def _submit(self, controller: kb.Controller, side: Side, phase: Phase, objects: list[dict[str, Any]],
                namespace: str) -> float:
        """Create the fleet (the floor: hand it its plan) and wait until the side has taken it in;
        returns that moment, where the phase's window starts."""
        t0 = time.time()
        if isinstance(controller, kb.FloorProcess):
            controller.send(floor_plan(objects, phase.nominal))
        else:
            self.api.create_all(objects)
        phase.created_s = time.time() - t0
        try:
            if side.qps is None and not side.floor:
                kb.wait_until(f"{phase.size} schedules accepted", lambda: self._accepted(namespace) >= phase.size,
                              timeout=phase.nominal[0] - time.time() - 5, every=2)
            elif not side.floor:
                time.sleep(2)  # the informer's add events
        except TimeoutError:
            pass
        accepted = time.time()
        phase.accepted_s = accepted - t0
        self.accept_rate[side.key] = max(self.accept_rate.get(side.key, 0), phase.accepted_s / phase.size)
        phase.lead_s = phase.nominal[0] - accepted
        return accepted

    def _idle(self, slice_seconds: float = 5.0, patience: float = 90.0) -> dict[str, float]:
        """Cores the API server and etcd use on their own (no controller, nothing written): what
        they spend over any window whatever the side, taken out of the net figures. The last
        phase's namespace may still be going (its Jobs collected, etcd compacting): slices are
        taken until one is within a quarter of the quietest seen in this run, or patience ends;
        the quietest slice of this wait is the figure."""
        names = ("kube-apiserver", "etcd")
        deadline, slices = time.time() + patience, []
        while True:
            before, start = {name: kb.cpu_seconds(self.pids[name]) for name in names}, time.time()
            time.sleep(slice_seconds)
            elapsed = time.time() - start
            slices.append({name: (kb.cpu_seconds(self.pids[name]) - before[name]) / elapsed for name in names})
            total = sum(slices[-1].values())
            self.quietest = min(self.quietest, total)
            if total <= 1.25 * self.quietest + 0.002 or time.time() > deadline:
                return min(slices, key=lambda rates: sum(rates.values()))

    def _accepted(self, namespace: str) -> int:
        ready, token = 0, ""
        while True:
            status, body = self.api.request(
                "GET", f"/apis/cronctl.dev/v1/namespaces/{namespace}/cronschedules?limit=500"
                       + (f"&continue={token}" if token else ""))
            if status != 200:
                return 0
            # Reconciled once: anchorTime (fleet mode writes no nextFireTime).
            ready += sum(1 for item in body["items"] if (item.get("status") or {}).get("anchorTime"))
            token = body["metadata"].get("continue") or ""
            if not token:
                return ready

    def _launches(self, phase: Phase, watch: kb.JobWatch, controller: kb.Controller, side: Side) -> None:
        """Wait for every expected Job to be able to run, or for the phase's deadline."""
        size, last = phase.size, phase.nominal[-1]
        if phase.workload == "herd":
            deadline = last + (self.herd_timeout or max(120.0, 0.2 * size))
        else:
            deadline = last + 60 + self.grace
        while True:
            if watch.runnable_count() >= phase.expected:
                phase.ended = "all launched"
                break
            if time.time() > deadline:
                phase.ended = f"deadline ({deadline - phase.nominal[0]:.0f} s after the first minute)"
                break
            if not controller.alive():
                phase.ended = "the controller exited"
                break
            time.sleep(0.25)
        if phase.workload == LIFECYCLE and phase.ended == "all launched":
            self._ends(phase, watch, controller)
        jobs = {job.name: job for job in watch.snapshot()}
        phase.delays = []
        for nominal in phase.nominal:
            minute = int(nominal // 60)
            for name in phase.names:
                job = jobs.get(f"{name}-{minute}")
                phase.delays.append(math.inf if job is None or job.runnable is None else job.runnable - nominal)
                if job is not None and job.suspended_at_first and job.first_seen < nominal:
                    phase.staged += 1

    def _ends(self, phase: Phase, watch: kb.JobWatch, controller: kb.Controller,
              stalled_after: float = 60.0) -> None:
        """Lifecycle: wait until every Job of the phase has ended (Complete or Failed, or deleted),
        for as long as Jobs keep ending (a stall of ``stalled_after`` seconds, or 15 minutes in all,
        ends the wait); the phase says how many did. A fixed wait cut the first 500-schedule run
        at half its runs: the cluster's job controller ends them at its own pace."""
        started = time.time()
        ended, last_progress = watch.ended_count(), started
        while ended < phase.expected and controller.alive():
            now = time.time()
            if now - last_progress > stalled_after + self.run_seconds or now - started > 900:
                break
            time.sleep(0.5)
            count = watch.ended_count()
            if count > ended:
                ended, last_progress = count, time.time()
        phase.runs_ended = watch.ended_count()
        if phase.runs_ended < phase.expected:
            phase.ended = f"{phase.runs_ended} of {phase.expected} runs ended by the deadline"

    def _settle(self, controller: kb.Controller, audit: kb.AuditTail, quiet: float = 0.05,
                cap: float = 90.0) -> float:
        """Wait (at most ``cap`` seconds) until the controller has used less than ``quiet`` of a
        core and sent no request but Lease renewals for 3 s (a client held by its rate limiter
        uses no CPU while its Events wait), and return the moment it went quiet."""
        start = time.time()
        cpu, last_request = controller.cpu_seconds(), start
        while time.time() - start < cap and controller.alive():
            time.sleep(1)
            last_request = max([last_request, *(request.received for request in audit.read()
                                                if launch_work(f"{request.verb} {request.resource}"))])
            used, cpu = controller.cpu_seconds() - cpu, controller.cpu_seconds()
            if used < quiet and time.time() - last_request >= 3:
                return last_request + 1
        return time.time()

    def _bursts(self, phase: Phase, jobs: list[kb.JobSeen], sampler: kb.Sampler) -> None:
        """CPU over each minute's launch burst: nominal second to its last Job able to run."""
        phase.burst_s, phase.burst_cpu = 0.0, {}
        for start, end in self._burst_intervals(phase, jobs):
            phase.burst_s += end - start
            for name, used in merged_controllers(sampler.used(start, end)).items():
                phase.burst_cpu[name] = phase.burst_cpu.get(name, 0.0) + used

    def _burst_intervals(self, phase: Phase, jobs: list[kb.JobSeen],
                         answered: dict[str, list[float]] | None = None) -> list[tuple[float, float]]:
        """Each minute's nominal second to its last Job able to run: as this script's watch saw
        it or, given ``answered``, as the API answered the write that let it run (the watch
        lags behind the API's answer by 0.1-0.3 s while the API server is busy, and counting the
        requests of that lag would count the status patches that follow the launches)."""
        intervals = []
        for nominal in phase.nominal:
            minute = int(nominal // 60)
            ends = [_able_to_run(job, answered) for job in jobs if job.runnable is not None
                    and (kb.nominal_minute(job.name) or ("", -1))[1] == minute]
            if ends:
                intervals.append((nominal, max(ends)))
        return intervals

    def _requests(self, phase: Phase, requests: list[kb.Request], start: float, end: float,
                  jobs: list[kb.JobSeen]) -> None:
        counts: Counter[str] = Counter()
        for request in requests:
            if start <= request.received <= end:
                counts[f"{request.verb} {request.resource}"] += 1
        phase.requests = dict(counts.most_common())
        phase.requests_all = dict(Counter(f"{request.verb} {request.resource}" for request in requests).most_common())
        job_writes = [request for request in requests if request.resource == "jobs"
                      and request.verb in ("create", "update", "patch") and kb.nominal_minute(request.name)]
        answered: dict[str, list[float]] = {}
        for request in job_writes:
            if request.code < 300:
                answered.setdefault(request.name, []).append(request.completed)
        intervals = self._burst_intervals(phase, jobs, answered)
        phase.burst_requests = sum(1 for request in requests if launch_work(f"{request.verb} {request.resource}")
                                   and any(a <= request.received <= b for a, b in intervals))
        phase.first_write = []
        for nominal in phase.nominal:
            writes = [request.received - nominal for request in job_writes
                      if kb.nominal_minute(request.name)[1] == int(nominal // 60) and request.received >= nominal]
            if writes:
                phase.first_write.append(min(writes))
        # How long after the API answered the write that let a Job run the watch showed it.
        phase.watch_lag = sorted(job.runnable - _able_to_run(job, answered) for job in jobs
                                 if job.runnable is not None and _answer_of(job, answered) is not None)

    def _delete(self, namespace: str) -> None:
        """Delete the namespace and wait until it is gone, so that the next phase does not share
        the API server with its deletion."""
        kb.kubectl(self.cp, "delete", "namespace", namespace, "--wait=true", "--timeout=600s")


# -- reporting -------------------------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * fraction) - 1)]


def seconds(value: float, digits: int = 1) -> str:
    return "never" if math.isinf(value) else f"{value:.{digits}f}"


def launch_work(request: str) -> bool:
    """Whether a "verb resource" counts per launch: not the Lease renewals (leader election,
    a cost per process and second) nor the watches (per process)."""
    verb, resource = request.split(" ", 1)
    return resource != "leases" and verb != "watch"


def per_launch(phase: Phase, total: float) -> float:
    return total / phase.launched if phase.launched else math.nan


def net_plane_cpu(phase: Phase) -> float:
    """Controller, API server and etcd CPU seconds over the window, less what the API server and
    etcd would have spent idle over it (the windows differ in length between sides)."""
    whole = sum(phase.cpu.get(name, math.nan) for name in ("controller", "kube-apiserver", "etcd"))
    return whole - sum(phase.idle.get(name, math.nan) for name in ("kube-apiserver", "etcd")) * phase.window_s


def requests_per_launch(phase: Phase, counts: dict[str, int]) -> float:
    return per_launch(phase, sum(n for request, n in counts.items() if launch_work(request)))


OURS = ("controller", "kube-apiserver", "etcd", "gc+namespace kcm", "bench")


def share(phase: Phase, name: str) -> float:
    """Cores the process used, on average, during the launch bursts; "others": every process
    on the machine but this benchmark's own (the machine is shared)."""
    if not phase.burst_s:
        return math.nan
    if name == "others":
        return (phase.burst_cpu.get("machine", math.nan)
                - sum(phase.burst_cpu.get(ours, math.nan) for ours in OURS)
                - sum(phase.burst_cpu.get(cluster, 0.0) for cluster in ("kube-scheduler", "kwok"))) / phase.burst_s
    return phase.burst_cpu.get(name, math.nan) / phase.burst_s


Row = tuple[str, list[str], list[float]]
MS = "{:.2f}".format


def rows(phases: list[Phase]) -> list[Row]:
    """(metric, cells, comparable values) for the table; a lower value is better in every row."""
    return [*timing_rows(phases), *cost_rows(phases), *load_rows(phases)]


def _row(name: str, values: list[float], fmt: Any) -> Row:
    return (name, [fmt(v) for v in values], values)


def timing_rows(phases: list[Phase]) -> list[Row]:
    """When the Jobs could run, and when their first writes went out."""
    out = [_row("Jobs able to run / expected", [p.launched for p in phases],
                lambda v: f"{int(v)}/{phases[0].expected}")]
    herd = phases[0].workload == "herd"
    if herd:
        out.append(_row("first Job can run, s after the minute", [min(p.delays) for p in phases], seconds))
        out.append(_row("half the Jobs can run, s", [percentile(p.delays, 0.5) for p in phases], seconds))
        out.append(_row("last Job can run, s", [max(p.delays) for p in phases], seconds))
    else:
        out += [_row(f"delay {label}, s", [percentile(p.delays, fraction) for p in phases], seconds)
                for label, fraction in (("p50", 0.5), ("p99", 0.99), ("max", 1.0))]
    out.append(_row("first write of a Job of the minute, s after it",
                    [min(p.first_write, default=math.inf) for p in phases], lambda v: seconds(v, 2)))
    if not herd:
        out.append(_row("  the same, slowest minute, s", [max(p.first_write, default=math.inf) for p in phases],
                        lambda v: seconds(v, 2)))
    out.append(_row("Jobs staged (suspended) before their minute", [p.staged for p in phases], lambda v: f"{int(v)}"))
    return out


def cost_rows(phases: list[Phase]) -> list[Row]:
    """What each launch cost: CPU of the controller and of the control plane, etcd's writes, the
    watch fan-out, the requests."""
    def cpu(p: Phase, name: str, over: str = "cpu") -> float:
        return per_launch(p, getattr(p, over).get(name, math.nan) * 1000)
    out = [_row("controller CPU per launch, ms", [cpu(p, "controller") for p in phases], MS),
           _row("  of it before the minute", [cpu(p, "controller", "cpu_before") for p in phases], MS),
           _row("  whole phase (accepting the fleet too)", [cpu(p, "controller", "cpu_all") for p in phases], MS),
           _row("API server CPU per launch, ms", [cpu(p, "kube-apiserver") for p in phases], MS),
           _row("etcd CPU per launch, ms", [cpu(p, "etcd") for p in phases], MS),
           _row("whole control plane CPU per launch (controller + API server + etcd), ms",
                [sum(cpu(p, name) for name in ("controller", "kube-apiserver", "etcd")) for p in phases], MS),
           _row("  net of what the API server and etcd spend idle, ms",
                [per_launch(p, net_plane_cpu(p) * 1000) for p in phases], MS)]
    if phases[0].workload == LIFECYCLE:
        cluster = ("gc+namespace kcm", "kube-scheduler", "kwok")
        out += [_row("runs ended in the window", [p.runs_ended for p in phases], lambda v: f"{int(v)}"),
                _row("the cluster's side per run (job controller's kcm, kube-scheduler, kwok), ms",
                     [sum(cpu(p, name) for name in cluster) for p in phases], MS),
                _row("whole control plane per run, all of it (controller, API server, etcd and those), ms",
                     [sum(cpu(p, name) for name in ("controller", "kube-apiserver", "etcd", *cluster))
                      for p in phases], MS)]
    for name, whole in (("etcd WAL bytes", True), ("etcd puts", False), ("watch events sent", False),
                        ("watch bytes sent", True)):
        out.append(_row(f"{name} per launch", [per_launch(p, p.plane.get(name, math.nan)) for p in phases],
                        "{:,.0f}".format if whole else MS))
    out += [_row("API requests per launch (no Leases, watches)", [requests_per_launch(p, p.requests) for p in phases],
                 MS),
            _row("  of them from the minute to the last Job's write answered",
                 [per_launch(p, p.burst_requests) for p in phases], MS),
            _row("  whole phase (accepting the fleet too)", [requests_per_launch(p, p.requests_all) for p in phases],
                 MS)]
    return out


def load_rows(phases: list[Phase]) -> list[Row]:
    """How busy each part was during the launches, memory, and what the operator says of itself."""
    def rate(p: Phase, count: float) -> float:
        return count / p.burst_s if p.burst_s else math.nan
    out = [_row("launches/s during launches", [rate(p, p.launched) for p in phases], "{:.0f}".format),
           _row("controller requests/s during launches", [rate(p, p.burst_requests) for p in phases], "{:.0f}".format)]
    out += [_row(f"cores used during launches: {label}", [share(p, name) for p in phases], "{:.2f}".format)
            for name, label in (("controller", "controller"), ("kube-apiserver", "API server"), ("etcd", "etcd"),
                                ("gc+namespace kcm", "the control plane's own kube-controller-manager"),
                                ("bench", "this script (watch, sampling)"), ("others", "processes not ours"),
                                ("machine", "whole machine"))]
    out.append(_row("controller peak RSS, MiB", [p.rss_mib for p in phases], "{:.0f}".format))
    out.append(_row("  per 1,000 schedules, MiB", [p.rss_mib / p.size * 1000 for p in phases], "{:.1f}".format))
    if any(p.plans_ahead for p in phases):
        out.append(("launches planned ahead and taken at the second (stale)",
                    [f"{p.plans_ahead.get('taken', 0):.0f} ({p.plans_ahead.get('stale', 0):.0f})" if p.plans_ahead
                     else "-" for p in phases], [p.plans_ahead.get("taken", math.nan) for p in phases]))
    if any(p.rss_per_shard for p in phases):
        out.append(("  per process (shards), MiB", [" / ".join(f"{v:.0f}" for v in p.rss_per_shard) or "-"
                                                    for p in phases],
                    [max(p.rss_per_shard, default=p.rss_mib) for p in phases]))
    out.append(("the watch's lag behind the API's answer, p50 / max, s",
                [f"{percentile(p.watch_lag, 0.5):.3f} / {max(p.watch_lag):.3f}" if p.watch_lag else "-"
                 for p in phases],
                [percentile(p.watch_lag, 0.5) if p.watch_lag else math.nan for p in phases]))
    return out


def ratio(theirs: float, ours: float) -> str:
    if math.isnan(theirs) or math.isnan(ours):
        return "-"
    if math.isinf(theirs):
        return "inf" if math.isfinite(ours) else "-"
    if math.isinf(ours):
        return "0"
    if ours == 0:
        return "-" if theirs == 0 else "inf"
    return f"{theirs / ours:.2f}x"


NO_RATIO = ("Jobs able to run / expected", "runs ended in the window", "Jobs staged (suspended) before their minute",
            "launches planned ahead and taken at the second (stale)",
            "controller requests/s during launches", "launches/s during launches",
            "the watch's lag behind the API's answer, p50 / max, s")


def table(title: str, phases: list[Phase], labels: list[str]) -> str:
    lines = [f"### {title}", ""]
    header = ["", *labels] + [f"{label} / cronctl" for label in labels[1:]]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for name, cells, values in rows(phases):
        ratios = ([ratio(v, values[0]) for v in values[1:]] if name not in NO_RATIO and not name.startswith("cores")
                  else ["" for _ in values[1:]])
        lines.append("| " + " | ".join([name, *cells, *ratios]) + " |")
    lines.append("")
    for phase, label in zip(phases, labels):
        detail = ", ".join(f"{what} {n} ({per_launch(phase, n):.2f} a launch)" for what, n in phase.requests.items())
        idle = ", ".join(f"{name} {cores * 1000:.0f} ms/s" for name, cores in phase.idle.items())
        lines.append(f"- {label}: ended: {phase.ended}; fleet created in {phase.created_s:.1f} s, accepted after "
                     f"{phase.accepted_s:.1f} s; window {phase.window_s:.0f} s; idle before it: {idle}; "
                     f"requests: {detail}")
    return "\n".join(lines) + "\n"


def limits_line(phase: Phase, side: Side) -> str:
    """What the figures say held the side back during its launch bursts."""
    if not phase.burst_s:
        return "no launches"
    rate = phase.burst_requests / phase.burst_s
    cores = os.cpu_count() or 1
    parts = [f"{rate:.0f} requests/s"]
    if side.qps is not None and rate >= 0.8 * side.qps:
        parts.append(f"at its client limit (qps {side.qps:g})")
    if share(phase, "machine") >= 0.85 * cores:
        parts.append(f"the machine's {cores} cores full ({share(phase, 'machine'):.2f}, "
                     f"{share(phase, 'others'):.2f} of it not ours)")
    parts.append(f"controller {share(phase, 'controller'):.2f} core, API server "
                 f"{share(phase, 'kube-apiserver'):.2f}, etcd {share(phase, 'etcd'):.2f}")
    return "; ".join(parts)


SESSION_ENV = "CRONCTL_BENCH_NICE"


def in_own_session(nice: int) -> int:
    """Run this script again in a new session (so a new autogroup, whose priority it then sets,
    without touching the caller's), passing SIGINT and SIGTERM on."""
    child = subprocess.Popen([sys.executable, *sys.argv], env={**os.environ, SESSION_ENV: str(nice)},
                             start_new_session=True)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda number, _frame: child.send_signal(number))
    return child.wait()


# -- main -------------------------------------------------------------------------------------


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--minutes", type=int, default=3, help="minutes of the every-minute workload (default 3)")
    parser.add_argument("--workloads", nargs="+", choices=["herd", "every-minute", LIFECYCLE],
                        default=["herd", "every-minute"])
    parser.add_argument("--run-seconds", type=float, default=5.0,
                        help="lifecycle: how long each Job's Pod runs on kwok's Nodes (default 5)")
    parser.add_argument("--sides", nargs="+", choices=["cronctl", "cronctl-2-shards", "cronctl-staged", "cronctl-fleet",
                                                       "cronjob-default", "cronjob-raised", "floor"],
                        default=["cronctl", "cronjob-default", "cronjob-raised"])
    parser.add_argument("--raised-qps", type=float, default=1000.0)
    parser.add_argument("--raised-burst", type=int, default=2000)
    parser.add_argument("--herd-timeout", type=float, default=None,
                        help="seconds after the minute to give up on a herd (default max(120, 0.2 x size))")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="every-minute: seconds after the last minute's end to give up (default 30)")
    parser.add_argument("--json", type=Path, help="also write the phases' figures to this file")
    parser.add_argument("--apiserver-arg", action="append", default=[], metavar="FLAG",
                        help="one more kube-apiserver flag, repeatable (--apiserver-arg=--profiling=true lets "
                             "`kubectl get --raw /debug/pprof/profile` profile it during a phase)")
    parser.add_argument("--nice", type=int, default=None,
                        help="run the benchmark, the control plane and the controllers in a session of their own "
                             "with this priority (e.g. -20, as root): on a shared machine whose kernel gives every "
                             "session an equal share (autogroups), the others' load otherwise sets the pace")
    return parser.parse_args()


LIFECYCLE_NODES = 24  # kwok Nodes of 110 Pods each: every Pod of a 2,000-schedule minute has a place
# The cluster's job controller, the same for every side, sized for a fleet's minute: at its defaults
# (20 requests/s, 5 syncs at once) it ended 500 runs in 4 minutes, and the window measured its
# backlog rather than the sides.
LIFECYCLE_CONTROLLER_MANAGER_ARGS = ("--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-job-syncs=50")


def lifecycle_plane() -> None:
    """The lifecycle control plane for this benchmark: its kube-controller-manager runs the job
    controller but not its own CronJob controller (each CronJob side runs one of its own, with
    its limits; two would race), and enough kwok Nodes for a minute's Pods."""
    import tests.kube.controlplane as plane

    plane.LIFECYCLE_CONTROLLERS = (*plane.CONTROLLERS, "job")
    plane.NODES = tuple(f"kwok-node-{index}" for index in range(LIFECYCLE_NODES))


def main() -> int:
    args = arguments()
    if args.nice is not None and os.environ.get(SESSION_ENV) != str(args.nice):
        return in_own_session(args.nice)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the processes on the way out
    if args.nice is not None:
        kb.prioritize(os.getpid(), args.nice)

    bin_dir = ensure_binaries()
    helm = bin_dir / "helm"
    if not helm.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "build-control-plane.sh"), "--with-helm"], check=True)
    chosen = [side for side in sides(args.raised_qps, args.raised_burst) if side.key in args.sides]
    work = Path(tempfile.mkdtemp(prefix="cronctl-vs-cronjob-"))
    policy, audit_log = work / "audit-policy.yaml", work / "audit.log"
    policy.write_text(kb.audit_policy(side.user for side in chosen))
    audit_args = [f"--audit-policy-file={policy}", f"--audit-log-path={audit_log}", "--audit-log-format=json",
                  "--audit-log-mode=blocking", "--max-requests-inflight=800", "--max-mutating-requests-inflight=400",
                  *args.apiserver_arg]
    operator_dir, digest = kb.snapshot_operator(work)
    print(f"cronctl vs CronJob; operator {kb.describe_operator()}, run from a copy (python files {digest}); "
          f"{os.cpu_count()} CPUs, load average {Path('/proc/loadavg').read_text().split()[0]}"
          + ("" if args.nice is None else f", run at nice {args.nice} in a session of its own") + f"; work dir {work}",
          flush=True)
    results: list[Phase] = []
    lifecycle = LIFECYCLE in args.workloads
    if lifecycle:
        lifecycle_plane()
    with ControlPlane(bin_dir=bin_dir, extra_apiserver_args=audit_args, lifecycle=lifecycle,
                      extra_controller_manager_args=LIFECYCLE_CONTROLLER_MANAGER_ARGS if lifecycle else ()) as cp:
        if args.nice is not None:
            for process in (cp._apiserver, cp._etcd, cp._controller_manager):
                kb.prioritize(process.pid, args.nice)  # type: ignore[union-attr]
        kb.kubectl(cp, "apply", "-f", str(ROOT / "crds" / "cronschedule.yaml"),
                   "-f", str(ROOT / "crds" / "cronschedule-policy.yaml"))
        kb.kubectl(cp, "wait", "--for=condition=Established", "crd/cronschedules.cronctl.dev", "--timeout=60s")
        version = json.loads(kb.kubectl(cp, "version", "-o", "json"))["serverVersion"]["gitVersion"]
        print(f"kube-apiserver and kube-controller-manager {version}", flush=True)
        bench = Bench(cp, helm, audit_log, work, operator_dir, args.minutes, args.herd_timeout, args.grace,
                      args.nice, args.run_seconds)
        for size in args.sizes:
            for workload in args.workloads:
                phases = []
                for side in chosen:
                    phase = bench.run(side, workload, size)
                    phases.append(phase)
                    results.append(phase)
                    delays = ", ".join(f"{name} {seconds(percentile(phase.delays, fraction))}"
                                       for name, fraction in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)))
                    print(f"    -> {phase.launched}/{phase.expected} able to run; delay (s) {delays}; "
                          f"{limits_line(phase, side)}", flush=True)
                title = (f"herd: {size} schedules due at one minute" if workload == "herd"
                         else f"every-minute: {size} schedules due at each of {args.minutes} minutes"
                         if workload != LIFECYCLE else
                         f"lifecycle: {size} schedules due at each of {args.minutes} minutes, each Job's Pod "
                         f"running {args.run_seconds:g} s and ending (per launch = per run, launch to end)")
                print("\n" + table(title, phases, [side.label for side in chosen]), flush=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(phase) for phase in results], default=str, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
