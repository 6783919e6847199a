"""Timelines: the chain of schedule times of one job (seed 000 Parts 1 and 4)."""

from __future__ import annotations

import pytest

from cronctl.core.errors import ExpressionError
from cronctl.core.schedule import Timeline, next_runs, parse_expression
from cronctl.core.times import format_time, parse_time
from cronctl.core.zones import FixedOffset, parse_offset


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


def times(expression: str, after: str, count: int, tz: str = "+00:00") -> list[str]:
    return [format_time(m) for m in next_runs(parse_expression(expression), t(after), count,
                                             parse_offset(tz))]


def test_leap_day_is_within_the_eight_year_horizon_even_across_2100() -> None:
    assert times("0 0 29 2 *", "2096-03-01T00:00", 1) == ["2104-02-29T00:00"]


def test_february_30_never_fires() -> None:
    assert times("0 0 30 2 *", "2024-01-01T00:00", 1) == []


def test_the_horizon_is_counted_in_the_local_calendar_year() -> None:
    # 1 December on a Friday: 2028, 2034, then 2045. At +05:00 the start below
    # is already 2037 locally, so the horizon reaches 2045; in UTC it stops at 2044.
    assert times("0 0 */31 12 FRI", "2036-12-31T20:00", 1, "+05:00") == ["2045-11-30T19:00"]
    assert times("0 0 */31 12 FRI", "2036-12-31T20:00", 1) == []


def test_a_chain_ends_at_its_first_empty_search() -> None:
    timeline = Timeline(parse_expression("0 0 */31 12 FRI"), t("2024-03-01T00:00"))
    assert timeline.end == t("2034-12-01T00:00")
    assert timeline.next_after(t("2034-12-01T00:00")) is None
    assert timeline.count_in(t("2024-03-01T00:00"), t("2060-01-01T00:00"), 101) == 2


def test_an_interval_counts_from_its_anchor_and_never_fires_at_it() -> None:
    timeline = Timeline(parse_expression("@every 90m"), t("2024-03-01T10:07"))
    assert timeline.first == t("2024-03-01T11:37")
    assert timeline.next_after(t("2024-03-01T11:37")) == t("2024-03-01T13:07")
    assert timeline.latest_in(t("2024-03-01T10:07"), t("2024-03-01T14:00")) == t("2024-03-01T13:07")
    assert timeline.count_in(t("2024-03-01T10:07"), t("2024-03-01T14:37"), 101) == 3
    assert timeline.end is None


@pytest.mark.parametrize("text", ["@every 0m", "@every 05m", "@every 1d", "@every", "@every 5 m",
                                  "@EVERY 5m", "@every 525601m", "@every 8761h", "@hourly",
                                  "@every +5m", "@every ٣m"])
def test_interval_refusals(text: str) -> None:
    with pytest.raises(ExpressionError):
        parse_expression(text)


@pytest.mark.parametrize("text, minutes", [("@every 525600m", 525600), ("@every 8760h", 525600),
                                           ("  @every   1m ", 1)])
def test_interval_limits(text: str, minutes: int) -> None:
    assert parse_expression(text).minutes == minutes  # type: ignore[union-attr]


def test_offsets_read_the_expression_in_local_time() -> None:
    assert times("30 2 * * *", "2024-03-01T00:00", 2, "+05:30") == ["2024-03-01T21:00", "2024-03-02T21:00"]
    assert times("0 0 1 * *", "2024-03-01T00:00", 2, "-08:00") == ["2024-03-01T08:00", "2024-04-01T08:00"]


@pytest.mark.parametrize("text, minutes", [("+14:00", 840), ("-14:00", -840), ("-00:00", 0),
                                           ("+05:45", 345)])
def test_valid_offsets(text: str, minutes: int) -> None:
    assert parse_offset(text) == FixedOffset(minutes)


@pytest.mark.parametrize("text", ["+14:15", "+5:30", "UTC", "05:30", "+05:20", "+15:00", None, 330,
                                  "+٠٥:30"])
def test_invalid_offsets(text: object) -> None:
    from cronctl.core.errors import ZoneError
    with pytest.raises(ZoneError):
        parse_offset(text)


def test_every_rules_are_timelines_of_their_own_anchor() -> None:
    from cronctl.core.zones import parse_zone
    berlin = parse_zone("Europe/Berlin")
    timeline = Timeline(parse_expression("every(1).day.at(09:30)"), t("2024-03-29T10:00"), berlin)
    # 09:30 in Berlin is 08:30 UTC before the change of 31 March and 07:30 UTC after it.
    assert [format_time(m) for m in (timeline.first, timeline.next_after(t("2024-03-30T08:30")))] == [
        "2024-03-30T08:30", "2024-03-31T07:30"]
    assert timeline.count_in(t("2024-03-29T10:00"), t("2024-04-02T10:00"), 101) == 4
    assert timeline.end is None
    hourly = Timeline(parse_expression("every(2).hours"), t("2024-03-01T10:07"))
    assert [hourly.first, hourly.next_after(t("2024-03-01T12:07"))] == [t("2024-03-01T12:07"), t("2024-03-01T14:07")]


def test_the_harness_knows_no_every_rules() -> None:
    from cronctl import run
    assert run([["next_runs", "every(2).hours", "2024-03-01T00:00", 1]]) == ["error: invalid expression"]
