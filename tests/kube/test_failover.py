"""Two operator replicas on the real API server: exactly one acts, and a failover
creates no duplicate Job.

Both replicas watch; only the holder of the Lease reconciles. Killing the
holder with SIGKILL leaves its Lease to expire (3 s here), after which the
other takes it, adopts what the first one created, and goes on.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from .helpers import Cluster, Operator, job_of, ready, schedule_manifest, wait_for

LEASE_SECONDS = 3


def replica(cp: Any, namespace: str, workdir: Path, name: str) -> Operator:
    return Operator(cp, namespace, workdir, name=name,
                    extra_args=["--identity", name, "--lease-seconds", str(LEASE_SECONDS)])


@pytest.fixture
def replicas(control_plane: Any, namespace: str, tmp_path: Path) -> Iterator[tuple[Operator, Operator]]:
    first, second = replica(control_plane, namespace, tmp_path, "one"), replica(control_plane, namespace, tmp_path, "two")
    first.set_clock("2024-03-01T00:00")
    first.start()
    yield first, second
    for op in (first, second):
        op.stop()
        print(f"--- {op.log_file.name}\n{op.log()[-4000:]}")


def lease_holder(cluster: Cluster) -> str | None:
    from kubernetes import client

    try:
        lease = client.CoordinationV1Api(cluster.batch.api_client).read_namespaced_lease(
            "cronctl-operator", cluster.namespace)
    except client.exceptions.ApiException:
        return None
    return lease.spec.holder_identity


def test_one_replica_acts_and_a_failover_creates_no_duplicate_job(replicas: tuple[Operator, Operator],
                                                                   cluster: Cluster) -> None:
    first, second = replicas
    wait_for("the first replica leads", lambda: lease_holder(cluster) == "one")
    second.start()
    cluster.apply(schedule_manifest("nightly", "0 * * * *"))
    wait_for("seen", ready(cluster, "nightly"))
    first.set_clock("2024-03-01T01:00")
    wait_for("one Job", lambda: cluster.job_names("nightly") == [job_of("nightly", "2024-03-01T01:00")])
    time.sleep(1)
    assert "holding the Lease" not in second.log()  # the follower never acted
    assert lease_holder(cluster) == "one"

    first.kill()
    wait_for("the second replica takes over", lambda: lease_holder(cluster) == "two", timeout=30)
    wait_for("it acts", lambda: "holding the Lease" in second.log())
    # The new leader re-decides 01:00 from the API's state: the Job is there, nothing doubles.
    time.sleep(1)
    assert cluster.job_names("nightly") == [job_of("nightly", "2024-03-01T01:00")]
    status = cluster.status("nightly")
    assert status["launched"] == 1 and len(status["active"]) == 1
    first.set_clock("2024-03-01T02:00")  # the clock file is shared: the new leader fires the next hour
    wait_for("the next hour, by the new leader",
             lambda: job_of("nightly", "2024-03-01T02:00") in cluster.job_names("nightly"))
    assert cluster.job_names("nightly") == [job_of("nightly", "2024-03-01T01:00"), job_of("nightly", "2024-03-01T02:00")]


def test_a_restarted_replica_takes_its_own_lease_back_at_once(control_plane: Any, namespace: str,
                                                              tmp_path: Path, cluster: Cluster) -> None:
    """Its identity (the Pod's name) is the same after a container restart: no wait for
    a 60-second lease to expire."""
    op = Operator(control_plane, namespace, tmp_path, extra_args=["--identity", "pod-a", "--lease-seconds", "60"])
    op.set_clock("2024-03-01T00:00")
    try:
        op.start()
        wait_for("leading", lambda: lease_holder(cluster) == "pod-a")
        op.kill()
        op.start()
        cluster.apply(schedule_manifest("hourly", "0 * * * *"))
        wait_for("acting again well before the lease could expire", ready(cluster, "hourly"), timeout=20)
    finally:
        op.stop()
