"""Wall-time searches in an IANA zone, under a daylight-saving rule.

A schedule that fires at local wall times (a cron expression, an ``.at()``
rule) is searched here once its zone is an ``IanaZone``. UTC time is cut at
the zone's transitions into stretches of constant offset; inside one, the
schedule's own local-minute searches apply as they are (local = utc +
offset). What happens at a transition is the schedule's ``DaylightSaving``
rule. ``VIXIE``, the default, is Vixie cron's (``DST_ADJUSTED_BELOW``):

* A *fixed-time* schedule (a cron job whose minute and hour fields do not
  begin with ``*``, and every ``.at()`` rule) whose local time falls in a
  spring-forward gap runs once, at the transition itself (the first minute
  after the change). In a fall-back repeat it runs once, in the first copy of
  the repeated wall times.
* Every other schedule runs by real time, at each UTC minute whose local wall
  time matches: nothing for wall times a gap skips, both copies of repeated
  ones.
* A jump of three hours or more is taken literally by every schedule: gap
  times do not run, repeated times run in both copies.

``LITERAL`` reads the wall clock as the CronJob controller does, for every
schedule: wall times a gap skips do not run, repeated ones run in both
copies. ``SKIP`` runs no skipped wall time and each repeated one once, in its
first copy, for every schedule and every size of jump.

Only the zone's transitions are looked at, never single minutes.
"""

from __future__ import annotations

import enum
from typing import Protocol

from .times import MINUTES_PER_DAY, chain, year_of, year_start
from .zones import IanaZone, Transition

DST_ADJUSTED_BELOW = 180  # minutes: a jump at least this long is taken literally
LONGEST_REPEAT = 24 * 60  # minutes: no fall back repeats more (SKIP's look back for one)


class DaylightSaving(str, enum.Enum):
    """What a wall-clock schedule does at a zone's transitions (see the module notes)."""

    VIXIE = "Vixie"
    LITERAL = "Literal"
    SKIP = "Skip"


class LocalTimes(Protocol):
    """A schedule's firing wall times, in local minutes (see ``cron.CronExpression``)."""

    def next_local(self, after: int, years_ahead: int) -> int | None:
        """The first firing after ``after`` in a calendar year at most ``years_ahead`` after after's."""
        ...

    def previous_local(self, at_or_before: int, floor: int) -> int | None:
        """The last firing in (floor, at_or_before]."""
        ...

    def count_local(self, low: int, high: int, limit: int) -> int:
        """How many firings lie in (low, high], counting no further than ``limit``."""
        ...

    def matches(self, local_minute: int) -> bool:
        ...


class ZonedSearch:
    """The fires in UTC of a ``LocalTimes`` read in an IANA zone, by the rules above.

    Past a fall back shorter than DST_ADJUSTED_BELOW, a fixed-time schedule
    loses the fires of the second copy of the repeated wall times (the first
    ``-jump`` minutes from the transition); at such a spring forward it gains
    one fire at the transition when a skipped wall time matches. Nothing else
    changes. A next fire is looked for up to ``horizon_years`` local calendar
    years ahead.
    """

    def __init__(self, local: LocalTimes, zone: IanaZone, fixed_time: bool, horizon_years: int,
                 rule: DaylightSaving = DaylightSaving.VIXIE) -> None:
        self.local = local
        self.zone = zone
        self.fixed_time = fixed_time
        self.horizon_years = horizon_years
        self.rule = rule
        # How long after a transition it can still change what fires: a held-back repeat.
        self.look_back = LONGEST_REPEAT if rule is DaylightSaving.SKIP else DST_ADJUSTED_BELOW

    def local_year(self, utc: int) -> int:
        return year_of(utc + self.zone.utc_offset(utc))

    def _gap_fires(self, change: Transition) -> bool:
        """Whether a fixed-time schedule runs at this spring forward for wall times it skipped."""
        if self.rule is not DaylightSaving.VIXIE or not self.fixed_time \
                or not 0 < change.jump < DST_ADJUSTED_BELOW:
            return False
        skipped_from = change.at + change.before  # the first wall time that does not exist
        found = self.local.next_local(skipped_from - 1, 1)
        return found is not None and found < change.at + change.after

    def _repeat_end(self, change: Transition) -> int | None:
        """After a fall back, the end (exclusive) of the second copy of the repeated wall
        times, in which the schedule does not run; None when nothing is held back."""
        if change.jump >= 0 or self.rule is DaylightSaving.LITERAL:
            return None
        if self.rule is DaylightSaving.SKIP or (self.fixed_time and -DST_ADJUSTED_BELOW < change.jump):
            return change.at - change.jump
        return None

    def next_fire(self, after: int, last_year: int | None = None) -> int | None:
        """The first fire after ``after`` whose local year is at most ``last_year``
        (default: the local year of ``after`` + horizon_years)."""
        zone, local = self.zone, self.local
        if last_year is None:
            last_year = self.local_year(after) + self.horizon_years
        through = (year_start(last_year + 1) + 1) * MINUTES_PER_DAY  # past local last_year in any zone
        m = after + 1
        offset = zone.utc_offset(m)
        change = zone.last_transition(m, m - self.look_back)  # only a recent one can adjust m
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
                    found = local.next_local(local_after, ahead)
                    if found is not None and (upcoming is None or found - offset < upcoming.at) \
                            and (ahead > 0 or year_of(found) <= last_year):
                        return found - offset
            if upcoming is None:
                return None
            m, change, offset = upcoming.at, upcoming, upcoming.after

    def latest_in(self, low: int, high: int) -> int | None:
        """The last fire in (low, high]."""
        zone, local = self.zone, self.local
        m = high
        while m > low:
            change = zone.last_transition(m, low - self.look_back)
            offset = zone.utc_offset(m)
            floor = low
            if change is not None:
                floor = max(floor, change.at - 1)
                repeat_end = self._repeat_end(change)
                if repeat_end is not None:
                    floor = max(floor, repeat_end - 1)
            if m > floor:
                found = local.previous_local(m + offset, floor + offset)
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
        zone, local = self.zone, self.local
        count = 0
        m = low + 1
        offset = zone.utc_offset(m)
        change = zone.last_transition(m, m - self.look_back)
        while True:
            upcoming = zone.next_transition(m, high)
            last = high if upcoming is None else upcoming.at - 1
            floor = m - 1
            if change is not None:
                if change.at == m and self._gap_fires(change) and not local.matches(m + offset):
                    count += 1
                repeat_end = self._repeat_end(change)
                if repeat_end is not None:
                    floor = max(floor, repeat_end - 1)
            if last > floor and count < limit:
                count += local.count_local(floor + offset, last + offset, limit - count)
            if upcoming is None or count >= limit:
                return min(count, limit)
            m, change, offset = upcoming.at, upcoming, upcoming.after

    def next_runs(self, after: int, count: int) -> list[int]:
        """Up to ``count`` fires after ``after``, each the next fire after the one before."""
        return chain(self.next_fire, after, count)


__all__ = ["DST_ADJUSTED_BELOW", "DaylightSaving", "LocalTimes", "ZonedSearch"]
