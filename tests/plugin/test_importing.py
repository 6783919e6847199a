"""The rules of kubectl cronctl import: where a CronSchedule's times start after, and how a
CronJob's active Job becomes the schedule's run."""

from __future__ import annotations

from typing import Any

import pytest

from cronctl.convert import ConvertError
from cronctl.plugin.importing import adoption, anchor_of, is_active, owned_jobs, schedule_of

UID = "cj-uid"


def cronjob(last: str | None = None, created: str = "2026-12-01T08:00:13Z", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "nightly", "namespace": "team-a", "uid": UID, "creationTimestamp": created},
            "spec": {"schedule": "*/5 * * * *", **spec, "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "m", "image": "x"}]}}}}},
            "status": {} if last is None else {"lastScheduleTime": last}}


def job(minutes: int, owner: str = UID, annotated: bool = True, done: bool = False) -> dict[str, Any]:
    annotations = {"batch.kubernetes.io/cronjob-scheduled-timestamp": "2026-12-06T10:05:00Z"} if annotated else {}
    return {"metadata": {"name": f"nightly-{minutes}", "annotations": annotations,
                         "creationTimestamp": "2026-12-06T10:05:01Z",
                         "ownerReferences": [{"kind": "CronJob", "uid": owner, "controller": True}]},
            "status": {"conditions": [{"type": "Complete", "status": "True"}]} if done else {}}


TEN_FIVE = 29_942_525  # 2026-12-06T10:05 in minutes since 1970


def test_the_times_start_after_the_last_one_the_cronjob_fired() -> None:
    assert anchor_of(cronjob("2026-12-06T10:00:00Z"), []) == "2026-12-06T10:00:00Z"


def test_a_job_made_just_before_the_suspension_counts_before_the_status_says_it() -> None:
    assert anchor_of(cronjob("2026-12-06T10:00:00Z"), [job(TEN_FIVE)]) == "2026-12-06T10:05:00Z"


def test_a_jobs_name_tells_its_minute_where_it_has_no_annotation() -> None:
    assert anchor_of(cronjob(None), [job(TEN_FIVE, annotated=False)]) == "2026-12-06T10:05:00Z"


def test_another_owners_job_says_nothing() -> None:
    assert anchor_of(cronjob("2026-12-06T10:00:00Z"), [job(TEN_FIVE, owner="other")]) == "2026-12-06T10:00:00Z"
    assert owned_jobs(cronjob(), [job(TEN_FIVE, owner="other")]) == []


def test_a_cronjob_that_never_fired_gives_the_times_after_its_creation() -> None:
    assert anchor_of(cronjob(None), []) == "2026-12-01T08:00:00Z"


def test_the_schedule_carries_the_anchor_and_where_it_came_from() -> None:
    body = schedule_of(cronjob("2026-12-06T10:00:00Z"), "2026-12-06T10:00:00Z")
    assert body["kind"] == "CronSchedule" and body["metadata"]["name"] == "nightly"
    assert body["metadata"]["annotations"]["cronctl.dev/anchor"] == "2026-12-06T10:00:00Z"
    assert body["metadata"]["labels"]["cronctl.dev/imported-from"] == "cronjob"


def test_what_cannot_be_mapped_is_refused_before_anything_changes() -> None:
    with pytest.raises(ConvertError):
        schedule_of(cronjob(schedule="@every 30s"), "2026-12-06T10:00:00Z")


def test_an_active_job_becomes_a_run_of_the_schedule() -> None:
    schedule = {"metadata": {"name": "nightly", "uid": "cs-uid"}}
    patch = adoption(job(TEN_FIVE), schedule, 1)
    assert patch == {"metadata": {
        "ownerReferences": [{"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "name": "nightly",
                             "uid": "cs-uid", "controller": True, "blockOwnerDeletion": True}],
        "labels": {"cronctl.dev/schedule": "nightly", "cronctl.dev/run": "1"},
        "annotations": {"cronctl.dev/scheduled-time": "2026-12-06T10:05:00Z",
                        "cronctl.dev/started-time": "2026-12-06T10:05:00Z", "cronctl.dev/reason": "scheduled"}}}


def test_a_finished_job_is_not_active() -> None:
    assert is_active(job(TEN_FIVE)) and not is_active(job(TEN_FIVE, done=True))


class Recorder:
    """An Importer's requests, in order, against a CronJob with ``jobs`` (no server)."""

    def __init__(self, jobs: list[dict[str, Any]], existing: dict[str, Any] | None = None) -> None:
        from cronctl.plugin.importing import Importer

        self.calls: list[tuple[Any, ...]] = []
        self.existing = existing
        importer = Importer.__new__(Importer)
        importer.namespace, importer.cluster = "team-a", self  # type: ignore[assignment]
        importer._get = lambda name: cronjob("2026-12-06T10:05:00Z")  # type: ignore[method-assign]
        importer._jobs = lambda: jobs  # type: ignore[method-assign]
        importer._patch_cronjob = lambda name, body: self.calls.append(("suspend", name))  # type: ignore
        importer._patch_job = lambda name, body: self.calls.append(("adopt", name))  # type: ignore
        importer._create_schedule = self.create  # type: ignore[method-assign]
        self.importer = importer

    def create(self, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        self.calls.append(("create", body["metadata"]["annotations"].get("cronctl.dev/adopting")))
        made = self.existing or {**body, "metadata": {**body["metadata"], "uid": "cs-uid"}}
        return made, self.existing is None

    def patch(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("patch", name, body))
        return {}

    def run(self) -> list[tuple[Any, ...]]:
        self.importer._import(cronjob("2026-12-06T10:05:00Z"), {"spec": {}})
        return [(call[0], "<a time>" if call[0] == "create" and call[1] else call[1], *call[2:]) for call in self.calls]


DONE_MARK = ("patch", "nightly", {"metadata": {"annotations": {"cronctl.dev/adopting": None}}})


def test_the_schedule_is_marked_adopting_until_its_active_jobs_are_its_own() -> None:
    """Created marked, the Jobs adopted, then the mark removed: the operator decides nothing for the
    schedule in between (``operator.adopting``), when it would see no run under way."""
    assert Recorder([job(100), job(105), job(95, done=True)]).run() == [
        ("suspend", "nightly"), ("create", "<a time>"), ("adopt", "nightly-100"), ("adopt", "nightly-105"), DONE_MARK]


def test_a_schedule_without_active_jobs_to_adopt_is_not_marked() -> None:
    assert Recorder([job(95, done=True)]).run() == [("suspend", "nightly"), ("create", None)]


def test_an_import_run_again_removes_the_mark_a_stopped_one_left() -> None:
    existing = {"metadata": {"name": "nightly", "uid": "cs-uid", "annotations": {
        "cronctl.dev/adopting": "2026-12-06T10:05:40Z"}}}
    assert Recorder([job(100)], existing).run() == [
        ("suspend", "nightly"), ("create", "<a time>"), ("adopt", "nightly-100"), DONE_MARK]


def test_an_importer_of_another_namespace_asks_for_its_cronschedules_there() -> None:
    """-A: the CronSchedule's requests (the adopting mark's removal, undo) go to the CronJob's namespace."""
    from kubernetes import client

    from cronctl.plugin.cluster import NamespaceClient
    from cronctl.plugin.importing import Importer

    cluster = NamespaceClient(client.ApiClient(client.Configuration()), "default", "https://cluster.example")
    assert Importer(cluster, "team-b").cluster.namespace == "team-b"
    assert Importer(cluster).cluster is cluster
