"""A node whose clock is off the API server's: the operator measures it from the Date of the API's
answers, says it (the skew gauge, a Warning Event on its Lease, a log line), and with
--clock=api-server fires on the API server's minute instead of the node's. A node whose clock is
stepped forward while the operator runs launches nothing early by the API server's clock and passes
over no minute, and each step, forward and back, is said.

The operator's node clock is the real one shifted by CRONCTL_NODE_CLOCK_OFFSET_SECONDS, and by the
seconds in the file CRONCTL_NODE_CLOCK_OFFSET_FILE names, read at each reading (no clock file): the
API server, on the same machine, keeps the real time.
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
BEHIND = 30  # seconds the node's clock is behind it, where --clock=api-server is tried


def skewed_operator(control_plane: Any, namespace: str, tmp_path: Path, *flags: str,
                    ahead: float = AHEAD, offset_file: Path | None = None) -> tuple[Operator, str]:
    port = free_port()
    stepped = {} if offset_file is None else {"CRONCTL_NODE_CLOCK_OFFSET_FILE": str(offset_file)}
    op = Operator(control_plane, namespace, tmp_path,
                  extra_args=["--metrics-address", f"127.0.0.1:{port}", "--leader-election-namespace", namespace,
                              *flags],
                  extra_env={"CRONCTL_CLOCK_FILE": "", "CRONCTL_NODE_CLOCK_OFFSET_SECONDS": str(ahead), **stepped})
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
    """The node's clock behind: by it (and by the default clock, which reads a node that is behind as
    it is) the Job would come BEHIND seconds late; by the API server's, at its minute. (A node ahead
    fires nothing early by the default clock either, so it would not tell the two apart.)"""
    now = time.time()
    target = math.ceil((now + 20) / 60) * 60  # a minute boundary 20-80 s away, real (the API server's) time
    minute = dt.datetime.fromtimestamp(target, dt.timezone.utc)
    op, url = skewed_operator(control_plane, namespace, tmp_path, "--clock=api-server", ahead=-BEHIND)
    try:
        body = {"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": "on-time"},
                "spec": {"schedule": f"{minute.minute} {minute.hour} * * *", "jobTemplate": {"spec": {"template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}}}
        cluster.apply(json.dumps(body))
        [job] = wait_for("the Job", lambda: cluster.jobs("on-time"), timeout=target - now + BEHIND + 15)
        created = job.metadata.creation_timestamp.timestamp()
        assert target <= created < target + 10, f"created {created - target:+.1f} s from the API server's minute"
    finally:
        op.stop()
        print(op.log()[-4000:])


def step_node_clock(offset_file: Path, seconds: float) -> None:
    tmp = offset_file.with_suffix(".tmp")
    tmp.write_text(f"{seconds}\n")
    tmp.replace(offset_file)


def lease_events(cluster: Cluster, namespace: str, reason: str) -> list[dict[str, Any]]:
    return [e for e in json.loads(kubectl(cluster.cp, "get", "events", "-n", namespace, "-o", "json").stdout)["items"]
            if e["reason"] == reason and e["involvedObject"]["kind"] == "Lease"]


def scheduled_second(job: Any) -> float:
    stamp = job.metadata.annotations["cronctl.dev/scheduled-time"]
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def test_a_node_clock_stepped_forward_launches_nothing_early_and_each_step_is_said(
        control_plane: Any, namespace: str, tmp_path: Path, cluster: Cluster) -> None:
    """The node's clock stepped +90 s at 32-55 s past a minute of the API server's: it then reads past
    the minute after next. The minute stepped over runs at its time on the API server's clock (the
    issue: it was passed over, and the next minute's Job created some 80 s early); the step is said,
    and the step back too. 10-70 s of real time from the scheduler's start."""
    offset_file = tmp_path / "node-clock-offset"
    step_node_clock(offset_file, 0)
    op, _ = skewed_operator(control_plane, namespace, tmp_path, ahead=0, offset_file=offset_file)
    try:
        cluster.apply(json.dumps({
            "apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": "stepped"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}}}))
        wait_for("the operator's scheduler", lambda: "cronctl scheduler started" in op.log())
        looked = time.time() + 3  # the clock-skew watch (a look a second) has looked at the node's clock once
        second = looked % 60  # the step at 32-55 s: the minute stepped over is 5-28 s away
        time.sleep(max(0.0, looked - time.time()) + (0 if 32 <= second <= 55 else (32 - second) % 60))
        stepped_at = time.time()
        step_node_clock(offset_file, AHEAD)
        stepped_over = math.floor(stepped_at / 60) * 60 + 60  # the node's clock went past it, and the next
        assert stepped_at + AHEAD >= stepped_over + 60
        wait_for("the step forward said", lambda: "clock step: this node's clock was stepped 90" in op.log())
        wait_for("the minute stepped over run", lambda: [
            job for job in cluster.jobs("stepped") if scheduled_second(job) == stepped_over],
            timeout=stepped_over - time.time() + 30)
        step_node_clock(offset_file, 0)
        wait_for("the step back said", lambda: op.log().count("clock step: ") >= 2)
        steps = wait_for("both steps on the Lease", lambda: (
            events if len(events := lease_events(cluster, namespace, "ClockStepped")) >= 2 else None))
        assert all(event["type"] == "Warning" for event in steps)
        assert sorted(event["message"].split(":")[0] for event in steps) == [
            "this node's clock was stepped 90.0 s back", "this node's clock was stepped 90.0 s forward"]
        early = {job.metadata.name: scheduled_second(job) - job.metadata.creation_timestamp.timestamp()
                 for job in cluster.jobs("stepped")
                 if job.metadata.creation_timestamp.timestamp() < scheduled_second(job)}
        assert not early, f"Jobs created before their minute on the API server's clock (seconds early): {early}"
        said = [line.split("clock step: ", 1)[1].split(":")[0] for line in op.log().splitlines() if "clock step: " in line]
        assert said == ["this node's clock was stepped 90.0 s forward", "this node's clock was stepped 90.0 s back"]
    finally:
        op.stop()
        print(op.log()[-4000:])
