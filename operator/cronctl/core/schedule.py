"""Schedules: an expression bound to a zone and an anchor.

``parse_expression`` is the one parser for every driver. Each kind of
expression (a cron expression, ``@every``, an ``every(N).unit`` rule) makes
its own ``ScheduleTimes`` with ``expression.times(anchor, zone)``: the one
place where the kinds differ. A ``Timeline`` is the chain of schedule times
of one job: the first is the next fire after the anchor (the job's
creation), each following one the next fire after the previous. A cron
search looks at most ``HORIZON_YEARS`` local calendar years ahead; when one
search finds nothing, the chain ends there for good (``end``), even if the
expression would match again later. So ``next_after``, ``latest_in`` and
``count_in`` are all bounded searches.

Zones. With a fixed offset, local time is UTC + offset and every search runs
in local minutes. In an IANA zone Vixie cron's daylight-saving rules apply
(``dst.py``, ``DST_ADJUSTED_BELOW``) to cron jobs and to ``.at()`` rules;
``@every`` and the other ``every(N).unit`` rules count real minutes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol, Union, runtime_checkable

from .cron import HORIZON_YEARS, CronExpression, is_fixed_time, parse_cron
from .dst import DST_ADJUSTED_BELOW
from .errors import Code, CronctlError, ExpressionError
from .every import EveryRule, is_every, parse_every
from .interval import IntervalExpression, parse_interval
from .times import chain, days_from_civil
from .zones import UTC, AnyZone

Expression = Union[CronExpression, IntervalExpression, EveryRule]


@runtime_checkable
class ScheduleTimes(Protocol):
    """The schedule times of one expression in one zone from one anchor (UTC minutes).

    Each kind of expression has its own (``Expression.times``); ``Timeline``
    adds the chain's bounds (its first time and its end) and asks only about
    times after the anchor.
    """

    def next_after(self, t: int) -> int | None:
        """The first time after t; None when a search finds none within the horizon."""
        ...

    def latest_in(self, low: int, high: int) -> int | None:
        """The last time in (low, high]."""
        ...

    def count_in(self, low: int, high: int, limit: int) -> int:
        """How many times lie in (low, high], counting no further than ``limit``."""
        ...

    def next_runs(self, after: int, count: int) -> list[int]:
        """Up to ``count`` times after ``after``, each ``next_after`` the one before."""
        ...

    def chain_end(self, first: int) -> int | None:
        """The last time of the chain of next times from ``first``; None if it never ends."""
        ...


class Schedulable(Protocol):
    """What a Timeline is made of: an expression, or several merged (``merged.MergedExpression``)."""

    @property
    def text(self) -> str: ...

    def times(self, anchor: int, zone: AnyZone) -> ScheduleTimes: ...


@lru_cache(maxsize=4096)
def _parse(text: str) -> Expression:
    if text.strip().startswith("@"):
        return parse_interval(text)
    if is_every(text):
        return parse_every(text)
    return parse_cron(text)


def parse_expression(text: object) -> Expression:
    """Compile a cron expression, ``@every <N>m|h`` or ``every(N).unit...``; raises
    ExpressionError naming the field and the reason."""
    if not isinstance(text, str):
        raise ExpressionError("expression", "must be a string")
    return _parse(text)


def parse_seed_expression(text: object) -> Expression:
    """The run() harness's expressions (seed 000): cron and ``@every`` only."""
    expression = parse_expression(text)
    if isinstance(expression, EveryRule):
        raise ExpressionError("expression", "every(N).unit rules are not part of the harness's contract")
    return expression


def never_fires() -> CronctlError:
    return CronctlError("the expression never fires within "
                        f"{HORIZON_YEARS} years of its start", Code.NEVER_FIRES)


@dataclass(frozen=True)
class Timeline:
    """The schedule times of one job: the chain of next fires after ``anchor`` (UTC minutes)."""

    expression: Schedulable
    anchor: int
    zone: AnyZone = UTC
    first: int | None = field(init=False)
    end: int | None = field(init=False)  # the last schedule time; None: the chain never ends
    _times: ScheduleTimes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        times: ScheduleTimes = self.expression.times(self.anchor, self.zone)
        first = times.next_after(self.anchor)
        object.__setattr__(self, "_times", times)
        object.__setattr__(self, "first", first)
        object.__setattr__(self, "end", None if first is None else times.chain_end(first))

    @property
    def fires(self) -> bool:
        return self.first is not None

    def next_after(self, t: int) -> int | None:
        """The first schedule time strictly after t."""
        if self.first is None or (self.end is not None and t >= self.end):
            return None
        if t < self.first:
            return self.first
        return self._times.next_after(t)

    def upcoming(self, t: int, count: int) -> list[int]:
        """The next ``count`` schedule times strictly after t (fewer where the chain ends)."""
        return chain(self.next_after, t, count)

    def latest_in(self, low: int, high: int) -> int | None:
        """The last schedule time in (low, high]."""
        if self.first is None:
            return None
        low = max(low, self.anchor)
        if self.end is not None:
            high = min(high, self.end)
        if high <= low:
            return None
        return self._times.latest_in(low, high)

    def count_in(self, low: int, high: int, limit: int) -> int:
        """How many schedule times lie in (low, high], counting no further than ``limit``."""
        if self.first is None:
            return 0
        low = max(low, self.anchor)
        if self.end is not None:
            high = min(high, self.end)
        if high <= low:
            return 0
        return self._times.count_in(low, high, limit)


def next_runs(expression: Expression, after: int, count: int, zone: AnyZone = UTC) -> list[int]:
    """Up to ``count`` fire times after ``after`` (also the anchor of ``@every`` and
    ``every(N).unit``): the chain, ended early if it runs out."""
    times: ScheduleTimes = expression.times(after, zone)
    return times.next_runs(after, count)


__all__ = ["Expression", "IntervalExpression", "Schedulable", "ScheduleTimes", "Timeline", "parse_expression",
           "parse_seed_expression", "never_fires", "next_runs", "is_fixed_time", "HORIZON_YEARS",
           "DST_ADJUSTED_BELOW", "days_from_civil"]
