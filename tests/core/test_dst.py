"""IANA zones with Vixie cron's daylight-saving rules (issue 5, "Time zones").

The rules, as the core implements them (``dst.py``):

* fixed-time job (neither minute nor hour begins with ``*``): a wall time
  skipped by a spring forward of under 3 hours runs once, at the transition
  (the first real minute after the change); in a repeated period of a fall
  back under 3 hours it runs once, in the first copy;
* wildcard job (every other job): runs by real time, at each UTC minute whose
  wall time matches: nothing for skipped wall times, both copies of repeated
  ones;
* a jump of 3 hours or more is taken literally, for every job.

An ``every(N).days/weeks.at(HH:MM)`` rule is a fixed-time job (the daily rows
are checked with ``every(1).day.at()`` too).

All times below are UTC unless marked local. Worked out by hand, each row
says which wall time each UTC fire is.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronctl import run
from cronctl.core.schedule import Timeline, is_fixed_time, next_runs, parse_expression
from cronctl.core.times import format_time, parse_time
from cronctl.core.zones import FixedOffset, IanaZone, Transition, parse_zone

from .test_properties import reference_set  # the seed's field rules, read literally

ROOT = Path(__file__).resolve().parents[2]


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


def fires(expression: str, zone: str, after: str, count: int) -> list[str]:
    return [format_time(m) for m in next_runs(parse_expression(expression), t(after), count, parse_zone(zone))]


class TestDstTransitions:
    """Transitions used (UTC instant: local wall clock before -> after; offsets):

    Europe/Berlin        2024-03-31T01:00: 02:00 CET -> 03:00 CEST (+01:00 -> +02:00), gap 02:00-02:59
                         2024-10-27T01:00: 03:00 CEST -> 02:00 CET (+02:00 -> +01:00), 02:00-02:59 twice
    America/New_York     2024-03-10T07:00: 02:00 EST -> 03:00 EDT (-05:00 -> -04:00), gap 02:00-02:59
                         2024-11-03T06:00: 02:00 EDT -> 01:00 EST (-04:00 -> -05:00), 01:00-01:59 twice
    Australia/Lord_Howe  2024-10-05T15:30: 02:00 -> 02:30 on 6 Oct (+10:30 -> +11:00), gap 02:00-02:29
                         2024-04-06T15:00: 02:00 -> 01:30 on 7 Apr (+11:00 -> +10:30), 01:30-01:59 twice
    Pacific/Apia         2011-12-30T10:00: 29 Dec 24:00 -> 31 Dec 00:00 (-10:00 -> +14:00): a 24-hour
                         jump, 30 December 2011 never happened there: taken literally
                         2012-03-31T14:00: 04:00 -> 03:00 on 1 Apr (+14:00 -> +13:00), 03:00-03:59 twice
    Antarctica/Casey     2009-10-17T18:00: 02:00 -> 05:00 on 18 Oct (+08:00 -> +11:00): 3 hours, literal
                         2010-03-04T15:00: 5 Mar 02:00 -> 4 Mar 23:00 (+11:00 -> +08:00): 3 hours, literal
    Antarctica/Troll     2024-03-31T01:00: 01:00 -> 03:00 (+00:00 -> +02:00): 2 hours, adjusted
                         2024-10-27T01:00: 03:00 -> 01:00 (+02:00 -> +00:00): 2 hours, adjusted
    """

    TRANSITIONS = [
        ("Europe/Berlin", "2024-03-31T01:00", 60, 120),
        ("Europe/Berlin", "2024-10-27T01:00", 120, 60),
        ("America/New_York", "2024-03-10T07:00", -300, -240),
        ("America/New_York", "2024-11-03T06:00", -240, -300),
        ("Australia/Lord_Howe", "2024-10-05T15:30", 630, 660),
        ("Australia/Lord_Howe", "2024-04-06T15:00", 660, 630),
        ("Pacific/Apia", "2011-12-30T10:00", -600, 840),
        ("Pacific/Apia", "2012-03-31T14:00", 840, 780),
        ("Antarctica/Casey", "2009-10-17T18:00", 480, 660),
        ("Antarctica/Casey", "2010-03-04T15:00", 660, 480),
        ("Antarctica/Troll", "2024-03-31T01:00", 0, 120),
        ("Antarctica/Troll", "2024-10-27T01:00", 120, 0),
    ]

    # (zone, expression, after, expected UTC fires): spring row, then its autumn pair.
    ROWS = [
        # -- Europe/Berlin ---------------------------------------------------------------
        # spring, fixed-time: 30 Mar 02:30 CET = 01:30; 31 Mar 02:30 does not exist -> once at the
        # change, 01:00 (= 03:00 CEST); 1 Apr 02:30 CEST = 00:30.
        ("Europe/Berlin", "30 2 * * *", "2024-03-30T00:00",
         ["2024-03-30T01:30", "2024-03-31T01:00", "2024-04-01T00:30"]),
        # autumn, fixed-time: 26 Oct 02:30 CEST = 00:30; 27 Oct 02:30 first copy (CEST) = 00:30, the
        # second copy (CET, 01:30) does not run; 28 Oct 02:30 CET = 01:30.
        ("Europe/Berlin", "30 2 * * *", "2024-10-26T00:00",
         ["2024-10-26T00:30", "2024-10-27T00:30", "2024-10-28T01:30"]),
        # spring, hourly (wildcard): 01:00 CET = 00:00; 02:00 does not exist (no run); 03:00 CEST =
        # 01:00; 04:00 CEST = 02:00; 05:00 CEST = 03:00. Real time: no UTC hour is missed.
        ("Europe/Berlin", "0 * * * *", "2024-03-30T23:30",
         ["2024-03-31T00:00", "2024-03-31T01:00", "2024-03-31T02:00", "2024-03-31T03:00"]),
        # autumn, hourly: 02:00 CEST = 00:00; 02:00 CET = 01:00 (both copies); 03:00 CET = 02:00; 04:00 = 03:00.
        ("Europe/Berlin", "0 * * * *", "2024-10-26T23:30",
         ["2024-10-27T00:00", "2024-10-27T01:00", "2024-10-27T02:00", "2024-10-27T03:00"]),
        # spring, */30: 01:30 CET = 00:30; 02:00 and 02:30 do not exist; 03:00 CEST = 01:00; 03:30 = 01:30;
        # 04:00 = 02:00.
        ("Europe/Berlin", "*/30 * * * *", "2024-03-31T00:00",
         ["2024-03-31T00:30", "2024-03-31T01:00", "2024-03-31T01:30", "2024-03-31T02:00"]),
        # autumn, */30: 02:00 CEST = 00:00, 02:30 CEST = 00:30, 02:00 CET = 01:00, 02:30 CET = 01:30,
        # 03:00 CET = 02:00: both 02:00s and both 02:30s.
        ("Europe/Berlin", "*/30 * * * *", "2024-10-26T23:50",
         ["2024-10-27T00:00", "2024-10-27T00:30", "2024-10-27T01:00", "2024-10-27T01:30",
          "2024-10-27T02:00"]),
        # -- America/New_York ------------------------------------------------------------
        # spring, fixed-time: 9 Mar 02:30 EST = 07:30; 10 Mar 02:30 skipped -> 07:00 (= 03:00 EDT);
        # 11 Mar 02:30 EDT = 06:30.
        ("America/New_York", "30 2 * * *", "2024-03-09T00:00",
         ["2024-03-09T07:30", "2024-03-10T07:00", "2024-03-11T06:30"]),
        # autumn, fixed-time in the repeated hour (01:xx here): 2 Nov 01:30 EDT = 05:30; 3 Nov 01:30 EDT
        # (first copy) = 05:30, not 06:30 (EST copy); 4 Nov 01:30 EST = 06:30.
        ("America/New_York", "30 1 * * *", "2024-11-02T00:00",
         ["2024-11-02T05:30", "2024-11-03T05:30", "2024-11-04T06:30"]),
        # autumn, 02:30 is not repeated in New York: 2 Nov 02:30 EDT = 06:30; 3 Nov 02:30 EST = 07:30
        # (once); 4 Nov 02:30 EST = 07:30.
        ("America/New_York", "30 2 * * *", "2024-11-02T00:00",
         ["2024-11-02T06:30", "2024-11-03T07:30", "2024-11-04T07:30"]),
        # spring, hourly: 01:00 EST = 06:00; 02:00 does not exist; 03:00 EDT = 07:00; 04:00 = 08:00;
        # 05:00 = 09:00.
        ("America/New_York", "0 * * * *", "2024-03-10T05:30",
         ["2024-03-10T06:00", "2024-03-10T07:00", "2024-03-10T08:00", "2024-03-10T09:00"]),
        # autumn, hourly: 01:00 EDT = 05:00; 01:00 EST = 06:00; 02:00 EST = 07:00; 03:00 EST = 08:00.
        ("America/New_York", "0 * * * *", "2024-11-03T04:30",
         ["2024-11-03T05:00", "2024-11-03T06:00", "2024-11-03T07:00", "2024-11-03T08:00"]),
        # spring, */30: 01:30 EST = 06:30; 02:00, 02:30 do not exist; 03:00 EDT = 07:00; 03:30 = 07:30.
        ("America/New_York", "*/30 * * * *", "2024-03-10T06:00",
         ["2024-03-10T06:30", "2024-03-10T07:00", "2024-03-10T07:30"]),
        # autumn, */30: 01:00 EDT = 05:00, 01:30 EDT = 05:30, 01:00 EST = 06:00, 01:30 EST = 06:30,
        # 02:00 EST = 07:00.
        ("America/New_York", "*/30 * * * *", "2024-11-03T04:50",
         ["2024-11-03T05:00", "2024-11-03T05:30", "2024-11-03T06:00", "2024-11-03T06:30",
          "2024-11-03T07:00"]),
        # -- Australia/Lord_Howe: a 30-minute shift -------------------------------------------
        # spring, 02:30 is the first wall time after the gap, so it exists: 5 Oct 02:30 +10:30 =
        # 4 Oct 16:00; 6 Oct 02:30 +11:00 = 5 Oct 15:30 (the transition itself); 7 Oct 02:30 = 6 Oct 15:30.
        ("Australia/Lord_Howe", "30 2 * * *", "2024-10-04T00:00",
         ["2024-10-04T16:00", "2024-10-05T15:30", "2024-10-06T15:30"]),
        # spring, fixed-time inside the 30-minute gap: 5 Oct 02:15 +10:30 = 4 Oct 15:45; 6 Oct 02:15 does
        # not exist -> at the change, 5 Oct 15:30 (= 02:30 +11:00); 7 Oct 02:15 +11:00 = 6 Oct 15:15.
        ("Australia/Lord_Howe", "15 2 * * *", "2024-10-04T00:00",
         ["2024-10-04T15:45", "2024-10-05T15:30", "2024-10-06T15:15"]),
        # autumn, fixed-time at 02:30 (after the repeat): 6 Apr 02:30 +11:00 = 5 Apr 15:30; 7 Apr 02:30
        # +10:30 = 6 Apr 16:00; 8 Apr 02:30 = 7 Apr 16:00.
        ("Australia/Lord_Howe", "30 2 * * *", "2024-04-05T00:00",
         ["2024-04-05T15:30", "2024-04-06T16:00", "2024-04-07T16:00"]),
        # autumn, fixed-time inside the repeated half hour: 6 Apr 01:45 +11:00 = 5 Apr 14:45; 7 Apr
        # 01:45 first copy (+11:00) = 6 Apr 14:45, not the second (15:15); 8 Apr 01:45 +10:30 = 7 Apr 15:15.
        ("Australia/Lord_Howe", "45 1 * * *", "2024-04-05T00:00",
         ["2024-04-05T14:45", "2024-04-06T14:45", "2024-04-07T15:15"]),
        # spring, hourly: 01:00 +10:30 = 14:30; 02:00 does not exist; 03:00 +11:00 = 16:00; 04:00 = 17:00;
        # 05:00 = 18:00.
        ("Australia/Lord_Howe", "0 * * * *", "2024-10-05T14:00",
         ["2024-10-05T14:30", "2024-10-05T16:00", "2024-10-05T17:00", "2024-10-05T18:00"]),
        # autumn, hourly: the repeat is 01:30-01:59, no whole hour in it: 01:00 +11:00 = 14:00;
        # 02:00 +10:30 = 15:30; 03:00 = 16:30; 04:00 = 17:30.
        ("Australia/Lord_Howe", "0 * * * *", "2024-04-06T13:30",
         ["2024-04-06T14:00", "2024-04-06T15:30", "2024-04-06T16:30", "2024-04-06T17:30"]),
        # spring, */30: 01:30 +10:30 = 15:00; 02:00 does not exist; 02:30 +11:00 = 15:30; 03:00 = 16:00;
        # 03:30 = 16:30.
        ("Australia/Lord_Howe", "*/30 * * * *", "2024-10-05T14:50",
         ["2024-10-05T15:00", "2024-10-05T15:30", "2024-10-05T16:00", "2024-10-05T16:30"]),
        # autumn, */30: 01:00 +11:00 = 14:00; 01:30 +11:00 = 14:30; 01:30 +10:30 = 15:00 (second copy);
        # 02:00 +10:30 = 15:30; 02:30 = 16:00.
        ("Australia/Lord_Howe", "*/30 * * * *", "2024-04-06T13:50",
         ["2024-04-06T14:00", "2024-04-06T14:30", "2024-04-06T15:00", "2024-04-06T15:30",
          "2024-04-06T16:00"]),
        # -- Pacific/Apia: 30 December 2011 skipped (24 hours, literal) -----------------------
        # spring (the skipped day), fixed-time: 28 Dec 02:30 -10:00 = 28 Dec 12:30; 29 Dec 02:30 = 29 Dec
        # 12:30; 30 Dec does not exist and is not made up; 31 Dec 02:30 +14:00 = 30 Dec 12:30. In UTC
        # nothing looks missing: local dates jumped, real time did not.
        ("Pacific/Apia", "30 2 * * *", "2011-12-28T00:00",
         ["2011-12-28T12:30", "2011-12-29T12:30", "2011-12-30T12:30"]),
        # ... but a job for 30 December waits a year: 30 Dec 2012 02:30 +14:00 = 29 Dec 2012 12:30.
        ("Pacific/Apia", "30 2 30 12 *", "2011-12-01T00:00", ["2012-12-29T12:30"]),
        # autumn (1 hour, adjusted), fixed-time in the repeat: 31 Mar 03:30 +14:00 = 30 Mar 13:30;
        # 1 Apr 03:30 first copy (+14:00) = 31 Mar 13:30, not 14:30; 2 Apr 03:30 +13:00 = 1 Apr 14:30.
        ("Pacific/Apia", "30 3 * * *", "2012-03-30T00:00",
         ["2012-03-30T13:30", "2012-03-31T13:30", "2012-04-01T14:30"]),
        # autumn, 02:30 (not repeated): 31 Mar 02:30 +14:00 = 30 Mar 12:30; 1 Apr 02:30 +14:00 = 31 Mar
        # 12:30; 2 Apr 02:30 +13:00 = 1 Apr 13:30.
        ("Pacific/Apia", "30 2 * * *", "2012-03-30T00:00",
         ["2012-03-30T12:30", "2012-03-31T12:30", "2012-04-01T13:30"]),
        # spring, hourly: 29 Dec 23:00 -10:00 = 09:00; 31 Dec 00:00 +14:00 = 10:00; 01:00 = 11:00.
        ("Pacific/Apia", "0 * * * *", "2011-12-30T08:30",
         ["2011-12-30T09:00", "2011-12-30T10:00", "2011-12-30T11:00"]),
        # autumn, hourly: 03:00 +14:00 = 13:00; 03:00 +13:00 = 14:00; 04:00 +13:00 = 15:00.
        ("Pacific/Apia", "0 * * * *", "2012-03-31T12:30",
         ["2012-03-31T13:00", "2012-03-31T14:00", "2012-03-31T15:00"]),
        # spring, */30: 29 Dec 23:30 -10:00 = 09:30; 31 Dec 00:00 +14:00 = 10:00; 00:30 = 10:30.
        ("Pacific/Apia", "*/30 * * * *", "2011-12-30T09:10",
         ["2011-12-30T09:30", "2011-12-30T10:00", "2011-12-30T10:30"]),
        # autumn, */30: 03:00 +14:00 = 13:00, 03:30 = 13:30, 03:00 +13:00 = 14:00, 03:30 = 14:30.
        ("Pacific/Apia", "*/30 * * * *", "2012-03-31T12:50",
         ["2012-03-31T13:00", "2012-03-31T13:30", "2012-03-31T14:00", "2012-03-31T14:30"]),
        # -- Antarctica/Casey: jumps of exactly 3 hours are literal ---------------------------
        # spring, fixed-time in the gap (02:00-04:59 on 18 Oct): 17 Oct 02:30 +08:00 = 16 Oct 18:30;
        # 18 Oct 02:30 does not exist and is NOT run at the change (17 Oct 18:00); 19 Oct 02:30 +11:00 =
        # 18 Oct 15:30; 20 Oct 02:30 = 19 Oct 15:30.
        ("Antarctica/Casey", "30 2 * * *", "2009-10-16T00:00",
         ["2009-10-16T18:30", "2009-10-18T15:30", "2009-10-19T15:30"]),
        # autumn, fixed-time in the repeat (4 Mar 23:00 - 5 Mar 01:59, twice): 3 Mar 23:30 +11:00 =
        # 3 Mar 12:30; 4 Mar 23:30 +11:00 = 4 Mar 12:30 AND 4 Mar 23:30 +08:00 = 4 Mar 15:30 (both
        # copies); 5 Mar 23:30 +08:00 = 5 Mar 15:30.
        ("Antarctica/Casey", "30 23 * * *", "2010-03-03T00:00",
         ["2010-03-03T12:30", "2010-03-04T12:30", "2010-03-04T15:30", "2010-03-05T15:30"]),
        # spring, hourly: 01:00 +08:00 = 17:00; 05:00 +11:00 = 18:00; 06:00 = 19:00.
        ("Antarctica/Casey", "0 * * * *", "2009-10-17T16:30",
         ["2009-10-17T17:00", "2009-10-17T18:00", "2009-10-17T19:00"]),
        # autumn, hourly: 01:00 +11:00 = 14:00; 23:00 +08:00 = 15:00; 00:00 = 16:00.
        ("Antarctica/Casey", "0 * * * *", "2010-03-04T13:30",
         ["2010-03-04T14:00", "2010-03-04T15:00", "2010-03-04T16:00"]),
        # spring, */30: 01:30 +08:00 = 17:30; 05:00 +11:00 = 18:00; 05:30 = 18:30.
        ("Antarctica/Casey", "*/30 * * * *", "2009-10-17T17:10",
         ["2009-10-17T17:30", "2009-10-17T18:00", "2009-10-17T18:30"]),
        # autumn, */30: 01:30 +11:00 = 14:30; 23:00 +08:00 = 15:00; 23:30 = 15:30.
        ("Antarctica/Casey", "*/30 * * * *", "2010-03-04T14:10",
         ["2010-03-04T14:30", "2010-03-04T15:00", "2010-03-04T15:30"]),
        # -- Antarctica/Troll: 2-hour jumps are adjusted ---------------------------------------
        # spring, fixed-time, two wall times in the gap (01:00-02:59) run once, at the change: 30 Mar
        # 01:00 +00:00 = 01:00, 02:00 = 02:00; 31 Mar 01:00 and 02:00 skipped -> once at 01:00 (03:00 +02:00);
        # 1 Apr 01:00 +02:00 = 31 Mar 23:00, 02:00 = 1 Apr 00:00.
        ("Antarctica/Troll", "0 1,2 * * *", "2024-03-30T00:00",
         ["2024-03-30T01:00", "2024-03-30T02:00", "2024-03-31T01:00", "2024-03-31T23:00",
          "2024-04-01T00:00"]),
        # autumn, fixed-time in the repeat (01:00-02:59 twice): 26 Oct 02:30 +02:00 = 00:30; 27 Oct 02:30
        # first copy (+02:00) = 00:30, not 02:30; 28 Oct 02:30 +00:00 = 02:30.
        ("Antarctica/Troll", "30 2 * * *", "2024-10-26T00:00",
         ["2024-10-26T00:30", "2024-10-27T00:30", "2024-10-28T02:30"]),
    ]

    @pytest.mark.parametrize("zone, at, before, after", TRANSITIONS)
    def test_the_zone_data_has_the_transitions_of_the_header(self, zone: str, at: str, before: int,
                                                             after: int) -> None:
        assert IanaZone(zone).transitions(t(at) - 1, t(at)) == [Transition(t(at), before, after)]

    @pytest.mark.parametrize("zone, expression, after, expected", ROWS,
                             ids=[f"{z}|{e}|{a}" for z, e, a, _ in ROWS])
    def test_next_runs(self, zone: str, expression: str, after: str, expected: list[str]) -> None:
        assert fires(expression, zone, after, len(expected)) == expected

    @pytest.mark.parametrize("zone, expression, after, expected", ROWS,
                             ids=[f"{z}|{e}|{a}" for z, e, a, _ in ROWS])
    def test_a_timeline_walks_counts_and_finds_the_same_fires(self, zone: str, expression: str, after: str,
                                                              expected: list[str]) -> None:
        timeline = Timeline(parse_expression(expression), t(after), IanaZone(zone))
        chain, current = [], t(after)
        for _ in expected:
            current = timeline.next_after(current)
            chain.append(format_time(current))
        assert chain == expected
        start, last = t(after), t(expected[-1])
        assert timeline.count_in(start, last, 101) == len(expected)
        assert timeline.count_in(start, last - 1, 101) == len(expected) - 1
        assert timeline.count_in(start, last, 2) == min(2, len(expected))
        assert format_time(timeline.latest_in(start, last)) == expected[-1]
        if len(expected) > 1:
            assert format_time(timeline.latest_in(start, last - 1)) == expected[-2]

    # The daily fixed-time rows, "M H * * *": an every(1).day.at(HH:MM) rule is a fixed-time job too.
    DAILY_ROWS = [row for row in ROWS if re.fullmatch(r"\d+ \d+ \* \* \*", row[1])]

    @pytest.mark.parametrize("zone, expression, after, expected", DAILY_ROWS,
                             ids=[f"{z}|{e}|{a}" for z, e, a, _ in DAILY_ROWS])
    def test_an_at_rule_fires_as_the_same_daily_cron_job(self, zone: str, expression: str, after: str,
                                                         expected: list[str]) -> None:
        minute, hour = expression.split()[:2]
        rule = parse_expression(f"every(1).day.at({int(hour):02d}:{int(minute):02d})")
        assert [format_time(m) for m in next_runs(rule, t(after), len(expected), IanaZone(zone))] == expected
        timeline = Timeline(rule, t(after), IanaZone(zone))
        assert timeline.count_in(t(after), t(expected[-1]), 101) == len(expected)
        assert format_time(timeline.latest_in(t(after), t(expected[-1]))) == expected[-1]


# -- fixed-time jobs ----------------------------------------------------------------------


@pytest.mark.parametrize("expression, fixed", [
    ("30 2 * * *", True), ("0 9-17 * * MON-FRI", True), ("0,30 1-3 * * *", True),
    ("0 * * * *", False), ("*/30 * * * *", False), ("30 */2 * * *", False), ("*/5 2 * * *", False),
])
def test_fixed_time_means_neither_minute_nor_hour_begins_with_a_star(expression: str, fixed: bool) -> None:
    assert is_fixed_time(parse_expression(expression)) is fixed


# -- horizon and chain end ----------------------------------------------------------------


def test_the_horizon_counts_the_local_year_of_after() -> None:
    # "0 12 */28 2 1": 1 February (or 29 February) on a Monday: 2010, then never within 8 years of 2001.
    # 2001-12-31T23:30 UTC is already 2002-01-01 00:30 in Berlin, so the horizon reaches 2010:
    # 1 Feb 2010 12:00 CET = 11:00 UTC. In UTC the start is still 2001 and 2010 is out of reach.
    assert fires("0 12 */28 2 1", "Europe/Berlin", "2001-12-31T23:30", 1) == ["2010-02-01T11:00"]
    assert fires("0 12 */28 2 1", "+00:00", "2001-12-31T23:30", 1) == []


def test_a_chain_in_an_iana_zone_ends_where_the_calendar_says() -> None:
    # Mondays on 1 February: 2021, 2027, then 2038 (11 years later): the chain from 2024 ends
    # at 1 Feb 2027 12:00 CET = 11:00 UTC, exactly as with the fixed offset +01:00 (winter).
    expression = parse_expression("0 12 */28 2 1")
    timeline = Timeline(expression, t("2024-01-01T00:00"), IanaZone("Europe/Berlin"))
    assert format_time(timeline.first) == "2027-02-01T11:00"
    assert format_time(timeline.end) == "2027-02-01T11:00"
    assert timeline.next_after(timeline.end) is None
    assert timeline.next_after(t("2030-01-01T00:00")) is None
    fixed = Timeline(expression, t("2024-01-01T00:00"), FixedOffset(60))
    assert (fixed.first, fixed.end) == (timeline.first, timeline.end)


def test_a_chain_that_never_ends_has_no_end_and_never_firing_has_no_first() -> None:
    berlin = IanaZone("Europe/Berlin")
    assert Timeline(parse_expression("30 2 * * *"), t("2024-01-01T00:00"), berlin).end is None
    never = Timeline(parse_expression("0 0 30 2 *"), t("2024-01-01T00:00"), berlin)
    assert (never.first, never.end, never.next_after(t("2024-06-01T00:00"))) == (None, None, None)
    assert fires("0 0 30 2 *", "Europe/Berlin", "2024-01-01T00:00", 3) == []


def test_counting_an_every_minute_job_over_a_decade_stops_at_the_limit() -> None:
    timeline = Timeline(parse_expression("* * * * *"), t("2010-01-01T00:00"), IanaZone("Europe/Berlin"))
    assert timeline.count_in(t("2010-01-01T00:00"), t("2020-01-01T00:00"), 101) == 101
    # one real hour: 60 fires, also across the autumn change (the repeated hour counts twice in real time)
    assert timeline.count_in(t("2024-10-27T00:30"), t("2024-10-27T01:30"), 101) == 60
    assert format_time(timeline.latest_in(t("2010-01-01T00:00"), t("2024-10-27T01:30"))) == "2024-10-27T01:30"


def test_a_fixed_time_job_counts_the_moved_fire_once_in_a_long_window() -> None:
    # 30 2 daily in Berlin over March 2024: 31 days, the 31st moved to 01:00 UTC, still one fire each.
    timeline = Timeline(parse_expression("30 2 * * *"), t("2024-01-01T00:00"), IanaZone("Europe/Berlin"))
    assert timeline.count_in(t("2024-02-29T23:00"), t("2024-03-31T23:00"), 101) == 31
    # and over the autumn month, the 27th runs once: 31 fires in October.
    assert timeline.count_in(t("2024-09-30T22:00"), t("2024-10-31T23:00"), 101) == 31


def test_an_interval_counts_real_minutes_whatever_the_zone() -> None:
    timeline = Timeline(parse_expression("@every 30m"), t("2024-03-31T00:00"), IanaZone("Europe/Berlin"))
    assert [format_time(timeline.next_after(m)) for m in (t("2024-03-31T00:00"), t("2024-03-31T00:30"))] == \
        ["2024-03-31T00:30", "2024-03-31T01:00"]


# -- the harness contract and the CLI ------------------------------------------------------


def test_the_harness_still_takes_fixed_offsets_only() -> None:
    assert run([["next_runs", "30 2 * * *", "2024-03-01T00:00", 1, "Europe/Berlin"],
                ["create_job", "2024-03-01T00:00", "berlin", "30 2 * * *", "allow", {"tz": "Europe/Berlin"}],
                ["next_runs", "30 2 * * *", "2024-03-01T00:00", 1, "+01:00"]]) == \
        ["error: invalid timezone", "error: invalid options", ["2024-03-01T01:30"]]


def cronctl(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"))
    return subprocess.run([sys.executable, "-m", "cronctl", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT)


def test_cronctl_next_with_an_iana_zone_prints_the_utc_fires_as_json() -> None:
    result = cronctl("next", "30 2 * * *", "--tz", "Europe/Berlin", "--after", "2024-03-30T00:00",
                     "--count", "3", "--json")
    assert result.returncode == 0, result.stderr
    # 30 Mar 02:30 CET; 31 Mar at the change (03:00 CEST); 1 Apr 02:30 CEST
    assert json.loads(result.stdout) == ["2024-03-30T01:30", "2024-03-31T01:00", "2024-04-01T00:30"]


def test_cronctl_next_shows_local_times_with_the_abbreviation_and_offset_of_each_fire() -> None:
    result = cronctl("next", "30 2 * * *", "--tz", "Europe/Berlin", "--after", "2024-03-30T00:00",
                     "--count", "3")
    assert result.stdout.splitlines() == [
        "2024-03-30 01:30 UTC   Sat 2024-03-30 02:30 CET (+01:00, Europe/Berlin)",
        "2024-03-31 01:00 UTC   Sun 2024-03-31 03:00 CEST (+02:00, Europe/Berlin)",
        "2024-04-01 00:30 UTC   Mon 2024-04-01 02:30 CEST (+02:00, Europe/Berlin)",
    ]


def test_cronctl_next_refuses_an_unknown_zone() -> None:
    result = cronctl("next", "30 2 * * *", "--tz", "Mars/Base", "--after", "2024-03-30T00:00")
    assert result.returncode == 2
    assert "--tz: unknown time zone 'Mars/Base'" in result.stderr


# -- against a brute force that walks real minutes ----------------------------------------

EPOCH = dt.datetime(1970, 1, 1)
WINDOW = 3 * 24 * 60
ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia", "Antarctica/Casey",
         "Antarctica/Troll", "America/Santiago", "Europe/Dublin", "America/Havana", "Pacific/Chatham"]


class BruteForce:
    """The rules read literally, one real UTC minute at a time, offsets from zoneinfo."""

    def __init__(self, expression: str, zone: str) -> None:
        minute, hour, dom, month, dow = expression.split()
        self.sets = tuple(reference_set(text, kind) for text, kind in zip(
            (minute, hour, dom, month, dow), ("minute", "hour", "dom", "month", "dow")))
        self.either = not dom.startswith("*") and not dow.startswith("*")
        self.fixed = not minute.startswith("*") and not hour.startswith("*")
        self.zone = ZoneInfo(zone)

    def matches(self, local: int) -> bool:
        when = EPOCH + dt.timedelta(minutes=local)
        minutes, hours, doms, months, dows = self.sets
        if when.minute not in minutes or when.hour not in hours or when.month not in months:
            return False
        dom_ok, dow_ok = when.day in doms, (when.isoweekday() % 7) in dows
        return (dom_ok or dow_ok) if self.either else (dom_ok and dow_ok)

    @lru_cache(maxsize=None)
    def offset(self, utc: int) -> int:
        return dt.datetime.fromtimestamp(utc * 60, self.zone).utcoffset() // dt.timedelta(minutes=1)

    def fires(self, low: int, high: int) -> list[int]:
        """Every fire in (low, high]."""
        found = []
        second_copy_until = None  # a fixed-time job does not run before this (after a fall back)
        for utc in range(low - 200, high + 1):  # from earlier: a fall back just before low still counts
            before, now = self.offset(utc - 1), self.offset(utc)
            fire = self.matches(utc + now)
            jump = now - before
            if self.fixed and 0 < jump < 180:  # spring forward: skipped wall times run now, once
                fire = fire or any(self.matches(wall) for wall in range(utc + before, utc + now))
            if self.fixed and -180 < jump < 0:  # fall back: the repeated wall times' second copy
                second_copy_until = utc - jump
            if second_copy_until is not None and utc < second_copy_until:
                fire = False
            if fire and utc > low:
                found.append(utc)
        return found


@lru_cache(maxsize=None)
def _transitions(zone: str) -> list[int]:
    return [change.at for change in IanaZone(zone).transitions(t("2000-01-01T00:00"), t("2040-01-01T00:00"))]


MINUTE_FIELDS = ["*", "*/15", "*/30", "0", "30", "0,30", "15-45/15", "*/7", "59", "1", "0-10"]
HOUR_FIELDS = ["*", "2", "1-3", "*/2", "3", "0-23/3", "0", "23", "22-23", "1", "1,2"]
DOM_FIELDS = ["*", "*", "*/2", "30,31", "1-7", "27-31"]
DOW_FIELDS = ["*", "*", "0", "6,0", "1-5"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(zone=st.sampled_from(ZONES), pick=st.integers(0, 10**6), shift=st.integers(-36 * 60, 36 * 60),
       minute=st.sampled_from(MINUTE_FIELDS), hour=st.sampled_from(HOUR_FIELDS),
       dom=st.sampled_from(DOM_FIELDS), dow=st.sampled_from(DOW_FIELDS),
       cut=st.integers(1, WINDOW), limit=st.sampled_from([1, 2, 5, 101]))
def test_next_fire_count_and_latest_agree_with_a_minute_by_minute_walk(
        zone: str, pick: int, shift: int, minute: str, hour: str, dom: str, dow: str, cut: int,
        limit: int) -> None:
    transitions = _transitions(zone)
    start = transitions[pick % len(transitions)] + shift
    expression = f"{minute} {hour} {dom} * {dow}"
    expected = BruteForce(expression, zone).fires(start, start + WINDOW)
    timeline = Timeline(parse_expression(expression), start, IanaZone(zone))
    # the next fire, and the chain of next fires within the window
    chain, current = [], start
    while True:
        current = timeline.next_after(current)
        if current is None or current > start + WINDOW:
            break
        chain.append(current)
    assert chain == expected, expression
    assert next_runs(parse_expression(expression), start, len(expected) + 1, IanaZone(zone))[:len(expected)] \
        == expected
    # counting and the latest fire in (start, start + cut]
    inside = [fire for fire in expected if fire <= start + cut]
    assert timeline.count_in(start, start + cut, limit) == min(limit, len(inside))
    assert timeline.latest_in(start, start + cut) == (inside[-1] if inside else None)
