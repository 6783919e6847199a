"""Job names (``manifests.job_name``): the lock of a run, and a valid job-name label value."""

from __future__ import annotations

import pytest

from cronctl.operator.manifests import job_name

LONGEST = "a" * 30 + "-" + "b" * 21  # 52 characters: the CRD's longest CronSchedule name
MINUTE = 28_487_400  # 2024-02-29T22:00


def test_a_short_schedule_names_its_jobs_by_the_nominal_minute() -> None:
    assert job_name("sync", MINUTE) == "sync-28487400"
    assert job_name("sync", MINUTE, 2) == "sync-28487400-2"
    assert job_name("sync", MINUTE, reason="manual") == "sync-28487400-manual"
    assert job_name("sync", MINUTE, reason="backfill") == "sync-28487400-backfill"


@pytest.mark.parametrize("reason", ["scheduled", "catch-up", "manual", "backfill"])
@pytest.mark.parametrize("attempt", [1, 2, 101])
def test_every_job_of_the_longest_schedule_name_fits_a_label_value(reason: str, attempt: int) -> None:
    name = job_name(LONGEST, MINUTE, attempt, reason)
    assert len(name) <= 63
    assert name == job_name(LONGEST, MINUTE, attempt, reason)  # deterministic: a restart finds it


def test_a_cut_name_keeps_the_schedules_start_and_a_digest_of_the_whole() -> None:
    name = job_name(LONGEST, MINUTE, reason="backfill")
    assert name.startswith("a" * 30 + "-") and name.endswith(f"-{MINUTE}-backfill")
    assert job_name(LONGEST[:-1] + "c", MINUTE, reason="backfill") != name  # another schedule, another name


def test_later_attempts_append_to_the_runs_name() -> None:
    assert job_name(LONGEST, MINUTE, 7, "manual") == job_name(LONGEST, MINUTE, 1, "manual") + "-7"
