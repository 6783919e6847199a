"""The operator's Jobs in a whole cluster: the job controller makes their Pods, kube-scheduler
binds them, kwok runs them (for the time, and with the exit code, each template's Pod
annotations give: tests/kube/kwok-stages.yaml). No test writes a Job's or a Pod's status:
every assertion is on what the real controllers produced.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client

from cronctl.operator.resource import parse_rfc3339_seconds, rfc3339

from ..helpers import Cluster, Operator, kubectl, wait_for
from .conftest import Clock

LONG = 90  # the job controller's deadline is wall-clock: a 1-minute timeout takes 60 s


def schedule(name: str, expression: str, run_for: str = "1s", exit_code: int = 0, stuck: bool = False,
             backoff_limit: int | None = None, **spec: Any) -> str:
    pod_annotations = {"cronctl.test/run-for": run_for, "cronctl.test/exit-code": str(exit_code)}
    if stuck:
        pod_annotations["cronctl.test/stuck"] = "true"  # never starts, as with an image that cannot be pulled
    body = {"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": name},
            "spec": {"schedule": expression, **spec, "jobTemplate": {"spec": {
                **({} if backoff_limit is None else {"backoffLimit": backoff_limit}), "template": {
                "metadata": {"annotations": pod_annotations},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}}}}}}
    return json.dumps(body)


def at_minute(clock: Clock, minutes: int) -> str:
    """A cron expression firing once an hour, at the clock's ``minutes``."""
    return f"{clock.minute_of_hour(minutes)} * * * *"


def pods(cluster: Cluster, job: str) -> list[client.V1Pod]:
    return cluster.core.list_namespaced_pod(cluster.namespace, label_selector=f"batch.kubernetes.io/job-name={job}").items


def runs(cluster: Cluster, name: str) -> list[str]:
    """The schedule's Jobs that are runs: not a next firing's staged (suspended) ahead of it (staging on)."""
    return [job.metadata.name for job in cluster.jobs(name) if "cronctl.dev/staged" not in (job.metadata.labels or {})]


def phases(cluster: Cluster, job: str) -> list[str]:
    return sorted(pod.status.phase for pod in pods(cluster, job) if pod.metadata.deletion_timestamp is None)


def exit_codes(cluster: Cluster, job: str) -> list[int]:
    return [status.state.terminated.exit_code for pod in pods(cluster, job)
            for status in pod.status.container_statuses or [] if status.state.terminated]


def job_condition(cluster: Cluster, job: str) -> tuple[str, str] | None:
    """The Job's Complete or Failed condition, as (type, reason), once the job controller set it."""
    for condition in cluster.batch.read_namespaced_job(job, cluster.namespace).status.conditions or []:
        if condition.type in ("Complete", "Failed") and condition.status == "True":
            return condition.type, condition.reason or ""
    return None


def history(cluster: Cluster, name: str) -> list[tuple[str, int]]:
    return [(run["state"], run.get("attempts", 1)) for run in cluster.status(name).get("history", [])]


def seen(cluster: Cluster, name: str) -> None:
    wait_for("the schedule seen", lambda: cluster.status(name).get("nextFireTime"))


def test_a_firing_whose_pod_succeeds_is_recorded_succeeded(operator: Operator, cluster: Cluster,
                                                           clock: Clock) -> None:
    cluster.apply(schedule("ok", at_minute(clock, 1), run_for="2s"))
    seen(cluster, "ok")
    clock.set(1)
    [job] = wait_for("the Job", lambda: cluster.job_names("ok"))
    wait_for("its Pod running", lambda: phases(cluster, job) == ["Running"])
    assert job_condition(cluster, job) is None  # the Pod runs for 2 s
    wait_for("the job controller's Complete", lambda: job_condition(cluster, job) == ("Complete", "CompletionsReached"))
    assert phases(cluster, job) == ["Succeeded"] and exit_codes(cluster, job) == [0]
    clock.set(3)
    wait_for("the run succeeded", lambda: history(cluster, "ok") == [("succeeded", 1)])
    assert cluster.status("ok")["active"] == []


def test_a_failing_pod_fails_its_attempt_and_the_run_fails_after_its_retries(
        operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("flaky", at_minute(clock, 1), exit_code=3, maxRetries=1))
    seen(cluster, "flaky")
    clock.set(1)
    first = wait_for("attempt 1", lambda: cluster.job_names("flaky"))[0]
    wait_for("attempt 1 failed by the job controller",
             lambda: job_condition(cluster, first) == ("Failed", "BackoffLimitExceeded"))
    assert cluster.jobs("flaky")[0].spec.backoff_limit == 0  # each attempt its own Job: cronctl retries
    clock.set(2)
    wait_for("attempt 2", lambda: f"{first}-2" in cluster.job_names("flaky"))
    wait_for("attempt 2 failed", lambda: job_condition(cluster, f"{first}-2") == ("Failed", "BackoffLimitExceeded"))
    clock.set(3)
    wait_for("the run failed after its retry", lambda: history(cluster, "flaky") == [("failed", 2)])
    assert exit_codes(cluster, first) == [3] and exit_codes(cluster, f"{first}-2") == [3]
    assert cluster.status("flaky")["history"][0]["failure"].startswith("BackoffLimitExceeded: ")
    assert len(cluster.job_names("flaky")) == 2  # no third attempt


def test_a_hung_run_is_ended_by_the_job_controllers_deadline_and_recorded_timed_out(
        operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("hung", at_minute(clock, 1), run_for="24h", timeoutMinutes=1))
    seen(cluster, "hung")
    clock.set(1)
    [job] = wait_for("the Job", lambda: cluster.job_names("hung"))
    assert cluster.jobs("hung")[0].spec.active_deadline_seconds == 60
    wait_for("its Pod running", lambda: phases(cluster, job) == ["Running"])
    # The job controller's deadline is wall-clock: cut to 2 s of the 60 the timeout set, it ends
    # the Pod that runs past it at once, as it would a minute later (the timeout's deadline is asserted above).
    cluster.batch.patch_namespaced_job(job, cluster.namespace, {"spec": {"activeDeadlineSeconds": 2}})
    wait_for("the job controller's deadline", lambda: job_condition(cluster, job) == ("Failed", "DeadlineExceeded"),
             timeout=LONG)
    wait_for("the hung Pod killed", lambda: "Running" not in phases(cluster, job))
    clock.set(2)
    wait_for("the run timed out", lambda: history(cluster, "hung") == [("timed_out", 1)])
    assert cluster.status("hung")["history"][0]["failure"].startswith("DeadlineExceeded: ")


@pytest.mark.parametrize("pod", ["Running", "Pending"], ids=["running", "stuck"])
def test_forbid_skips_a_firing_while_the_previous_pod_runs_or_never_starts(
        operator: Operator, cluster: Cluster, clock: Clock, pod: str) -> None:
    """Stuck: Kubernetes issue 58748, a Pod whose image cannot be pulled."""
    cluster.apply(schedule("single", "* * * * *", run_for="24h", stuck=pod == "Pending", concurrencyPolicy="Forbid"))
    seen(cluster, "single")
    clock.set(1)
    [job] = wait_for("the first Job", lambda: runs(cluster, "single"))
    wait_for(f"its Pod {pod}", lambda: phases(cluster, job) == [pod])
    clock.set(2)
    wait_for("the skip", lambda: any(reason == "Skipped" for reason, _ in cluster.events("single")))
    assert runs(cluster, "single") == [job] and phases(cluster, job) == [pod]
    assert len(cluster.core.list_namespaced_pod(cluster.namespace).items) == 1


def test_replace_deletes_the_running_job_and_its_pod(operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("fresh", "* * * * *", run_for="24h", concurrencyPolicy="Replace"))
    seen(cluster, "fresh")
    clock.set(1)
    [old] = wait_for("the first Job", lambda: runs(cluster, "fresh"))
    wait_for("its Pod running", lambda: phases(cluster, old) == ["Running"])
    [old_pod] = [pod.metadata.name for pod in pods(cluster, old)]
    clock.set(2)
    new = wait_for("the replacing Job", lambda: [name for name in runs(cluster, "fresh") if name != old])
    wait_for("its Pod running", lambda: phases(cluster, new[0]) == ["Running"])
    wait_for("the old Job gone", lambda: old not in cluster.job_names("fresh"))
    wait_for("the old Pod gone with it (garbage collector, job controller, kwok)",
             lambda: old_pod not in [pod.metadata.name for pod in
                                     cluster.core.list_namespaced_pod(cluster.namespace).items])


def test_retention_deletes_old_jobs_and_their_pods(operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("kept", "* * * * *", run_for="1s", successfulJobsHistoryLimit=1))
    seen(cluster, "kept")
    clock.set(1)
    [first] = wait_for("the first run's Job", lambda: runs(cluster, "kept"))
    wait_for("it completes", lambda: job_condition(cluster, first) == ("Complete", "CompletionsReached"))
    first_pods = [pod.metadata.name for pod in pods(cluster, first)]
    assert len(first_pods) == 1
    clock.set(2)
    second = wait_for("the second run's Job", lambda: [name for name in runs(cluster, "kept") if name != first])[0]
    wait_for("it completes", lambda: job_condition(cluster, second) == ("Complete", "CompletionsReached"))
    wait_for("the older Job deleted once the newer succeeded", lambda: first not in cluster.job_names("kept"))
    wait_for("and its Pod", lambda: not pods(cluster, first))
    assert second in runs(cluster, "kept") and phases(cluster, second) == ["Succeeded"]
    assert [state for state, _ in history(cluster, "kept")] == ["succeeded"]


@pytest.mark.parametrize("operator_env", [{"CRONCTL_STAGING": "on"}], ids=["staging-on"])
def test_a_staged_job_makes_no_pod_until_it_is_released_at_its_minute(
        operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("soon", at_minute(clock, 2), run_for="1s"))
    seen(cluster, "soon")
    clock.set(1)  # the minute before: staged, suspended
    [job] = wait_for("the staged Job", lambda: cluster.job_names("soon"))
    assert cluster.jobs("soon")[0].spec.suspend is True
    time.sleep(3)  # the job controller and the scheduler have had every chance to start it
    assert pods(cluster, job) == []
    clock.set(2)
    wait_for("released: its Pod runs and completes", lambda: job_condition(cluster, job) == ("Complete", "CompletionsReached"))
    assert phases(cluster, job) == ["Succeeded"]


def test_a_jittered_job_makes_no_pod_until_its_second(operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("spread", at_minute(clock, 1), run_for="1s", jitterSeconds=900))
    seen(cluster, "spread")
    clock.set(1)
    # Launched at its minute (else moving the clock on would make it a catch-up, which starts at once).
    wait_for("the launch at its minute", lambda: cluster.status("spread").get("active"))
    [job] = cluster.job_names("spread")
    held = cluster.jobs("spread")[0]
    assert held.spec.suspend is True
    start = parse_rfc3339_seconds(held.metadata.annotations["cronctl.dev/start-at"])
    assert start is not None
    clock.set_second(start - 1)
    time.sleep(3)  # the job controller and the scheduler have had every chance to start it
    assert pods(cluster, job) == [] and cluster.jobs("spread")[0].spec.suspend is True
    clock.set_second(start)
    wait_for("resumed at its second: its Pod runs and completes",
             lambda: job_condition(cluster, job) == ("Complete", "CompletionsReached"))
    assert phases(cluster, job) == ["Succeeded"]


def test_a_manual_trigger_runs_once_through_the_cluster(operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("adhoc", "0 0 1 1 *", run_for="1s"))
    seen(cluster, "adhoc")
    kubectl(cluster.cp, "annotate", "-n", cluster.namespace, "cronschedule/adhoc", "cronctl.dev/trigger=now-1")
    [job] = wait_for("the manual Job", lambda: cluster.job_names("adhoc"))
    assert job.endswith("-manual")
    wait_for("it completes", lambda: job_condition(cluster, job) == ("Complete", "CompletionsReached"))
    clock.set(2)
    wait_for("the manual run succeeded", lambda: history(cluster, "adhoc") == [("succeeded", 1)])
    assert cluster.job_names("adhoc") == [job]


def test_an_operator_killed_while_pods_run_neither_doubles_nor_loses_the_run(
        operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("steady", at_minute(clock, 1), run_for="8s"))
    seen(cluster, "steady")
    clock.set(1)
    [job] = wait_for("the Job", lambda: cluster.job_names("steady"))
    wait_for("its Pod running", lambda: phases(cluster, job) == ["Running"])
    operator.kill()
    wait_for("the Pod ends while no operator runs", lambda: job_condition(cluster, job) == ("Complete", "CompletionsReached"),
             timeout=30)
    clock.set(2)
    operator.start()
    wait_for("the run succeeded, seen after the restart", lambda: history(cluster, "steady") == [("succeeded", 1)])
    assert cluster.job_names("steady") == [job] and len(pods(cluster, job)) == 1


def test_success_and_failure_times_follow_real_pod_outcomes(operator: Operator, cluster: Cluster,
                                                            clock: Clock) -> None:
    cluster.apply(schedule("fine", at_minute(clock, 1), run_for="1s"))
    cluster.apply(schedule("broken", at_minute(clock, 1), run_for="1s", exit_code=3, backoff_limit=0))
    seen(cluster, "fine")
    seen(cluster, "broken")
    clock.set(1)
    [ok] = wait_for("the Job of fine", lambda: cluster.job_names("fine"))
    [bad] = wait_for("the Job of broken", lambda: cluster.job_names("broken"))
    wait_for("both ended", lambda: job_condition(cluster, ok) and job_condition(cluster, bad), timeout=LONG)
    clock.set(2)
    wait_for("fine's success recorded", lambda: cluster.status("fine").get("lastSuccessfulTime"))
    wait_for("broken's failure recorded", lambda: cluster.status("broken").get("lastFailureTime"))
    fine, broken = cluster.status("fine"), cluster.status("broken")
    assert "lastFailureTime" not in fine and not fine.get("consecutiveFailures")
    assert "lastSuccessfulTime" not in broken and broken["consecutiveFailures"] == 1
    minute = f"{fine['history'][0]['finishedTime'][:16]}"
    assert fine["lastSuccessfulTime"].startswith(minute)
    assert broken["lastFailureTime"] == broken["history"][0]["finishedTime"]
    printed = kubectl(cluster.cp, "get", "cronschedule", "fine", "-n", cluster.namespace, "-o", "wide").stdout
    assert "LAST SUCCESS" in printed.splitlines()[0]  # a wide column (at most 8 by default)


def test_three_failures_in_a_row_pause_the_schedule_until_it_is_resumed(
        operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("failing", "* * * * *", run_for="1s", exit_code=3, backoff_limit=0, pauseOnFailures=3))
    seen(cluster, "failing")
    for minute in (1, 2, 3):  # each run's Pod fails; retention keeps one failed Job: count by the status
        clock.set(minute)
        wait_for(f"run {minute} failed", lambda m=minute: cluster.status("failing").get("consecutiveFailures") == m,
                 timeout=LONG)
    pause = wait_for("the pause", lambda: cluster.status("failing").get("pausedOnFailures"))
    assert pause["failures"] == 3
    said = ("PausedOnFailures", "paused after 3 failed runs in a row (pauseOnFailures: 3); resume it to fire again")
    wait_for("the Warning", lambda: said in cluster.events("failing"))  # Events are posted in the background
    assert cluster.status("failing")["suspendReason"].startswith("paused after 3 failed runs")
    clock.set(5)
    held = rfc3339(clock.minute(5))  # a paused schedule's reconcile at 00:05 holds it through that minute
    wait_for("00:05 reconciled while paused", lambda: cluster.status("failing").get("suspendedThrough") == held)
    assert cluster.status("failing")["launched"] == 3
    kubectl(cluster.cp, "annotate", "cronschedule", "failing", "-n", cluster.namespace,
            "cronctl.dev/resume=by-hand")
    wait_for("the pause ended", lambda: not cluster.status("failing").get("pausedOnFailures"))
    clock.set(6)
    wait_for("a run after the resume", lambda: cluster.status("failing")["launched"] == 4)
