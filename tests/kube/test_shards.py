"""Shards on the real API server: disjoint ownership, a failover inside a shard, a schedule moved
between shards, and the report of the schedules no shard holds.

Shard a runs two replicas (one Lease, 3 s), shard b one; no operator runs the default shard.
The operators share one injected clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from kubernetes import client

from .helpers import ROOT, Cluster, Operator, job_of, kubectl, ready, schedule_manifest, wait_for

LEASE_SECONDS = 3


def shard_replica(cp: Any, namespace: str, workdir: Path, shard: str, identity: str) -> Operator:
    return Operator(cp, namespace, workdir, name=identity,
                    extra_args=["--shard", shard, "--identity", identity, "--lease-seconds", str(LEASE_SECONDS)])


def in_shard(name: str, schedule: str, shard: str | None) -> str:
    manifest = json.loads(schedule_manifest(name, schedule))
    if shard is not None:
        manifest["metadata"]["labels"] = {"cronctl.dev/shard": shard}
    return json.dumps(manifest)


def lease_holder(cluster: Cluster, name: str) -> str | None:
    try:
        lease = client.CoordinationV1Api(cluster.batch.api_client).read_namespaced_lease(name, cluster.namespace)
    except client.exceptions.ApiException:
        return None
    return lease.spec.holder_identity


def shard_labels(cluster: Cluster, name: str) -> dict[str, str | None]:
    return {job.metadata.name: (job.metadata.labels or {}).get("cronctl.dev/shard") for job in cluster.jobs(name)}


def cronctl_shards(cp: Any, namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cronctl", "shards", "-n", namespace, "--lease-namespace", namespace,
                           *args], env=cp.env(PYTHONPATH=str(ROOT / "operator")), capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def shards(control_plane: Any, namespace: str, tmp_path: Path) -> Iterator[dict[str, Operator]]:
    operators = {identity: shard_replica(control_plane, namespace, tmp_path, shard, identity)
                 for shard, identity in (("a", "a-one"), ("a", "a-two"), ("b", "b-one"))}
    operators["a-one"].set_clock("2024-03-01T00:00")
    yield operators
    for op in operators.values():
        op.stop()
        print(f"--- {op.log_file.name}\n{op.log()[-4000:]}")


def test_two_shards_own_disjoint_schedules_survive_a_failover_and_hand_a_schedule_over(
        shards: dict[str, Operator], cluster: Cluster, control_plane: Any, namespace: str) -> None:
    a_one, a_two, b_one = shards["a-one"], shards["a-two"], shards["b-one"]
    a_one.start()
    wait_for("a-one leads shard a", lambda: lease_holder(cluster, "cronctl-operator-a") == "a-one")
    a_two.start()
    b_one.start()
    wait_for("b-one leads shard b", lambda: lease_holder(cluster, "cronctl-operator-b") == "b-one")
    for name, shard in (("alpha", "a"), ("beta", "b"), ("gamma", None)):
        cluster.apply(in_shard(name, "0 * * * *", shard))
    wait_for("alpha seen", ready(cluster, "alpha"))
    wait_for("beta seen", ready(cluster, "beta"))
    assert cluster.status("alpha")["shard"] == "a" and cluster.status("beta")["shard"] == "b"

    # gamma has no shard label, and no operator runs the default shard: nobody touches it, and the
    # report says so (exit 1).
    time.sleep(2)
    assert cluster.status("gamma") == {}
    report = cronctl_shards(control_plane, namespace)
    assert report.returncode == 1, report.stderr
    assert "unassigned: 1 CronSchedule(s) of the default shard" in report.stdout and "gamma" in report.stdout
    rows = {row["shard"]: row for row in json.loads(cronctl_shards(control_plane, namespace, "--json").stdout)["shards"]}
    assert rows["a"]["holder"] == "a-one" and rows["a"]["schedules"] == 1 and rows["b"]["holder"] == "b-one"
    assert rows[None]["unassigned"] == [f"{namespace}/gamma"]

    a_one.set_clock("2024-03-01T01:00")
    wait_for("alpha's 01:00", lambda: cluster.job_names("alpha") == [job_of("alpha", "2024-03-01T01:00")])
    wait_for("beta's 01:00", lambda: cluster.job_names("beta") == [job_of("beta", "2024-03-01T01:00")])
    assert shard_labels(cluster, "alpha") == {job_of("alpha", "2024-03-01T01:00"): "a"}
    assert shard_labels(cluster, "beta") == {job_of("beta", "2024-03-01T01:00"): "b"}
    assert cluster.job_names("gamma") == []
    # Each shard's watches are filtered by the API server: shard a never heard of beta.
    assert "beta" not in a_one.log() and "alpha" not in b_one.log()

    # The active replica of shard a dies: its standby takes the Lease and fires the next hour once.
    a_one.kill()
    wait_for("a-two takes over shard a", lambda: lease_holder(cluster, "cronctl-operator-a") == "a-two", timeout=30)
    a_one.set_clock("2024-03-01T02:00")
    wait_for("alpha's 02:00, by a-two", lambda: job_of("alpha", "2024-03-01T02:00") in cluster.job_names("alpha"))
    assert cluster.job_names("alpha") == [job_of("alpha", "2024-03-01T01:00"), job_of("alpha", "2024-03-01T02:00")]
    # The status follows the Job: written once every launch of that second is out (the loop's second pass).
    wait_for("alpha's status counts 2 launches", lambda: cluster.status("alpha").get("launched") == 2)
    assert lease_holder(cluster, "cronctl-operator-b") == "b-one"  # shard b never noticed

    # alpha moves to shard b: b reads its Jobs once, relabels them, and fires 03:00 once.
    kubectl(control_plane, "label", "-n", namespace, "cronschedule", "alpha", "cronctl.dev/shard=b", "--overwrite")
    wait_for("alpha's status written by shard b", lambda: cluster.status("alpha").get("shard") == "b")
    wait_for("alpha's Jobs relabelled", lambda: set(shard_labels(cluster, "alpha").values()) == {"b"})
    assert "alpha: moved to shard b: reading its Jobs" in b_one.log()
    a_one.set_clock("2024-03-01T03:00")
    wait_for("alpha's 03:00, by shard b", lambda: job_of("alpha", "2024-03-01T03:00") in cluster.job_names("alpha"))
    wait_for("beta's 03:00", lambda: job_of("beta", "2024-03-01T03:00") in cluster.job_names("beta"))
    time.sleep(2)  # shard a, if it still acted on alpha, would have written by now
    assert cluster.job_names("alpha") == [job_of("alpha", f"2024-03-01T0{hour}:00") for hour in (1, 2, 3)]
    assert shard_labels(cluster, "alpha") == dict.fromkeys(cluster.job_names("alpha"), "b")
    status = cluster.status("alpha")
    assert status["launched"] == 3 and status["shard"] == "b"
    assert cluster.job_names("beta") == [job_of("beta", f"2024-03-01T0{hour}:00") for hour in (1, 2, 3)]
    report = json.loads(cronctl_shards(control_plane, namespace, "--json").stdout)
    assert {row["shard"]: row["schedules"] for row in report["shards"]} == {None: 1, "a": 0, "b": 2}
