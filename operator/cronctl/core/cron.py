"""Five-field cron expressions: parsing, matching and searching.

An expression is compiled once into sets, bit masks and lookup tables;
searches then pick days out of 31-bit month masks, step only through the
months of the month set and skip whole years that have no matching day, so
no search ever steps through minutes or days one by one. The searches of
``CronExpression`` are in *local* minutes; ``CronExpression.times`` binds a
zone: ``FixedCronTimes`` for a fixed offset (local = UTC + offset), or
``ZonedCronTimes`` for an IANA zone (``dst.py``: Vixie cron's daylight-saving
rules, under which a job is *fixed-time* when neither its minute nor its hour
field begins with ``*``).

A search for the next fire looks at most ``HORIZON_YEARS`` local calendar
years ahead (8 always reaches the next 29 February). A chain of next fires
therefore ends at the first search that finds nothing, even if the
expression would match again later; ``chain_end`` finds that end from the
400-year period of the calendar, without walking the chain.

The day fields are compiled into a ``DaySet`` shared by every expression
with the same three day fields: its tables (month masks per year type, which
years fire, where a chain of next fires runs out) describe the calendar
only, so no zone or anchor can make them stale. A sparse day set (monthly,
yearly, the leap day) also gets, once its searches keep leaving the month
they start in, a table of its matching days over the 400-year cycle
(``cycle.py``): its next fires are a bisect and its chains slices, where the
month walk had cost 1.3 us a fire (issue 32, ``bench_next_fire.py``). A
chain of a one-fire-a-day expression reads each month's days off its mask.

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
from itertools import repeat

from . import cycle
from .cycle import CycleTable
from .dst import DaylightSaving, ZonedSearch
from .errors import ExpressionError
from .times import (CYCLE_YEARS, MINUTES_PER_DAY, MONTH_LENGTHS, MONTH_STARTS, YEAR_TYPES,
                    civil_from_days, is_leap, type_is_leap, year_of, year_start, year_type)

CHAIN_TABLE_FROM = 16  # a chain of at least this many next fires builds its day set's cycle table at once
from .zones import AnyZone, FixedOffset, IanaZone

HORIZON_YEARS = 8
_BIG = 10**9  # any number with more digits than this is only ever "too big"


class Field(enum.Enum):
    """The five fields, with their label, bounds and the names they accept."""

    MINUTE = ("minute", 0, 59, ())
    HOUR = ("hour", 0, 23, ())
    DAY_OF_MONTH = ("day-of-month", 1, 31, ())
    MONTH = ("month", 1, 12, ("JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                              "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"))
    DAY_OF_WEEK = ("day-of-week", 0, 7, ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))

    # Members are singletons compared by identity, so identity hashing is exact; Enum's own
    # __hash__ is Python code, run at every parse_field cache look-up (5 a compile).
    __hash__ = object.__hash__

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
    if text.isascii() and text.isdigit():  # ASCII digits only: isdigit alone takes any script's
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
        if not (step_text.isascii() and step_text.isdigit()):
            raise fld.error(f"step {step_text!r} is not a number")
        step = _number(step_text, fld)
        if step < 1:
            raise fld.error("step must be >= 1")
    return range(low, high + 1, step)


@lru_cache(maxsize=1024)
def parse_field(text: str, fld: Field) -> frozenset[int]:
    """The values of one field's text (cached: fleets repeat the same few texts, like 0 or *)."""
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
_NO_DAYS = (0,) * YEAR_TYPES  # a month outside the month set, in every year type


@lru_cache(maxsize=256)
def _weekday_masks(days_of_week: frozenset[int]) -> tuple[int, ...]:
    """[w]: bits 1..31, the days of a month whose 1st falls on weekday w that are in the set.

    Day d of such a month falls on weekday (w + d - 1) % 7, so the masks are
    windows onto one week pattern repeated six times.
    """
    week = _mask(days_of_week)
    repeated = sum(week << (7 * i) for i in range(6))  # bit i: weekday i % 7 is in the set
    return tuple(((repeated >> first) << 1) & _MONTH_LENGTH_MASK[31] for first in range(7))


class DaySet:
    """The days an expression may fire on: its day-of-month, month and day-of-week fields.

    Which days of a month match depends only on the month's length and the
    weekday of its 1st, so a table per *year type* (leap or not, weekday of
    1 January: 14 types, see ``times.py``) answers for every year. From it
    come how many days of a year match, whether the expression can fire at
    all and, over the 400-year cycle, where a chain of next fires runs out.
    Build one with ``day_set``, which shares it between expressions.
    """

    def __init__(self, days_of_month: frozenset[int], months: frozenset[int],
                 days_of_week: frozenset[int], days_or: bool) -> None:
        self.month_list = tuple(sorted(months))
        self.days_or = days_or
        columns = self._masks_by_month(_mask(days_of_month), self.month_list, days_of_week, days_or)
        # by_type[kind][month]: bits 1..31, the matching days of that month in a year of that type.
        self.by_type: tuple[tuple[int, ...], ...] = tuple(zip(*columns))
        # counts[kind]: matching days in a year of that type.
        self.counts: tuple[int, ...] = tuple(map(sum, zip(*(map(int.bit_count, columns[month])
                                                             for month in self.month_list))))
        self.fires = any(self.counts)  # False: no year of any type has a matching day
        # The months of the last two days looked up: (first day, the day after the last, mask with
        # bit i for day first + i, year, month). Searches from neighbouring minutes hit them and
        # skip the calendar; two, because a window (low, high] often spans a month's end.
        self._month_memo = self._other_month = (0, 0, 0, 0, 0)
        self._largest_gap: int | None = None
        self._chain_ends: dict[tuple[int, int], int] = {}
        # The cycle table of a sparse day set (cycle.py), once the searches have walked months
        # often enough (``_walks`` counts up to cycle.WALKS_BEFORE_TABLE, then stops). Threads
        # racing here at worst build it twice or not at all; a reader sees None or a whole table.
        self.table: CycleTable | None = None
        self._walks = 0

    def walked(self) -> None:
        """A search walked past the month it started in: build the cycle table when that
        has happened often enough (if the day set is sparse enough to have one)."""
        self._walks += 1
        if self._walks == cycle.WALKS_BEFORE_TABLE:
            self.table = cycle.build(self)

    def chain_table(self) -> CycleTable | None:
        """The cycle table, built now if it can be: a long chain of next fires walks
        months often enough to pay for it at once."""
        if self._walks < cycle.WALKS_BEFORE_TABLE:
            self._walks = cycle.WALKS_BEFORE_TABLE
            self.table = cycle.build(self)
        return self.table

    @staticmethod
    def _masks_by_month(dom_mask: int, month_list: tuple[int, ...], days_of_week: frozenset[int],
                        days_or: bool) -> list[tuple[int, ...]]:
        """For months 0..12 (0 unused), the month's mask in each of the 14 year types.

        A month's matching days depend only on its length and the weekday of
        its 1st. Across the seven types of a leap flag the 1st of a given month
        takes each weekday once, so its seven masks are one row of seven
        (by weekday of the 1st) rotated by the month's offset in the year.
        """
        weekday_masks = _weekday_masks(days_of_week)
        rows: dict[int, tuple[int, ...]] = {}  # by month length: the mask for each weekday of the 1st
        columns = [_NO_DAYS] * 13
        for month in month_list:
            column: tuple[int, ...] = ()
            for leap in (0, 1):
                length = MONTH_LENGTHS[leap][month]
                row = rows.get(length)
                if row is None:
                    in_month = _MONTH_LENGTH_MASK[length]
                    row = rows[length] = tuple(((dom_mask | dow) if days_or else (dom_mask & dow)) & in_month
                                               for dow in weekday_masks)
                shift = MONTH_STARTS[leap][month] % 7  # the weekday of the 1st, counted from 1 January's
                column += row[shift:] + row[:shift]
            columns[month] = column
        return columns

    def day_mask(self, year: int, month: int) -> int:
        return self.by_type[year_type(year)][month]

    def month_at(self, day: int) -> tuple[int, int, int, int, int]:
        """(first day, day after the last, mask, year, month) of the month holding a day
        number; bit i of the mask says whether day first + i matches."""
        memo = self._month_memo
        if memo[0] <= day < memo[1]:
            return memo
        other = self._other_month
        if not other[0] <= day < other[1]:
            year, month, day_of_month = civil_from_days(day)
            kind = year_type(year)
            first = day - day_of_month + 1
            other = (first, first + MONTH_LENGTHS[type_is_leap(kind)][month], self.by_type[kind][month] >> 1,
                     year, month)
        # Each memo is one tuple, assigned at once: a concurrent reader sees a whole month.
        self._month_memo, self._other_month = other, memo
        return other

    def days_in_months(self, year: int, first_month: int, last_month: int) -> int:
        """Matching days in the whole months first_month..last_month of a year."""
        masks = self.by_type[year_type(year)]
        return sum(masks[month].bit_count() for month in self.month_list if first_month <= month <= last_month)

    def fires_in_year(self, year: int) -> bool:
        return self.counts[year_type(year)] > 0

    # -- where chains of next fires end ---------------------------------------------

    def largest_gap(self) -> int:
        """The most years from one year with a matching day to the next, over the
        400-year cycle (0 when no year has one)."""
        if self._largest_gap is None:
            firing = [y for y in range(CYCLE_YEARS) if self.counts[year_type(y)]]
            gaps = [b - a for a, b in zip(firing, firing[1:])]
            if firing:
                gaps.append(firing[0] + CYCLE_YEARS - firing[-1])
            self._largest_gap = max(gaps, default=0)
        return self._largest_gap

    def chain_end_year(self, year: int, horizon: int) -> int | None:
        """The year of the last fire of a chain of next fires that fires in ``year``.

        A next fire looks ``horizon`` calendar years ahead, so the chain ends in
        the first firing year (from ``year`` on) followed by more than
        ``horizon`` years without a matching day. When no gap in the cycle is
        that long, the chain never ends (None) and there is nothing to walk;
        otherwise the walk depends only on ``year % 400`` and is kept.
        """
        if self.largest_gap() <= horizon:
            return None
        key = (year % CYCLE_YEARS, horizon)
        ahead = self._chain_ends.get(key)
        if ahead is None:
            ahead = self._years_to_chain_end(year, horizon)
            self._chain_ends[key] = ahead
        return year + ahead

    def _years_to_chain_end(self, year: int, horizon: int) -> int:
        end = year
        for _ in range(CYCLE_YEARS):  # a gap longer than horizon comes round within one cycle
            gap = next((step for step in range(1, horizon + 1) if self.fires_in_year(end + step)), None)
            if gap is None:
                return end - year
            end += gap
        raise AssertionError("largest_gap() promised a gap longer than the horizon")


@lru_cache(maxsize=1024)
def day_set(days_of_month: frozenset[int], months: frozenset[int], days_of_week: frozenset[int],
            days_or: bool) -> DaySet:
    """The shared DaySet of these day fields (many expressions differ only in minute and hour)."""
    return DaySet(days_of_month, months, days_of_week, days_or)


# at_or_after[v] (smallest value >= v), before[v] (largest value < v), count_below[v]
_Neighbours = tuple[tuple[int | None, ...], tuple[int | None, ...], tuple[int, ...]]


@lru_cache(maxsize=256)
def _neighbours(values: tuple[int, ...], size: int) -> _Neighbours:
    """Lookup tables over 0..size for a sorted set of values, replacing bisects in hot paths:
    at_or_after[v] (smallest value >= v), before[v] (largest value < v), count_below[v]."""
    count_below = tuple(map(bisect_left, repeat(values), range(size + 1)))  # also: where v would go
    at_or_after = tuple(map((*values, None).__getitem__, count_below))
    before = tuple(map((None, *values).__getitem__, count_below))
    return at_or_after, before, count_below


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
    days: DaySet = field(init=False, repr=False, compare=False)
    month_list: tuple[int, ...] = field(init=False, repr=False, compare=False)
    per_day: int = field(init=False, repr=False, compare=False)  # firings on a matching day
    _first_time: int = field(init=False, repr=False, compare=False)
    _last_time: int = field(init=False, repr=False, compare=False)
    _hour_mask: int = field(init=False, repr=False, compare=False)
    _minute_tables: _Neighbours = field(init=False, repr=False, compare=False)
    _hour_tables: _Neighbours = field(init=False, repr=False, compare=False)
    _times: tuple[int, ...] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        days = day_set(self.days_of_month, self.months, self.days_of_week, self.days_or)
        set_(self, "days", days)
        set_(self, "month_list", days.month_list)
        set_(self, "per_day", len(self.hours) * len(self.minutes))
        set_(self, "_first_time", self.hours[0] * 60 + self.minutes[0])
        set_(self, "_last_time", self.hours[-1] * 60 + self.minutes[-1])
        set_(self, "_hour_mask", _mask(frozenset(self.hours)))
        set_(self, "_minute_tables", _neighbours(self.minutes, 60))
        set_(self, "_hour_tables", _neighbours(self.hours, 24))
        set_(self, "_times", None)  # built on first use by times_of_day()

    @property
    def days_or(self) -> bool:
        return self.day_of_month_restricted and self.day_of_week_restricted

    def times(self, anchor: int, zone: AnyZone,
              rule: DaylightSaving = DaylightSaving.VIXIE) -> FixedCronTimes | ZonedCronTimes:
        """The schedule times in a zone under a daylight-saving rule (cron times do not
        depend on the anchor)."""
        if isinstance(zone, FixedOffset):
            return FixedCronTimes(self, zone.minutes)
        return ZonedCronTimes(self, zone, rule)

    # -- days ---------------------------------------------------------------

    def day_mask(self, year: int, month: int) -> int:
        """Bits 1..31: the days of that month on which the expression may fire."""
        return self.days.day_mask(year, month)

    def matches(self, local_minute: int) -> bool:
        days, rest = divmod(local_minute, MINUTES_PER_DAY)
        year, month, day = civil_from_days(days)
        hour, minute = divmod(rest, 60)
        return (hour in self.hours and minute in self.minutes
                and bool(self.day_mask(year, month) >> day & 1))

    # -- times within a day ---------------------------------------------------
    # Table lookups (see _neighbours) rather than bisects: these run once per next fire.

    def _time_from(self, minute_of_day: int) -> int | None:
        """Minute of the day of the first firing at or after that minute of the day."""
        hour, minute = divmod(minute_of_day, 60)
        if self._hour_mask >> hour & 1:
            found = self._minute_tables[0][minute]
            if found is not None:
                return hour * 60 + found
        next_hour = self._hour_tables[0][hour + 1]
        return None if next_hour is None else next_hour * 60 + self.minutes[0]

    def _time_until(self, minute_of_day: int) -> int | None:
        """Minute of the day of the last firing at or before that minute of the day."""
        hour, minute = divmod(minute_of_day, 60)
        if self._hour_mask >> hour & 1:
            found = self._minute_tables[1][minute + 1]
            if found is not None:
                return hour * 60 + found
        previous_hour = self._hour_tables[1][hour]
        return None if previous_hour is None else previous_hour * 60 + self.minutes[-1]

    def _count_until(self, minute_of_day: int) -> int:
        """How many firings of one matching day fall at or before that minute."""
        hour, minute = divmod(minute_of_day, 60)
        count = self._hour_tables[2][hour] * len(self.minutes)
        if self._hour_mask >> hour & 1:
            count += self._minute_tables[2][minute + 1]
        return count

    def times_of_day(self) -> tuple[int, ...]:
        """Every firing minute of a matching day, in order (built on first use)."""
        times = self._times
        if times is None:
            times = tuple(hour * 60 + minute for hour in self.hours for minute in self.minutes)
            object.__setattr__(self, "_times", times)
        return times

    def day_run(self, local_minute: int, limit: int) -> tuple[int, ...]:
        """The firing times of day (minutes of the day) from a firing ``local_minute`` on,
        at most ``limit`` of them: on a matching day the chain of next fires is just
        the expression's times of day, so a caller wanting many fires needs no search."""
        times = self.times_of_day()
        i = bisect_left(times, local_minute % MINUTES_PER_DAY)
        return times[i:i + limit]

    # -- searches -------------------------------------------------------------

    def next_local(self, after: int, years_ahead: int) -> int | None:
        """The first matching local minute after ``after`` whose calendar year is at
        most ``years_ahead`` (>= 1) years after the year of ``after``.

        Most next fires lie in the month of ``after + 1`` (dense, daily and weekly
        schedules): the month memo and the time-of-day tables find them with no
        calendar conversion, and the horizon cannot cut them off, since that
        month's year is at most after's year + 1. Only the rest walks months.
        """
        table = self.days.table
        if table is not None:
            return self._next_by_table(table, after, years_ahead)
        day, minute_of_day = divmod(after + 1, MINUTES_PER_DAY)
        first, _, mask, year, month = self.days.month_at(day)
        later = mask >> (day - first)  # bit 0: today
        if later & 1:
            time = self._time_from(minute_of_day)
            if time is not None:
                return day * MINUTES_PER_DAY + time
        later >>= 1  # bit 0: tomorrow
        if later:
            return (day + (later & -later).bit_length()) * MINUTES_PER_DAY + self._first_time
        if not self.days.fires:
            return None
        self.days.walked()
        # after + 1 is in ``year`` too, unless it is the first minute of the year.
        after_year = year - 1 if after + 1 == first * MINUTES_PER_DAY and month == 1 else year
        if month == 12:
            return self._next_from_month(year + 1, 1, after_year + years_ahead)
        return self._next_from_month(year, month + 1, after_year + years_ahead)

    def _next_by_table(self, table: CycleTable, after: int, years_ahead: int) -> int | None:
        """next_local by a bisect into the day set's cycle table."""
        day, minute_of_day = divmod(after + 1, MINUTES_PER_DAY)
        if minute_of_day > self._last_time:  # today's firings are past (a search from a fire, mostly)
            found = table.day_at_or_after(day + 1)
        else:
            found = table.day_at_or_after(day)
            if found == day:
                time = self._time_from(minute_of_day)
                assert time is not None  # at or before the last firing of the day
                return day * MINUTES_PER_DAY + time
        if found - after // MINUTES_PER_DAY > cycle.HORIZON_SAFE_DAYS_PER_YEAR * years_ahead \
                and civil_from_days(found)[0] > year_of(after) + years_ahead:
            return None
        return found * MINUTES_PER_DAY + self._first_time

    def runs_by_table(self, after: int, count: int, shift: int) -> list[int] | None:
        """Up to ``count`` next fires from local minute ``after`` on, each + ``shift``, as
        slices of the cycle table; None when the day set has none or a chain can run out
        (more than HORIZON_YEARS years between two firing years somewhere in the cycle)."""
        table = self.days.chain_table()
        if table is None or self.days.largest_gap() > HORIZON_YEARS:
            return None
        first = self._next_by_table(table, after, HORIZON_YEARS)
        assert first is not None  # no gap reaches the horizon
        return table.chain(first, self.times_of_day(), count, shift)

    def month_run(self, first: int, limit: int, shift: int, out: list[int]) -> None:
        """Append to ``out`` the fires (each + ``shift``) of a one-fire-a-day expression from
        a firing ``first`` to the end of its month, at most ``limit``: the chain of next
        fires within a month is its matching days, read off the month's mask."""
        day = first // MINUTES_PER_DAY
        month_first, _, mask, _, _ = self.days.month_at(day)
        bits = mask >> (day - month_first)  # bit 0: first's day
        base = first + shift
        end = len(out) + limit
        while bits and len(out) < end:
            low = bits & -bits
            out.append(base + (low.bit_length() - 1) * MINUTES_PER_DAY)
            bits ^= low

    def _next_from_month(self, year: int, month: int, last_year: int) -> int | None:
        """The first firing on or after the 1st of a month, in a year <= last_year.

        Steps only through the months of the month set, and skips in one step
        each year whose type has no matching day at all (a leap day's search
        looks at one month in each of at most four years).
        """
        days = self.days
        while year <= last_year:
            kind = year_type(year)
            if days.counts[kind]:
                masks = days.by_type[kind]
                for candidate in days.month_list[bisect_left(days.month_list, month):]:
                    mask = masks[candidate]
                    if mask:
                        day_of_month = (mask & -mask).bit_length() - 1
                        day = year_start(year) + MONTH_STARTS[type_is_leap(kind)][candidate] + day_of_month - 1
                        return day * MINUTES_PER_DAY + self._first_time
            year, month = year + 1, 1
        return None

    def previous_local(self, at_or_before: int, floor: int) -> int | None:
        """The last matching local minute in (floor, at_or_before], if any."""
        end_day, minute_of_day = divmod(at_or_before, MINUTES_PER_DAY)
        first, _, mask, year, month = self.days.month_at(end_day)
        earlier = mask & ((2 << (end_day - first)) - 1)  # bit i: day first + i, up to end_day
        if earlier >> (end_day - first) & 1:
            time = self._time_until(minute_of_day)
            if time is not None:
                result = end_day * MINUTES_PER_DAY + time
                return result if result > floor else None
            earlier ^= 1 << (end_day - first)
        if earlier:
            result = (first + earlier.bit_length() - 1) * MINUTES_PER_DAY + self._last_time
            return result if result > floor else None
        floor_day = floor // MINUTES_PER_DAY
        if first <= floor_day:
            return None
        if month == 1:
            return self._previous_until_month(year - 1, 12, floor, floor_day)
        return self._previous_until_month(year, month - 1, floor, floor_day)

    def _previous_until_month(self, year: int, month: int, floor: int, floor_day: int) -> int | None:
        """The last firing in or before a month, if it is after ``floor``.

        Walks back through the months of the month set, a whole year at a time
        for years without a matching day, and stops at the year of ``floor``.
        """
        days = self.days
        while year_start(year + 1) > floor_day:  # some day of the year is on or after the floor's day
            kind = year_type(year)
            if days.counts[kind]:
                masks = days.by_type[kind]
                for candidate in reversed(days.month_list[:bisect_right(days.month_list, month)]):
                    mask = masks[candidate]
                    if mask:
                        day = year_start(year) + MONTH_STARTS[type_is_leap(kind)][candidate] + mask.bit_length() - 2
                        result = day * MINUTES_PER_DAY + self._last_time
                        return result if result > floor else None
            year, month = year - 1, 12
        return None

    def count_local(self, low: int, high: int, limit: int) -> int:
        """How many matching local minutes lie in (low, high], counting at most ``limit``."""
        if high <= low:
            return 0
        low_day, low_rest = divmod(low, MINUTES_PER_DAY)
        high_day, high_rest = divmod(high, MINUTES_PER_DAY)
        low_month = self.days.month_at(low_day)
        low_matches = low_month[2] >> (low_day - low_month[0]) & 1
        if low_day == high_day:
            if not low_matches:
                return 0
            return min(limit, self._count_until(high_rest) - self._count_until(low_rest))
        high_month = self.days.month_at(high_day)
        count = 0
        if high_month[2] >> (high_day - high_month[0]) & 1:
            count += self._count_until(high_rest)
        if low_matches:
            count += self.per_day - self._count_until(low_rest)
        if count >= limit or high_day - low_day < 2:
            return min(limit, count)
        needed_days = -(-(limit - count) // self.per_day)
        days = self._days_between(low_day, low_month, high_day, high_month, needed_days)
        return min(limit, count + days * self.per_day)

    def _days_between(self, low_day: int, low_month: tuple[int, int, int, int, int], high_day: int,
                      high_month: tuple[int, int, int, int, int], enough: int) -> int:
        """How many days strictly between two day numbers match, counting at most to ``enough``
        (each day comes with its month, as month_at gives it).

        The partial months at both ends come from their masks, whole months
        from the year-type table, and whole years in one step each.
        """
        low_first, _, low_mask, low_year, low_number = low_month
        high_first, _, high_mask, high_year, high_number = high_month
        if low_first == high_first:  # the same month
            return (low_mask >> (low_day - low_first + 1) & ((1 << (high_day - low_day - 1)) - 1)).bit_count()
        count = ((low_mask >> (low_day - low_first + 1)).bit_count()
                 + (high_mask & ((1 << (high_day - high_first)) - 1)).bit_count())
        days = self.days
        if low_year == high_year:
            return min(enough, count + days.days_in_months(low_year, low_number + 1, high_number - 1))
        count += days.days_in_months(high_year, 1, high_number - 1)
        year = high_year - 1
        while year > low_year and count < enough:
            count += days.counts[year_type(year)]
            year -= 1
        if count < enough:
            count += days.days_in_months(low_year, low_number + 1, 12)
        return min(count, enough)

    def days_in_year(self, year: int) -> int:
        """Matching days in a calendar year, from the table of its year type."""
        return self.days.counts[year_type(year)]

    def days_by_year_type(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Matching days per year type: [leap][weekday of 1 January].

        A year's calendar is fixed by those two facts, so 14 year types
        answer for every year.
        """
        counts = self.days.counts
        return counts[:7], counts[7:]

    # -- long gaps --------------------------------------------------------------

    def fires_every_year(self) -> bool:
        return all(self.days.counts)

    def fires_in_year(self, year: int) -> bool:
        return self.days.fires_in_year(year)

    def last_match_in_year(self, year: int) -> int | None:
        end = year_start(year + 1) * MINUTES_PER_DAY - 1
        start = year_start(year) * MINUTES_PER_DAY - 1
        return self.previous_local(end, start)


def is_fixed_time(expression: CronExpression) -> bool:
    """Vixie cron's fixed-time job: neither the minute nor the hour field begins with ``*``."""
    minute, hour = expression.text.split(None, 2)[:2]
    return not minute.startswith("*") and not hour.startswith("*")


class FixedCronTimes:
    """The schedule times of a cron expression at a fixed offset: local = UTC + offset,
    and every question is one local-minute search."""

    __slots__ = ("expression", "offset")

    def __init__(self, expression: CronExpression, offset: int) -> None:
        self.expression = expression
        self.offset = offset

    def next_after(self, t: int) -> int | None:
        offset = self.offset
        found = self.expression.next_local(t + offset, HORIZON_YEARS)
        return None if found is None else found - offset

    def latest_in(self, low: int, high: int) -> int | None:
        offset = self.offset
        found = self.expression.previous_local(high + offset, low + offset)
        return None if found is None else found - offset

    def count_in(self, low: int, high: int, limit: int) -> int:
        offset = self.offset
        return self.expression.count_local(low + offset, high + offset, limit)

    def next_runs(self, after: int, count: int) -> list[int]:
        """Up to ``count`` next fires, each after the one before. After a fire, the next
        fires of the same local day are the expression's remaining times of day, so a
        search is needed only once per firing day."""
        expression, offset = self.expression, self.offset
        local = after + offset
        if count >= CHAIN_TABLE_FROM:
            by_table = expression.runs_by_table(local, count, -offset)
            if by_table is not None:
                return by_table
        times: list[int] = []
        while len(times) < count:
            found = expression.next_local(local, HORIZON_YEARS)
            if found is None:
                break
            if expression.per_day == 1:  # one firing a day: the month's next ones are its matching days
                expression.month_run(found, count - len(times), -offset, times)
                local = times[-1] + offset
                continue
            base = found - found % MINUTES_PER_DAY - offset  # the UTC minute of that local midnight
            times += [base + time for time in expression.day_run(found, count - len(times))]
            local = times[-1] + offset
        return times

    def chain_end(self, first: int) -> int | None:
        """The last time of the chain of next fires from ``first``: the last firing of the
        first firing year (from first's on) that more than HORIZON_YEARS years without a
        firing follow; None if there is no such year.

        The DaySet knows, from the 400-year cycle, whether such a gap exists at
        all (most expressions: no, and nothing is walked) and keeps the walk to
        it per start year, so this is cheap.
        """
        offset = self.offset
        end_year = self.expression.days.chain_end_year(year_of(first + offset), HORIZON_YEARS)
        if end_year is None:
            return None
        last = self.expression.last_match_in_year(end_year)
        assert last is not None  # chain_end_year names a year that fires
        return last - offset


class ZonedCronTimes:
    """The schedule times of a cron expression in an IANA zone (``dst.ZonedSearch``)."""

    __slots__ = ("expression", "search")

    def __init__(self, expression: CronExpression, zone: IanaZone,
                 rule: DaylightSaving = DaylightSaving.VIXIE) -> None:
        self.expression = expression
        self.search = ZonedSearch(expression, zone, is_fixed_time(expression), HORIZON_YEARS, rule)

    def next_after(self, t: int) -> int | None:
        return self.search.next_fire(t)

    def latest_in(self, low: int, high: int) -> int | None:
        return self.search.latest_in(low, high)

    def count_in(self, low: int, high: int, limit: int) -> int:
        return self.search.count_in(low, high, limit)

    def next_runs(self, after: int, count: int) -> list[int]:
        return self.search.next_runs(after, count)

    def chain_end(self, first: int) -> int | None:
        """As at a fixed offset, the calendar decides in which local year the chain runs
        out; it ends at the last fire of that year under the daylight-saving rules. This
        assumes that daylight saving never takes every fire of a local year away (only a
        wildcard job whose every time in the year lies in spring-forward gaps could lose
        them all)."""
        search = self.search
        end_year = self.expression.days.chain_end_year(search.local_year(first), HORIZON_YEARS)
        if end_year is None:
            return None
        boundary = year_start(end_year + 1) * MINUTES_PER_DAY  # local midnight of 1 January
        zone = search.zone
        last_utc = boundary - zone.utc_offset(boundary - zone.utc_offset(boundary)) - 1
        return search.latest_in(first - 1, last_utc)


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


__all__ = ["CronExpression", "DaySet", "Field", "FixedCronTimes", "HORIZON_YEARS", "ZonedCronTimes", "day_set",
           "is_fixed_time", "parse_cron", "parse_field", "is_leap"]
