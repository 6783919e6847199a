"""The operator at scale, against the test API server (kube-apiserver + etcd on loopback).

Prints, for each fleet size (default 500 then 5000, so the growth shows):

1. accepted: the fleet applied at once (rendered by charts/cronschedule-fleet),
   time until every CronSchedule has a next fire time; the operator's memory
   (peak RSS) and CPU seconds;
2. firing: every-minute schedules over several minutes of injected clock, the
   delay from the moment the clock reaches the nominal minute to each Job's
   creation (p50 / p99 / max; Job creation stamps have one-second resolution);
3. idle: schedules whose next fire is months away while the injected clock
   moves on: the operator's API requests per minute, by verb and resource,
   counted exactly from the API server's audit log (the operator has its own
   user); the goal is none but its watches (and its Lease renewals, which
   leader election needs).

The same fleet under kube-controller-manager's own CronJob controller, on the
wall clock, side by side with cronctl: ``bench_vs_cronjob.py``.

This is a benchmark, not a test: it asserts nothing about speed. Run from the
repository root (needs the control-plane binaries and helm, built by
``scripts/build-control-plane.sh --with-helm``):

    python benchmarks/bench_operator_scale.py [--sizes 500 5000] [--minutes 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

from kube_bench import ROOT, OperatorProcess, kubectl, list_items, render_fleet, wait_until

from tests.kube.controlplane import ControlPlane, ensure_binaries  # noqa: E402

OPERATOR_USER = "cronctl-operator"
AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    users: ["cronctl-operator"]
  - level: None
"""
START = "2024-03-01T00:00"


def count_ready(cp: ControlPlane, namespace: str) -> int:
    return sum(1 for item in list_items(cp, "cronschedules", namespace)
               if (item.get("status") or {}).get("nextFireTime"))


def apply_and_accept(cp: ControlPlane, helm: Path, op: OperatorProcess, namespace: str, count: int,
                     schedule: str) -> dict[str, float]:
    manifests = render_fleet(helm, namespace, "s", count, schedule)
    cpu0, t0 = op.cpu_seconds(), time.monotonic()
    kubectl(cp, "create", "-n", namespace, "-f", "-", input=manifests)
    applied = time.monotonic() - t0
    wait_until(f"{count} schedules accepted", lambda: count_ready(cp, namespace) == count, timeout=1800, every=2)
    return {"apply_s": applied, "accepted_s": time.monotonic() - t0, "cpu_s": op.cpu_seconds() - cpu0,
            "rss_mib": op.peak_rss_mib()}


def fire_minutes(cp: ControlPlane, op: OperatorProcess, namespace: str, count: int, minutes: int) -> dict[str, float]:
    delays: list[float] = []
    cpu0 = op.cpu_seconds()
    for minute in range(1, minutes + 1):
        op.set_clock(f"2024-03-01T00:{minute:02d}:00")
        moved = time.time()
        jobs = wait_until(f"{count} Jobs of minute {minute}",
                          lambda m=minute: (items := list_items(cp, "jobs", namespace)) and len(items) >= m * count
                          and items, timeout=1800, every=2)
        nominal_suffix = f"-{_minutes_since_epoch(minute)}"
        for job in jobs:
            if job["metadata"]["name"].endswith(nominal_suffix):
                created = datetime.fromisoformat(job["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
                delays.append(max(0.0, created.timestamp() - int(moved)))
    delays.sort()
    return {"p50_s": statistics.median(delays), "p99_s": delays[int(len(delays) * 0.99) - 1], "max_s": delays[-1],
            "jobs": len(delays), "cpu_s": op.cpu_seconds() - cpu0, "rss_mib": op.peak_rss_mib()}


def _minutes_since_epoch(minute: int) -> int:
    from cronctl.core.times import parse_time

    value = parse_time(f"2024-03-01T00:{minute:02d}")
    assert value is not None
    return value


def idle_requests(cp: ControlPlane, op: OperatorProcess, audit_log: Path, window: float) -> Counter:
    """Requests by the operator's user while the injected clock moves over idle schedules."""
    offset = audit_log.stat().st_size
    start = time.monotonic()
    minute = 1
    while time.monotonic() - start < window:
        op.set_clock(f"2024-03-01T{minute // 60:02d}:{minute % 60:02d}")  # a minute every 5 s of wall time
        minute += 1
        time.sleep(5)
    counts: Counter = Counter()
    with audit_log.open() as handle:
        handle.seek(offset)
        for line in handle:
            event = json.loads(line)
            if event.get("user", {}).get("username") != OPERATOR_USER or event.get("stage") != "ResponseComplete":
                continue
            resource = (event.get("objectRef") or {}).get("resource", event.get("requestURI", "?"))
            counts[f"{event['verb']} {resource}"] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--minutes", type=int, default=3, help="minutes of every-minute firing (default 3)")
    parser.add_argument("--idle-seconds", type=float, default=60.0, help="wall seconds of the idle window")
    args = parser.parse_args()
    bin_dir = ensure_binaries()
    helm = bin_dir / "helm"
    if not helm.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "build-control-plane.sh"), "--with-helm"], check=True)
    work = Path(tempfile.mkdtemp(prefix="cronctl-scale-"))
    policy, audit_log = work / "audit-policy.yaml", work / "audit.log"
    policy.write_text(AUDIT_POLICY)
    audit_args = [f"--audit-policy-file={policy}", f"--audit-log-path={audit_log}", "--audit-log-format=json",
                  "--audit-log-mode=blocking", "--max-requests-inflight=800", "--max-mutating-requests-inflight=400"]
    print(f"cronctl operator scale benchmark; work dir {work}", flush=True)
    with ControlPlane(bin_dir=bin_dir, extra_apiserver_args=audit_args) as cp:
        kubectl(cp, "apply", "-f", str(ROOT / "crds" / "cronschedule.yaml"),
                "-f", str(ROOT / "crds" / "cronschedule-policy.yaml"))
        kubectl(cp, "wait", "--for=condition=Established", "crd/cronschedules.cronctl.dev", "--timeout=60s")
        operator_kubeconfig = cp.user_kubeconfig(OPERATOR_USER, groups=["system:masters"])
        for size in args.sizes:
            for phase, schedule in (("busy", "* * * * *"), ("idle", "0 0 1 1 *")):
                namespace = f"{phase}-{size}"
                kubectl(cp, "create", "namespace", namespace)
                op = OperatorProcess(cp, operator_kubeconfig, OPERATOR_USER, namespace, work, clock_start=START)
                try:
                    accepted = apply_and_accept(cp, helm, op, namespace, size, schedule)
                    print(f"[{size:>5} {phase}] accepted: kubectl create {accepted['apply_s']:.1f} s; all with a "
                          f"next fire after {accepted['accepted_s']:.1f} s; operator CPU {accepted['cpu_s']:.1f} s, "
                          f"peak RSS {accepted['rss_mib']:.0f} MiB", flush=True)
                    if phase == "busy":
                        fired = fire_minutes(cp, op, namespace, size, args.minutes)
                        print(f"[{size:>5} busy] launch delay over {args.minutes} minutes ({fired['jobs']} Jobs): "
                              f"p50 {fired['p50_s']:.0f} s, p99 {fired['p99_s']:.0f} s, max {fired['max_s']:.0f} s; "
                              f"CPU {fired['cpu_s']:.1f} s, peak RSS {fired['rss_mib']:.0f} MiB", flush=True)
                    else:
                        counts = idle_requests(cp, op, audit_log, args.idle_seconds)
                        per_minute = sum(counts.values()) * 60 / args.idle_seconds
                        detail = ", ".join(f"{what}: {n}" for what, n in counts.most_common()) or "none"
                        print(f"[{size:>5} idle] API requests per minute: {per_minute:.1f} ({detail}; long-running "
                              f"watches count when they end)", flush=True)
                finally:
                    op.stop()
                kubectl(cp, "delete", "namespace", namespace, "--wait=false")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
