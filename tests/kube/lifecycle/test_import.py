"""kubectl cronctl import on a cluster whose CronJob controller runs: no minute fired twice or lost.

Real minutes pass (the CronJob controller reads the wall clock, so the operator does too): the
CronJobs fire, are imported across a minute (some suspended before it, some after their
controller fired it), and the CronSchedules fire the following minute.
Every nominal minute of every schedule has exactly one Job across both controllers; a Forbid
CronJob's running Job is adopted, so cronctl skips while it runs; a suspended CronJob stays
suspended; --undo gives the minutes back to the CronJob, again none twice or lost.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import time
from typing import Any

import pytest

from ..helpers import ROOT, Cluster, Operator, kubectl, wait_for

pytestmark = pytest.mark.cluster

EVERY_MINUTE = [f"minutely-{i}" for i in range(16)]
EVERY_FIVE = ["five-0", "five-1"]
FORBID, SUSPENDED = "forbid-long", "paused"
CRONJOB_SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def cronjob(name: str, schedule: str, run_for: str = "1s", **spec: Any) -> dict[str, Any]:
    template = {"metadata": {"annotations": {"cronctl.test/run-for": run_for, "cronctl.test/exit-code": "0"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "successfulJobsHistoryLimit": 20, **spec,
                     "jobTemplate": {"spec": {"backoffLimit": 0, "template": template}}}}


def nominal(job: Any) -> str:
    annotations = job.metadata.annotations or {}
    stamp = annotations.get("cronctl.dev/scheduled-time") or annotations.get(CRONJOB_SCHEDULED)
    if stamp is None:  # a CronJob's Job before 1.28 annotated it: its name's minutes
        stamp = dt.datetime.fromtimestamp(int(job.metadata.name.rsplit("-", 1)[1]) * 60, dt.timezone.utc).isoformat()
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(dt.timezone.utc).strftime("%H:%M")


def jobs_of(cluster: Cluster, name: str) -> list[Any]:
    return [job for job in cluster.batch.list_namespaced_job(cluster.namespace).items
            if job.metadata.name.rsplit("-", 1)[0] == name and job.metadata.deletion_timestamp is None]


def plugin(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    env = cluster.cp.env(PYTHONPATH=str(ROOT / "operator"))
    return subprocess.run([sys.executable, "-m", "cronctl.plugin", *args, "-n", cluster.namespace], env=env,
                          capture_output=True, text=True, timeout=120)


def next_minute_in(seconds_at_least: float) -> float:
    """Sleep to ``seconds_at_least`` before a minute boundary or later: the boundary's time."""
    now = time.time()
    boundary = (now // 60 + 1) * 60
    if boundary - now < seconds_at_least:
        boundary += 60
    return boundary


def hh_mm(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%H:%M")


def owner_kind(job: Any) -> str:
    return (job.metadata.owner_references or [{}])[0].kind


def test_cronjobs_imported_while_minutes_pass_fire_every_minute_once(
        operator_on_the_wall_clock: Operator, cluster: Cluster) -> None:
    """Three real minutes: the CronJobs' first (fired by their controller), the one the import runs
    across (by either), the next (by cronctl, or by the CronJob of a schedule the import undid
    just after the one before; those two had cronctl fire it, so the minute is handed back)."""
    if next_minute_in(0) - time.time() < 8:  # one apply of the 20 CronJobs: never across a minute
        time.sleep(next_minute_in(0) - time.time() + 1)
    applied_before = next_minute_in(0)  # every CronJob exists before this minute: it is each one's first
    cronjobs = [cronjob(name, "* * * * *") for name in EVERY_MINUTE]
    cronjobs += [cronjob(name, "*/5 * * * *") for name in EVERY_FIVE]
    cronjobs += [cronjob(FORBID, "* * * * *", run_for="24h", concurrencyPolicy="Forbid"),
                 cronjob(SUSPENDED, "* * * * *", suspend=True)]
    cluster.apply(json.dumps({"apiVersion": "v1", "kind": "List", "items": cronjobs}))
    first = next_minute_in(0)
    assert first == applied_before, "applying the CronJobs outlasted the minute before their first"
    wait_for("the CronJobs' first minute", lambda: all(jobs_of(cluster, n) for n in EVERY_MINUTE + [FORBID]),
             timeout=first - time.time() + 60)
    time.sleep(max(0.0, first + 57 - time.time()))  # the import of the 20 runs across the next minute

    done = plugin(cluster, "import", "--all")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("suspended; cronschedule") == 20, done.stdout
    assert "1 active Job adopted" in done.stdout

    across = first + 60  # the minute the import ran across
    time.sleep(max(0.0, across + 15 - time.time()))
    by_cronctl = [name for name in EVERY_MINUTE if any(
        nominal(job) == hh_mm(across) and owner_kind(job) == "CronSchedule" for job in jobs_of(cluster, name))]
    assert len(by_cronctl) >= 2, f"cronctl fired {hh_mm(across)} of {by_cronctl} only: the import began too late"
    undone = by_cronctl[:2]  # cronctl fired their last minute: the undo hands the next back to the CronJob
    back = plugin(cluster, "import", "--undo", *[f"cronjob/{name}" for name in undone])
    assert back.returncode == 0, back.stdout + back.stderr
    last = across + 60 * (2 if time.time() > across + 45 else 1)
    time.sleep(max(0.0, last + 15 - time.time()))
    minutes = [hh_mm(t) for t in range(int(first), int(last) + 1, 60)]
    for name in EVERY_MINUTE:
        fired = [nominal(job) for job in jobs_of(cluster, name)]
        assert len(fired) == len(set(fired)), (name, fired)  # none twice
        assert sorted(fired) == minutes, (name, fired)  # none lost
        owners = {owner_kind(job) for job in jobs_of(cluster, name)}
        assert owners == {"CronJob", "CronSchedule"}, (name, owners)
        if name in undone:  # the CronJob fired the minute after the undo
            [latest] = [job for job in jobs_of(cluster, name) if nominal(job) == minutes[-1]]
            assert owner_kind(latest) == "CronJob", name
    assert [nominal(job) for job in jobs_of(cluster, FORBID)] == minutes[:1]  # still running: cronctl skipped
    status = cluster.status(FORBID)
    assert status["activeCount"] == 1 and status["skipped"] >= 1
    assert jobs_of(cluster, SUSPENDED) == [] and cluster.schedule(SUSPENDED)["spec"]["suspend"] is True
    for name in EVERY_FIVE:
        assert all(int(nominal(job)[3:]) % 5 == 0 for job in jobs_of(cluster, name)), name


def test_a_cronjob_that_cannot_be_mapped_is_refused_naming_the_field_and_nothing_changes(
        cluster: Cluster, crd: None) -> None:
    cluster.apply(json.dumps(cronjob("every-half-minute", "@every 30s")))  # the CronJob controller takes it
    cluster.apply(json.dumps(cronjob("fine", "0 3 * * *")))
    dry = plugin(cluster, "import", "--all", "--dry-run", "-o", "yaml")
    assert dry.returncode == 1
    assert "spec.schedule: '@every 30s': cronctl fires at whole minutes" in dry.stderr
    assert "name: fine" in dry.stdout and "cronctl.dev/anchor" in dry.stdout
    done = plugin(cluster, "import", "cronjob/every-half-minute", "cronjob/fine")
    assert done.returncode == 1, done.stdout + done.stderr
    assert (f"cronjob {cluster.namespace}/every-half-minute: not imported, nothing changed: spec.schedule:"
            in done.stderr)
    refused = cluster.batch.read_namespaced_cron_job("every-half-minute", cluster.namespace)
    assert not refused.spec.suspend  # untouched: it goes on firing
    assert "every-half-minute" not in [item["metadata"]["name"] for item in cluster.custom.list_namespaced_custom_object(
        "cronctl.dev", "v1", cluster.namespace, "cronschedules")["items"]]
    assert cluster.batch.read_namespaced_cron_job("fine", cluster.namespace).spec.suspend is True
    assert cluster.schedule("fine")["metadata"]["labels"]["cronctl.dev/imported-from"] == "cronjob"
    back = plugin(cluster, "import", "--undo", "--all")  # only what an import made: fine, not the refused one
    assert back.returncode == 0, back.stdout + back.stderr
    assert back.stdout.count("resumed from") == 1 and "cronjob fine resumed" in back.stdout
    assert cluster.batch.read_namespaced_cron_job("fine", cluster.namespace).spec.suspend is False
    assert cluster.schedule("fine")["spec"]["suspend"] is True
