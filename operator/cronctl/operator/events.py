"""Kubernetes Events, posted off the launch path.

An Event is a courtesy to whoever runs ``kubectl describe``; a Job created a
second late is a broken promise. So, as client-go's event recorder does, a
reconcile only queues its Events, and a couple of background threads post
them. When thousands of schedules fire in one minute, the API server then
spends its effort on Jobs and status first, and the Events follow. When the
queue is full (the API server cannot keep up at all), Events are dropped and
counted, never waited for.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable, Mapping

from .manifests import EventSpec

POSTERS = 2  # threads that post Events

log = logging.getLogger("cronctl.operator")

Post = Callable[[Mapping[str, Any], EventSpec], None]


class EventRecorder:
    def __init__(self, post: Post, capacity: int = 10_000, workers: int = POSTERS) -> None:
        self._post = post
        self._queue: queue.Queue[tuple[Mapping[str, Any], EventSpec]] = queue.Queue(capacity)
        self.dropped = 0
        for index in range(workers):
            threading.Thread(target=self._work, name=f"cronctl-events-{index}", daemon=True).start()

    def record(self, schedule: Mapping[str, Any], event: EventSpec) -> None:
        metadata = schedule["metadata"]
        about = {"metadata": {key: metadata[key] for key in ("name", "namespace", "uid")}}
        try:
            self._queue.put_nowait((about, event))
        except queue.Full:
            self.dropped += 1
            if self.dropped % 1000 == 1:
                log.warning("the API server is not keeping up with Events: %d dropped so far", self.dropped)

    def flush(self) -> None:
        """Wait until every queued Event was posted (or failed to be)."""
        self._queue.join()

    def _work(self) -> None:
        while True:
            schedule, event = self._queue.get()
            try:
                self._post(schedule, event)
            except Exception:  # an Event is a courtesy: never take the poster down
                log.exception("posting event %s on %s failed", event.reason, schedule["metadata"]["name"])
            finally:
                self._queue.task_done()
