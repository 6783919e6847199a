"""The scheduling loop: the busy second's releases go out with no collection pause, from plans
made ahead of it; a watch's touch from any thread wakes it."""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import threading
import time
from typing import Any, Callable

import pytest

from cronctl.operator import loop as loop_module
from cronctl.operator.kube import retry
from cronctl.operator.loop import Scheduler, no_collection_pauses, prepare, shares
from cronctl.operator.logs import event_fields
from cronctl.operator.metrics import METRICS, launch_delays
from cronctl.operator.apply import status_changes
from cronctl.operator.effects import Plan, StatusChanges
from cronctl.operator.plan import plan
from cronctl.operator.kept import kept
from cronctl.operator.apply import ROUND_PART

from .world import merge_patch
from .test_staging import A_MINUTE_BEFORE_THE_HOUR, THE_HOUR, StoppedClock, Worlds, run_one_batch, seen

STAGINGS = pytest.mark.parametrize("staging", [False, True], ids=["created-at-the-second", "staged"])
LAUNCH = {False: "CreateJob", True: "ReleaseJob"}  # the write that starts a run, by staging


class CollectionWatching(Worlds):
    """Records, for each write, whether the garbage collector could have paused it."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.collecting: list[tuple[str, bool]] = []

    def apply(self, schedule: dict[str, Any], result: Plan) -> bool:
        self.collecting.extend((type(effect).__name__, gc.isenabled()) for effect in result.effects)
        return super().apply(schedule, result)


def test_the_releases_go_out_with_the_collector_off_and_the_rest_with_it_on() -> None:
    worlds = {}
    for index in range(5):
        world = seen("0 * * * *", schedule=f"s{index}")
        world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
        worlds[("team-a", f"s{index}")] = world
    cluster = CollectionWatching(worlds)
    assert gc.isenabled()
    run_one_batch(cluster, list(worlds),
                  lambda: sum(kind == "PostEvent" for kind, _ in cluster.collecting) == len(worlds))
    assert {on for kind, on in cluster.collecting if kind == "ReleaseJob"} == {False}
    assert {on for kind, on in cluster.collecting if kind != "ReleaseJob"} == {True}
    assert gc.isenabled()


def test_the_collector_is_left_as_it_was_found() -> None:
    gc.disable()
    try:
        with no_collection_pauses():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with no_collection_pauses():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_touch_from_another_thread_wakes_the_sleeping_loop_at_once() -> None:
    """The Jobs' watch runs on a thread of its own: its touch must wake the loop's selector,
    not wait for something else to (an idle loop sleeps up to MAX_IDLE_SECONDS)."""
    scheduler = Scheduler(cluster=None, clock=None)  # type: ignore[arg-type]

    async def sleep_until_touched() -> float:
        scheduler._loop = asyncio.get_running_loop()
        scheduler._signal.clear()
        begun = time.monotonic()
        threading.Timer(0.05, scheduler.touch, [("team-a", "sync")]).start()
        await asyncio.wait_for(scheduler._signal.wait(), timeout=5)
        return time.monotonic() - begun

    assert asyncio.run(sleep_until_touched()) < 1
    assert ("team-a", "sync") in scheduler._dirty


def test_touches_and_forgets_from_the_watches_threads_change_the_loops_sets_on_the_loops_thread() -> None:
    """The loop swaps and reads its sets between awaits: a change made from another thread at the
    same moment could be lost (a touch added to the set just swapped out)."""
    scheduler = Scheduler(cluster=None, clock=None)  # type: ignore[arg-type]
    changed_on: list[str] = []
    touch, forget = scheduler._touch, scheduler._forget
    scheduler._touch = lambda key: changed_on.append(threading.current_thread().name) or touch(key)  # type: ignore[method-assign]
    scheduler._forget = lambda key: changed_on.append(threading.current_thread().name) or forget(key)  # type: ignore[method-assign]

    async def from_a_watch_thread() -> None:
        scheduler._loop = asyncio.get_running_loop()
        watch = threading.Thread(target=lambda: (scheduler.touch(("team-a", "a")), scheduler.touch(("team-a", "b")),
                                                 scheduler.forget(("team-a", "a"))), name="a-watch")
        watch.start()
        watch.join()
        for _ in range(100):
            await asyncio.sleep(0.001)
            if len(changed_on) == 3:
                break

    asyncio.run(from_a_watch_thread())
    assert changed_on == [threading.main_thread().name] * 3
    assert scheduler.known == {("team-a", "b")} and scheduler._dirty == {("team-a", "b")}


def test_a_failed_reconcile_is_counted_and_tried_again_within_the_second_not_a_minute_later() -> None:
    async def failing_once() -> tuple[float, set[Any]]:
        scheduler = Scheduler(cluster=None, clock=None)  # type: ignore[arg-type]
        key = ("team-a", "sync")
        scheduler.known.add(key)
        started = time.monotonic()
        [again] = scheduler._finish_share([(key, ConnectionResetError(104, "reset"), 600.0)])
        assert again is None  # no second of the schedules' clock: a wait in real time
        while not scheduler._dirty:
            await asyncio.sleep(0.005)
        return time.monotonic() - started, scheduler._dirty

    before = METRICS.reconcile_errors._value.get()
    waited, dirty = asyncio.run(failing_once())
    assert 0.09 <= waited < 0.5 and dirty == {("team-a", "sync")}
    assert METRICS.reconcile_errors._value.get() == before + 1


def test_failures_in_a_row_back_off_and_a_success_starts_over() -> None:
    scheduler = Scheduler(cluster=None, clock=None)  # type: ignore[arg-type]
    key = ("team-a", "sync")
    waits = [scheduler._failed(key, ConnectionRefusedError(111, "refused")) for _ in range(8)]
    assert waits == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0])
    assert METRICS.reconciles_failing._value.get() == 1
    assert scheduler._after(key, 660.0, 601.0) == 660.0
    assert METRICS.reconciles_failing._value.get() == 0
    assert scheduler._failed(key, ConnectionRefusedError(111, "refused")) == pytest.approx(0.1)


class FailingFirst(Worlds):
    """Its writes fail (the connection reset) while ``failing``."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.tries = 0
        self.failing = True

    def apply_all(self, work: list[tuple[Any, Any]]) -> list[Any]:
        self.tries += 1
        if self.failing:
            return [ConnectionResetError(104, "Connection reset by peer") for _ in work]
        return super().apply_all(work)


@STAGINGS
def test_a_launch_that_failed_goes_out_late_in_its_minute_never_dropped(staging: bool) -> None:
    world = seen("* * * * *", schedule="s0")  # the next minute's time would supersede it
    world.staging = staging
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)  # 01:00 staged, if staging
    key = ("team-a", "s0")
    cluster = FailingFirst({key: world})
    released_at: list[float] = []

    async def across() -> None:
        clock = SteppedClock(THE_SECOND)
        scheduler = Scheduler(cluster, clock, staging=staging)
        scheduler.known.add(key)
        scheduler._wake_at(key, THE_SECOND)
        task = asyncio.create_task(scheduler.run())
        for _ in range(3000):
            await asyncio.sleep(0.01)
            clock.second += 0.05  # the clock runs 5x as fast as the loop's sleeps
            if clock.second >= THE_SECOND + 2:
                cluster.failing = False  # the fault ends 2 s into the minute
            if LAUNCH[staging] in [kind for _, kind in cluster.writes] and not released_at:
                released_at.append(clock.second)
            if "PatchStatus" in [kind for _, kind in cluster.writes]:
                break
        task.cancel()
        scheduler._threads.shutdown(wait=True)

    asyncio.run(across())
    kinds = [kind for _, kind in cluster.writes]
    assert cluster.tries > 3  # tried again within the minute, not at the next one
    assert released_at and released_at[0] < THE_SECOND + 2 + retry.MAX_SECONDS + 1
    assert kinds[0] == LAUNCH[staging] and "DeleteJob" not in kinds  # the 01:00 run, not given up
    assert world.schedule["status"]["lastScheduleTime"] == "2024-03-01T01:00:00Z"


# -- plans made ahead of their second ------------------------------------------------------------

THE_SECOND = THE_HOUR * 60


def staged_worlds(count: int, staging: bool = True, **spec: Any) -> Worlds:
    """``count`` hourly schedules seen a minute before THE_HOUR: their Jobs staged then, or
    (``staging=False``, the operator's default) still to be created at it."""
    worlds = {}
    for index in range(count):
        world = seen("0 * * * *", schedule=f"s{index}", **spec)
        world.staging = staging
        world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
        worlds[("team-a", f"s{index}")] = world
    return Worlds(worlds)



@STAGINGS
@pytest.mark.parametrize("spec", [{}, {"jitterSeconds": 900}, {"concurrencyPolicy": "Forbid"}],
                         ids=["plain", "jittered", "forbid"])
def test_a_plan_made_ahead_for_a_second_is_the_plan_made_at_any_moment_of_it(spec: dict[str, Any],
                                                                            staging: bool) -> None:
    cluster = staged_worlds(1, staging, **spec)
    prepared = prepare(cluster, ("team-a", "s0"), THE_SECOND, staging)
    assert prepared is not None and prepared.holds(cluster.schedule("team-a", "s0"), cluster.jobs("team-a", "s0"),
                                                   THE_SECOND + 0.999)
    at_the_second = plan(cluster.schedule("team-a", "s0"), cluster.jobs("team-a", "s0"), THE_HOUR,
                         second=THE_SECOND + 0.999, staging=staging)
    assert prepared.plan == kept(at_the_second, cluster.schedule("team-a", "s0")["status"])  # type: ignore[index]
    if not spec:
        assert type(at_the_second.effects[0]).__name__ == LAUNCH[staging]


def test_a_plan_made_ahead_holds_only_for_its_second_and_the_very_schedule_and_jobs_it_was_made_from() -> None:
    cluster = staged_worlds(1)
    prepared = prepare(cluster, ("team-a", "s0"), THE_SECOND)
    assert prepared is not None
    schedule, jobs = cluster.schedule("team-a", "s0"), cluster.jobs("team-a", "s0")
    assert prepared.holds(schedule, jobs, THE_SECOND)
    assert not prepared.holds(schedule, jobs, THE_SECOND - 0.5)
    assert not prepared.holds(schedule, jobs, THE_SECOND + 1)
    edited = copy.deepcopy(schedule)
    edited["spec"]["suspend"] = True
    assert not prepared.holds(edited, jobs, THE_SECOND)
    changed = copy.deepcopy(jobs)
    changed[0]["metadata"]["labels"]["extra"] = "x"
    assert not prepared.holds(schedule, changed, THE_SECOND)
    assert not prepared.holds(schedule, [], THE_SECOND)


def test_a_plan_made_ahead_keeps_a_digest_of_what_it_was_made_from_not_a_copy() -> None:
    """Issue 47: at a herd's second every schedule's plan is held at once; a copy of each schedule
    and its Jobs with it was as large again."""
    cluster = staged_worlds(1)
    prepared = prepare(cluster, ("team-a", "s0"), THE_SECOND)
    assert prepared is not None
    kept = [value for value in vars(prepared).values() if value is not prepared.plan]
    assert all(isinstance(value, (int, bool, bytes)) for value in kept)
    assert len(prepared.made_from) == 16


def test_a_reconcile_keeps_its_schedules_names_uid_and_runs_not_its_spec_or_old_status() -> None:
    """Issue 47: a herd's second holds every schedule's between the launches and the rest; the
    parsed spec (the Job template) was half of each. The second pass writes the status and the
    Events from what is kept, and the uid names an adopted Job's owner."""
    cluster = staged_worlds(1)
    schedule = cluster.schedule("team-a", "s0")
    assert schedule is not None
    started = loop_module.start(cluster, ("team-a", "s0"), THE_SECOND, staging=True)
    assert started is not None
    assert "spec" not in started.schedule
    for key in ("name", "namespace", "uid"):
        assert started.schedule["metadata"][key] == schedule["metadata"][key]
    old = schedule["status"]
    # of the old status, the runs: the log's fields and the active gauge read them
    assert started.schedule["status"] == {key: old[key] for key in ("active", "history", "activeCount") if key in old}
    at_the_second = plan(schedule, cluster.jobs("team-a", "s0"), THE_HOUR, second=THE_SECOND, staging=True)
    [patch] = [effect for effect in started.rest.effects if isinstance(effect, StatusChanges)]
    assert patch.changes == status_changes(old, at_the_second.status)  # the change from the old status, made now
    assert loop_module.finish(cluster, started) is not None
    assert cluster.schedule("team-a", "s0")["status"] == merge_patch(old, patch.changes)  # type: ignore[index]


def test_a_reconcile_between_its_passes_keeps_of_each_job_it_created_what_its_record_reads() -> None:
    """Issue 47: the whole manifest of every Job a herd's second created was held until the second
    pass; the record of the launch (the launch delay, the log's fields) reads its name, run,
    attempt, nominal time and reason, and the cache holds the Job."""
    cluster = staged_worlds(1, staging=False)
    planned = plan(cluster.schedule("team-a", "s0"), [], THE_HOUR, second=THE_SECOND)  # type: ignore[arg-type]
    [manifest] = planned.create
    started = loop_module.start(cluster, ("team-a", "s0"), THE_SECOND)
    assert started is not None
    [recorded] = started.plan.create
    assert recorded == {"metadata": {
        "name": manifest["metadata"]["name"], "namespace": "team-a",
        "labels": {"cronctl.dev/run": "1", "cronctl.dev/attempt": "1"},
        "annotations": {"cronctl.dev/scheduled-time": "2024-03-01T01:00:00Z", "cronctl.dev/reason": "scheduled"}}}
    assert launch_delays(started.plan, THE_SECOND + 2.0) == launch_delays(planned, THE_SECOND + 2.0) == [2.0]
    assert event_fields("team-a", "s0", started.plan) == event_fields("team-a", "s0", planned)
    assert loop_module.finish(cluster, started) is not None
    [created] = cluster.jobs("team-a", "s0")
    assert created["spec"] == manifest["spec"]  # created whole


class SteppedClock(StoppedClock):
    """A clock the test moves; the loop looks at it every few ms."""

    def seconds_until(self, second: float) -> float:
        return min(0.005, max(0.0, second - self.second))


def run_across_the_second(cluster: Worlds, between: Callable[[], None] = lambda: None,
                          threads: list[str] | None = None, staging: bool = True) -> list[float]:
    """The loop from 3 s before THE_SECOND until every schedule launched at it; the seconds
    each plan was made for (and, into ``threads``, the thread each was made on). ``between``
    runs once the plans ahead are made."""
    made_for: list[float] = []

    def counting_plan(*args: Any, **kwargs: Any) -> Plan:
        made_for.append(kwargs["second"])
        if threads is not None:
            threads.append(threading.current_thread().name)
        return plan(*args, **kwargs)

    async def across() -> None:
        clock = SteppedClock(THE_SECOND - 3)
        scheduler = Scheduler(cluster, clock, staging=staging)
        for key in cluster.worlds:
            scheduler.known.add(key)
            scheduler._wake_at(key, THE_SECOND)
        task = asyncio.create_task(scheduler.run())
        for _ in range(3000):
            await asyncio.sleep(0.01)
            if len(scheduler._prepared) == len(cluster.worlds):
                break
        between()
        clock.second = THE_SECOND + 0.25
        for _ in range(3000):
            await asyncio.sleep(0.01)
            if sum(kind == "PostEvent" for _, kind in cluster.writes) == len(cluster.worlds):
                break
        task.cancel()
        scheduler._threads.shutdown(wait=True)

    original = loop_module.plan
    loop_module.plan = counting_plan
    try:
        asyncio.run(across())
    finally:
        loop_module.plan = original
    return made_for


@STAGINGS
def test_the_loop_plans_the_schedules_due_at_a_second_ahead_and_launches_them_from_those_plans(staging: bool) -> None:
    cluster = staged_worlds(20, staging)
    taken = METRICS.plans_ahead.labels("taken")._value.get()
    made_for = run_across_the_second(cluster, staging=staging)
    assert made_for == [THE_SECOND] * 20  # none planned again at the second
    assert METRICS.plans_ahead.labels("taken")._value.get() == taken + 20
    written = [kind for _, kind in cluster.writes]
    assert written[:20] == [LAUNCH[staging]] * 20
    assert all(w.schedule["status"]["launched"] == 1 for w in cluster.worlds.values())


def test_the_plans_ahead_are_made_on_one_thread_not_on_the_reconciles_threads() -> None:
    """Planning reads only the cache: all CPU, which threads taking turns at the GIL make dearer."""
    threads: list[str] = []
    made_for = run_across_the_second(staged_worlds(20), threads=threads)
    assert made_for == [THE_SECOND] * 20
    assert len(set(threads)) == 1
    assert not threads[0].startswith("cronctl-reconcile")


@STAGINGS
def test_a_schedule_edited_after_its_plan_was_made_ahead_is_planned_again_at_its_second(staging: bool) -> None:
    cluster = staged_worlds(2, staging)

    def suspend_s1() -> None:
        cluster.worlds[("team-a", "s1")].schedule["spec"]["suspend"] = True

    stale = METRICS.plans_ahead.labels("stale")._value.get()
    made_for = run_across_the_second(cluster, between=suspend_s1, staging=staging)
    assert METRICS.plans_ahead.labels("stale")._value.get() == stale + 1
    assert made_for == [THE_SECOND, THE_SECOND, THE_SECOND + 0.25]
    released = [key for key, kind in cluster.writes if kind == LAUNCH[staging]]
    assert released == [("team-a", "s0")]
    assert cluster.worlds[("team-a", "s1")].schedule["status"].get("launched", 0) == 0


class RoundsWatching(Worlds):
    """Records each ``apply_all``: the kinds of the plans' first effects, one list a call."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.calls: list[list[str]] = []

    def apply_all(self, work: list[tuple[Any, Plan]]) -> list[Any]:
        self.calls.append([type(result.effects[0]).__name__ for _, result in work if result.effects])
        return super().apply_all(work)


@STAGINGS
def test_each_reconcile_thread_carries_out_a_share_of_the_batch_together(staging: bool) -> None:
    """The launches of 40 schedules: a share of the batch per thread, each share's writes carried
    out together (pipelined a round at a time), not one schedule at a time."""
    from cronctl.operator.loop import CONCURRENCY

    cluster = RoundsWatching(staged_worlds(40, staging).worlds)
    run_across_the_second(cluster, staging=staging)
    releases = [call for call in cluster.calls if call and set(call) == {LAUNCH[staging]}]
    assert sum(len(call) for call in releases) == 40
    assert len(releases) <= CONCURRENCY and max(len(call) for call in releases) == 3  # 40 in 14 shares of 3 or fewer


class ReadsAndRoundsWatching(Worlds):
    """Records, in order, each schedule read (its planning) and each ``apply_all`` (its size)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.order: list[str | int] = []

    def schedule(self, namespace: str, name: str) -> dict[str, Any] | None:
        self.order.append(name)
        return super().schedule(namespace, name)

    def apply_all(self, work: list[tuple[Any, Plan]]) -> list[Any]:
        self.order.append(len(work))
        return super().apply_all(work)


@STAGINGS
def test_a_shares_first_launches_go_out_once_its_first_part_is_planned_then_the_rest_planned_whole(
        staging: bool) -> None:
    """Issue 47: a herd's share is hundreds of schedules a thread, and the first launch of herd
    10,000 waited for its share's plans (0.29 s after the second, CronJob's 0.10). The rest goes
    planned whole, so the connection then sends part after part."""
    count = 2 * ROUND_PART + 3
    cluster = ReadsAndRoundsWatching(staged_worlds(count, staging).worlds)
    keys = sorted(cluster.worlds)
    started = loop_module.start_all(cluster, [(key, None) for key in keys], THE_SECOND, staging)  # type: ignore[arg-type]
    assert all(isinstance(each, loop_module.Started) for each in started) and len(started) == count
    names = [name for _, name in keys]
    assert cluster.order == [*names[:ROUND_PART], ROUND_PART, *names[ROUND_PART:], count - ROUND_PART]


def test_shares_are_runs_in_order_at_most_count_of_them() -> None:
    assert shares(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert shares(list(range(2)), 16) == [[0], [1]]
    assert shares([], 16) == []


def test_a_replica_that_stopped_leading_acts_on_nothing_and_reconciles_everything_once_it_leads_again() -> None:
    cluster = staged_worlds(3)
    leading = threading.Event()
    leading.set()

    async def losing_and_taking_back() -> tuple[list[Any], list[Any]]:
        scheduler = Scheduler(cluster, StoppedClock(A_MINUTE_BEFORE_THE_HOUR * 60 + 1), leading=leading, staging=True)
        for key in cluster.worlds:
            scheduler.known.add(key)
        task = asyncio.create_task(scheduler.run())
        await asyncio.sleep(0.3)
        leading.clear()  # the Lease could not be renewed
        for _ in range(500):  # the loop's look at the Lease: its schedules' gauges go
            await asyncio.sleep(0.01)
            if not set(cluster.worlds) & METRICS._known:
                break
        await asyncio.sleep(0.5)  # any pass under way is over
        scheduler.clock = StoppedClock(THE_SECOND)
        before = list(cluster.writes)
        scheduler.touch(("team-a", "s0"))
        await asyncio.sleep(1.2)
        while_following = cluster.writes[len(before):]
        assert not set(cluster.worlds) & METRICS._known  # its schedules' gauges: not the follower's to report
        leading.set()
        for _ in range(3000):
            await asyncio.sleep(0.01)
            released = {key for key, kind in cluster.writes if kind == "ReleaseJob"}
            if released == set(cluster.worlds) and set(cluster.worlds) <= METRICS._known:
                break  # the gauges are set after the writes: both, or the loop waited too little
        task.cancel()
        scheduler._threads.shutdown(wait=True)
        return while_following, list(cluster.writes)

    while_following, after = asyncio.run(losing_and_taking_back())
    assert while_following == []
    assert set(cluster.worlds) <= METRICS._known  # reported again once it leads
    assert {key for key, kind in after if kind == "ReleaseJob"} == set(cluster.worlds)  # every schedule, afresh


class FailingPools:
    """Stand-in pools: the first look fails, the second starts a schedule's Job."""

    def __init__(self) -> None:
        self.looks: list[float] = []
        self.marked: list[tuple[str, str]] = []

    def due(self, now: float) -> list[tuple[str, str]]:
        due, self.marked = self.marked, []
        return due

    def mark(self, key: tuple[str, str]) -> None:
        self.marked.append(key)

    def look_all(self, keys: list[tuple[str, str]], now: float) -> Any:
        from cronctl.operator.pool_looks import Looked

        self.looks.append(time.monotonic())
        if len(self.looks) == 1:
            return Looked(failed=list(keys))
        return Looked(started=[("team-a", "report")])


def test_a_pool_look_that_failed_is_made_again_a_second_later_in_real_time_whatever_the_schedules_clock() -> None:
    """The schedules' clock may stand still (a test's, set by hand): the API server's coming back
    is the network's time, as a failed reconcile's retry is."""
    async def failing_once() -> tuple[list[float], set[Any]]:
        pools = FailingPools()
        scheduler = Scheduler(cluster=None, clock=None, pools=pools)  # type: ignore[arg-type]
        scheduler._loop = asyncio.get_running_loop()
        pools.mark(("team-a", "reports"))
        assert await scheduler._look_at_pools(600.0)  # the clock never moves from 600
        deadline = time.monotonic() + 5
        while len(pools.looks) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
            await scheduler._look_at_pools(600.0)
        return pools.looks, scheduler._dirty

    looks, dirty = asyncio.run(failing_once())
    assert len(looks) == 2 and 0.9 <= looks[1] - looks[0] < 2.0
    assert dirty == {("team-a", "report")}  # the schedule whose Job started is reconciled


class Refusing:
    """A cluster stand-in that records what a refusal said on the schedule."""

    def __init__(self) -> None:
        self.said: list[Any] = []

    def schedule(self, namespace: str, name: str) -> dict[str, Any]:
        return {"metadata": {"namespace": namespace, "name": name, "uid": "u", "generation": 1}}

    def say_refusal(self, schedule: dict[str, Any], refusal: Any, minute: int) -> None:
        self.said.append((schedule["metadata"]["name"], refusal.event_reason, minute))


class At:
    def seconds(self) -> float:
        return 600.0


def refused_error(body: dict[str, Any]) -> Exception:
    from kubernetes.client.exceptions import ApiException

    from cronctl.operator.apply import WriteRefused
    from cronctl.operator.refusals import refusal_of

    error = ApiException(status=body["code"], reason=body["reason"])
    error.body = json.dumps(body)
    refusal = refusal_of("create", "jobs", "sync-10", error.status, error.reason, error.body)
    assert refusal is not None
    return WriteRefused(refusal, error)


QUOTA = {"kind": "Status", "code": 403, "reason": "Forbidden",
         "message": "jobs.batch \"sync-10\" is forbidden: exceeded quota: jobs, requested: count/jobs.batch=1"}


def test_a_refused_write_is_said_on_the_schedule_each_try_and_logged_once_a_streak_without_a_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    cluster = Refusing()
    scheduler = Scheduler(cluster=cluster, clock=At())  # type: ignore[arg-type]
    key = ("team-a", "sync")
    before = METRICS.refusals.labels("create", "jobs", "Forbidden")._value.get()
    with caplog.at_level("DEBUG", logger="cronctl.operator"):
        for _ in range(5):
            scheduler._failed(key, refused_error(QUOTA))
    lines = [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert len(lines) == 1 and lines[0].exc_info is None
    assert "exceeded quota: jobs" in lines[0].getMessage() and "team-a/sync" in lines[0].getMessage()
    assert cluster.said == [("sync", "FailedCreate", 10)] * 5  # the Event's series counts each try
    assert METRICS.refusals.labels("create", "jobs", "Forbidden")._value.get() == before + 5
    assert METRICS.schedules_refused._value.get() == 1
    scheduler._after(key, 660.0, 601.0)  # let through
    assert METRICS.schedules_refused._value.get() == 0


def test_a_namespace_being_terminated_is_logged_not_said_on_the_schedule(caplog: pytest.LogCaptureFixture) -> None:
    cluster = Refusing()
    scheduler = Scheduler(cluster=cluster, clock=At())  # type: ignore[arg-type]
    terminating = {**QUOTA, "message": "unable to create new content in namespace team-a because it is being "
                   "terminated", "details": {"causes": [{"reason": "NamespaceTerminating"}]}}
    with caplog.at_level("WARNING", logger="cronctl.operator"):
        for _ in range(3):
            scheduler._failed(("team-a", "sync"), refused_error(terminating))
    assert cluster.said == []
    assert len(caplog.records) == 1 and caplog.records[0].exc_info is None
    assert METRICS.schedules_refused._value.get() == 0  # no alert for a namespace going away


def test_an_api_servers_answer_that_is_no_refusal_is_one_line_without_a_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    from kubernetes.client.exceptions import ApiException

    scheduler = Scheduler(cluster=Refusing(), clock=At())  # type: ignore[arg-type]
    with caplog.at_level("WARNING", logger="cronctl.operator"):
        for _ in range(4):
            scheduler._failed(("team-a", "sync"), ApiException(status=403, reason="Forbidden"))  # a read refused
    assert len(caplog.records) == 1 and caplog.records[0].exc_info is None
    assert "403 Forbidden" in caplog.records[0].getMessage()
