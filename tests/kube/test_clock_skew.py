"""A node whose clock is off the API server's: the operator measures it from the Date of the API's
answers, says it (the skew gauge, a Warning Event on its Lease, a log line), and with
--clock=api-server fires on the API server's minute instead of the node's.

The operator's node clock is the real one shifted by CRONCTL_NODE_CLOCK_OFFSET_SECONDS (no clock
file): the API server, on the same machine, keeps the real time.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from .helpers import Cluster, Operator, kubectl, wait_for
from .test_metrics import free_port, scrape

pytestmark = pytest.mark.cluster

AHEAD = 90  # seconds the node's clock is ahead of the API server's


def skewed_operator(control_plane: Any, namespace: str, tmp_path: Path, *flags: str) -> tuple[Operator, str]:
    port = free_port()
    op = Operator(control_plane, namespace, tmp_path,
                  extra_args=["--metrics-address", f"127.0.0.1:{port}", "--leader-election-namespace", namespace,
                              *flags],
                  extra_env={"CRONCTL_CLOCK_FILE": "", "CRONCTL_NODE_CLOCK_OFFSET_SECONDS": str(AHEAD)})
    op.start()
    return op, f"http://127.0.0.1:{port}/metrics"


@pytest.fixture
def node_clock_ahead(control_plane: Any, namespace: str, tmp_path: Path) -> Iterator[tuple[Operator, str]]:
    op, url = skewed_operator(control_plane, namespace, tmp_path)
    yield op, url
    op.stop()
    print(op.log()[-4000:])


def gauge(url: str, name: str) -> float | None:
    value = scrape(url).get((name, ()))
    return None if value is None or math.isnan(value) else value


def test_the_skew_gauge_and_a_warning_on_the_lease_say_the_nodes_clock_is_off(
        node_clock_ahead: tuple[Operator, str], cluster: Cluster, namespace: str) -> None:
    operator, url = node_clock_ahead
    skew = wait_for("the skew measured", lambda: gauge(url, "cronctl_clock_skew_seconds"))
    error = gauge(url, "cronctl_clock_skew_error_seconds")
    assert error is not None and error <= 1.5
    assert abs(skew - -AHEAD) <= error + 0.1  # the API server is 90 s behind the node
    events = wait_for("the Warning on the Lease", lambda: [
        e for e in json.loads(kubectl(cluster.cp, "get", "events", "-n", namespace, "-o", "json").stdout)["items"]
        if e["reason"] == "ClockSkew"])
    assert events[0]["type"] == "Warning"
    assert events[0]["involvedObject"]["kind"] == "Lease"
    assert events[0]["involvedObject"]["name"] == "cronctl-operator"
    assert "ahead of the API server's" in events[0]["message"]
    assert "clock skew: this node's clock is" in operator.log()


def test_with_the_api_servers_clock_a_schedule_fires_on_the_api_servers_minute(
        control_plane: Any, namespace: str, tmp_path: Path, cluster: Cluster) -> None:
    now = time.time()
    target = math.ceil((now + 100) / 60) * 60  # a minute boundary 100-160 s away, real (the API server's) time
    minute = dt.datetime.fromtimestamp(target, dt.timezone.utc)
    op, url = skewed_operator(control_plane, namespace, tmp_path, "--clock=api-server")
    try:
        body = {"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": "on-time"},
                "spec": {"schedule": f"{minute.minute} {minute.hour} * * *", "jobTemplate": {"spec": {"template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}}}
        cluster.apply(json.dumps(body))
        [job] = wait_for("the Job", lambda: cluster.jobs("on-time"), timeout=target - now + 30)
        created = job.metadata.creation_timestamp.timestamp()
        assert target <= created < target + 10, f"created {created - target:+.1f} s from the API server's minute"
    finally:
        op.stop()
        print(op.log()[-4000:])
