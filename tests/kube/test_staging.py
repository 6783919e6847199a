"""Staged launches (off by default; ``CRONCTL_STAGING=on``) on the real API server: a scheduled
firing's Job exists, suspended and labelled ``cronctl.dev/staged``, during the minute before its
time, and is released (``spec.suspend: false``) at it; an edit before the minute replaces it; Forbid keeps it
unreleased while the previous run is active; an operator killed between staging and
release releases it on time after its restart, once. The operator's clock is a file the
tests move (bounded waits on what the API shows, never a sleep for wall-clock minutes).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from .helpers import Cluster, Operator, job_of, kubectl, ready, schedule_manifest, wait_for

STAGED = "cronctl.dev/staged"
STAGING_ON = {"CRONCTL_STAGING": "on"}


@pytest.fixture
def operator_env() -> dict[str, str]:
    return STAGING_ON


def job(cluster: Cluster, schedule: str, when: str) -> Any:
    return next((j for j in cluster.jobs(schedule) if j.metadata.name == job_of(schedule, when)), None)


def is_staged(cluster: Cluster, schedule: str, when: str) -> bool:
    found = job(cluster, schedule, when)
    return (found is not None and found.spec.suspend is True and (found.metadata.labels or {}).get(STAGED) == "true"
            and "cronctl.dev/run" not in (found.metadata.labels or {}))


def is_released(cluster: Cluster, schedule: str, when: str, run: int) -> bool:
    found = job(cluster, schedule, when)
    return (found is not None and found.spec.suspend is False and STAGED not in (found.metadata.labels or {})
            and (found.metadata.labels or {}).get("cronctl.dev/run") == str(run))


def launched_events(cluster: Cluster, schedule: str) -> list[str]:
    return [message for reason, message in cluster.events(schedule) if reason == "Launched"]


def test_an_every_minute_schedules_next_job_exists_suspended_before_its_minute_and_is_released_at_it(
        operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("minutely", "* * * * *"))
    wait_for("seen", ready(cluster, "minutely"))
    wait_for("00:01 staged during 00:00", lambda: is_staged(cluster, "minutely", "2024-03-01T00:01"))
    status = cluster.status("minutely")
    assert status.get("launched", 0) == 0 and status.get("active", []) == []  # a staged Job is no run
    # What the README says users see: a suspended Job for the next minute, and no Pods. (STATUS says
    # Suspended once the job controller, which this control plane does not run, sets its condition.)
    shown = kubectl(cluster.cp, "get", "jobs", "-n", cluster.namespace, "-l", "cronctl.dev/staged=true",
                    "-o", "custom-columns=NAME:.metadata.name,SUSPEND:.spec.suspend,NOMINAL:.metadata.annotations."
                    "cronctl\\.dev/scheduled-time", "--no-headers").stdout
    assert shown.split() == [job_of("minutely", "2024-03-01T00:01"), "true", "2024-03-01T00:01:00Z"], shown
    operator.set_clock("2024-03-01T00:00:59")
    time.sleep(1)  # the loop polls the clock file every 0.2 s: a release would show by now
    assert is_staged(cluster, "minutely", "2024-03-01T00:01")

    operator.set_clock("2024-03-01T00:01:00")
    wait_for("released at its minute", lambda: is_released(cluster, "minutely", "2024-03-01T00:01", 1))
    status = wait_for("the launch recorded after the release",
                      lambda: (s := cluster.status("minutely")).get("launched") == 1 and s)
    assert [a["name"] for a in status["active"]] == [job_of("minutely", "2024-03-01T00:01")]
    wait_for("00:02 staged", lambda: is_staged(cluster, "minutely", "2024-03-01T00:02"))
    wait_for("one Launched event", lambda: len(launched_events(cluster, "minutely")) == 1)

    operator.set_clock("2024-03-01T00:02:00")
    wait_for("the next released", lambda: is_released(cluster, "minutely", "2024-03-01T00:02", 2))
    wait_for("and the one after staged", lambda: cluster.job_names("minutely") == [
        job_of("minutely", f"2024-03-01T00:0{m}") for m in (1, 2, 3)])


def test_a_schedule_edited_before_its_minute_gets_its_staged_job_replaced(operator: Operator,
                                                                          cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("edited", "0 * * * *"))
    wait_for("seen", ready(cluster, "edited"))
    operator.set_clock("2024-03-01T00:59")
    wait_for("01:00 staged", lambda: is_staged(cluster, "edited", "2024-03-01T01:00"))
    first = job(cluster, "edited", "2024-03-01T01:00").metadata.uid
    body = cluster.schedule("edited")
    body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] = "alpine"
    cluster.custom.replace_namespaced_custom_object("cronctl.dev", "v1", cluster.namespace, "cronschedules",
                                                    "edited", body)

    def restaged() -> bool:
        found = job(cluster, "edited", "2024-03-01T01:00")
        return (found is not None and found.metadata.uid != first and is_staged(cluster, "edited", "2024-03-01T01:00")
                and found.spec.template.spec.containers[0].image == "alpine")

    wait_for("staged again with the new template", restaged)
    operator.set_clock("2024-03-01T01:00")
    wait_for("the new one released", lambda: is_released(cluster, "edited", "2024-03-01T01:00", 1))
    assert job(cluster, "edited", "2024-03-01T01:00").spec.template.spec.containers[0].image == "alpine"

    cluster.apply(schedule_manifest("edited", "30 1 * * *"))  # a different time: 02:00 will not be staged
    operator.set_clock("2024-03-01T01:29")
    wait_for("01:30 staged", lambda: is_staged(cluster, "edited", "2024-03-01T01:30"))
    assert job(cluster, "edited", "2024-03-01T02:00") is None


def test_forbid_with_an_active_run_keeps_the_staged_job_unreleased_then_releases_it_late(
        operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("excl", "*/10 * * * *", "Forbid"))
    wait_for("seen", ready(cluster, "excl"))
    operator.set_clock("2024-03-01T00:09")
    wait_for("00:10 staged", lambda: is_staged(cluster, "excl", "2024-03-01T00:10"))
    operator.set_clock("2024-03-01T00:10")
    wait_for("run 1 released", lambda: is_released(cluster, "excl", "2024-03-01T00:10", 1))
    operator.set_clock("2024-03-01T00:19")
    wait_for("00:20 staged", lambda: is_staged(cluster, "excl", "2024-03-01T00:20"))
    operator.set_clock("2024-03-01T00:20")
    wait_for("00:20 skipped", lambda: cluster.status("excl").get("skipped") == 1)
    time.sleep(1)
    assert is_staged(cluster, "excl", "2024-03-01T00:20")  # kept, unreleased: the time is still missed
    assert cluster.status("excl")["launched"] == 1

    cluster.finish_job(job_of("excl", "2024-03-01T00:10"), "Complete", "2024-03-01T00:25")
    operator.set_clock("2024-03-01T00:25")
    wait_for("released late", lambda: is_released(cluster, "excl", "2024-03-01T00:20", 2))
    released = job(cluster, "excl", "2024-03-01T00:20")
    assert released.metadata.annotations["cronctl.dev/reason"] == "catch-up"
    assert released.spec.template.metadata.annotations["cronctl.dev/reason"] == "catch-up"  # what its Pods read
    status = wait_for("recorded", lambda: (s := cluster.status("excl")).get("launched") == 2 and s)
    assert [(a["name"], a["reason"], a["startedTime"]) for a in status["active"]] == [
        (job_of("excl", "2024-03-01T00:20"), "catch-up", "2024-03-01T00:25:00Z")]


def test_an_operator_killed_between_staging_and_release_releases_it_on_time_after_restart_once(
        operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("steadfast", "0 * * * *"))
    wait_for("seen", ready(cluster, "steadfast"))
    operator.set_clock("2024-03-01T00:59")
    wait_for("01:00 staged", lambda: is_staged(cluster, "steadfast", "2024-03-01T01:00"))
    operator.kill()
    operator.start()  # it finds the staged Job by its name
    time.sleep(2)
    assert is_staged(cluster, "steadfast", "2024-03-01T01:00") and cluster.status("steadfast").get("launched", 0) == 0
    operator.set_clock("2024-03-01T01:00")
    wait_for("released on time", lambda: is_released(cluster, "steadfast", "2024-03-01T01:00", 1))
    wait_for("recorded", lambda: cluster.status("steadfast").get("launched") == 1)
    # Its Event goes out after the status write: a kill before that loses it (Events are news,
    # not the record), so the kill waits for it.
    wait_for("one Launched event", lambda: len(launched_events(cluster, "steadfast")) == 1)
    generation = job(cluster, "steadfast", "2024-03-01T01:00").metadata.generation
    operator.kill()
    operator.start()
    time.sleep(2)  # a restart re-reads everything: it must release nothing again
    assert job(cluster, "steadfast", "2024-03-01T01:00").metadata.generation == generation
    assert cluster.job_names("steadfast") == [job_of("steadfast", "2024-03-01T01:00")]
    assert cluster.status("steadfast")["launched"] == 1
    assert len(launched_events(cluster, "steadfast")) == 1  # and none again


def test_an_operator_down_through_the_minute_releases_the_staged_job_when_it_comes_back(
        operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("late", "0 * * * *"))
    wait_for("seen", ready(cluster, "late"))
    operator.set_clock("2024-03-01T00:59")
    wait_for("01:00 staged", lambda: is_staged(cluster, "late", "2024-03-01T01:00"))
    operator.kill()
    operator.set_clock("2024-03-01T01:00:30")
    operator.start()
    wait_for("released once back", lambda: is_released(cluster, "late", "2024-03-01T01:00", 1))
    assert cluster.job_names("late") == [job_of("late", "2024-03-01T01:00")]


def test_by_default_the_job_is_created_at_its_minute_and_nothing_is_staged(control_plane: Any, namespace: str,
                                                                           tmp_path: Path, cluster: Cluster) -> None:
    op = Operator(control_plane, namespace, tmp_path)
    op.set_clock("2024-03-01T00:00")
    try:
        op.start()
        cluster.apply(schedule_manifest("plain", "0 * * * *"))
        wait_for("seen", ready(cluster, "plain"))
        op.set_clock("2024-03-01T00:59")
        time.sleep(1.5)
        assert cluster.job_names("plain") == []
        op.set_clock("2024-03-01T01:00")
        created = wait_for("created at its minute", lambda: job(cluster, "plain", "2024-03-01T01:00"))
        assert not created.spec.suspend and STAGED not in (created.metadata.labels or {})
        assert "staged launches off" in op.log()
    finally:
        op.stop()


def test_the_charts_staging_value_turns_staging_on_in_the_operators_environment(helm: Path) -> None:
    from ..charts.operator_chart import render, template

    def env(values: dict[str, Any]) -> dict[str, Any]:
        [deployment] = [doc for doc in render(helm, values) if doc["kind"] == "Deployment"]
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        return {item["name"]: item.get("value") for item in container["env"]}

    assert "CRONCTL_STAGING" not in env({})  # off: the operator's default
    assert "CRONCTL_STAGING" not in env({"staging": False})
    assert env({"staging": True})["CRONCTL_STAGING"] == "on"
    refused = template(helm, {"staging": "on"}, check=False)
    assert refused.returncode != 0 and "staging" in refused.stderr
