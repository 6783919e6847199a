"""Backfill on the API server (issue 14): the cronctl.dev/backfill annotation, answered once.

The operator's clock starts at 2024-03-01T00:00; the backfill asks for
2024-02-29T22:00 to 23:00 of an hourly schedule: two runs, one at a time.
"""

from __future__ import annotations

import pytest

from .helpers import ROOT, Cluster, Operator, kubectl, minutes, ready, schedule_manifest, wait_for

pytestmark = pytest.mark.cluster

RANGE = "2024-02-29T22:00:00Z/2024-02-29T23:00:00Z"


def backfill_job(name: str, when: str) -> str:
    return f"{name}-{minutes(when)}-backfill"


def annotate(cluster: Cluster, name: str, value: str) -> None:
    kubectl(cluster.cp, "annotate", "--overwrite", "cronschedule", name, "-n", cluster.namespace,
            f"cronctl.dev/backfill={value}")


def test_a_backfill_runs_each_time_of_the_range_one_at_a_time_and_reports_progress(
        operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("hourly", "0 * * * *", "Forbid"))
    wait_for("seen", ready(cluster, "hourly"))
    annotate(cluster, "hourly", RANGE)
    first = backfill_job("hourly", "2024-02-29T22:00")
    wait_for("the first backfill run", lambda: cluster.job_names("hourly") == [first])
    job = cluster.jobs("hourly")[0]
    assert job.metadata.labels["cronctl.dev/reason"] == "backfill"
    assert job.metadata.annotations["cronctl.dev/scheduled-time"] == "2024-02-29T22:00:00Z"
    # The status follows the create in the loop's second pass: wait for it, not just for the Job.
    progress = wait_for("the progress in the status", lambda: cluster.status("hourly").get("backfill"))
    assert (progress["state"], progress["launched"], progress["total"]) == ("Running", 1, 2)
    assert cluster.status("hourly").get("lastScheduleTime") is None

    cluster.finish_job(first, "Complete", "2024-03-01T00:01")
    operator.set_clock("2024-03-01T00:01")
    second = backfill_job("hourly", "2024-02-29T23:00")
    wait_for("the second, once the first ended", lambda: second in cluster.job_names("hourly"))
    cluster.finish_job(second, "Complete", "2024-03-01T00:02")
    operator.set_clock("2024-03-01T00:02")
    wait_for("complete", lambda: cluster.status("hourly")["backfill"]["state"] == "Complete")
    assert cluster.status("hourly")["backfill"]["launched"] == 2
    wait_for("the events", lambda: {"BackfillStarted", "BackfillComplete"} <= {r for r, _ in cluster.events("hourly")})


def test_a_range_into_the_future_is_refused_in_the_status_and_a_warning(operator: Operator,
                                                                        cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("ahead", "0 * * * *"))
    wait_for("seen", ready(cluster, "ahead"))
    annotate(cluster, "ahead", "2024-02-29T22:00:00Z/2024-03-02T00:00:00Z")
    wait_for("refused", lambda: (cluster.status("ahead").get("backfill") or {}).get("state") == "Refused")
    assert "after now" in cluster.status("ahead")["backfill"]["message"]
    wait_for("the warning", lambda: any(r == "BackfillRefused" for r, _ in cluster.events("ahead")))
    assert cluster.job_names("ahead") == []


def test_the_example_patches_suspend_with_a_reason_and_ask_for_a_backfill(operator: Operator,
                                                                          cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("nightly-report", "30 2 * * *"))
    wait_for("seen", ready(cluster, "nightly-report"))
    for patch in ("backfill", "suspend"):
        kubectl(cluster.cp, "patch", "cronschedule", "nightly-report", "-n", cluster.namespace, "--type=merge",
                "--patch-file", str(ROOT / "examples" / "patches" / f"{patch}.yaml"))
    status = wait_for("both answered", lambda: (s := cluster.status("nightly-report")).get("backfill")
                      and s.get("suspendReason") and s)
    assert status["suspendReason"] == "db migration until Friday, ask #ops"
    assert (status["backfill"]["from"], status["backfill"]["to"], status["backfill"]["total"]) == (
        "2024-02-20T00:00:00Z", "2024-02-26T23:59:00Z", 7)


def test_every_example_cronschedule_is_accepted_and_ready(operator: Operator, cluster: Cluster) -> None:
    kubectl(cluster.cp, "apply", "-n", cluster.namespace, "-f", str(ROOT / "examples" / "cronschedules"))
    names = [path.stem for path in sorted((ROOT / "examples" / "cronschedules").glob("*.yaml"))]
    for name in names:
        condition = wait_for(f"{name} judged", lambda n=name: next(iter(cluster.status(n).get("conditions", [])), None))
        assert condition["status"] == "True", (name, condition)


def test_the_longest_schedule_name_gets_manual_and_backfill_jobs(operator: Operator, cluster: Cluster) -> None:
    name = "a" * 30 + "-" + "b" * 21  # 52 characters: "-manual" or "-backfill" on it passes 63
    cluster.apply(schedule_manifest(name, "0 * * * *"))
    wait_for("seen", ready(cluster, name))
    kubectl(cluster.cp, "annotate", "cronschedule", name, "-n", cluster.namespace, "cronctl.dev/trigger=now")
    annotate(cluster, name, RANGE)
    jobs = wait_for("a manual and a backfill Job", lambda: (names := cluster.job_names(name)) and len(names) == 2
                    and names)
    assert all(len(job) <= 63 for job in jobs)
    assert sorted(job.rsplit("-", 1)[-1] for job in jobs) == ["backfill", "manual"]
