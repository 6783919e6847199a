"""Several schedules with exclusions (issue 14, ``core/merged.py``), as a ``Timeline`` sees them.

All times are UTC. 2026-12-21 is a Monday; 24-26 December are Thursday to Saturday.
"""

from __future__ import annotations

import pytest

from cronctl.core.controller import Controller
from cronctl.core.merged import merged_expression
from cronctl.core.schedule import Timeline, parse_expression
from cronctl.core.spec import JobSpec, Options, Policy
from cronctl.core.times import format_time, parse_time
from cronctl.core.zones import UTC, parse_zone


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


def timeline(schedules: tuple[str, ...], exclude: tuple[str, ...] = (), anchor: str = "2026-12-20T00:00",
             zone: str = "UTC") -> Timeline:
    return Timeline(merged_expression(schedules, exclude), t(anchor), UTC if zone == "UTC" else parse_zone(zone))


def upcoming(line: Timeline, after: str, count: int) -> list[str]:
    return [format_time(m) for m in line.upcoming(t(after), count)]


def test_the_times_of_several_schedules_are_merged_in_order() -> None:
    line = timeline(("0 9 * * MON-FRI", "30 12 * * MON-FRI"))
    assert upcoming(line, "2026-12-20T00:00", 4) == \
        ["2026-12-21T09:00", "2026-12-21T12:30", "2026-12-22T09:00", "2026-12-22T12:30"]


def test_a_time_named_by_two_schedules_fires_once() -> None:
    line = timeline(("0 9 * * MON-FRI", "0 9 * * MON", "0 */3 * * MON"))
    assert upcoming(line, "2026-12-21T05:00", 3) == ["2026-12-21T06:00", "2026-12-21T09:00", "2026-12-21T12:00"]


def test_cron_and_every_schedules_merge() -> None:
    line = timeline(("0 9 * * *", "@every 300m"), anchor="2026-12-21T00:00")
    assert upcoming(line, "2026-12-21T00:00", 3) == ["2026-12-21T05:00", "2026-12-21T09:00", "2026-12-21T10:00"]


def test_excluded_dates_never_fire() -> None:
    line = timeline(("0 9 * * MON-FRI",), ("2026-12-24/2026-12-26", "2026-12-31", "2027-01-01"))
    assert upcoming(line, "2026-12-23T00:00", 5) == \
        ["2026-12-23T09:00", "2026-12-28T09:00", "2026-12-29T09:00", "2026-12-30T09:00", "2027-01-04T09:00"]


def test_excluded_cron_minutes_never_fire() -> None:
    line = timeline(("*/15 12 * * *",), ("0-29 12 * * *",))
    assert upcoming(line, "2026-12-21T11:00", 3) == ["2026-12-21T12:30", "2026-12-21T12:45", "2026-12-22T12:30"]


def test_an_excluded_time_is_not_missed() -> None:
    line = timeline(("0 9 * * *",), ("2026-12-25",))
    # Down from the 24th 10:00 to the 25th 23:00: the 25th's 09:00 was excluded, nothing was missed.
    assert line.latest_in(t("2026-12-24T10:00"), t("2026-12-25T23:00")) is None
    assert line.count_in(t("2026-12-24T10:00"), t("2026-12-25T23:00"), 100) == 0
    assert format_time(line.latest_in(t("2026-12-24T00:00"), t("2026-12-26T23:00"))) == "2026-12-26T09:00"
    assert line.count_in(t("2026-12-23T00:00"), t("2026-12-26T23:00"), 100) == 3


def test_an_excluded_time_is_never_caught_up_by_the_controller() -> None:
    controller = Controller()
    controller.add_job(JobSpec("report", "0 9 * * *", Policy.ALLOW, Options(exclude=("2026-12-25",)),
                               t("2026-12-24T10:00"), 0))
    assert controller.tick(t("2026-12-25T23:00")) == []
    assert [(d.scheduled_for, d.reason) for d in controller.tick(t("2026-12-26T09:00"))] == \
        [(t("2026-12-26T09:00"), "scheduled")]


def test_exclusions_are_dates_of_the_schedules_zone() -> None:
    # 00:30 Berlin on 26 December is 23:30 UTC on the 25th: Berlin's 25th is excluded, not UTC's.
    line = timeline(("30 0 * * *",), ("2026-12-25",), zone="Europe/Berlin")
    assert upcoming(line, "2026-12-23T00:00", 3) == ["2026-12-23T23:30", "2026-12-25T23:30", "2026-12-26T23:30"]


def test_the_first_time_is_the_earliest_of_all_schedules_that_is_not_excluded() -> None:
    line = timeline(("0 9 25 12 *", "0 10 24 12 *"), ("2026-12-24",))
    assert format_time(line.first) == "2026-12-25T09:00"
    assert line.end is None  # every year, never ends


def test_exclusions_that_take_every_time_leave_a_schedule_that_never_fires() -> None:
    line = timeline(("0 9 * * *",), ("* * * * *",))
    assert not line.fires


def test_a_lone_expression_with_no_exclusions_searches_as_itself() -> None:
    merged = merged_expression(("0 9 * * *",))
    assert type(merged.times(0, UTC)) is type(parse_expression("0 9 * * *").times(0, UTC))


def test_the_merged_text_names_each_schedule() -> None:
    assert merged_expression(("0 9 * * *", "@every 90m")).text == "0 9 * * *; @every 90m"


@pytest.mark.parametrize("more, exclude, expected", [
    ((), (), "0 9 * * *"),
    (("30 12 * * *",), (), "0 9 * * *; 30 12 * * *"),
    ((), ("2026-12-25",), "0 9 * * *"),
])
def test_a_job_spec_compiles_its_schedules_and_exclusions(more: tuple[str, ...], exclude: tuple[str, ...],
                                                          expected: str) -> None:
    spec = JobSpec("a", "0 9 * * *", Policy.ALLOW, Options(more_schedules=more, exclude=exclude), 0, 0)
    assert spec.compiled.text == expected


def test_a_schedule_whose_every_time_is_excluded_minute_by_minute_gives_up_in_bounded_time() -> None:
    import time

    began = time.perf_counter()
    line = timeline(("*/2 * * * *",), ("*/2 * * * *",))
    assert not line.fires
    assert time.perf_counter() - began < 5  # a bounded search (MAX_SKIPPED), not nine years of minutes


def test_an_every_minute_schedule_skips_excluded_hours_whole() -> None:
    line = timeline(("* * * * *",), ("* 0-22 * * *",))
    assert upcoming(line, "2026-12-21T00:00", 2) == ["2026-12-21T23:00", "2026-12-21T23:01"]
    assert format_time(line.latest_in(t("2026-12-21T00:00"), t("2026-12-22T12:00"))) == "2026-12-21T23:59"
