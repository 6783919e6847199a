"""The Lease lock on the API server: the client's election record, read and written as plain JSON."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import config
from kubernetes.leaderelection.leaderelectionrecord import LeaderElectionRecord

from cronctl.operator.leader import RestLeaseLock
from cronctl.operator.rest import Rest

pytestmark = pytest.mark.usefixtures("control_plane")


@pytest.fixture
def rest(control_plane: Any) -> Rest:
    return Rest(config.new_client_from_config(config_file=str(control_plane.kubeconfig)))


def record(holder: str, acquired: str, renewed: str) -> LeaderElectionRecord:
    return LeaderElectionRecord(holder, "15", acquired, renewed)  # the times as leaderelection.py makes them


def test_a_lease_is_created_read_back_by_another_candidate_and_renewed_by_its_holder(rest: Rest,
                                                                                     namespace: str) -> None:
    mine, theirs = (RestLeaseLock(rest, "cronctl-operator", namespace, who) for who in ("pod-a", "pod-b"))
    found, refusal = mine.get("cronctl-operator", namespace)
    assert not found and refusal.status == 404
    assert mine.create("cronctl-operator", namespace, record("pod-a", "2024-03-01 00:00:00.250000",
                                                             "2024-03-01 00:00:00.250000"))
    found, seen = theirs.get("cronctl-operator", namespace)
    assert found and seen.holder_identity == "pod-a" and seen.lease_duration == "15"
    assert seen.acquire_time == seen.renew_time == mine.time_from_utc(mine.time_str_to_iso("2024-03-01 00:00:00.250000"))
    assert mine.get("cronctl-operator", namespace)[0]
    assert mine.update("cronctl-operator", namespace, record("pod-a", seen.acquire_time, "2024-03-01 00:00:02"))
    lease = rest.read_namespaced_lease(namespace, "cronctl-operator")
    assert lease["spec"]["holderIdentity"] == "pod-a" and lease["spec"]["leaseDurationSeconds"] == 15
    assert lease["spec"]["renewTime"] != lease["spec"]["acquireTime"]


def test_an_update_from_a_stale_read_is_refused_not_forced(rest: Rest, namespace: str) -> None:
    mine, theirs = (RestLeaseLock(rest, "cronctl-operator", namespace, who) for who in ("pod-a", "pod-b"))
    assert mine.create("cronctl-operator", namespace, record("pod-a", "2024-03-01 00:00:00", "2024-03-01 00:00:00"))
    assert theirs.get("cronctl-operator", namespace)[0]
    assert mine.update("cronctl-operator", namespace, record("pod-a", "2024-03-01 00:00:00", "2024-03-01 00:00:02"))
    # pod-b read before pod-a's renewal: its write would overwrite it, and the API server says Conflict
    assert not theirs.update("cronctl-operator", namespace, record("pod-b", "2024-03-01 00:00:20",
                                                                   "2024-03-01 00:00:20"))
    assert rest.read_namespaced_lease(namespace, "cronctl-operator")["spec"]["holderIdentity"] == "pod-a"


def test_the_holder_renews_without_reading_and_reads_again_once_another_wrote_the_lease(rest: Rest,
                                                                                      namespace: str) -> None:
    mine, theirs = (RestLeaseLock(rest, "cronctl-operator", namespace, who) for who in ("pod-a", "pod-b"))
    reads: list[str] = []
    read = rest.read_namespaced_lease
    rest.read_namespaced_lease = lambda *args: reads.append("read") or read(*args)  # type: ignore[method-assign]
    assert mine.create("cronctl-operator", namespace, record("pod-a", "2024-03-01 00:00:00", "2024-03-01 00:00:00"))
    for second in range(2, 8, 2):  # client-go's fast path: a renewal is one write, no read
        found, seen = mine.get("cronctl-operator", namespace)
        assert found and seen.holder_identity == "pod-a"
        assert mine.update("cronctl-operator", namespace, record("pod-a", seen.acquire_time,
                                                                 f"2024-03-01 00:00:0{second}"))
    assert reads == []
    # pod-b takes the Lease (say pod-a's renewals had not reached the API server for a lease duration)
    assert theirs.get("cronctl-operator", namespace)[0]
    assert theirs.update("cronctl-operator", namespace, record("pod-b", "2024-03-01 00:00:30", "2024-03-01 00:00:30"))
    reads.clear()
    found, seen = mine.get("cronctl-operator", namespace)  # what pod-a wrote last, not yet known stale
    assert not mine.update("cronctl-operator", namespace, record("pod-a", seen.acquire_time, "2024-03-01 00:00:32"))
    found, seen = mine.get("cronctl-operator", namespace)  # refused: read afresh
    assert reads == ["read"] and seen.holder_identity == "pod-b"
    assert rest.read_namespaced_lease(namespace, "cronctl-operator")["spec"]["holderIdentity"] == "pod-b"
