"""Events are posted off the launch path, together, and a slow or failing API never blocks a reconcile."""

from __future__ import annotations

import threading
import time
from typing import Any, Mapping

from cronctl.operator.kube.events import EventRecorder, event_name
from cronctl.operator.manifests import EventSpec

SCHEDULE = {"metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "labels": {"big": "x"}}}
Queued = tuple[Mapping[str, Any], EventSpec]


def test_recorded_events_are_posted_in_order_by_the_background_poster() -> None:
    posted: list[Queued] = []
    recorder = EventRecorder(posted.extend, workers=1, gather_seconds=0)
    for reason in ("Launched", "Skipped", "Succeeded"):
        recorder.record(SCHEDULE, EventSpec("Normal", reason, "..."))
    recorder.flush()
    assert [event.reason for _, event in posted] == ["Launched", "Skipped", "Succeeded"]
    assert {key: value for key, value in posted[0][0].items() if key != "event"} == {
        "metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1"}}
    names = [about["event"] for about, _ in posted]
    assert all(name.startswith("sync.") for name in names) and len(set(names)) == 3


def test_the_events_of_a_busy_second_are_posted_together() -> None:
    batches: list[list[Queued]] = []
    recorder = EventRecorder(batches.append, workers=1, gather_seconds=0.5)
    for number in range(100):
        recorder.record(SCHEDULE, EventSpec("Normal", "Launched", f"run {number}"))
    recorder.flush()
    assert [len(batch) for batch in batches] == [100]
    assert [event.message for _, event in batches[0]] == [f"run {number}" for number in range(100)]


def test_an_event_that_comes_alone_is_posted_within_the_gathering_time() -> None:
    posted = threading.Event()
    recorder = EventRecorder(lambda batch: posted.set(), workers=1, gather_seconds=0.05)
    started = time.monotonic()
    recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    assert posted.wait(2) and time.monotonic() - started < 1


def test_recording_never_waits_for_the_api_and_drops_what_does_not_fit() -> None:
    posting, release = threading.Event(), threading.Event()
    recorder = EventRecorder(lambda batch: posting.set() or release.wait(), capacity=2, workers=1,
                             gather_seconds=0)
    recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    assert posting.wait(2)  # the poster is blocked on the API with the first
    started = time.monotonic()
    for _ in range(4):  # two queued, two dropped
        recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    assert time.monotonic() - started < 0.5
    release.set()
    recorder.flush()
    assert recorder.dropped == 2


def test_a_failing_post_does_not_stop_the_poster(caplog: Any) -> None:
    posted: list[str] = []

    def post_all(batch: list[Queued]) -> None:
        if any(event.reason == "Bad" for _, event in batch):
            raise RuntimeError("the API said no")
        posted.extend(event.reason for _, event in batch)

    recorder = EventRecorder(post_all, workers=1, gather_seconds=0)
    recorder.record(SCHEDULE, EventSpec("Warning", "Bad", "..."))
    recorder.flush()
    recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    recorder.flush()
    assert posted == ["Launched"]
    assert "posting 1 event(s) failed, Bad on sync the first" in caplog.text


def test_a_post_that_failed_for_a_passing_reason_is_tried_again_under_the_same_name() -> None:
    tries: list[list[str]] = []

    def post_all(batch: list[Queued]) -> None:
        tries.append([about["event"] for about, _ in batch])
        if len(tries) < 3:
            raise ConnectionResetError(104, "Connection reset by peer")

    waited: list[float] = []
    recorder = EventRecorder(post_all, workers=1, gather_seconds=0, sleep=waited.append)
    recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    recorder.flush()
    assert len(tries) == 3 and tries[0] == tries[1] == tries[2]
    assert waited == [0, 0.1, 0.2]  # the gathering, then the backoff: 0.1 s doubling


def test_event_names_never_repeat() -> None:
    assert len({event_name("sync") for _ in range(10_000)}) == 10_000


def test_an_event_name_fits_a_dns_subdomain_whatever_the_schedules_name() -> None:
    assert len(event_name("x" * 253)) <= 253
