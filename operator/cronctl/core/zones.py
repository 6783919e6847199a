"""Time zones: where a schedule's local calendar sits relative to UTC.

A cron expression is matched against local wall time; everything stored or
returned is UTC. ``Zone`` is the interface the schedules use. Fixed offsets
(``+05:30``) have no daylight saving, so local time is UTC plus a constant
and the schedule can search in local minutes directly.

IANA zones (``Europe/Berlin``) change their offset at *transitions*. Between
two transitions the offset is constant, so the fixed-offset searches still
apply piece by piece; ``IanaZone`` lists the transitions (``Transition``)
and ``schedule.py`` applies Vixie cron's daylight-saving rules at them.

The zone data is the compiled tz database (TZif files) that the standard
``zoneinfo`` module reads: the same file, found the same way (its ``TZPATH``,
then the ``tzdata`` package), after ``zoneinfo.ZoneInfo`` has accepted the
name. ``zoneinfo`` itself answers only for ``datetime`` objects, which the
core does not use (no clock, ints only), so the TZif transitions and the
POSIX TZ rule in the file's footer (which carries the zone past its last
listed transition, e.g. every year after 2037) are read here, in minutes.
Offsets with seconds (only local mean time, before 1900 or so) are floored
to whole minutes.
"""

from __future__ import annotations

import struct
import zoneinfo
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import groupby
from typing import NamedTuple, Protocol, Union

from .errors import ZoneError
from .times import (MINUTES_PER_DAY, days_from_civil, days_in_month, format_time, is_leap, weekday, year_of,
                    year_start)

MAX_OFFSET_MINUTES = 14 * 60
_QUARTERS = ("00", "15", "30", "45")


class Zone(Protocol):
    name: str

    def utc_offset(self, utc_minute: int) -> int:
        """Minutes to add to UTC to get local wall time at that instant."""
        ...


@dataclass(frozen=True)
class FixedOffset:
    """A constant UTC offset in minutes (``+05:30`` is 330)."""

    minutes: int

    @property
    def name(self) -> str:
        sign = "-" if self.minutes < 0 else "+"
        hours, mins = divmod(abs(self.minutes), 60)
        return f"{sign}{hours:02d}:{mins:02d}"

    def utc_offset(self, utc_minute: int) -> int:
        return self.minutes


UTC = FixedOffset(0)


def parse_offset(text: object, field: str = "tz") -> FixedOffset:
    """``+HH:MM`` / ``-HH:MM``: hours 00-14, minutes 00/15/30/45, at most 14:00."""
    if not isinstance(text, str):
        raise ZoneError(field, "must be an offset string like +05:30")
    if len(text) != 6 or text[0] not in "+-" or text[3] != ":":
        raise ZoneError(field, f"{text!r} is not an offset of the form +HH:MM or -HH:MM")
    hours, mins = text[1:3], text[4:6]
    if not (hours.isascii() and hours.isdigit()):
        raise ZoneError(field, f"{text!r}: hours must be two digits")
    if mins not in _QUARTERS:
        raise ZoneError(field, f"{text!r}: minutes must be 00, 15, 30 or 45")
    magnitude = int(hours) * 60 + int(mins)
    if magnitude > MAX_OFFSET_MINUTES:
        raise ZoneError(field, f"{text!r} is beyond the largest offset, 14:00")
    return FixedOffset(-magnitude if text[0] == "-" else magnitude)


# -- IANA zones -------------------------------------------------------------------


class Transition(NamedTuple):
    """A change of a zone's offset: from ``at`` (a UTC minute) on, the offset is ``after``."""

    at: int
    before: int
    after: int

    @property
    def jump(self) -> int:
        """Minutes the wall clock jumps: > 0 springs forward (a gap), < 0 falls back (a repeat)."""
        return self.after - self.before


@dataclass(frozen=True)
class IanaZone:
    """A zone of the tz database by name (``Europe/Berlin``); hashable, compared by name.

    Building one checks the name (ZoneError for an unknown one); the zone's
    data is read once per name and shared.
    """

    name: str

    def __post_init__(self) -> None:
        _zone_data_or_error(self.name, "tz")

    def utc_offset(self, utc_minute: int) -> int:
        return _zone_data(self.name).offset(utc_minute)

    def abbreviation(self, utc_minute: int) -> str:
        """The zone's abbreviation at that instant (``CET``, ``CEST``, ``+13``)."""
        return _zone_data(self.name).abbreviation(utc_minute)

    def transitions(self, after: int, through: int) -> list[Transition]:
        """The offset changes with after < at <= through, in order."""
        return _zone_data(self.name).transitions(after, through)

    def next_transition(self, after: int, through: int) -> Transition | None:
        """The first offset change with after < at <= through."""
        return _zone_data(self.name).next_transition(after, through)

    def last_transition(self, at_or_before: int, since: int) -> Transition | None:
        """The last offset change with since < at <= at_or_before."""
        return _zone_data(self.name).last_transition(at_or_before, since)


AnyZone = Union[FixedOffset, IanaZone]


def parse_zone(text: object, field: str = "tz") -> AnyZone:
    """A fixed offset (``+05:30``, exactly as ``parse_offset`` takes it) or an IANA zone name."""
    if isinstance(text, str) and text[:1] in ("+", "-"):
        return parse_offset(text, field)
    if not isinstance(text, str):
        raise ZoneError(field, "must be an offset like +05:30 or a zone name like Europe/Berlin")
    _zone_data_or_error(text, field)
    return IanaZone(text)


def _zone_data_or_error(name: object, field: str) -> _ZoneData:
    if not isinstance(name, str) or not name:
        raise ZoneError(field, f"unknown time zone {name!r}")
    try:
        return _zone_data(name)
    except _UnknownZone as error:
        raise ZoneError(field, f"unknown time zone {name!r}{error.detail}") from None


class _UnknownZone(Exception):
    def __init__(self, detail: str = "") -> None:
        super().__init__(detail)
        self.detail = detail


# A name that is not a fixed zone but whatever the host is set to: not reproducible.
_HOST_DEPENDENT = frozenset({"localtime", "posixrules", "Factory"})


@lru_cache(maxsize=None)
def _zone_data(name: str) -> _ZoneData:
    if name in _HOST_DEPENDENT:
        raise _UnknownZone(" (it depends on the host, name a zone)")
    try:
        zoneinfo.ZoneInfo(name)  # the standard library decides which names exist
    except (KeyError, ValueError, OSError, TypeError):
        raise _UnknownZone() from None
    try:
        return _parse_tzif(_read_tzif(name))
    except (OSError, ValueError, struct.error) as error:
        raise _UnknownZone(f" (unreadable zone data: {error})") from None


def _read_tzif(name: str) -> bytes:
    """The zone's TZif file, found where zoneinfo looks: TZPATH, then the tzdata package."""
    for directory in zoneinfo.TZPATH:
        try:
            with open(f"{directory}/{name}", "rb") as stream:
                return stream.read()
        except OSError:
            continue
    return resources.files("tzdata.zoneinfo").joinpath(*name.split("/")).read_bytes()


def _minute_at(seconds: int) -> int:
    """The first whole minute at or after an instant in seconds."""
    return -(-seconds // 60)


class _ZoneData:
    """One zone's offsets: the TZif list of transitions, then the footer's rule."""

    def __init__(self, times: list[int], offsets: list[int], abbrs: list[str], initial: tuple[int, str],
                 rule: _Rule | None) -> None:
        # times[i]: a UTC minute from which offsets[i] / abbrs[i] hold (sorted, may repeat offsets).
        self.times = times
        self.offsets = offsets
        self.abbrs = abbrs
        self.initial = initial
        self.rule = rule
        self.rule_from = times[-1] if times else None  # the rule holds after the last listed time
        changes: list[Transition] = []
        before = initial[0]
        for at, after in zip(times, offsets):
            if after != before:
                changes.append(Transition(at, before, after))
            before = after
        self.listed = changes
        self.listed_at = [change.at for change in changes]

    def _rule_at(self, utc_minute: int) -> _Rule | None:
        """The footer's rule, when it is what holds at that instant."""
        if self.rule is not None and (self.rule_from is None or utc_minute > self.rule_from):
            return self.rule
        return None

    def offset(self, utc_minute: int) -> int:
        rule = self._rule_at(utc_minute)
        if rule is not None:
            return rule.offset(utc_minute)
        i = bisect_right(self.times, utc_minute)
        return self.offsets[i - 1] if i else self.initial[0]

    def abbreviation(self, utc_minute: int) -> str:
        rule = self._rule_at(utc_minute)
        if rule is not None:
            return rule.abbreviation(utc_minute)
        i = bisect_right(self.times, utc_minute)
        return self.abbrs[i - 1] if i else self.initial[1]

    def _rule_transitions(self, after: int, through: int, reverse: bool = False) -> Iterator[Transition]:
        """The rule's changes with after < at <= through (only after the listed ones), year by year."""
        rule = self.rule
        if rule is None or not rule.has_dst:
            return
        if self.rule_from is not None:
            after = max(after, self.rule_from)
        if through <= after:
            return
        first, last = year_of(after + 1), year_of(through)
        years = range(last, first - 1, -1) if reverse else range(first, last + 1)
        for year in years:
            changes = rule.year_transitions(year)
            for change in (reversed(changes) if reverse else changes):
                if after < change.at <= through:
                    yield change

    def transitions(self, after: int, through: int) -> list[Transition]:
        listed = self.listed[bisect_right(self.listed_at, after):bisect_right(self.listed_at, through)]
        return listed + list(self._rule_transitions(after, through))

    def next_transition(self, after: int, through: int) -> Transition | None:
        i = bisect_right(self.listed_at, after)
        if i < len(self.listed):
            change = self.listed[i]
            return change if change.at <= through else None
        return next(self._rule_transitions(after, through), None)

    def last_transition(self, at_or_before: int, since: int) -> Transition | None:
        found = next(self._rule_transitions(since, at_or_before, reverse=True), None)
        if found is not None:
            return found
        i = bisect_right(self.listed_at, at_or_before)
        if i and self.listed[i - 1].at > since:
            return self.listed[i - 1]
        return None


def _parse_tzif(data: bytes) -> _ZoneData:
    """RFC 8536: version 1 data, or (version 2+) the 64-bit data and the TZ string footer."""
    if data[:4] != b"TZif":
        raise ValueError("not a TZif file")
    counts = struct.unpack(">6l", data[20:44])
    pos = 44
    time_size = 4
    if data[4:5] >= b"2":
        isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = counts
        pos += timecnt * 5 + typecnt * 6 + charcnt + leapcnt * 8 + isstdcnt + isutcnt
        if data[pos:pos + 4] != b"TZif":
            raise ValueError("no second TZif header")
        counts = struct.unpack(">6l", data[pos + 20:pos + 44])
        pos += 44
        time_size = 8
    isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = counts
    times = struct.unpack(f">{timecnt}{'q' if time_size == 8 else 'l'}", data[pos:pos + timecnt * time_size])
    pos += timecnt * time_size
    indices = data[pos:pos + timecnt]
    pos += timecnt
    types = [struct.unpack(">lBB", data[pos + 6 * i:pos + 6 * i + 6]) for i in range(typecnt)]
    pos += typecnt * 6
    chars = data[pos:pos + charcnt]
    pos += charcnt + leapcnt * (time_size + 4) + isstdcnt + isutcnt

    def abbr(index: int) -> str:
        return chars[index:chars.index(b"\0", index)].decode("ascii", "replace")

    type_info = [(utoff // 60, abbr(abbrind)) for utoff, _isdst, abbrind in types]
    rule = None
    if time_size == 8 and data[pos:pos + 1] == b"\n":
        footer = data[pos + 1:data.index(b"\n", pos + 1)].decode("ascii")
        if footer:
            rule = _parse_tz_string(footer)
    minutes = [_minute_at(t) for t in times]
    return _ZoneData(minutes, [type_info[i][0] for i in indices], [type_info[i][1] for i in indices],
                     type_info[0] if type_info else (0, "UTC"), rule)


# -- the POSIX TZ rule of a TZif footer (e.g. "CET-1CEST,M3.5.0,M10.5.0/3") -------------

# A rule date: ("J", n, 0, 0), ("n", n, 0, 0) or ("M", month, week, weekday); with the
# seconds after local midnight at which the change happens.
_RuleDate = tuple[str, int, int, int]
_RuleWhen = tuple[_RuleDate, int]


class _Rule:
    """Standard time, and optionally daylight time between two yearly dates.

    POSIX offsets count west of Greenwich; here, as everywhere in the core,
    offsets are minutes east (added to UTC). The start of daylight time is
    given in standard local time, its end in daylight local time.
    """

    def __init__(self, std: tuple[str, int], dst: tuple[str, int] | None,
                 start: _RuleWhen | None, end: _RuleWhen | None) -> None:
        self.std_abbr, self.std_offset = std
        self.dst_abbr, self.dst_offset = dst if dst is not None else (self.std_abbr, self.std_offset)
        self.has_dst = dst is not None and start is not None and end is not None
        self.start, self.end = start, end
        self._years: dict[int, tuple[Transition, ...]] = {}
        self._year_start: dict[int, bool] = {}

    def _events(self, year: int) -> list[tuple[int, int]]:
        """(UTC minute, 1 = daylight starts / 0 = it ends) of the rule's year."""
        assert self.start is not None and self.end is not None  # called only when has_dst
        (start_date, start_time), (end_date, end_time) = self.start, self.end
        start = _minute_at(_rule_day(start_date, year) * 86400 + start_time - self.std_offset * 60)
        end = _minute_at(_rule_day(end_date, year) * 86400 + end_time - self.dst_offset * 60)
        return [(start, 1), (end, 0)]

    def _walk(self, year: int) -> Iterator[tuple[int, bool]]:
        """(instant, daylight after it) for the rule's changes of years year-2 .. year+2, in order;
        simultaneous events (a daylight time that lasts all year) are merged."""
        events = sorted(event for y in range(year - 2, year + 3) for event in self._events(y))
        for at, group in groupby(events, key=lambda event: event[0]):
            yield at, list(group)[-1][1] == 1  # at one instant an end (0) sorts before a start (1)

    def year_transitions(self, year: int) -> tuple[Transition, ...]:
        """The changes in the UTC calendar year ``year``."""
        cached = self._years.get(year)
        if cached is not None:
            return cached
        changes: list[Transition] = []
        if self.has_dst:
            low, high = year_start(year) * MINUTES_PER_DAY, year_start(year + 1) * MINUTES_PER_DAY
            daylight = None
            for at, now_daylight in self._walk(year):
                if daylight is not None and now_daylight != daylight and low <= at < high:
                    before, after = self._offset_of(daylight), self._offset_of(now_daylight)
                    if before != after:
                        changes.append(Transition(at, before, after))
                daylight = now_daylight
        result = self._years[year] = tuple(changes)
        return result

    def _offset_of(self, daylight: bool) -> int:
        return self.dst_offset if daylight else self.std_offset

    def _daylight(self, utc_minute: int) -> bool:
        if not self.has_dst:
            return False
        daylight = False
        for at, now_daylight in self._walk(year_of(utc_minute)):
            if at > utc_minute:
                break
            daylight = now_daylight
        return daylight

    def offset(self, utc_minute: int) -> int:
        if not self.has_dst:
            return self.std_offset
        year = year_of(utc_minute)
        changes = self.year_transitions(year)
        i = bisect_right([change.at for change in changes], utc_minute)
        if i:
            return changes[i - 1].after
        start = self._year_start.get(year)
        if start is None:
            start = self._year_start[year] = self._daylight(year_start(year) * MINUTES_PER_DAY - 1)
        return self._offset_of(start)

    def abbreviation(self, utc_minute: int) -> str:
        return self.dst_abbr if self._daylight(utc_minute) else self.std_abbr


def _rule_day(date: _RuleDate, year: int) -> int:
    """Days since 1970-01-01 of a rule date in a year."""
    kind = date[0]
    if kind == "J":  # 1..365, 29 February never counted
        n = date[1]
        return year_start(year) + n - 1 + (1 if is_leap(year) and n >= 60 else 0)
    if kind == "n":  # 0..365, 29 February counted
        return year_start(year) + date[1]
    _, month, week, day = date
    first = days_from_civil(year, month, 1)
    found = first + (day - weekday(first)) % 7 + (week - 1) * 7
    while found >= first + days_in_month(year, month):  # week 5: the last such day
        found -= 7
    return found


def _parse_tz_string(text: str) -> _Rule:
    """The rule of a POSIX TZ string (a TZif file's footer), e.g. ``CET-1CEST,M3.5.0,M10.5.0/3``."""
    return _TzString(text).rule()


class _TzString:
    """A reader of one POSIX TZ string, left to right: ``std offset [dst [offset] ,start[/time],end[/time]]``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def rule(self) -> _Rule:
        std_abbr = self.name()
        std = (std_abbr, -self.clock() // 60)
        if self.at_end():
            return _Rule(std, None, None, None)
        dst_abbr = self.name()
        dst_offset = std[1] + 60
        if not self.at_end() and self.text[self.pos] != ",":
            dst_offset = -self.clock() // 60
        if self.at_end():  # daylight time named but no rule: POSIX leaves it open; use none
            return _Rule(std, None, None, None)
        self.pos += 1  # ","
        start = self.when()
        self.pos += 1  # ","
        end = self.when()
        return _Rule(std, (dst_abbr, dst_offset), start, end)

    def at_end(self) -> bool:
        return self.pos == len(self.text)

    def name(self) -> str:
        """An abbreviation: three letters or more, or anything between < and >."""
        text = self.text
        if text[self.pos:self.pos + 1] == "<":
            close = text.index(">", self.pos)
            found, self.pos = text[self.pos + 1:close], close + 1
            return found
        start = self.pos
        while self.pos < len(text) and text[self.pos].isalpha():
            self.pos += 1
        if self.pos - start < 3:
            raise ValueError(f"bad zone abbreviation in TZ string {text!r}")
        return text[start:self.pos]

    def clock(self) -> int:
        """[+-]hh[:mm[:ss]] in seconds."""
        sign = 1
        if self.text[self.pos:self.pos + 1] in ("+", "-"):
            sign = -1 if self.text[self.pos] == "-" else 1
            self.pos += 1
        parts = []
        for _ in range(3):
            parts.append(self.number("time"))
            if self.text[self.pos:self.pos + 1] != ":":
                break
            self.pos += 1
        parts += [0] * (3 - len(parts))
        return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])

    def number(self, what: str = "rule date") -> int:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isdigit():
            self.pos += 1
        if start == self.pos:
            raise ValueError(f"bad {what} in TZ string {self.text!r}")
        return int(self.text[start:self.pos])

    def when(self) -> _RuleWhen:
        """A rule date (Jn, n or Mm.w.d) and its time of day, 02:00 by default."""
        kind = self.text[self.pos]
        date: _RuleDate
        if kind == "J":
            self.pos += 1
            date = ("J", self.number(), 0, 0)
        elif kind == "M":
            self.pos += 1
            month = self.number()
            self.pos += 1  # "."
            week = self.number()
            self.pos += 1  # "."
            date = ("M", month, week, self.number())
        else:
            date = ("n", self.number(), 0, 0)
        seconds = 7200
        if self.text[self.pos:self.pos + 1] == "/":
            self.pos += 1
            seconds = self.clock()
        return date, seconds


def local_rfc3339(utc_minute: int, zone: Zone) -> str:
    """The instant as the zone's wall clock with its offset then: ``2024-03-31T03:00:00+02:00``."""
    offset = zone.utc_offset(utc_minute)
    sign = "-" if offset < 0 else "+"
    hours, minutes = divmod(abs(offset), 60)
    return f"{format_time(utc_minute + offset)}:00{sign}{hours:02d}:{minutes:02d}"


__all__ = ["Zone", "FixedOffset", "IanaZone", "Transition", "AnyZone", "UTC", "parse_offset", "parse_zone",
           "local_rfc3339", "MAX_OFFSET_MINUTES"]
