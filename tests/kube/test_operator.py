"""The operator against a real kube-apiserver and etcd, with an injected clock.

The operator runs as a subprocess (``python -m cronctl operator``), exactly as
users start it; the test moves its clock by rewriting CRONCTL_CLOCK_FILE and
polls the API for the outcome (bounded waits on real events, never a sleep for
wall-clock minutes). Scenarios replay the seed's Part 2 and Part 3 examples.
"""

from __future__ import annotations

import json
import time

import pytest

from .helpers import ROOT, Cluster, Operator, job_of, kubectl, minutes, ready, schedule_manifest, wait_for

pytestmark = pytest.mark.cluster


# -- the seed's Part 2 example ---------------------------------------------------------


def test_part2_example_catch_up_once_forbid_skip_and_relaunch(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("report", "30 9 * * *"))
    cluster.apply(schedule_manifest("sync", "*/10 * * * *", "Forbid"))
    wait_for("both schedules seen", lambda: ready(cluster, "report")() and ready(cluster, "sync")())

    operator.set_clock("2024-03-01T00:45")  # four missed times: only the latest runs
    wait_for("sync-1", lambda: cluster.job_names("sync") == [job_of("sync", "2024-03-01T00:40")])
    # The status follows the Job (the loop's second pass), so it is waited for, not read at once.
    status = wait_for("sync-1 recorded", lambda: (s := cluster.status("sync")).get("launched") == 1 and s)
    assert status["lastScheduleTime"] == "2024-03-01T00:40:00Z"
    job = cluster.jobs("sync")[0]
    assert job.metadata.labels["cronctl.dev/run"] == "1"
    owner = job.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller) == ("CronSchedule", "sync", True)
    assert owner.uid == cluster.schedule("sync")["metadata"]["uid"]

    operator.set_clock("2024-03-01T01:05")  # forbid: skip, keep 01:00 missed
    wait_for("the skip", lambda: cluster.status("sync").get("skipped") == 1)
    assert cluster.status("sync")["lastScheduleTime"] == "2024-03-01T00:40:00Z"
    assert len(cluster.job_names("sync")) == 1

    cluster.finish_job(job_of("sync", "2024-03-01T00:40"), "Complete", "2024-03-01T01:06")
    operator.set_clock("2024-03-01T01:06")
    wait_for("sync-2 for 01:00", lambda: job_of("sync", "2024-03-01T01:00") in cluster.job_names("sync"))

    operator.set_clock("2024-03-01T09:30")
    wait_for("report-1", lambda: cluster.job_names("report") == [job_of("report", "2024-03-01T09:30")])
    status = wait_for("sync status", lambda: (s := cluster.status("sync")).get("skipped") == 2 and s)
    assert status["lastScheduleTime"] == "2024-03-01T01:00:00Z"
    assert status["nextFireTime"] == "2024-03-01T09:40:00Z"
    assert [run["name"] for run in status["active"]] == [job_of("sync", "2024-03-01T01:00")]
    assert status["launched"] == 2
    assert [h["state"] for h in status["history"]] == ["succeeded"]
    # Events are posted off the launch path: wait for them, do not expect them with the status.
    wait_for("the events", lambda: (reasons := [reason for reason, _ in cluster.events("sync")])
             and reasons.count("Launched") == 2 and reasons.count("Skipped") == 2 and "Succeeded" in reasons)


# -- the seed's Part 3 example ---------------------------------------------------------


def test_part3_example_timeout_and_retention(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("etl", "0 * * * *", timeoutMinutes=45, successfulJobsHistoryLimit=1))
    wait_for("etl seen", ready(cluster, "etl"))
    operator.set_clock("2024-03-01T01:00")
    wait_for("etl-1", lambda: cluster.job_names("etl") == [job_of("etl", "2024-03-01T01:00")])
    assert cluster.jobs("etl")[0].spec.active_deadline_seconds == 45 * 60
    operator.set_clock("2024-03-01T02:00")
    wait_for("etl-2", lambda: len(cluster.job_names("etl")) == 2)
    status = wait_for("etl-1 timed out", lambda: (s := cluster.status("etl")).get("history") and s)
    assert status["history"][0]["state"] == "timed_out"
    assert status["history"][0]["finishedTime"] == "2024-03-01T01:45:00Z"

    cluster.finish_job(job_of("etl", "2024-03-01T02:00"), "Complete", "2024-03-01T02:10")
    operator.set_clock("2024-03-01T03:00")
    wait_for("etl-3", lambda: job_of("etl", "2024-03-01T03:00") in cluster.job_names("etl"))
    cluster.finish_job(job_of("etl", "2024-03-01T03:00"), "Complete", "2024-03-01T03:20")
    operator.set_clock("2024-03-01T03:20")
    history = wait_for("retention", lambda: [(h["name"], h["state"], h["finishedTime"])
                                             for h in cluster.status("etl").get("history", [])
                                             if h["state"] != "succeeded" or h["name"].endswith(
                                                 str(minutes("2024-03-01T03:00")))] == [
        (job_of("etl", "2024-03-01T01:00"), "timed_out", "2024-03-01T01:45:00Z"),
        (job_of("etl", "2024-03-01T03:00"), "succeeded", "2024-03-01T03:20:00Z")]
        and cluster.status("etl")["history"])
    assert len(history) == 2  # etl-2's success was dropped by successfulJobsHistoryLimit: 1
    wait_for("etl-2's Job deleted", lambda: job_of("etl", "2024-03-01T02:00") not in cluster.job_names("etl"))


def test_replace_deletes_the_running_job(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("rep", "*/10 * * * *", "Replace"))
    wait_for("rep seen", ready(cluster, "rep"))
    operator.set_clock("2024-03-01T00:10")
    wait_for("first", lambda: cluster.job_names("rep") == [job_of("rep", "2024-03-01T00:10")])
    operator.set_clock("2024-03-01T00:20")
    wait_for("replaced", lambda: cluster.job_names("rep") == [job_of("rep", "2024-03-01T00:20")])
    wait_for("one Replaced event", lambda: [reason for reason, _ in cluster.events("rep")].count("Replaced") == 1)


def test_starting_deadline_drops_times_that_are_too_old(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("late", "0 * * * *", startingDeadlineSeconds=300))
    wait_for("seen", ready(cluster, "late"))
    operator.set_clock("2024-03-01T01:06")  # 01:00 is 6 minutes old: past the 5-minute deadline
    wait_for("next fire moved on", lambda: cluster.status("late").get("nextFireTime") == "2024-03-01T02:00:00Z")
    operator.set_clock("2024-03-01T02:05")  # exactly at the deadline: still runs
    wait_for("launch", lambda: cluster.job_names("late") == [job_of("late", "2024-03-01T02:00")])


def test_a_failed_job_finishes_its_run_as_failed(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("flaky", "0 * * * *"))
    wait_for("seen", ready(cluster, "flaky"))
    operator.set_clock("2024-03-01T01:00")
    wait_for("launch", lambda: cluster.job_names("flaky"))
    cluster.finish_job(job_of("flaky", "2024-03-01T01:00"), "Failed", "2024-03-01T01:03")
    operator.set_clock("2024-03-01T01:03")
    history = wait_for("failed", lambda: cluster.status("flaky").get("history"))
    assert history[0]["state"] == "failed" and history[0]["finishedTime"] == "2024-03-01T01:03:00Z"
    assert cluster.status("flaky")["active"] == []


def test_a_bad_expression_is_refused_with_the_field_and_the_reason(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("bad", "0 9 * * 8"))
    condition = wait_for("condition", lambda: next(iter(cluster.status("bad").get("conditions", [])), None))
    assert (condition["status"], condition["reason"]) == ("False", "InvalidSchedule")
    assert condition["message"] == "spec.schedule: day-of-week: 8 is out of range 0-7"
    wait_for("warning event", lambda: ("InvalidSchedule", condition["message"]) in cluster.events("bad"))
    operator.set_clock("2024-03-02T00:00")
    time.sleep(1)  # give a wrong launch the chance to appear
    assert cluster.job_names("bad") == []


def test_the_schema_refuses_what_it_can_at_apply_time(cluster: Cluster) -> None:
    result = kubectl(cluster.cp, "apply", "-n", cluster.namespace, "-f", "-", check=False,
                     input=schedule_manifest("wrong", "* * * * *", "Sometimes"))
    assert result.returncode != 0 and "concurrencyPolicy" in result.stderr
    result = kubectl(cluster.cp, "apply", "-n", cluster.namespace, "-f", "-", check=False,
                     input=schedule_manifest("iv", "@every 5m", timeZone="+01:00"))
    assert result.returncode != 0 and "timeZone" in result.stderr
    result = kubectl(cluster.cp, "apply", "-n", cluster.namespace, "-f", "-", check=False,
                     input=schedule_manifest("many", "* * * * *", upcomingTimes=21))
    assert result.returncode != 0 and "upcomingTimes" in result.stderr


def test_a_restarted_operator_creates_no_duplicate_and_loses_no_run(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("steady", "*/10 * * * *", "Forbid"))
    wait_for("seen", ready(cluster, "steady"))
    operator.set_clock("2024-03-01T00:10")
    wait_for("first", lambda: cluster.job_names("steady") == [job_of("steady", "2024-03-01T00:10")])
    operator.kill()
    cluster.finish_job(job_of("steady", "2024-03-01T00:10"), "Complete", "2024-03-01T00:15")
    operator.set_clock("2024-03-01T00:20")
    operator.start()
    wait_for("second", lambda: cluster.job_names("steady") == [job_of("steady", "2024-03-01T00:10"),
                                                               job_of("steady", "2024-03-01T00:20")])
    status = wait_for("history", lambda: (s := cluster.status("steady")).get("history") and s)
    assert status["launched"] == 2
    assert [h["state"] for h in status["history"]] == ["succeeded"]
    operator.kill()
    operator.start()
    time.sleep(2)  # a restart re-reads everything; it must launch nothing new
    assert len(cluster.job_names("steady")) == 2
    assert cluster.status("steady")["launched"] == 2


def test_kubectl_get_shows_the_printer_columns(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("shown", "*/10 * * * *", "Forbid", timeZone="+05:30"))
    wait_for("seen", ready(cluster, "shown"))
    out = kubectl(cluster.cp, "get", "cronschedules", "-n", cluster.namespace).stdout
    header, row = out.splitlines()[:2]
    # At most 8 columns, as CronJob's 7: the rest with -o wide.
    assert header.split() == ["NAME", "READY", "SCHEDULE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "NEXT", "FIRE",
                              "AGE"], header
    for value in ("shown", "True", "*/10 * * * *", "false", "2024-03-01T00:10:00Z"):
        assert value in row
    wide = kubectl(cluster.cp, "get", "cronschedules", "-o", "wide", "-n", cluster.namespace).stdout
    header, row = wide.splitlines()[:2]
    for column in ("TIME ZONE", "POLICY", "SUSPEND REASON", "POOL", "ATTEMPT", "LAST SUCCESS", "ENDED"):
        assert column in header
    for value in ("+05:30", "Forbid"):
        assert value in row
    assert kubectl(cluster.cp, "get", "cronsched", "-n", cluster.namespace).returncode == 0
    assert cluster.status("shown")["nextScheduleTimes"][:2] == [  # kept by the API server's schema
        {"time": "2024-03-01T00:10:00Z", "localTime": "2024-03-01T05:40:00+05:30"},
        {"time": "2024-03-01T00:20:00Z", "localTime": "2024-03-01T05:50:00+05:30"}]


def test_kubectl_get_shows_a_list_of_schedules_in_the_schedule_column(operator: Operator, cluster: Cluster) -> None:
    """A schedule given as spec.schedules is not a blank SCHEDULE: the column shows the list."""
    body = json.loads(schedule_manifest("listed", "unused"))
    body["spec"].pop("schedule")
    body["spec"]["schedules"] = ["0 9 * * MON-FRI", "30 13 * * MON-FRI"]
    cluster.apply(json.dumps(body))
    wait_for("seen", ready(cluster, "listed"))
    out = kubectl(cluster.cp, "get", "cronschedules", "listed", "-n", cluster.namespace).stdout
    header, row = out.splitlines()[:2]
    column = header.index("SCHEDULE")
    assert row[column:].startswith('["0 9 * * MON-FRI","30 13 * * MON-FRI"]'), out
    assert "SCHEDULES" not in kubectl(cluster.cp, "get", "cronschedules", "-o", "wide", "-n",
                                      cluster.namespace).stdout  # one column says it, not two


def test_a_suspension_reason_shows_in_kubectl_get_and_in_an_event(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("paused", "*/10 * * * *"))
    wait_for("seen", ready(cluster, "paused"))
    kubectl(cluster.cp, "patch", "cronschedule", "paused", "-n", cluster.namespace, "--type=merge",
            "-p", '{"spec": {"suspend": true, "suspendReason": "db migration"}}')
    wait_for("the Event", lambda: ("Suspended", "suspended: db migration") in cluster.events("paused"))
    out = kubectl(cluster.cp, "get", "cronschedules", "paused", "-o", "wide", "-n", cluster.namespace).stdout
    header, row = out.splitlines()[:2]
    assert "SUSPEND REASON" in header and "db migration" in row
    assert cluster.status("paused")["nextScheduleTimes"] == []
    kubectl(cluster.cp, "patch", "cronschedule", "paused", "-n", cluster.namespace, "--type=merge",
            "-p", '{"spec": {"suspend": false}}')
    wait_for("resumed", lambda: any(reason == "Resumed" for reason, _ in cluster.events("paused")))
    assert "suspendReason" not in cluster.status("paused") or cluster.status("paused")["suspendReason"] is None


def test_an_idle_schedule_costs_no_status_write(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("idle", "0 12 * * *"))
    wait_for("seen", ready(cluster, "idle"))
    version = cluster.schedule("idle")["metadata"]["resourceVersion"]
    for minute in ("00:01", "03:00", "11:59"):
        operator.set_clock(f"2024-03-01T{minute}")
        time.sleep(0.5)  # the loop polls the clock file every 0.2 s
    assert cluster.schedule("idle")["metadata"]["resourceVersion"] == version
    assert cluster.job_names("idle") == []  # nothing made ahead of the minute (staging is off by default)
    operator.set_clock("2024-03-01T12:00")
    wait_for("its Job at 12:00", lambda: cluster.job_names("idle") == [job_of("idle", "2024-03-01T12:00")])
    wait_for("the launch recorded", lambda: cluster.status("idle").get("launched") == 1)


def test_the_operators_writes_are_managed_by_cronctl_not_the_generated_clients_name(operator: Operator,
                                                                                     cluster: Cluster) -> None:
    """managedFields name a write's manager by its User-Agent: a person reading who owns a Job's
    fields, or an audit log, sees cronctl, not the client generator's "OpenAPI-Generator"."""
    cluster.apply(schedule_manifest("owned", "0 12 * * *"))
    wait_for("seen", ready(cluster, "owned"))
    operator.set_clock("2024-03-01T12:00")
    wait_for("its Job", lambda: cluster.job_names("owned") == [job_of("owned", "2024-03-01T12:00")])
    wait_for("the launch recorded", lambda: cluster.status("owned").get("launched") == 1)
    job = cluster.batch.read_namespaced_job(job_of("owned", "2024-03-01T12:00"), cluster.namespace)
    assert "cronctl" in {entry.manager for entry in job.metadata.managed_fields}
    managers = {(entry["manager"], entry.get("subresource")) for entry in cluster.schedule("owned")["metadata"]["managedFields"]}
    assert ("cronctl", "status") in managers
    assert not any(manager.startswith("OpenAPI-Generator") for manager, _ in managers)


def test_an_every_minute_schedules_launched_events_are_one_event_whose_count_is_written_at_stop(
        operator: Operator, cluster: Cluster) -> None:
    """As client-go's recorder: a create, the series' start at once, then counts only (written every
    30 minutes, when the series ends, or when the operator stops): not an Event object a launch."""
    cluster.apply(schedule_manifest("minutely", "* * * * *"))
    wait_for("seen", ready(cluster, "minutely"))
    for minute in range(1, 6):
        operator.set_clock(f"2024-03-01T00:0{minute}")
        wait_for(f"00:0{minute} recorded", lambda minute=minute: cluster.status("minutely").get("launched") == minute)
    items = lambda: [e for e in cluster.core.list_namespaced_event(  # noqa: E731
        cluster.namespace, field_selector="involvedObject.name=minutely").items if e.reason == "Launched"]
    [series] = wait_for("the series started", lambda: (found := items()) and found[0].count == 2 and found)
    wait_for("the fifth recorded", lambda: "launched run 5 " in operator.log())
    operator.stop()
    [series] = items()
    assert series.count == 5 and series.message.startswith("launched run 5 ")
    assert series.first_timestamp <= series.last_timestamp  # wall times, to the second


def test_the_shipped_examples_apply_and_become_ready(operator: Operator, cluster: Cluster) -> None:
    for path in sorted((ROOT / "examples" / "cronschedules").glob("*.yaml")):
        kubectl(cluster.cp, "apply", "-n", cluster.namespace, "-f", str(path))
    names = [path.stem for path in sorted((ROOT / "examples" / "cronschedules").glob("*.yaml"))]
    for name in names:
        condition = wait_for(name, lambda: next(iter(cluster.status(name).get("conditions", [])), None))
        assert condition["status"] == "True", condition


def test_a_job_created_just_before_a_crash_is_adopted_not_duplicated(operator: Operator, cluster: Cluster) -> None:
    """The crash window between creating a Job and saving status: only the Job exists."""
    from cronctl.operator.manifests import JobLaunch, job_manifest

    cluster.apply(schedule_manifest("crashy", "*/10 * * * *"))
    wait_for("seen", ready(cluster, "crashy"))
    operator.kill()
    body = cluster.schedule("crashy")
    scheduled = minutes("2024-03-01T00:10")
    orphan = job_manifest(body, body["spec"]["jobTemplate"], JobLaunch(1, scheduled, scheduled))
    cluster.batch.create_namespaced_job(cluster.namespace, orphan)
    operator.set_clock("2024-03-01T00:12")
    operator.start()
    status = wait_for("adopted", lambda: (s := cluster.status("crashy")).get("launched") == 1 and s)
    assert status["lastScheduleTime"] == "2024-03-01T00:10:00Z"
    assert [run["name"] for run in status["active"]] == [job_of("crashy", "2024-03-01T00:10")]
    assert cluster.job_names("crashy") == [job_of("crashy", "2024-03-01T00:10")]
    time.sleep(1)  # Events are posted in the background: one would show by now
    assert "Launched" not in [reason for reason, _ in cluster.events("crashy")]


def test_an_iana_zone_fires_at_local_wall_time_across_daylight_saving(operator: Operator, cluster: Cluster) -> None:
    operator.set_clock("2024-03-30T12:00")
    cluster.apply(schedule_manifest("berlin", "30 9 * * *", timeZone="Europe/Berlin"))
    wait_for("next fire in summer time", lambda: cluster.status("berlin").get("nextFireTime") == "2024-03-31T07:30:00Z")
    operator.set_clock("2024-03-31T07:30")
    wait_for("launch", lambda: cluster.job_names("berlin") == [job_of("berlin", "2024-03-31T07:30")])


def test_the_trigger_annotation_starts_one_manual_run(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("adhoc", "0 0 1 1 *"))
    wait_for("seen", ready(cluster, "adhoc"))
    operator.set_clock("2024-03-01T00:30")
    kubectl(cluster.cp, "annotate", "-n", cluster.namespace, "cronschedule/adhoc", "cronctl.dev/trigger=now-1")
    name = f"adhoc-{minutes('2024-03-01T00:30')}-manual"
    wait_for("the manual Job", lambda: cluster.job_names("adhoc") == [name])
    status = wait_for("answered", lambda: (s := cluster.status("adhoc")).get("lastTrigger") == "now-1" and s)
    assert [(run["name"], run["reason"]) for run in status["active"]] == [(name, "manual")]
    assert status.get("lastScheduleTime") is None
    time.sleep(1)
    assert cluster.job_names("adhoc") == [name]  # consumed once


def test_wait_for_last_with_catch_up_all_runs_the_seeds_missed_days_one_after_another(
        operator: Operator, cluster: Cluster) -> None:
    """Seed 004: daily at 02:00, off from the 13th 20:00 to the 17th 09:00."""
    operator.set_clock("2024-03-13T20:00")
    cluster.apply(schedule_manifest("nightly", "0 2 * * *", "WaitForLast", catchUp="All"))
    wait_for("seen", ready(cluster, "nightly"))
    operator.set_clock("2024-03-17T09:00")
    for day, minute in ((14, "09:10"), (15, "09:20"), (16, "09:30"), (17, "09:40")):
        job = job_of("nightly", f"2024-03-{day}T02:00")
        wait_for(f"the run of the {day}th", lambda j=job: j in cluster.job_names("nightly"))
        assert len(cluster.job_names("nightly")) == day - 13  # one after another
        cluster.finish_job(job, "Complete", f"2024-03-17T{minute}")
        operator.set_clock(f"2024-03-17T{minute}")
    status = wait_for("all done", lambda: (s := cluster.status("nightly")).get("activeCount") == 0
                      and len(s.get("history", [])) >= 3 and s)
    assert status["nextFireTime"] == "2024-03-18T02:00:00Z"
    assert status.get("queue", []) == []


def test_wait_for_last_coalesces_a_waiting_scheduled_firing(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("wfl", "*/10 * * * *", "WaitForLast"))
    wait_for("seen", ready(cluster, "wfl"))
    operator.set_clock("2024-03-01T00:10")
    wait_for("first", lambda: cluster.job_names("wfl") == [job_of("wfl", "2024-03-01T00:10")])
    operator.set_clock("2024-03-01T00:20")
    wait_for("queued", lambda: [q["scheduledTime"] for q in cluster.status("wfl").get("queue", [])]
             == ["2024-03-01T00:20:00Z"])
    operator.set_clock("2024-03-01T00:30")
    wait_for("coalesced", lambda: [q["scheduledTime"] for q in cluster.status("wfl").get("queue", [])]
             == ["2024-03-01T00:30:00Z"])
    wait_for("a Coalesced event", lambda: "Coalesced" in [reason for reason, _ in cluster.events("wfl")])
    cluster.finish_job(job_of("wfl", "2024-03-01T00:10"), "Complete", "2024-03-01T00:35")
    operator.set_clock("2024-03-01T00:35")
    wait_for("the newest runs", lambda: job_of("wfl", "2024-03-01T00:30") in cluster.job_names("wfl"))
    assert job_of("wfl", "2024-03-01T00:20") not in cluster.job_names("wfl")


def test_jitter_holds_the_job_suspended_until_its_second_then_resumes_it(operator: Operator,
                                                                          cluster: Cluster) -> None:
    from cronctl.core.every import actual_time
    from cronctl.operator.resource import rfc3339_seconds

    cluster.apply(schedule_manifest("spread", "0 * * * *", jitterSeconds=900))
    wait_for("seen", ready(cluster, "spread"))
    nominal = minutes("2024-03-01T01:00")
    start = actual_time(900, "spread", nominal)
    operator.set_clock("2024-03-01T01:00:00")
    job = wait_for("the held Job", lambda: (jobs := cluster.jobs("spread")) and jobs[0])
    assert job.metadata.name == job_of("spread", "2024-03-01T01:00")  # named for the nominal time
    assert job.spec.suspend is True
    assert job.metadata.annotations["cronctl.dev/start-at"] == rfc3339_seconds(start)
    before = rfc3339_seconds(start - 1).replace("Z", "")
    operator.set_clock(before)
    time.sleep(1)  # the loop polls a file clock every 0.2 s: a resume would show by now
    assert cluster.jobs("spread")[0].spec.suspend is True
    operator.set_clock(rfc3339_seconds(start).replace("Z", ""))
    wait_for("resumed at its second", lambda: cluster.jobs("spread")[0].spec.suspend is False)
    assert cluster.job_names("spread") == [job_of("spread", "2024-03-01T01:00")]
