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
  weekday). Each firing day fires at local HH:MM (once, but for a
  daylight-saving change: see Zones), and a firing is any such time
  *strictly after* the anchor. So the k = 0 day -- the anchor's own
  local date -- fires when its HH:MM is still ahead of the anchor: a schedule
  made at 08:00 with ``every(2).days.at(09:00)`` fires at 09:00 the same day,
  then two days later; made at 09:00 or later, it first fires two days later.

Zones
-----

Elapsed rules take no zone. An ``.at()`` rule reads its zone (a
``zones.FixedOffset`` or ``zones.IanaZone``) for the anchor's local date and
for when each local HH:MM happens. It is a *fixed-time* schedule, so across
a daylight-saving change it follows the rule of the cron jobs whose minute
and hour fields do not begin with ``*`` (``dst.py``, Vixie cron's): a
local time skipped by a spring forward of under three hours fires once,
right at the change; a repeated one fires once, in its first copy; a jump
of three hours or more is taken literally, so a skipped time does not fire
and a repeated one fires in both copies. Firing days are counted in local
calendar days whether or not a day happened: in Pacific/Apia, whose
2011-12-30 was skipped, ``every(2).days.at(09:00)`` from 12-28 has the
firing days 12-28, 12-30 (which does not fire) and 01-01.

Cost
----

``EveryRule.times`` answers ``next_after``, ``latest_in`` and ``count_in``
(``schedule.ScheduleTimes``) without stepping through firings.
Elapsed rules, and ``.at()`` rules at a fixed offset, are arithmetic
progressions of UTC minutes (``interval.Progression``). In an IANA zone an
``.at()`` rule's wall times are such a progression in local minutes, searched
between the zone's transitions like a cron job.

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

from .cron import HORIZON_YEARS
from .dst import DaylightSaving, ZonedSearch
from .errors import ExpressionError
from .interval import Progression
from .times import MINUTES_PER_DAY
from .zones import AnyZone, FixedOffset, IanaZone

MAX_TOTAL_MINUTES = 525_600  # one year of minutes, as for @every
MAX_JITTER_SECONDS = 3600

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

    def times(self, anchor: int, zone: AnyZone,
              rule: DaylightSaving = DaylightSaving.VIXIE) -> Progression | ZonedAtTimes:
        """The firings after ``anchor`` (see the module notes); ``rule`` applies to ``.at()``."""
        if self.at is None or self.step_days is None:
            return Progression(anchor + self.step_minutes, self.step_minutes)
        local_anchor = anchor + zone.utc_offset(anchor)
        day_start = local_anchor - local_anchor % MINUTES_PER_DAY
        wall_times = Progression(day_start + self.at, self.step_days * MINUTES_PER_DAY)
        if isinstance(zone, FixedOffset):
            return Progression(wall_times.next_after(local_anchor) - zone.minutes, wall_times.step)
        return ZonedAtTimes(wall_times, zone, anchor, rule)


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

    at, jitter = _at_and_jitter(calls[1:], unit, unit_name)

    canonical = f"every({count}).{_SINGULAR[unit] if count == 1 else unit}"
    if at is not None:
        canonical += f".at({at // 60:02d}:{at % 60:02d})"
    if jitter is not None:
        canonical += f".jitter({jitter})"
    step_days = None if unit in ("minutes", "hours") else count * unit_minutes // MINUTES_PER_DAY
    return EveryRule(text=canonical, count=count, unit=unit, step_minutes=count * unit_minutes,
                     step_days=step_days, at=at, jitter_seconds=jitter)


def _at_and_jitter(calls: list[tuple[str, str | None]], unit: str, unit_name: str) -> tuple[int | None, int | None]:
    """The ``.at(HH:MM)`` and ``.jitter(S)`` after a rule's unit, each at most once."""
    at: int | None = None
    jitter: int | None = None
    for name, arg in calls:
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
    return at, jitter


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


# -- schedule times in an IANA zone ----------------------------------------------------------------


class _WallTimes:
    """An ``.at()`` rule's firing wall times (a Progression of local minutes) as ``dst.LocalTimes``."""

    __slots__ = ("days",)

    def __init__(self, days: Progression) -> None:
        self.days = days

    def next_local(self, after: int, years_ahead: int) -> int:
        return self.days.next_after(after)  # the next firing day is at most a year away: within the horizon

    def previous_local(self, at_or_before: int, floor: int) -> int | None:
        return self.days.latest_in(floor, at_or_before)

    def count_local(self, low: int, high: int, limit: int) -> int:
        return self.days.count_in(low, high, limit)

    def matches(self, local_minute: int) -> bool:
        return self.days.includes(local_minute)


class ZonedAtTimes:
    """The firings of an ``.at()`` rule in an IANA zone: its wall times from the anchor's
    local date on, searched as a fixed-time schedule, and only those after the anchor."""

    __slots__ = ("search", "anchor")

    def __init__(self, wall_times: Progression, zone: IanaZone, anchor: int,
                 rule: DaylightSaving = DaylightSaving.VIXIE) -> None:
        self.search = ZonedSearch(_WallTimes(wall_times), zone, fixed_time=True, horizon_years=HORIZON_YEARS,
                                  rule=rule)
        self.anchor = anchor

    def next_after(self, t: int) -> int | None:
        return self.search.next_fire(max(t, self.anchor))

    def latest_in(self, low: int, high: int) -> int | None:
        low = max(low, self.anchor)
        return self.search.latest_in(low, high) if high > low else None

    def count_in(self, low: int, high: int, limit: int) -> int:
        low = max(low, self.anchor)
        return self.search.count_in(low, high, limit) if high > low else 0

    def next_runs(self, after: int, count: int) -> list[int]:
        return self.search.next_runs(max(after, self.anchor), count)

    def chain_end(self, first: int) -> None:
        return None


__all__ = [
    "EveryRule", "ZonedAtTimes", "is_every", "parse_every", "check_jitter_allowed", "effective_jitter",
    "rule_jitter", "jitter_offset", "actual_time", "MAX_TOTAL_MINUTES", "MAX_JITTER_SECONDS",
]
