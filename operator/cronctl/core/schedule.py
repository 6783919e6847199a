"""Schedules: an expression bound to a zone and an anchor.

``parse_expression`` is the one parser for every driver. A ``Timeline`` is the
chain of schedule times of one job: the first is the next fire after the
anchor (the job's creation), each following one the next fire after the
previous. A cron search looks at most ``HORIZON_YEARS`` calendar years ahead
(8 always reaches the next 29 February); when one search finds nothing, the
chain ends there for good, even if the expression would match again later.
That end is computed once, from the 400-year period of the calendar, so
``next_after``, ``latest_in`` and ``count_in`` are all bounded searches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Union

from .cron import CronExpression, parse_cron
from .errors import Code, CronctlError, ExpressionError
from .interval import IntervalExpression, parse_interval
from .times import MINUTES_PER_DAY, days_from_civil, year_of
from .zones import UTC, FixedOffset

HORIZON_YEARS = 8

Expression = Union[CronExpression, IntervalExpression]


@lru_cache(maxsize=4096)
def _parse(text: str) -> Expression:
    if text.strip().startswith("@"):
        return parse_interval(text)
    return parse_cron(text)


def parse_expression(text: object) -> Expression:
    """Compile a cron or ``@every`` expression; raises ExpressionError (field and reason)."""
    if not isinstance(text, str):
        raise ExpressionError("expression", "must be a string")
    return _parse(text)


def never_fires() -> CronctlError:
    return CronctlError("the expression never fires within "
                        f"{HORIZON_YEARS} years of its start", Code.NEVER_FIRES)


@dataclass(frozen=True)
class Timeline:
    """The schedule times of one job: the chain of next fires after ``anchor`` (UTC minutes)."""

    expression: Expression
    anchor: int
    zone: FixedOffset = UTC
    first: int | None = field(init=False)
    end: int | None = field(init=False)  # the last schedule time; None: the chain never ends

    def __post_init__(self) -> None:
        first = _next_fire(self.expression, self.zone, self.anchor)
        object.__setattr__(self, "first", first)
        object.__setattr__(self, "end", None if first is None else self._chain_end(first))

    def _chain_end(self, first: int) -> int | None:
        """The last schedule time: the last firing of the first year followed by
        more than HORIZON_YEARS years without one. None if there is no such year.

        The expression's DaySet knows, from the 400-year cycle, whether such a
        gap exists at all (most expressions: no, and nothing is walked) and
        keeps the walk to it per start year, so making a Timeline is cheap.
        """
        expression = self.expression
        if isinstance(expression, IntervalExpression):
            return None
        offset = self.zone.minutes
        end_year = expression.days.chain_end_year(year_of(first + offset), HORIZON_YEARS)
        if end_year is None:
            return None
        last = expression.last_match_in_year(end_year)
        assert last is not None
        return last - offset

    @property
    def fires(self) -> bool:
        return self.first is not None

    def next_after(self, t: int) -> int | None:
        """The first schedule time strictly after t."""
        if self.first is None or (self.end is not None and t >= self.end):
            return None
        if t < self.first:
            return self.first
        expression = self.expression
        if isinstance(expression, IntervalExpression):
            return self.anchor + expression.first_index_after(self.anchor, t) * expression.minutes
        offset = self.zone.minutes  # _next_fire, inlined: this runs for most decisions of a tick
        found = expression.next_local(t + offset, HORIZON_YEARS)
        return None if found is None else found - offset

    def latest_in(self, low: int, high: int) -> int | None:
        """The last schedule time in (low, high]."""
        if self.first is None:
            return None
        low = max(low, self.anchor)
        if self.end is not None:
            high = min(high, self.end)
        if high <= low:
            return None
        expression = self.expression
        if isinstance(expression, IntervalExpression):
            k = (high - self.anchor) // expression.minutes
            latest = self.anchor + k * expression.minutes
            return latest if k >= 1 and latest > low else None
        offset = self.zone.minutes
        local = expression.previous_local(high + offset, low + offset)
        return None if local is None else local - offset

    def count_in(self, low: int, high: int, limit: int) -> int:
        """How many schedule times lie in (low, high], counting no further than ``limit``."""
        if self.first is None:
            return 0
        low = max(low, self.anchor)
        if self.end is not None:
            high = min(high, self.end)
        if high <= low:
            return 0
        expression = self.expression
        if isinstance(expression, IntervalExpression):
            first_k = expression.first_index_after(self.anchor, low)
            last_k = (high - self.anchor) // expression.minutes
            return max(0, min(limit, last_k - first_k + 1))
        offset = self.zone.minutes
        return expression.count_local(low + offset, high + offset, limit)


def _next_fire(expression: Expression, zone: FixedOffset, after: int) -> int | None:
    """The seed's next fire: the first match after ``after`` within the horizon."""
    if isinstance(expression, IntervalExpression):
        return after + expression.minutes
    found = expression.next_local(after + zone.minutes, HORIZON_YEARS)
    return None if found is None else found - zone.minutes


def next_runs(expression: Expression, after: int, count: int, zone: FixedOffset = UTC) -> list[int]:
    """Up to ``count`` fire times after ``after``: the chain, ended early if it runs out.

    After a cron fire, the next fires on the same local day are simply the
    expression's remaining times of day, so a search is needed only once per
    firing day.
    """
    if isinstance(expression, IntervalExpression):
        return [after + k * expression.minutes for k in range(1, count + 1)]
    offset = zone.minutes
    times: list[int] = []
    local = after + offset
    while len(times) < count:
        found = expression.next_local(local, HORIZON_YEARS)
        if found is None:
            break
        if expression.per_day == 1:  # one firing a day: nothing more on that day
            times.append(found - offset)
            local = found
            continue
        base = found - found % MINUTES_PER_DAY - offset  # the UTC minute of that local midnight
        times += [base + time for time in expression.day_run(found, count - len(times))]
        local = times[-1] + offset
    return times


__all__ = ["Expression", "Timeline", "parse_expression", "next_runs", "HORIZON_YEARS",
           "days_from_civil"]
