"""``every(N).unit`` rules (seed 004 "Every", issue 5): grammar, refusals, arithmetic, jitter.

The arithmetic is checked against references that step: elapsed rules one
firing at a time from the anchor, ``.at()`` rules one local day at a time,
each local time resolved from zoneinfo by the README's daylight-saving rule
for fixed-time jobs (which ``.at()`` rules are).
"""

from __future__ import annotations

import datetime as dt
from typing import Callable
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronctl.core.errors import Code, ExpressionError
from cronctl.core.every import (
    EveryRule,
    ZonedAtTimes,
    actual_time,
    check_jitter_allowed,
    effective_jitter,
    is_every,
    jitter_offset,
    parse_every,
)
from cronctl.core.interval import Progression
from cronctl.core.schedule import Timeline, next_runs
from cronctl.core.times import format_time, to_minute
from cronctl.core.zones import UTC, AnyZone, FixedOffset, IanaZone, Transition


def m(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return to_minute(year, month, day, hour, minute)


def times(rule: EveryRule, anchor: int, zone: AnyZone = UTC) -> Progression | ZonedAtTimes:
    return rule.times(anchor, zone)


def refused(text: str) -> str:
    with pytest.raises(ExpressionError) as caught:
        parse_every(text)
    assert caught.value.code is Code.INVALID_EXPRESSION
    return caught.value.message


# -- grammar --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, canonical, unit, step_minutes, step_days", [
    ("every(5).minutes", "every(5).minutes", "minutes", 5, None),
    ("every(1).minute", "every(1).minute", "minutes", 1, None),
    ("every(3).hours", "every(3).hours", "hours", 180, None),
    ("every(1).hour", "every(1).hour", "hours", 60, None),
    ("every(2).days", "every(2).days", "days", 2880, 2),
    ("every(1).day", "every(1).day", "days", 1440, 1),
    ("every(3).weeks", "every(3).weeks", "weeks", 30240, 21),
    ("every(1).week", "every(1).week", "weeks", 10080, 7),
])
def test_each_unit_and_its_singular_form(text: str, canonical: str, unit: str, step_minutes: int,
                                         step_days: int | None) -> None:
    rule = parse_every(text)
    assert (rule.text, rule.unit, rule.step_minutes, rule.step_days) == (canonical, unit, step_minutes, step_days)
    assert rule.at is None and rule.jitter_seconds is None and rule.elapsed


def test_singular_and_plural_are_the_same_unit_and_the_canonical_text_follows_n() -> None:
    assert parse_every("every(1).days") == parse_every("every(1).day")
    assert parse_every("every(2).day") == parse_every("every(2).days")
    assert parse_every("every(1).minutes").text == "every(1).minute"
    assert parse_every("every(4).week").text == "every(4).weeks"


def test_surrounding_whitespace_is_ignored() -> None:
    assert parse_every("  every(5).minutes\t\n").text == "every(5).minutes"


def test_at_sets_the_minute_of_the_day_for_days_and_weeks() -> None:
    assert parse_every("every(1).day.at(00:00)").at == 0
    rule = parse_every("every(2).weeks.at(23:59)")
    assert (rule.at, rule.step_days, rule.elapsed, rule.text) == (1439, 14, False, "every(2).weeks.at(23:59)")


def test_jitter_takes_0_to_3600_seconds() -> None:
    assert parse_every("every(5).minutes.jitter(0)").jitter_seconds == 0
    assert parse_every("every(5).minutes.jitter(3600)").jitter_seconds == 3600
    assert parse_every("every(5).minutes.jitter(0)").text == "every(5).minutes.jitter(0)"


def test_at_and_jitter_come_in_either_order_and_print_at_first() -> None:
    one = parse_every("every(1).days.at(09:30).jitter(45)")
    other = parse_every("every(1).days.jitter(45).at(09:30)")
    assert one == other
    assert one.text == "every(1).day.at(09:30).jitter(45)"
    assert (one.at, one.jitter_seconds) == (570, 45)


def test_the_largest_counts_are_one_year() -> None:
    assert parse_every("every(525600).minutes").step_minutes == 525600
    assert parse_every("every(8760).hours").step_minutes == 525600
    assert parse_every("every(365).days").step_days == 365
    assert parse_every("every(52).weeks").step_days == 364


def test_the_canonical_text_parses_to_the_same_rule() -> None:
    for text in ("every(1).days.jitter(7).at(06:05)", "every(9).hour.jitter(0)", "every(52).week.at(00:00)"):
        rule = parse_every(text)
        assert parse_every(rule.text) == rule


def test_is_every_picks_the_parser_in_any_case() -> None:
    assert is_every("every(5).minutes") and is_every("  EVERY(5).minutes")
    assert not is_every("*/5 * * * *") and not is_every("@every 5m") and not is_every(5)


# -- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    (5, "every: must be a string"),
    ("", "every: '' is not of the form every(N).unit, then optionally .at(HH:MM) and .jitter(S)"),
    ("each(5).minutes", "every: 'each(5).minutes' is not of the form every(N).unit, then optionally "
                        ".at(HH:MM) and .jitter(S)"),
    ("every(5", "every: 'every(5': 'every(' is not closed"),
    ("every(5). minutes", "every: 'every(5). minutes' has whitespace inside; write the rule without spaces"),
    ("every (5).minutes", "every: 'every (5).minutes' has whitespace inside; write the rule without spaces"),
    ("Every(5).minutes", "every: 'Every(5).minutes' must be written in lower case"),
    ("every(5).Minutes", "every: 'every(5).Minutes' must be written in lower case"),
    ("every(0).minutes", "every: '0' is not a positive whole number without sign or leading zeros"),
    ("every(05).minutes", "every: '05' is not a positive whole number without sign or leading zeros"),
    ("every(+5).minutes", "every: '+5' is not a positive whole number without sign or leading zeros"),
    ("every(-5).minutes", "every: '-5' is not a positive whole number without sign or leading zeros"),
    ("every(1.5).hours", "every: '1.5' is not a positive whole number without sign or leading zeros"),
    ("every().minutes", "every: '' is not a positive whole number without sign or leading zeros"),
    ("every(٣).minutes", "every: '٣' is not a positive whole number without sign or leading zeros"),
    ("every(525601).minutes", "every: every(525601).minutes is longer than one year (525600 minutes)"),
    ("every(8761).hours", "every: every(8761).hours is longer than one year (525600 minutes)"),
    ("every(366).days", "every: every(366).days is longer than one year (525600 minutes)"),
    ("every(53).weeks", "every: every(53).weeks is longer than one year (525600 minutes)"),
    ("every(10000000).minutes", "every: every(10000000).minutes is longer than one year (525600 minutes)"),
    ("every(5)", "unit: every(N) needs a unit: .minutes, .hours, .days or .weeks"),
    ("every(5).fortnights", "unit: 'fortnights' is not one of minute(s), hour(s), day(s), week(s)"),
    ("every(5).m", "unit: 'm' is not one of minute(s), hour(s), day(s), week(s)"),
    ("every(5).minutes()", "unit: .minutes takes no parentheses"),
    ("every(5).at(09:00)", "unit: a unit (.minutes, .hours, .days or .weeks) comes before .at()"),
    ("every(5).days.hours", "unit: a rule has one unit: 'hours' follows .days"),
    ("every(5)minutes", "every: unexpected 'minutes'; the form is every(N).unit, then optionally "
                        ".at(HH:MM) and .jitter(S)"),
    ("every(5).minutes.", "every: a '.' is followed by no name; the form is every(N).unit, then optionally "
                          ".at(HH:MM) and .jitter(S)"),
    ("every(5).minutes.every(2)", "every: 'every' is not part of a rule; after the unit come .at(HH:MM) "
                                  "and .jitter(S)"),
    ("every(5).minutes.at(09:00)", "at: .at() is only for days and weeks"),
    ("every(5).hours.at(09:00)", "at: .at() is only for days and weeks"),
    ("every(1).day.at", "at: .at needs a time: .at(HH:MM)"),
    ("every(1).day.at(09:00", "at: '.at(' is not closed"),
    ("every(1).day.at(9:00)", "at: '9:00' is not a time HH:MM from 00:00 to 23:59"),
    ("every(1).day.at(24:00)", "at: '24:00' is not a time HH:MM from 00:00 to 23:59"),
    ("every(1).day.at(12:60)", "at: '12:60' is not a time HH:MM from 00:00 to 23:59"),
    ("every(1).day.at(12.30)", "at: '12.30' is not a time HH:MM from 00:00 to 23:59"),
    ("every(1).day.at(1٢:30)", "at: '1٢:30' is not a time HH:MM from 00:00 to 23:59"),
    ("every(1).day.at(+1:30)", "at: '+1:30' is not a time HH:MM from 00:00 to 23:59"),
    ("every(1).day.at()", "at: '' is not a time HH:MM from 00:00 to 23:59"),
    ("every(1).day.at(09:00).at(10:00)", "at: .at() is given twice"),
    ("every(5).minutes.jitter", "jitter: .jitter needs seconds: .jitter(S)"),
    ("every(5).minutes.jitter(3601)", "jitter: 3601 is out of range 0-3600"),
    ("every(5).minutes.jitter(99999)", "jitter: 99999 is out of range 0-3600"),
    ("every(5).minutes.jitter(-1)", "jitter: '-1' is not a whole number of seconds without sign or leading zeros"),
    ("every(5).minutes.jitter(030)", "jitter: '030' is not a whole number of seconds without sign or leading zeros"),
    ("every(5).minutes.jitter(1.5)", "jitter: '1.5' is not a whole number of seconds without sign or leading zeros"),
    ("every(5).minutes.jitter()", "jitter: '' is not a whole number of seconds without sign or leading zeros"),
    ("every(5).minutes.jitter(5).jitter(6)", "jitter: .jitter() is given twice"),
])
def test_refusals_name_the_field_and_the_reason(text: str, message: str) -> None:
    assert refused(text) == message  # type: ignore[arg-type]


def test_a_refusal_carries_its_field_and_reason() -> None:
    with pytest.raises(ExpressionError) as caught:
        parse_every("every(5).minutes.jitter(3601)")
    assert (caught.value.field, caught.value.reason) == ("jitter", "3601 is out of range 0-3600")


def test_a_rule_jitter_needs_the_schedule_jitter_at_zero() -> None:
    rule = parse_every("every(5).minutes.jitter(30)")
    check_jitter_allowed(rule, 0)
    with pytest.raises(ExpressionError) as caught:
        check_jitter_allowed(rule, 10)
    assert caught.value.message == "jitter: a rule that sets .jitter() needs the schedule's own jitter at 0"
    with pytest.raises(ExpressionError):  # .jitter(0) sets the jitter too
        check_jitter_allowed(parse_every("every(5).minutes.jitter(0)"), 10)
    check_jitter_allowed(parse_every("every(5).minutes"), 10)
    check_jitter_allowed(object(), 10)  # any other expression sets no jitter


def test_the_effective_jitter_is_the_rule_own_else_the_schedule_one() -> None:
    assert effective_jitter(parse_every("every(5).minutes.jitter(30)"), 0) == 30
    assert effective_jitter(parse_every("every(5).minutes"), 12) == 12
    assert effective_jitter(object(), 12) == 12


# -- the k = 0 day --------------------------------------------------------------------------------


def test_the_anchor_day_fires_when_its_time_is_still_ahead() -> None:
    rule = parse_every("every(2).days.at(09:00)")
    assert next_runs(rule, m(2024, 3, 1, 8, 0), 3) == [m(2024, 3, 1, 9), m(2024, 3, 3, 9), m(2024, 3, 5, 9)]


def test_the_anchor_day_does_not_fire_at_or_before_the_anchor() -> None:
    rule = parse_every("every(2).days.at(09:00)")
    assert next_runs(rule, m(2024, 3, 1, 9, 0), 2) == [m(2024, 3, 3, 9), m(2024, 3, 5, 9)]
    assert next_runs(rule, m(2024, 3, 1, 9, 1), 2) == [m(2024, 3, 3, 9), m(2024, 3, 5, 9)]


def test_the_anchor_day_is_the_local_date_of_the_anchor() -> None:
    # 2024-03-01T20:00 UTC is 2024-03-02T05:00 at +09:00: the firing days are the 2nd, 5th, ...
    rule = parse_every("every(3).days.at(06:00)")
    assert next_runs(rule, m(2024, 3, 1, 20), 2, FixedOffset(540)) == [m(2024, 3, 1, 21), m(2024, 3, 4, 21)]
    # at -05:00 the same instant is the 1st, 15:00: the 1st has passed, the 4th is next
    assert next_runs(rule, m(2024, 3, 1, 20), 2, FixedOffset(-300)) == [m(2024, 3, 4, 11), m(2024, 3, 7, 11)]


def test_weeks_fire_on_the_weekday_of_the_anchor() -> None:
    rule = parse_every("every(2).weeks.at(07:30)")
    anchor = m(2024, 3, 6, 12)  # a Wednesday, after 07:30
    assert [format_time(t) for t in next_runs(rule, anchor, 2)] == ["2024-03-20T07:30", "2024-04-03T07:30"]


def test_days_without_at_are_elapsed_from_the_anchor() -> None:
    rule = parse_every("every(2).days")
    anchor = m(2024, 3, 1, 8, 17)
    assert next_runs(rule, anchor, 2, FixedOffset(330)) == [m(2024, 3, 3, 8, 17), m(2024, 3, 5, 8, 17)]
    assert times(parse_every("every(1).week"), anchor).next_after(anchor) == m(2024, 3, 8, 8, 17)


def test_an_elapsed_rule_never_fires_at_its_anchor() -> None:
    anchor = m(2024, 3, 1, 10, 7)
    rule = times(parse_every("every(90).minutes"), anchor)
    assert rule.next_after(anchor - 500) == m(2024, 3, 1, 11, 37)
    assert rule.latest_in(anchor - 500, anchor) is None
    assert rule.count_in(anchor - 500, anchor + 270, 100) == 3


# -- the arithmetic against stepping references ---------------------------------------------------


def reference_elapsed(rule: EveryRule, anchor: int, until: int) -> list[int]:
    """Firings from the anchor, one step at a time, up to the first one past ``until``."""
    found, t = [], anchor
    while True:
        t += rule.step_minutes
        found.append(t)
        if t > until:
            return found


# Which UTC minutes fire for one local wall time, given the local wall time of the anchor.
Resolve = Callable[[int], list[int]]


def reference_at(rule: EveryRule, anchor: int, local_anchor: int, until: int, resolve: Resolve) -> list[int]:
    """Firings of an ``.at()`` rule, one local day at a time, up to the first one past ``until``."""
    assert rule.at is not None and rule.step_days is not None
    first_day = local_anchor // 1440
    found, day = [], first_day
    while True:
        if (day - first_day) % rule.step_days == 0:
            for t in resolve(day * 1440 + rule.at):
                if t > anchor:
                    found.append(t)
            if found and found[-1] > until:
                return found
        day += 1


def check_against(expected: list[int], rule: EveryRule, anchor: int, t: int, low: int, high: int,
                  limit: int, zone: AnyZone) -> None:
    assert expected == sorted(set(expected))
    inside = [x for x in expected if low < x <= high]
    for source in (rule.times(anchor, zone), Timeline(rule, anchor, zone)):
        assert source.next_after(t) == next(x for x in expected if x > t)
        assert source.latest_in(low, high) == (inside[-1] if inside else None)
        assert source.count_in(low, high, limit) == min(limit, len(inside))


ANCHORS = st.integers(m(2000, 1, 1), m(2150, 1, 1))
OFFSETS = st.integers(-56, 56).map(lambda q: q * 15)


@settings(max_examples=400, deadline=None)
@given(unit=st.sampled_from(["minute", "minutes", "hours", "days", "weeks"]), data=st.data(),
       anchor=ANCHORS, offset=OFFSETS, limit=st.integers(0, 120))
def test_elapsed_rules_match_stepping(unit: str, data: st.DataObject, anchor: int, offset: int,
                                      limit: int) -> None:
    largest = {"minute": 525600, "minutes": 525600, "hours": 8760, "days": 365, "weeks": 52}[unit]
    count = data.draw(st.one_of(st.integers(1, 10), st.integers(1, largest)))
    rule = parse_every(f"every({count}).{unit}")
    step = rule.step_minutes
    low = anchor + data.draw(st.integers(-3 * step, 50 * step))
    high = low + data.draw(st.integers(-step, 60 * step))
    t = anchor + data.draw(st.integers(-3 * step, 60 * step))
    expected = reference_elapsed(rule, anchor, max(t, high))
    check_against(expected, rule, anchor, t, low, high, limit, FixedOffset(offset))


@settings(max_examples=400, deadline=None)
@given(unit=st.sampled_from(["day", "days", "week", "weeks"]), data=st.data(), anchor=ANCHORS,
       offset=OFFSETS, at=st.integers(0, 1439), limit=st.integers(0, 120))
def test_at_rules_in_fixed_offsets_match_stepping(unit: str, data: st.DataObject, anchor: int, offset: int,
                                                  at: int, limit: int) -> None:
    largest = 365 if unit.startswith("day") else 52
    count = data.draw(st.one_of(st.integers(1, 10), st.integers(1, largest)))
    rule = parse_every(f"every({count}).{unit}.at({at // 60:02d}:{at % 60:02d})")
    span = rule.step_minutes
    low = anchor + data.draw(st.integers(-3 * span, 40 * span))
    high = low + data.draw(st.integers(-span, 40 * span))
    t = anchor + data.draw(st.integers(-3 * span, 40 * span))

    def resolve(local: int) -> list[int]:
        return [local - offset]

    expected = reference_at(rule, anchor, anchor + offset, max(t, high), resolve)
    check_against(expected, rule, anchor, t, low, high, limit, FixedOffset(offset))
    first_three = reference_at(rule, anchor, anchor + offset, anchor + 3 * span + 2880, resolve)[:3]
    assert next_runs(rule, anchor, 3, FixedOffset(offset)) == first_three


UTC_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def offset_at(tz: ZoneInfo, utc_minute: int) -> int:
    offset = (UTC_EPOCH + dt.timedelta(minutes=utc_minute)).astimezone(tz).utcoffset()
    assert offset is not None
    return int(offset.total_seconds()) // 60


def readme_resolution(tz: ZoneInfo) -> Resolve:
    """The README's rule for a fixed-time job, read literally from zoneinfo: a wall time read
    once fires then; skipped by a jump under 3 hours, at the first minute after the jump;
    repeated by one under 3 hours, in the first copy; a longer jump is taken literally
    (skipped: never; repeated: both copies). Assumes one change at most within a day."""

    def resolve(local: int) -> list[int]:
        before, after = offset_at(tz, local - 1500), offset_at(tz, local + 1500)
        readings = sorted(u for u in {local - before, local - after} if u + offset_at(tz, u) == local)
        jump = abs(after - before)
        if len(readings) == 2 and jump < 180:
            return readings[:1]
        if readings or jump >= 180:
            return readings
        u = local - after  # skipped by a short jump: step to the change
        while u + offset_at(tz, u) < local:
            u += 1
        return [u]

    return resolve


ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia", "America/Santiago",
         "Antarctica/Casey", "Antarctica/Troll"]


@settings(max_examples=300, deadline=None)
@given(zone=st.sampled_from(ZONES), unit=st.sampled_from(["days", "weeks"]),
       count=st.integers(1, 9), data=st.data(), anchor=st.integers(m(2005, 1, 1), m(2030, 1, 1)),
       at=st.one_of(st.sampled_from([0, 30, 60, 90, 120, 135, 150, 180, 210, 1410]), st.integers(0, 1439)),
       limit=st.integers(0, 120))
def test_at_rules_in_daylight_saving_zones_match_stepping(zone: str, unit: str, count: int,
                                                          data: st.DataObject, anchor: int, at: int,
                                                          limit: int) -> None:
    rule = parse_every(f"every({count}).{unit}.at({at // 60:02d}:{at % 60:02d})")
    span = rule.step_minutes
    low = anchor + data.draw(st.integers(-3 * span, 30 * span))
    high = low + data.draw(st.integers(-span, 30 * span))
    t = anchor + data.draw(st.integers(-3 * span, 30 * span))
    tz = ZoneInfo(zone)
    expected = reference_at(rule, anchor, anchor + offset_at(tz, anchor), max(t, high), readme_resolution(tz))
    check_against(expected, rule, anchor, t, low, high, limit, IanaZone(zone))


# local wall times of changes (the skipped or repeated wall times start there)
CHANGES = [
    ("Europe/Berlin", m(2024, 3, 31, 2)), ("Europe/Berlin", m(2024, 10, 27, 2)),
    ("America/New_York", m(2024, 3, 10, 2)), ("America/New_York", m(2024, 11, 3, 1)),
    ("Australia/Lord_Howe", m(2024, 10, 6, 2)), ("Australia/Lord_Howe", m(2024, 4, 7, 1, 30)),
    ("Pacific/Apia", m(2011, 12, 30)), ("America/Santiago", m(2024, 9, 8)),
    ("Antarctica/Casey", m(2009, 10, 18, 2)), ("Antarctica/Casey", m(2010, 3, 4, 23)),
    ("Antarctica/Troll", m(2024, 3, 31, 1)), ("Antarctica/Troll", m(2024, 10, 27, 1)),
]


@settings(max_examples=300, deadline=None)
@given(change=st.sampled_from(CHANGES), delta=st.integers(-200, 1500), weeks=st.booleans())
def test_near_a_change_an_at_rule_fires_as_the_readme_says(change: tuple[str, int], delta: int,
                                                           weeks: bool) -> None:
    zone, local = change[0], change[1] + delta
    tz = ZoneInfo(zone)
    rule = parse_every(f"every(1).{'week' if weeks else 'day'}.at({local // 60 % 24:02d}:{local % 60:02d})")
    anchor = local - local % 1440 - 2 * 1440 - offset_at(tz, local - 2 * 1440)  # local midnight, 2 days before
    expected = reference_at(rule, anchor, anchor + offset_at(tz, anchor), local + 3 * 10080, readme_resolution(tz))
    assert next_runs(rule, anchor, 3, IanaZone(zone)) == expected[:3]


def test_the_arithmetic_does_not_step_through_firings(monkeypatch: pytest.MonkeyPatch) -> None:
    rule = parse_every("every(1).day.at(03:00)")
    anchor, end = m(2000, 1, 1), m(2199, 12, 31, 12)
    fixed = rule.times(anchor, FixedOffset(60))
    assert fixed.count_in(anchor, end, 10**9) == 73049
    assert fixed.latest_in(anchor, end) == m(2199, 12, 31, 2)
    assert fixed.next_after(m(2199, 6, 1, 12)) == m(2199, 6, 2, 2)
    # In a zone, a count looks at each stretch between two transitions once, not at each firing.
    berlin = IanaZone("Europe/Berlin")
    stretches = len(berlin.transitions(anchor, end)) + 1
    calls = 0
    next_transition = IanaZone.next_transition

    def counted(zone: IanaZone, after: int, through: int) -> Transition | None:
        nonlocal calls
        calls += 1
        return next_transition(zone, after, through)

    monkeypatch.setattr(IanaZone, "next_transition", counted)
    assert rule.times(anchor, berlin).count_in(anchor, end, 10**9) == 73049
    assert calls == stretches


# -- zones ----------------------------------------------------------------------------------------


def test_berlin_skipped_and_repeated_times() -> None:
    rule = parse_every("every(1).day.at(02:30)")
    berlin = IanaZone("Europe/Berlin")
    # 31 March 02:30 does not exist: once, at the change (03:00 CEST = 01:00 UTC)
    assert next_runs(rule, m(2024, 3, 29, 12), 3, berlin) == [
        m(2024, 3, 30, 1, 30), m(2024, 3, 31, 1), m(2024, 4, 1, 0, 30)]
    # 27 October 02:30 happens twice: once, in the first copy (CEST)
    assert next_runs(rule, m(2024, 10, 26, 12), 2, berlin) == [m(2024, 10, 27, 0, 30), m(2024, 10, 28, 1, 30)]


def test_apia_s_missing_day_does_not_fire_a_jump_of_a_day_is_literal() -> None:
    rule = parse_every("every(1).day.at(09:00)")
    apia = IanaZone("Pacific/Apia")
    anchor = m(2011, 12, 28, 10)  # 2011-12-28T00:00 at -10:00
    # 28 and 29 December at -10:00; the 30th never happened; 31 December at +14:00
    assert next_runs(rule, anchor, 3, apia) == [m(2011, 12, 28, 19), m(2011, 12, 29, 19), m(2011, 12, 30, 19)]
    assert rule.times(anchor, apia).count_in(anchor, m(2011, 12, 31), 100) == 3
    # the firing days are counted in local days, the one that did not happen included
    every_other = parse_every("every(2).days.at(09:00)")
    assert next_runs(every_other, anchor, 2, apia) == [m(2011, 12, 28, 19), m(2011, 12, 31, 19)]


def test_casey_jumps_of_three_hours_are_literal() -> None:
    casey = IanaZone("Antarctica/Casey")
    # 18 October 2009, 02:00 +08:00 -> 05:00 +11:00: 02:30 is skipped and does not fire
    spring = parse_every("every(1).day.at(02:30)")
    assert next_runs(spring, m(2009, 10, 16), 2, casey) == [m(2009, 10, 16, 18, 30), m(2009, 10, 18, 15, 30)]
    # 5 March 2010, 02:00 +11:00 -> 4 March 23:00 +08:00: 23:30 fires in both copies
    autumn = parse_every("every(1).day.at(23:30)")
    assert next_runs(autumn, m(2010, 3, 3), 4, casey) == [
        m(2010, 3, 3, 12, 30), m(2010, 3, 4, 12, 30), m(2010, 3, 4, 15, 30), m(2010, 3, 5, 15, 30)]


def test_an_at_rule_counts_in_the_zone_and_an_elapsed_rule_in_utc() -> None:
    berlin = IanaZone("Europe/Berlin")
    anchor = m(2024, 3, 30, 10)  # 11:00 in Berlin
    daily = parse_every("every(1).day.at(12:00)")
    assert next_runs(daily, anchor, 2, berlin) == [m(2024, 3, 30, 11), m(2024, 3, 31, 10)]
    elapsed = parse_every("every(1).day")
    assert next_runs(elapsed, anchor, 2, berlin) == [m(2024, 3, 31, 10), m(2024, 4, 1, 10)]


def test_an_at_rule_reads_an_iana_zone_as_its_fixed_offset_between_transitions() -> None:
    rule = parse_every("every(3).days.at(18:45)")
    anchor = m(2024, 11, 1, 12)  # Berlin is at +01:00 until 30 March 2025
    assert next_runs(rule, anchor, 20, IanaZone("Europe/Berlin")) == next_runs(rule, anchor, 20, FixedOffset(60))


# -- jitter ---------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(seconds=st.integers(0, 3600), name=st.text(max_size=20), nominal=ANCHORS)
def test_jitter_is_deterministic_and_within_0_to_s(seconds: int, name: str, nominal: int) -> None:
    rule = parse_every(f"every(5).minutes.jitter({seconds})")
    offset = jitter_offset(rule, name, nominal)
    assert 0 <= offset <= seconds
    assert offset == jitter_offset(seconds, name, nominal) == jitter_offset(rule, name, nominal)
    assert actual_time(rule, name, nominal) == nominal * 60 + offset


def test_jitter_never_moves_the_nominal_time() -> None:
    plain, jittered = parse_every("every(1).day.at(02:00)"), parse_every("every(1).day.at(02:00).jitter(3600)")
    anchor = m(2024, 3, 1)
    assert next_runs(plain, anchor, 5) == next_runs(jittered, anchor, 5)
    assert times(plain, anchor).count_in(anchor, anchor + 10**6, 500) == \
        times(jittered, anchor).count_in(anchor, anchor + 10**6, 500)


def test_jitter_spreads_over_its_range_and_depends_on_name_and_time() -> None:
    offsets = {jitter_offset(600, "nightly", m(2024, 1, 1) + day * 1440) for day in range(200)}
    assert len(offsets) > 100 and max(offsets) <= 600
    assert jitter_offset(600, "a", m(2024, 1, 1)) != jitter_offset(600, "b", m(2024, 1, 1)) or \
        jitter_offset(600, "a", m(2024, 1, 2)) != jitter_offset(600, "b", m(2024, 1, 2))


def test_jitter_is_pinned_to_its_documented_hash() -> None:
    import hashlib
    digest = hashlib.sha256("nightly\n28401120".encode()).digest()
    assert jitter_offset(3600, "nightly", 28401120) == int.from_bytes(digest[:8], "big") % 3601


def test_no_jitter_gives_no_offset() -> None:
    assert jitter_offset(parse_every("every(5).minutes"), "x", 123) == 0
    assert jitter_offset(0, "x", 123) == 0
    assert actual_time(0, "x", 123) == 123 * 60
    with pytest.raises(ValueError):
        jitter_offset(-1, "x", 123)
