"""cronctl.manifest: one reader of CronSchedules for every driver, with the CRD's own rules."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from cronctl.core.times import parse_time
from cronctl.manifest import SpecError, crd, read_manifest, read_spec, schema_problems

ROOT = Path(__file__).resolve().parent.parent
GOOD: dict[str, Any] = {
    "apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": "nightly"},
    "spec": {"schedule": "30 2 * * *", "timeZone": "Europe/Berlin",
             "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "x"}]}}}}},
}


def with_spec(**fields: Any) -> dict[str, Any]:
    body = copy.deepcopy(GOOD)
    body["spec"].update(fields)
    return body


def test_the_reader_judges_by_the_crd_the_repository_ships() -> None:
    assert crd() == yaml.safe_load((ROOT / "crds" / "cronschedule.yaml").read_text())


def test_a_good_manifest_reads_into_the_cores_spec() -> None:
    spec = read_manifest(GOOD, anchor=0)
    assert (spec.job.name, spec.job.expression, spec.job.options.tz.name) == ("nightly", "30 2 * * *",
                                                                            "Europe/Berlin")


@pytest.mark.parametrize("fields, field", [
    ({"timeoutMinutes": "ten"}, "spec.timeoutMinutes"),
    ({"suspend": "yes"}, "spec.suspend"),
    ({"schedul": "* * * * *"}, "spec.schedul"),
    ({"schedule": "0 9 * * 8"}, "spec.schedule"),  # the core's check: day-of-week 8
    ({"timeZone": "Mars/Olympus"}, "spec.timeZone"),  # the core's check: no such zone
    ({"upcomingTimes": 0}, "spec.upcomingTimes"),
    ({"upcomingTimes": 21}, "spec.upcomingTimes"),
    ({"suspendReason": 7}, "spec.suspendReason"),
    ({"suspendReason": "x" * 257}, "spec.suspendReason"),
    ({"schedules": ["0 9 * * *"]}, "spec.schedule"),  # both schedule and schedules
    ({"daylightSaving": "Wall"}, "spec.daylightSaving"),
    ({"exclude": ["2026-12-25", "2026-02-30"]}, "spec.exclude[1]"),  # the core's check: no such date
    ({"startTime": "2027-01-04 09:00"}, "spec.startTime"),  # no offset: which zone would it be in?
    ({"endTime": "yesterday"}, "spec.endTime"),
    ({"startTime": "2027-01-04T09:00:00Z", "endTime": "2027-01-04T09:00:00Z"}, "spec.endTime"),
    ({"maxRuns": 0}, "spec.maxRuns"),
    ({"exclude": ["2026-12-25"] * 1001}, "spec.exclude"),
])
def test_a_bad_manifest_is_refused_naming_the_field(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(SpecError) as refused:
        read_manifest(with_spec(**fields), anchor=0)
    assert refused.value.field == field
    assert str(refused.value).startswith(field + ": ")


def test_upcoming_times_default_to_five_and_may_be_one_to_twenty() -> None:
    assert read_manifest(GOOD, anchor=0).upcoming == 5
    assert read_manifest(with_spec(upcomingTimes=20), anchor=0).upcoming == 20


def test_null_is_no_value_and_two_point_zero_is_two_as_the_api_server_stores_them() -> None:
    spec = read_manifest(with_spec(timeoutMinutes=2.0, startingDeadlineSeconds=None), anchor=0)
    assert spec.job.options.timeout == 2 and isinstance(spec.job.options.timeout, int)
    assert spec.job.options.starting_deadline is None


def test_every_problem_is_listed_first_field_first() -> None:
    problems = schema_problems(with_spec(timeoutMinutes=-1, concurrencyPolicy="Often", extra=1))
    assert [p.field for p in problems] == ["spec.concurrencyPolicy", "spec.extra", "spec.timeoutMinutes"]


def without_schedule(**fields: Any) -> dict[str, Any]:
    body = with_spec(**fields)
    del body["spec"]["schedule"]
    return body


def test_schedules_exclude_and_daylight_saving_read_into_the_cores_options() -> None:
    spec = read_manifest(without_schedule(schedules=["0 9 * * MON-FRI", "30 12 * * MON-FRI"],
                                          exclude=["2026-12-24/2026-12-26", "* * 1 1 *"],
                                          daylightSaving="Skip"), anchor=0)
    options = spec.job.options
    assert (spec.job.expression, options.more_schedules, options.exclude, options.daylight_saving.value) == \
        ("0 9 * * MON-FRI", ("30 12 * * MON-FRI",), ("2026-12-24/2026-12-26", "* * 1 1 *"), "Skip")


@pytest.mark.parametrize("fields, field", [
    ({}, "spec.schedule"),  # neither schedule nor schedules
    ({"schedules": []}, "spec.schedules"),
    ({"schedules": ["0 9 * * *"] * 21}, "spec.schedules"),
    ({"schedules": ["0 9 * * *", "0 9 * * 8"]}, "spec.schedules[1]"),  # the core's check
    ({"schedules": ["0 9 * * *", "@every 90m"], "timeZone": "Europe/Berlin"}, "spec.timeZone"),
    ({"schedules": ["0 9 * * *", "every(1).day.at(10:00).jitter(30)"]}, "spec.schedules[1]"),
])
def test_a_bad_list_of_schedules_is_refused_naming_the_entry(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(SpecError) as refused:
        read_manifest(without_schedule(**fields), anchor=0)
    assert refused.value.field == field


def test_daylight_saving_defaults_to_vixie() -> None:
    assert read_manifest(GOOD, anchor=0).job.options.daylight_saving.value == "Vixie"


def test_a_backfill_preview_reads_the_object_from_the_anchor_the_operator_recorded() -> None:
    from cronctl.manifest import backfill_preview

    body = without_schedule(schedules=["@every 90m"])
    body["spec"].pop("timeZone")
    body["status"] = {"anchorTime": "2024-03-01T00:00:00Z"}
    body["metadata"]["managedFields"] = [{"manager": "kubectl"}]  # what kubectl get -o yaml adds: left out
    # 2024-02-29T22:00 to 2024-03-01T01:00, minutes since 1970
    spec, times = backfill_preview(body, 28_487_400, 28_487_580, now=28_489_000, admitted=False)
    assert spec.created_at == 28_487_520  # 2024-03-01T00:00: the grid is carried back from it
    assert times == [28_487_430, 28_487_520]  # 2024-02-29T22:30 and 2024-03-01T00:00


def test_start_end_and_max_runs_read_into_the_cores_window_and_limit() -> None:
    options = read_manifest(with_spec(startTime="2027-01-04T09:00:30+01:00", endTime="2027-01-05T00:00:00Z",
                                      maxRuns=7), anchor=0).job.options
    assert (options.window.first, options.window.last) == (parse_time("2027-01-04T08:01"),
                                                           parse_time("2027-01-05T00:00"))
    assert options.max_runs == 7


def test_a_bad_window_says_what_an_instant_must_look_like() -> None:
    with pytest.raises(SpecError) as refused:
        read_manifest(with_spec(startTime="2027-01-04T09:00:00"), anchor=0)
    assert str(refused.value) == ('spec.startTime: "2027-01-04T09:00:00" must be an RFC 3339 time with its '
                                  'offset, such as 2027-01-04T09:00:00Z')


@pytest.mark.parametrize("field, value, reason, words", [
    ("concurrencyPolicy", ["Forbid"], "InvalidPolicy", "Allow, Forbid, Replace or WaitForLast"),
    ("catchUp", 3, "InvalidCatchUp", "Latest or All"),
    ("daylightSaving", "vixie", "InvalidDaylightSaving", "Vixie, Literal or Skip"),
])
def test_the_spec_reader_refuses_a_word_field_it_does_not_know_naming_the_field_and_the_words(
        field: str, value: Any, reason: str, words: str) -> None:
    """Called without the schema in front (the core's own reader), a list or a number where a
    word belongs is refused as any unknown word is, never a TypeError."""
    from cronctl.manifest import read_spec

    with pytest.raises(SpecError) as refused:
        read_spec({"metadata": {"name": "a"}, "spec": {"schedule": "* * * * *", field: value}}, 0)
    assert (refused.value.field, refused.value.reason) == (f"spec.{field}", reason)
    assert refused.value.message.endswith(f"must be {words}")


@pytest.mark.parametrize("body, field, reason", [
    ({**GOOD, "metadata": {"name": "n" * 53}}, "metadata.name", "InvalidName"),
    (with_spec(schedules=["0 9 * * *"]), "spec.schedule", "InvalidSchedule"),
    (with_spec(timeZone="Mars/Olympus"), "spec.timeZone", "UnknownTimeZone"),
    (with_spec(schedule="@every 5m"), "spec.timeZone", "InvalidTimeZone"),
    (with_spec(startTime="2027-01-04T09:00:00Z", endTime="2027-01-04T09:00:00Z"), "spec.endTime", "InvalidWindow"),
], ids=["53-characters", "both", "unknown-zone", "every-with-zone", "end-not-after-start"])
def test_what_the_policy_refuses_the_operators_reader_refuses_where_the_policy_is_not_installed(
        body: dict[str, Any], field: str, reason: str) -> None:
    """The operator reads what the API server admitted with read_spec alone: on a cluster without
    crds/cronschedule-policy.yaml such a schedule is admitted, and the reader's SpecError makes it
    Ready=False with the reason (and a Warning Event), so it never fires."""
    with pytest.raises(SpecError) as refused:
        read_spec(body, anchor=0)
    assert (refused.value.field, refused.value.reason) == (field, reason)
