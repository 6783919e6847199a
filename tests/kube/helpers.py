"""Helpers shared by the tests against the local API server: kubectl, bounded waits,
the operator as a subprocess with a clock file, and plain reads of what it wrote."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pytest
from kubernetes import client, config

from cronctl.core.times import parse_time

from .controlplane import ensure_binaries, find_binaries

ROOT = Path(__file__).resolve().parents[2]
CRD = ROOT / "crds" / "cronschedule.yaml"
POLICY = ROOT / "crds" / "cronschedule-policy.yaml"  # its ValidatingAdmissionPolicy and binding (issue 47)
POOL_CRD = ROOT / "crds" / "cronpool.yaml"
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
GROUP, VERSION, PLURAL = "cronctl.dev", "v1", "cronschedules"
WAIT_SECONDS = 60  # generous: CI machines are shared and loaded


def minutes(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


def kubectl(cp: Any, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KUBECTL, "--kubeconfig", str(cp.kubeconfig), *args], input=input,
                          capture_output=True, text=True, timeout=60, check=check)


def wait_for(what: str, probe: Callable[[], Any], timeout: float = WAIT_SECONDS) -> Any:
    """Poll until probe() returns something truthy; fail with the last value."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; last saw {value!r}")


class Operator:
    """``python -m cronctl operator`` as a subprocess, with a clock file it reads."""

    def __init__(self, cp: Any, namespace: str, workdir: Path, extra_args: Sequence[str] = (),
                 extra_env: Mapping[str, str] | None = None, name: str = "operator",
                 kubeconfig: Path | None = None, namespaces: Sequence[str] | None = None) -> None:
        """``name`` tells several operators in one test apart (their logs); they share the clock.
        ``kubeconfig`` is the identity the operator runs as (default: the admin's);
        ``namespaces`` are its ``--namespace`` flags (default: just ``namespace``; an empty
        list watches all namespaces, as a cluster-wide install does)."""
        self.cp, self.namespace = cp, namespace
        self.kubeconfig = kubeconfig
        self.namespaces = [namespace] if namespaces is None else list(namespaces)
        self.clock_file = workdir / "clock"
        self.log_file = workdir / f"{name}.log"
        self.extra_args, self.extra_env = list(extra_args), dict(extra_env or {})
        self.process: subprocess.Popen[bytes] | None = None

    def set_clock(self, text: str) -> None:
        tmp = self.clock_file.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(self.clock_file)

    def start(self) -> None:
        env = self.cp.env(**{"CRONCTL_CLOCK_FILE": str(self.clock_file),  # extra_env may set it "": the wall clock
                             "PYTHONPATH": str(ROOT / "operator") + os.pathsep + os.environ.get("PYTHONPATH", ""),
                             **self.extra_env})
        if self.kubeconfig is not None:
            env["KUBECONFIG"] = str(self.kubeconfig)
        flags = [arg for watched in self.namespaces for arg in ("--namespace", watched)]
        with self.log_file.open("ab") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "cronctl", "operator", *flags,
                                             *self.extra_args], env=env, stdout=log,
                                            stderr=subprocess.STDOUT)

    def kill(self) -> None:
        """kill -9: no cleanup, no last status write."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""


class Cluster:
    def __init__(self, cp: Any, namespace: str) -> None:
        api = config.new_client_from_config(config_file=str(cp.kubeconfig))
        self.cp, self.namespace = cp, namespace
        self.custom = client.CustomObjectsApi(api)
        self.batch = client.BatchV1Api(api)
        self.core = client.CoreV1Api(api)

    def apply(self, manifest: str) -> None:
        kubectl(self.cp, "apply", "-n", self.namespace, "-f", "-", input=textwrap.dedent(manifest))

    def schedule(self, name: str) -> dict[str, Any]:
        return self.custom.get_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, name)

    def status(self, name: str) -> dict[str, Any]:
        return self.schedule(name).get("status") or {}

    def jobs(self, name: str) -> list[client.V1Job]:
        items = self.batch.list_namespaced_job(self.namespace, label_selector=f"cronctl.dev/schedule={name}").items
        return sorted((job for job in items if job.metadata.deletion_timestamp is None),
                      key=lambda job: job.metadata.name)

    def job_names(self, name: str) -> list[str]:
        return [job.metadata.name for job in self.jobs(name)]

    def events(self, name: str) -> list[tuple[str, str]]:
        """The schedule's Events, oldest first, each as often as its count (a series is one Event
        with the latest message: each occurrence reads that one)."""
        items = self.core.list_namespaced_event(self.namespace,
                                                field_selector=f"involvedObject.name={name}").items
        return [(event.reason, event.message) for event in sorted(items, key=lambda e: e.metadata.creation_timestamp)
                for _ in range(event.count or 1)]

    def finish_job(self, job_name: str, kind: str, at: str) -> None:
        """Mark a Job Complete or Failed through the status subresource, as the job controller would."""
        now = at + ":00Z"
        conditions = [{"type": kind, "status": "True", "lastTransitionTime": now, "lastProbeTime": now}]
        if kind == "Complete":
            conditions.insert(0, {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now,
                                  "lastProbeTime": now})
            status = {"conditions": conditions, "startTime": now, "completionTime": now, "succeeded": 1}
        else:
            conditions.insert(0, {"type": "FailureTarget", "status": "True", "lastTransitionTime": now,
                                  "lastProbeTime": now})
            status = {"conditions": conditions, "startTime": now, "failed": 1}
        self.batch.patch_namespaced_job_status(job_name, self.namespace, {"status": status})


def schedule_manifest(name: str, schedule: str, policy: str = "Allow", **extra: Any) -> str:
    spec = {"schedule": schedule, "concurrencyPolicy": policy, **extra,
            "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}}}}}
    return json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                       "metadata": {"name": name}, "spec": spec})


def job_of(schedule: str, when: str) -> str:
    return f"{schedule}-{minutes(when)}"


def ready(cluster: Cluster, name: str) -> Callable[[], Any]:
    return lambda: cluster.status(name).get("nextFireTime")


def binaries(request: pytest.FixtureRequest) -> Path:
    """The control plane's binaries, built first if the cache lacks them."""
    bin_dir, up_to_date = find_binaries()
    if not up_to_date:
        # A cold build takes minutes: show its progress instead of capturing it.
        capman = request.config.pluginmanager.getplugin("capturemanager")
        with capman.global_and_fixture_disabled():
            bin_dir = ensure_binaries(stream=sys.stderr)
    return bin_dir


def install_crd(cp: Any, policy: bool = True) -> None:
    """Both CRDs, as ``kubectl apply -f crds/`` installs them: with the CronSchedule's policy
    (unless ``policy`` is False), waited for until the API server enforces it."""
    kubectl(cp, "apply", "-f", str(CRD), "-f", str(POOL_CRD))
    kubectl(cp, "wait", "--for=condition=Established", "crd/cronschedules.cronctl.dev", "crd/cronpools.cronctl.dev",
            "--timeout=60s")
    if policy:
        install_policy(cp)


def install_policy(cp: Any) -> None:
    """The CronSchedule's ValidatingAdmissionPolicy and its binding; returns once the API server
    refuses by it (it loads a new policy a moment after the write)."""
    kubectl(cp, "apply", "-f", str(POLICY))
    too_long = schedule_manifest("x" * 53, "0 9 * * *")
    wait_for("the CronSchedule policy enforced", lambda: "ValidatingAdmissionPolicy" in kubectl(
        cp, "create", "--dry-run=server", "-n", "default", "-f", "-", input=too_long, check=False).stderr)


def pooled_jobs(cluster: Cluster, pool: str) -> list[Any]:
    """The Jobs of a CronPool's schedules (not being deleted)."""
    return [job for job in cluster.batch.list_namespaced_job(cluster.namespace,
                                                             label_selector=f"cronctl.dev/pool={pool}").items
            if job.metadata.deletion_timestamp is None]


class Starts:
    """Watches a CronPool's Jobs from a thread: the order they were let run (no longer suspended),
    and the most that ran at once (let run, not ended)."""

    def __init__(self, cluster: Cluster, pool: str) -> None:
        self.cluster, self.pool, self.order, self.most = cluster, pool, [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            running = 0
            for job in sorted(pooled_jobs(self.cluster, self.pool), key=lambda j: j.metadata.name):
                if job.spec.suspend:
                    continue
                if job.metadata.name not in self.order:
                    self.order.append(job.metadata.name)
                ended = any(c.type in ("Complete", "Failed") and c.status == "True"
                            for c in (job.status.conditions or []))
                running += not ended
            self.most = max(self.most, running)
            time.sleep(0.1)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
