"""A job's active window: no schedule time before its start or after its end.

A CronSchedule's ``spec.startTime`` and ``spec.endTime`` (RFC 3339 instants,
as Temporal Schedules' ``start_time`` and ``end_time``) bound its schedule
times: a time outside them is not a schedule time at all, so it is never
missed, never caught up and never shown as next. Both ends are included, at
the minute: a start at 09:00:30 first allows 09:01, an end at 17:00:30 last
allows 17:00. ``WindowedTimes`` wraps an expression's ``ScheduleTimes`` so
that ``Timeline`` and every driver use the bounded times unchanged
(``MergedExpression`` applies it).

Whether a job has ended is the core's word too (``ended_reason``): past its
end (or with no schedule time left before it) the job is ``EndTimeReached``;
after its ``maxRuns``-th scheduled run, ``MaxRunsReached``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schedule import ScheduleTimes
from .times import chain

END_TIME_REACHED = "EndTimeReached"
MAX_RUNS_REACHED = "MaxRunsReached"


@dataclass(frozen=True)
class Window:
    """The first and last minute (UTC minutes) a schedule time may fall on; None: unbounded."""

    first: int | None = None
    last: int | None = None

    @classmethod
    def of_seconds(cls, start: int | None, end: int | None) -> Window:
        """The window of a start and an end in UTC seconds, both included, at the minute."""
        return cls(None if start is None else -(-start // 60), None if end is None else end // 60)

    def __bool__(self) -> bool:
        return self.first is not None or self.last is not None

    def bound(self, times: ScheduleTimes) -> ScheduleTimes:
        return WindowedTimes(times, self) if self else times


class WindowedTimes:
    """An expression's schedule times, less those outside a window."""

    __slots__ = ("inner", "first", "last")

    def __init__(self, inner: ScheduleTimes, window: Window) -> None:
        self.inner = inner
        self.first = window.first
        self.last = window.last

    def _low(self, low: int) -> int:
        return low if self.first is None else max(low, self.first - 1)

    def _high(self, high: int) -> int:
        return high if self.last is None else min(high, self.last)

    def next_after(self, t: int) -> int | None:
        if self.last is not None and t >= self.last:
            return None
        found = self.inner.next_after(self._low(t))
        return None if found is None or (self.last is not None and found > self.last) else found

    def latest_in(self, low: int, high: int) -> int | None:
        low, high = self._low(low), self._high(high)
        return None if high <= low else self.inner.latest_in(low, high)

    def count_in(self, low: int, high: int, limit: int) -> int:
        low, high = self._low(low), self._high(high)
        return 0 if high <= low else self.inner.count_in(low, high, limit)

    def next_runs(self, after: int, count: int) -> list[int]:
        return chain(self.next_after, after, count)

    def chain_end(self, first: int) -> int | None:
        end = self.inner.chain_end(first)
        if self.last is None or (end is not None and end <= self.last):
            return end
        return self.inner.latest_in(first - 1, self.last)


def ended_reason(window: Window, max_runs: int | None, scheduled_runs: int, next_fire: int | None) -> str | None:
    """Why a job fires no more, if it is for its window or its run limit: ``MaxRunsReached``
    once ``scheduled_runs`` (manual runs and backfills not counted) reached ``max_runs``,
    ``EndTimeReached`` when no schedule time is left before the window's end; else None."""
    if max_runs is not None and scheduled_runs >= max_runs:
        return MAX_RUNS_REACHED
    if window.last is not None and next_fire is None:
        return END_TIME_REACHED
    return None


def within_run_limit(max_runs: int | None, scheduled_runs: int, next_fire: int | None) -> int | None:
    """The next fire time, unless the run limit was reached: then none."""
    return None if max_runs is not None and scheduled_runs >= max_runs else next_fire


def remaining_runs(max_runs: int | None, scheduled_runs: int) -> int | None:
    """The scheduled runs a job has left under its ``maxRuns`` (None: no limit)."""
    return None if max_runs is None else max(0, max_runs - scheduled_runs)


__all__ = ["END_TIME_REACHED", "MAX_RUNS_REACHED", "Window", "WindowedTimes", "ended_reason", "remaining_runs",
           "within_run_limit"]
