"""A crash between any two effects of a plan is safe: the next reconcile finishes the job.

The world is what the API server holds for one schedule: the CronSchedule
(with its status) and its Jobs. ``World.carry_out`` does to it what the API
server does with a plan's effects, in the plan's order: a create adds the Job
as written (an existing one is adopted), a delete removes it (a missing one is
already deleted), a resume clears ``spec.suspend``, a status patch is a JSON
merge patch of ``status``. Events are kept apart: they are not the record.

For each kind of plan, the operator is killed after every prefix of its
effects (none done, one done, ... all but the last), restarted, and
reconciles the world it finds at the same minute; the world must end as the
whole plan left it: the same status (history, counters, outcomes,
conditions) and the same Jobs. A run that was being replaced is never
counted as failed.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from cronctl.core.every import actual_time
from cronctl.core.times import parse_time
from cronctl.operator.effects import (DROPPED, LEFT_OVER, REPLACED, UNSTAGED, CreateJob, DeleteJob, Effect,
                                      PatchStatus, Plan, PostEvent, RecordReplaced, ReleaseJob, ResumeJob, StageJob)
from cronctl.operator.resource import TRIGGER_ANNOTATION

from .world import World


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")
TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "main", "image": "busybox"}]}}}}


def seen(expression: str, **spec: Any) -> World:
    """A schedule the operator has seen once, at CREATED."""
    world = World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                   "metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "generation": 1},
                   "spec": {"schedule": expression, "jobTemplate": TEMPLATE, **spec}})
    world.reconcile(CREATED)
    return world


# -- the plans: each returns the world just before the plan, and the minute (and second) of it --------


Moment = tuple[World, int, "float | None"]


def launch() -> Moment:
    return seen("*/10 * * * *"), t("2024-03-01T00:10"), None


def catch_up_launch() -> Moment:
    return seen("*/10 * * * *"), t("2024-03-01T00:45"), None


def replace_with_a_real_failure_in_history() -> Moment:
    """The issue's case: failedJobsHistoryLimit 1 holds a real failure when a run is replaced."""
    world = seen("*/10 * * * *", concurrencyPolicy="Replace", failedJobsHistoryLimit=1)
    world.reconcile(t("2024-03-01T00:10"))
    world.finish(world.job_named(t("2024-03-01T00:10")), "Failed", t("2024-03-01T00:12"))
    world.reconcile(t("2024-03-01T00:12"))
    world.reconcile(t("2024-03-01T00:20"))
    return world, t("2024-03-01T00:30"), None


def replace_of_a_run_on_its_second_attempt() -> Moment:
    """Two Jobs to delete: a crash between them too."""
    world = seen("*/10 * * * *", concurrencyPolicy="Replace", maxRetries=1)
    world.reconcile(t("2024-03-01T00:10"))
    world.finish(world.job_named(t("2024-03-01T00:10")), "Failed", t("2024-03-01T00:12"))
    world.reconcile(t("2024-03-01T00:12"))
    assert world.job_named(t("2024-03-01T00:10"), 2) in world.jobs
    return world, t("2024-03-01T00:20"), None


def replace_of_a_held_run() -> Moment:
    """The run replaced waits, suspended, for its jittered second: its Job goes all the same."""
    world = seen("*/10 * * * *", concurrencyPolicy="Replace", jitterSeconds=540)
    world.reconcile(t("2024-03-01T00:10"))
    return world, t("2024-03-01T00:20"), None


def replace_by_a_staged_firing() -> Moment:
    """With staging, the new run's Job exists (suspended) before the old one is deleted; its
    release, the write that lets it start, comes after the delete."""
    world = seen("*/10 * * * *", concurrencyPolicy="Replace")
    world.staging = True
    for minute in ("2024-03-01T00:09", "2024-03-01T00:10", "2024-03-01T00:19"):
        world.reconcile(t(minute))
    assert any(job["metadata"]["labels"].get("cronctl.dev/staged") for job in world.jobs.values())
    return world, t("2024-03-01T00:20"), None


def manual_run_replacing_a_scheduled_one() -> Moment:
    world = seen("*/10 * * * *", concurrencyPolicy="Replace")
    world.reconcile(t("2024-03-01T00:10"))
    world.annotate(TRIGGER_ANNOTATION, "now")
    return world, t("2024-03-01T00:20"), None


def retention_drops_an_older_run() -> Moment:
    world = seen("*/10 * * * *", successfulJobsHistoryLimit=1)
    world.reconcile(t("2024-03-01T00:10"))
    world.finish(world.job_named(t("2024-03-01T00:10")), "Complete", t("2024-03-01T00:11"))
    world.reconcile(t("2024-03-01T00:20"))
    world.finish(world.job_named(t("2024-03-01T00:20")), "Complete", t("2024-03-01T00:25"))
    return world, t("2024-03-01T00:25"), None


def retention_drops_the_run_that_just_finished() -> Moment:
    world = seen("*/10 * * * *", successfulJobsHistoryLimit=0)
    world.reconcile(t("2024-03-01T00:10"))
    world.finish(world.job_named(t("2024-03-01T00:10")), "Complete", t("2024-03-01T00:15"))
    return world, t("2024-03-01T00:15"), None


def a_finish_a_drop_and_a_launch_at_once() -> Moment:
    world = seen("*/10 * * * *", successfulJobsHistoryLimit=1)
    world.reconcile(t("2024-03-01T00:10"))
    world.finish(world.job_named(t("2024-03-01T00:10")), "Complete", t("2024-03-01T00:12"))
    world.reconcile(t("2024-03-01T00:12"))
    world.reconcile(t("2024-03-01T00:20"))
    world.finish(world.job_named(t("2024-03-01T00:20")), "Complete", t("2024-03-01T00:30"))
    return world, t("2024-03-01T00:30"), None


def retry_at_once() -> Moment:
    world = seen("0 * * * *", maxRetries=1)
    world.reconcile(t("2024-03-01T01:00"))
    world.finish(world.job_named(t("2024-03-01T01:00")), "Failed", t("2024-03-01T01:05"))
    return world, t("2024-03-01T01:05"), None


def retry_after_its_delay() -> Moment:
    world = seen("0 * * * *", maxRetries=2, retryDelayMinutes=10)
    world.reconcile(t("2024-03-01T01:00"))
    world.finish(world.job_named(t("2024-03-01T01:00")), "Failed", t("2024-03-01T01:05"))
    world.reconcile(t("2024-03-01T01:05"))
    return world, t("2024-03-01T01:15"), None


def timeout_and_the_next_launch() -> Moment:
    world = seen("0 * * * *", timeoutMinutes=60, failedJobsHistoryLimit=1)
    world.reconcile(t("2024-03-01T01:00"))
    return world, t("2024-03-01T02:00"), None


def jittered_launch() -> Moment:
    return seen("0 * * * *", jitterSeconds=900), t("2024-03-01T01:00"), t("2024-03-01T01:00") * 60


def jittered_release() -> Moment:
    world = seen("0 * * * *", jitterSeconds=900)
    nominal = t("2024-03-01T01:00")
    world.reconcile(nominal, nominal * 60)
    start = actual_time(900, "sync", nominal)
    return world, start // 60, start


def manual_trigger() -> Moment:
    world = seen("0 0 1 1 *")
    world.annotate(TRIGGER_ANNOTATION, "please")
    return world, t("2024-03-01T00:30"), None


def forbid_skip() -> Moment:
    world = seen("*/10 * * * *", concurrencyPolicy="Forbid")
    world.reconcile(t("2024-03-01T00:10"))
    return world, t("2024-03-01T00:20"), None


def overflow_launches_the_latest() -> Moment:
    return seen("* * * * *"), CREATED + 180, None


def overflow_under_catch_up_all() -> Moment:
    return seen("* * * * *", catchUp="All", missedSchedulesLimit=3), CREATED + 180, None


def overflow_and_replace() -> Moment:
    world = seen("*/10 * * * *", concurrencyPolicy="Replace", missedSchedulesLimit=3)
    world.reconcile(t("2024-03-01T00:10"))
    return world, t("2024-03-01T01:00"), None


def overflow_under_wait_for_last() -> Moment:
    return seen("* * * * *", concurrencyPolicy="WaitForLast", catchUp="All", missedSchedulesLimit=3), CREATED + 180, None


def overflow_while_forbid_waits() -> Moment:
    world = seen("* * * * *", concurrencyPolicy="Forbid")
    world.reconcile(CREATED + 1)
    return world, CREATED + 180, None


def wait_for_last_catching_up() -> Moment:
    world = seen("0 2 * * *", concurrencyPolicy="WaitForLast", catchUp="All")
    return world, t("2024-03-04T09:00"), None


PLANS: list[Callable[[], Moment]] = [
    launch, catch_up_launch, replace_with_a_real_failure_in_history, replace_of_a_run_on_its_second_attempt,
    replace_of_a_held_run, replace_by_a_staged_firing, manual_run_replacing_a_scheduled_one,
    retention_drops_an_older_run, retention_drops_the_run_that_just_finished, a_finish_a_drop_and_a_launch_at_once,
    retry_at_once, retry_after_its_delay, timeout_and_the_next_launch, jittered_launch, jittered_release,
    manual_trigger, forbid_skip, overflow_launches_the_latest, overflow_under_catch_up_all, overflow_and_replace,
    overflow_under_wait_for_last, overflow_while_forbid_waits, wait_for_last_catching_up,
]


def crash_runs(moment: Callable[[], Moment], order: Callable[[Plan], list[Effect]] = lambda p: p.effects):
    """(the world after the whole plan, [(k, the world after k effects, a crash, and a reconcile)])."""
    world, now, second = moment()
    effects = order(world.plan(now, second))
    whole = world.copy()
    whole.carry_out(effects)
    runs = []
    for done in range(len(effects)):
        crashed = world.copy()
        crashed.carry_out(effects[:done])
        restarted = crashed.reconcile(now, second)
        runs.append((done, crashed, restarted))
    return whole, effects, now, second, runs


@pytest.mark.parametrize("moment", PLANS, ids=[m.__name__ for m in PLANS])
def test_a_crash_after_any_prefix_of_the_effects_ends_as_the_whole_plan(moment: Callable[[], Moment]) -> None:
    assert_crash_safe(moment)


def assert_crash_safe(moment: Callable[[], Moment]) -> None:
    """Killed after each prefix of the plan's effects and restarted, the world ends as the whole plan left it."""
    whole, effects, now, second, runs = crash_runs(moment)
    assert effects, "a plan worth crashing in"
    again = whole.plan(now, second)
    assert again.create == again.deletes() == again.release == again.events == [], "nothing left to do"
    for done, crashed, restarted in runs:
        assert crashed.snapshot(OVERFLOW_ENDS) == whole.snapshot(OVERFLOW_ENDS), \
            f"crashed after {done} of {len(effects)} effects"
        assert "JobGone" not in [event.reason for event in restarted.events]
    # A tick after an overflow ends it (the core's rule), and a restart is one more reconcile
    # than the whole plan needed: once both have settled, that flag agrees too.
    settle(whole, now, second)
    for done, crashed, _ in runs:
        settle(crashed, now, second)
        assert crashed.snapshot() == whole.snapshot(), f"settled, crashed after {done} of {len(effects)} effects"


OVERFLOW_ENDS = ("overflowing",)


def settle(world: World, now: int, second: float | None) -> None:
    for _ in range(3):
        if not world.reconcile(now, second).effects:
            return
    raise AssertionError("still changing after 3 reconciles at one minute")


@pytest.mark.parametrize("moment", PLANS, ids=[m.__name__ for m in PLANS])
def test_the_order_is_record_clear_releases_resumes_unstaged_creates_status_deletes_stages_events(
        moment: Callable[[], Moment]) -> None:
    assert_ordered(moment)


def assert_ordered(moment: Callable[[], Moment]) -> None:
    world, now, second = moment()
    effects = world.plan(now, second).effects
    rank = {RecordReplaced: -2, ReleaseJob: 0, ResumeJob: 1, CreateJob: 3, PatchStatus: 4, DeleteJob: 5,
            StageJob: 6, PostEvent: 7}
    clearing = {REPLACED: -1, LEFT_OVER: -1, UNSTAGED: 2}
    ranks = [clearing.get(e.why, 5) if isinstance(e, DeleteJob) else rank[type(e)] for e in effects]
    assert ranks == sorted(ranks)
    assert [type(e) for e in effects].count(PatchStatus) <= 1
    assert [type(e) for e in effects].count(RecordReplaced) <= 1


REPLACES = [replace_with_a_real_failure_in_history, replace_of_a_run_on_its_second_attempt, replace_of_a_held_run,
            replace_by_a_staged_firing, manual_run_replacing_a_scheduled_one, overflow_and_replace]


@pytest.mark.parametrize("moment", REPLACES, ids=[m.__name__ for m in REPLACES])
def test_under_replace_the_old_jobs_are_gone_before_the_new_one_is_made_or_let_start(
        moment: Callable[[], Moment]) -> None:
    """As CronJob: delete, then create, so the replaced run and its successor never run at once.
    The status write that ends the replaced runs goes first (it changes ``active`` only), and
    the Jobs a plan creates name no run they replace: the status said it already."""
    world, now, second = moment()
    effects = world.plan(now, second).effects
    kinds = [type(e) for e in effects]
    deleted = [i for i, e in enumerate(effects) if isinstance(e, DeleteJob) and e.why == REPLACED]
    starts = [i for i, e in enumerate(effects) if isinstance(e, (CreateJob, ReleaseJob, ResumeJob))]
    assert deleted and starts and max(deleted) < min(starts)
    assert kinds[0] is RecordReplaced
    record = effects[0].status  # type: ignore[union-attr]
    old = world.schedule["status"]
    assert {k: v for k, v in record.items() if k != "active"} == {k: v for k, v in old.items() if k != "active"}
    gone = {e.name for e in effects if isinstance(e, DeleteJob) and e.why == REPLACED}
    assert [entry["name"] for entry in record["active"]] == [
        entry["name"] for entry in old["active"] if entry["name"] not in gone]
    for effect in effects:
        if isinstance(effect, CreateJob):
            assert "cronctl.dev/replaces" not in effect.manifest["metadata"]["annotations"]
        if isinstance(effect, ReleaseJob):
            assert "cronctl.dev/replaces" not in (effect.patch["metadata"].get("annotations") or {})


def test_a_crash_between_the_delete_and_the_create_launches_the_minute_once_and_fails_nothing() -> None:
    world, now, _ = replace_with_a_real_failure_in_history()
    effects = world.plan(now).effects
    cut = max(i for i, e in enumerate(effects) if isinstance(e, DeleteJob) and e.why == REPLACED) + 1
    assert not any(isinstance(e, CreateJob) for e in effects[:cut])
    replaced = f"sync-{t('2024-03-01T00:20')}"
    world.carry_out(effects[:cut])
    assert replaced not in world.jobs
    assert replaced not in [entry["name"] for entry in world.schedule["status"]["active"]]
    restarted = world.reconcile(now)
    assert [job["metadata"]["name"] for job in restarted.create] == [f"sync-{now}"]
    assert "JobGone" not in [event.reason for event in restarted.events]
    assert [h["state"] for h in world.schedule["status"]["history"]] == ["failed"]  # the real failure, kept
    assert world.reconcile(now).create == []  # once


def test_the_loops_first_pass_carries_a_replace_through_its_launch() -> None:
    """The record and the deletes lead the plan, so the loop's urgent part (``Plan.split``) runs
    to the create: the launch is not put off to the second pass by the writes before it."""
    world, now, _ = replace_with_a_real_failure_in_history()
    urgent, rest = world.plan(now).split()
    assert [type(e) for e in urgent.effects] == [RecordReplaced, DeleteJob, CreateJob]
    assert rest.status is not None and rest.status["active"][0]["name"] == f"sync-{now}"


def test_a_replaced_run_is_never_failed_whatever_point_the_crash_hit() -> None:
    whole, effects, _, _, runs = crash_runs(replace_with_a_real_failure_in_history)
    first = f"sync-{t('2024-03-01T00:10')}"
    assert [(h["name"], h["state"]) for h in whole.schedule["status"]["history"]] == [(first, "failed")]
    assert first in whole.jobs  # the real failure keeps its Job
    for _, crashed, _ in runs:
        assert [h["state"] for h in crashed.schedule["status"]["history"]] == ["failed"]
        assert [h["name"] for h in crashed.schedule["status"]["history"]] == [first]


def test_cronjobs_order_would_count_the_replaced_run_failed_and_drop_the_real_failure() -> None:
    """CronJob's order with no record first (the replaced Jobs deleted first, then creates,
    resumes, status, retention's deletes, events) fails this suite: why ``RecordReplaced``."""
    def old_order(p: Plan) -> list[Effect]:
        p.effects = [e for e in p.effects if not isinstance(e, RecordReplaced)]
        first = [e for e in p.effects if isinstance(e, DeleteJob) and e.why == REPLACED]
        rest = [e for e in p.effects if isinstance(e, (CreateJob, ResumeJob, PatchStatus))]
        later = [e for e in p.effects if isinstance(e, DeleteJob) and e.why != REPLACED]
        return [*first, *rest, *later, *(e for e in p.effects if isinstance(e, PostEvent))]

    whole, _, _, _, runs = crash_runs(replace_with_a_real_failure_in_history, old_order)
    _, crashed, restarted = runs[1]  # killed right after the active Job was deleted
    assert "JobGone" in [event.reason for event in restarted.events]
    assert [h["state"] for h in crashed.schedule["status"]["history"]] == ["failed"]
    assert crashed.schedule["status"]["history"][0]["name"] != whole.schedule["status"]["history"][0]["name"]
    assert crashed.snapshot() != whole.snapshot()


def test_a_job_retention_dropped_left_behind_by_a_crash_is_deleted_not_adopted() -> None:
    world, now, _ = retention_drops_an_older_run()
    effects = world.plan(now).effects
    status_written = [type(e) for e in effects].index(PatchStatus) + 1
    world.carry_out(effects[:status_written])
    dropped = f"sync-{t('2024-03-01T00:10')}"
    assert dropped in world.jobs  # left behind
    later = world.reconcile(now + 1)
    assert later.deletes(LEFT_OVER) == [dropped] and later.create == []
    assert later.status is None and later.events == []  # no run adopted, nothing said again
    assert dropped not in world.jobs


def test_a_retrys_attempt_created_before_the_crash_is_adopted_not_doubled() -> None:
    world, now, _ = retry_at_once()
    effects = world.plan(now).effects
    world.carry_out(effects[:1])  # the next attempt's Job, not the status
    again = world.reconcile(now)
    assert again.create == [] and [e.reason for e in again.events] == []
    assert [(r["attempt"], r["state"]) for r in world.schedule["status"]["active"]] == [(2, "running")]


def test_a_manual_run_created_before_the_crash_answers_its_trigger_even_a_minute_later() -> None:
    world, now, _ = manual_trigger()
    effects = world.plan(now).effects
    world.carry_out(effects[:1])
    later = world.reconcile(now + 1)
    assert later.create == []
    assert world.schedule["status"]["lastTrigger"] == "please" and world.schedule["status"]["launched"] == 1


def test_an_overflow_whose_status_write_was_lost_is_still_reported_once() -> None:
    whole, effects, _, _, runs = crash_runs(overflow_under_catch_up_all)
    assert [type(e) for e in effects[:4]] == [CreateJob, CreateJob, CreateJob, PatchStatus]
    for done, crashed, restarted in runs[:4]:  # killed before the status write: said by the restart, once
        message = [e.message for e in restarted.events if e.reason == "TooManyMissedSchedules"]
        assert message == [[e for e in effects if isinstance(e, PostEvent)][0].event.message], done
        assert crashed.schedule["status"]["overflowed"] == 1


def test_deletes_say_why() -> None:
    world, now, _ = replace_with_a_real_failure_in_history()
    assert world.plan(now).deletes(REPLACED) == [f"sync-{t('2024-03-01T00:20')}"]
    world, now, _ = retention_drops_an_older_run()
    assert world.plan(now).deletes(DROPPED) == [f"sync-{t('2024-03-01T00:10')}"]
