"""Timelines: the chain of schedule times of one job (seed 000 Parts 1 and 4)."""

from __future__ import annotations

from typing import get_args

import pytest

from cronctl.core.cron import CronExpression, FixedCronTimes, ZonedCronTimes
from cronctl.core.errors import ExpressionError
from cronctl.core.every import EveryRule, ZonedAtTimes
from cronctl.core.interval import IntervalExpression, Progression
from cronctl.core.schedule import Expression, ScheduleTimes, Timeline, next_runs, parse_expression
from cronctl.core.times import format_time, parse_time
from cronctl.core.zones import FixedOffset, parse_offset, parse_zone


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


def times(expression: str, after: str, count: int, tz: str = "+00:00") -> list[str]:
    return [format_time(m) for m in next_runs(parse_expression(expression), t(after), count,
                                             parse_offset(tz))]


def test_upcoming_lists_the_next_times_and_stops_where_the_chain_ends() -> None:
    timeline = Timeline(parse_expression("0 9 * * 1-5"), t("2024-03-01T00:00"))  # a Friday
    assert [format_time(m) for m in timeline.upcoming(t("2024-03-01T09:00"), 3)] == [
        "2024-03-04T09:00", "2024-03-05T09:00", "2024-03-06T09:00"]
    assert timeline.upcoming(t("2024-03-01T00:00"), 1) == [t("2024-03-01T09:00")]
    never = Timeline(parse_expression("0 0 30 2 *"), t("2024-03-01T00:00"))
    assert never.upcoming(t("2024-03-01T00:00"), 5) == []


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


# -- one interface, one implementation per kind -------------------------------------------------

# (kind, expression, zone, anchor, its class of ScheduleTimes, its first three schedule times).
# Around Berlin's spring forward of 31 March 2024 (02:00 CET -> 03:00 CEST, 01:00 UTC).
KINDS = [
    ("cron, fixed offset: 02:30 at +01:00 every day", "30 2 * * *", "+01:00", "2024-03-29T12:00",
     FixedCronTimes, ["2024-03-30T01:30", "2024-03-31T01:30", "2024-04-01T01:30"]),
    ("cron, IANA zone: the skipped 02:30 runs at the change", "30 2 * * *", "Europe/Berlin",
     "2024-03-29T12:00", ZonedCronTimes, ["2024-03-30T01:30", "2024-03-31T01:00", "2024-04-01T00:30"]),
    ("@every: real minutes from the anchor, whatever the zone", "@every 90m", "Europe/Berlin",
     "2024-03-30T23:07", Progression, ["2024-03-31T00:37", "2024-03-31T02:07", "2024-03-31T03:37"]),
    ("every(N).unit, elapsed: real minutes from the anchor", "every(2).hours", "Europe/Berlin",
     "2024-03-30T23:07", Progression, ["2024-03-31T01:07", "2024-03-31T03:07", "2024-03-31T05:07"]),
    ("every(N).unit .at(), fixed offset", "every(1).day.at(02:30)", "+01:00", "2024-03-29T12:00",
     Progression, ["2024-03-30T01:30", "2024-03-31T01:30", "2024-04-01T01:30"]),
    ("every(N).unit .at(), IANA zone: a fixed-time job, as cron", "every(1).day.at(02:30)", "Europe/Berlin",
     "2024-03-29T12:00", ZonedAtTimes, ["2024-03-30T01:30", "2024-03-31T01:00", "2024-04-01T00:30"]),
]


@pytest.mark.parametrize("kind, text, zone, anchor, implementation, expected", KINDS, ids=[row[0] for row in KINDS])
def test_each_kind_answers_the_timeline_questions_through_the_interface(
        kind: str, text: str, zone: str, anchor: str, implementation: type, expected: list[str]) -> None:
    expression, start, fires = parse_expression(text), t(anchor), [t(x) for x in expected]
    times = expression.times(start, parse_zone(zone))
    assert isinstance(times, implementation) and isinstance(times, ScheduleTimes)
    timeline = Timeline(expression, start, parse_zone(zone))
    assert (timeline.first, timeline.end, timeline.fires) == (fires[0], None, True)
    assert [timeline.next_after(start - 5000), timeline.next_after(fires[0]), timeline.next_after(fires[1])] \
        == fires
    assert timeline.next_after(fires[0] - 1) == fires[0]
    assert timeline.latest_in(start - 5000, fires[2]) == fires[2]
    assert timeline.latest_in(start, fires[2] - 1) == fires[1]
    assert timeline.latest_in(fires[0], fires[1] - 1) is None
    assert timeline.count_in(start - 5000, fires[2], 101) == 3
    assert timeline.count_in(fires[0], fires[2], 101) == 2
    assert timeline.count_in(start, fires[2], 2) == 2
    assert timeline.count_in(fires[2], fires[2], 101) == 0
    assert next_runs(expression, start, 3, parse_zone(zone)) == fires
    assert times.next_runs(start, 3) == fires


def test_every_kind_of_expression_has_exactly_one_implementation_of_the_interface() -> None:
    kinds = get_args(Expression)
    assert set(kinds) == {CronExpression, IntervalExpression, EveryRule}
    for kind in kinds:
        assert "times" in vars(kind), f"{kind.__name__} makes its own ScheduleTimes"
    # the table above asks every kind (and shows its implementation, per zone kind where the zone matters)
    assert {type(parse_expression(text)) for _, text, *_ in KINDS} == set(kinds)


def test_a_chain_that_ends_ends_through_the_interface_too() -> None:
    expression = parse_expression("0 0 */31 12 FRI")  # 1 December on a Friday: 2028, 2034, then 2045
    for zone in (FixedOffset(0), parse_zone("Europe/London")):
        times = expression.times(t("2024-03-01T00:00"), zone)
        assert times.next_after(t("2024-03-01T00:00")) == t("2028-12-01T00:00")
        assert times.chain_end(t("2028-12-01T00:00")) == t("2034-12-01T00:00")
        assert times.next_after(t("2034-12-01T00:00")) is None
