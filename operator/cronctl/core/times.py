"""Minute-resolution times: the wire format and calendar arithmetic.

Every time inside the core is an ``int``: minutes since 1970-01-01T00:00 UTC
(or, inside a zone's local calendar, local minutes since the same instant).
Calendar conversion uses Howard Hinnant's days-from-civil algorithms, which
are exact for the proleptic Gregorian calendar and need no ``datetime``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

MINUTES_PER_HOUR = 60
MINUTES_PER_DAY = 1440
FIRST_YEAR = 2000
LAST_YEAR = 2199

_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    if month == 2 and is_leap(year):
        return 29
    return _MONTH_DAYS[month - 1]


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a Gregorian date."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """The Gregorian (year, month, day) of a count of days since 1970-01-01."""
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def weekday(days: int) -> int:
    """Day of the week of a day count, Sunday = 0 (1970-01-01 was a Thursday)."""
    return (days + 4) % 7


# -- year types -----------------------------------------------------------------
#
# A year's calendar is fixed by two facts: whether it is a leap year and the
# weekday of 1 January. That makes 14 *year types*, numbered leap * 7 + weekday.
# The Gregorian calendar repeats every 400 years (146,097 days, a whole number
# of weeks), so a 400-entry table gives the type and first day of every year
# with no arithmetic beyond one divmod.

CYCLE_YEARS = 400
CYCLE_DAYS = 146_097
YEAR_TYPES = 14
CYCLE_BASE = 2000  # a multiple of 400: year % 400 indexes the tables

CYCLE_YEAR_STARTS = tuple(days_from_civil(CYCLE_BASE + i, 1, 1) for i in range(CYCLE_YEARS))
CYCLE_YEAR_TYPES = tuple(is_leap(CYCLE_BASE + i) * 7 + weekday(start)
                         for i, start in enumerate(CYCLE_YEAR_STARTS))


def year_start(year: int) -> int:
    """Days since 1970-01-01 of 1 January of ``year`` (a table lookup)."""
    cycles, index = divmod(year - CYCLE_BASE, CYCLE_YEARS)
    return CYCLE_YEAR_STARTS[index] + cycles * CYCLE_DAYS


def year_type(year: int) -> int:
    """The year's type: leap * 7 + weekday of 1 January (Sunday = 0)."""
    return CYCLE_YEAR_TYPES[year % CYCLE_YEARS]


def type_is_leap(kind: int) -> bool:
    return kind >= 7


def _month_starts(leap: bool) -> tuple[int, ...]:
    starts = [0, 0]
    for month in range(1, 12):
        starts.append(starts[-1] + days_in_month(2000 if leap else 2001, month))
    return tuple(starts)


# MONTH_STARTS[leap][month]: day of the year (0-based) of the 1st of that month (index 0 unused);
# MONTH_LENGTHS[leap][month]: its number of days.
MONTH_STARTS = (_month_starts(False), _month_starts(True))
MONTH_LENGTHS = tuple((0, *(days_in_month(2000 if leap else 2001, m) for m in range(1, 13)))
                      for leap in (False, True))


def year_of(minute: int) -> int:
    return civil_from_days(minute // MINUTES_PER_DAY)[0]


def to_minute(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return days_from_civil(year, month, day) * MINUTES_PER_DAY + hour * MINUTES_PER_HOUR + minute


@lru_cache(maxsize=16_384)  # a status names the same few minutes again and again: 3 us each, 0.1 us cached
def format_time(minute: int) -> str:
    """``YYYY-MM-DDTHH:MM`` for a minute count (years past 2199 included)."""
    days, rest = divmod(minute, MINUTES_PER_DAY)
    year, month, day = civil_from_days(days)
    hour, mins = divmod(rest, MINUTES_PER_HOUR)
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{mins:02d}"


_TIME_SHAPE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})")  # ASCII digits only


def parse_time(text: object) -> int | None:
    """The minute count of a ``YYYY-MM-DDTHH:MM`` string, or None when it is not one.

    Exactly that shape, ASCII digits only, a real calendar date in 2000-2199.
    """
    if not isinstance(text, str):
        return None
    shape = _TIME_SHAPE.fullmatch(text)  # one match, in C: every operation of the harness has a time
    if shape is None:
        return None
    year, month, day, hour, mins = map(int, shape.groups())
    if not FIRST_YEAR <= year <= LAST_YEAR or not 1 <= month <= 12:
        return None
    if not 1 <= day <= days_in_month(year, month) or hour > 23 or mins > 59:
        return None
    return to_minute(year, month, day, hour, mins)


def parse_stored_time(text: str) -> int:
    """Read back a time this module formatted (any year): for state files, not for input."""
    date, _, clock = text.partition("T")
    year, month, day = (int(part) for part in date.split("-"))
    hour, mins = (int(part) for part in clock.split(":"))
    return to_minute(year, month, day, hour, mins)


def chain(next_after: Callable[[int], int | None], after: int, count: int) -> list[int]:
    """Up to ``count`` times after ``after``, each ``next_after`` the one before (fewer where
    the chain ends)."""
    times: list[int] = []
    while len(times) < count:
        found = next_after(after)
        if found is None:
            break
        times.append(found)
        after = found
    return times
