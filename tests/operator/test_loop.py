"""The scheduling loop's passes: the busy second's releases go out with no collection pause."""

from __future__ import annotations

import gc
from typing import Any

from cronctl.operator.loop import no_collection_pauses
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
