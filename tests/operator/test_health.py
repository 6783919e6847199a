"""The probe's verdicts (``operator.health``): alive, ready and fresh, as functions of the times
the loop and the watches record, the scheduler task's state and now (monotonic seconds); then
what the shells record for them, kopf's probe handler, the process's end when the scheduler's
task dies, and the clock the Events are stamped by."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from typing import Any, Awaitable, Callable

import kopf
import pytest

from cronctl.operator import handlers, health
from cronctl.operator.handlers import Running
from cronctl.operator.health import FAILED, ENDED, RUNNING, SchedulerSeen, WatchSeen
from cronctl.operator.kube.event_series import Written
from cronctl.operator.kube.events import EventRecorder
from cronctl.operator.kube.watch import Watch
from cronctl.operator.loop import LEADER_POLL_SECONDS, MAX_IDLE_SECONDS, Scheduler
from cronctl.operator.manifests import EventSpec

NOW = 10_000.0
SCHEDULE = {"metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1"}}


@pytest.mark.parametrize("task, passed_ago, said", [
    (RUNNING, 0.0, None),
    (RUNNING, MAX_IDLE_SECONDS, None),  # asleep as long as it ever sleeps
    (RUNNING, 120.0, None),  # a long pass (a big batch, a slow API server) is not a stuck loop
    (RUNNING, health.PASS_LATE_SECONDS, None),
    (RUNNING, health.PASS_LATE_SECONDS + 1, "the scheduler has not passed for 181 s"),
    (FAILED, 0.0, "the scheduler's task failed"),  # dead, whatever its last pass
    (ENDED, 0.0, "the scheduler's task ended"),
])
def test_alive_while_the_task_runs_and_passes(task: str, passed_ago: float, said: str | None) -> None:
    problem = health.not_alive(SchedulerSeen(task, NOW - passed_ago), NOW)
    assert (problem is None) == (said is None)
    assert said is None or problem is not None and problem.startswith(said)


def test_late_is_far_longer_than_the_loops_longest_sleep() -> None:
    assert health.PASS_LATE_SECONDS >= 5 * MAX_IDLE_SECONDS


@pytest.mark.parametrize("watches, ready", [
    ([], True),
    ([WatchSeen("Jobs", NOW - 5, None)], True),  # listed, no event since: synced
    ([WatchSeen("Jobs", NOW - 5, NOW - 1), WatchSeen("CronSchedules", None, None)], False),
    ([WatchSeen("Jobs", None, NOW - 1)], False),  # an event without a list does not make a cache
])
def test_ready_once_every_watch_listed(watches: list[WatchSeen], ready: bool) -> None:
    assert health.synced(watches) is ready


@pytest.mark.parametrize("listed_ago, heard_ago, expected", [
    (None, None, {"synced": False, "lastHeardSecondsAgo": None}),
    (300.0, None, {"synced": True, "lastHeardSecondsAgo": 300.0}),
    (300.0, 2.04, {"synced": True, "lastHeardSecondsAgo": 2.0}),  # an event or bookmark since the list
    (3.0, 60.0, {"synced": True, "lastHeardSecondsAgo": 3.0}),  # listed again since (after Gone)
])
def test_a_watch_is_as_fresh_as_the_newest_it_heard(listed_ago: float | None, heard_ago: float | None,
                                                     expected: dict[str, object]) -> None:
    seen = WatchSeen("Jobs", None if listed_ago is None else NOW - listed_ago,
                     None if heard_ago is None else NOW - heard_ago)
    assert health.freshness(seen, NOW) == expected


def test_the_report_says_the_last_pass_the_watches_and_a_follower_is_healthy() -> None:
    report = health.report(SchedulerSeen(RUNNING, NOW - 0.5),
                           [WatchSeen("Jobs of team-a", NOW - 9, NOW - 1), WatchSeen("CronSchedules of team-a", None,
                                                                                      None)],
                           leading=False, now=NOW)
    assert report == {"scheduler": {"task": RUNNING, "lastPassSecondsAgo": 0.5},
                      "watches": {"Jobs of team-a": {"synced": True, "lastHeardSecondsAgo": 1.0},
                                  "CronSchedules of team-a": {"synced": False, "lastHeardSecondsAgo": None}},
                      "ready": False, "leading": False}


# -- what the shells record and do --------------------------------------------------------------


class _Listed(Watch):
    what = "Jobs"

    def _list(self) -> dict[str, Any]:
        return {"items": [], "metadata": {"resourceVersion": "1"}}

    def replace(self, items: list[dict[str, Any]]) -> None:
        pass

    def changed(self, body: dict[str, Any]) -> None:
        pass


def test_a_watch_records_its_list_and_each_event_or_bookmark() -> None:
    watch = _Listed("team-a", "")
    assert (watch.name, watch.listed_at, watch.heard_at) == ("Jobs of team-a", None, None)
    before = time.monotonic()
    watch.list()
    assert watch.listed_at is not None and watch.listed_at >= before and watch.heard_at is None
    watch.handle({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "2"}}})
    assert watch.heard_at is not None and watch.heard_at >= watch.listed_at


def test_a_follower_passes_too() -> None:
    """While another replica holds the Lease the loop waits for it, and says it is alive."""
    scheduler = Scheduler(cluster=None, clock=None, leading=threading.Event())  # type: ignore[arg-type]
    made = scheduler.passed_at

    async def follow_a_while() -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(scheduler.run(), timeout=3 * LEADER_POLL_SECONDS)

    asyncio.run(follow_a_while())
    assert scheduler.passed_at >= made + LEADER_POLL_SECONDS


class _Passing:
    def __init__(self, passed_at: float) -> None:
        self.passed_at = passed_at


def _probe(running: Running) -> dict[str, Any]:
    return asyncio.run(handlers.health_probe(memo=kopf.Memo(running=running)))


def _task(body: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
    """A task run to its end (or left running: ``body`` never returns)."""
    async def made() -> asyncio.Task[None]:
        task = asyncio.create_task(body())
        await asyncio.sleep(0.01)
        return task
    return asyncio.run(made())


async def _fails() -> None:
    raise RuntimeError("a bug in the loop")


def test_the_probe_reports_a_running_scheduler_and_fails_a_dead_or_stuck_one() -> None:
    watch = _Listed(None, "")
    watch.list()

    async def probe_while_running(passed_at: float) -> dict[str, Any]:
        task = asyncio.create_task(asyncio.sleep(60))
        try:
            return await handlers.health_probe(memo=kopf.Memo(running=Running(task, [watch], None, None,
                                                                              _Passing(passed_at))))  # type: ignore[arg-type]
        finally:
            task.cancel()

    answer = asyncio.run(probe_while_running(time.monotonic()))
    assert answer["scheduler"]["task"] == RUNNING and answer["ready"] is True and answer["leading"] is True
    assert answer["watches"]["Jobs"]["synced"] is True
    with pytest.raises(kopf.PermanentError, match="has not passed for"):
        asyncio.run(probe_while_running(time.monotonic() - health.PASS_LATE_SECONDS - 5))
    with pytest.raises(kopf.PermanentError, match="task failed"):
        _probe(Running(_task(_fails), [watch], None, None, _Passing(time.monotonic())))  # type: ignore[arg-type]


def test_a_scheduler_that_dies_is_said_once_with_its_traceback_and_stops_the_operator(
        caplog: pytest.LogCaptureFixture) -> None:
    memo = kopf.Memo(stop=asyncio.Event(), exit_status=0)

    async def die() -> None:
        task = asyncio.create_task(_fails())
        task.add_done_callback(lambda ended: handlers._scheduler_ended(ended, memo))
        await asyncio.wait_for(memo.stop.wait(), timeout=5)

    with caplog.at_level(logging.ERROR, logger="cronctl.operator"):
        asyncio.run(die())
    assert memo.exit_status == handlers.SCHEDULER_DIED != 0
    [record] = [r for r in caplog.records if r.name == "cronctl.operator"]
    assert "the scheduler stopped" in record.getMessage() and "a bug in the loop" in str(record.exc_info[1])


def test_a_scheduler_cancelled_by_the_operators_stop_is_no_failure(caplog: pytest.LogCaptureFixture) -> None:
    memo = kopf.Memo(stop=asyncio.Event(), exit_status=0)

    async def stop() -> None:
        task = asyncio.create_task(asyncio.sleep(60))
        task.add_done_callback(lambda ended: handlers._scheduler_ended(ended, memo))
        await asyncio.sleep(0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    with caplog.at_level(logging.ERROR):
        asyncio.run(stop())
    assert memo.exit_status == 0 and not memo.stop.is_set()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


def test_the_events_are_stamped_by_the_operators_clock() -> None:
    """Series timed, and Events' timestamps written, by the clock the operator fires by."""
    posted: list[Written] = []
    recorder = EventRecorder(posted.extend, workers=1, gather_seconds=0, look_seconds=None)
    recorder.use_clock(lambda: 1_709_251_200.0)  # 2024-03-01T00:00:00Z
    recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "launched run 1"))
    assert recorder.flush(timeout=5)
    assert [(w.first, w.last) for w in posted] == [(1_709_251_200.0, 1_709_251_200.0)]


def test_a_failed_probe_is_one_line_of_kopfs_not_a_traceback_of_aiohttps_too() -> None:
    def record(error: BaseException | None) -> logging.LogRecord:
        return logging.LogRecord("aiohttp.server", logging.ERROR, __file__, 1, "Error handling request", None,
                                 (type(error), error, None) if error is not None else None)

    try:
        try:
            raise kopf.PermanentError("the scheduler's task failed")
        except kopf.PermanentError as said:
            raise RuntimeError("One or more handlers failed.") from said
    except RuntimeError as failed:
        probe_failed = failed
    assert handlers._probe_failure_said(record(probe_failed)) is False
    assert handlers._probe_failure_said(record(ValueError("a bug in a request"))) is True
    assert handlers._probe_failure_said(record(None)) is True
