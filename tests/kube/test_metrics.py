"""Observability against the real API server: the operator serves /metrics and logs JSON.

The operator runs as users start it, with ``--metrics-address`` on a free
loopback port and ``--log-format json --verbose``; a schedule fires at the
injected minute, and the test reads what a Prometheus scrape and a log
shipper would.
"""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from .helpers import Cluster, Operator, job_of, ready, wait_for

pytestmark = pytest.mark.cluster

SECRET = "s3cr3t-env-value-never-logged"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def observed_operator(control_plane: Any, namespace: str, tmp_path: Path) -> Iterator[tuple[Operator, str]]:
    port = free_port()
    op = Operator(control_plane, namespace, tmp_path,
                  extra_args=["--metrics-address", f"127.0.0.1:{port}", "--log-format", "json", "--verbose"])
    op.set_clock("2024-03-01T00:00")
    op.start()
    yield op, f"http://127.0.0.1:{port}/metrics"
    op.stop()
    print(op.log()[-6000:])


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, by (name, sorted labels); empty while the endpoint is not up."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return {}
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def schedule_with_secret(name: str) -> str:
    container = {"name": "main", "image": "busybox", "command": ["true"],
                 "env": [{"name": "API_TOKEN", "value": SECRET}]}
    spec = {"schedule": "*/10 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}}}
    return json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": name},
                       "spec": spec})


def test_metrics_endpoint_and_json_logs(observed_operator: tuple[Operator, str], cluster: Cluster,
                                        namespace: str) -> None:
    operator, url = observed_operator
    cluster.apply(schedule_with_secret("tick"))
    wait_for("tick seen", ready(cluster, "tick"))
    ours = (("namespace", namespace), ("schedule", "tick"))
    wait_for("the schedule gauged", lambda: scrape(url).get(("cronctl_schedules", (("namespace", namespace),))))

    operator.set_clock("2024-03-01T00:10")
    wait_for("tick's Job", lambda: cluster.job_names("tick") == [job_of("tick", "2024-03-01T00:10")])
    samples = wait_for("the launch counted", lambda: (s := scrape(url)).get(("cronctl_launches_total", ours)) and s)
    assert samples[("cronctl_launches_total", ours)] == 1
    by_namespace = (("namespace", namespace),)
    assert samples[("cronctl_launch_delay_seconds_count", by_namespace)] == 1
    # the injected clock says 00:10:00 when the Job is created: no delay at all
    assert samples[("cronctl_launch_delay_seconds_bucket", (("le", "0.1"),) + by_namespace)] == 1
    assert samples[("cronctl_active_runs", ours)] == 1
    assert samples[("cronctl_schedules", by_namespace)] == 1
    assert ("cronctl_skips_total", ours) not in samples

    log = operator.log()
    lines = [json.loads(line) for line in log.splitlines() if line.strip()]
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    assert any(line["logger"].startswith("kopf.") for line in lines)  # kopf's own records, as JSON too
    [launched] = [line for line in lines if line.get("reason") == "Launched"]
    assert (launched["namespace"], launched["schedule"], launched["nominal"], launched["run"],
            launched["attempt"]) == (namespace, "tick", "2024-03-01T00:10:00Z", 1, 1)
    assert cluster.jobs("tick")[0].spec.template.spec.containers[0].env[0].value == SECRET
    assert SECRET not in log

    cluster.custom.delete_namespaced_custom_object("cronctl.dev", "v1", namespace, "cronschedules", "tick")
    gone = wait_for("the deleted schedule's gauges dropped",
                    lambda: (s := scrape(url)).get(("cronctl_active_runs", ours)) is None and s)
    assert ("cronctl_schedules", by_namespace) not in gone
    assert gone[("cronctl_launches_total", ours)] == 1  # counters stay, as counters do


def api_requests(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], metric: str,
                 ) -> dict[tuple[str, ...], float]:
    """A metric's samples by their (verb, resource[, code]) labels."""
    return {tuple(dict(labels)[name] for name in ("verb", "resource", "code") if name in dict(labels)): value
            for (name, labels), value in samples.items() if name == metric}


def unowned_job(name: str) -> dict[str, Any]:
    """A Job of someone else's, named as the operator would name a run of its own."""
    container = {"name": "main", "image": "busybox", "command": ["true"]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}}


def test_api_requests_are_counted_by_verb_resource_and_code_and_timed_by_verb(
        observed_operator: tuple[Operator, str], cluster: Cluster, namespace: str) -> None:
    """What the API server answered the operator's own requests: the Lease's first read (404) and
    its create (201), then its renewals; the watches' lists and watches; a launch's create (201)
    and its status patch; a create that met someone else's Job of the run's name (409) and the
    read that followed it. Each verb has its latency observed."""
    operator, url = observed_operator
    counted = wait_for("the Lease's read, create and a renewal counted", lambda: (found := api_requests(
        scrape(url), "cronctl_api_requests_total")).get(("update", "leases", "200")) and found)
    assert counted[("get", "leases", "404")] == 1  # a new namespace has no Lease yet
    assert counted[("create", "leases", "201")] == 1
    assert {("list", "jobs", "200"), ("watch", "jobs", "200"), ("list", "cronschedules", "200"),
            ("watch", "cronschedules", "200")} <= set(counted)

    cluster.apply(schedule_with_secret("tick"))
    wait_for("tick seen", ready(cluster, "tick"))
    operator.set_clock("2024-03-01T00:10")
    wait_for("tick's Job", lambda: cluster.job_names("tick") == [job_of("tick", "2024-03-01T00:10")])
    counted = wait_for("the create counted", lambda: (found := api_requests(
        scrape(url), "cronctl_api_requests_total")).get(("create", "jobs", "201")) and found)
    assert counted[("create", "jobs", "201")] == 1
    assert ("create", "jobs", "409") not in counted

    cluster.batch.create_namespaced_job(namespace, unowned_job(job_of("tick", "2024-03-01T00:20")))
    operator.set_clock("2024-03-01T00:20")
    counted = wait_for("the conflict counted", lambda: (found := api_requests(
        scrape(url), "cronctl_api_requests_total")).get(("create", "jobs", "409")) and found)
    assert counted[("create", "jobs", "201")] == 1  # the run's Job was someone else's: nothing created
    assert counted[("get", "jobs", "200")] >= 1  # the Job read to tell whose it is
    assert counted.get(("patch", "cronschedules/status", "200"), 0) >= 1

    samples = scrape(url)
    timed = api_requests(samples, "cronctl_api_request_duration_seconds_count")
    assert {verb for verb, _ in timed} >= {"get", "list", "watch", "create", "update", "patch"}
    assert timed[("create", "jobs")] == 2  # 201 and 409: timed whatever the answer
    # a loopback API server answers within a second: every observation is in the buckets below it
    for verb, resource in timed:
        bucket = ("cronctl_api_request_duration_seconds_bucket",
                  (("le", "1.0"), ("resource", resource), ("verb", verb)))
        assert samples[bucket] == timed[(verb, resource)], (verb, resource)
