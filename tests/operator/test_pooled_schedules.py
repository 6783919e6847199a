"""A pooled CronSchedule (spec.pool), as the plan carries it out.

Its runs are launched at their times as any others, but each attempt's Job
is created suspended and labelled with the pool, whose pass gives it a
worker. A run's timeout counts from its launch, its wait included (as the
runner counts a wait for a worker slot); a waiting Job whose run timed out is
deleted, so that no pool starts it. The status says a waiting run is queued, and in which pool. A missing
pool is Ready=False naming it (and a Warning, once); its runs wait for it.
"""

from __future__ import annotations

from typing import Any

from cronctl.core.times import parse_time
from cronctl.operator.effects import NEVER_STARTED, CreateJob, DeleteJob, ResumeJob, StageJob
from cronctl.operator.manifests import pool_start_patch
from cronctl.operator.resource import POOL_LABEL

from .world import World, every_ten_minutes, merge_patch


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")


def world(pool_found: bool = True, **spec: Any) -> World:
    made = every_ten_minutes(CREATED, pool="reports", **spec)
    made.pool_found = pool_found
    made.reconcile(CREATED)
    return made


def ready(world: World) -> dict[str, Any]:
    return next(c for c in world.schedule["status"]["conditions"] if c["type"] == "Ready")


def start(world: World, name: str) -> None:
    """What the pool's look does: give the Job a worker."""
    world.jobs[name] = merge_patch(world.jobs[name], pool_start_patch(None))


def test_a_pooled_run_is_launched_at_its_time_with_its_job_suspended_and_labelled_with_the_pool() -> None:
    w = world()
    creates = [e for e in w.reconcile(t("2024-03-01T00:10")).effects if isinstance(e, CreateJob)]
    [job] = [create.manifest for create in creates]
    assert job["metadata"]["name"] == "sync-" + str(t("2024-03-01T00:10"))
    assert job["spec"]["suspend"] is True
    assert job["metadata"]["labels"][POOL_LABEL] == "reports"


def test_the_status_says_a_waiting_run_is_queued_and_in_which_pool_then_running_once_started() -> None:
    w = world()
    w.reconcile(t("2024-03-01T00:10"))
    [entry] = w.schedule["status"]["active"]
    assert (entry["state"], entry["pool"]) == ("queued", "reports")
    assert entry["message"] == "waits for a worker of CronPool reports (its spec.workers all busy)"
    start(w, w.job_named(t("2024-03-01T00:10")))
    w.reconcile(t("2024-03-01T00:12"))
    [entry] = w.schedule["status"]["active"]
    assert entry["state"] == "running" and "pool" not in entry and "message" not in entry


def test_a_timeout_counts_from_the_launch_a_wait_in_the_pool_included_and_the_waiting_job_goes() -> None:
    """As the runner counts a wait for a worker slot: a run's timeout is its launch's."""
    w = world(timeoutMinutes=5)
    w.reconcile(t("2024-03-01T00:10"))
    name = w.job_named(t("2024-03-01T00:10"))
    deletes = [e for e in w.reconcile(t("2024-03-01T00:15")).effects if isinstance(e, DeleteJob)]
    assert DeleteJob(name, NEVER_STARTED) in deletes
    assert [entry["state"] for entry in w.schedule["status"]["history"]] == ["timed_out"]


def test_a_retry_waits_in_the_pool_too_with_its_attempt_number() -> None:
    w = world(maxRetries=1)
    w.reconcile(t("2024-03-01T00:10"))
    name = w.job_named(t("2024-03-01T00:10"))
    start(w, name)
    w.finish(name, "Failed", t("2024-03-01T00:11"))
    creates = [e.manifest for e in w.reconcile(t("2024-03-01T00:11")).effects if isinstance(e, CreateJob)]
    [retry] = creates
    assert retry["metadata"]["labels"]["cronctl.dev/attempt"] == "2"
    assert retry["spec"]["suspend"] is True and retry["metadata"]["labels"][POOL_LABEL] == "reports"


def test_forbid_skips_a_time_while_its_own_run_is_queued() -> None:
    w = world(concurrencyPolicy="Forbid")
    w.reconcile(t("2024-03-01T00:10"))
    creates = [e for e in w.reconcile(t("2024-03-01T00:20")).effects if isinstance(e, CreateJob)]
    assert creates == [] and w.schedule["status"]["skipped"] == 1


def test_a_run_that_times_out_while_its_retry_waits_has_that_job_deleted_so_no_pool_starts_it() -> None:
    w = world(maxRetries=1, timeoutMinutes=5)
    w.reconcile(t("2024-03-01T00:10"))
    name = w.job_named(t("2024-03-01T00:10"))
    start(w, name)
    w.finish(name, "Failed", t("2024-03-01T00:11"))
    w.reconcile(t("2024-03-01T00:11"))
    deletes = [e for e in w.reconcile(t("2024-03-01T00:15")).effects if isinstance(e, DeleteJob)]
    assert DeleteJob(name + "-2", NEVER_STARTED) in deletes
    assert [entry["state"] for entry in w.schedule["status"]["history"]] == ["timed_out"]


def test_a_pooled_schedule_is_never_staged() -> None:
    w = every_ten_minutes(CREATED, pool="reports")
    w.staging = True
    effects = [e for minute in range(1, 11) for e in w.reconcile(CREATED + minute).effects]
    assert not [e for e in effects if isinstance(e, StageJob)]
    assert [e.manifest["spec"]["suspend"] for e in effects if isinstance(e, CreateJob)] == [True]


def test_a_missing_pool_is_ready_false_naming_it_said_once_and_its_runs_wait_for_it() -> None:
    w = world(pool_found=False)
    assert (ready(w)["status"], ready(w)["reason"]) == ("False", "PoolNotFound")
    assert 'CronPool "reports"' in ready(w)["message"] and "team-a" in ready(w)["message"]
    w.reconcile(t("2024-03-01T00:10"))
    assert [e.reason for e in w.events].count("PoolNotFound") == 1
    assert w.jobs[w.job_named(t("2024-03-01T00:10"))]["spec"]["suspend"] is True
    w.pool_found = True
    w.reconcile(t("2024-03-01T00:11"))
    assert (ready(w)["status"], ready(w)["reason"]) == ("True", "Scheduled")




def test_replace_replaces_its_own_queued_run_whose_job_goes_and_the_new_one_waits() -> None:
    w = world(concurrencyPolicy="Replace")
    w.reconcile(t("2024-03-01T00:10"))
    old = w.job_named(t("2024-03-01T00:10"))
    effects = w.reconcile(t("2024-03-01T00:20")).effects
    assert [e.name for e in effects if isinstance(e, DeleteJob)] == [old]
    [new] = [e.manifest for e in effects if isinstance(e, CreateJob)]
    assert new["spec"]["suspend"] is True and new["metadata"]["labels"][POOL_LABEL] == "reports"
    assert [(entry["name"], entry["state"]) for entry in w.schedule["status"]["active"]] == [
        (w.job_named(t("2024-03-01T00:20")), "queued")]


def test_a_jittered_pooled_run_is_never_resumed_by_its_schedule_at_its_second_only_by_its_pool() -> None:
    w = world(jitterSeconds=30)
    w.reconcile(t("2024-03-01T00:10"))
    name = w.job_named(t("2024-03-01T00:10"))
    start_at = w.jobs[name]["metadata"]["annotations"].get("cronctl.dev/start-at")
    for second in range(t("2024-03-01T00:10") * 60, t("2024-03-01T00:11") * 60, 5):
        assert not [e for e in w.reconcile(t("2024-03-01T00:10"), second).effects if isinstance(e, ResumeJob)]
    assert w.jobs[name]["spec"]["suspend"] is True, start_at
