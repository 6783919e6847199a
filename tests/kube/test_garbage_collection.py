"""The control plane's kube-controller-manager (garbage collector and namespace
controller) against the operator's own Job manifests.

The operator never deletes a schedule's Jobs itself when the schedule goes: it
relies on the ownerReference that ``job_manifest`` puts on every Job. These
tests build Jobs with that pure builder, delete the CronSchedule and watch
Kubernetes garbage-collect them, while a Job of the same name owned by a
same-named schedule in another namespace stays. No operator runs here.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from typing import Any, Callable, Iterator

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from cronctl.core.times import parse_time
from cronctl.operator.manifests import JobLaunch, job_manifest

from .controlplane import REPO_ROOT
from .helpers import KUBECTL, kubectl, wait_for

pytestmark = pytest.mark.cluster

CRD = REPO_ROOT / "crds" / "cronschedule.yaml"
GROUP, VERSION, PLURAL = "cronctl.dev", "v1", "cronschedules"




def gone(read: Callable[[], Any]) -> Callable[[], bool]:
    """A probe that is True once read() answers 404."""
    def probe() -> bool:
        try:
            read()
        except ApiException as exc:
            if exc.status == 404:
                return True
            raise
        return False
    return probe


@pytest.fixture(scope="module")
def api(control_plane: Any) -> Iterator[client.ApiClient]:
    with config.new_client_from_config(config_file=str(control_plane.kubeconfig)) as api_client:
        yield api_client


@pytest.fixture(scope="module")
def crd(control_plane: Any, api: client.ApiClient) -> None:
    """The CRD, established and watched by the garbage collector.

    The garbage collector picks up a resource type created after it started
    only at its next discovery resync (every 30 s, fixed in
    kube-controller-manager). Until then it still collects a Job whose owner
    was deleted, but late: it re-reads the unseen owner on a backoff that grew
    to 40 s in a trial. So wait until it watches CronSchedules: a CronSchedule
    deleted with Foreground propagation disappears only once the garbage
    collector has seen it and removed its foregroundDeletion finalizer.
    """
    kubectl(control_plane, "apply", "-f", str(CRD))
    kubectl(control_plane, "wait", "--for=condition=Established", "crd/cronschedules.cronctl.dev",
            "--timeout=60s")
    custom = client.CustomObjectsApi(api)
    name = f"gc-probe-{uuid.uuid4().hex[:8]}"
    create_schedule(custom, "default", name)
    started = time.monotonic()
    custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name,
                                           body=client.V1DeleteOptions(propagation_policy="Foreground"))
    wait_for("the garbage collector to watch CronSchedules",
             gone(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name)))
    print(f"garbage collector watches CronSchedules after {time.monotonic() - started:.1f}s")


@pytest.fixture
def new_namespace(control_plane: Any, crd: None) -> Iterator[Callable[[], str]]:
    """Makes unique namespaces; deletes whatever is left of them afterwards."""
    made: list[str] = []

    def make() -> str:
        name = f"gc-{uuid.uuid4().hex[:8]}"
        kubectl(control_plane, "create", "namespace", name)
        made.append(name)
        return name

    yield make
    for name in made:
        subprocess.run([KUBECTL, "--kubeconfig", str(control_plane.kubeconfig), "delete", "namespace", name,
                        "--wait=false", "--ignore-not-found"], capture_output=True, timeout=60)


def create_schedule(custom: client.CustomObjectsApi, namespace: str, name: str) -> dict[str, Any]:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "CronSchedule", "metadata": {"name": name},
        "spec": {"schedule": "*/10 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}},
    }
    custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    # Read back: the builder needs the uid the API server gave it.
    return custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)


def create_job(batch: client.BatchV1Api, schedule: dict[str, Any]) -> client.V1Job:
    scheduled = parse_time("2024-03-01T00:10")
    assert scheduled is not None
    manifest = job_manifest(schedule, schedule["spec"]["jobTemplate"], JobLaunch(1, scheduled, scheduled))
    return batch.create_namespaced_job(schedule["metadata"]["namespace"], manifest)


@pytest.mark.parametrize("propagation", ["Background", "Foreground"])
def test_deleting_a_schedule_garbage_collects_its_jobs(api: client.ApiClient, new_namespace: Callable[[], str],
                                                       propagation: str) -> None:
    custom, batch = client.CustomObjectsApi(api), client.BatchV1Api(api)
    here, there = new_namespace(), new_namespace()
    schedule = create_schedule(custom, here, "nightly")
    job = create_job(batch, schedule)
    owner = job.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.uid, owner.controller) == (
        "CronSchedule", "nightly", schedule["metadata"]["uid"], True)
    # Same schedule name, same Job name, in another namespace: another owner.
    twin_schedule = create_schedule(custom, there, "nightly")
    twin = create_job(batch, twin_schedule)
    assert twin.metadata.name == job.metadata.name
    assert twin.metadata.owner_references[0].uid != owner.uid

    started = time.monotonic()
    custom.delete_namespaced_custom_object(GROUP, VERSION, here, PLURAL, "nightly",
                                           body=client.V1DeleteOptions(propagation_policy=propagation))
    wait_for(f"Job {here}/{job.metadata.name} to be garbage-collected",
             gone(lambda: batch.read_namespaced_job(job.metadata.name, here)))
    # Foreground: the garbage collector removes the schedule's
    # foregroundDeletion finalizer only once the Job is gone.
    wait_for(f"CronSchedule {here}/nightly to be gone",
             gone(lambda: custom.get_namespaced_custom_object(GROUP, VERSION, here, PLURAL, "nightly")))
    print(f"{propagation}: Job collected {time.monotonic() - started:.1f}s after its schedule was deleted")

    kept = batch.read_namespaced_job(twin.metadata.name, there)
    assert kept.metadata.uid == twin.metadata.uid
    assert kept.metadata.deletion_timestamp is None
    assert custom.get_namespaced_custom_object(GROUP, VERSION, there, PLURAL, "nightly")["metadata"]["uid"] == \
        twin_schedule["metadata"]["uid"]


def test_deleting_a_namespace_completes(api: client.ApiClient, new_namespace: Callable[[], str]) -> None:
    """The namespace controller empties a deleted namespace (custom objects
    included) and removes it, instead of leaving it Terminating forever."""
    custom, batch, core = client.CustomObjectsApi(api), client.BatchV1Api(api), client.CoreV1Api(api)
    namespace = new_namespace()
    create_job(batch, create_schedule(custom, namespace, "weekly"))
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="settings"),
                                                                    data={"k": "v"}))
    started = time.monotonic()
    core.delete_namespace(namespace)
    wait_for(f"namespace {namespace} to disappear", gone(lambda: core.read_namespace(namespace)))
    print(f"namespace deleted in {time.monotonic() - started:.1f}s")
