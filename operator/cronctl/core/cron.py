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
    _years_with_match: list[tuple[bool, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "_dom_mask", _mask(self.days_of_month))
        # _dow_masks[w] marks the days 1..31 of a month whose 1st falls on weekday w.
        set_(self, "_dow_masks", tuple(
            sum(1 << day for day in range(1, 32) if (first + day - 1) % 7 in self.days_of_week)
            for first in range(7)))
        set_(self, "_month_mask", _mask(self.months))
        set_(self, "_years_with_match", [])

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
        if count >= limit:
            return limit
        # Whole days strictly between, walked back month by month from high.
        needed_days = -(-(limit - count) // self.per_day)
        full_days = 0
        year, month, _ = civil_from_days(high_days)
        low_year, low_month, low_day = civil_from_days(low_days)
        high_day = civil_from_days(high_days)[2]
        while (year, month) >= (low_year, low_month):
            mask = self.day_mask(year, month)
            if (year, month) == civil_from_days(high_days)[:2]:
                mask &= (1 << high_day) - 1
            if (year, month) == (low_year, low_month):
                mask &= ~((2 << low_day) - 1)
            full_days += mask.bit_count()
            if full_days >= needed_days:
                return limit
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        return min(limit, count + full_days * self.per_day)

    def _matches_day(self, days: int) -> bool:
        year, month, day = civil_from_days(days)
        return bool(self.day_mask(year, month) >> day & 1)

    # -- long gaps --------------------------------------------------------------

    def years_with_match(self) -> tuple[bool, ...]:
        """For each year of the 400-year Gregorian cycle (index = year % 400): any firing?

        The Gregorian calendar repeats exactly every 400 years (146097 days, a
        whole number of weeks), so this table answers for every year.
        """
        if not self._years_with_match:
            self._years_with_match.append(tuple(
                any(self.day_mask(2000 + offset, month) for month in self.months)
                for offset in range(400)))
        table = self._years_with_match[0]
        return table

    def fires_every_year(self) -> bool:
        """A cheap sufficient test that some day matches in every calendar year."""
        if self.days_or or len(self.days_of_week) == 7 and self._some_day_every_year():
            return True
        # Seven consecutive allowed days of month hold every weekday.
        shortest = min(28 if m == 2 else days_in_month(2001, m) for m in self.months)
        run = 0
        for day in range(1, shortest + 1):
            run = run + 1 if day in self.days_of_month else 0
            if run == 7:
                return True
        return False

    def _some_day_every_year(self) -> bool:
        return any(day <= (28 if month == 2 else days_in_month(2001, month))
                   for month in self.months for day in self.days_of_month)

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
