"""The CronSchedule's ValidatingAdmissionPolicy on the API server (issue 47).

The rules the CRD held as its own CEL (``x-kubernetes-validations``) until issue 47 are the
policy's (``crds/cronschedule-policy.yaml``): the API server evaluated the CRD's on every
write, /status included, about 1 ms of kube-apiserver CPU a status write. These tests ask the
API server that a create still refuses what the CRD refused, with the field and the message,
and that a status write is no longer judged by them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from .helpers import (GROUP, PLURAL, VERSION, Cluster, Operator, install_policy, kubectl, schedule_manifest,
                      wait_for)

pytestmark = pytest.mark.cluster

POLICY = "ValidatingAdmissionPolicy 'cronschedules.cronctl.dev'"


def without_schedule(name: str, **spec: object) -> str:
    body = json.loads(schedule_manifest(name, "-"))
    del body["spec"]["schedule"]
    body["spec"].update(spec)
    return json.dumps(body)


@pytest.mark.parametrize("manifest, said", [
    (schedule_manifest("both", "0 9 * * *", schedules=["0 10 * * *"]),
     "spec.schedule: give schedule (one expression) or schedules (a list), exactly one of them"),
    (without_schedule("neither"),
     "spec.schedule: give schedule (one expression) or schedules (a list), exactly one of them"),
    (schedule_manifest("mars", "0 9 * * *", timeZone="Mars/Olympus"),
     "spec.timeZone: unknown time zone 'Mars/Olympus': name a zone of the tz database"),
    (schedule_manifest("window", "0 9 * * *", startTime="2027-01-04T09:00:00Z", endTime="2027-01-04T09:30:00+01:00"),
     "spec.endTime: must be after startTime"),
    (schedule_manifest("n" * 53, "0 9 * * *"),
     "metadata.name: at most 52 characters, so that Job names derived from it stay valid"),
    (schedule_manifest("every", "@every 5m", timeZone="Europe/Berlin"),
     "spec.timeZone: an @every interval counts real time and takes no time zone"),
], ids=["both", "neither", "unknown-zone", "end-before-start", "53-characters", "every-with-zone"])
def test_kubectl_apply_refuses_what_the_crd_refused_with_the_rules_field_and_message(
        cluster: Cluster, manifest: str, said: str) -> None:
    result = kubectl(cluster.cp, "apply", "-n", cluster.namespace, "-f", "-", check=False, input=manifest)
    assert result.returncode != 0, result.stdout
    assert POLICY in result.stderr and said in result.stderr, result.stderr
    assert "is invalid" in result.stderr  # 422, as the CRD's rules answered


def test_what_the_policy_takes_is_created(cluster: Cluster) -> None:
    for manifest in (schedule_manifest("zoned", "0 9 * * *", timeZone="Europe/Berlin"),
                     schedule_manifest("offset", "0 9 * * *", timeZone="+05:30"),
                     schedule_manifest("n" * 52, "0 9 * * *"),
                     schedule_manifest("window", "0 9 * * *", startTime="2027-01-04T09:00:00Z",
                                       endTime="2027-01-04T09:30:00+00:00"),
                     without_schedule("listed", schedules=["0 9 * * *"], timeZone="UTC")):
        kubectl(cluster.cp, "apply", "-n", cluster.namespace, "-f", "-", input=manifest)


def status_patch(cluster: Cluster, name: str, status: dict[str, Any]) -> dict[str, Any]:
    return cluster.custom.patch_namespaced_custom_object_status(  # type: ignore[no-any-return]
        GROUP, VERSION, cluster.namespace, PLURAL, name, {"status": status})


def created_without_the_policy(cluster: Cluster, *manifests: str) -> None:
    """Create what the policy refuses, as on a cluster without it (or before it was installed):
    its binding deleted a moment, then put back."""
    kubectl(cluster.cp, "delete", "validatingadmissionpolicybinding", "cronschedules.cronctl.dev")
    try:
        for manifest in manifests:
            wait_for("the policy no longer enforced", lambda: kubectl(
                cluster.cp, "create", "-n", cluster.namespace, "-f", "-", input=manifest, check=False).returncode == 0)
    finally:
        install_policy(cluster.cp)


def test_a_schedule_the_policy_would_refuse_still_takes_status_writes_and_metadata_but_no_bad_spec(
        cluster: Cluster) -> None:
    """A schedule created before the policy existed: the operator's status writes and its
    annotation writes go through, since the policy matches neither /status nor an update that
    leaves the spec as it was; a change of its spec is judged."""
    created_without_the_policy(cluster, schedule_manifest("before-the-policy", "0 9 * * *", timeZone="Mars/Olympus"))
    written = status_patch(cluster, "before-the-policy", {"nextFireTime": "2027-01-04T09:00:00Z", "conditions": [
        {"type": "Ready", "status": "False", "reason": "UnknownTimeZone", "message": "spec.timeZone: ...",
         "lastTransitionTime": "2027-01-04T08:00:00Z"}]})
    assert written["status"]["nextFireTime"] == "2027-01-04T09:00:00Z"
    kubectl(cluster.cp, "annotate", "-n", cluster.namespace, "cronschedule/before-the-policy", "cronctl.dev/seen=yes")
    with pytest.raises(ApiException) as refused:
        cluster.custom.patch_namespaced_custom_object(GROUP, VERSION, cluster.namespace, PLURAL, "before-the-policy",
                                                      {"spec": {"schedule": "0 10 * * *"}})
    assert refused.value.status == 422 and "unknown time zone 'Mars/Olympus'" in str(refused.value.body)
    fixed = cluster.custom.patch_namespaced_custom_object(GROUP, VERSION, cluster.namespace, PLURAL,
                                                          "before-the-policy", {"spec": {"timeZone": "UTC"}})
    assert fixed["spec"]["timeZone"] == "UTC"


def test_without_the_policy_the_operator_marks_what_it_would_refuse_ready_false_with_the_reason(
        operator: Operator, cluster: Cluster) -> None:
    created_without_the_policy(cluster, schedule_manifest("l" * 53, "0 9 * * *"),
                               schedule_manifest("mars", "0 9 * * *", timeZone="Mars/Olympus"),
                               schedule_manifest("every", "@every 5m", timeZone="UTC"))
    for name, reason, said in [("l" * 53, "InvalidName", "metadata.name: at most 52 characters"),
                               ("mars", "UnknownTimeZone", "spec.timeZone: unknown time zone 'Mars/Olympus'"),
                               ("every", "InvalidTimeZone", "spec.timeZone: an @every interval")]:
        condition = wait_for(f"{name}'s condition",
                             lambda: next(iter(cluster.status(name).get("conditions", [])), None))
        assert (condition["type"], condition["status"], condition["reason"]) == ("Ready", "False", reason)
        assert condition["message"].startswith(said)
    assert cluster.jobs("mars") == [] and cluster.jobs("every") == []
