"""A sparse day set's matching days over the Gregorian 400-year cycle, as one sorted table.

The Gregorian calendar repeats every 400 years (146,097 days, a whole number
of weeks), so the days a ``DaySet`` matches in one cycle are the days it
matches in every cycle, shifted. For a day set with few matching days
(monthly, quarterly, yearly schedules, the leap day) this module keeps them
as one sorted table of minutes from the cycle's start; then

- a next fire from any minute is one bisect (``day_at_or_after``) instead of
  a walk through the months of the month set and the year types, and
- a chain of next fires is a slice of the table (``chain``), each fire one
  addition done in C.

Written by hand because measurement asked for it (issue 32; callgrind and
the benchmarks at the commit that added it): a next fire of ``0 0 1 * *`` or
``0 0 1 1 *`` mostly leaves the month it starts in, and that walk (a civil
date, the month set, the year types) cost about 1.3 us a fire in
``bench_next_fire.py``, against about 0.3 us for a bisect here, and 4x
behind a Rust evaluator (croniter-rs) on those expressions.

Bounded: a table is built only for a day set with at most ``MAX_DAYS``
matching days in a cycle (about one a month: 20 KB as 32-bit integers), and
only once it is worth it: after ``WALKS_BEFORE_TABLE`` month walks of the
searches, or at once for a long chain of next fires (``DaySet`` decides; see
``cron.py``). Dense day sets never need one: their next matching day is
almost always in the month the search starts in, which the month memo
answers.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Protocol

from .times import (CYCLE_BASE, CYCLE_DAYS, CYCLE_YEAR_STARTS, CYCLE_YEAR_TYPES, MINUTES_PER_DAY, MONTH_STARTS,
                    YEAR_TYPES, type_is_leap, year_start)

FIRST_DAY = year_start(CYCLE_BASE)  # a multiple of 400 years: cycles are counted from its 1 January
MAX_DAYS = 5000  # matching days in a cycle: 4,800 for a monthly schedule
WALKS_BEFORE_TABLE = 32  # month walks of a day set's searches before its table is built
HORIZON_SAFE_DAYS_PER_YEAR = 365  # a fire at most 365 * k days on is at most k calendar years on


class DayTables(Protocol):
    """What a table is built from (``cron.DaySet``)."""

    month_list: tuple[int, ...]
    by_type: tuple[tuple[int, ...], ...]
    counts: tuple[int, ...]


class CycleTable:
    """The matching days of one cycle (minute of the cycle at which each starts, sorted)."""

    __slots__ = ("minutes", "size")

    def __init__(self, minutes: array[int]) -> None:
        self.minutes = minutes
        self.size = len(minutes)

    def day_at_or_after(self, day: int) -> int:
        """The first matching day on or after a day number (days since 1970-01-01)."""
        cycles, rest = divmod(day - FIRST_DAY, CYCLE_DAYS)
        minutes = self.minutes
        i = bisect_left(minutes, rest * MINUTES_PER_DAY)
        if i == self.size:
            i, cycles = 0, cycles + 1
        return FIRST_DAY + cycles * CYCLE_DAYS + minutes[i] // MINUTES_PER_DAY

    def chain(self, first: int, times: tuple[int, ...], count: int, shift: int) -> list[int]:
        """``count`` fires from ``first`` (a firing minute) on, each + ``shift``: the rest of
        first's day, then ``times`` (the firing minutes of a day) on each following
        matching day. The caller has made sure that the chain cannot run out (no two
        firing years further apart than the horizon)."""
        day, minute_of_day = divmod(first, MINUTES_PER_DAY)
        out = [day * MINUTES_PER_DAY + shift + t for t in times[bisect_left(times, minute_of_day):][:count]]
        cycles, rest = divmod(day - FIRST_DAY, CYCLE_DAYS)
        minutes = self.minutes
        i = bisect_left(minutes, rest * MINUTES_PER_DAY) + 1
        per_day = len(times)
        while len(out) < count:
            if i >= self.size:
                i, cycles = 0, cycles + 1
            origin = (FIRST_DAY + cycles * CYCLE_DAYS) * MINUTES_PER_DAY + shift
            days = minutes[i:i + -(-(count - len(out)) // per_day)]
            i += len(days)
            if per_day == 1:
                out += map((origin + times[0]).__add__, days)
            else:
                for start in days:
                    out += map((origin + start).__add__, times)
        del out[count:]
        return out


def build(days: DayTables) -> CycleTable | None:
    """The table of a day set, or None when it matches no day or more than MAX_DAYS a cycle."""
    per_cycle = sum(map(days.counts.__getitem__, CYCLE_YEAR_TYPES))
    if not 0 < per_cycle <= MAX_DAYS:
        return None
    by_kind: list[list[int]] = []  # for each year type: minute of the year at which each matching day starts
    for kind in range(YEAR_TYPES):
        starts = MONTH_STARTS[type_is_leap(kind)]
        in_year: list[int] = []
        for month in days.month_list:
            mask = days.by_type[kind][month]
            while mask:
                low = mask & -mask
                in_year.append((starts[month] + low.bit_length() - 2) * MINUTES_PER_DAY)
                mask ^= low
        by_kind.append(in_year)
    minutes: array[int] = array("i")
    for start, kind in zip(CYCLE_YEAR_STARTS, CYCLE_YEAR_TYPES):  # the cycle's years from its first
        minutes.extend(map(((start - FIRST_DAY) * MINUTES_PER_DAY).__add__, by_kind[kind]))
    return CycleTable(minutes)


__all__ = ["CycleTable", "FIRST_DAY", "HORIZON_SAFE_DAYS_PER_YEAR", "MAX_DAYS", "WALKS_BEFORE_TABLE", "build"]
