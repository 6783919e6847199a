"""Schedules: an expression bound to a zone and an anchor.

``parse_expression`` is the one parser for every driver. A ``Timeline`` is the
chain of schedule times of one job: the first is the next fire after the
anchor (the job's creation), each following one the next fire after the
previous. A cron search looks at most ``HORIZON_YEARS`` calendar years ahead
(8 always reaches the next 29 February); when one search finds nothing, the
chain ends there for good, even if the expression would match again later.
That end is computed once, from the 400-year period of the calendar, so
``next_after``, ``latest_in`` and ``count_in`` are all bounded searches.

Zones. With a fixed offset, local time is UTC + offset and every search runs
in local minutes. An IANA zone (``zones.IanaZone``) is read the same way
between its transitions, where its offset is constant; at a transition
Vixie cron's daylight-saving rules apply (``DST_ADJUSTED_BELOW``):

* A *fixed-time* job (neither its minute nor its hour field begins with
  ``*``) whose local time falls in a spring-forward gap runs once, at the
  transition itself (the first minute after the change). In a fall-back
  repeat it runs once, in the first copy of the repeated wall times.
* Every other job is a *wildcard* job: it runs by real time, at each UTC
  minute whose local wall time matches (nothing for wall times a gap skips,
  both copies of repeated ones).
* A jump of three hours or more is taken literally for every job: gap times
  do not run, repeated times run in both copies.

The 8-year horizon counts local calendar years (of ``after``, and of each
fire). Only the zone's transitions are looked at, never single minutes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar, Union

from . import every
from .cron import CronExpression, parse_cron
from .errors import Code, CronctlError, ExpressionError
from .every import EveryRule, is_every, parse_every
from .interval import IntervalExpression, parse_interval
from .times import MINUTES_PER_DAY, days_from_civil, year_of, year_start
from .zones import UTC, AnyZone, FixedOffset, IanaZone, Transition

HORIZON_YEARS = 8
DST_ADJUSTED_BELOW = 180  # minutes: a jump at least this long is taken literally

Expression = Union[CronExpression, IntervalExpression, EveryRule]


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

    expression: Expression
    anchor: int
    zone: AnyZone = UTC
    first: int | None = field(init=False)
    end: int | None = field(init=False)  # the last schedule time; None: the chain never ends
    # The fixed offset in minutes; None for an IANA zone, whose searches go through ``_zoned``
    # (set only then: a class attribute, so that fixed offsets pay nothing for it).
    _offset: int | None = field(init=False, repr=False, compare=False)
    _zoned: ClassVar[_ZoneSearch | None] = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        zone, expression = self.zone, self.expression
        if isinstance(expression, EveryRule):  # arithmetic from the anchor; never ends
            set_(self, "_offset", None)
            set_(self, "first", every.next_after(expression, self.anchor, self.anchor, zone))
            set_(self, "end", None)
            return
        if isinstance(zone, FixedOffset):
            set_(self, "_offset", zone.minutes)
            first = _next_fire(expression, zone, self.anchor)
        else:
            zoned = _ZoneSearch(expression, zone) if isinstance(expression, CronExpression) else None
            set_(self, "_offset", None)
            set_(self, "_zoned", zoned)
            first = _next_fire(expression, zone, self.anchor) if zoned is None else zoned.next_fire(self.anchor)
        set_(self, "first", first)
        set_(self, "end", None if first is None else self._chain_end(first))

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
        offset = self._offset
        if offset is None:
            return self._zoned.chain_end(first) if self._zoned is not None else None
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
        if isinstance(expression, EveryRule):
            return every.next_after(expression, self.anchor, t, self.zone)
        if isinstance(expression, IntervalExpression):
            return self.anchor + expression.first_index_after(self.anchor, t) * expression.minutes
        offset = self._offset  # _next_fire, inlined: this runs for most decisions of a tick
        if offset is None:
            return self._zoned.next_fire(t)  # type: ignore[union-attr]
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
        if isinstance(expression, EveryRule):
            return every.latest_in(expression, self.anchor, low, high, self.zone)
        if isinstance(expression, IntervalExpression):
            k = (high - self.anchor) // expression.minutes
            latest = self.anchor + k * expression.minutes
            return latest if k >= 1 and latest > low else None
        offset = self._offset
        if offset is None:
            return self._zoned.latest_in(low, high)  # type: ignore[union-attr]
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
        if isinstance(expression, EveryRule):
            return every.count_in(expression, self.anchor, low, high, limit, self.zone)
        if isinstance(expression, IntervalExpression):
            first_k = expression.first_index_after(self.anchor, low)
            last_k = (high - self.anchor) // expression.minutes
            return max(0, min(limit, last_k - first_k + 1))
        offset = self._offset
        if offset is None:
            return self._zoned.count_in(low, high, limit)  # type: ignore[union-attr]
        return expression.count_local(low + offset, high + offset, limit)


def _next_fire(expression: Expression, zone: AnyZone, after: int) -> int | None:
    """The seed's next fire: the first match after ``after`` within the horizon."""
    if isinstance(expression, EveryRule):
        return every.next_after(expression, after, after, zone)
    if isinstance(expression, IntervalExpression):
        return after + expression.minutes
    if isinstance(zone, IanaZone):
        return _ZoneSearch(expression, zone).next_fire(after)
    found = expression.next_local(after + zone.minutes, HORIZON_YEARS)
    return None if found is None else found - zone.minutes


def is_fixed_time(expression: CronExpression) -> bool:
    """Vixie cron's fixed-time job: neither the minute nor the hour field begins with ``*``."""
    minute, hour = expression.text.split(None, 2)[:2]
    return not minute.startswith("*") and not hour.startswith("*")


class _ZoneSearch:
    """The searches of one cron expression in an IANA zone, with Vixie cron's daylight-saving rules.

    UTC time is cut at the zone's transitions into stretches of constant
    offset; inside one the fixed-offset local-minute searches apply as they
    are (local = utc + offset). A fixed-time job then gains, at a spring
    forward shorter than DST_ADJUSTED_BELOW, one fire at the transition when
    a skipped wall time matches, and loses, after such a fall back, the
    fires of the second copy of the repeated wall times (the first
    ``-jump`` minutes from the transition). Nothing else changes.
    """

    def __init__(self, expression: CronExpression, zone: IanaZone) -> None:
        self.expression = expression
        self.zone = zone
        self.fixed_time = is_fixed_time(expression)

    def local_year(self, utc: int) -> int:
        return year_of(utc + self.zone.utc_offset(utc))

    def _gap_fires(self, change: Transition) -> bool:
        """Whether a fixed-time job runs at this spring forward for wall times it skipped."""
        if not self.fixed_time or not 0 < change.jump < DST_ADJUSTED_BELOW:
            return False
        skipped_from = change.at + change.before  # the first wall time that does not exist
        found = self.expression.next_local(skipped_from - 1, 1)
        return found is not None and found < change.at + change.after

    def _repeat_end(self, change: Transition) -> int | None:
        """After a fall back, the end (exclusive) of the second copy of the repeated wall
        times, in which a fixed-time job does not run; None when nothing is held back."""
        if self.fixed_time and -DST_ADJUSTED_BELOW < change.jump < 0:
            return change.at - change.jump
        return None

    def next_fire(self, after: int, last_year: int | None = None) -> int | None:
        """The first fire after ``after`` whose local year is at most ``last_year``
        (default: the local year of ``after`` + HORIZON_YEARS)."""
        zone, expression = self.zone, self.expression
        if last_year is None:
            last_year = self.local_year(after) + HORIZON_YEARS
        through = (year_start(last_year + 1) + 1) * MINUTES_PER_DAY  # past local last_year in any zone
        m = after + 1
        offset = zone.utc_offset(m)
        change = zone.last_transition(m, m - DST_ADJUSTED_BELOW)  # only a recent one can adjust m
        while True:
            upcoming = zone.next_transition(m, through)
            low = m
            if change is not None:
                if change.at == m and self._gap_fires(change):
                    return m if year_of(m + offset) <= last_year else None
                repeat_end = self._repeat_end(change)
                if repeat_end is not None:
                    low = max(low, repeat_end)
            if upcoming is None or low < upcoming.at:
                local_after = low - 1 + offset
                ahead = last_year - year_of(local_after)
                if ahead >= 0:
                    found = expression.next_local(local_after, ahead)
                    if found is not None and (upcoming is None or found - offset < upcoming.at) \
                            and (ahead > 0 or year_of(found) <= last_year):
                        return found - offset
            if upcoming is None:
                return None
            m, change, offset = upcoming.at, upcoming, upcoming.after

    def latest_in(self, low: int, high: int) -> int | None:
        """The last fire in (low, high]."""
        zone, expression = self.zone, self.expression
        m = high
        while m > low:
            change = zone.last_transition(m, low - DST_ADJUSTED_BELOW)
            offset = zone.utc_offset(m)
            floor = low
            if change is not None:
                floor = max(floor, change.at - 1)
                repeat_end = self._repeat_end(change)
                if repeat_end is not None:
                    floor = max(floor, repeat_end - 1)
            if m > floor:
                found = expression.previous_local(m + offset, floor + offset)
                if found is not None:
                    return found - offset
            if change is None:
                return None
            if change.at > low and self._gap_fires(change):
                return change.at
            m = change.at - 1
        return None

    def count_in(self, low: int, high: int, limit: int) -> int:
        """How many fires lie in (low, high], counting no further than ``limit``."""
        zone, expression = self.zone, self.expression
        count = 0
        m = low + 1
        offset = zone.utc_offset(m)
        change = zone.last_transition(m, m - DST_ADJUSTED_BELOW)
        while True:
            upcoming = zone.next_transition(m, high)
            last = high if upcoming is None else upcoming.at - 1
            floor = m - 1
            if change is not None:
                if change.at == m and self._gap_fires(change) and not expression.matches(m + offset):
                    count += 1
                repeat_end = self._repeat_end(change)
                if repeat_end is not None:
                    floor = max(floor, repeat_end - 1)
            if last > floor and count < limit:
                count += expression.count_local(floor + offset, last + offset, limit - count)
            if upcoming is None or count >= limit:
                return min(count, limit)
            m, change, offset = upcoming.at, upcoming, upcoming.after

    def chain_end(self, first: int) -> int | None:
        """The last schedule time of the chain that starts at ``first``.

        As for fixed offsets, the calendar decides in which local year the chain
        runs out (the first firing year followed by more than HORIZON_YEARS years
        without a matching day); the chain ends at the last fire of that year
        under the daylight-saving rules. This assumes that daylight saving never
        takes every fire of a local year away (only a wildcard job whose every
        time in the year lies in spring-forward gaps could lose them all).
        """
        end_year = self.expression.days.chain_end_year(self.local_year(first), HORIZON_YEARS)
        if end_year is None:
            return None
        boundary = year_start(end_year + 1) * MINUTES_PER_DAY  # local midnight of 1 January
        zone = self.zone
        last_utc = boundary - zone.utc_offset(boundary - zone.utc_offset(boundary)) - 1
        return self.latest_in(first - 1, last_utc)

    def next_runs(self, after: int, count: int) -> list[int]:
        times: list[int] = []
        t: int | None = after
        while len(times) < count:
            t = self.next_fire(t)  # type: ignore[arg-type]
            if t is None:
                break
            times.append(t)
        return times


def next_runs(expression: Expression, after: int, count: int, zone: AnyZone = UTC) -> list[int]:
    """Up to ``count`` fire times after ``after``: the chain, ended early if it runs out.

    After a cron fire, the next fires on the same local day are simply the
    expression's remaining times of day, so a search is needed only once per
    firing day.
    """
    if isinstance(expression, EveryRule):  # ``after`` is the anchor, as for @every
        return every.next_runs(expression, after, count, zone)
    if isinstance(expression, IntervalExpression):
        return [after + k * expression.minutes for k in range(1, count + 1)]
    if isinstance(zone, IanaZone):
        return _ZoneSearch(expression, zone).next_runs(after, count)
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


__all__ = ["Expression", "Timeline", "parse_expression", "next_runs", "is_fixed_time", "HORIZON_YEARS",
           "DST_ADJUSTED_BELOW", "days_from_civil"]
