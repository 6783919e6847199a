"""Backfill: a run for every schedule time of a past range, oldest first, one at a time.

A backfill is asked for once (its ``request``: the operator's annotation
value, the runner's request id) with a range of UTC minutes, both ends
included. Its times are the job's own schedule times in the range (merged
schedules, exclusions and the daylight-saving rule apply), at most
``MAX_BACKFILL_RUNS``; a range that reaches past ``now`` or holds more is
refused whole. ``preview`` lists them without launching anything.

Its runs go through the concurrency policy, one at a time:

* the next backfill run starts once the backfill's previous run has ended,
  so a backfill never floods the cluster or the machine;
* under Allow it starts beside the schedule's other runs; under every other
  policy only when no run of the schedule is active (a backfill run never
  replaces a live run, never waits in a wait-for-last queue), and while it
  runs the policy treats it as any active run (Forbid skips a scheduled
  firing, Replace replaces it, and the backfill goes on with its next time).

Each run has reason ``backfill`` and its own nominal time; like a manual
run it deals with no schedule time (the last schedule time does not move),
so a backfill never changes what is missed or caught up.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Collection

from .errors import CronctlError
from .every import EveryRule
from .interval import IntervalExpression
from .schedule import Timeline
from .spec import JobSpec, Policy
from .state import Backfill, JobState
from .tick import Launch, run_id
from .transitions import BACKFILL
from .times import MINUTES_PER_DAY, format_time

MAX_BACKFILL_RUNS = 1000
_COUNTED = 100_000  # a refusal counts the range's times this far (a merged schedule counts one by one), then "over"


class BackfillError(CronctlError):
    """A backfill refused whole: the range is wrong or would make too many runs."""


def range_timeline(spec: JobSpec, start: int) -> Timeline:
    """The job's times from ``start`` on, before its creation too: a cron expression names
    the same times whenever the job was made; an interval or an ``every(N)`` rule, counted
    from the job's anchor, has its times carried back by whole periods."""
    period = _period(spec.compiled)
    anchor = spec.created_at
    if period is None or period > _LONGEST_PERIOD:
        anchor = min(anchor, start - 1)
    elif anchor >= start:
        anchor -= -(-(anchor - start + 1) // period) * period
    return spec.timeline(anchor)


_LONGEST_PERIOD = 10 * 366 * 24 * 60  # minutes: anchors carried back further than this are not


def _period(expression: object) -> int | None:
    """Minutes after which an anchored expression's times repeat; None if they do not depend
    on the anchor (cron)."""
    parts = getattr(expression, "parts", (expression,))
    steps = [step for part in parts if (step := _step(part)) is not None]
    return math.lcm(*steps) if steps else None


def _step(part: object) -> int | None:
    if isinstance(part, IntervalExpression):
        return part.minutes
    if isinstance(part, EveryRule):
        return part.step_minutes if part.step_days is None else part.step_days * MINUTES_PER_DAY
    return None


def preview(spec: JobSpec, start: int, end: int, now: int) -> list[int]:
    """The times a backfill of [start, end] would run, oldest first; BackfillError if refused."""
    if end < start:
        raise BackfillError(f"the range ends ({format_time(end)}) before it starts ({format_time(start)})")
    if end > now:
        raise BackfillError(f"the range ends at {format_time(end)}, after now ({format_time(now)}): "
                            "a backfill runs past times only")
    timeline = range_timeline(spec, start)
    times: list[int] = []
    t = timeline.next_after(start - 1)
    while t is not None and t <= end:
        if len(times) == MAX_BACKFILL_RUNS:
            more = timeline.count_in(times[-1], end, _COUNTED)
            total = f"{len(times) + more}" if more < _COUNTED else f"over {len(times) + _COUNTED}"
            raise BackfillError(f"the range holds {total} schedule times, more than the "
                                f"{MAX_BACKFILL_RUNS} one backfill may run: ask for a shorter range")
        times.append(t)
        t = timeline.next_after(t)
    return times


def begin(spec: JobSpec, request: str, start: int, end: int, now: int) -> Backfill:
    """A new backfill (BackfillError if refused); one with no time in its range is done at once."""
    times = preview(spec, start, end, now)
    return Backfill(request, start, end, len(times), times[0] if times else None)


def next_launch(spec: JobSpec, state: JobState, backfill: Backfill | None) -> Launch | None:
    """The backfill's next run, if it may start now (see the module notes)."""
    if backfill is None or backfill.next is None:
        return None
    if running_run(backfill, state.active) is not None:
        return None
    if spec.policy is not Policy.ALLOW and state.active:
        return None
    number = state.launched + 1
    return Launch(spec.name, run_id(spec.name, number), number, backfill.next, BACKFILL)


def running_run(backfill: Backfill, active: Collection[str]) -> str | None:
    """The backfill's run in progress, if any (``active``: the job's runs not over)."""
    return backfill.running if backfill.running is not None and backfill.running in active else None


def finished(backfill: Backfill, active: Collection[str]) -> bool:
    """Every time launched, and the last run over."""
    return backfill.done and running_run(backfill, active) is None


def launched(backfill: Backfill, spec: JobSpec, run_key: str) -> Backfill:
    """The backfill once its next run is launched, as ``run_key``: on to its following time."""
    assert backfill.next is not None
    following = range_timeline(spec, backfill.start).next_after(backfill.next)
    return replace(backfill, next=following if following is not None and following <= backfill.end else None,
                   launched=backfill.launched + 1, running=run_key)


__all__ = ["BACKFILL", "Backfill", "BackfillError", "MAX_BACKFILL_RUNS", "begin", "launched", "next_launch",
           "preview", "range_timeline", "finished", "running_run"]
