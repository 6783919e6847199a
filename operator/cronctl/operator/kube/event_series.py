"""Event series: isomorphic Events of a schedule written as one Event with a count, as
client-go's events.k8s.io recorder aggregates them. Pure: times are given.

An every-minute schedule says ``Launched`` every minute. Posted one by one,
each is an Event object: a write to the API server and etcd per launch, and
one more to every watcher of Events. client-go's recorder
(``k8s.io/client-go/tools/events``) keys an Event by what it is about and
why (the object, the reason, the type; not its message): the first is
created; one of the same key within ``SERIES_SECONDS`` of the last starts a
series, written at once (count 2); later ones only count, in memory; a
series' count is written every ``REFRESH_SECONDS``, and once more when the
series ends (nothing of its key for ``SERIES_SECONDS``). Here the message
written is the latest one's, so ``kubectl describe`` shows the newest news
with its count ("x31 over 30m").

A write (``Written``) is a new Event or the series' Event again (its count,
last time and message); ``Series.record`` says which one an Event needs now,
``Series.due`` which counts are due at a moment. The Kubernetes layer's, as
the recorder is client-go's: it decides nothing about what a schedule says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Mapping

SERIES_SECONDS = 6 * 60  # client-go's finishTime: a series ends after this long without news
REFRESH_SECONDS = 30 * 60  # client-go's refreshTime: how often a series' count is written


@dataclass(slots=True)
class Occurrence:
    """A series under way: its Event (``about`` names the schedule and the Event), the latest
    news, its count and the count the API server has."""

    about: Mapping[str, Any]  # the schedule's name, namespace and uid, and the Event's name
    event: Any  # the latest EventSpec (its reason, type, message)
    first: float  # seconds since 1970
    last: float
    count: int = 1
    written: int = 1
    written_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Written:
    """What to write of a series, as of ``last``: a new Event (``new``: count 1), or its count."""

    about: Mapping[str, Any]
    event: Any
    first: float
    last: float
    count: int
    new: bool = False


def key_of(about: Mapping[str, Any], event: Any) -> Hashable:
    metadata = about["metadata"]
    return (metadata["namespace"], metadata["name"], metadata["uid"], event.reason, event.type)


@dataclass
class Series:
    """The series under way, by key."""

    open: dict[Hashable, Occurrence] = field(default_factory=dict)

    def record(self, about: Mapping[str, Any], event: Any, now: float) -> Written | None:
        """What an Event about ``about`` needs written now: a new Event, the series' start, or
        nothing (counted, written later)."""
        key = key_of(about, event)
        known = self.open.get(key)
        if known is None or now - known.last > SERIES_SECONDS:
            self.open[key] = Occurrence(about, event, now, now, written_at=now)
            return Written(about, event, now, now, 1, new=True)
        known.count, known.last, known.event = known.count + 1, now, event
        if known.written == 1:  # a series starts: said at once, as client-go does
            return self._written(known, now)
        return None

    def due(self, now: float) -> list[Written]:
        """The counts to write at ``now``: each series' every ``REFRESH_SECONDS``, and a series
        that ended; ended series are forgotten."""
        updates = []
        for key, occurrence in list(self.open.items()):
            ended = now - occurrence.last > SERIES_SECONDS
            if occurrence.count > occurrence.written and (ended or now - occurrence.written_at >= REFRESH_SECONDS):
                updates.append(self._written(occurrence, now))
            if ended:
                del self.open[key]
        return updates

    def pending(self) -> list[Written]:
        """Every count not written yet (the operator stops)."""
        return [self._written(o, o.last) for o in self.open.values() if o.count > o.written]

    @staticmethod
    def _written(occurrence: Occurrence, now: float) -> Written:
        occurrence.written, occurrence.written_at = occurrence.count, now
        return Written(occurrence.about, occurrence.event, occurrence.first, occurrence.last, occurrence.count)
