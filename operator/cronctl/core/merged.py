"""A job's times when it has more than one expression, exclusions, a daylight-saving rule or a window.

``MergedExpression`` stands where one expression does (``.times(anchor, zone)``,
``.text``), so that ``Timeline`` and every driver use it unchanged. Its times
are the union of its expressions' times (a minute named by two fires once),
minus the excluded ones (``exclusions.py``) and those outside the job's
window (``window.py``), each expression searched under the job's
``DaylightSaving`` rule. A search that meets an excluded time skips
the whole excluded stretch and looks again; it gives up ``HORIZON_YEARS``
after where it started, as one expression's search does, or after
``MAX_SKIPPED`` excluded times in a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .cron import HORIZON_YEARS
from .dst import DaylightSaving
from .exclusions import NO_EXCLUSIONS, Exclusions, parse_exclusions
from .schedule import Expression, ScheduleTimes, parse_expression
from .times import chain
from .window import Window
from .zones import AnyZone

MAX_SCHEDULES = 20  # expressions in one job's list (the CRD's maxItems)
# Excluded times one search skips before it gives up (as if nothing fired), so that a
# schedule whose every time is excluded minute by minute costs a bounded search.
MAX_SKIPPED = 50_000
_HORIZON_MINUTES = (HORIZON_YEARS + 1) * 366 * 24 * 60


@dataclass(frozen=True)
class MergedExpression:
    """Several expressions merged, minus exclusions, under a daylight-saving rule."""

    parts: tuple[Expression, ...]
    exclusions: Exclusions = NO_EXCLUSIONS
    rule: DaylightSaving = DaylightSaving.VIXIE
    window: Window = Window()  # spec.startTime and spec.endTime (window.py)

    @property
    def text(self) -> str:
        return "; ".join(part.text for part in self.parts)

    @property
    def jitter_seconds(self) -> int | None:
        """A lone rule's own ``.jitter()`` (a rule in a list may not set one)."""
        return getattr(self.parts[0], "jitter_seconds", None) if len(self.parts) == 1 else None

    def times(self, anchor: int, zone: AnyZone, rule: DaylightSaving | None = None) -> ScheduleTimes:
        rule = self.rule if rule is None else rule
        parts = tuple(part.times(anchor, zone, rule) for part in self.parts)
        if len(parts) == 1 and not self.exclusions:
            return self.window.bound(parts[0])
        return self.window.bound(MergedTimes(parts, self.exclusions, zone, anchor))


class MergedTimes:
    """The schedule times of a ``MergedExpression`` in one zone from one anchor."""

    __slots__ = ("parts", "exclusions", "zone", "anchor")

    def __init__(self, parts: tuple[ScheduleTimes, ...], exclusions: Exclusions, zone: AnyZone,
                 anchor: int) -> None:
        self.parts = parts
        self.exclusions = exclusions
        self.zone = zone
        self.anchor = anchor

    def next_after(self, t: int) -> int | None:
        give_up = t + _HORIZON_MINUTES
        nexts = [part.next_after(t) for part in self.parts]
        for _ in range(MAX_SKIPPED):
            found = min((n for n in nexts if n is not None), default=None)
            if found is None or found > give_up:
                return None
            span = self.exclusions.span_at(found, self.zone) if self.exclusions else None
            if span is None:
                return found
            t = span[1]  # past the excluded stretch; look again from its end
            nexts = [n if n is None or n > t else part.next_after(t) for part, n in zip(self.parts, nexts)]
        return None

    def latest_in(self, low: int, high: int) -> int | None:
        for _ in range(MAX_SKIPPED):
            if high <= low:
                return None
            found = max((n for part in self.parts if (n := part.latest_in(low, high)) is not None), default=None)
            if found is None:
                return None
            span = self.exclusions.span_at(found, self.zone) if self.exclusions else None
            if span is None:
                return found
            high = span[0] - 1
        return None

    def count_in(self, low: int, high: int, limit: int) -> int:
        if len(self.parts) == 1 and not self.exclusions:
            return self.parts[0].count_in(low, high, limit)
        count, t = 0, low
        while count < limit:
            found = self.next_after(t)
            if found is None or found > high:
                break
            count, t = count + 1, found
        return count

    def next_runs(self, after: int, count: int) -> list[int]:
        return chain(self.next_after, after, count)

    def chain_end(self, first: int) -> int | None:
        """The last time of the merged chain: None while any expression's chain never ends."""
        ends = []
        for part in self.parts:
            part_first = part.next_after(self.anchor)
            if part_first is None:
                continue
            end = part.chain_end(part_first)
            if end is None:
                return None
            ends.append(end)
        return self.latest_in(first - 1, max(ends)) if ends else None


@lru_cache(maxsize=4096)
def merged_expression(texts: tuple[str, ...], exclude: tuple[str, ...] = (),
                      rule: DaylightSaving = DaylightSaving.VIXIE, window: Window = Window()) -> MergedExpression:
    """Compile several expressions with exclusions, in a window; raises ExpressionError naming the entry."""
    return MergedExpression(tuple(parse_expression(text) for text in texts), parse_exclusions(exclude), rule,
                            window)


__all__ = ["MAX_SCHEDULES", "MergedExpression", "MergedTimes", "merged_expression"]
