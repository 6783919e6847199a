"""The operator when the API server sheds its load: 429s from API Priority and Fairness, and
410 Gone storms, on the real API server.

- **429 Too Many Requests.** The operator runs as a user of its own (bound
  to cluster-admin, but not in system:masters, which APF exempts), whose
  requests a FlowSchema sends to a priority level of the test's. At the
  minute that level is given no share (``nominalConcurrencyShares: 0``,
  nothing lent or borrowed, excess rejected): it keeps one seat, and every
  request of the operator past it is answered 429 with ``Retry-After: 1``,
  as a cluster under overload answers a low-priority client; 8 s later it
  gets its share back. The API server's own count of rejected requests shows
  the 429s happened, and the operator's log that it waited as asked.
- **410 Gone.** The API server is restarted twice in a row, with a write
  before each: each new watch cache starts past the version the Jobs' watch
  asks to resume from, so it is answered 410 Gone (the version is too old)
  and must list again, the second time across the minute.

The invariants are the fault suite's (``test_faults``): no minute without
its Job, none twice, no Job left suspended, status converged, the
process alive, the writes again within seconds of the fault's end.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from .helpers import Cluster, Operator, kubectl, wait_for
from .test_faults import (RESUMED_WITHIN_SECONDS, RUNNABLE, a_fleet_due_at_0001, assert_every_minute_ran_once,
                          released)

THROTTLED_USER = "cronctl-throttled"
LEVEL = "cronctl-test-squeezed"


def _priority_level(shares: int) -> dict[str, Any]:
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": LEVEL},
            "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": shares, "lendablePercent": 0, "borrowingLimitPercent": 0,
                "limitResponse": {"type": "Reject"}}}}


FLOW_SCHEMA = {
    "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": LEVEL},
    "spec": {"priorityLevelConfiguration": {"name": LEVEL}, "matchingPrecedence": 100,
             "distinguisherMethod": {"type": "ByUser"},
             "rules": [{"subjects": [{"kind": "User", "user": {"name": THROTTLED_USER}}],
                        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                           "namespaces": ["*"], "clusterScope": True}],
                        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}}


def _apply(control_plane: Any, *manifests: dict[str, Any]) -> None:
    # One List document: JSON documents joined by "---" failed to parse after the first with the
    # API server of v1.37 ("invalid character '-' in numeric literal"), where v1.33's passed.
    kubectl(control_plane, "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(manifests)}))


def _rejected(control_plane: Any) -> float:
    """The requests APF rejected at the test's priority level, by the API server's own count."""
    metrics = kubectl(control_plane, "get", "--raw", "/metrics").stdout
    pattern = re.compile(r'^apiserver_flowcontrol_rejected_requests_total\{[^}]*priority_level="'
                         + LEVEL + r'"[^}]*\} (\S+)$', re.M)
    return sum(float(value) for value in pattern.findall(metrics))


@pytest.fixture
def squeezable(control_plane: Any, namespace: str, tmp_path: Path) -> Iterator[Operator]:
    """The operator, as a user whose requests go to the test's priority level (seats for now)."""
    kubeconfig = control_plane.user_kubeconfig(THROTTLED_USER)
    kubectl(control_plane, "create", "clusterrolebinding", f"{LEVEL}-{namespace}", "--clusterrole=cluster-admin",
            f"--user={THROTTLED_USER}")
    _apply(control_plane, _priority_level(100), FLOW_SCHEMA)
    operator = Operator(control_plane, namespace, tmp_path, kubeconfig=kubeconfig, name="squeezed")
    operator.set_clock("2024-03-01T00:00")
    operator.start()
    try:
        yield operator
    finally:
        operator.stop()
        print(operator.log()[-8000:])
        kubectl(control_plane, "delete", "flowschema,prioritylevelconfiguration", LEVEL, "--ignore-not-found")
        kubectl(control_plane, "delete", "clusterrolebinding", f"{LEVEL}-{namespace}", "--ignore-not-found")


def test_every_request_answered_429_across_the_minute_loses_no_run(control_plane: Any, squeezable: Operator,
                                                                    cluster: Cluster) -> None:
    a_fleet_due_at_0001(cluster)
    rejected_before = _rejected(control_plane)
    _apply(control_plane, _priority_level(0))  # no seats: every request of the operator is rejected
    time.sleep(1.0)  # the API server's flow control takes its new configuration
    squeezable.set_clock("2024-03-01T00:01:00")
    time.sleep(8.0)
    _apply(control_plane, _priority_level(100))
    ended = time.monotonic()
    wait_for("every run of 00:01 released once the seats are back",
             lambda: all(released(cluster, name, "2024-03-01T00:01") for name in RUNNABLE), timeout=60)
    assert time.monotonic() - ended < RESUMED_WITHIN_SECONDS
    assert _rejected(control_plane) > rejected_before  # the API server did answer 429
    # ... with Retry-After: 1, which the retries waited (0.1 s doubling, before it was read)
    assert re.search(r"failed \(the API server answered 429 Too Many Requests\); trying again in 1(\.0)? s",
                     squeezable.log()), squeezable.log()[-3000:]
    assert_every_minute_ran_once(squeezable, cluster, ["2024-03-01T00:01"])
    assert "stopping so that no two replicas act" not in squeezable.log()


def test_a_410_gone_storm_makes_every_watch_list_again_and_loses_no_run(control_plane: Any, operator: Operator,
                                                                        cluster: Cluster) -> None:
    a_fleet_due_at_0001(cluster)
    for restart in range(2):
        kubectl(control_plane, "create", "configmap", f"churn-{restart}", "-n", cluster.namespace)  # the version moves
        if restart == 1:  # on this thread: the new kube-apiserver dies with the thread that starts it
            threading.Timer(0.5, operator.set_clock, args=("2024-03-01T00:01:00",)).start()
        control_plane.restart_apiserver(1.0)
    ended = time.monotonic()
    wait_for("every run of 00:01 released after the storm",
             lambda: all(released(cluster, name, "2024-03-01T00:01") for name in RUNNABLE), timeout=60)
    assert time.monotonic() - ended < RESUMED_WITHIN_SECONDS
    gone = [line for line in operator.log().splitlines() if "is too old" in line and "listing again" in line]
    assert len([line for line in gone if "the Jobs' watch" in line]) >= 2, gone  # once a restart
    assert_every_minute_ran_once(operator, cluster, ["2024-03-01T00:01"])
