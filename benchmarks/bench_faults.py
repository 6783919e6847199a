"""cronctl and the CronJob controller under the faults a cluster has, a minute per fault, in one run.

Both controllers run at the same time on one test API server, each in its
own namespace with the same fleet (every-minute schedules, a tenth of them
Forbid whose first run never ends: no job controller runs, so no Job ever
ends), each through the same TCP fault proxy (``tests/kube/faultproxy.py``)
with its own client user: cronctl's operator (``python -m cronctl operator``,
leader election on, the wall clock) and kube-controller-manager running only
its CronJob controller (qps 1000, burst 2000, leader election on). After a
quiet minute, one fault a minute, each at its own phase of the minute:

    reset-before    every connection reset 1 s before the minute
    reset-during    every connection reset 0.3 s after it, during the launches
    blackhole       nothing crosses from 3 s before the minute for 10 s
    idle-reset      every connection reset at :50 (as the API server closes one idle
                    for 90 s), a 10 s blackhole from :58, new connections reset at its end
    watch-cut       every connection reset 1 s after the minute (the watches mid-stream)
    silent          every open connection silently dead from 0.5 s before the minute
                    (a NAT or conntrack entry dropped); new connections work
    cut-answers     answers cut mid-body from 0.5 s before the minute for 3 s
    slow            300 ms added to every chunk from 30 s before the minute for a minute
    etcd-stop       etcd stopped from 5 s before the minute for 15 s
    apiserver-kill  kube-apiserver killed 1 s before the minute, started again 5 s later

and a quiet minute after the last. A controller that exits is started again
(as its Deployment would) and counted. For each minute and side it prints:
runs that could run (a Job for the minute exists, not suspended), runs
missed, Jobs doubled (two for one schedule and nominal time), cronctl's
staged Jobs left suspended for a minute that had come, the p99 delay from
the nominal second until the Job could run (from a watch of the Jobs that
goes straight to the API server, not through the proxy), the seconds from
the fault's end until the minute's last Job could run, and exits.

This is a benchmark, not a test: it asserts nothing, and takes about 14
minutes of wall clock (the CronJob controller has no clock to move). Run it
from the repository root (needs the binaries of scripts/build-control-plane.sh):

    python benchmarks/bench_faults.py [--size 220] [--faults blackhole idle-reset ...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import kube_bench as kb
from kube_bench import ROOT

from tests.kube.controlplane import ControlPlane, ensure_binaries  # noqa: E402
from tests.kube.faultproxy import FaultProxy, kubeconfig_through  # noqa: E402

SIDES = ("cronctl", "cronjob")
USERS = {"cronctl": "cronctl-faults", "cronjob": "cronjob-controller-faults"}
NAMESPACES = {"cronctl": "faults-cronctl", "cronjob": "faults-cronjob"}
SCHEDULED = {"cronctl": "cronctl.dev/scheduled-time", "cronjob": "batch.kubernetes.io/cronjob-scheduled-timestamp"}
STAGED_LABEL = "cronctl.dev/staged"


@dataclass(frozen=True)
class Fault:
    """A fault: its steps at seconds from the minute, and when it ends (seconds from the minute)."""

    name: str
    says: str
    steps: tuple[tuple[float, str], ...]  # (offset, step name)
    ends: float


FAULTS = [
    Fault("reset-before", "connections reset just before the minute", ((-1.0, "reset_all"),), -1.0),
    Fault("reset-during", "connections reset during the launches", ((0.3, "reset_all"),), 0.3),
    Fault("blackhole", "10 s blackhole of every connection", ((-3.0, "blackhole_10"),), 7.0),
    Fault("idle-reset", "every connection reset at :50, a 10 s blackhole from :58, new connections reset at "
                        "its end", ((-10.0, "reset_all"), (-2.0, "blackhole_10_then_reset")), 9.0),
    Fault("watch-cut", "every connection (the watch streams mid-answer) reset 1 s after the minute",
          ((1.0, "reset_all"),), 1.0),
    Fault("silent", "kept connections gone silent (a conntrack entry dropped) just before the minute",
          ((-0.5, "go_silent"),), -0.5),
    Fault("cut-answers", "answers cut mid-body for 3 s across the minute", ((-0.5, "cut_answers_3"),), 2.5),
    Fault("slow", "300 ms added to every chunk for a minute", ((-30.0, "slow_60"),), 30.0),
    Fault("etcd-stop", "etcd stopped for 15 s across the minute", ((-5.0, "pause_etcd"), (10.0, "resume_etcd")),
          10.0),
    Fault("apiserver-kill", "kube-apiserver killed and started again 5 s later", ((-1.0, "restart_apiserver"),),
          5.0),
]


@dataclass
class Minute:
    nominal: int  # minutes since 1970
    fault: Fault | None
    fault_end: float | None = None  # seconds since 1970 the fault ended (the API server ready again, for a restart)
    exits: Counter[str] = field(default_factory=Counter)


class Side:
    """One controller, restarted (and counted) whenever its process exits, as a Deployment would."""

    def __init__(self, key: str, start: Callable[[], kb.Controller]) -> None:
        self.key, self._start = key, start
        self.controller = start()
        self.generations = 1
        self.logs: list[Path] = []

    def restarted_if_gone(self) -> bool:
        if self.controller.alive():
            return False
        old = self.controller.log_path
        kept = old.with_name(f"{old.stem}.{self.generations}{old.suffix}")
        old.rename(kept)
        self.logs.append(kept)
        self.controller = self._start()
        self.generations += 1
        return True


def fleet(side: str, size: int) -> list[dict[str, Any]]:
    """``size`` every-minute schedules of one side, one in eleven of them Forbid."""
    namespace, objects = NAMESPACES[side], []
    for index in range(size):
        policy = "Forbid" if index % 11 == 10 else "Allow"
        template = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "main", "image": "busybox", "command": ["true"]}]}}}}
        spec = {"schedule": "* * * * *", "concurrencyPolicy": policy, "jobTemplate": template}
        kind = {"cronctl": ("cronctl.dev/v1", "CronSchedule"), "cronjob": ("batch/v1", "CronJob")}[side]
        objects.append({"apiVersion": kind[0], "kind": kind[1],
                        "metadata": {"name": f"f{index:04d}", "namespace": namespace,
                                     "labels": {"bench": "faults"}}, "spec": spec})
    return objects


def runnable_names(size: int) -> set[str]:
    return {f"f{index:04d}" for index in range(size) if index % 11 != 10}


class FaultBench:
    def __init__(self, cp: ControlPlane, work: Path, size: int, operator_dir: Path) -> None:
        self.cp, self.work, self.size, self.operator_dir = cp, work, size, operator_dir
        self.api = kb.Api(cp)
        host, port = cp.url.removeprefix("https://").rsplit(":", 1)
        self.proxy = FaultProxy(host, int(port)).__enter__()
        self.kubeconfigs = {side: self._through_proxy(side) for side in SIDES}
        self.watches: dict[str, kb.JobWatch] = {}
        self.sides: dict[str, Side] = {}
        self._watching = threading.Event()

    def _through_proxy(self, side: str) -> Path:
        direct = self.cp.user_kubeconfig(USERS[side], groups=["system:masters"])
        through = self.work / f"{side}-through-proxy.kubeconfig"
        through.write_text(kubeconfig_through(direct.read_text(), self.cp.url, self.proxy.url))
        return through

    def start(self) -> None:
        for side in SIDES:
            kb.kubectl(self.cp, "create", "namespace", NAMESPACES[side])
            self.watches[side] = kb.JobWatch(self.api, NAMESPACES[side])
        self.sides["cronctl"] = Side("cronctl", lambda: kb.OperatorProcess(
            self.cp, self.kubeconfigs["cronctl"], USERS["cronctl"], NAMESPACES["cronctl"], self.work,
            operator_dir=self.operator_dir))
        self.sides["cronjob"] = Side("cronjob", lambda: kb.CronJobControllerProcess(
            self.cp, self.kubeconfigs["cronjob"], USERS["cronjob"], NAMESPACES["cronjob"], self.work, 1000, 2000,
            "cronjob-controller"))
        kb.wait_until("the operator's scheduler", lambda: "scheduler started" in self.sides["cronctl"].controller.log_text(),
                      timeout=90, every=0.2)
        kb.wait_until("the CronJob controller's caches", self.sides["cronjob"].controller.ready, timeout=90, every=0.2)
        for side in SIDES:
            self.api.create_all(fleet(side, self.size))
        kb.wait_until("the fleet accepted by cronctl", self._accepted, timeout=300, every=1.0)

    def _accepted(self) -> bool:
        status, listing = self.api.request("GET", f"/apis/cronctl.dev/v1/namespaces/{NAMESPACES['cronctl']}/"
                                                  "cronschedules")
        return status == 200 and sum(1 for item in listing["items"]
                                     if (item.get("status") or {}).get("nextFireTime")) >= self.size

    def run(self, faults: list[Fault]) -> list[Minute]:
        first = math.ceil((time.time() + 20) / 60)
        minutes = [Minute(first, None)] + [Minute(first + 1 + i, fault) for i, fault in enumerate(faults)]
        minutes.append(Minute(first + 1 + len(faults), None))
        watcher = threading.Thread(target=self._watch_exits, args=(minutes,), daemon=True)
        watcher.start()
        for minute in minutes:
            print(f"  {time.strftime('%H:%M', time.gmtime(minute.nominal * 60))} "
                  f"{minute.fault.says if minute.fault else 'no fault'}", flush=True)
            if minute.fault is not None:
                self._inject(minute)
        _sleep_until((minutes[-1].nominal + 1) * 60 + 5)  # the quiet minute's launches
        self._watching.set()
        return minutes

    def _inject(self, minute: Minute) -> None:
        assert minute.fault is not None
        for offset, step in minute.fault.steps:
            _sleep_until(minute.nominal * 60 + offset)
            self._step(step)
        if minute.fault.name == "apiserver-kill":
            minute.fault_end = time.time()  # once it answers again
        else:
            minute.fault_end = minute.nominal * 60 + minute.fault.ends

    def _step(self, step: str) -> None:
        proxy, cp = self.proxy, self.cp
        {"reset_all": proxy.reset_all,
         "go_silent": proxy.go_silent,
         "blackhole_10": lambda: proxy.blackhole(10.0),
         "blackhole_10_then_reset": lambda: proxy.blackhole(10.0, reset_at_end=1.0),
         "cut_answers_3": lambda: proxy.cut_answers(3.0),
         "slow_60": lambda: proxy.delay(0.3, 60.0),
         "pause_etcd": cp.pause_etcd,
         "resume_etcd": cp.resume_etcd,
         "restart_apiserver": lambda: cp.restart_apiserver(5.0)}[step]()

    def _watch_exits(self, minutes: list[Minute]) -> None:
        while not self._watching.is_set():
            for key, side in self.sides.items():
                if side.restarted_if_gone():
                    # The minute whose fault it followed: the latest that began 30 s ago or earlier.
                    now = time.time()
                    minute = max((m for m in minutes if m.nominal * 60 - 30 <= now), key=lambda m: m.nominal,
                                 default=minutes[0])
                    minute.exits[key] += 1
                    print(f"    {key} exited; started again", flush=True)
            time.sleep(0.5)

    def stop(self) -> None:
        for side in self.sides.values():
            side.controller.stop()
        for watch in self.watches.values():
            watch.stop()
        self.proxy.stop()


# -- what happened ---------------------------------------------------------------------------


@dataclass
class Outcome:
    runnable: int = 0
    missed: int = 0
    doubled: int = 0
    stuck: int = 0
    delays: list[float] = field(default_factory=list)
    last_runnable: float | None = None


def outcomes(bench: FaultBench, minutes: list[Minute]) -> dict[tuple[str, int], Outcome]:
    expected = runnable_names(bench.size)
    found: dict[tuple[str, int], Outcome] = {}
    for side in SIDES:
        jobs = kb.list_items(bench.cp, "jobs", NAMESPACES[side])
        seen = {job.name: job for job in bench.watches[side].snapshot()}
        per_time: Counter[tuple[str, str]] = Counter()
        runs: dict[int, set[str]] = defaultdict(set)
        for job in jobs:
            name = job["metadata"]["name"]
            nominal = kb.nominal_minute(name)
            owner = (job["metadata"].get("ownerReferences") or [{}])[0].get("name", "")
            per_time[(owner, (job["metadata"].get("annotations") or {}).get(SCHEDULED[side], name))] += 1
            if nominal is None:
                continue
            schedule, minute = nominal
            suspended = bool(job["spec"].get("suspend"))
            if not suspended:
                runs[minute].add(schedule)
            outcome = found.setdefault((side, minute), Outcome())
            if suspended and minute <= minutes[-1].nominal:
                outcome.stuck += 1
            watched = seen.get(name)
            if not suspended and watched is not None and watched.runnable is not None:
                outcome.delays.append(watched.runnable - minute * 60)
                last = outcome.last_runnable
                outcome.last_runnable = watched.runnable if last is None else max(last, watched.runnable)
        doubled = sum(count - 1 for count in per_time.values() if count > 1)
        for minute in minutes:
            outcome = found.setdefault((side, minute.nominal), Outcome())
            outcome.runnable = len(runs[minute.nominal] & expected)
            outcome.missed = len(expected - runs[minute.nominal])
            outcome.doubled = doubled if minute is minutes[-1] else 0  # counted over the run, said once
    return found


def report(bench: FaultBench, minutes: list[Minute]) -> tuple[str, list[dict[str, Any]]]:
    found = outcomes(bench, minutes)
    expected = len(runnable_names(bench.size))
    lines = [f"{bench.size} every-minute schedules a side ({expected} runnable, "
             f"{bench.size - expected} Forbid with a run that never ends)", "",
             "| fault (at the minute) | cronctl: runnable / missed / stuck / p99 delay / resumed after / exits "
             "| CronJob: runnable / missed / p99 delay / resumed after / exits |", "|---|---|---|"]
    rows = []
    for minute in minutes:
        cells, row = [], {"minute": minute.nominal, "fault": minute.fault.name if minute.fault else None}
        for side in SIDES:
            outcome = found[(side, minute.nominal)]
            p99 = percentile(outcome.delays, 0.99)
            resumed = (None if minute.fault_end is None or outcome.last_runnable is None
                       else max(0.0, outcome.last_runnable - minute.fault_end))
            row[side] = {"runnable": outcome.runnable, "missed": outcome.missed, "stuck": outcome.stuck,
                         "doubled": outcome.doubled, "p99_delay_s": p99, "resumed_after_s": resumed,
                         "exits": minute.exits[side]}
            parts = [str(outcome.runnable), str(outcome.missed)]
            if side == "cronctl":
                parts.append(str(outcome.stuck))
            parts += [_seconds(p99), _seconds(resumed), str(minute.exits[side])]
            cells.append(" / ".join(parts))
        rows.append(row)
        says = minute.fault.says if minute.fault else "no fault"
        lines.append(f"| {says} | {cells[0]} | {cells[1]} |")
    doubled = {side: found[(side, minutes[-1].nominal)].doubled for side in SIDES}
    lines += ["", f"Jobs doubled over the run: cronctl {doubled['cronctl']}, CronJob {doubled['cronjob']}. "
                  f"Proxy: {dict(bench.proxy.stats)}."]
    return "\n".join(lines), rows


def percentile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _sleep_until(second: float) -> None:
    while (left := second - time.time()) > 0:
        time.sleep(min(left, 0.5))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=220, help="schedules a side (default 220)")
    parser.add_argument("--faults", nargs="+", choices=[fault.name for fault in FAULTS],
                        default=[fault.name for fault in FAULTS])
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    args = parser.parse_args()
    if args.size < 1:
        parser.error("--size: at least 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(tempfile.mkdtemp(prefix="cronctl-faults-"))
    faults = [fault for fault in FAULTS if fault.name in args.faults]
    operator_dir, digest = kb.snapshot_operator(work)  # the same code all run, whatever the tree does
    print(f"cronctl and CronJob under faults; operator {kb.describe_operator()}, run from a copy (python files "
          f"{digest}); work dir {work}", flush=True)
    with ControlPlane(bin_dir=ensure_binaries()) as cp:
        kb.kubectl(cp, "apply", "-f", str(ROOT / "crds" / "cronschedule.yaml"),
                   "-f", str(ROOT / "crds" / "cronschedule-policy.yaml"))
        kb.kubectl(cp, "wait", "--for=condition=Established", "crd/cronschedules.cronctl.dev", "--timeout=60s")
        bench = FaultBench(cp, work, args.size, operator_dir)
        try:
            bench.start()
            minutes = bench.run(faults)
            text, rows = report(bench, minutes)
        except KeyboardInterrupt:
            print("interrupted: nothing measured to the end", file=sys.stderr)
            return 130
        finally:
            bench.stop()
    print(text, flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
