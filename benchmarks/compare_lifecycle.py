"""What cronctl and Kubernetes' CronJob controller each do with Pods that get stuck, hang or fail.

One cluster with the whole Job lifecycle (tests/kube/controlplane.py,
``lifecycle=True``: the job controller, kube-scheduler, and kwok's simulated
Nodes and Pods with the Stages of tests/kube/kwok-stages.yaml), and both
controllers on it at once, on the wall clock: cronctl's operator watching
namespace ``cronctl``, kube-controller-manager's CronJob controller (its own
process, ``--controllers=cronjob-controller``) with the same schedules as
CronJobs in namespace ``cronjob``. Every scenario fires every minute:

* ``forbid-stuck``: Forbid, and a Pod that never starts (Pending for ever, as
  with a wrong image tag: Kubernetes issue 58748);
* ``forbid-hung``: Forbid, a Pod that runs for ever, and a two-minute limit
  (cronctl ``timeoutMinutes: 2``; CronJob ``activeDeadlineSeconds: 120``);
* ``failed-history``: every Pod fails (exit code 1), no retry inside the Job
  (``backoffLimit: 0``), one failed run kept (``failedJobsHistoryLimit: 1``).

After ``--minutes`` (default 6) it prints, per scenario and controller, the
Jobs it created, the Jobs and Pods left, how the Jobs ended, and what the
controller's own status says. It asserts nothing; the tests in
tests/kube/lifecycle/ do.

    python benchmarks/compare_lifecycle.py [--minutes 6]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kube_bench as kb

from tests.kube.controlplane import ControlPlane, ensure_binaries  # noqa: E402

CRONCTL_NS, CRONJOB_NS = "cronctl", "cronjob"
CRONCTL_USER, CRONJOB_USER = "cronctl-operator", "cronjob-controller"


@dataclass(frozen=True)
class Scenario:
    name: str
    policy: str
    pod_annotations: dict[str, str]
    cronctl: dict[str, Any] = field(default_factory=dict)  # CronSchedule spec fields
    cronjob: dict[str, Any] = field(default_factory=dict)  # CronJob spec fields
    job: dict[str, Any] = field(default_factory=dict)  # Job spec fields, for both


SCENARIOS = (
    Scenario("forbid-stuck", "Forbid", {"cronctl.test/stuck": "true"}),
    Scenario("forbid-hung", "Forbid", {"cronctl.test/run-for": "24h"},
             cronctl={"timeoutMinutes": 2}, job={}, cronjob={"activeDeadlineSeconds": 120}),
    Scenario("failed-history", "Allow", {"cronctl.test/exit-code": "1", "cronctl.test/run-for": "2s"},
             cronctl={"failedJobsHistoryLimit": 1}, cronjob={"failedJobsHistoryLimit": 1},
             job={"backoffLimit": 0}),
)


def pod_template(scenario: Scenario) -> dict[str, Any]:
    return {"metadata": {"annotations": scenario.pod_annotations, "labels": {"scenario": scenario.name}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}


def cron_schedule(scenario: Scenario) -> dict[str, Any]:
    return {"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
            "metadata": {"name": scenario.name, "namespace": CRONCTL_NS},
            "spec": {"schedule": "* * * * *", "concurrencyPolicy": scenario.policy, **scenario.cronctl,
                     "jobTemplate": {"spec": {**scenario.job, "template": pod_template(scenario)}}}}


def cron_job(scenario: Scenario) -> dict[str, Any]:
    job_spec = {**scenario.job, "template": pod_template(scenario)}
    if "activeDeadlineSeconds" in scenario.cronjob:
        job_spec["activeDeadlineSeconds"] = scenario.cronjob["activeDeadlineSeconds"]
    extra = {key: value for key, value in scenario.cronjob.items() if key != "activeDeadlineSeconds"}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": scenario.name, "namespace": CRONJOB_NS},
            "spec": {"schedule": "* * * * *", "timeZone": "Etc/UTC", "concurrencyPolicy": scenario.policy, **extra,
                     "jobTemplate": {"spec": job_spec}}}


@dataclass
class Seen:
    """What the cluster showed of one side's scenario, polled every few seconds."""

    jobs_ever: set[str] = field(default_factory=set)
    pods_ever: set[str] = field(default_factory=set)


def owner_scenario(obj: dict[str, Any]) -> str | None:
    labels = obj["metadata"].get("labels") or {}
    return labels.get("cronctl.dev/schedule") or next(
        (ref["name"] for ref in obj["metadata"].get("ownerReferences") or [] if ref["kind"] == "CronJob"), None)


def poll(cp: ControlPlane, seen: dict[tuple[str, str], Seen]) -> None:
    for namespace in (CRONCTL_NS, CRONJOB_NS):
        for job in kb.list_items(cp, "jobs", namespace):
            name = owner_scenario(job)
            if name is not None and not job["spec"].get("suspend"):
                seen.setdefault((namespace, name), Seen()).jobs_ever.add(job["metadata"]["name"])
        for pod in kb.list_items(cp, "pods", namespace):
            scenario = (pod["metadata"].get("labels") or {}).get("scenario")
            if scenario is not None:
                seen.setdefault((namespace, scenario), Seen()).pods_ever.add(pod["metadata"]["name"])


def job_end(job: dict[str, Any]) -> str:
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition["type"] in ("Complete", "Failed") and condition["status"] == "True":
            return f"{condition['type']} ({condition.get('reason', '')})"
    return "Suspended" if job["spec"].get("suspend") else "active"


def outcome(cp: ControlPlane, namespace: str, scenario: str, seen: Seen) -> dict[str, str]:
    jobs = [job for job in kb.list_items(cp, "jobs", namespace) if owner_scenario(job) == scenario
            and not (job["spec"].get("suspend") and "cronctl.dev/staged" in (job["metadata"].get("labels") or {}))]
    pods = [pod for pod in kb.list_items(cp, "pods", namespace)
            if (pod["metadata"].get("labels") or {}).get("scenario") == scenario]
    ends = Counter(job_end(job) for job in jobs)
    phases = Counter(pod["status"].get("phase", "?") for pod in pods)
    row = {"Jobs created": str(len(seen.jobs_ever)), "Pods created": str(len(seen.pods_ever)),
           "Jobs left": str(len(jobs)) + (f": {', '.join(f'{n} {e}' for e, n in sorted(ends.items()))}" if jobs else ""),
           "Pods left": str(len(pods)) + (f": {', '.join(f'{n} {p}' for p, n in sorted(phases.items()))}" if pods else "")}
    if namespace == CRONCTL_NS:
        status = json.loads(kb.kubectl(cp, "get", "cronschedule", scenario, "-n", namespace, "-o", "json"))["status"]
        states = Counter(run["state"] for run in status.get("history", []))
        row["what the controller's status says"] = (
            f"launched {status.get('launched', 0)}, skipped {status.get('skipped', 0)}, "
            f"active {len(status.get('active', []))}; history kept: "
            + (", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "none"))
    else:
        status = json.loads(kb.kubectl(cp, "get", "cronjob", scenario, "-n", namespace, "-o", "json")).get("status", {})
        row["what the controller's status says"] = (
            f"active {len(status.get('active', []))}, last schedule {status.get('lastScheduleTime', '-')}, "
            f"last success {status.get('lastSuccessfulTime', '-')}")
    return row


def table(scenario: str, rows: dict[str, dict[str, str]]) -> str:
    keys = list(next(iter(rows.values())))
    lines = [f"### {scenario}", "", "|  | cronctl | CronJob |", "|---|---|---|"]
    lines += [f"| {key} | {rows['cronctl'][key]} | {rows['CronJob'][key]} |" for key in keys]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=6, help="wall-clock minutes to let both run (default 6)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cronctl-lifecycle-"))
    bin_dir = ensure_binaries()
    with ControlPlane(bin_dir=bin_dir, lifecycle=True) as cp:
        kb.kubectl(cp, "apply", "-f", str(kb.ROOT / "crds" / "cronschedule.yaml"),
                   "-f", str(kb.ROOT / "crds" / "cronschedule-policy.yaml"))
        kb.kubectl(cp, "wait", "--for=condition=Established", "crd/cronschedules.cronctl.dev", "--timeout=60s")
        for namespace in (CRONCTL_NS, CRONJOB_NS):
            kb.kubectl(cp, "create", "namespace", namespace)
        admin = cp.kubeconfig
        assert admin is not None
        operator = kb.OperatorProcess(cp, admin, CRONCTL_USER, CRONCTL_NS, work, args=["--no-leader-election"])
        cronjobs = kb.CronJobControllerProcess(cp, admin, CRONJOB_USER, CRONJOB_NS, work, qps=20, burst=30,
                                               name="cronjob-controller")
        try:
            objects = [cron_schedule(s) for s in SCENARIOS] + [cron_job(s) for s in SCENARIOS]
            kb.kubectl(cp, "apply", "-f", "-", input="\n---\n".join(json.dumps(o) for o in objects))
            print(f"both controllers running on {cp.url}; {args.minutes} wall-clock minutes (work dir {work})",
                  flush=True)
            seen: dict[tuple[str, str], Seen] = {}
            deadline = time.monotonic() + args.minutes * 60
            said = args.minutes
            while time.monotonic() < deadline:
                poll(cp, seen)
                time.sleep(3)
                left = max(0, math.ceil((deadline - time.monotonic()) / 60))
                if left < said:
                    said = left
                    print(f"  {left} min left", flush=True)
            print(f"\n## {args.minutes} minutes of every-minute schedules, each controller alone in its namespace\n")
            for scenario in SCENARIOS:
                rows = {side: outcome(cp, namespace, scenario.name, seen.get((namespace, scenario.name), Seen()))
                        for side, namespace in (("cronctl", CRONCTL_NS), ("CronJob", CRONJOB_NS))}
                print(table(scenario.name, rows))
        finally:
            operator.stop()
            cronjobs.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
