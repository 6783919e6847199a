"""The scheduling loop's passes: the busy second's releases go out with no collection pause."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from cronctl.operator.loop import Scheduler, no_collection_pauses
from cronctl.operator.plan import Plan

from .test_staging import A_MINUTE_BEFORE_THE_HOUR, THE_HOUR, StoppedClock, Worlds, seen


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

    async def one_batch() -> None:
        scheduler = Scheduler(cluster, StoppedClock(THE_HOUR * 60 + 0.1))  # type: ignore[arg-type]
        for key in worlds:
            scheduler.touch(key)
        task = asyncio.create_task(scheduler.run())
        for _ in range(3000):
            await asyncio.sleep(0.01)
            if sum(kind == "PostEvent" for kind, _ in cluster.collecting) == len(worlds):
                break
        task.cancel()
        scheduler._threads.shutdown(wait=True)

    assert gc.isenabled()
    asyncio.run(one_batch())
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
