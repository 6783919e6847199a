"""``every(N).unit``: the second rule syntax of seed 004, parsed and counted.

Grammar
-------

``every(N).unit``, then optionally ``.at(HH:MM)`` and ``.jitter(S)``:

* units: ``minute``/``minutes``, ``hour``/``hours``, ``day``/``days``,
  ``week``/``weeks``; a singular form is the same unit as its plural;
* ``N``: a positive whole number in ASCII digits, without sign or leading
  zeros; ``N`` units together are at most ``MAX_TOTAL_MINUTES`` (one year of
  minutes, as for ``@every``): at most 525600 minutes, 8760 hours, 365 days
  or 52 weeks;
* ``.at(HH:MM)``: two digits each, ``00:00`` to ``23:59``; only for days and
  weeks;
* ``.jitter(S)``: whole seconds ``0`` to ``3600``, no sign or leading zeros;
* ``.at()`` and ``.jitter()`` at most once each, in either order;
* whitespace around the rule is ignored, none is allowed inside it; the rule
  is written in lower case only (like ``@every``).

The canonical text (``EveryRule.text``) writes the unit in the singular when
N is 1 and in the plural otherwise, then ``.at()``, then ``.jitter()``:
``every(1).days.jitter(30).at(09:00)`` becomes ``every(1).day.at(09:00).jitter(30)``.

A refusal raises ``ExpressionError(field, reason)`` with the field ``every``
(the shape of the rule and N), ``unit``, ``at`` or ``jitter``.

Schedule times
--------------

Like ``@every``, a rule counts from its *anchor* (the schedule's creation;
for ``cronctl next``, ``--after``). All times are minutes since 1970-01-01 UTC.

* *Elapsed rules*: minutes, hours, and days or weeks without ``.at()``. They
  are counted in UTC: ``anchor + k * step_minutes`` for k = 1, 2, ... (never
  the anchor itself). A day is 1440 minutes and a week 10080, whatever the
  zone does.
* *``.at()`` rules* (days or weeks with ``.at()``) are counted in the schedule's
  zone. The firing days are ``D0 + k * step_days`` for k = 0, 1, 2, ..., where
  D0 is the local date of the anchor (weeks therefore fire on the anchor's
  weekday). Each firing day fires once, at local HH:MM, and a firing is any
  such time *strictly after* the anchor. So the k = 0 day -- the anchor's own
  local date -- fires when its HH:MM is still ahead of the anchor: a schedule
  made at 08:00 with ``every(2).days.at(09:00)`` fires at 09:00 the same day,
  then two days later; made at 09:00 or later, it first fires two days later.

Zones
-----

An ``.at()`` rule needs a ``LocalClock``: ``to_local(utc_minute)`` (the local
wall minute at that instant) and ``to_utc(local_minute)`` (the one UTC minute
at which that local wall time fires). ``to_utc`` is where a zone resolves a
local time that does not exist or exists twice; it must be strictly
increasing over times of one time of day at least a day apart (true of every
real zone with the default resolution below). ``as_clock`` accepts:

* ``None`` (UTC), an int offset in minutes, or any object with an int
  ``minutes`` (``zones.FixedOffset``): fixed-offset arithmetic;
* any object with ``to_local`` and ``to_utc`` (a ``LocalClock``; ``Clock``
  wraps two plain callables): used as it is;
* any object with ``utc_offset(utc_minute)`` (the ``zones.Zone`` protocol, e.g.
  a daylight-saving zone): wrapped in a ``ZoneClock``, which calls a
  ``Resolver`` for a skipped or repeated local time. The default resolver
  fires at the first minute whose local wall time is HH:MM or later: a
  repeated time fires once, at its first occurrence; a skipped time fires once,
  right at the change (Vixie cron's rule for a fixed-time job). It does so for
  any size of jump, so every firing day fires exactly once: in Pacific/Apia,
  whose 2011-12-30 never happened, ``every(1).day.at(09:00)`` fires at the
  change (local 12-31 00:00) and again at 12-31 09:00. (Plain fixed-offset
  arithmetic with the offset before the change would put the 12-30 firing on
  the minute of the 12-31 one.)

Cost
----

``next_after``, ``latest_in`` and ``count_in`` never step through firings.
Elapsed rules are plain arithmetic. ``.at()`` rules estimate the firing index
from the local time and correct it with a galloping search on ``to_utc``:
one to three zone calls for any real zone, O(log error) in general.

Jitter
------

``.jitter(S)`` moves the actual time, never the nominal one. ``jitter_offset``
is a deterministic offset in 0..S seconds: the first 8 bytes (big endian) of
``sha256(f"{schedule_name}\\n{nominal_minute}")`` modulo S + 1. The same
firing always gets the same offset, in every process and on every node; the
actual time is ``nominal_minute * 60 + offset`` seconds. The caller applies
it to scheduled firings only (a catch-up takes no jitter). A rule that sets
``.jitter()`` -- ``.jitter(0)`` included -- needs the schedule's own jitter
at 0 (``check_jitter_allowed``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

from .errors import ExpressionError

MAX_TOTAL_MINUTES = 525_600  # one year of minutes, as for @every
MAX_JITTER_SECONDS = 3600
MINUTES_PER_DAY = 1440

# name as written -> (canonical plural, minutes in one unit)
_UNITS: dict[str, tuple[str, int]] = {
    "minute": ("minutes", 1), "minutes": ("minutes", 1),
    "hour": ("hours", 60), "hours": ("hours", 60),
    "day": ("days", MINUTES_PER_DAY), "days": ("days", MINUTES_PER_DAY),
    "week": ("weeks", 7 * MINUTES_PER_DAY), "weeks": ("weeks", 7 * MINUTES_PER_DAY),
}
_SINGULAR = {"minutes": "minute", "hours": "hour", "days": "day", "weeks": "week"}
_UNIT_LIST = "minute(s), hour(s), day(s), week(s)"
_FORM = "every(N).unit, then optionally .at(HH:MM) and .jitter(S)"


# -- the rule ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EveryRule:
    """A parsed ``every(N).unit`` rule."""

    text: str                   # the canonical text
    count: int                  # N
    unit: str                   # "minutes", "hours", "days" or "weeks" (always the plural)
    step_minutes: int           # N units in minutes: the step of an elapsed rule (every unit)
    step_days: int | None       # days and weeks: N, or 7N for weeks; None for minutes and hours
    at: int | None              # .at(): minute of the local day (days and weeks only), else None
    jitter_seconds: int | None  # .jitter(S): S; None when the rule sets no jitter

    @property
    def elapsed(self) -> bool:
        """Counted in UTC from the anchor (no ``.at()``); else counted in the schedule's zone."""
        return self.at is None


def is_every(text: object) -> bool:
    """Whether ``text`` is meant as an ``every(...)`` rule (to pick the parser).

    Any case counts, so that ``EVERY(5).minutes`` reaches ``parse_every`` and
    is refused for its case rather than as a broken cron expression. No cron
    expression starts with a letter.
    """
    return isinstance(text, str) and text.lstrip()[:5].lower() == "every"


def _shown(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:24] + "...")


def parse_every(text: object) -> EveryRule:
    """Compile an ``every(N).unit`` rule; raises ExpressionError (field and reason)."""
    if not isinstance(text, str):
        raise ExpressionError("every", "must be a string")
    rule = text.strip()
    if any(ch.isspace() for ch in rule):
        raise ExpressionError("every", f"{_shown(rule)} has whitespace inside; write the rule without spaces")
    if rule != rule.lower():
        raise ExpressionError("every", f"{_shown(rule)} must be written in lower case")
    if not rule.startswith("every("):
        raise ExpressionError("every", f"{_shown(rule)} is not of the form {_FORM}")
    close = rule.find(")")
    if close < 0:
        raise ExpressionError("every", f"{_shown(rule)}: 'every(' is not closed")
    count_text = rule[len("every("):close]
    if (not count_text or not count_text.isascii() or not count_text.isdigit()
            or count_text[0] == "0"):
        raise ExpressionError("every", f"{_shown(count_text)} is not a positive whole number "
                              "without sign or leading zeros")
    calls = _split_calls(rule[close + 1:])

    if not calls:
        raise ExpressionError("unit", "every(N) needs a unit: .minutes, .hours, .days or .weeks")
    unit_name, unit_arg = calls[0]
    if unit_name in ("at", "jitter"):
        raise ExpressionError("unit", f"a unit (.minutes, .hours, .days or .weeks) comes before .{unit_name}()")
    if unit_name not in _UNITS:
        raise ExpressionError("unit", f"{_shown(unit_name)} is not one of {_UNIT_LIST}")
    if unit_arg is not None:
        raise ExpressionError("unit", f".{unit_name} takes no parentheses")
    unit, unit_minutes = _UNITS[unit_name]
    if len(count_text) > 6 or int(count_text) * unit_minutes > MAX_TOTAL_MINUTES:
        raise ExpressionError("every", f"every({count_text[:24]}).{unit} is longer than one year "
                              f"({MAX_TOTAL_MINUTES} minutes)")
    count = int(count_text)

    at: int | None = None
    jitter: int | None = None
    for name, arg in calls[1:]:
        if name == "at":
            if at is not None:
                raise ExpressionError("at", ".at() is given twice")
            if unit not in ("days", "weeks"):
                raise ExpressionError("at", ".at() is only for days and weeks")
            at = _parse_at(arg)
        elif name == "jitter":
            if jitter is not None:
                raise ExpressionError("jitter", ".jitter() is given twice")
            jitter = _parse_jitter(arg)
        elif name in _UNITS:
            raise ExpressionError("unit", f"a rule has one unit: {_shown(name)} follows .{unit_name}")
        else:
            raise ExpressionError("every", f"{_shown(name)} is not part of a rule; after the unit "
                                  "come .at(HH:MM) and .jitter(S)")

    canonical = f"every({count}).{_SINGULAR[unit] if count == 1 else unit}"
    if at is not None:
        canonical += f".at({at // 60:02d}:{at % 60:02d})"
    if jitter is not None:
        canonical += f".jitter({jitter})"
    step_days = None if unit in ("minutes", "hours") else count * unit_minutes // MINUTES_PER_DAY
    return EveryRule(text=canonical, count=count, unit=unit, step_minutes=count * unit_minutes,
                     step_days=step_days, at=at, jitter_seconds=jitter)


def _split_calls(rest: str) -> list[tuple[str, str | None]]:
    """``.name`` and ``.name(arg)`` parts after ``every(N)``: (name, arg or None)."""
    calls: list[tuple[str, str | None]] = []
    pos = 0
    while pos < len(rest):
        if rest[pos] != ".":
            raise ExpressionError("every", f"unexpected {_shown(rest[pos:])}; the form is {_FORM}")
        start = end = pos + 1
        while end < len(rest) and rest[end] not in ".()":
            end += 1
        name = rest[start:end]
        arg: str | None = None
        if end < len(rest) and rest[end] == "(":
            close = rest.find(")", end)
            if close < 0:
                raise ExpressionError(name if name in ("at", "jitter") else "every",
                                      f"'.{name}(' is not closed")
            arg = rest[end + 1:close]
            end = close + 1
        if not name:
            raise ExpressionError("every", f"a '.' is followed by no name; the form is {_FORM}")
        calls.append((name, arg))
        pos = end
    return calls


def _parse_at(arg: str | None) -> int:
    if arg is None:
        raise ExpressionError("at", ".at needs a time: .at(HH:MM)")
    hours, minutes = arg[0:2], arg[3:5]
    if (len(arg) != 5 or arg[2] != ":" or not (hours + minutes).isascii()
            or not (hours + minutes).isdigit() or int(hours) > 23 or int(minutes) > 59):
        raise ExpressionError("at", f"{_shown(arg)} is not a time HH:MM from 00:00 to 23:59")
    return int(hours) * 60 + int(minutes)


def _parse_jitter(arg: str | None) -> int:
    if arg is None:
        raise ExpressionError("jitter", ".jitter needs seconds: .jitter(S)")
    if (not arg or not arg.isascii() or not arg.isdigit() or (arg[0] == "0" and arg != "0")):
        raise ExpressionError("jitter", f"{_shown(arg)} is not a whole number of seconds "
                              "without sign or leading zeros")
    if len(arg) > 4 or int(arg) > MAX_JITTER_SECONDS:
        raise ExpressionError("jitter", f"{arg if len(arg) <= 24 else arg[:24] + '...'} "
                              f"is out of range 0-{MAX_JITTER_SECONDS}")
    return int(arg)


# -- jitter -----------------------------------------------------------------------------------------


def rule_jitter(rule: object) -> int | None:
    """The jitter a rule sets, or None (any expression: cron and ``@every`` set none)."""
    return getattr(rule, "jitter_seconds", None)


def check_jitter_allowed(rule: object, schedule_jitter_seconds: int) -> None:
    """A rule that sets ``.jitter()`` (even ``.jitter(0)``) needs the schedule's own jitter at 0."""
    if rule_jitter(rule) is not None and schedule_jitter_seconds:
        raise ExpressionError("jitter", "a rule that sets .jitter() needs the schedule's own jitter at 0")


def effective_jitter(rule: object, schedule_jitter_seconds: int) -> int:
    """The jitter in seconds that applies: the rule's own when it sets one, else the schedule's."""
    own = rule_jitter(rule)
    return schedule_jitter_seconds if own is None else own


def jitter_offset(jitter: EveryRule | int, schedule_name: str, nominal_minute: int) -> int:
    """The seconds by which this firing's actual time follows its nominal time: 0..S.

    ``jitter`` is a rule (its ``.jitter()``, 0 when unset) or a number of
    seconds S. Deterministic: sha256 of ``f"{schedule_name}\\n{nominal_minute}"``,
    its first 8 bytes big endian, modulo S + 1.
    """
    seconds = jitter if isinstance(jitter, int) else (jitter.jitter_seconds or 0)
    if seconds < 0:
        raise ValueError(f"jitter must be at least 0 seconds, not {seconds}")
    if seconds == 0:
        return 0
    digest = hashlib.sha256(f"{schedule_name}\n{nominal_minute}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % (seconds + 1)


def actual_time(jitter: EveryRule | int, schedule_name: str, nominal_minute: int) -> int:
    """The jittered actual time, in **seconds** since 1970-01-01 UTC: nominal * 60 + offset."""
    return nominal_minute * 60 + jitter_offset(jitter, schedule_name, nominal_minute)


# -- zones ------------------------------------------------------------------------------------------


@runtime_checkable
class LocalClock(Protocol):
    def to_local(self, utc_minute: int) -> int:
        """The local wall minute at a UTC instant."""
        ...

    def to_utc(self, local_minute: int) -> int:
        """The one UTC minute at which a local wall time fires (skips and repeats resolved)."""
        ...


@dataclass(frozen=True)
class FixedClock:
    """A constant offset: local = UTC + offset minutes."""

    offset: int

    def to_local(self, utc_minute: int) -> int:
        return utc_minute + self.offset

    def to_utc(self, local_minute: int) -> int:
        return local_minute - self.offset


UTC_CLOCK = FixedClock(0)


@dataclass(frozen=True)
class Clock:
    """A ``LocalClock`` from two plain callables."""

    to_local: Callable[[int], int]
    to_utc: Callable[[int], int]


# resolve(local_minute, change_utc, offset_before, offset_after) -> the UTC minute that fires.
# Called only for a local time that a change skips (after > before) or repeats (after < before);
# change_utc is the first UTC minute with the new offset.
Resolver = Callable[[int, int, int, int], int]


def first_at_or_after(local_minute: int, change_utc: int, offset_before: int, offset_after: int) -> int:
    """The default resolver: the first minute whose local wall time reads ``local_minute`` or later.

    A repeated time: its first occurrence (with the offset before the change).
    A skipped time: the change itself, the first minute after the jump.
    """
    if offset_after < offset_before:
        return local_minute - offset_before
    return change_utc


@dataclass(frozen=True)
class ZoneClock:
    """A ``LocalClock`` over any zone with ``utc_offset(utc_minute)`` (``zones.Zone``).

    Assumes at most one offset change within a day either side of a local
    time (true of every zone in the tz database).
    """

    zone: object
    resolve: Resolver = first_at_or_after

    def _offset(self, utc_minute: int) -> int:
        return self.zone.utc_offset(utc_minute)  # type: ignore[attr-defined]

    def to_local(self, utc_minute: int) -> int:
        return utc_minute + self._offset(utc_minute)

    def to_utc(self, local_minute: int) -> int:
        # Every instant that reads local_minute lies within 24 hours of it.
        early, late = local_minute - MINUTES_PER_DAY, local_minute + MINUTES_PER_DAY
        before, after = self._offset(early), self._offset(late)
        if before == after:
            return local_minute - before
        readings = [u for u in sorted({local_minute - before, local_minute - after})
                    if u + self._offset(u) == local_minute]
        if len(readings) == 1:
            return readings[0]
        # skipped (no reading) or repeated (two): find the change, the first minute off `before`
        while late - early > 1:
            middle = (early + late) // 2
            if self._offset(middle) == before:
                early = middle
            else:
                late = middle
        return self.resolve(local_minute, late, before, after)


def as_clock(zone: object = None) -> LocalClock:
    """The ``LocalClock`` of a zone argument (see the module notes)."""
    if zone is None:
        return UTC_CLOCK
    if isinstance(zone, int) and not isinstance(zone, bool):
        return FixedClock(zone)
    if hasattr(zone, "to_local") and hasattr(zone, "to_utc"):
        return zone  # type: ignore[return-value]
    minutes = getattr(zone, "minutes", None)
    if isinstance(minutes, int) and not isinstance(minutes, bool):
        return FixedClock(minutes)
    if hasattr(zone, "utc_offset"):
        return ZoneClock(zone)
    raise TypeError(f"not a zone: {zone!r}")


# -- schedule times ---------------------------------------------------------------------------------


class _AtDays:
    """The firings of an ``.at()`` rule: f(k) = to_utc(local HH:MM of day D0 + k * step_days)."""

    __slots__ = ("base", "span", "to_utc", "to_local", "first")

    def __init__(self, rule: EveryRule, anchor: int, clock: LocalClock) -> None:
        assert rule.at is not None and rule.step_days is not None
        self.to_utc = clock.to_utc
        self.to_local = clock.to_local
        self.base = self.to_local(anchor) // MINUTES_PER_DAY * MINUTES_PER_DAY + rule.at
        self.span = rule.step_days * MINUTES_PER_DAY
        self.first = 0
        self.first = self.first_index_after(anchor)  # k = 0 when the anchor's day still fires

    def fire(self, k: int) -> int:
        return self.to_utc(self.base + k * self.span)

    def first_index_after(self, t: int) -> int:
        """The smallest k >= self.first with f(k) > t (f strictly increasing)."""
        fire = self.fire
        k = max(self.first, (self.to_local(t) - self.base) // self.span + 1)  # the local estimate
        if fire(k) > t:  # gallop down to the first index above t
            high, step = k, 1
            low = high - step
            while low >= self.first and fire(low) > t:
                high, step = low, step * 2
                low = high - step
            low = max(low, self.first - 1)  # fire(low) <= t, or low is below the first index
        else:  # gallop up
            low, step = k, 1
            high = low + step
            while fire(high) <= t:
                low, step = high, step * 2
                high = low + step
        while high - low > 1:  # fire(low) <= t < fire(high)
            middle = (low + high) // 2
            if fire(middle) > t:
                high = middle
            else:
                low = middle
        return high


def next_after(rule: EveryRule, anchor: int, t: int, zone: object = None) -> int:
    """The first firing strictly after ``t`` (the first firing at all when t is before it)."""
    if rule.at is None:
        step = rule.step_minutes
        return anchor + max(1, (t - anchor) // step + 1) * step
    days = _AtDays(rule, anchor, as_clock(zone))
    return days.fire(days.first_index_after(t))


def latest_in(rule: EveryRule, anchor: int, low: int, high: int, zone: object = None) -> int | None:
    """The last firing in (low, high], or None."""
    low = max(low, anchor)
    if high <= low:
        return None
    if rule.at is None:
        step = rule.step_minutes
        k = (high - anchor) // step
        latest = anchor + k * step
        return latest if k >= 1 and latest > low else None
    days = _AtDays(rule, anchor, as_clock(zone))
    k = days.first_index_after(high) - 1
    if k < days.first:
        return None
    latest = days.fire(k)
    return latest if latest > low else None


def count_in(rule: EveryRule, anchor: int, low: int, high: int, limit: int, zone: object = None) -> int:
    """How many firings lie in (low, high], counting no further than ``limit``."""
    low = max(low, anchor)
    if high <= low or limit <= 0:
        return 0
    if rule.at is None:
        step = rule.step_minutes
        first_k = max(1, (low - anchor) // step + 1)
        last_k = (high - anchor) // step
        return max(0, min(limit, last_k - first_k + 1))
    days = _AtDays(rule, anchor, as_clock(zone))
    first_k = days.first_index_after(low)
    last_k = days.first_index_after(high) - 1
    return max(0, min(limit, last_k - first_k + 1))


def next_runs(rule: EveryRule, anchor: int, count: int, zone: object = None) -> list[int]:
    """The first ``count`` firings after the anchor (``cronctl next``: anchor = --after)."""
    if count <= 0:
        return []
    if rule.at is None:
        return [anchor + k * rule.step_minutes for k in range(1, count + 1)]
    days = _AtDays(rule, anchor, as_clock(zone))
    return [days.fire(days.first + i) for i in range(count)]


__all__ = [
    "EveryRule", "is_every", "parse_every", "check_jitter_allowed", "effective_jitter", "rule_jitter",
    "jitter_offset", "actual_time", "LocalClock", "FixedClock", "Clock", "ZoneClock", "Resolver",
    "first_at_or_after", "as_clock", "UTC_CLOCK", "next_after", "latest_in", "count_in", "next_runs",
    "MAX_TOTAL_MINUTES", "MAX_JITTER_SECONDS",
]
