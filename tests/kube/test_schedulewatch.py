"""The CronSchedules' watch on the API server: what it lists and sees, and what it asks the loop to look at."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import config

from cronctl.manifest import GROUP, PLURAL, VERSION
from cronctl.operator.kube.cache import Cache
from cronctl.operator.kube.rest import Rest
from cronctl.operator.kube.schedulewatch import ScheduleWatch
from cronctl.operator.shard import Shard

from ..operator.kube.test_schedulewatch import Loop
from .helpers import Cluster, schedule_manifest, wait_for

pytestmark = pytest.mark.usefixtures("control_plane")


@pytest.fixture
def rest(control_plane: Any) -> Rest:
    return Rest(config.new_client_from_config(config_file=str(control_plane.kubeconfig)))


def test_the_watch_lists_then_sees_edits_and_deletes_but_asks_no_look_for_a_status_patch(
        rest: Rest, cluster: Cluster, namespace: str) -> None:
    cluster.apply(schedule_manifest("sync", "0 3 * * *"))
    other_shard = json.loads(schedule_manifest("moved", "0 3 * * *"))
    other_shard["metadata"]["labels"] = {"cronctl.dev/shard": "b"}
    cluster.apply(json.dumps(other_shard))
    cache, loop = Cache(), Loop()
    watch = ScheduleWatch(rest, cache, namespace, Shard().schedule_selector, loop)
    assert watch.list() == 1  # the other shard's is filtered by the server
    assert loop.touched == [(namespace, "sync")] and cache.schedule(namespace, "moved") is None
    thread = watch.start()
    key = (namespace, "sync")
    try:
        generation = cluster.schedule("sync")["metadata"]["generation"]
        patched = rest.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL, "sync",
                                                             {"status": {"observedGeneration": generation}})
        version = patched["metadata"]["resourceVersion"]
        wait_for("the status patch in the cache",
                 lambda: cache.schedule(*key)["metadata"]["resourceVersion"] == version)
        assert loop.touched == [key]  # the operator's own write: nothing to look at
        cluster.apply(schedule_manifest("sync", "0 4 * * *"))
        wait_for("the edit looked at", lambda: loop.touched == [key, key])
        assert cache.schedule(*key)["spec"]["schedule"] == "0 4 * * *"
        cluster.custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "sync")
        wait_for("the deleted schedule forgotten", lambda: loop.forgotten == [key])
        assert cache.schedule(*key) is None
    finally:
        watch.stop()
        thread.join(10)
    assert not thread.is_alive(), "stop ends the watch's read at once"
