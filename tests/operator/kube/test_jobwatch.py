"""The Jobs' watch: list, watch from the list's version, bookmarks, Gone, errors.

The API's side is a recording stand-in here (what it answers is the API's
contract); ``tests/kube/test_operator.py`` runs the watch against the API server.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Iterator

import pytest

from cronctl.operator.kube.cache import Cache
from cronctl.operator.kube.jobwatch import GONE, Gone, JobWatch, watches

SELECTOR = "cronctl.dev/schedule,!cronctl.dev/shard"


def job(name: str, version: str, schedule: str = "sync", namespace: str = "team-a", **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": version,
                         "labels": {"cronctl.dev/schedule": schedule}}, "spec": {"suspend": False}, "status": status}


ENDED = {"conditions": [{"type": "Complete", "status": "True"}]}


def event(kind: str, body: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": body}).encode() + b"\n"


class Stream:
    """A watch's answer: its lines, then its end (the server's timeout)."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines, self.released, self.shut = lines, False, False

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.lines)

    def release_conn(self) -> None:
        self.released = True

    def shutdown(self) -> None:
        self.shut = True


class Api:
    """Answers LISTs with ``listings`` and WATCHes with ``streams``, in order, and records the calls."""

    def __init__(self, listings: list[dict[str, Any]], streams: list[Stream | Exception]) -> None:
        self.listings, self.streams = listings, streams
        self.calls: list[tuple[Any, ...]] = []

    def list_job_for_all_namespaces(self, label_selector: str) -> dict[str, Any]:
        self.calls.append(("list", None, label_selector))
        return self.listings.pop(0)

    def list_namespaced_job(self, namespace: str, label_selector: str) -> dict[str, Any]:
        self.calls.append(("list", namespace, label_selector))
        return self.listings.pop(0)

    def watch_job_for_all_namespaces(self, label_selector: str, resource_version: str | None,
                                     timeout_seconds: int) -> Stream:
        return self._watch(None, label_selector, resource_version)

    def watch_namespaced_job(self, namespace: str, label_selector: str, resource_version: str | None,
                             timeout_seconds: int) -> Stream:
        return self._watch(namespace, label_selector, resource_version)

    def _watch(self, namespace: str | None, selector: str, version: str | None) -> Stream:
        self.calls.append(("watch", namespace, selector, version))
        answer = self.streams.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def listing(version: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"resourceVersion": version}, "items": list(items)}


class Recorder:
    def __init__(self) -> None:
        self.looked_at: list[tuple[str, str]] = []

    def __call__(self, key: tuple[str, str]) -> None:
        self.looked_at.append(key)


def a_watch(api: Api, cache: Cache | None = None, namespace: str | None = None) -> tuple[JobWatch, Recorder]:
    looked_at = Recorder()
    return JobWatch(api, cache or Cache(), namespace, SELECTOR, looked_at), looked_at  # type: ignore[arg-type]


def names(cache: Cache, schedule: str = "sync") -> list[str]:
    return sorted(j["metadata"]["name"] for j in cache.jobs("team-a", schedule))


def test_the_list_fills_the_cache_and_the_watch_starts_from_its_version() -> None:
    api = Api([listing("100", job("sync-1", "90"))], [Stream([])])
    watch, _ = a_watch(api)
    assert watch.list() == 1
    watch.watch_once()
    assert names(watch.cache) == ["sync-1"]
    assert api.calls == [("list", None, SELECTOR), ("watch", None, SELECTOR, "100")]


def test_added_and_modified_jobs_are_cached_and_only_an_end_or_a_delete_asks_for_a_look() -> None:
    api = Api([], [Stream([event("ADDED", job("sync-1", "101")),
                           event("MODIFIED", job("sync-1", "102", active=1)),
                           event("MODIFIED", job("sync-1", "103", **ENDED)),
                           event("ADDED", job("sync-2", "104")),
                           event("DELETED", job("sync-2", "105"))])])
    watch, looked_at = a_watch(api)
    watch.resource_version = "100"
    watch.watch_once()
    [kept] = watch.cache.jobs("team-a", "sync")
    assert kept["metadata"]["resourceVersion"] == "103" and kept["status"] == ENDED
    assert looked_at.looked_at == [("team-a", "sync"), ("team-a", "sync")]  # the end, the delete
    assert watch.resource_version == "105"


def test_a_pooled_job_let_run_by_its_pool_asks_for_a_look_so_its_status_stops_saying_queued() -> None:
    waiting = job("sync-1", "101")
    waiting["spec"]["suspend"], waiting["metadata"]["labels"]["cronctl.dev/pool"] = True, "reports"
    running = json.loads(json.dumps(waiting))
    running["spec"]["suspend"], running["metadata"]["resourceVersion"] = False, "102"
    unpooled = job("sync-2", "103")
    unpooled["spec"]["suspend"] = True
    resumed = json.loads(json.dumps(unpooled))
    resumed["spec"]["suspend"], resumed["metadata"]["resourceVersion"] = False, "104"  # a jittered Job's resume
    api = Api([], [Stream([event("ADDED", waiting), event("MODIFIED", running), event("ADDED", unpooled),
                           event("MODIFIED", resumed)])])
    watch, looked_at = a_watch(api)
    watch.resource_version = "100"
    watch.watch_once()
    assert looked_at.looked_at == [("team-a", "sync")]  # the pooled Job let run, and nothing else


def test_a_bookmark_moves_the_version_on_and_nothing_else() -> None:
    bookmark = {"kind": "Job", "apiVersion": "batch/v1", "metadata": {"resourceVersion": "250"}}
    api = Api([], [Stream([event("BOOKMARK", bookmark), b"\n"]), Stream([])])
    watch, looked_at = a_watch(api)
    watch.resource_version = "100"
    watch.watch_once()
    watch.watch_once()
    assert watch.resource_version == "250" and looked_at.looked_at == []
    assert api.calls[-1] == ("watch", None, SELECTOR, "250")  # the next watch resumes from the bookmark


def test_gone_means_list_again_and_the_list_replaces_the_cache() -> None:
    cache = Cache()
    cache.put_jobs([job("sync-1", "90"), job("sync-2", "91"), job("other-1", "92", schedule="other")])
    api = Api([listing("300", job("sync-1", "90"), job("other-1", "295", schedule="other"))],
              [Stream([event("ERROR", {"kind": "Status", "code": GONE, "message": "too old resource version"})])])
    watch, looked_at = a_watch(api, cache)
    watch.resource_version = "100"
    with pytest.raises(Gone):
        watch.watch_once()
    watch.list()
    assert names(cache) == ["sync-1"]  # sync-2 was deleted while the watch was away
    assert cache.jobs("team-a", "other")[0]["metadata"]["resourceVersion"] == "295"
    assert sorted(looked_at.looked_at) == [("team-a", "other"), ("team-a", "sync")]


def test_gone_as_the_watchs_answer_status_is_gone_too() -> None:
    from kubernetes.client.exceptions import ApiException

    watch, _ = a_watch(Api([], [ApiException(status=GONE, reason="Gone")]))
    watch.resource_version = "1"
    with pytest.raises(Gone):
        watch.watch_once()


def test_a_namespaced_list_replaces_that_namespace_only() -> None:
    cache = Cache()
    cache.put_jobs([job("sync-1", "1"), job("sync-1", "2", namespace="team-b")])
    watch, _ = a_watch(Api([listing("5")], []), cache, namespace="team-a")
    watch.list()
    assert cache.jobs("team-a", "sync") == [] and len(cache.jobs("team-b", "sync")) == 1


def test_another_error_event_is_an_error_of_the_watch() -> None:
    from kubernetes.client.exceptions import ApiException

    api = Api([], [Stream([event("ERROR", {"kind": "Status", "code": 500, "reason": "InternalError",
                                           "message": "etcd"})])])
    watch, _ = a_watch(api)
    watch.resource_version = "1"
    with pytest.raises(ApiException):
        watch.watch_once()


def test_the_thread_lists_watches_lists_again_after_gone_and_retries_after_errors(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cronctl.operator.kube.watch.RETRY_SECONDS", (0.0,))
    gone = Stream([event("ERROR", {"kind": "Status", "code": GONE, "message": "too old"})])
    api = Api([listing("10"), listing("20")],
              [Stream([event("ADDED", job("sync-1", "11"))]), gone, ConnectionResetError("reset"), Stream([])])
    watch, _ = a_watch(api)
    original = api._watch

    def watch_and_stop_at_the_end(*args: Any) -> Stream:
        if not api.streams[1:]:
            watch.stop()  # the last answer: the loop ends after it
        return original(*args)

    api._watch = watch_and_stop_at_the_end  # type: ignore[method-assign]
    thread = threading.Thread(target=watch.run)
    thread.start()
    thread.join(5)
    assert not thread.is_alive()
    assert [call[0] + (f"@{call[3]}" if call[0] == "watch" else "") for call in api.calls] == [
        "list", "watch@10", "watch@11", "list", "watch@20", "watch@20"]


def test_stop_wakes_a_blocked_read_by_shutting_its_socket() -> None:
    watch, _ = a_watch(Api([], []))
    stream = Stream([])
    watch._response = stream
    watch.stop()
    assert stream.shut


def test_one_watch_per_namespace_or_one_for_the_cluster() -> None:
    api, cache = Api([], []), Cache()
    assert [w.namespace for w in watches(api, cache, ["a", "b"], SELECTOR, print)] == ["a", "b"]  # type: ignore[arg-type]
    assert [w.namespace for w in watches(api, cache, [], SELECTOR, print)] == [None]  # type: ignore[arg-type]
