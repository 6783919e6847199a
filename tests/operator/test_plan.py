"""The operator's pure mapping: CronSchedule + Jobs + minute -> Plan. No server needed."""

from __future__ import annotations

import copy
from typing import Any

from cronctl.core.times import parse_time
from cronctl.operator.manifests import JobLaunch, job_manifest, job_name
from cronctl.operator.plan import plan
from cronctl.operator.resource import ATTEMPT_LABEL, RUN_LABEL, SCHEDULE_LABEL, SCHEDULED_ANNOTATION, rfc3339


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")
TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "main", "image": "busybox"}]}}}}


def schedule(expression: str = "*/10 * * * *", status: dict | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
        "metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "generation": 1},
        "spec": {"schedule": expression, "jobTemplate": TEMPLATE, **spec},
    }
    if status is not None:
        body["status"] = status
    return body


def after(body: dict[str, Any], result_status: dict | None) -> dict[str, Any]:
    """The schedule as the next reconcile reads it, once the plan's status was written."""
    body = copy.deepcopy(body)
    if result_status is not None:
        body["status"] = result_status
    return body


def finished(job: dict[str, Any], kind: str, at: int) -> dict[str, Any]:
    job = copy.deepcopy(job)
    job["status"] = {"conditions": [{"type": kind, "status": "True", "lastTransitionTime": rfc3339(at)}]}
    return job


def test_first_sight_records_the_anchor_and_the_next_fire_and_launches_nothing() -> None:
    result = plan(schedule(), [], CREATED)
    assert result.create == [] and result.events == []
    assert result.status is not None
    assert result.status["anchorTime"] == "2024-03-01T00:00:00Z"
    assert result.status["nextFireTime"] == "2024-03-01T00:10:00Z"
    assert result.status["conditions"][0]["status"] == "True"
    assert result.wake_at == t("2024-03-01T00:10")  # the first fire
    # Staging on: the minute before the first fire, when its Job is staged.
    assert plan(schedule(), [], CREATED, staging=True).wake_at == t("2024-03-01T00:09")


def test_a_reconcile_with_nothing_to_do_writes_nothing() -> None:
    first = plan(schedule(), [], CREATED)
    again = plan(after(schedule(), first.status), [], CREATED + 5)
    assert again.status is None and again.create == [] and again.events == []


def test_only_the_latest_missed_time_launches_as_a_job_named_for_it() -> None:
    body = after(schedule(), plan(schedule(), [], CREATED).status)
    result = plan(body, [], t("2024-03-01T00:45"))
    assert [job["metadata"]["name"] for job in result.create] == [f"sync-{t('2024-03-01T00:40')}"]
    job = result.create[0]
    assert job["metadata"]["labels"] == {SCHEDULE_LABEL: "sync", RUN_LABEL: "1", ATTEMPT_LABEL: "1"}
    assert job["metadata"]["annotations"][SCHEDULED_ANNOTATION] == "2024-03-01T00:40:00Z"
    assert job["metadata"]["ownerReferences"][0]["uid"] == "uid-1"
    assert job["metadata"]["ownerReferences"][0]["controller"] is True
    assert [e.reason for e in result.events] == ["MissedSchedule", "Launched"]  # 00:10 to 00:30 never started
    assert result.status is not None and result.status["lastScheduleTime"] == "2024-03-01T00:40:00Z"
    assert result.status["active"][0]["name"] == job["metadata"]["name"]


def test_a_job_created_before_a_crash_is_adopted_not_launched_again() -> None:
    body = after(schedule(), plan(schedule(), [], CREATED).status)
    launched = plan(body, [], t("2024-03-01T00:45"))
    # The status write was lost; only the Job exists.
    job = launched.create[0]
    job["metadata"]["uid"] = "job-uid"
    again = plan(body, [job], t("2024-03-01T00:46"))
    assert again.create == []
    assert again.status is not None and again.status["launched"] == 1
    assert again.status["lastScheduleTime"] == "2024-03-01T00:40:00Z"


def test_forbid_skips_once_per_missed_time_while_a_run_is_active() -> None:
    body = after(schedule(concurrencyPolicy="Forbid"), plan(schedule(concurrencyPolicy="Forbid"), [], CREATED).status)
    first = plan(body, [], t("2024-03-01T00:45"))
    body = after(body, first.status)
    jobs = first.create
    skipped = plan(body, jobs, t("2024-03-01T01:05"))
    assert skipped.create == [] and [e.reason for e in skipped.events] == ["Skipped"]
    body = after(body, skipped.status)
    assert body["status"]["skipped"] == 1
    quiet = plan(body, jobs, t("2024-03-01T01:06"))
    assert quiet.events == [] and quiet.status is None
    done = finished(jobs[0], "Complete", t("2024-03-01T01:06"))
    relaunch = plan(body, [done], t("2024-03-01T01:06"))
    assert [e.reason for e in relaunch.events] == ["Succeeded", "Launched"]
    assert relaunch.create[0]["metadata"]["name"] == job_name("sync", t("2024-03-01T01:00"))


def test_replace_deletes_the_old_job_then_launches_the_new_one() -> None:
    """As CronJob: delete, then create. The status drops the replaced run first (its one write
    more), so the new Job need not name it (``cronctl.dev/replaces``, an older operator's way)."""
    from cronctl.operator.resource import REPLACES_ANNOTATION
    from cronctl.operator.effects import CreateJob, DeleteJob, PatchStatus, RecordReplaced

    body = after(schedule(concurrencyPolicy="Replace"),
                 plan(schedule(concurrencyPolicy="Replace"), [], CREATED).status)
    first = plan(body, [], t("2024-03-01T00:10"))
    second = plan(after(body, first.status), first.create, t("2024-03-01T00:20"))
    old = first.create[0]["metadata"]["name"]
    assert second.deletes("replaced") == [old]
    assert REPLACES_ANNOTATION not in second.create[0]["metadata"]["annotations"]
    assert [type(e) for e in second.effects[:4]] == [RecordReplaced, DeleteJob, CreateJob, PatchStatus]
    assert second.effects[0].status["active"] == []  # type: ignore[union-attr]
    assert [e.reason for e in second.events] == ["Replaced", "Launched"]


def test_a_timeout_marks_the_run_timed_out_at_launch_plus_timeout_and_sets_the_job_deadline() -> None:
    spec = {"timeoutMinutes": 45}
    body = after(schedule("0 * * * *", **spec), plan(schedule("0 * * * *", **spec), [], CREATED).status)
    first = plan(body, [], t("2024-03-01T01:00"))
    assert first.create[0]["spec"]["activeDeadlineSeconds"] == 45 * 60
    assert first.wake_at == t("2024-03-01T01:45")
    expired = plan(after(body, first.status), first.create, t("2024-03-01T01:45"))
    assert expired.status is not None
    assert expired.status["history"] == [{"name": first.create[0]["metadata"]["name"], "run": 1,
                                          "state": "timed_out", "attempts": 1, "reason": "scheduled",
                                          "scheduledTime": "2024-03-01T01:00:00Z",
                                          "startedTime": "2024-03-01T01:00:00Z",
                                          "finishedTime": "2024-03-01T01:45:00Z"}]


def test_a_job_the_job_controller_ended_at_its_deadline_timed_out_and_is_not_retried() -> None:
    """Its Failed condition's reason says so, even where the operator's clock puts the timeout's
    expiry a minute later (the Job started early in the minute it was launched)."""
    spec = {"timeoutMinutes": 1, "maxRetries": 2}
    body = after(schedule("0 * * * *", **spec), plan(schedule("0 * * * *", **spec), [], CREATED).status)
    first = plan(body, [], t("2024-03-01T01:00"))
    job = finished(first.create[0], "Failed", t("2024-03-01T01:00"))
    job["status"]["conditions"][0]["reason"] = "DeadlineExceeded"
    ended = plan(after(body, first.status), [job], t("2024-03-01T01:00"))
    assert ended.create == []  # no second attempt: a timed-out run is not retried
    assert ended.status is not None
    assert [(run["state"], run["finishedTime"]) for run in ended.status["history"]] == [
        ("timed_out", "2024-03-01T01:00:00Z")]
    assert [event.reason for event in ended.events] == ["TimedOut"]


def test_why_a_job_failed_reaches_the_history_and_the_event() -> None:
    body = after(schedule("0 * * * *"), plan(schedule("0 * * * *"), [], CREATED).status)
    first = plan(body, [], t("2024-03-01T01:00"))
    job = finished(first.create[0], "Failed", t("2024-03-01T01:03"))
    job["status"]["conditions"][0].update(reason="BackoffLimitExceeded",
                                          message="Job has reached the specified backoff limit")
    ended = plan(after(body, first.status), [job], t("2024-03-01T01:03"))
    assert ended.status is not None
    [run] = ended.status["history"]
    assert run["failure"] == "BackoffLimitExceeded: Job has reached the specified backoff limit"
    assert ended.events[0].message.endswith(": BackoffLimitExceeded: Job has reached the specified backoff limit")
    kept = plan(after(after(body, first.status), ended.status), [job], t("2024-03-01T01:10"))
    assert kept.status is None or kept.status["history"][0]["failure"] == run["failure"]  # read back, kept


def test_the_status_lists_the_next_fire_times_in_utc_and_in_the_zone() -> None:
    spec = {"timeZone": "Europe/Berlin", "upcomingTimes": 3}
    body = after(schedule("30 2 * * *", **spec), plan(schedule("30 2 * * *", **spec), [], t("2024-03-29T12:00")).status)
    assert body["status"]["nextScheduleTimes"] == [
        {"time": "2024-03-30T01:30:00Z", "localTime": "2024-03-30T02:30:00+01:00"},
        # 02:30 does not exist on the 31st: Vixie cron runs it at the jump (03:00 summer time)
        {"time": "2024-03-31T01:00:00Z", "localTime": "2024-03-31T03:00:00+02:00"},
        {"time": "2024-04-01T00:30:00Z", "localTime": "2024-04-01T02:30:00+02:00"}]
    assert plan(body, [], t("2024-03-30T01:00")).status is None  # kept current with no write of its own
    fired = plan(body, [], t("2024-03-30T01:30"))
    assert fired.status is not None
    assert [entry["time"] for entry in fired.status["nextScheduleTimes"]] == [
        "2024-03-31T01:00:00Z", "2024-04-01T00:30:00Z", "2024-04-02T00:30:00Z"]


def test_a_suspended_schedule_lists_no_next_fire_time() -> None:
    result = plan(schedule(suspend=True), [], CREATED)
    assert result.status is not None and result.status["nextScheduleTimes"] == []
    assert len(plan(schedule(), [], CREATED).status["nextScheduleTimes"]) == 5  # type: ignore[index]


def test_a_suspension_with_a_reason_is_said_in_the_status_the_condition_and_an_event() -> None:
    body = after(schedule(), plan(schedule(), [], CREATED).status)
    body["spec"].update(suspend=True, suspendReason="database migration, ask #ops")
    paused = plan(body, [], CREATED + 1)
    assert paused.status is not None and paused.status["suspendReason"] == "database migration, ask #ops"
    assert paused.status["conditions"][0]["message"] == "suspended: nothing fires (database migration, ask #ops)"
    assert [(e.reason, e.message) for e in paused.events] == [("Suspended", "suspended: database migration, ask #ops")]
    body = after(body, paused.status)
    assert plan(body, [], CREATED + 2).events == []  # said once
    body["spec"]["suspendReason"] = "migration takes longer"
    reworded = plan(body, [], CREATED + 3)
    assert [(e.reason, e.message) for e in reworded.events] == [("Suspended", "suspended: migration takes longer")]
    body = after(body, reworded.status)
    body["spec"].update(suspend=False)
    resumed = plan(body, [], CREATED + 4)
    assert [e.reason for e in resumed.events] == ["Resumed"]
    assert resumed.status is not None and resumed.status["suspendReason"] is None


def test_a_schedule_created_suspended_says_nothing_until_it_changes() -> None:
    assert plan(schedule(suspend=True, suspendReason="not yet"), [], CREATED).events == []


def test_retention_deletes_the_jobs_of_dropped_runs() -> None:
    spec = {"successfulJobsHistoryLimit": 1}
    body = after(schedule(**spec), plan(schedule(**spec), [], CREATED).status)
    jobs: list[dict[str, Any]] = []
    for minute in ("00:10", "00:20"):
        result = plan(body, jobs, t(f"2024-03-01T{minute}"))
        body = after(body, result.status)
        jobs = [finished(job, "Complete", t(f"2024-03-01T{minute}") + 1) for job in jobs + result.create]
    result = plan(body, jobs, t("2024-03-01T00:25"))
    assert result.deletes() == result.deletes("dropped") == [job_name("sync", t("2024-03-01T00:10"))]


def test_a_bad_expression_is_a_false_ready_condition_naming_the_field_and_reason() -> None:
    result = plan(schedule("0 9 * * 8"), [], CREATED)
    assert result.create == []
    assert result.status is not None
    ready = result.status["conditions"][0]
    assert (ready["status"], ready["reason"]) == ("False", "InvalidSchedule")
    assert ready["message"] == "spec.schedule: day-of-week: 8 is out of range 0-7"
    assert [(e.type, e.reason) for e in result.events] == [("Warning", "InvalidSchedule")]
    assert plan(after(schedule("0 9 * * 8"), result.status), [], CREATED + 1).events == []


def test_an_expression_that_never_fires_is_refused() -> None:
    result = plan(schedule("0 0 30 2 *"), [], CREATED)
    assert result.status is not None and result.status["conditions"][0]["reason"] == "NeverFires"


def test_suspended_fires_nothing_and_counts_no_missed_time() -> None:
    body = after(schedule(suspend=True), plan(schedule(suspend=True), [], CREATED).status)
    during = plan(body, [], t("2024-03-01T00:35"))
    assert during.create == []
    resumed = after(schedule(), during.status if during.status else body["status"])
    result = plan(resumed, [], t("2024-03-01T00:36"))
    assert result.create == []
    assert result.wake_at == t("2024-03-01T00:40")  # the next fire


def test_job_manifest_copies_the_template_and_keeps_a_stricter_deadline() -> None:
    template = {"metadata": {"labels": {"team": "a"}},
                "spec": {"activeDeadlineSeconds": 60, "template": {"spec": {"containers": []}}}}
    body = schedule()
    job = job_manifest(body, template, JobLaunch(3, CREATED, CREATED), timeout_minutes=45)
    assert job["spec"]["activeDeadlineSeconds"] == 60
    assert job["metadata"]["labels"]["team"] == "a"
    assert template["spec"]["activeDeadlineSeconds"] == 60  # the template itself is untouched


def retrying(retries: int = 2, delay: int = 0, **extra: Any) -> dict[str, Any]:
    body = schedule("0 * * * *", maxRetries=retries, retryDelayMinutes=delay, **extra)
    return after(body, plan(body, [], CREATED).status)


def test_a_failed_attempt_starts_the_next_attempt_as_its_own_job() -> None:
    body = retrying(retries=2)
    first = plan(body, [], t("2024-03-01T01:00"))
    assert first.create[0]["spec"]["backoffLimit"] == 0
    body = after(body, first.status)
    failed = [finished(first.create[0], "Failed", t("2024-03-01T01:05"))]
    second = plan(body, failed, t("2024-03-01T01:05"))
    assert [e.reason for e in second.events] == ["AttemptFailed", "Retried"]
    job = second.create[0]
    assert job["metadata"]["name"] == job_name("sync", t("2024-03-01T01:00"), 2)
    assert job["metadata"]["labels"][ATTEMPT_LABEL] == "2" and job["metadata"]["labels"][RUN_LABEL] == "1"
    assert second.status is not None
    assert [(r["attempt"], r["state"]) for r in second.status["active"]] == [(2, "running")]


def test_a_retry_waits_for_its_delay_and_is_rebuilt_from_the_failed_job() -> None:
    body = retrying(retries=1, delay=10)
    first = plan(body, [], t("2024-03-01T01:00"))
    body = after(body, first.status)
    failed = [finished(first.create[0], "Failed", t("2024-03-01T01:05"))]
    waiting = plan(body, failed, t("2024-03-01T01:05"))
    assert waiting.create == [] and waiting.wake_at == t("2024-03-01T01:15")
    body = after(body, waiting.status)
    assert body["status"]["active"][0]["state"] == "retry_pending"
    assert plan(body, failed, t("2024-03-01T01:15")).create[0]["metadata"]["labels"][ATTEMPT_LABEL] == "2"


def test_a_waiting_retry_is_announced_once_not_at_every_reconcile() -> None:
    body = retrying(retries=1, delay=10)
    first = plan(body, [], t("2024-03-01T01:00"))
    body = after(body, first.status)
    failed = [finished(first.create[0], "Failed", t("2024-03-01T01:05"))]
    waiting = plan(body, failed, t("2024-03-01T01:05"))
    assert [e.reason for e in waiting.events] == ["AttemptFailed"]
    again = plan(after(body, waiting.status), failed, t("2024-03-01T01:08"))
    assert again.events == [] and again.status is None and again.create == []


def test_a_late_change_of_an_old_attempt_changes_nothing() -> None:
    body = retrying(retries=2)
    first = plan(body, [], t("2024-03-01T01:00"))
    body = after(body, first.status)
    old = finished(first.create[0], "Failed", t("2024-03-01T01:05"))
    second = plan(body, [old], t("2024-03-01T01:05"))
    body = after(body, second.status)
    stale = finished(first.create[0], "Complete", t("2024-03-01T01:06"))  # the old attempt "succeeds" late
    result = plan(body, [stale, second.create[0]], t("2024-03-01T01:07"))
    assert result.status is None and result.create == [] and result.events == []


def test_history_records_how_many_attempts_a_run_took() -> None:
    body = retrying(retries=1)
    first = plan(body, [], t("2024-03-01T01:00"))
    body = after(body, first.status)
    jobs = [finished(first.create[0], "Failed", t("2024-03-01T01:05"))]
    second = plan(body, jobs, t("2024-03-01T01:05"))
    body = after(body, second.status)
    jobs.append(finished(second.create[0], "Failed", t("2024-03-01T01:09")))
    done = plan(body, jobs, t("2024-03-01T01:10"))
    assert done.status is not None
    assert [(h["state"], h["attempts"]) for h in done.status["history"]] == [("failed", 2)]


def test_an_iana_time_zone_reads_the_schedule_in_local_wall_time_with_daylight_saving() -> None:
    body = schedule("30 9 * * *", timeZone="Europe/Berlin")
    before = plan(body, [], t("2024-03-30T12:00"))
    assert before.status is not None and before.status["nextFireTime"] == "2024-03-31T07:30:00Z"
    assert plan(body, [], t("2024-03-29T12:00")).status["nextFireTime"] == "2024-03-30T08:30:00Z"  # type: ignore[index]


def test_an_unknown_time_zone_is_refused_naming_the_field() -> None:
    result = plan(schedule(timeZone="Mars/Base"), [], CREATED)
    assert result.status is not None
    ready = result.status["conditions"][0]
    assert (ready["status"], ready["reason"]) == ("False", "UnknownTimeZone")
    assert ready["message"].startswith("spec.timeZone: ")


def test_the_trigger_annotation_asks_for_one_manual_run_consumed_once() -> None:
    body = after(schedule("0 0 1 1 *"), plan(schedule("0 0 1 1 *"), [], CREATED).status)
    body["metadata"]["annotations"] = {"cronctl.dev/trigger": "please-1"}
    result = plan(body, [], CREATED + 30)
    assert [job["metadata"]["name"] for job in result.create] == [f"sync-{CREATED + 30}-manual"]
    assert result.create[0]["metadata"]["annotations"]["cronctl.dev/reason"] == "manual"
    assert result.status is not None and result.status["lastTrigger"] == "please-1"
    assert result.status["lastScheduleTime"] is None  # a manual run is no schedule time dealt with
    body = after(body, result.status)
    assert plan(body, result.create, CREATED + 31).create == []  # consumed once


def test_a_run_waiting_for_its_next_attempt_still_times_out_and_is_not_retried() -> None:
    body = retrying(retries=2, delay=60, timeoutMinutes=45)
    first = plan(body, [], t("2024-03-01T01:00"))
    body = after(body, first.status)
    failed = [finished(first.create[0], "Failed", t("2024-03-01T01:05"))]
    body = after(body, plan(body, failed, t("2024-03-01T01:05")).status)
    expired = plan(body, failed, t("2024-03-01T01:45"))
    assert expired.create == []
    assert expired.status is not None
    assert [(h["state"], h["finishedTime"]) for h in expired.status["history"]] == [
        ("timed_out", "2024-03-01T01:45:00Z")]


# -- jitter: the Job waits, suspended, for its second; the nominal time stays --------------


def jittered(seconds: int = 600) -> dict[str, Any]:
    return after(schedule("0 * * * *", jitterSeconds=seconds),
                 plan(schedule("0 * * * *", jitterSeconds=seconds), [], CREATED).status)


def test_a_jittered_firing_creates_its_job_suspended_until_the_jittered_second() -> None:
    from cronctl.core.every import actual_time
    from cronctl.operator.resource import START_AT_ANNOTATION, rfc3339_seconds

    nominal = t("2024-03-01T01:00")
    start = actual_time(600, "sync", nominal)
    assert nominal * 60 < start <= nominal * 60 + 600
    result = plan(jittered(), [], nominal, second=nominal * 60 + 1)
    job = result.create[0]
    assert job["spec"]["suspend"] is True
    assert job["metadata"]["annotations"][START_AT_ANNOTATION] == rfc3339_seconds(start)
    assert job["metadata"]["annotations"][SCHEDULED_ANNOTATION] == "2024-03-01T01:00:00Z"  # nominal unmoved
    assert result.release == [] and result.wake_second == start
    assert "(jitter)" in result.events[0].message


def test_a_held_job_is_resumed_once_its_second_has_come_and_not_before() -> None:
    nominal = t("2024-03-01T01:00")
    first = plan(jittered(), [], nominal, second=nominal * 60)
    body, job = after(jittered(), first.status), first.create[0]
    start = first.release_at
    assert start is not None
    early = plan(body, [job], start // 60, second=start - 1)
    assert early.release == [] and early.create == [] and early.wake_second == start
    due = plan(body, [job], start // 60, second=start)
    assert due.release == [job["metadata"]["name"]] and due.create == []
    resumed = copy.deepcopy(job)
    resumed["spec"]["suspend"] = False
    assert plan(body, [resumed], start // 60, second=start + 5).release == []


def test_catch_up_and_manual_firings_take_no_jitter() -> None:
    from cronctl.operator.resource import REASON_ANNOTATION, START_AT_ANNOTATION, TRIGGER_ANNOTATION

    late = t("2024-03-01T01:07")
    result = plan(jittered(), [], late, second=late * 60)
    job = result.create[0]
    assert "suspend" not in job["spec"] and START_AT_ANNOTATION not in job["metadata"]["annotations"]
    assert job["metadata"]["annotations"][REASON_ANNOTATION] == "catch-up"
    body = jittered()
    body["metadata"]["annotations"] = {TRIGGER_ANNOTATION: "now"}
    manual = plan(body, [], t("2024-03-01T00:30"), second=t("2024-03-01T00:30") * 60)
    assert [("suspend" in j["spec"], j["metadata"]["annotations"][REASON_ANNOTATION]) for j in manual.create] == [
        (False, "manual")]


def test_without_jitter_a_scheduled_job_starts_at_once() -> None:
    body = after(schedule("0 * * * *"), plan(schedule("0 * * * *"), [], CREATED).status)
    nominal = t("2024-03-01T01:00")
    job = plan(body, [], nominal, second=nominal * 60 + 3).create[0]
    assert "suspend" not in job["spec"]


def test_a_new_schedule_starts_after_its_anchor_annotation_as_an_import_from_a_cronjob_sets_it() -> None:
    """The CronJob last fired at 00:10; imported at 00:12, the 00:11 and 00:12 times are the
    schedule's own to catch up (the latest, as CronJob would), and nothing at or before 00:10."""
    from .world import World
    from cronctl.operator.effects import CreateJob
    from cronctl.operator.plan import first_anchor

    template = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "x"}]}}}}
    world = World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                   "metadata": {"name": "imported", "namespace": "team-a", "uid": "uid-9", "generation": 1,
                                "annotations": {"cronctl.dev/anchor": "2024-03-01T00:10:00Z"}},
                   "spec": {"schedule": "* * * * *", "jobTemplate": template}})
    made = [e.manifest["metadata"]["annotations"]["cronctl.dev/scheduled-time"]
            for e in world.reconcile(parse_time("2024-03-01T00:12")).effects if isinstance(e, CreateJob)]
    assert made == ["2024-03-01T00:12:00Z"]
    assert world.schedule["status"]["anchorTime"] == "2024-03-01T00:10:00Z"
    future = {"metadata": {"annotations": {"cronctl.dev/anchor": "2030-01-01T00:00:00Z"}}}
    assert first_anchor(future, parse_time("2024-03-01T00:12")) == parse_time("2024-03-01T00:12")
