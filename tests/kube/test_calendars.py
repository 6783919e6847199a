"""Several schedules, exclusions and a daylight-saving rule on the API server (issue 14).

The operator's clock starts at 2024-03-01T00:00 (a Friday); 2024-03-04 is a Monday.
"""

from __future__ import annotations

import pytest

from .helpers import Cluster, Operator, job_of, kubectl, ready, schedule_manifest, wait_for

pytestmark = pytest.mark.cluster


def without_schedule(name: str, **spec: object) -> str:
    import json

    body = json.loads(schedule_manifest(name, "-"))
    del body["spec"]["schedule"]
    body["spec"].update(spec)
    return json.dumps(body)


def refused(cluster: Cluster, manifest: str) -> str:
    result = kubectl(cluster.cp, "apply", "-n", cluster.namespace, "-f", "-", check=False, input=manifest)
    assert result.returncode != 0, result.stdout
    return result.stderr


def test_the_policy_takes_schedule_or_schedules_never_both_nor_neither(cluster: Cluster) -> None:
    """The CronSchedule's ValidatingAdmissionPolicy's rule (the CRD's own until issue 47)."""
    said = "spec.schedule: give schedule (one expression) or schedules (a list), exactly one of them"
    both = schedule_manifest("both", "0 9 * * *", schedules=["0 10 * * *"])
    assert said in refused(cluster, both) and "ValidatingAdmissionPolicy" in refused(cluster, both)
    assert said in refused(cluster, without_schedule("neither"))


@pytest.mark.parametrize("spec, field", [
    ({"schedules": []}, "spec.schedules"),
    ({"schedules": ["0 9 * * *"] * 21}, "spec.schedules"),
    ({"schedules": ["0 9 * * *"], "daylightSaving": "Wall"}, "spec.daylightSaving"),
    ({"schedules": ["0 9 * * *"], "exclude": ["2024-12-25"] * 1001}, "spec.exclude"),
    ({"schedules": ["0 9 * * *"], "exclude": [25]}, "spec.exclude[0]"),
])
def test_the_schema_refuses_bad_lists_and_rules_at_apply_time(cluster: Cluster, spec: dict[str, object],
                                                              field: str) -> None:
    assert field in refused(cluster, without_schedule("bad", **spec))


def test_a_bad_exclusion_the_schema_cannot_judge_is_a_ready_false_condition(operator: Operator,
                                                                             cluster: Cluster) -> None:
    cluster.apply(without_schedule("holiday", schedules=["0 9 * * *"], exclude=["2024-02-30"]))
    condition = wait_for("condition", lambda: next(iter(cluster.status("holiday").get("conditions", [])), None))
    assert (condition["status"], condition["reason"]) == ("False", "InvalidExclusion")
    assert condition["message"] == "spec.exclude[0]: '2024-02-30' is not a date of the calendar"


def test_merged_schedules_fire_at_each_time_once_and_never_on_an_excluded_day(operator: Operator,
                                                                              cluster: Cluster) -> None:
    cluster.apply(without_schedule("office", schedules=["0 9 * * MON-FRI", "30 12 * * MON-FRI", "0 9 * * MON"],
                                   exclude=["2024-03-04"]))
    wait_for("seen", ready(cluster, "office"))
    assert [entry["time"] for entry in cluster.status("office")["nextScheduleTimes"]] == [
        "2024-03-01T09:00:00Z", "2024-03-01T12:30:00Z", "2024-03-05T09:00:00Z", "2024-03-05T12:30:00Z",
        "2024-03-06T09:00:00Z"]
    operator.set_clock("2024-03-01T09:00")
    wait_for("09:00", lambda: cluster.job_names("office") == [job_of("office", "2024-03-01T09:00")])
    operator.set_clock("2024-03-01T12:30")
    wait_for("12:30", lambda: len(cluster.job_names("office")) == 2)
    operator.set_clock("2024-03-04T23:00")  # the weekend, then the excluded Monday: nothing missed
    wait_for("the next fire moved on", lambda: cluster.status("office")["nextFireTime"] == "2024-03-05T09:00:00Z")
    operator.set_clock("2024-03-05T09:00")
    wait_for("Tuesday", lambda: cluster.job_names("office") == [
        job_of("office", "2024-03-01T09:00"), job_of("office", "2024-03-01T12:30"),
        job_of("office", "2024-03-05T09:00")])
    assert cluster.status("office").get("missed") in (None, 0)


def test_literal_daylight_saving_skips_the_missing_time_where_vixie_runs_it(operator: Operator,
                                                                           cluster: Cluster) -> None:
    for name, rule in (("vixie", "Vixie"), ("literal", "Literal")):
        cluster.apply(schedule_manifest(name, "30 2 * * *", timeZone="Europe/Berlin", daylightSaving=rule,
                                        upcomingTimes=3))
        wait_for("seen", ready(cluster, name))
    operator.set_clock("2024-03-29T00:00")  # Berlin springs forward on 31 March: 02:30 does not exist
    wait_for("the first passed", lambda: all(cluster.status(name)["nextFireTime"] == "2024-03-29T01:30:00Z"
                                             for name in ("vixie", "literal")))
    assert [entry["localTime"] for entry in cluster.status("vixie")["nextScheduleTimes"]] == [
        "2024-03-29T02:30:00+01:00", "2024-03-30T02:30:00+01:00", "2024-03-31T03:00:00+02:00"]
    assert [entry["localTime"] for entry in cluster.status("literal")["nextScheduleTimes"]] == [
        "2024-03-29T02:30:00+01:00", "2024-03-30T02:30:00+01:00", "2024-04-01T02:30:00+02:00"]
