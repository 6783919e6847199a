"""When the cluster says no (issue 43), on the real API server: a Job create refused by a
ValidatingAdmissionPolicy or an exhausted ResourceQuota is said on the schedule in the API
server's words (a FailedCreate Warning, Ready False), counted by reason, logged once for the
streak with no traceback; once lifted, the minute runs once and the next one once. A schedule
being deleted (held by a finalizer) launches nothing; a schedule created while no operator ran
runs its first minute once the operator starts."""

from __future__ import annotations

import datetime as dt
import json
import socket
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from .helpers import Cluster, Operator, job_of, kubectl, ready, schedule_manifest, wait_for

pytestmark = pytest.mark.cluster


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def operator(control_plane: Any, namespace: str, tmp_path: Path) -> Iterator[Operator]:
    """The operator with its metrics served (``operator.metrics_url``)."""
    port = free_port()
    op = Operator(control_plane, namespace, tmp_path, extra_args=["--metrics-address", f"127.0.0.1:{port}"])
    op.metrics_url = f"http://127.0.0.1:{port}/metrics"  # type: ignore[attr-defined]
    op.set_clock("2024-03-01T00:00")
    op.start()
    yield op
    op.stop()
    print(op.log()[-6000:])


def refusals(url: str) -> dict[tuple[str, str, str], float]:
    """cronctl_refusals_total by (verb, resource, reason)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return {}
    return {(s.labels["verb"], s.labels["resource"], s.labels["reason"]): s.value
            for family in text_string_to_metric_families(text) for s in family.samples
            if s.name == "cronctl_refusals_total"}


def creates_refused(cp: Any, namespace: str) -> bool:
    """Whether the API server refuses a Job create in the namespace now (a server-side dry run)."""
    probe = kubectl(cp, "create", "job", "probe", "-n", namespace, "--image=busybox", "--dry-run=server",
                    check=False)
    return probe.returncode != 0


def ready_condition(cluster: Cluster, name: str) -> dict[str, Any]:
    return next((c for c in cluster.status(name).get("conditions") or [] if c["type"] == "Ready"), {})


def policy(name: str, namespace: str) -> str:
    return textwrap.dedent(f"""\
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata: {{name: {name}}}
        spec:
          failurePolicy: Fail
          matchConstraints:
            resourceRules:
            - apiGroups: ["batch"]
              apiVersions: ["v1"]
              operations: ["CREATE"]
              resources: ["jobs"]
          validations:
          - expression: "false"
            message: no Jobs during the maintenance window
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicyBinding
        metadata: {{name: {name}}}
        spec:
          policyName: {name}
          validationActions: [Deny]
          matchResources:
            namespaceSelector:
              matchLabels: {{kubernetes.io/metadata.name: {namespace}}}
        """)


def exhausted_quota(cp: Any, namespace: str) -> None:
    """A ResourceQuota on count/jobs.batch with no room, its status written as the quota
    controller (which this control plane does not run) would."""
    kubectl(cp, "apply", "-n", namespace, "-f", "-", input=textwrap.dedent("""\
        apiVersion: v1
        kind: ResourceQuota
        metadata: {name: jobs}
        spec: {hard: {count/jobs.batch: "0"}}
        """))
    status = json.dumps({"status": {"hard": {"count/jobs.batch": "0"}, "used": {"count/jobs.batch": "0"}}})
    kubectl(cp, "patch", "resourcequota", "jobs", "-n", namespace, "--subresource=status", "--type=merge",
            "-p", status)


def a_refusal_is_said_then_lifted(cp: Any, operator: Operator, cluster: Cluster, namespace: str,
                                  refuse: Any, lift: Any, words: list[str], reason: str) -> None:
    """The scenario for any refusal of Job creates: ``refuse`` across 00:01, then ``lift``."""
    cluster.apply(schedule_manifest("sync", "* * * * *"))
    wait_for("the schedule is read", ready(cluster, "sync"))
    refuse()
    wait_for("the API server refuses Job creates", lambda: creates_refused(cp, namespace))
    operator.set_clock("2024-03-01T00:01")

    def said() -> bool:
        return any(kind == "FailedCreate" and all(w in message for w in words)
                   for kind, message in cluster.events("sync"))
    wait_for("a FailedCreate Warning in the API server's words", said)
    condition = wait_for("Ready False with the refusal", lambda: (c := ready_condition(cluster, "sync")).get(
        "reason") == "FailedCreate" and c)
    assert condition["status"] == "False" and all(word in condition["message"] for word in words)
    url = operator.metrics_url  # type: ignore[attr-defined]
    wait_for("the refusal counted by its reason",
             lambda: refusals(url).get(("create", "jobs", reason), 0) >= 3)  # tried again, and again
    assert cluster.job_names("sync") == []
    refused_lines = [line for line in operator.log().splitlines() if "refused" in line and "sync" in line]
    assert len(refused_lines) == 1, refused_lines  # one line for the streak
    assert "Traceback" not in operator.log()
    events = [message for kind, message in cluster.events("sync") if kind == "FailedCreate"]
    assert len({event for event in events}) == 1 and len(events) >= 2  # one series, counted

    lift()
    wait_for("the API server lets Job creates through", lambda: not creates_refused(cp, namespace))
    wait_for("00:01 launched once the refusal is lifted",
             lambda: cluster.job_names("sync") == [job_of("sync", "2024-03-01T00:01")])
    wait_for("Ready again", lambda: ready_condition(cluster, "sync").get("status") == "True")
    operator.set_clock("2024-03-01T00:02")
    wait_for("00:02 launched", lambda: len(cluster.job_names("sync")) == 2)
    time.sleep(1.0)  # nothing more follows (a doubled create would be adopted, but a third Job would show)
    assert cluster.job_names("sync") == [job_of("sync", "2024-03-01T00:01"), job_of("sync", "2024-03-01T00:02")]
    assert cluster.status("sync")["launched"] == 2


def test_a_job_create_denied_by_an_admission_policy_is_said_on_the_schedule_and_runs_once_lifted(
        control_plane: Any, operator: Operator, cluster: Cluster, namespace: str) -> None:
    name = f"no-jobs-{namespace}"

    def refuse() -> None:
        kubectl(control_plane, "apply", "-f", "-", input=policy(name, namespace))

    def lift() -> None:
        kubectl(control_plane, "delete", "validatingadmissionpolicybinding", name)
        kubectl(control_plane, "delete", "validatingadmissionpolicy", name)

    a_refusal_is_said_then_lifted(control_plane, operator, cluster, namespace, refuse, lift,
                                  [f"ValidatingAdmissionPolicy '{name}'", "no Jobs during the maintenance window"],
                                  "Invalid")


def test_a_job_create_past_an_exhausted_quota_is_said_on_the_schedule_and_runs_once_lifted(
        control_plane: Any, operator: Operator, cluster: Cluster, namespace: str) -> None:
    def lift() -> None:
        kubectl(control_plane, "delete", "resourcequota", "jobs", "-n", namespace)

    a_refusal_is_said_then_lifted(control_plane, operator, cluster, namespace,
                                  lambda: exhausted_quota(control_plane, namespace), lift,
                                  ["exceeded quota: jobs", "limited: count/jobs.batch=0"], "Forbidden")


def hold_with_a_finalizer(cp: Any, namespace: str, name: str) -> None:
    kubectl(cp, "patch", "cronschedule", name, "-n", namespace, "--type=merge",
            "-p", '{"metadata": {"finalizers": ["backup.example.com/hold"]}}')


def let_go(cp: Any, namespace: str, name: str) -> None:
    kubectl(cp, "patch", "cronschedule", name, "-n", namespace, "--type=merge", "-p", '{"metadata": {"finalizers": null}}')


def test_a_schedule_held_by_a_finalizer_while_deleted_launches_nothing(
        control_plane: Any, operator: Operator, cluster: Cluster, namespace: str) -> None:
    cluster.apply(schedule_manifest("held", "* * * * *"))
    cluster.apply(schedule_manifest("beside", "* * * * *"))  # shows when the operator has looked at a minute
    wait_for("the schedules are read", lambda: ready(cluster, "held")() and ready(cluster, "beside")())
    hold_with_a_finalizer(control_plane, namespace, "held")
    kubectl(control_plane, "delete", "cronschedule", "held", "-n", namespace, "--wait=false")
    wait_for("Ready says it is being deleted", lambda: ready_condition(cluster, "held").get("reason") == "Deleting")
    assert "backup.example.com/hold" in ready_condition(cluster, "held")["message"]
    for minute in ("2024-03-01T00:01", "2024-03-01T00:02"):
        operator.set_clock(minute)
        wait_for(f"{minute} launched beside it", lambda minute=minute: job_of("beside", minute) in cluster.job_names(
            "beside"))
        assert cluster.job_names("held") == []
    assert "Traceback" not in operator.log()
    let_go(control_plane, namespace, "held")


def test_a_schedule_created_while_no_operator_ran_runs_its_first_minute(
        control_plane: Any, namespace: str, cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(schedule_manifest("early", "* * * * *"))
    created = dt.datetime.fromisoformat(cluster.schedule("early")["metadata"]["creationTimestamp"].replace(
        "Z", "+00:00"))
    first = created.replace(second=0) + dt.timedelta(minutes=1)
    op = Operator(control_plane, namespace, tmp_path)
    op.set_clock((first + dt.timedelta(seconds=10)).strftime("%Y-%m-%dT%H:%M:%S"))  # started 70 s after, or so
    op.start()
    try:
        when = first.strftime("%Y-%m-%dT%H:%M")
        wait_for("the first minute after its creation launched", lambda: cluster.job_names("early") == [
            job_of("early", when)])
        anchor = created.replace(second=0).strftime("%Y-%m-%dT%H:%M:00Z")
        wait_for("the anchor is the minute of its creation", lambda: cluster.status("early").get("anchorTime") == anchor)
        assert cluster.status("early")["launched"] == 1
    finally:
        op.stop()
        print(op.log()[-4000:])


def test_a_schedule_held_in_a_terminating_namespace_launches_nothing_and_logs_no_error_loop(
        control_plane: Any, operator: Operator, cluster: Cluster, namespace: str) -> None:
    cluster.apply(schedule_manifest("left", "* * * * *"))
    wait_for("the schedule is read", ready(cluster, "left"))
    hold_with_a_finalizer(control_plane, namespace, "left")
    kubectl(control_plane, "delete", "namespace", namespace, "--wait=false")
    wait_for("the namespace controller marks the schedule deleted",
             lambda: cluster.schedule("left")["metadata"].get("deletionTimestamp"))
    wait_for("Ready says it is being deleted", lambda: ready_condition(cluster, "left").get("reason") == "Deleting")
    for minute in ("2024-03-01T00:01", "2024-03-01T00:02"):
        operator.set_clock(minute)
        time.sleep(1.5)  # an absence: no schedule of a terminating namespace can launch to show the minute came
        assert cluster.job_names("left") == []
    log = operator.log()
    assert "Traceback" not in log and "ERROR" not in log
    let_go(control_plane, namespace, "left")
