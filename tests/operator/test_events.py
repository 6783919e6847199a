"""Events are posted off the launch path, and a slow or failing API never blocks a reconcile."""

from __future__ import annotations

import threading
from typing import Any, Mapping

from cronctl.operator.events import EventRecorder
from cronctl.operator.manifests import EventSpec

SCHEDULE = {"metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "labels": {"big": "x"}}}


def test_recorded_events_are_posted_in_order_by_the_background_poster() -> None:
    posted: list[tuple[Mapping[str, Any], str]] = []
    recorder = EventRecorder(lambda schedule, event: posted.append((schedule, event.reason)), workers=1)
    for reason in ("Launched", "Skipped", "Succeeded"):
        recorder.record(SCHEDULE, EventSpec("Normal", reason, "..."))
    recorder.flush()
    assert [reason for _, reason in posted] == ["Launched", "Skipped", "Succeeded"]
    assert posted[0][0] == {"metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1"}}


def test_recording_never_waits_for_the_api_and_drops_what_does_not_fit() -> None:
    release = threading.Event()
    recorder = EventRecorder(lambda schedule, event: release.wait(), capacity=2, workers=1)
    for _ in range(5):  # one being posted (blocked), two queued, two dropped
        recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    release.set()
    recorder.flush()
    assert recorder.dropped in (2, 3)  # 3 if the poster had not taken the first one yet


def test_a_failing_post_does_not_stop_the_poster() -> None:
    posted: list[str] = []

    def post(schedule: Mapping[str, Any], event: EventSpec) -> None:
        if event.reason == "Bad":
            raise RuntimeError("the API said no")
        posted.append(event.reason)

    recorder = EventRecorder(post, workers=1)
    recorder.record(SCHEDULE, EventSpec("Warning", "Bad", "..."))
    recorder.record(SCHEDULE, EventSpec("Normal", "Launched", "..."))
    recorder.flush()
    assert posted == ["Launched"]
