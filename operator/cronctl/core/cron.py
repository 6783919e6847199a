"""Five-field cron expressions: parsing, matching and searching.

An expression is compiled once into sets and bit masks; searches then walk
months (skipping those not in the month set) and pick days out of a 31-bit
mask, so no search ever steps through minutes or days one by one. All
searches here are in *local* minutes; ``schedule.py`` binds a zone.

Semantics are Vixie cron's as the seed fixes them: a day field is restricted
exactly when its text does not begin with ``*``; two restricted day fields
are OR-ed, otherwise both must match (an unrestricted field still applies its
own set, so ``*/2`` in day-of-month means odd days).
"""

from __future__ import annotations

import enum
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from .errors import ExpressionError
from .times import MINUTES_PER_DAY, civil_from_days, days_from_civil, days_in_month, is_leap

_DIGITS = frozenset("0123456789")
_BIG = 10**9  # any number with more digits than this is only ever "too big"


class Field(enum.Enum):
    """The five fields, with their label, bounds and the names they accept."""

    MINUTE = ("minute", 0, 59, ())
    HOUR = ("hour", 0, 23, ())
    DAY_OF_MONTH = ("day-of-month", 1, 31, ())
    MONTH = ("month", 1, 12, ("JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                              "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"))
    DAY_OF_WEEK = ("day-of-week", 0, 7, ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))

    def __init__(self, label: str, low: int, high: int, names: tuple[str, ...]) -> None:
        self.label = label
        self.low = low
        self.high = high
        self.names = names

    @property
    def star_high(self) -> int:
        """``*`` covers 0-6 in day-of-week: 7 is only another name for Sunday."""
        return 6 if self is Field.DAY_OF_WEEK else self.high

    def error(self, reason: str) -> ExpressionError:
        return ExpressionError(self.label, reason)


def _number(text: str, fld: Field) -> int:
    """A plain decimal number (ASCII digits, leading zeros allowed) or a name."""
    if text and all(ch in _DIGITS for ch in text):
        digits = text.lstrip("0") or "0"
        return int(digits) if len(digits) <= 9 else _BIG
    if fld.names and text.isascii() and text.upper() in fld.names:
        return fld.names.index(text.upper()) + fld.low
    if not text:
        raise fld.error("a value is missing")
    raise fld.error(f"{text!r} is not a number" + (" or a name" if fld.names else ""))


def _value(text: str, fld: Field) -> int:
    value = _number(text, fld)
    if not fld.low <= value <= fld.high:
        raise fld.error(f"{text} is out of range {fld.low}-{fld.high}")
    return value


def _item(text: str, fld: Field) -> range:
    if not text:
        raise fld.error("empty item in list")
    base, slash, step_text = text.partition("/")
    if base == "*":
        low, high = fld.low, fld.star_high
    elif "-" in base:
        low_text, _, high_text = base.partition("-")
        low, high = _value(low_text, fld), _value(high_text, fld)
        if low > high:
            raise fld.error(f"range {base} runs backwards")
    else:
        low = high = _value(base, fld)
        if slash:
            raise fld.error(f"{text}: a step may follow only * or a range")
    step = 1
    if slash:
        if not step_text or not all(ch in _DIGITS for ch in step_text):
            raise fld.error(f"step {step_text!r} is not a number")
        step = _number(step_text, fld)
        if step < 1:
            raise fld.error("step must be >= 1")
    return range(low, high + 1, step)


def parse_field(text: str, fld: Field) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        values.update(_item(item, fld))
    if fld is Field.DAY_OF_WEEK and 7 in values:
        values.discard(7)
        values.add(0)
    return frozenset(values)


def _mask(values: frozenset[int]) -> int:
    bits = 0
    for value in values:
        bits |= 1 << value
    return bits


# _MONTH_LENGTH_MASK[n] has bits 1..n set.
_MONTH_LENGTH_MASK = tuple(((1 << (n + 1)) - 2) for n in range(32))


@dataclass(frozen=True)
class CronExpression:
    """A compiled five-field expression. Build it with ``parse_cron``."""

    text: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: frozenset[int]
    months: frozenset[int]
    days_of_week: frozenset[int]
    day_of_month_restricted: bool
    day_of_week_restricted: bool
    _dom_mask: int = field(init=False, repr=False, compare=False)
    _dow_masks: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _month_mask: int = field(init=False, repr=False, compare=False)
    month_list: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _year_types: list[tuple[tuple[int, ...], tuple[int, ...]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "_dom_mask", _mask(self.days_of_month))
        # _dow_masks[w] marks the days 1..31 of a month whose 1st falls on weekday w.
        set_(self, "_dow_masks", tuple(
            sum(1 << day for day in range(1, 32) if (first + day - 1) % 7 in self.days_of_week)
            for first in range(7)))
        set_(self, "_month_mask", _mask(self.months))
        set_(self, "month_list", tuple(sorted(self.months)))
        set_(self, "_year_types", [])

    @property
    def days_or(self) -> bool:
        return self.day_of_month_restricted and self.day_of_week_restricted

    @property
    def per_day(self) -> int:
        return len(self.hours) * len(self.minutes)

    # -- days ---------------------------------------------------------------

    def day_mask(self, year: int, month: int) -> int:
        """Bits 1..31: the days of that month on which the expression may fire."""
        if not self._month_mask >> month & 1:
            return 0
        first_weekday = (days_from_civil(year, month, 1) + 4) % 7
        length = _MONTH_LENGTH_MASK[days_in_month(year, month)]
        dow = self._dow_masks[first_weekday]
        if self.days_or:
            return (self._dom_mask | dow) & length
        return self._dom_mask & dow & length

    def matches(self, local_minute: int) -> bool:
        days, rest = divmod(local_minute, MINUTES_PER_DAY)
        year, month, day = civil_from_days(days)
        hour, minute = divmod(rest, 60)
        return (hour in self.hours and minute in self.minutes
                and bool(self.day_mask(year, month) >> day & 1))

    # -- times within a day ---------------------------------------------------

    def _first_time_from(self, hour: int, minute: int) -> int | None:
        """Minute of the day of the first firing at or after hour:minute."""
        hours, minutes = self.hours, self.minutes
        i = bisect_left(hours, hour)
        if i < len(hours) and hours[i] == hour:
            j = bisect_left(minutes, minute)
            if j < len(minutes):
                return hour * 60 + minutes[j]
            i += 1
        return hours[i] * 60 + minutes[0] if i < len(hours) else None

    def _last_time_until(self, hour: int, minute: int) -> int | None:
        """Minute of the day of the last firing at or before hour:minute."""
        hours, minutes = self.hours, self.minutes
        i = bisect_right(hours, hour) - 1
        if i >= 0 and hours[i] == hour:
            j = bisect_right(minutes, minute) - 1
            if j >= 0:
                return hour * 60 + minutes[j]
            i -= 1
        return hours[i] * 60 + minutes[-1] if i >= 0 else None

    def _count_until(self, minute_of_day: int) -> int:
        """How many firings of one matching day fall at or before that minute."""
        hour, minute = divmod(minute_of_day, 60)
        full_hours = bisect_left(self.hours, hour)
        count = full_hours * len(self.minutes)
        if full_hours < len(self.hours) and self.hours[full_hours] == hour:
            count += bisect_right(self.minutes, minute)
        return count

    # -- searches -------------------------------------------------------------

    def next_local(self, after: int, last_year: int) -> int | None:
        """The first matching local minute after ``after`` in a year <= last_year."""
        start = after + 1
        start_days, start_rest = divmod(start, MINUTES_PER_DAY)
        year, month, day = civil_from_days(start_days)
        start_of_day = (start_rest // 60, start_rest % 60)
        while year <= last_year:
            mask = self.day_mask(year, month) >> day << day
            while mask:
                found = (mask & -mask).bit_length() - 1
                if start_of_day is not None and found == day:
                    time = self._first_time_from(*start_of_day)
                else:
                    time = self.hours[0] * 60 + self.minutes[0]
                if time is not None:
                    return days_from_civil(year, month, found) * MINUTES_PER_DAY + time
                mask &= mask - 1
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
            day, start_of_day = 1, None
        return None

    def previous_local(self, at_or_before: int, floor: int) -> int | None:
        """The last matching local minute in (floor, at_or_before], if any."""
        end_days, end_rest = divmod(at_or_before, MINUTES_PER_DAY)
        floor_days = floor // MINUTES_PER_DAY
        year, month, day = civil_from_days(end_days)
        end_of_day: tuple[int, int] | None = (end_rest // 60, end_rest % 60)
        while True:
            mask = self.day_mask(year, month) & ((2 << day) - 1)
            while mask:
                found = mask.bit_length() - 1
                if end_of_day is not None and found == day:
                    time = self._last_time_until(*end_of_day)
                else:
                    time = self.hours[-1] * 60 + self.minutes[-1]
                if time is not None:
                    result = days_from_civil(year, month, found) * MINUTES_PER_DAY + time
                    return result if result > floor else None
                mask ^= 1 << found
            if days_from_civil(year, month, 1) <= floor_days:
                return None
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
            day, end_of_day = 31, None

    def count_local(self, low: int, high: int, limit: int) -> int:
        """How many matching local minutes lie in (low, high], counting at most ``limit``."""
        if high <= low:
            return 0
        low_days, low_rest = divmod(low, MINUTES_PER_DAY)
        high_days, high_rest = divmod(high, MINUTES_PER_DAY)
        if low_days == high_days:
            if not self._matches_day(low_days):
                return 0
            return min(limit, self._count_until(high_rest) - self._count_until(low_rest))
        count = 0
        if self._matches_day(high_days):
            count += self._count_until(high_rest)
        if self._matches_day(low_days):
            count += self.per_day - self._count_until(low_rest)
        if count >= limit or high_days - low_days < 2:
            return min(limit, count)
        needed_days = -(-(limit - count) // self.per_day)
        days = self.matching_days(low_days + 1, high_days - 1, needed_days)
        return min(limit, count + days * self.per_day)

    def matching_days(self, first: int, last: int, enough: int) -> int:
        """How many days in [first, last] (day numbers) match, counting at most to ``enough``.

        Walks back from ``last``: the months of the partial years, and whole
        years in one step each through the year-type table.
        """
        first_year, first_month, first_day = civil_from_days(first)
        last_year, last_month, last_day = civil_from_days(last)
        if first_year == last_year:
            return self._days_in_months(first_year, (first_month, first_day), (last_month, last_day))
        count = self._days_in_months(last_year, (1, 1), (last_month, last_day))
        year = last_year - 1
        while year > first_year and count < enough:
            count += self.days_in_year(year)
            year -= 1
        if count < enough:
            count += self._days_in_months(first_year, (first_month, first_day), (12, 31))
        return min(count, enough)

    def _days_in_months(self, year: int, start: tuple[int, int], end: tuple[int, int]) -> int:
        """Matching days of one year from start (month, day) to end (month, day), inclusive."""
        count = 0
        for month in self.month_list:
            if start[0] <= month <= end[0]:
                mask = self.day_mask(year, month)
                if month == end[0]:
                    mask &= (2 << end[1]) - 1
                if month == start[0]:
                    mask &= ~((1 << start[1]) - 1)
                count += mask.bit_count()
        return count

    def days_in_year(self, year: int) -> int:
        """Matching days in a calendar year, from the table of its year type."""
        jan_first = (days_from_civil(year, 1, 1) + 4) % 7
        return self.days_by_year_type()[is_leap(year)][jan_first]

    def days_by_year_type(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Matching days per year type: [leap][weekday of 1 January].

        A year's calendar is fixed by those two facts, so 14 sample years
        answer for every year.
        """
        if not self._year_types:
            table = [[0] * 7, [0] * 7]
            for year in range(2000, 2028):  # all 14 year types occur in these 28 years
                jan_first = (days_from_civil(year, 1, 1) + 4) % 7
                table[is_leap(year)][jan_first] = sum(
                    self.day_mask(year, month).bit_count() for month in self.month_list)
            self._year_types.append((tuple(table[0]), tuple(table[1])))
        return self._year_types[0]

    def _matches_day(self, days: int) -> bool:
        year, month, day = civil_from_days(days)
        return bool(self.day_mask(year, month) >> day & 1)

    # -- long gaps --------------------------------------------------------------

    def fires_every_year(self) -> bool:
        return all(count > 0 for row in self.days_by_year_type() for count in row)

    def fires_in_year(self, year: int) -> bool:
        return self.days_in_year(year) > 0

    def last_match_in_year(self, year: int) -> int | None:
        end = days_from_civil(year + 1, 1, 1) * MINUTES_PER_DAY - 1
        start = days_from_civil(year, 1, 1) * MINUTES_PER_DAY - 1
        return self.previous_local(end, start)


@lru_cache(maxsize=4096)
def parse_cron(text: str) -> CronExpression:
    """Compile a five-field expression; raises ExpressionError naming the field."""
    parts = text.split()
    if len(parts) != 5:
        raise ExpressionError("expression", f"has {len(parts)} fields, a cron expression has 5 "
                              "(minute hour day-of-month month day-of-week)")
    minute, hour, dom, month, dow = parts
    return CronExpression(
        text=" ".join(parts),
        minutes=tuple(sorted(parse_field(minute, Field.MINUTE))),
        hours=tuple(sorted(parse_field(hour, Field.HOUR))),
        days_of_month=parse_field(dom, Field.DAY_OF_MONTH),
        months=parse_field(month, Field.MONTH),
        days_of_week=parse_field(dow, Field.DAY_OF_WEEK),
        day_of_month_restricted=not dom.startswith("*"),
        day_of_week_restricted=not dow.startswith("*"),
    )


__all__ = ["CronExpression", "Field", "parse_cron", "parse_field", "is_leap"]
