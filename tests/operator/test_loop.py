"""The scheduling loop: the busy second's releases go out with no collection pause; a watch's
touch from any thread wakes it."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from typing import Any

from cronctl.operator.loop import Scheduler, no_collection_pauses
from cronctl.operator.plan import Plan

from .test_staging import A_MINUTE_BEFORE_THE_HOUR, Worlds, run_one_batch, seen


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


def test_a_failed_reconcile_is_counted_and_retried_a_minute_later() -> None:
    from cronctl.operator.metrics import METRICS

    scheduler = Scheduler(cluster=None, clock=None)  # type: ignore[arg-type]
    before = METRICS.reconcile_errors._value.get()
    retry = scheduler._finish_one((("team-a", "sync"), RuntimeError("the API server said 500"), 600.0))
    assert retry == 660.0
    assert METRICS.reconcile_errors._value.get() == before + 1
