"""Kubernetes Events, posted off the launch path.

An Event is a courtesy to whoever runs ``kubectl describe``; a Job created a
second late is a broken promise. So, as client-go's event recorder does, a
reconcile only queues its Events, and a couple of background threads post
them. When thousands of schedules fire in one minute, the API server then
spends its effort on Jobs and status first, and the Events follow. When the
queue is full (the API server cannot keep up at all), Events are dropped and
counted, never waited for.

A post that fails for a passing reason (the connection, a timeout, 429, 5xx)
is tried again with the reconciles' backoff (``retry``), up to MAX_TRIES, as
client-go's recorder tries an Event 12 times. An Event's name is made once,
when it is recorded (``event_name``, the schedule's name and a nanosecond
stamp, as client-go names them), so a post tried again after its answer was
lost is refused as AlreadyExists instead of posting the Event twice.

A poster takes what is queued together: it lets the Events of a busy second
gather for ``GATHER_SECONDS`` after the first, then posts up to ``BATCH`` in
one go (``Cluster.post_events`` pipelines them on one connection).
Posted one by one, each Event cost the operator a request's round of
wake-ups: 0.10-0.14 ms of CPU per launch of a herd
(``benchmarks/bench_launch_cost.py``, its "after" step).

Isomorphic Events (the same schedule, reason and type) are one Event with a
count, as client-go's events.k8s.io recorder writes them (``event_series``):
an every-minute schedule's ``Launched`` is one create, the series' start,
then one write of its count every 30 minutes, instead of a create a minute.
A count written for an Event the API server no longer has (expired after its
TTL, deleted) creates it again under its name.

The series are timed, and the Events stamped, by the operator's clock
(``use_clock``: the one it fires by); the waits (the gathering, the retries'
backoff, the looks for counts due, a flush's bound) are the network's, in real
time.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from typing import Any, Callable, Mapping

from . import retry
from .event_series import Series, Written

POSTERS = 2  # threads that post Events
GATHER_SECONDS = 0.05  # after the first Event queued, how long a poster lets others gather
BATCH = 200  # Events posted at most in one go
MAX_TRIES = 30  # a batch that keeps failing for a passing reason: about two minutes of tries
NAME_ROOM = 253 - 1 - 16  # of an Event's name (a DNS subdomain), what the schedule's name may take
LOOK_SECONDS = 10.0  # how often the series' counts due are looked for

log = logging.getLogger("cronctl.operator")

PostAll = Callable[[list[Written]], None]


class EventRecorder:
    def __init__(self, post_all: PostAll, capacity: int = 10_000, workers: int = POSTERS,
                 gather_seconds: float = GATHER_SECONDS, sleep: Callable[[float], None] = time.sleep,
                 now: Callable[[], float] = time.time, look_seconds: float | None = LOOK_SECONDS) -> None:
        """``sleep`` waits the gathering and the retries' backoff (the network's time: real),
        ``now`` times the series and the Events' timestamps (``use_clock``); every
        ``look_seconds`` the series' counts due are written (None: only when ``write_due`` is
        called)."""
        self._post_all, self.gather_seconds, self._sleep, self._now = post_all, gather_seconds, sleep, now
        self._queue: queue.Queue[Written] = queue.Queue(capacity)
        self._series, self._series_lock = Series(), threading.Lock()
        self.dropped = 0
        for index in range(workers):
            threading.Thread(target=self._work, name=f"cronctl-events-{index}", daemon=True).start()
        if look_seconds is not None:
            threading.Thread(target=self._look, args=(look_seconds,), name="cronctl-event-series", daemon=True).start()

    def use_clock(self, now: Callable[[], float]) -> None:
        """Time the series and stamp the Events by ``now`` (seconds since 1970): the operator's
        clock, whichever it fires by, so an Event says the time of what it tells by the same
        clock as the schedule's status."""
        self._now = now

    def record(self, schedule: Mapping[str, Any], event: Any) -> None:
        about = about_of(schedule)
        with self._series_lock:
            written = self._series.record(about, event, self._now())
        if written is not None:
            self._put(written)

    def write_due(self, everything: bool = False) -> None:
        """Queue the series' counts due now (``everything``: every count not written yet)."""
        with self._series_lock:
            due = self._series.pending() if everything else self._series.due(self._now())
        for written in due:
            self._put(written)

    def _look(self, seconds: float) -> None:
        while True:
            self._sleep(seconds)
            self.write_due()

    def _put(self, written: Written) -> None:
        try:
            self._queue.put_nowait(written)
        except queue.Full:
            self.dropped += 1
            if self.dropped % 1000 == 1:
                log.warning("the API server is not keeping up with Events: %d dropped so far", self.dropped)

    def flush(self, timeout: float | None = None) -> bool:
        """Write every count not written yet, and wait until every queued Event was posted (or
        failed to be), at most ``timeout`` seconds: whether they were."""
        self.write_due(everything=True)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._queue.all_tasks_done.wait(left)
        return True

    def _work(self) -> None:
        while True:
            batch = self._gathered()
            try:
                self._post_tried(batch)
            finally:
                for _ in batch:
                    self._queue.task_done()

    def _post_tried(self, batch: list[Written]) -> None:
        """Post the batch, trying again while it fails for a passing reason; an Event is a
        courtesy, so no failure takes the poster down."""
        for tries in itertools.count(1):
            try:
                self._post_all(batch)
                return
            except Exception as error:
                if not retry.transient(error) or tries >= MAX_TRIES:
                    log.error("posting %d event(s) failed, %s on %s the first", len(batch), batch[0].event.reason,
                              batch[0].about["metadata"]["name"], exc_info=not retry.transient(error))
                    return
                self._sleep(retry.delay(error, tries))

    def _gathered(self) -> list[Written]:
        """The next Event, once it comes, and what else came within ``gather_seconds`` of it."""
        batch = [self._queue.get()]
        self._sleep(self.gather_seconds)
        try:
            while len(batch) < BATCH:
                batch.append(self._queue.get_nowait())
        except queue.Empty:
            pass
        return batch


_last_stamp = [0]
_stamp_lock = threading.Lock()


def about_of(schedule: Mapping[str, Any]) -> dict[str, Any]:
    """What an Event needs of its schedule (name, namespace, uid), and the name it is posted under."""
    metadata = schedule["metadata"]
    return {"metadata": {key: metadata[key] for key in ("name", "namespace", "uid")},
            "event": event_name(metadata["name"])}


def event_name(schedule: str) -> str:
    """An Event's name, made once: the schedule's name and a nanosecond stamp that never repeats
    in this process (client-go's ``name.%x``)."""
    with _stamp_lock:
        stamp = _last_stamp[0] = max(time.time_ns(), _last_stamp[0] + 1)
    return f"{schedule[:NAME_ROOM]}.{stamp:x}"
