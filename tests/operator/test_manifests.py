"""CronJob's Job contract in the Jobs the operator makes: the scheduled-timestamp annotation.

Every Job carries ``batch.kubernetes.io/cronjob-scheduled-timestamp`` as the
CronJob controller writes it (``getJobFromTemplate2``: the scheduled time
``.In(timeZone).Format(time.RFC3339)``): the run's nominal time in the
schedule's zone, ``Z`` for a zero offset. Scheduled, catch-up, manual,
backfill and retry Jobs alike; a staged Job from its staging on, unchanged by
its release, and a staged Job that lacks it is not released.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import orjson
import pytest

from cronctl.core.times import parse_time
from cronctl.core.zones import FixedOffset, IanaZone
from cronctl.operator.manifests import (SCHEDULED_TIMESTAMP_ANNOTATION, JobLaunch, job_manifest, release_patch,
                                        scheduled_timestamp)
from cronctl.operator.resource import STAGED_DIGEST_ANNOTATION, TRIGGER_ANNOTATION

from .world import TEMPLATE, World


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-07-01T00:00")


def stamp(job: dict[str, Any]) -> str:
    return job["metadata"]["annotations"][SCHEDULED_TIMESTAMP_ANNOTATION]


# (what, UTC minute, zone, what CronJob writes)
STAMPS = [
    ("no zone is UTC, written Z", t("2024-07-01T09:00"), FixedOffset(0), "2024-07-01T09:00:00Z"),
    ("Berlin in summer", t("2024-07-01T07:00"), IanaZone("Europe/Berlin"), "2024-07-01T09:00:00+02:00"),
    ("Berlin in winter", t("2024-01-15T08:00"), IanaZone("Europe/Berlin"), "2024-01-15T09:00:00+01:00"),
    ("London in winter is a zero offset: Z, as Go writes it", t("2024-01-15T09:00"), IanaZone("Europe/London"),
     "2024-01-15T09:00:00Z"),
    ("a fixed offset", t("2024-07-01T03:30"), FixedOffset(330), "2024-07-01T09:00:00+05:30"),
    ("west of UTC, the day before", t("2024-07-01T02:00"), IanaZone("America/New_York"),
     "2024-06-30T22:00:00-04:00"),
    ("Etc/GMT+5 is five hours behind", t("2024-07-01T14:00"), IanaZone("Etc/GMT+5"), "2024-07-01T09:00:00-05:00"),
]


@pytest.mark.parametrize("what, minute, zone, written", STAMPS, ids=[row[0] for row in STAMPS])
def test_the_scheduled_timestamp_is_rfc3339_in_the_schedules_zone(what: str, minute: int, zone: Any,
                                                                   written: str) -> None:
    assert scheduled_timestamp(minute, zone) == written


def seen(**spec: Any) -> World:
    world = World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                   "metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "generation": 1},
                   "spec": {"schedule": "0 9 * * *", "jobTemplate": copy.deepcopy(TEMPLATE), **spec}})
    world.reconcile(CREATED)
    return world


def test_a_scheduled_job_carries_its_nominal_time_in_the_schedules_zone() -> None:
    world = seen(timeZone="Europe/Berlin")
    [job] = world.reconcile(t("2024-07-01T07:00")).create
    assert stamp(job) == "2024-07-01T09:00:00+02:00"


def test_a_catch_up_job_carries_the_time_it_catches_up_not_the_launch_minute() -> None:
    world = seen()
    [job] = world.reconcile(t("2024-07-01T09:25")).create
    assert stamp(job) == "2024-07-01T09:00:00Z"
    assert job["metadata"]["annotations"]["cronctl.dev/started-time"] == "2024-07-01T09:25:00Z"


def test_a_manual_job_carries_the_minute_it_was_asked_at() -> None:
    world = seen(timeZone="+05:30")
    world.annotate(TRIGGER_ANNOTATION, "now")
    [job] = world.reconcile(t("2024-07-01T01:17")).create
    assert job["metadata"]["name"].endswith("-manual")
    assert stamp(job) == "2024-07-01T06:47:00+05:30"


def test_a_backfill_job_carries_the_time_it_fills_in() -> None:
    world = seen()
    world.annotate("cronctl.dev/backfill", "2024-06-29T09:00:00Z/2024-06-29T09:00:00Z")
    [job] = world.reconcile(t("2024-07-01T00:05")).create
    assert job["metadata"]["name"].endswith("-backfill")
    assert stamp(job) == "2024-06-29T09:00:00Z"


def test_a_retrys_attempt_carries_the_runs_nominal_time() -> None:
    world = seen(maxRetries=1, timeZone="America/New_York")
    [first] = world.reconcile(t("2024-07-01T13:00")).create
    world.finish(first["metadata"]["name"], "Failed", t("2024-07-01T13:04"))
    [second] = world.reconcile(t("2024-07-01T13:04")).create
    assert second["metadata"]["name"].endswith("-2")
    assert stamp(first) == stamp(second) == "2024-07-01T09:00:00-04:00"


def test_a_template_annotation_of_the_same_name_gives_way_as_in_cronjob() -> None:
    template = copy.deepcopy(TEMPLATE)
    template["metadata"] = {"annotations": {SCHEDULED_TIMESTAMP_ANNOTATION: "yesterday"}}
    body = {"metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1"}, "spec": {}}
    job = job_manifest(body, template, JobLaunch(1, t("2024-07-01T09:00"), t("2024-07-01T09:00")))
    assert stamp(job) == "2024-07-01T09:00:00Z"


def test_a_staged_job_carries_it_from_its_staging_and_its_release_leaves_it() -> None:
    world = seen(schedule="*/10 * * * *", timeZone="Asia/Kolkata")
    world.staging = True
    world.reconcile(t("2024-07-01T00:09"))
    [name] = [n for n, job in world.jobs.items() if job["metadata"]["labels"].get("cronctl.dev/staged")]
    assert stamp(world.jobs[name]) == "2024-07-01T05:40:00+05:30"
    released = world.reconcile(t("2024-07-01T00:10"))
    assert [e.name for e in released.releases] == [name]
    assert "annotations" not in release_patch(1)["metadata"]
    assert stamp(world.jobs[name]) == "2024-07-01T05:40:00+05:30"


def test_a_job_staged_without_the_timestamp_is_not_current_and_is_made_afresh() -> None:
    """An operator before this one staged Jobs without it, their digest of the Job's spec, its
    template's metadata and its start only: that digest says another Job now, so the plan
    deletes it rather than release a Job without the annotation."""
    world = seen(schedule="*/10 * * * *")
    world.staging = True
    world.reconcile(t("2024-07-01T00:09"))
    [name] = [n for n, job in world.jobs.items() if job["metadata"]["labels"].get("cronctl.dev/staged")]
    job = world.jobs[name]
    del job["metadata"]["annotations"][SCHEDULED_TIMESTAMP_ANNOTATION]
    old = orjson.dumps([job["spec"], {}, {}, t("2024-07-01T00:10") * 60],
                       option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    job["metadata"]["annotations"][STAGED_DIGEST_ANNOTATION] = hashlib.sha256(old).hexdigest()[:16]
    at_the_minute = world.reconcile(t("2024-07-01T00:10"))
    assert at_the_minute.release == [] and name in at_the_minute.deletes()
    assert [stamp(created) for created in at_the_minute.create] == ["2024-07-01T00:10:00Z"]
