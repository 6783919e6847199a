"""An import's adoption on the real API server: while a CronSchedule carries ``cronctl.dev/adopting`` the
operator decides nothing for it, so a time that came due before the CronJob's running Job is adopted does
not run beside it (Forbid twice, the adopted Job then deleted as a leftover, as the import test once saw).
Once the import removes the mark, the due time is decided as after a slow operator: Forbid skips it beside
the adopted run, Allow runs it once. The test plays the importer's writes; the operator's clock is a file."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cronctl.plugin.importing import adoption

from .helpers import Cluster, Operator, job_of, ready, schedule_manifest, wait_for

pytestmark = pytest.mark.cluster

LAST_FIRED, DUE = "2024-03-01T00:10", "2024-03-01T00:11"


def running_job(cluster: Cluster, name: str) -> None:
    """The CronJob's Job of its last time, still running (no job controller here: it stays active)."""
    body = {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "annotations": {
                "batch.kubernetes.io/cronjob-scheduled-timestamp": LAST_FIRED + ":00Z"}},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "main", "image": "busybox"}]}}}}
    cluster.batch.create_namespaced_job(cluster.namespace, body)


def marked(name: str, policy: str) -> str:
    body = json.loads(schedule_manifest(name, "* * * * *", policy))
    body["metadata"]["annotations"] = {"cronctl.dev/anchor": LAST_FIRED + ":00Z",
                                       "cronctl.dev/adopting": DUE + ":05Z"}
    return json.dumps(body)


def all_jobs(cluster: Cluster) -> list[str]:
    return sorted(job.metadata.name for job in cluster.batch.list_namespaced_job(cluster.namespace).items
                  if job.metadata.deletion_timestamp is None)


@pytest.mark.parametrize("policy", ["Forbid", "Allow"])
def test_a_due_time_waits_for_the_adoption_then_follows_the_policy(operator: Operator, cluster: Cluster,
                                                                   policy: str) -> None:
    adopted = job_of("long", LAST_FIRED)
    operator.set_clock(DUE + ":20")  # 00:11 is due; the mark (00:11:05) holds until 00:12:05
    running_job(cluster, adopted)
    cluster.apply(marked("long", policy))
    cluster.apply(schedule_manifest("witness", "0 0 1 1 *"))  # looked at after "long": it was seen
    wait_for("the operator's first look", ready(cluster, "witness"))
    assert all_jobs(cluster) == [adopted] and cluster.status("long") == {}

    schedule = cluster.schedule("long")
    patch = adoption(cluster.batch.api_client.sanitize_for_serialization(
        cluster.batch.read_namespaced_job(adopted, cluster.namespace)), schedule, 1)
    cluster.batch.patch_namespaced_job(adopted, cluster.namespace, patch)
    cluster.apply(schedule_manifest("witness", "0 0 2 1 *"))  # a spec change: looked at again
    wait_for("the operator's next look", lambda: cluster.status("witness").get("observedGeneration") == 2)
    assert all_jobs(cluster) == [adopted] and cluster.status("long") == {}

    cluster.custom.patch_namespaced_custom_object("cronctl.dev", "v1", cluster.namespace, "cronschedules", "long",
                                                  {"metadata": {"annotations": {"cronctl.dev/adopting": None}}})
    status = wait_for("the first plan", lambda: cluster.status("long").get("anchorTime") and cluster.status("long"))
    if policy == "Forbid":
        assert all_jobs(cluster) == [adopted]
        assert status["skipped"] == 1 and [run["name"] for run in status["active"]] == [adopted]
        assert ("Skipped" in [reason for reason, _ in cluster.events("long")])
    else:
        assert all_jobs(cluster) == sorted([adopted, job_of("long", DUE)])
        assert [(run["name"], run["run"]) for run in status["active"]] == [(adopted, 1), (job_of("long", DUE), 2)]
    assert "AdoptionUnfinished" not in [reason for reason, _ in cluster.events("long")]
