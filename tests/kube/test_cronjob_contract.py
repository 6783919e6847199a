"""CronJob's Job contract, on the API server (issue 43, Kubernetes' CronJob e2e tests restated).

- Every Job carries ``batch.kubernetes.io/cronjob-scheduled-timestamp``, its
  scheduled time in RFC 3339 in the schedule's zone, as CronJob writes it.
- A ``timeZone`` that names no zone is refused at create, 422, as the API
  server refuses a CronJob's (the CronJob beside it in the same test: no
  controller needed, the API server judges both).
- Under Replace the old run's Job is deleted before the new one is created,
  so a watch of the schedule's Jobs never sees two of them at once.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from kubernetes import watch
from kubernetes.client.rest import ApiException

from .helpers import GROUP, PLURAL, VERSION, Cluster, Operator, job_of, kubectl, minutes, ready, schedule_manifest, \
    wait_for

pytestmark = pytest.mark.cluster

STAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def stamp_of(cluster: Cluster, job: str) -> str | None:
    return (cluster.batch.read_namespaced_job(job, cluster.namespace).metadata.annotations or {}).get(STAMP)


def test_a_scheduled_job_and_a_manual_one_carry_cronjobs_scheduled_timestamp(operator: Operator,
                                                                              cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("stamped", "0 9 * * *", timeZone="Europe/Berlin"))
    wait_for("seen", ready(cluster, "stamped"))
    operator.set_clock("2024-03-01T08:00")  # 09:00 in Berlin, in winter (+01:00)
    scheduled = job_of("stamped", "2024-03-01T08:00")
    wait_for("the scheduled Job", lambda: scheduled in cluster.job_names("stamped"))
    assert stamp_of(cluster, scheduled) == "2024-03-01T09:00:00+01:00"
    operator.set_clock("2024-03-01T08:30")
    kubectl(cluster.cp, "annotate", "-n", cluster.namespace, "cronschedule/stamped", "cronctl.dev/trigger=now")
    manual = f"stamped-{minutes('2024-03-01T08:30')}-manual"
    wait_for("the manual Job", lambda: manual in cluster.job_names("stamped"))
    assert stamp_of(cluster, manual) == "2024-03-01T09:30:00+01:00"


def cronschedule(name: str, zone: str) -> dict[str, Any]:
    return json.loads(schedule_manifest(name, "0 9 * * *", timeZone=zone))


def cronjob(name: str, zone: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": "0 9 * * *", "timeZone": zone, "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}}}


def created(cluster: Cluster, body: dict[str, Any]) -> int:
    """The API server's status code for creating ``body`` (201, or the error's)."""
    try:
        if body["kind"] == "CronJob":
            cluster.batch.create_namespaced_cron_job(cluster.namespace, body)
        else:
            cluster.custom.create_namespaced_custom_object(GROUP, VERSION, cluster.namespace, PLURAL, body)
    except ApiException as error:
        return int(error.status)
    return 201


def test_a_time_zone_that_names_no_zone_is_refused_at_create_as_a_cronjobs_is(cluster: Cluster) -> None:
    assert created(cluster, cronjob("cj-bad", "bad-time-zone")) == 422  # what the CronJob gets
    assert created(cluster, cronschedule("cs-bad", "bad-time-zone")) == 422
    result = kubectl(cluster.cp, "apply", "-n", cluster.namespace, "-f", "-", check=False,
                     input=json.dumps(cronschedule("cs-bad", "bad-time-zone")))
    assert result.returncode != 0
    assert "spec.timeZone" in result.stderr and "unknown time zone 'bad-time-zone'" in result.stderr, result.stderr
    assert len(result.stderr) < 1000, "the refusal names the value, not the list of zones"
    for index, zone in enumerate(["Europe/Berlin", "UTC", "Etc/GMT+5", "America/Argentina/Buenos_Aires", "+05:30",
                                  "-14:00"]):
        assert created(cluster, cronschedule(f"cs-good-{index}", zone)) == 201, zone
    for index, zone in enumerate(["Factory", "posix/Europe/Berlin", "+14:15", "+5:30", "europe/berlin"]):
        assert created(cluster, cronschedule(f"cs-refused-{index}", zone)) == 422, zone


class JobsAtOnce:
    """Watches a schedule's Jobs from a thread, from a resourceVersion on, so no event is missed:
    the most that existed undeleted at once (a Job with a deletionTimestamp counts as deleted)."""

    def __init__(self, cluster: Cluster, schedule: str) -> None:
        self.cluster, self.schedule = cluster, schedule
        listed = cluster.batch.list_namespaced_job(cluster.namespace, label_selector=self.selector)
        self.alive = {job.metadata.name for job in listed.items if job.metadata.deletion_timestamp is None}
        self.most, self.seen = len(self.alive), list(self.alive)
        self.error: Exception | None = None
        self._stopping = False
        self._watch = watch.Watch()
        self._thread = threading.Thread(target=self._run, args=(listed.metadata.resource_version,), daemon=True)
        self._thread.start()

    @property
    def selector(self) -> str:
        return f"cronctl.dev/schedule={self.schedule}"

    def _run(self, resource_version: str) -> None:
        try:
            for event in self._watch.stream(self.cluster.batch.list_namespaced_job, self.cluster.namespace,
                                            label_selector=self.selector, resource_version=resource_version,
                                            timeout_seconds=300):
                job = event["object"]
                if event["type"] == "DELETED" or job.metadata.deletion_timestamp is not None:
                    self.alive.discard(job.metadata.name)
                else:
                    self.alive.add(job.metadata.name)
                    if job.metadata.name not in self.seen:
                        self.seen.append(job.metadata.name)
                self.most = max(self.most, len(self.alive))
        except Exception as error:  # the watch broken under the test would leave it blind: it fails
            if not self._stopping:
                self.error = error

    def stop(self) -> None:
        """Events come in order: once the last Job was seen, the deletes before it were too."""
        self._stopping = True
        self._watch.stop()


def test_replace_deletes_the_old_job_before_it_creates_the_new_one(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("rep", "*/10 * * * *", "Replace"))
    wait_for("seen", ready(cluster, "rep"))
    jobs = JobsAtOnce(cluster, "rep")
    try:
        for minute in ("2024-03-01T00:10", "2024-03-01T00:20", "2024-03-01T00:30"):
            operator.set_clock(minute)
            wait_for(f"{minute}'s Job", lambda: cluster.job_names("rep") == [job_of("rep", minute)])
            wait_for("the watch saw it", lambda: job_of("rep", minute) in jobs.seen)
    finally:
        jobs.stop()
    assert jobs.error is None, jobs.error
    assert jobs.seen == [job_of("rep", m) for m in ("2024-03-01T00:10", "2024-03-01T00:20", "2024-03-01T00:30")]
    assert jobs.most == 1, "two of the schedule's Jobs existed at once"
    status = wait_for("recorded", lambda: (s := cluster.status("rep")).get("launched") == 3 and s)
    assert [run["name"] for run in status["active"]] == [job_of("rep", "2024-03-01T00:30")]
    assert status.get("history", []) == []  # the replaced runs are neither failed nor kept
    # The Events are posted after the status write that records the launch: wait for them (a
    # loaded machine read ['Launched', 'Replaced', 'Launched'] in between).
    events = wait_for("both Replaced Events", lambda: (reasons := [reason for reason, _ in cluster.events("rep")])
                      .count("Replaced") >= 2 and reasons)
    assert events.count("Replaced") == 2 and "JobGone" not in events
