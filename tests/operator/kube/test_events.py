"""Events are posted off the launch path, together, and a slow or failing API never blocks a reconcile;
isomorphic Events are one Event with a count (``test_event_series`` has the series' rules)."""

from __future__ import annotations

import threading
import time
from typing import Any, Mapping

from cronctl.operator.kube.event_series import Written
from cronctl.operator.kube.events import EventRecorder, event_name
from cronctl.operator.manifests import EventSpec

SCHEDULE = {"metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "labels": {"big": "x"}}}


def schedule(number: int) -> Mapping[str, Any]:
    return {"metadata": {"name": f"s{number}", "namespace": "team-a", "uid": f"uid-{number}"}}


def recorder_of(post_all: Any, **options: Any) -> EventRecorder:
    """A recorder whose series' counts are written only when asked (no looking thread)."""
    return EventRecorder(post_all, workers=1, look_seconds=None, **options)


def test_recorded_events_are_posted_in_order_by_the_background_poster() -> None:
    posted: list[Written] = []
    recorder = recorder_of(posted.extend, gather_seconds=0)
    for reason in ("Launched", "Skipped", "Succeeded"):
        recorder.record(SCHEDULE, EventSpec("Normal", reason, "..."))
    recorder.flush()
    assert [written.event.reason for written in posted] == ["Launched", "Skipped", "Succeeded"]
    assert all(written.new and written.count == 1 for written in posted)
    assert {key: value for key, value in posted[0].about.items() if key != "event"} == {
        "metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1"}}
    names = [written.about["event"] for written in posted]
    assert all(name.startswith("sync.") for name in names) and len(set(names)) == 3


def test_the_events_of_a_busy_second_are_posted_together() -> None:
    batches: list[list[Written]] = []
    recorder = recorder_of(batches.append, gather_seconds=0.5)
    for number in range(100):
        recorder.record(schedule(number), EventSpec("Normal", "Launched", f"run {number}"))
    recorder.flush()
    assert [len(batch) for batch in batches] == [100]
    assert [written.event.message for written in batches[0]] == [f"run {number}" for number in range(100)]


def test_an_every_minute_schedules_launches_are_one_event_with_a_count() -> None:
    """A create, the series' start at once, then counts only: written when due, or at stop."""
    posted: list[Written] = []
    clock = [1000.0]
    recorder = recorder_of(posted.extend, gather_seconds=0, now=lambda: clock[0])
    for minute in range(1, 31):
        recorder.record(SCHEDULE, EventSpec("Normal", "Launched", f"launched run {minute}"))
        clock[0] += 60
    recorder.flush(timeout=5)
    assert [(w.new, w.count, w.event.message) for w in posted] == [
        (True, 1, "launched run 1"), (False, 2, "launched run 2"), (False, 30, "launched run 30")]
    assert len({w.about["event"] for w in posted}) == 1  # one Event, written three times for 30 launches


def test_an_event_that_comes_alone_is_posted_within_the_gathering_time() -> None:
    posted = threading.Event()
    recorder = recorder_of(lambda batch: posted.set(), gather_seconds=0.05)
    started = time.monotonic()
    recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    assert posted.wait(2) and time.monotonic() - started < 1


def test_recording_never_waits_for_the_api_and_drops_what_does_not_fit() -> None:
    posting, release = threading.Event(), threading.Event()
    recorder = recorder_of(lambda batch: posting.set() or release.wait(), capacity=2, gather_seconds=0)
    recorder.record(schedule(0), EventSpec("Normal", "Launched", "..."))
    assert posting.wait(2)  # the poster is blocked on the API with the first
    started = time.monotonic()
    for number in range(1, 5):  # two queued, two dropped
        recorder.record(schedule(number), EventSpec("Normal", "Launched", "..."))
    assert time.monotonic() - started < 0.5
    release.set()
    recorder.flush()
    assert recorder.dropped == 2


def test_a_failing_post_does_not_stop_the_poster(caplog: Any) -> None:
    posted: list[str] = []

    def post_all(batch: list[Written]) -> None:
        if any(written.event.reason == "Bad" for written in batch):
            raise RuntimeError("the API said no")
        posted.extend(written.event.reason for written in batch)

    recorder = recorder_of(post_all, gather_seconds=0)
    recorder.record(SCHEDULE, EventSpec("Warning", "Bad", "..."))
    recorder.flush()
    recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    recorder.flush()
    assert posted == ["Launched"]
    assert "posting 1 event(s) failed, Bad on sync the first" in caplog.text


def test_a_post_that_failed_for_a_passing_reason_is_tried_again_under_the_same_name() -> None:
    tries: list[list[str]] = []

    def post_all(batch: list[Written]) -> None:
        tries.append([written.about["event"] for written in batch])
        if len(tries) < 3:
            raise ConnectionResetError(104, "Connection reset by peer")

    waited: list[float] = []
    recorder = recorder_of(post_all, gather_seconds=0, sleep=waited.append)
    recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    recorder.flush()
    assert len(tries) == 3 and tries[0] == tries[1] == tries[2]
    assert waited == [0, 0.1, 0.2]  # the gathering, then the backoff: 0.1 s doubling


def test_event_names_never_repeat() -> None:
    assert len({event_name("sync") for _ in range(10_000)}) == 10_000


def test_an_event_name_fits_a_dns_subdomain_whatever_the_schedules_name() -> None:
    assert len(event_name("x" * 253)) <= 253
