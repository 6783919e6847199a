"""A refused Job create, cronctl beside the CronJob controller on one cluster (issue 43).

Both fire every minute by the wall clock, under a ValidatingAdmissionPolicy that denies every
Job create in the namespace across a minute: the CronJob controller posts FailedCreate with the
API server's words, and so must cronctl, on its schedule, with Ready False meanwhile. Lifted,
each fires the following minute once.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from ..helpers import Cluster, Operator, kubectl, schedule_manifest, wait_for
from ..test_refusals import creates_refused, policy, ready_condition
from .test_import import cronjob, jobs_of, next_minute_in

pytestmark = pytest.mark.cluster


def failed_creates(cluster: Cluster, kind: str, name: str) -> list[str]:
    items = cluster.core.list_namespaced_event(cluster.namespace, field_selector=f"involvedObject.name={name}").items
    return [event.message for event in items if event.reason == "FailedCreate" and event.involved_object.kind == kind]


def test_a_denied_create_is_said_by_cronctl_as_by_the_cronjob_controller_and_both_fire_once_lifted(
        control_plane: Any, operator_on_the_wall_clock: Operator, cluster: Cluster, namespace: str) -> None:
    name = f"no-jobs-{namespace}"
    kubectl(control_plane, "apply", "-f", "-", input=policy(name, namespace))
    try:
        wait_for("the API server refuses Job creates", lambda: creates_refused(control_plane, namespace))
        boundary = next_minute_in(5)  # both exist before the minute they are refused at (one apply)
        both = [cronjob("peer", "* * * * *"), json.loads(schedule_manifest("ours", "* * * * *"))]
        cluster.apply(json.dumps({"apiVersion": "v1", "kind": "List", "items": both}))
        time.sleep(max(0.0, boundary - time.time()))
        words = f"ValidatingAdmissionPolicy '{name}'"
        peer = wait_for("the CronJob controller's FailedCreate", lambda: failed_creates(cluster, "CronJob", "peer"),
                        timeout=60)
        ours = wait_for("cronctl's FailedCreate", lambda: failed_creates(cluster, "CronSchedule", "ours"), timeout=60)
        assert any(words in message for message in peer), peer
        assert any(words in message and "no Jobs during the maintenance window" in message for message in ours), ours
        assert ready_condition(cluster, "ours").get("reason") == "FailedCreate"
        assert jobs_of(cluster, "ours") == [] and jobs_of(cluster, "peer") == []
    finally:
        kubectl(control_plane, "delete", "validatingadmissionpolicybinding", name, check=False)
        kubectl(control_plane, "delete", "validatingadmissionpolicy", name, check=False)
    wait_for("the API server lets Job creates through", lambda: not creates_refused(control_plane, namespace))
    lifted = time.time()
    after = next_minute_in(0)
    wait_for("both fire the minute after the lift", lambda: all(
        any(job.metadata.creation_timestamp.timestamp() >= after - 1 for job in jobs_of(cluster, each))
        for each in ("ours", "peer")), timeout=after - lifted + 60)
    wait_for("Ready again", lambda: ready_condition(cluster, "ours").get("status") == "True")
    names = [job.metadata.name for job in jobs_of(cluster, "ours")]
    assert len(names) == len(set(names)) <= 2  # the refused minute (if its deadline let it) and the next, once each
    refused_lines = [line for line in operator_on_the_wall_clock.log().splitlines() if "refused" in line]
    assert len(refused_lines) == 1, refused_lines
