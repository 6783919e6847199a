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
