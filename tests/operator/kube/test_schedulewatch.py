"""The CronSchedules' watch: what it caches, and which events make the loop look at a schedule.

The API's side is a recording stand-in here (what it answers is the API's
contract; the list/watch protocol itself is ``test_jobwatch``'s);
``tests/kube/test_schedulewatch.py`` runs the watch against the API server.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from cronctl.operator.kube.cache import Cache
from cronctl.operator.kube.schedulewatch import ScheduleWatch, schedule_watches
from cronctl.operator.loop import needs_a_look

SELECTOR = "!cronctl.dev/shard"


def schedule(name: str, version: str, generation: int = 1, observed: int | None = 1, namespace: str = "team-a",
             **annotations: str) -> dict[str, Any]:
    status = {} if observed is None else {"observedGeneration": observed}
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": version, "generation": generation,
                         "uid": f"uid-{name}", "annotations": annotations},
            "spec": {"schedule": "* * * * *"}, "status": status}


def event(kind: str, body: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": body}).encode() + b"\n"


class Stream:
    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.lines)

    def release_conn(self) -> None:
        pass


class Api:
    """Answers LISTs with ``listings`` and WATCHes with ``streams``, in order, and records the calls."""

    def __init__(self, listings: list[dict[str, Any]], streams: list[Stream]) -> None:
        self.listings, self.streams = listings, streams
        self.calls: list[tuple[Any, ...]] = []

    def list_custom_object_for_all_namespaces(self, group: str, version: str, plural: str,
                                              label_selector: str) -> dict[str, Any]:
        self.calls.append(("list", None, (group, version, plural), label_selector))
        return self.listings.pop(0)

    def list_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                      label_selector: str) -> dict[str, Any]:
        self.calls.append(("list", namespace, (group, version, plural), label_selector))
        return self.listings.pop(0)

    def watch_custom_object_for_all_namespaces(self, group: str, version: str, plural: str, label_selector: str,
                                               resource_version: str | None, timeout_seconds: int) -> Stream:
        self.calls.append(("watch", None, (group, version, plural), label_selector, resource_version))
        return self.streams.pop(0)

    def watch_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                       label_selector: str, resource_version: str | None,
                                       timeout_seconds: int) -> Stream:
        self.calls.append(("watch", namespace, (group, version, plural), label_selector, resource_version))
        return self.streams.pop(0)


class Loop:
    """Stands for the loop (``Scheduler``): what it was asked to look at and to forget."""

    def __init__(self, *known: tuple[str, str]) -> None:
        self.known = set(known)
        self.touched: list[tuple[str, str]] = []
        self.forgotten: list[tuple[str, str]] = []

    def look(self, body: dict[str, Any]) -> None:  # as ``Scheduler.look`` does
        key = (body["metadata"]["namespace"], body["metadata"]["name"])
        if needs_a_look(body, key in self.known):
            self.touch(key)

    def touch(self, key: tuple[str, str]) -> None:
        self.known.add(key)
        self.touched.append(key)

    def forget(self, key: tuple[str, str]) -> None:
        self.known.discard(key)
        self.forgotten.append(key)


def listing(version: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"resourceVersion": version}, "items": list(items)}


def a_watch(api: Api, loop: Loop, cache: Cache | None = None, namespace: str | None = None) -> ScheduleWatch:
    return ScheduleWatch(api, cache or Cache(), namespace, SELECTOR, loop)  # type: ignore[arg-type]


SYNC, NIGHTLY = ("team-a", "sync"), ("team-a", "nightly")


def test_the_list_caches_every_schedule_and_the_loop_looks_at_each_and_the_watch_starts_from_its_version() -> None:
    api, loop = Api([listing("100", schedule("sync", "90"), schedule("nightly", "91"))], [Stream([])]), Loop()
    watch = a_watch(api, loop)
    assert watch.list() == 2
    watch.watch_once()
    assert watch.cache.schedule(*SYNC) is not None and watch.cache.schedule(*NIGHTLY) is not None
    assert sorted(loop.touched) == [NIGHTLY, SYNC]
    assert api.calls == [("list", None, ("cronctl.dev", "v1", "cronschedules"), SELECTOR),
                         ("watch", None, ("cronctl.dev", "v1", "cronschedules"), SELECTOR, "100")]


def test_the_operators_own_status_patch_is_cached_and_asks_for_no_look() -> None:
    loop = Loop(SYNC)
    watch = a_watch(Api([], [Stream([event("MODIFIED", schedule("sync", "101"))])]), loop)
    watch.resource_version = "100"
    watch.watch_once()
    assert watch.cache.schedule(*SYNC)["metadata"]["resourceVersion"] == "101"
    assert loop.touched == [] and watch.resource_version == "101"


def test_a_new_schedule_an_edited_spec_a_trigger_and_a_backfill_each_ask_for_a_look() -> None:
    loop = Loop(SYNC)
    watch = a_watch(Api([], [Stream([
        event("ADDED", schedule("nightly", "101", observed=None)),  # new: no status yet
        event("MODIFIED", schedule("sync", "102", generation=2, observed=1)),  # kubectl edit
        event("MODIFIED", schedule("sync", "103", generation=2, observed=2,
                                   **{"cronctl.dev/trigger": "2024-03-01T00:00:00Z"})),
        event("MODIFIED", schedule("sync", "104", generation=2, observed=2,
                                   **{"cronctl.dev/backfill": "2024-03-01T00:00:00Z/2024-03-01T01:00:00Z"})),
    ])]), loop)
    watch.resource_version = "100"
    watch.watch_once()
    assert loop.touched == [NIGHTLY, SYNC, SYNC, SYNC]


def test_a_deleted_schedule_leaves_the_cache_and_the_loop_with_its_jobs() -> None:
    cache, loop = Cache(), Loop(SYNC)
    cache.put_schedule(schedule("sync", "100"))
    cache.put_job({"metadata": {"name": "sync-1", "namespace": "team-a", "resourceVersion": "99",
                                "labels": {"cronctl.dev/schedule": "sync"}}})
    watch = a_watch(Api([], [Stream([event("DELETED", schedule("sync", "101"))])]), loop, cache)
    watch.resource_version = "100"
    watch.watch_once()
    assert cache.schedule(*SYNC) is None and cache.jobs(*SYNC) == []
    assert loop.forgotten == [SYNC] and loop.touched == []


def test_a_list_again_after_gone_forgets_the_schedules_deleted_meanwhile_in_its_namespace_only() -> None:
    cache, loop = Cache(), Loop(SYNC, NIGHTLY, ("team-b", "sync"))
    for body in (schedule("sync", "90"), schedule("nightly", "91"), schedule("sync", "92", namespace="team-b")):
        cache.put_schedule(body)
    watch = a_watch(Api([listing("300", schedule("sync", "90"))], []), loop, cache, namespace="team-a")
    watch.list()
    assert cache.schedule(*NIGHTLY) is None and loop.forgotten == [NIGHTLY]
    assert cache.schedule("team-b", "sync") is not None
    assert loop.touched == []  # sync is known and unchanged: its wake-up time stands


def test_needs_a_look() -> None:
    assert needs_a_look(schedule("sync", "1"), known=False)
    assert not needs_a_look(schedule("sync", "1"), known=True)
    assert needs_a_look(schedule("sync", "1", generation=3, observed=2), known=True)
    assert needs_a_look(schedule("sync", "1", observed=None), known=True)


def test_one_watch_per_namespace_or_one_for_the_cluster() -> None:
    api, cache, loop = Api([], []), Cache(), Loop()
    assert [w.namespace for w in schedule_watches(api, cache, ["a", "b"], SELECTOR, loop)] == ["a", "b"]  # type: ignore[arg-type]
    assert [w.namespace for w in schedule_watches(api, cache, [], SELECTOR, loop)] == [None]  # type: ignore[arg-type]


def test_a_missing_crd_is_said_in_one_line_with_what_to_do(caplog: Any, monkeypatch: Any) -> None:
    from kubernetes.client.exceptions import ApiException

    monkeypatch.setattr("cronctl.operator.kube.watch.RETRY_SECONDS", (0.0,))
    api, loop = Api([], []), Loop()
    watch = a_watch(api, loop)

    calls: list[int] = []

    def not_found(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 2:
            watch.stop()  # one failure said, then the loop ends
        raise ApiException(status=404, reason="Not Found")

    api.list_custom_object_for_all_namespaces = not_found  # type: ignore[method-assign]
    with caplog.at_level("WARNING", logger="cronctl.operator"):
        watch.run()
    [record] = caplog.records
    assert record.getMessage() == ("the CronSchedules' watch failed (404 Not Found: is the CronSchedule CRD installed? "
                                   "kubectl apply -f crds/cronschedule.yaml); again in 0 s")
