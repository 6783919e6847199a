"""The Jobs' watch on the API server: what it lists and sees, and its Gone."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import config

from cronctl.operator.kube.cache import Cache
from cronctl.operator.kube.jobwatch import Gone, JobWatch
from cronctl.operator.kube.rest import Rest
from cronctl.operator.shard import Shard

from .helpers import Cluster, wait_for

pytestmark = pytest.mark.usefixtures("control_plane")


def suspended_job(name: str, schedule: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": {"cronctl.dev/schedule": schedule}},
            "spec": {"suspend": True, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox", "command": ["true"]}]}}}}


@pytest.fixture
def rest(control_plane: Any) -> Rest:
    return Rest(config.new_client_from_config(config_file=str(control_plane.kubeconfig)))


def names(cache: Cache, namespace: str, schedule: str) -> list[str]:
    return sorted(job["metadata"]["name"] for job in cache.jobs(namespace, schedule))


def test_the_watch_lists_then_sees_creates_ends_and_deletes_of_its_shards_jobs(
        rest: Rest, cluster: Cluster, namespace: str) -> None:
    rest.create_namespaced_job(namespace, suspended_job("sync-1", "sync"))
    other_shard = suspended_job("sync-x", "sync")
    other_shard["metadata"]["labels"]["cronctl.dev/shard"] = "b"
    rest.create_namespaced_job(namespace, other_shard)
    cache, looked_at = Cache(), []
    watch = JobWatch(rest, cache, namespace, Shard().job_selector, looked_at.append)
    assert watch.list() == 1
    thread = watch.start()
    try:
        rest.create_namespaced_job(namespace, suspended_job("sync-2", "sync"))
        wait_for("the created Job in the cache", lambda: names(cache, namespace, "sync") == ["sync-1", "sync-2"])
        cluster.finish_job("sync-2", "Complete", "2024-03-01T00:01")
        wait_for("the end looked at", lambda: looked_at)  # once or more: the job controller may write again
        assert set(looked_at) == {(namespace, "sync")}
        rest.delete_namespaced_job(namespace, "sync-1", propagation_policy="Background")
        wait_for("the deleted Job gone", lambda: names(cache, namespace, "sync") == ["sync-2"])
        assert "sync-x" not in names(cache, namespace, "sync")  # another shard's, filtered by the server
    finally:
        watch.stop()
        thread.join(10)
    assert not thread.is_alive(), "stop ends the watch's read at once"


def test_a_version_the_server_no_longer_keeps_is_gone(rest: Rest, namespace: str) -> None:
    watch = JobWatch(rest, Cache(), namespace, Shard().job_selector, lambda key: None)
    watch.list()
    watch.resource_version = "1"  # long compacted away
    with pytest.raises(Gone):
        watch.watch_once()
