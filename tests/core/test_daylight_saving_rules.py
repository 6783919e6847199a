"""A daylight-saving rule per schedule (issue 14): Vixie, Literal, Skip (``dst.DaylightSaving``).

* Vixie (the default): a fixed-time job's skipped wall time runs at the
  change, its repeated one once; a wildcard job runs by real time.
* Literal (as CronJob): a skipped wall time does not run, a repeated one
  runs in both copies, for every job.
* Skip: a skipped wall time does not run, a repeated one runs once (its
  first copy), for every job.

The transitions (UTC instant: local wall clock before -> after):

Europe/Berlin        2024-03-31T01:00: 02:00 -> 03:00 (gap 02:00-02:59)
                     2024-10-27T01:00: 03:00 -> 02:00 (02:00-02:59 twice: 00:xx then 01:xx UTC)
America/New_York     2024-03-10T07:00: 02:00 -> 03:00 (gap 02:00-02:59)
                     2024-11-03T06:00: 02:00 -> 01:00 (01:00-01:59 twice: 05:xx then 06:xx UTC)
Australia/Lord_Howe  2024-10-05T15:30: 02:00 -> 02:30 (gap 02:00-02:29, local 6 October)
                     2024-04-06T15:00: 02:00 -> 01:30 (01:30-01:59 twice: 14:3x-14:5x then 15:0x-15:2x UTC)

All times are UTC.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from cronctl.core.dst import DaylightSaving
from cronctl.core.merged import merged_expression
from cronctl.core.schedule import Timeline, parse_expression
from cronctl.core.times import MINUTES_PER_DAY, days_from_civil, format_time, parse_time
from cronctl.core.zones import parse_zone

VIXIE, LITERAL, SKIP = DaylightSaving.VIXIE, DaylightSaving.LITERAL, DaylightSaving.SKIP


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


def fires(expression: str, zone: str, rule: DaylightSaving, after: str, count: int) -> list[str]:
    timeline = Timeline(merged_expression((expression,), (), rule), t(after), parse_zone(zone))
    return [format_time(m) for m in timeline.upcoming(t(after), count)]


@pytest.mark.parametrize("zone, expression, after, rule, expected", [
    # A fixed-time job whose wall time a spring forward skips.
    ("Europe/Berlin", "30 2 * * *", "2024-03-30T02:00", VIXIE, ["2024-03-31T01:00", "2024-04-01T00:30"]),
    ("Europe/Berlin", "30 2 * * *", "2024-03-30T02:00", LITERAL, ["2024-04-01T00:30", "2024-04-02T00:30"]),
    ("Europe/Berlin", "30 2 * * *", "2024-03-30T02:00", SKIP, ["2024-04-01T00:30", "2024-04-02T00:30"]),
    ("America/New_York", "30 2 * * *", "2024-03-09T08:00", VIXIE, ["2024-03-10T07:00", "2024-03-11T06:30"]),
    ("America/New_York", "30 2 * * *", "2024-03-09T08:00", LITERAL, ["2024-03-11T06:30", "2024-03-12T06:30"]),
    ("America/New_York", "30 2 * * *", "2024-03-09T08:00", SKIP, ["2024-03-11T06:30", "2024-03-12T06:30"]),
    ("Australia/Lord_Howe", "15 2 * * *", "2024-10-05T00:00", VIXIE, ["2024-10-05T15:30", "2024-10-06T15:15"]),
    ("Australia/Lord_Howe", "15 2 * * *", "2024-10-05T00:00", LITERAL, ["2024-10-06T15:15", "2024-10-07T15:15"]),
    ("Australia/Lord_Howe", "15 2 * * *", "2024-10-05T00:00", SKIP, ["2024-10-06T15:15", "2024-10-07T15:15"]),
])
def test_a_skipped_wall_time_runs_at_the_change_under_vixie_and_not_at_all_otherwise(
        zone: str, expression: str, after: str, rule: DaylightSaving, expected: list[str]) -> None:
    assert fires(expression, zone, rule, after, 2) == expected


@pytest.mark.parametrize("zone, expression, after, rule, expected", [
    # A fixed-time job whose wall time a fall back repeats.
    ("Europe/Berlin", "30 2 * * *", "2024-10-26T02:00", VIXIE, ["2024-10-27T00:30", "2024-10-28T01:30"]),
    ("Europe/Berlin", "30 2 * * *", "2024-10-26T02:00", LITERAL,
     ["2024-10-27T00:30", "2024-10-27T01:30", "2024-10-28T01:30"]),
    ("Europe/Berlin", "30 2 * * *", "2024-10-26T02:00", SKIP, ["2024-10-27T00:30", "2024-10-28T01:30"]),
    ("America/New_York", "30 1 * * *", "2024-11-02T08:00", VIXIE, ["2024-11-03T05:30", "2024-11-04T06:30"]),
    ("America/New_York", "30 1 * * *", "2024-11-02T08:00", LITERAL,
     ["2024-11-03T05:30", "2024-11-03T06:30", "2024-11-04T06:30"]),
    ("America/New_York", "30 1 * * *", "2024-11-02T08:00", SKIP, ["2024-11-03T05:30", "2024-11-04T06:30"]),
    ("Australia/Lord_Howe", "45 1 * * *", "2024-04-06T00:00", VIXIE, ["2024-04-06T14:45", "2024-04-07T15:15"]),
    ("Australia/Lord_Howe", "45 1 * * *", "2024-04-06T00:00", LITERAL,
     ["2024-04-06T14:45", "2024-04-06T15:15", "2024-04-07T15:15"]),
    ("Australia/Lord_Howe", "45 1 * * *", "2024-04-06T00:00", SKIP, ["2024-04-06T14:45", "2024-04-07T15:15"]),
])
def test_a_repeated_wall_time_runs_twice_only_under_literal(
        zone: str, expression: str, after: str, rule: DaylightSaving, expected: list[str]) -> None:
    assert fires(expression, zone, rule, after, len(expected)) == expected


@pytest.mark.parametrize("rule, expected", [
    (VIXIE, ["2024-10-27T00:00", "2024-10-27T00:30", "2024-10-27T01:00", "2024-10-27T01:30", "2024-10-27T02:00"]),
    (LITERAL, ["2024-10-27T00:00", "2024-10-27T00:30", "2024-10-27T01:00", "2024-10-27T01:30", "2024-10-27T02:00"]),
    (SKIP, ["2024-10-27T00:00", "2024-10-27T00:30", "2024-10-27T02:00", "2024-10-27T02:30", "2024-10-27T03:00"]),
])
def test_a_wildcard_job_runs_by_real_time_unless_skip_holds_back_the_second_copy(
        rule: DaylightSaving, expected: list[str]) -> None:
    assert fires("*/30 * * * *", "Europe/Berlin", rule, "2024-10-26T23:45", 5) == expected


@pytest.mark.parametrize("rule", [VIXIE, LITERAL, SKIP])
def test_a_wildcard_job_runs_nothing_in_a_gap_under_every_rule(rule: DaylightSaving) -> None:
    assert fires("*/30 * * * *", "Europe/Berlin", rule, "2024-03-31T00:15", 3) == \
        ["2024-03-31T00:30", "2024-03-31T01:00", "2024-03-31T01:30"]  # local 01:30, 03:00, 03:30


@pytest.mark.parametrize("rule, expected", [
    (VIXIE, ["2024-03-31T01:00", "2024-04-01T00:30"]),
    (LITERAL, ["2024-04-01T00:30", "2024-04-02T00:30"]),
])
def test_an_at_rule_follows_the_rule_too(rule: DaylightSaving, expected: list[str]) -> None:
    assert fires("every(1).day.at(02:30)", "Europe/Berlin", rule, "2024-03-30T02:00", 2) == expected


@pytest.mark.parametrize("rule", [VIXIE, LITERAL, SKIP])
def test_a_fixed_offset_has_no_transition_for_a_rule_to_change(rule: DaylightSaving) -> None:
    assert fires("30 2 * * *", "+01:00", rule, "2024-03-30T02:00", 2) == ["2024-03-31T01:30", "2024-04-01T01:30"]


def test_vixie_is_the_default_and_a_lone_expression_under_it_is_itself() -> None:
    from cronctl.core.spec import JobSpec, Options, Policy

    spec = JobSpec("a", "30 2 * * *", Policy.ALLOW, Options(tz=parse_zone("Europe/Berlin")), 0, 0)
    assert spec.compiled is parse_expression("30 2 * * *")


def test_latest_in_and_count_in_follow_the_rule_as_next_after_does() -> None:
    zone = parse_zone("Europe/Berlin")
    literal = Timeline(merged_expression(("30 2 * * *",), (), LITERAL), t("2024-10-20T00:00"), zone)
    skip = Timeline(merged_expression(("30 2 * * *",), (), SKIP), t("2024-10-20T00:00"), zone)
    assert format_time(literal.latest_in(t("2024-10-27T00:00"), t("2024-10-27T02:00"))) == "2024-10-27T01:30"
    assert format_time(skip.latest_in(t("2024-10-27T00:00"), t("2024-10-27T02:00"))) == "2024-10-27T00:30"
    assert literal.count_in(t("2024-10-26T02:00"), t("2024-10-28T02:00"), 10) == 3
    assert skip.count_in(t("2024-10-26T02:00"), t("2024-10-28T02:00"), 10) == 2


# -- against the zone's wall clock (zoneinfo), minute by minute ---------------------------

ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Europe/Dublin"]


def _wall_clock(zone: str, utc: int) -> tuple[int, int]:
    """zoneinfo's local minute (days since 1970 * 1440 + minute of day) and fold at a UTC minute."""
    local = dt.datetime.fromtimestamp(utc * 60, ZoneInfo(zone))
    day = days_from_civil(local.year, local.month, local.day)
    return day * MINUTES_PER_DAY + local.hour * 60 + local.minute, local.fold


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("expression", ["30 2 * * *", "*/20 1-3 * * *", "0 * * * *"])
def test_literal_fires_at_each_minute_the_wall_clock_matches_and_skip_in_first_copies_only(
        zone: str, expression: str) -> None:
    compiled = parse_expression(expression)
    for year in (2024, 2025):
        for change in parse_zone(zone).transitions(t(f"{year}-01-01T00:00"), t(f"{year + 1}-01-01T00:00")):
            low, high = change.at - 6 * 60, change.at + 6 * 60
            expected_literal, expected_skip = [], []
            for utc in range(low + 1, high + 1):
                local, fold = _wall_clock(zone, utc)
                if compiled.matches(local):
                    expected_literal.append(utc)
                    if fold == 0:
                        expected_skip.append(utc)
            for rule, expected in ((LITERAL, expected_literal), (SKIP, expected_skip)):
                timeline = Timeline(merged_expression((expression,), (), rule), low - 1, parse_zone(zone))
                got = [m for m in timeline.upcoming(low, len(expected) + 1) if m <= high]
                assert [format_time(m) for m in got] == [format_time(m) for m in expected], (zone, change, rule)
