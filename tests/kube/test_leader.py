"""The Lease on the API server: created, read by another candidate, renewed by its holder
without a read, and a write from a stale read refused (Conflict), never forced."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from kubernetes import config
from kubernetes.client.exceptions import ApiException

from cronctl.operator.kube.leader import LeaseLock, claimed
from cronctl.operator.kube.rest import Rest

pytestmark = pytest.mark.usefixtures("control_plane")
NAME = "cronctl-operator"


@pytest.fixture
def rest(control_plane: Any) -> Rest:
    return Rest(config.new_client_from_config(config_file=str(control_plane.kubeconfig)))


def at(second: int) -> datetime:
    return datetime(2024, 3, 1, 0, 0, second, 250000, tzinfo=timezone.utc)


def test_a_lease_is_created_read_back_by_another_candidate_and_renewed_by_its_holder(rest: Rest,
                                                                                     namespace: str) -> None:
    mine, theirs = LeaseLock(rest, namespace, NAME), LeaseLock(rest, namespace, NAME)
    assert mine.read(10) is None
    mine.write(claimed({}, "pod-a", 15, at(0)), 10)
    seen = theirs.read(10)
    assert seen is not None and (seen["holderIdentity"], seen["leaseDurationSeconds"]) == ("pod-a", 15)
    assert seen["acquireTime"] == seen["renewTime"] == "2024-03-01T00:00:00.250000Z"
    mine.write(claimed(mine.read(10) or {}, "pod-a", 15, at(2)), 10)
    lease = rest.read_namespaced_lease(namespace, NAME)["spec"]
    assert (lease["acquireTime"], lease["renewTime"]) == ("2024-03-01T00:00:00.250000Z", "2024-03-01T00:00:02.250000Z")


def test_an_update_from_a_stale_read_is_refused_not_forced(rest: Rest, namespace: str) -> None:
    mine, theirs = LeaseLock(rest, namespace, NAME), LeaseLock(rest, namespace, NAME)
    mine.write(claimed({}, "pod-a", 15, at(0)), 10)
    stale = theirs.read(10) or {}
    mine.write(claimed(mine.read(10) or {}, "pod-a", 15, at(2)), 10)
    with pytest.raises(ApiException) as refused:  # pod-b's write would overwrite pod-a's renewal
        theirs.write(claimed(stale, "pod-b", 15, at(20)), 10)
    assert refused.value.status == 409
    assert rest.read_namespaced_lease(namespace, NAME)["spec"]["holderIdentity"] == "pod-a"


def test_the_holder_renews_without_reading_and_reads_again_once_another_wrote_the_lease(rest: Rest,
                                                                                      namespace: str) -> None:
    mine, theirs = LeaseLock(rest, namespace, NAME), LeaseLock(rest, namespace, NAME)
    reads: list[str] = []
    read = rest.read_namespaced_lease
    rest.read_namespaced_lease = lambda *args, **kw: reads.append("read") or read(*args, **kw)  # type: ignore[method-assign]
    mine.write(claimed(mine.read(10) or {}, "pod-a", 15, at(0)), 10)
    reads.clear()
    for second in range(2, 8, 2):  # client-go's fast path: a renewal is one write, no read
        mine.write(claimed(mine.read(10) or {}, "pod-a", 15, at(second)), 10)
    assert reads == []
    # pod-b takes the Lease (say pod-a's renewals had not reached the API server for a lease duration)
    theirs.write(claimed(theirs.read(10) or {}, "pod-b", 15, at(30)), 10)
    reads.clear()
    with pytest.raises(ApiException):  # from what pod-a wrote last, not yet known stale
        mine.write(claimed(mine.read(10) or {}, "pod-a", 15, at(32)), 10)
    seen = mine.read(10)  # refused: read afresh
    assert reads == ["read"] and seen is not None and seen["holderIdentity"] == "pod-b"
    assert seen["leaseTransitions"] == 1
