"""A slow API server, on the real one behind the fault proxy: every request delayed 2 s each way.

A round trip takes over 4 s and a new connection's TLS handshake as much
again. The holder of the Lease renews within what is left of its renew
deadline (10 s), as client-go's election does, so it never stops acting: every
minute of the schedules' clock (moved a minute every 12 s of real time while
the delay holds, the last 29 s into it) runs once, none twice. Before, each renewal try was bounded
by a third of the deadline (3.3 s): the holder stopped acting after 10 s and
could not take the Lease back through a handshake in that budget.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from cronctl.operator.kube.rest import Rest

from .faultproxy import FaultProxy, kubeconfig_through
from .helpers import Cluster, wait_for
from .test_faults import RUNNABLE, a_fleet_due_at_0001, a_proxy, assert_every_minute_ran_once, operator_through, released

DELAY_SECONDS = 2.0  # each chunk, either way
MINUTES = ["2024-03-01T00:01", "2024-03-01T00:02", "2024-03-01T00:03"]
# The schedules' clock moves a minute this often while the delay holds (it was 20 s): through the
# delay a minute's Jobs are released 3-6 s after it and its status written 10-11 s after it, before
# the next minute comes; the last minute comes 29 s into the delay, nearly three times the renew
# deadline (10 s) at which the holder stopped acting before.
REAL_SECONDS_A_MINUTE = 12.0
RELEASED_WITHIN_SECONDS = 20.0  # of its minute, on a loaded machine (the next minute waits for it)


def test_a_lease_request_ends_within_its_seconds_a_new_connections_handshake_included(
        control_plane: Any, namespace: str, tmp_path: Path) -> None:
    """Through a new connection a request takes five delays (10 s): the handshake's two, the
    client's Finished and the request, the answer. Bounded by 6 s in all it times out at 6 s,
    where the handshake and then each read had 6 s of their own; a lease duration (15 s) is
    enough; on the kept connection, a round trip (4 s) fits in 6 s."""
    kubeconfig = tmp_path / "through-proxy.kubeconfig"
    with a_proxy(control_plane) as proxy:
        kubeconfig.write_text(kubeconfig_through(control_plane.kubeconfig.read_text(), control_plane.url, proxy.url))
        rest = Rest(config.new_client_from_config(config_file=str(kubeconfig)))
        proxy.delay(DELAY_SECONDS, 60.0)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            rest.read_namespaced_lease(namespace, "absent", seconds=6.0)
        assert 5.5 < time.monotonic() - started < 6.5
        for seconds in (15.0, 6.0):  # a new connection, then the kept one
            started = time.monotonic()
            with pytest.raises(ApiException) as missing:
                rest.read_namespaced_lease(namespace, "absent", seconds=seconds)
            assert missing.value.status == 404 and time.monotonic() - started < seconds
        assert proxy.stats["connections"] == 2


def test_every_request_delayed_two_seconds_each_way_costs_no_run_and_not_the_lease(
        control_plane: Any, namespace: str, tmp_path: Path, cluster: Cluster) -> None:
    with a_proxy(control_plane) as proxy:
        operator = operator_through(control_plane, namespace, tmp_path, proxy)
        operator.set_clock("2024-03-01T00:00")
        try:
            operator.start()
            wait_for("the operator holds the Lease", lambda: "holding the Lease" in operator.log())
            a_fleet_due_at_0001(cluster)
            delayed_over(operator, cluster, proxy)
            assert_every_minute_ran_once(operator, cluster, MINUTES)
            log = operator.log()
            assert "stopped acting" not in log and log.count("holding the Lease") == 1, log[-4000:]
            leases = client.CoordinationV1Api(config.new_client_from_config(config_file=str(control_plane.kubeconfig)))
            lease = leases.read_namespaced_lease("cronctl-operator", namespace).spec
            assert lease.holder_identity == "operator" and (lease.lease_transitions or 0) == 0
        finally:
            operator.stop()
            print(operator.log()[-6000:])


def delayed_over(operator: Any, cluster: Cluster, proxy: FaultProxy) -> None:
    """Every request delayed while the schedules' clock moves over MINUTES, a minute every
    REAL_SECONDS_A_MINUTE (each minute's Jobs released before the next comes)."""
    proxy.delay(DELAY_SECONDS, REAL_SECONDS_A_MINUTE * len(MINUTES) + RELEASED_WITHIN_SECONDS)
    started = time.monotonic()
    for index, minute in enumerate(MINUTES):
        time.sleep(max(0.0, started + REAL_SECONDS_A_MINUTE * index + 5.0 - time.monotonic()))
        operator.set_clock(f"{minute}:00")
        wait_for(f"every run of {minute} released through the delay",
                 lambda minute=minute: all(released(cluster, name, minute) for name in RUNNABLE),
                 timeout=RELEASED_WITHIN_SECONDS)
    assert proxy.stats["connections"] > 0 and not proxy.healed()  # still delayed at the last minute
