"""Exclusions (issue 14, ``core/exclusions.py``): dates, date ranges and cron minutes that never fire.

All times are UTC; dates and wall minutes are read in the schedule's zone.
"""

from __future__ import annotations

import pytest

from cronctl.core.errors import ExpressionError
from cronctl.core.exclusions import MAX_EXCLUSIONS, parse_exclusions
from cronctl.core.times import format_time, parse_time
from cronctl.core.zones import UTC, parse_zone


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


def span(exclude: list[str], at: str, zone: str = "UTC") -> tuple[str, str] | None:
    found = parse_exclusions(exclude).span_at(t(at), UTC if zone == "UTC" else parse_zone(zone))
    return None if found is None else (format_time(found[0]), format_time(found[1]))


def test_a_date_excludes_every_minute_of_that_day() -> None:
    assert span(["2026-12-25"], "2026-12-25T00:00") == ("2026-12-25T00:00", "2026-12-25T23:59")
    assert span(["2026-12-25"], "2026-12-25T23:59") == ("2026-12-25T00:00", "2026-12-25T23:59")
    assert span(["2026-12-25"], "2026-12-24T23:59") is None
    assert span(["2026-12-25"], "2026-12-26T00:00") is None


def test_a_date_range_includes_both_ends() -> None:
    assert span(["2026-12-24/2026-12-26"], "2026-12-25T12:00") == ("2026-12-24T00:00", "2026-12-26T23:59")
    assert span(["2026-12-24/2026-12-26"], "2026-12-27T00:00") is None


def test_a_date_is_the_zones_local_date() -> None:
    # Berlin in winter is UTC+1: local 25 December is 24 Dec 23:00 UTC to 25 Dec 22:59 UTC.
    assert span(["2026-12-25"], "2026-12-24T23:30", "Europe/Berlin") == ("2026-12-24T23:00", "2026-12-25T22:59")
    assert span(["2026-12-25"], "2026-12-25T23:30", "Europe/Berlin") is None


def test_a_local_day_cut_short_by_a_spring_forward_at_midnight_is_still_whole() -> None:
    # America/Santiago springs forward at local midnight: 2024-09-08 begins at 01:00 (UTC-3).
    assert span(["2024-09-08"], "2024-09-08T12:00", "America/Santiago") == ("2024-09-08T04:00", "2024-09-09T02:59")


def test_touching_and_overlapping_ranges_are_one_stretch() -> None:
    assert span(["2026-12-24/2026-12-26", "2026-12-27", "2026-12-26/2026-12-31"], "2026-12-24T00:00") == \
        ("2026-12-24T00:00", "2026-12-31T23:59")


def test_a_whole_day_cron_exclusion_joins_the_stretch_of_dates_beside_it() -> None:
    # "* * * * 0,6": every weekend; 2026-12-25 is a Friday, so Friday to Sunday is one stretch.
    assert span(["* * * * 0,6", "2026-12-25"], "2026-12-26T10:00") == ("2026-12-25T00:00", "2026-12-27T23:59")


def test_a_cron_exclusion_of_some_minutes_excludes_each_matching_minute_alone() -> None:
    assert span(["0-29 12 * * *"], "2026-06-01T12:10") == ("2026-06-01T12:10", "2026-06-01T12:10")
    assert span(["0-29 12 * * *"], "2026-06-01T12:30") is None


def test_a_cron_exclusion_is_read_on_the_zones_wall_clock() -> None:
    assert span(["* 9 * * *"], "2026-06-01T07:30", "Europe/Berlin") == ("2026-06-01T07:00", "2026-06-01T07:59")
    assert span(["* 9 * * *"], "2026-06-01T09:30", "Europe/Berlin") is None


def test_no_exclusions_is_falsy_and_excludes_nothing() -> None:
    assert not parse_exclusions([])
    assert span([], "2026-12-25T00:00") is None


@pytest.mark.parametrize("exclude, field, reason", [
    ("2026-12-25", "exclude", "must be a list of dates, date ranges or cron expressions"),
    ([25], "exclude[0]", "25 must be text: a date, a date range or a cron expression"),
    (["2026-02-30"], "exclude[0]", "'2026-02-30' is not a date of the calendar"),
    (["2026-13-01"], "exclude[0]", "'2026-13-01' is not a date of the calendar"),
    (["25-12-2026"], "exclude[0]", "'25-12-2026' is not a date YYYY-MM-DD (a date range is YYYY-MM-DD/YYYY-MM-DD, "
                                   "a cron expression has five fields)"),
    (["2026-12-31/2026-12-01"], "exclude[0]", "'2026-12-31/2026-12-01' ends before it starts"),
    (["2000-01-01/2020-01-01"], "exclude[0]", "'2000-01-01/2020-01-01' covers more than 3660 days"),
    (["2026-12-25", "* * 32 * *"], "exclude[1]", "'* * 32 * *' is not a date (YYYY-MM-DD), a date range "
                                                 "(YYYY-MM-DD/YYYY-MM-DD) or a cron expression: day-of-month: "
                                                 "32 is out of range 1-31"),
    (["2026-12-25"] * (MAX_EXCLUSIONS + 1), "exclude", f"has {MAX_EXCLUSIONS + 1} entries, at most {MAX_EXCLUSIONS}"),
])
def test_a_bad_exclusion_is_refused_naming_its_entry_and_the_reason(exclude: object, field: str,
                                                                     reason: str) -> None:
    with pytest.raises(ExpressionError) as raised:
        parse_exclusions(exclude)
    assert (raised.value.field, raised.value.reason) == (field, reason)


def test_a_cron_exclusion_of_whole_hours_excludes_the_hour_in_one_stretch() -> None:
    assert span(["* 12 * * *"], "2026-06-01T12:10") == ("2026-06-01T12:00", "2026-06-01T12:59")
