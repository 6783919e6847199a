"""Exclusions: the local dates, date ranges and cron minutes at which a schedule never fires.

A holiday calendar for a schedule. Each exclusion is text:

* ``2026-12-25``: one local date, every minute of it;
* ``2026-12-24/2026-12-31``: a range of local dates, both ends included;
* a cron expression (``* * 25 12 *``, ``0-30 12 * * *``): the local wall
  minutes it matches, every year.

Dates and wall minutes are read in the schedule's zone. An excluded time is
not a schedule time at all: it is never "missed" and never caught up.

``Exclusions.span_at`` answers in one step for a date, or for a cron
exclusion that takes whole days (minute and hour fields ``*``), with the
whole stretch of consecutive excluded days, so that a search skips a
holiday in one jump rather than minute by minute; a cron exclusion of whole
hours (minute field ``*``) skips the rest of the hour, any other one
matching minute at a time.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from .cron import CronExpression, parse_cron
from .errors import ExpressionError
from .times import MINUTES_PER_DAY, days_from_civil, days_in_month
from .zones import AnyZone

MAX_EXCLUSIONS = 1000  # entries in one schedule's list (the CRD's maxItems)
MAX_RANGE_DAYS = 3660  # one date range covers at most ten years
_LONGEST_DAY_RUN = 400  # whole days one cron exclusion is followed across in one step
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


@dataclass(frozen=True)
class Exclusions:
    """A schedule's exclusions, compiled: merged local day ranges and cron expressions."""

    texts: tuple[str, ...] = ()
    day_ranges: tuple[tuple[int, int], ...] = ()  # (first, last) local days since 1970-01-01, sorted, apart
    whole_days: tuple[CronExpression, ...] = ()  # cron exclusions of every minute of the days they match
    minutes: tuple[CronExpression, ...] = ()  # the other cron exclusions

    def __bool__(self) -> bool:
        return bool(self.texts)

    def span_at(self, utc: int, zone: AnyZone) -> tuple[int, int] | None:
        """The excluded stretch that holds UTC minute ``utc``, as its first and last UTC
        minutes; None when ``utc`` is not excluded."""
        local = utc + zone.utc_offset(utc)
        day = local // MINUTES_PER_DAY
        days = self._excluded_days(day)
        if days is not None:
            return _first_minute_of(days[0], zone), _first_minute_of(days[1] + 1, zone) - 1
        for expression in self.minutes:
            if expression.matches(local):
                return self._hour_span(expression, utc, local, zone)
        return None

    @staticmethod
    def _hour_span(expression: CronExpression, utc: int, local: int, zone: AnyZone) -> tuple[int, int]:
        """The excluded stretch around ``utc``: its local hour when the expression takes whole
        hours (and matches at both ends, which a transition inside the hour may not), else
        ``utc`` alone."""
        if len(expression.minutes) < 60:
            return utc, utc
        first, last = utc - local % 60, utc + 59 - local % 60
        if not expression.matches(first + zone.utc_offset(first)):
            first = utc
        if not expression.matches(last + zone.utc_offset(last)):
            last = utc
        return first, last

    def _excluded_days(self, day: int) -> tuple[int, int] | None:
        """The run of consecutive excluded local days around ``day``, or None."""
        if not self._day_excluded(day):
            return None
        first = last = day
        for _ in range(_LONGEST_DAY_RUN):
            if not self._day_excluded(first - 1):
                break
            first = self._range_start(first - 1)
        for _ in range(_LONGEST_DAY_RUN):
            if not self._day_excluded(last + 1):
                break
            last = self._range_end(last + 1)
        return first, last

    def _range_index(self, day: int) -> int | None:
        i = bisect_right(self.day_ranges, (day, float("inf"))) - 1
        return i if i >= 0 and self.day_ranges[i][0] <= day <= self.day_ranges[i][1] else None

    def _range_start(self, day: int) -> int:
        i = self._range_index(day)
        return day if i is None else self.day_ranges[i][0]

    def _range_end(self, day: int) -> int:
        i = self._range_index(day)
        return day if i is None else self.day_ranges[i][1]

    def _day_excluded(self, day: int) -> bool:
        return self._range_index(day) is not None or \
            any(expression.matches(day * MINUTES_PER_DAY) for expression in self.whole_days)


NO_EXCLUSIONS = Exclusions()


def _first_minute_of(day: int, zone: AnyZone) -> int:
    """The first UTC minute whose local date is ``day`` or later."""
    local = day * MINUTES_PER_DAY
    utc = local - zone.utc_offset(local - zone.utc_offset(local))
    # A transition at local midnight can leave the guess a jump away: settle it.
    while (utc - 1 + zone.utc_offset(utc - 1)) // MINUTES_PER_DAY >= day:
        utc -= 1
    while (utc + zone.utc_offset(utc)) // MINUTES_PER_DAY < day:
        utc += 1
    return utc


def parse_exclusions(texts: object, field: str = "exclude") -> Exclusions:
    """Compile a list of exclusions; raises ExpressionError naming ``field[i]`` and the reason."""
    if not isinstance(texts, (list, tuple)):
        raise ExpressionError(field, "must be a list of dates, date ranges or cron expressions")
    if len(texts) > MAX_EXCLUSIONS:
        raise ExpressionError(field, f"has {len(texts)} entries, at most {MAX_EXCLUSIONS}")
    ranges: list[tuple[int, int]] = []
    whole_days: list[CronExpression] = []
    minutes: list[CronExpression] = []
    for i, text in enumerate(texts):
        where = f"{field}[{i}]"
        if not isinstance(text, str):
            raise ExpressionError(where, f"{text!r} must be text: a date, a date range or a cron expression")
        if len(text.split()) == 1:  # a cron expression has five fields
            ranges.append(_date_range(text.strip(), where))
            continue
        try:
            expression = parse_cron(text)
        except ExpressionError as error:
            raise ExpressionError(where, f"{text!r} is not a date (YYYY-MM-DD), a date range "
                                  f"(YYYY-MM-DD/YYYY-MM-DD) or a cron expression: {error.message}") from None
        (whole_days if len(expression.minutes) == 60 and len(expression.hours) == 24 else minutes).append(expression)
    return Exclusions(tuple(texts), _merged(ranges), tuple(whole_days), tuple(minutes))


def _date_range(text: str, where: str) -> tuple[int, int]:
    first_text, slash, last_text = text.partition("/")
    first = _date(first_text, where)
    last = _date(last_text, where) if slash else first
    if last < first:
        raise ExpressionError(where, f"{text!r} ends before it starts")
    if last - first >= MAX_RANGE_DAYS:
        raise ExpressionError(where, f"{text!r} covers more than {MAX_RANGE_DAYS} days")
    return first, last


def _date(text: str, where: str) -> int:
    match = _DATE.fullmatch(text)
    if match is None:
        raise ExpressionError(where, f"{text!r} is not a date YYYY-MM-DD (a date range is "
                              "YYYY-MM-DD/YYYY-MM-DD, a cron expression has five fields)")
    year, month, day = (int(part) for part in match.groups())
    if not 1 <= month <= 12 or not 1 <= day <= days_in_month(year, month):
        raise ExpressionError(where, f"{text!r} is not a date of the calendar")
    return days_from_civil(year, month, day)


def _merged(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Overlapping and adjacent day ranges as one."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return tuple(merged)


__all__ = ["Exclusions", "MAX_EXCLUSIONS", "NO_EXCLUSIONS", "parse_exclusions"]
