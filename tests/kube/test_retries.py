"""Retries on the real API server: each attempt its own Job, named for its run and attempt."""

from __future__ import annotations

import time

from .helpers import Cluster, Operator, job_of, kubectl, ready, schedule_manifest, wait_for

RETRY = dict(maxRetries=2, retryDelayMinutes=0)


def attempt_job(schedule: str, when: str, attempt: int) -> str:
    base = job_of(schedule, when)
    return base if attempt == 1 else f"{base}-{attempt}"


def active(cluster: Cluster, name: str) -> list[tuple[int, str]]:
    return [(run["attempt"], run["state"]) for run in cluster.status(name).get("active", [])]


def test_a_run_that_fails_twice_succeeds_on_the_third_attempt(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("etl", "0 * * * *", **RETRY))
    wait_for("seen", ready(cluster, "etl"))
    operator.set_clock("2024-03-01T01:00")
    wait_for("attempt 1", lambda: cluster.job_names("etl") == [attempt_job("etl", "2024-03-01T01:00", 1)])
    job = cluster.jobs("etl")[0]
    assert job.spec.backoff_limit == 0
    assert (job.metadata.labels["cronctl.dev/run"], job.metadata.labels["cronctl.dev/attempt"]) == ("1", "1")
    for attempt, minute in ((1, "01:05"), (2, "01:10")):
        cluster.finish_job(attempt_job("etl", "2024-03-01T01:00", attempt), "Failed", f"2024-03-01T{minute}")
        operator.set_clock(f"2024-03-01T{minute}")
        wait_for(f"attempt {attempt + 1}",
                 lambda a=attempt: attempt_job("etl", "2024-03-01T01:00", a + 1) in cluster.job_names("etl"))
        wait_for("status shows it", lambda a=attempt: active(cluster, "etl") == [(a + 1, "running")])
    out = kubectl(cluster.cp, "get", "cronschedules", "etl", "-o", "wide", "-n", cluster.namespace).stdout
    assert "ATTEMPT" in out.splitlines()[0] and " 3 " in out.splitlines()[1]
    cluster.finish_job(attempt_job("etl", "2024-03-01T01:00", 3), "Complete", "2024-03-01T01:20")
    operator.set_clock("2024-03-01T01:20")
    history = wait_for("history", lambda: cluster.status("etl").get("history"))
    assert [(h["state"], h["attempts"], h["finishedTime"]) for h in history] == [
        ("succeeded", 3, "2024-03-01T01:20:00Z")]
    assert cluster.status("etl")["active"] == [] and cluster.status("etl")["launched"] == 1


def test_a_run_that_exhausts_its_retries_fails(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("flaky", "0 * * * *", maxRetries=1))
    wait_for("seen", ready(cluster, "flaky"))
    operator.set_clock("2024-03-01T01:00")
    wait_for("attempt 1", lambda: cluster.job_names("flaky"))
    cluster.finish_job(attempt_job("flaky", "2024-03-01T01:00", 1), "Failed", "2024-03-01T01:01")
    operator.set_clock("2024-03-01T01:01")
    wait_for("attempt 2", lambda: len(cluster.job_names("flaky")) == 2)
    cluster.finish_job(attempt_job("flaky", "2024-03-01T01:00", 2), "Failed", "2024-03-01T01:02")
    operator.set_clock("2024-03-01T01:02")
    history = wait_for("failed", lambda: cluster.status("flaky").get("history"))
    assert [(h["state"], h["attempts"]) for h in history] == [("failed", 2)]
    operator.set_clock("2024-03-01T01:30")
    assert len(cluster.job_names("flaky")) == 2  # no third attempt


def test_a_stale_update_of_an_old_attempt_is_ignored(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("stale", "0 * * * *", **RETRY))
    wait_for("seen", ready(cluster, "stale"))
    operator.set_clock("2024-03-01T01:00")
    wait_for("attempt 1", lambda: cluster.job_names("stale"))
    cluster.finish_job(attempt_job("stale", "2024-03-01T01:00", 1), "Failed", "2024-03-01T01:05")
    operator.set_clock("2024-03-01T01:05")
    wait_for("attempt 2", lambda: active(cluster, "stale") == [(2, "running")])
    version = cluster.schedule("stale")["metadata"]["resourceVersion"]
    # The old attempt's Job changes late (its failed-pod count, then its labels): the
    # operator sees the watch events; they must not fail attempt 2 or start attempt 3.
    old = attempt_job("stale", "2024-03-01T01:00", 1)
    cluster.batch.patch_namespaced_job_status(old, cluster.namespace, {"status": {"failed": 3}})
    cluster.batch.patch_namespaced_job(old, cluster.namespace, {"metadata": {"labels": {"late": "yes"}}})
    operator.set_clock("2024-03-01T01:07")
    time.sleep(2)  # give a wrong reaction the chance to show
    assert cluster.schedule("stale")["metadata"]["resourceVersion"] == version
    assert active(cluster, "stale") == [(2, "running")]


def test_a_restart_between_attempts_neither_skips_nor_repeats_one(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("bumpy", "0 * * * *", maxRetries=2, retryDelayMinutes=10))
    wait_for("seen", ready(cluster, "bumpy"))
    operator.set_clock("2024-03-01T01:00")
    wait_for("attempt 1", lambda: cluster.job_names("bumpy"))
    cluster.finish_job(attempt_job("bumpy", "2024-03-01T01:00", 1), "Failed", "2024-03-01T01:05")
    operator.set_clock("2024-03-01T01:05")
    wait_for("retry pending", lambda: active(cluster, "bumpy") == [(1, "retry_pending")])
    operator.kill()
    operator.set_clock("2024-03-01T01:15")
    operator.start()
    wait_for("attempt 2 after the restart", lambda: active(cluster, "bumpy") == [(2, "running")])
    operator.kill()
    operator.start()
    operator.set_clock("2024-03-01T01:16")
    time.sleep(2)
    assert cluster.job_names("bumpy") == sorted([attempt_job("bumpy", "2024-03-01T01:00", 1),
                                                 attempt_job("bumpy", "2024-03-01T01:00", 2)])
