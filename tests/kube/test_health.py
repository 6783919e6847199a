"""The operator's process as kopf runs it, against the API server: its probe says the scheduler's
last pass and each watch's freshness, the process ends when the scheduler's task dies (so that
the Deployment restarts it), and its Events are stamped by the clock it fires by."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from .helpers import Cluster, Operator, job_of, ready, schedule_manifest, wait_for
from .test_metrics import free_port

pytestmark = pytest.mark.cluster


@pytest.fixture
def probed(control_plane: Any, namespace: str, tmp_path: Path) -> Iterator[tuple[Operator, str]]:
    """The operator with kopf's probe served on a port of its own: (the operator, the probe's URL)."""
    url = f"http://127.0.0.1:{free_port()}/healthz"
    op = Operator(control_plane, namespace, tmp_path, extra_args=["--liveness", url])
    op.set_clock("2024-03-01T00:00")
    op.start()
    yield op, url
    op.stop()
    print(op.log()[-6000:])


def probe(url: str) -> tuple[int, Any] | None:
    """The probe's status and JSON answer; None while nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, None
    except OSError:
        return None


def test_the_probe_says_the_schedulers_last_pass_and_each_watchs_freshness(
        probed: tuple[Operator, str], cluster: Cluster, namespace: str) -> None:
    operator, url = probed
    cluster.apply(schedule_manifest("tick", "*/5 * * * *"))
    wait_for("tick seen", ready(cluster, "tick"))
    # kopf keeps an answer 10 s: the one taken once every watch has listed.
    status, answer = wait_for("a probe after the watches synced",
                              lambda: (got := probe(url)) and got[1] and got[1]["cronctl"]["ready"] and got,
                              timeout=90)
    assert status == 200
    report = answer["cronctl"]
    assert report["scheduler"]["task"] == "running"
    assert 0 <= report["scheduler"]["lastPassSecondsAgo"] < 30  # it looks at the clock every 30 s at least
    assert set(report["watches"]) == {f"{what} of {namespace}" for what in ("Jobs", "CronSchedules", "CronPools")}
    assert all(watch["synced"] and watch["lastHeardSecondsAgo"] is not None for watch in report["watches"].values())
    assert operator.process is not None and operator.process.poll() is None


def test_readyz_says_ready_once_synced_and_whether_this_replica_leads(control_plane: Any, namespace: str,
                                                                        tmp_path: Path, cluster: Cluster) -> None:
    """/readyz (beside /metrics, the chart's readiness probe): 200 once every watch has listed, its
    answer saying this replica leads (no leader election: it always does); /metrics says so too."""
    port = free_port()
    operator = Operator(control_plane, namespace, tmp_path, extra_args=["--metrics-address", f"127.0.0.1:{port}"])
    operator.set_clock("2024-03-01T00:00")
    operator.start()
    try:
        cluster.apply(schedule_manifest("tick", "*/5 * * * *"))
        wait_for("tick seen", ready(cluster, "tick"))
        status, answer = wait_for("ready", lambda: (got := probe(f"http://127.0.0.1:{port}/readyz")) and got[0] == 200
                                  and got, timeout=90)
        assert answer == {"ready": True, "synced": True, "leading": True, "waitingFor": []}
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as got:
            exposition = got.read().decode()
        assert "\ncronctl_leader 1.0\n" in exposition and "cronctl_build_info{version=" in exposition
    finally:
        operator.stop()
        print(operator.log()[-4000:])


def test_the_process_ends_when_the_schedulers_task_dies(probed: tuple[Operator, str], cluster: Cluster) -> None:
    """A real fault kills the loop: its clock cannot be read (the clock file garbled). Before,
    the process went on with no scheduler and its probe stayed green."""
    operator, url = probed
    wait_for("the probe", lambda: (got := probe(url)) and got[0] == 200)
    assert operator.process is not None
    operator.set_clock("not a time")
    dying = time.monotonic()
    code = wait_for("the operator's exit", lambda: operator.process.poll(), timeout=60)  # type: ignore[union-attr]
    print(f"exited {code} {time.monotonic() - dying:.1f} s after the clock broke")
    assert code == 1
    log = operator.log()
    assert log.count("the scheduler stopped") == 1
    assert log.count("Traceback") == 1 and "is not a time YYYY-MM-DDTHH:MM" in log


def test_events_are_stamped_by_the_clock_the_operator_fires_by(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("tick", "*/5 * * * *"))
    wait_for("tick seen", ready(cluster, "tick"))
    operator.set_clock("2024-03-01T00:05")
    wait_for("the launch", lambda: cluster.job_names("tick") == [job_of("tick", "2024-03-01T00:05")])
    launched = wait_for("the Launched Event", lambda: [
        event for event in cluster.core.list_namespaced_event(cluster.namespace,
                                                              field_selector="involvedObject.name=tick").items
        if event.reason == "Launched"])
    stamps = {(event.first_timestamp.isoformat(), event.last_timestamp.isoformat()) for event in launched}
    assert stamps == {("2024-03-01T00:05:00+00:00", "2024-03-01T00:05:00+00:00")}
