"""Staged launches, as the operator's pure plan carries them out: the Job of a scheduled
firing is created during the minute before, suspended and labelled staged, and released at
its second with one small write; the status and the Launched Event follow. A staged Job that
must not run is deleted or kept as the core decides (core.staging, table-tested in
tests/core/test_staging.py); a crash between any two effects stays safe.

The world is tests/operator/world.py's in-memory cluster, with staging on.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, Callable, Iterator

import pytest

from cronctl.core.every import actual_time
from cronctl.core.times import parse_time
from cronctl.operator.logs import event_fields
from cronctl.operator.manifests import job_name
from cronctl.operator.metrics import launch_delays
from cronctl.operator import staged as staged_module
from cronctl.operator.observe import observe
from cronctl.operator.metrics import counts
from cronctl.operator.effects import REPLACED, UNSTAGED, CreateJob, DeleteJob, Plan, ReleaseJob, StageJob, StatusChanges
from cronctl.operator.resource import (REASON_ANNOTATION, REPLACES_ANNOTATION, RUN_LABEL, STAGED_LABEL,
                                       START_AT_ANNOTATION, STARTED_ANNOTATION, TRIGGER_ANNOTATION, rfc3339,
                                       rfc3339_seconds)

from . import test_crash_consistency as crash
from . import world as world_module
from .world import World, one_by_one


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")
FIRST_MINUTE = CREATED + 1
A_MINUTE_BEFORE_THE_HOUR, THE_HOUR = t("2024-03-01T00:59"), t("2024-03-01T01:00")
TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "main", "image": "busybox"}]}}}}


def seen(expression: str, schedule: str = "sync", **spec: Any) -> World:
    """A schedule a staging operator has seen once, at CREATED."""
    world = World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                   "metadata": {"name": schedule, "namespace": "team-a", "uid": f"uid-{schedule}", "generation": 1},
                   "spec": {"schedule": expression, "jobTemplate": copy.deepcopy(TEMPLATE), **spec}}, staging=True)
    world.reconcile(CREATED)
    return world


def kinds(result: Plan) -> list[str]:
    return [type(e).__name__ + (f"({e.why})" if isinstance(e, DeleteJob) else "") for e in result.effects]


def write_kind(effect: Any) -> str:
    """What an effect writes: a status patch is one, whether the plan's (the whole new status) or
    the loop's second pass's (``StatusChanges``: the change, made once the launches were out)."""
    return "PatchStatus" if isinstance(effect, StatusChanges) else type(effect).__name__


def name(minute: int) -> str:
    return job_name("sync", minute)


def staged(world: World) -> list[str]:
    return sorted(n for n, job in world.jobs.items() if job["metadata"]["labels"].get(STAGED_LABEL) == "true")


def reasons(result: Plan) -> list[str]:
    return [event.reason for event in result.events]


def edit(world: World, **spec: Any) -> None:
    world.schedule["spec"].update(spec)
    world.schedule["metadata"]["generation"] += 1


def image(world: World, job: str) -> str:
    return str(world.jobs[job]["spec"]["template"]["spec"]["containers"][0]["image"])


# -- staged, then released ----------------------------------------------------------------


def test_an_every_minute_schedules_next_job_is_staged_suspended_and_released_at_its_minute() -> None:
    world = seen("* * * * *")
    job = world.jobs[name(FIRST_MINUTE)]
    assert job["spec"]["suspend"] is True
    labels, annotations = job["metadata"]["labels"], job["metadata"]["annotations"]
    assert labels[STAGED_LABEL] == "true" and RUN_LABEL not in labels  # no run yet
    assert annotations[START_AT_ANNOTATION] == rfc3339_seconds(FIRST_MINUTE * 60)
    env = {e["name"]: e for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["CRONCTL_NOMINAL_TIME"]["value"] == rfc3339(FIRST_MINUTE)
    assert env["CRONCTL_REASON"]["valueFrom"] == {"fieldRef": {"fieldPath": f"metadata.annotations['{REASON_ANNOTATION}']"}}
    assert job["spec"]["template"]["metadata"]["annotations"][REASON_ANNOTATION] == "scheduled"
    status = world.schedule["status"]
    assert (status["launched"], status["active"]) == (0, [])  # a staged Job is no run

    result = world.plan(FIRST_MINUTE)
    assert kinds(result) == ["ReleaseJob", "PatchStatus", "StageJob", "PostEvent"]
    urgent, rest = result.split()
    assert urgent.effects == result.effects[:1]  # at its second: the release, and nothing else
    assert rest.effects == result.effects[1:] and rest.wake_at == result.wake_at
    [release] = result.releases
    assert release == ReleaseJob(name(FIRST_MINUTE), {"metadata": {"labels": {RUN_LABEL: "1", STAGED_LABEL: None}},
                                                      "spec": {"suspend": False}}, FIRST_MINUTE * 60)
    assert result.create == [] and result.release == [name(FIRST_MINUTE)]
    world.carry_out(result.effects)
    job = world.jobs[name(FIRST_MINUTE)]
    assert job["spec"]["suspend"] is False and job["metadata"]["labels"][RUN_LABEL] == "1"
    assert STAGED_LABEL not in job["metadata"]["labels"]
    assert [(a["name"], a["run"], a["reason"]) for a in world.schedule["status"]["active"]] == [
        (name(FIRST_MINUTE), 1, "scheduled")]
    assert world.schedule["status"]["lastScheduleTime"] == rfc3339(FIRST_MINUTE)
    assert result.events[0].message == (f"launched run 1 ({name(FIRST_MINUTE)}) for {rfc3339(FIRST_MINUTE)}; "
                                        "released its staged Job")
    assert staged(world) == [name(FIRST_MINUTE + 1)]
    assert world.plan(FIRST_MINUTE, FIRST_MINUTE * 60 + 5).effects == []  # released once


def test_an_hourly_schedule_is_staged_during_the_minute_before_and_costs_no_status_write() -> None:
    world = seen("0 * * * *")
    assert world.jobs == {} and world.plan(CREATED).wake_at == A_MINUTE_BEFORE_THE_HOUR
    assert world.plan(t("2024-03-01T00:30")).effects == []
    staging = world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    assert kinds(staging) == ["StageJob"] and staging.wake_at == THE_HOUR
    launch = world.reconcile(THE_HOUR)
    assert kinds(launch) == ["ReleaseJob", "PatchStatus", "PostEvent"]
    assert launch.wake_at == t("2024-03-01T01:59")


def test_a_staged_job_counts_neither_as_active_nor_as_launched() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    observed = observe(world.schedule["status"], world.jobs.values(), "uid-sync")
    assert (observed.state.active, observed.state.launched, observed.state.last_schedule) == ([], 0, None)
    assert observed.lost == [] and observed.leftovers == []
    assert [(nominal, view.name) for nominal, view in observed.staged.items()] == [(THE_HOUR, name(THE_HOUR))]


def test_a_staged_job_of_another_owner_is_not_ours() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    stranger = copy.deepcopy(world.jobs[name(THE_HOUR)])
    stranger["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    assert observe(world.schedule["status"], [stranger], "uid-sync").staged == {}


# -- edits, suspension, deletion, policies --------------------------------------------------


def test_a_template_edited_before_the_minute_gets_its_staged_job_replaced() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    edit(world, jobTemplate={"spec": {"template": {"spec": {"restartPolicy": "Never",
                                                            "containers": [{"name": "main", "image": "alpine"}]}}}})
    result = world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    assert kinds(result) == [f"DeleteJob({UNSTAGED})", "PatchStatus", "StageJob"]  # the delete first: the same name
    assert image(world, name(THE_HOUR)) == "alpine" and staged(world) == [name(THE_HOUR)]
    assert world.plan(A_MINUTE_BEFORE_THE_HOUR).effects == []


def test_the_release_compares_the_staged_job_with_the_digest_its_staging_computed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The busy second builds no manifest: the staging remembered what it staged."""
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    built: list[Any] = []
    original = staged_module.staged_manifest
    monkeypatch.setattr(staged_module, "staged_manifest", lambda *args: built.append(args) or original(*args))
    assert kinds(world.plan(THE_HOUR))[0] == "ReleaseJob"
    assert built == []


def test_an_edit_is_seen_at_the_minute_whatever_the_generation_says() -> None:
    """What the digest is remembered by is the spec itself, not the generation a client may not bump."""
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    world.schedule["spec"]["timeoutMinutes"] = 30
    assert kinds(world.plan(THE_HOUR))[:2] == [f"DeleteJob({UNSTAGED})", "CreateJob"]


def test_a_template_edited_at_the_very_minute_launches_a_fresh_job() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    edit(world, timeoutMinutes=30)
    result = world.reconcile(THE_HOUR)
    assert kinds(result) == [f"DeleteJob({UNSTAGED})", "CreateJob", "PatchStatus", "PostEvent"]
    job = world.jobs[name(THE_HOUR)]
    assert job["spec"]["activeDeadlineSeconds"] == 1800 and "suspend" not in job["spec"]
    assert job["metadata"]["labels"][RUN_LABEL] == "1" and staged(world) == []


def test_an_edited_time_deletes_the_staged_job_and_stages_the_new_time_when_it_is_near() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    edit(world, schedule="30 1 * * *")
    result = world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    assert kinds(result) == [f"DeleteJob({UNSTAGED})", "PatchStatus"]  # nextFireTime moved
    assert world.jobs == {} and result.wake_at == t("2024-03-01T01:29")
    edit(world, schedule="* * * * *")  # its own minute launches at once, as without staging; the next is staged
    assert kinds(world.reconcile(A_MINUTE_BEFORE_THE_HOUR)) == ["CreateJob", "PatchStatus", "StageJob", "PostEvent"]
    assert staged(world) == [name(THE_HOUR)]


def test_a_suspended_schedule_keeps_no_staged_job_and_gets_one_again_when_resumed() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    edit(world, suspend=True)
    assert kinds(world.reconcile(A_MINUTE_BEFORE_THE_HOUR)) == [f"DeleteJob({UNSTAGED})", "PatchStatus", "PostEvent"]
    assert world.jobs == {}
    assert world.reconcile(THE_HOUR).create == [] and world.jobs == {}
    edit(world, suspend=False)
    world.reconcile(t("2024-03-01T01:30"))
    assert world.reconcile(t("2024-03-01T01:59")).stage and staged(world) == [name(t("2024-03-01T02:00"))]


def test_an_unreadable_spec_fires_nothing_and_keeps_no_staged_job() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    edit(world, schedule="0 9 * * 8")
    result = world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    assert kinds(result) == [f"DeleteJob({UNSTAGED})", "PatchStatus", "PostEvent"] and world.jobs == {}


def test_wait_for_last_catch_up_and_manual_firings_are_not_staged() -> None:
    world = seen("* * * * *", concurrencyPolicy="WaitForLast")
    assert world.jobs == {}
    assert [type(e) for e in world.reconcile(FIRST_MINUTE).effects if isinstance(e, (CreateJob, StageJob))] == [
        CreateJob]
    late = seen("*/10 * * * *")  # the operator was away at 00:09 and at 00:10
    result = late.reconcile(t("2024-03-01T00:15"))
    assert [job["metadata"]["annotations"][REASON_ANNOTATION] for job in result.create] == ["catch-up"]
    hourly = seen("0 * * * *")
    hourly.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    hourly.annotate(TRIGGER_ANNOTATION, "now")
    manual = hourly.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    assert [job["metadata"]["name"] for job in manual.create] == [f"{name(A_MINUTE_BEFORE_THE_HOUR)}-manual"]
    assert "suspend" not in manual.create[0]["spec"] and staged(hourly) == [name(THE_HOUR)]


def test_with_staging_off_nothing_is_staged_and_a_staged_job_left_behind_is_deleted() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    world.staging = False
    assert kinds(world.reconcile(A_MINUTE_BEFORE_THE_HOUR)) == [f"DeleteJob({UNSTAGED})"]
    launch = world.reconcile(THE_HOUR)
    assert kinds(launch) == ["CreateJob", "PatchStatus", "PostEvent"] and staged(world) == []
    assert world.plan(t("2024-03-01T01:59")).effects == [] and launch.wake_at == t("2024-03-01T02:00")


def test_an_operator_restarted_with_staging_off_at_a_staged_minute_releases_that_job_once() -> None:
    """The upgrade to the default: the Job staged by the old operator is the run, released in one
    write (a delete and a create of the same name would race the garbage collector)."""
    world, now, _ = staging_turned_off()
    launch = world.reconcile(now)
    assert kinds(launch) == ["ReleaseJob", "PatchStatus", "PostEvent"] and staged(world) == []
    assert world.schedule["status"]["launched"] == 1
    assert world.plan(t("2024-03-01T01:59")).effects == []  # and nothing staged for 02:00


# -- Forbid, Replace, deadlines ---------------------------------------------------------------


def test_forbid_keeps_the_staged_job_unreleased_while_the_run_is_active_and_releases_it_late() -> None:
    world = seen("*/10 * * * *", concurrencyPolicy="Forbid")
    world.reconcile(t("2024-03-01T00:09"))
    world.reconcile(t("2024-03-01T00:10"))
    world.reconcile(t("2024-03-01T00:19"))
    assert staged(world) == [name(t("2024-03-01T00:20"))]
    skipped = world.reconcile(t("2024-03-01T00:20"))
    assert kinds(skipped) == ["PatchStatus", "PostEvent"] and reasons(skipped) == ["Skipped"]
    assert staged(world) == [name(t("2024-03-01T00:20"))]  # kept: the time is still missed
    assert world.reconcile(t("2024-03-01T00:24")).effects == []
    world.finish(name(t("2024-03-01T00:10")), "Complete", t("2024-03-01T00:25"))
    late = world.reconcile(t("2024-03-01T00:25"))
    assert kinds(late) == ["ReleaseJob", "PatchStatus", "PostEvent", "PostEvent"]
    assert reasons(late) == ["Succeeded", "Launched"]
    assert late.releases[0].patch == {
        "metadata": {"labels": {RUN_LABEL: "2", STAGED_LABEL: None},
                     "annotations": {REASON_ANNOTATION: "catch-up", STARTED_ANNOTATION: rfc3339(t("2024-03-01T00:25"))}},
        "spec": {"suspend": False, "template": {"metadata": {"annotations": {REASON_ANNOTATION: "catch-up"}}}}}
    job = world.jobs[name(t("2024-03-01T00:20"))]
    assert job["spec"]["template"]["metadata"]["annotations"][REASON_ANNOTATION] == "catch-up"  # what its Pods read
    [active] = world.schedule["status"]["active"]
    assert (active["reason"], active["startedTime"]) == ("catch-up", rfc3339(t("2024-03-01T00:25")))
    assert world.plan(t("2024-03-01T00:25")).effects == []


def test_forbid_deletes_a_kept_staged_job_once_a_newer_time_supersedes_it() -> None:
    world = seen("* * * * *", concurrencyPolicy="Forbid")
    world.reconcile(FIRST_MINUTE)  # run 1, which never ends
    world.reconcile(FIRST_MINUTE + 1)
    assert staged(world) == [name(FIRST_MINUTE + 1), name(FIRST_MINUTE + 2)]
    result = world.reconcile(FIRST_MINUTE + 2)
    assert kinds(result) == [f"DeleteJob({UNSTAGED})", "PatchStatus", "StageJob", "PostEvent"]
    assert result.deletes(UNSTAGED) == [name(FIRST_MINUTE + 1)]
    assert staged(world) == [name(FIRST_MINUTE + 2), name(FIRST_MINUTE + 3)]


def test_a_staged_job_never_released_before_a_newer_time_came_is_reported_missed() -> None:
    world = seen("* * * * *")
    world.reconcile(FIRST_MINUTE)
    assert staged(world) == [name(FIRST_MINUTE + 1)]
    result = world.reconcile(FIRST_MINUTE + 2)  # every write at FIRST_MINUTE + 1 failed (the API server away)
    assert result.deletes(UNSTAGED) == [name(FIRST_MINUTE + 1)]
    missed = [event for event in result.events if event.reason == "MissedSchedule"]
    assert [(event.type, event.message) for event in missed] == [
        ("Warning", f"{rfc3339(FIRST_MINUTE + 1)} was not started: a newer schedule time came before its Job "
                    "could be released")]
    assert counts(result)["missed"] == 1


def test_a_staged_job_deleted_by_the_users_edit_or_suspension_is_no_miss() -> None:
    world = seen("* * * * *")
    world.reconcile(FIRST_MINUTE)
    world.schedule["spec"]["suspend"] = True
    result = world.reconcile(FIRST_MINUTE + 2)
    assert result.deletes(UNSTAGED) == [name(FIRST_MINUTE + 1)]
    assert "MissedSchedule" not in reasons(result)


def test_replace_deletes_the_old_job_then_releases_the_staged_one() -> None:
    """As CronJob: the replaced run's Job goes before the new run may start (the status drops the
    replaced run first, so a crash between the two counts it neither active nor failed)."""
    world = seen("*/10 * * * *", concurrencyPolicy="Replace")
    for minute in ("00:09", "00:10", "00:19"):
        world.reconcile(t(f"2024-03-01T{minute}"))
    result = world.reconcile(t("2024-03-01T00:20"))
    assert kinds(result) == ["RecordReplaced", f"DeleteJob({REPLACED})", "ReleaseJob", "PatchStatus", "PostEvent",
                             "PostEvent"]
    assert reasons(result) == ["Replaced", "Launched"]
    assert REPLACES_ANNOTATION not in (result.releases[0].patch["metadata"].get("annotations") or {})
    assert list(world.jobs) == [name(t("2024-03-01T00:20"))]


def test_a_staged_job_whose_starting_deadline_passed_is_deleted() -> None:
    world = seen("*/10 * * * *", concurrencyPolicy="Forbid", startingDeadlineSeconds=120)
    for minute in ("00:09", "00:10", "00:19", "00:20"):
        world.reconcile(t(f"2024-03-01T{minute}"))
    assert world.plan(t("2024-03-01T00:22")).effects == []  # 00:20 may still start
    assert world.reconcile(t("2024-03-01T00:23")).deletes(UNSTAGED) == [name(t("2024-03-01T00:20"))]


# -- jitter: the launch at its minute, the release at its second ------------------------------


def test_a_jittered_firing_is_recorded_at_its_minute_and_released_at_nominal_plus_jitter() -> None:
    world = seen("0 * * * *", jitterSeconds=900)
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    start = actual_time(900, "sync", THE_HOUR)
    assert world.jobs[name(THE_HOUR)]["metadata"]["annotations"][START_AT_ANNOTATION] == rfc3339_seconds(start)
    launch = world.reconcile(THE_HOUR, THE_HOUR * 60)
    assert kinds(launch) == ["PatchStatus", "PostEvent"]  # no Job write at the minute
    assert launch.release_at == start and launch.wake_second == start
    assert launch.events[0].message.endswith(f"its staged Job starts at {rfc3339_seconds(start)} (jitter)")
    assert [a["run"] for a in world.schedule["status"]["active"]] == [1]
    between = world.plan(start // 60, start - 1)
    assert between.effects == [] and between.lost == [] and between.wake_second == start
    release = world.reconcile(start // 60, start)
    assert kinds(release) == ["ReleaseJob"] and release.releases[0].due == start
    assert release.releases[0].patch == {"metadata": {"labels": {RUN_LABEL: "1", STAGED_LABEL: None}},
                                         "spec": {"suspend": False}}
    assert world.plan(start // 60, start + 1).effects == []


# -- restarts, failovers, a staged Job gone ----------------------------------------------------


def test_a_restart_between_staging_and_release_finds_the_staged_job_and_releases_it_once() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    restarted = World(copy.deepcopy(world.schedule), copy.deepcopy(world.jobs), staging=True)  # all it knows
    first = restarted.reconcile(THE_HOUR, THE_HOUR * 60 + 0.2)
    assert first.release == [name(THE_HOUR)]
    assert restarted.reconcile(THE_HOUR, THE_HOUR * 60 + 3).effects == []
    # A second replica that planned from the same read releases the same Job with the same number: one run.
    again = World(copy.deepcopy(world.schedule), copy.deepcopy(restarted.jobs), staging=True)
    again.carry_out(first.effects)
    assert [a["run"] for a in again.schedule["status"]["active"]] == [1] and list(again.jobs) == [name(THE_HOUR)]


def test_a_release_whose_staged_job_is_gone_leaves_the_rest_undone_and_the_next_plan_creates_it() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    result = world.plan(THE_HOUR)
    del world.jobs[name(THE_HOUR)]  # deleted by someone after our read
    world.carry_out(result.effects)
    assert world.schedule["status"]["launched"] == 0  # the status did not record a launch that did not happen
    again = world.reconcile(THE_HOUR)
    assert kinds(again) == ["CreateJob", "PatchStatus", "PostEvent"]
    assert world.schedule["status"]["launched"] == 1


def test_a_released_job_whose_status_write_was_lost_is_adopted_not_released_again() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    result = world.plan(THE_HOUR)
    world.carry_out(result.effects[:1])  # the release, then the crash
    again = world.reconcile(THE_HOUR + 1)
    assert again.release == [] and again.create == [] and "JobGone" not in reasons(again)
    assert [a["name"] for a in world.schedule["status"]["active"]] == [name(THE_HOUR)]


# -- crash consistency: a crash between any two effects of a staging plan ----------------------

Moment = crash.Moment


def stage_an_hourly_firing() -> Moment:
    return seen("0 * * * *"), A_MINUTE_BEFORE_THE_HOUR, None


def release_an_hourly_firing() -> Moment:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    return world, THE_HOUR, None


def release_and_stage_the_next_minute() -> Moment:
    return seen("* * * * *"), FIRST_MINUTE, None


def release_replacing_the_active_run() -> Moment:
    world = seen("*/10 * * * *", concurrencyPolicy="Replace", failedJobsHistoryLimit=1)
    for minute in ("00:09", "00:10"):
        world.reconcile(t(f"2024-03-01T{minute}"))
    world.finish(name(t("2024-03-01T00:10")), "Failed", t("2024-03-01T00:12"))
    for minute in ("00:12", "00:19", "00:20", "00:29"):
        world.reconcile(t(f"2024-03-01T{minute}"))
    return world, t("2024-03-01T00:30"), None


def forbid_releases_late_as_the_run_ends() -> Moment:
    world = seen("*/10 * * * *", concurrencyPolicy="Forbid", successfulJobsHistoryLimit=0)
    for minute in ("00:09", "00:10", "00:19", "00:20"):
        world.reconcile(t(f"2024-03-01T{minute}"))
    world.finish(name(t("2024-03-01T00:10")), "Complete", t("2024-03-01T00:25"))
    return world, t("2024-03-01T00:25"), None


def forbid_deletes_a_superseded_staged_job() -> Moment:
    world = seen("* * * * *", concurrencyPolicy="Forbid")
    world.reconcile(FIRST_MINUTE)
    world.reconcile(FIRST_MINUTE + 1)
    return world, FIRST_MINUTE + 2, None


def restage_after_an_edit() -> Moment:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    edit(world, successfulJobsHistoryLimit=1, maxRetries=2)
    return world, A_MINUTE_BEFORE_THE_HOUR, None


def an_edit_at_the_very_minute() -> Moment:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    edit(world, timeoutMinutes=30)
    return world, THE_HOUR, None


def a_jittered_launch() -> Moment:
    world = seen("0 * * * *", jitterSeconds=900, concurrencyPolicy="Replace")
    world.reconcile(t("2024-03-01T00:30"))
    world.annotate(TRIGGER_ANNOTATION, "now")
    world.reconcile(t("2024-03-01T00:30"))  # a manual run, which the hour replaces
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    return world, THE_HOUR, THE_HOUR * 60


def a_jittered_release() -> Moment:
    world = seen("0 * * * *", jitterSeconds=900)
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    world.reconcile(THE_HOUR, THE_HOUR * 60)
    start = actual_time(900, "sync", THE_HOUR)
    return world, start // 60, start


def staging_turned_off() -> Moment:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    world.staging = False
    return world, THE_HOUR, None


def suspended_before_the_minute() -> Moment:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    edit(world, suspend=True)
    return world, A_MINUTE_BEFORE_THE_HOUR, None


STAGING_PLANS: list[Callable[[], Moment]] = [
    stage_an_hourly_firing, release_an_hourly_firing, release_and_stage_the_next_minute,
    release_replacing_the_active_run, forbid_releases_late_as_the_run_ends, forbid_deletes_a_superseded_staged_job,
    restage_after_an_edit, an_edit_at_the_very_minute, a_jittered_launch, a_jittered_release, staging_turned_off,
    suspended_before_the_minute,
]


@pytest.mark.parametrize("moment", STAGING_PLANS, ids=[m.__name__ for m in STAGING_PLANS])
def test_a_crash_after_any_prefix_of_a_staging_plan_ends_as_the_whole_plan(moment: Callable[[], Moment]) -> None:
    crash.assert_crash_safe(moment)


@pytest.fixture
def staging_by_default(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every World made stages: the crash suite's own plans, built by a staging operator."""
    monkeypatch.setattr(world_module, "STAGING_DEFAULT", True)
    yield


@pytest.mark.parametrize("moment", crash.PLANS, ids=[m.__name__ for m in crash.PLANS])
def test_every_plan_of_the_crash_suite_is_crash_safe_with_staging_too(moment: Callable[[], Moment],
                                                                      staging_by_default: None) -> None:
    crash.assert_crash_safe(moment)


@pytest.mark.parametrize("moment", STAGING_PLANS + crash.PLANS, ids=[m.__name__ for m in STAGING_PLANS + crash.PLANS])
def test_the_order_with_staging(moment: Callable[[], Moment], staging_by_default: None) -> None:
    crash.assert_ordered(moment)


def test_the_staging_plans_do_what_they_are_named_for() -> None:
    def effects(moment: Callable[[], Moment]) -> list[str]:
        world, now, second = moment()
        return kinds(world.plan(now, second))

    assert effects(stage_an_hourly_firing) == ["StageJob"]
    assert effects(release_an_hourly_firing)[0] == "ReleaseJob"
    assert effects(release_replacing_the_active_run)[:4] == ["RecordReplaced", f"DeleteJob({REPLACED})", "ReleaseJob",
                                                              "PatchStatus"]
    assert effects(forbid_releases_late_as_the_run_ends)[:3] == ["ReleaseJob", "PatchStatus", "DeleteJob(dropped)"]
    assert effects(forbid_deletes_a_superseded_staged_job)[0] == f"DeleteJob({UNSTAGED})"
    assert effects(restage_after_an_edit) == [f"DeleteJob({UNSTAGED})", "PatchStatus", "StageJob"]
    assert effects(an_edit_at_the_very_minute)[:2] == [f"DeleteJob({UNSTAGED})", "CreateJob"]
    assert effects(a_jittered_launch) == ["RecordReplaced", f"DeleteJob({REPLACED})", "PatchStatus", "PostEvent",
                                          "PostEvent"]
    assert effects(a_jittered_release) == ["ReleaseJob"]
    assert effects(staging_turned_off) == ["ReleaseJob", "PatchStatus", "PostEvent"]


def test_a_crash_after_the_release_never_counts_the_replaced_run_failed() -> None:
    _, effects, _, _, runs = crash.crash_runs(release_replacing_the_active_run)
    for done, crashed, restarted in runs:
        assert [h["state"] for h in crashed.schedule["status"]["history"]] == ["failed"], done
        assert "JobGone" not in reasons(restarted)


# -- what the loop, the metrics and the logs make of a release -------------------------------


def test_a_releases_delay_runs_from_the_second_it_was_due_to_its_release() -> None:
    result = Plan(effects=[ReleaseJob("sync-1", {}, THE_HOUR * 60 + 30), ReleaseJob("sync-2", {}, THE_HOUR * 60)])
    assert launch_delays(result, THE_HOUR * 60 + 40, released_seconds=THE_HOUR * 60 + 31.5) == [1.5, 31.5]
    assert launch_delays(result, THE_HOUR * 60 + 10) == [0.0, 10.0]


def test_a_released_launch_is_logged_with_its_run_from_the_status() -> None:
    world = seen("0 * * * *")
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    before = copy.deepcopy(world.schedule)
    result = world.plan(THE_HOUR)
    [fields] = event_fields("team-a", "sync", result, before.get("status"))
    assert {k: fields[k] for k in ("reason", "run", "nominal", "job", "firing")} == {
        "reason": "Launched", "run": 1, "nominal": rfc3339(THE_HOUR), "job": name(THE_HOUR), "firing": "scheduled"}


class Worlds:
    """The loop's cluster over several in-memory schedules, recording every write in order."""

    def __init__(self, worlds: dict[tuple[str, str], World]) -> None:
        self.worlds, self.writes = worlds, []

    def schedule(self, namespace: str, name: str) -> dict[str, Any] | None:
        world = self.worlds.get((namespace, name))
        return None if world is None else copy.deepcopy(world.schedule)

    def jobs(self, namespace: str, name: str) -> list[dict[str, Any]]:
        return [copy.deepcopy(job) for job in self.worlds[(namespace, name)].jobs.values()]

    live_jobs = jobs

    def plan_jobs(self, schedule: dict[str, Any]) -> list[dict[str, Any]]:
        return self.jobs(schedule["metadata"]["namespace"], schedule["metadata"]["name"])

    def apply(self, schedule: dict[str, Any], result: Plan) -> bool:
        key = (schedule["metadata"]["namespace"], schedule["metadata"]["name"])
        self.writes.extend((key, write_kind(effect)) for effect in result.effects)
        self.worlds[key].carry_out(result.effects)
        return True

    def apply_all(self, work: list[tuple[Any, Any]]) -> list[Any]:
        return one_by_one(self.apply, work)


class StoppedClock:
    def __init__(self, second: float) -> None:
        self.second = second

    def seconds(self) -> float:
        return self.second

    def seconds_until(self, second: float) -> float:
        return 3600.0


def run_one_batch(cluster: Any, keys: list[tuple[str, str]], done: Callable[[], bool], staging: bool = True) -> None:
    """The loop, its clock stopped just after THE_HOUR, over these schedules until ``done``."""
    from cronctl.operator.loop import Scheduler

    async def one_batch() -> None:
        scheduler = Scheduler(cluster, StoppedClock(THE_HOUR * 60 + 0.1), staging=staging)
        for key in keys:
            scheduler.touch(key)
        task = asyncio.create_task(scheduler.run())
        for _ in range(3000):  # at most 30 s on a loaded machine; a few ms usually
            await asyncio.sleep(0.01)
            if done():
                break
        task.cancel()
        scheduler._threads.shutdown(wait=True)

    asyncio.run(one_batch())


def test_the_loop_releases_every_due_schedule_before_any_other_write_of_that_second() -> None:
    worlds = {}
    for index in range(20):  # more than the loop's 16 reconciles at once
        world = seen("0 * * * *", schedule=f"s{index:02d}")
        world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
        worlds[("team-a", f"s{index:02d}")] = world
    cluster = Worlds(worlds)
    run_one_batch(cluster, list(worlds), lambda: sum(kind == "PostEvent" for _, kind in cluster.writes) == len(worlds))
    written = [kind for _, kind in cluster.writes]
    assert written[:20] == ["ReleaseJob"] * 20
    assert sorted(written[20:]) == ["PatchStatus"] * 20 + ["PostEvent"] * 20
    assert all(w.schedule["status"]["launched"] == 1 for w in worlds.values())


def test_without_staging_the_loop_creates_every_due_schedules_job_before_any_other_write_of_that_second() -> None:
    worlds = {}
    for index in range(20):
        world = seen("0 * * * *", schedule=f"s{index:02d}")
        world.staging = False
        world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
        assert staged(world) == []
        worlds[("team-a", f"s{index:02d}")] = world
    cluster = Worlds(worlds)
    run_one_batch(cluster, list(worlds), lambda: sum(kind == "PostEvent" for _, kind in cluster.writes) == len(worlds),
                  staging=False)
    written = [kind for _, kind in cluster.writes]
    assert written[:20] == ["CreateJob"] * 20
    assert sorted(written[20:]) == ["PatchStatus"] * 20 + ["PostEvent"] * 20
    assert all(w.schedule["status"]["launched"] == 1 for w in worlds.values())


@pytest.mark.parametrize("environ, expected", [({}, False), ({"CRONCTL_STAGING": "on"}, True),
                                               ({"CRONCTL_STAGING": " ON "}, True), ({"CRONCTL_STAGING": "off"}, False)])
def test_staging_is_off_unless_the_environment_turns_it_on(environ: dict[str, str], expected: bool) -> None:
    from cronctl.operator.handlers import staging_from_environment

    assert staging_from_environment(environ) is expected


def test_a_staging_setting_that_is_neither_on_nor_off_is_refused_naming_the_variable() -> None:
    from cronctl.operator.handlers import staging_from_environment

    with pytest.raises(ValueError, match="CRONCTL_STAGING: 'sometimes' must be on or off"):
        staging_from_environment({"CRONCTL_STAGING": "sometimes"})
