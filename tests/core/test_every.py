"""``every(N).unit`` rules (seed 004 "Every", issue 5): grammar, refusals, arithmetic, jitter.

The arithmetic is checked against references that step: elapsed rules one
firing at a time from the anchor, ``.at()`` rules one local day at a time;
zone resolution against zoneinfo, one minute at a time.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronctl.core.errors import Code, ExpressionError
from cronctl.core.every import (
    Clock,
    EveryRule,
    FixedClock,
    ZoneClock,
    actual_time,
    as_clock,
    check_jitter_allowed,
    count_in,
    effective_jitter,
    is_every,
    jitter_offset,
    latest_in,
    next_after,
    next_runs,
    parse_every,
)
from cronctl.core.times import format_time, to_minute
from cronctl.core.zones import FixedOffset

UTC_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def m(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    return to_minute(year, month, day, hour, minute)


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
    assert next_after(parse_every("every(1).week"), anchor, anchor) == m(2024, 3, 8, 8, 17)


def test_an_elapsed_rule_never_fires_at_its_anchor() -> None:
    rule = parse_every("every(90).minutes")
    anchor = m(2024, 3, 1, 10, 7)
    assert next_after(rule, anchor, anchor - 500) == m(2024, 3, 1, 11, 37)
    assert latest_in(rule, anchor, anchor - 500, anchor) is None
    assert count_in(rule, anchor, anchor - 500, anchor + 270, 100) == 3


# -- the arithmetic against stepping references ---------------------------------------------------


def reference_elapsed(rule: EveryRule, anchor: int, until: int) -> list[int]:
    """Firings from the anchor, one step at a time, up to the first one past ``until``."""
    times, t = [], anchor
    while True:
        t += rule.step_minutes
        times.append(t)
        if t > until:
            return times


def reference_at(rule: EveryRule, anchor: int, until: int, clock) -> list[int]:
    """Firings of an ``.at()`` rule, one local day at a time, up to the first one past ``until``."""
    assert rule.at is not None and rule.step_days is not None
    first_day = clock.to_local(anchor) // 1440
    times, day = [], first_day
    while True:
        if (day - first_day) % rule.step_days == 0:
            t = clock.to_utc(day * 1440 + rule.at)
            if t > anchor:
                times.append(t)
                if t > until:
                    return times
        day += 1


def check_against(times: list[int], rule: EveryRule, anchor: int, t: int, low: int, high: int,
                  limit: int, zone) -> None:
    assert times == sorted(set(times))
    assert next_after(rule, anchor, t, zone) == next(x for x in times if x > t)
    inside = [x for x in times if low < x <= high]
    assert latest_in(rule, anchor, low, high, zone) == (inside[-1] if inside else None)
    assert count_in(rule, anchor, low, high, limit, zone) == min(limit, len(inside))


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
    times = reference_elapsed(rule, anchor, max(t, high))
    check_against(times, rule, anchor, t, low, high, limit, FixedOffset(offset))


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
    zone = FixedOffset(offset)
    times = reference_at(rule, anchor, max(t, high), as_clock(zone))
    check_against(times, rule, anchor, t, low, high, limit, zone)
    assert next_runs(rule, anchor, 3, zone) == reference_at(rule, anchor, anchor + 3 * span + 2880,
                                                            as_clock(zone))[:3]


class TzZone:
    """A ``zones.Zone`` (utc_offset) over zoneinfo, as a daylight-saving zone will be."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tz = ZoneInfo(name)

    def utc_offset(self, utc_minute: int) -> int:
        offset = (UTC_EPOCH + dt.timedelta(minutes=utc_minute)).astimezone(self.tz).utcoffset()
        assert offset is not None
        return int(offset.total_seconds()) // 60


ZONES = {name: TzZone(name) for name in
         ("Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia", "America/Santiago")}


@settings(max_examples=300, deadline=None)
@given(zone=st.sampled_from(sorted(ZONES)), unit=st.sampled_from(["days", "weeks"]),
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
    times = reference_at(rule, anchor, max(t, high), as_clock(ZONES[zone]))
    check_against(times, rule, anchor, t, low, high, limit, ZONES[zone])


def test_the_arithmetic_does_not_step_through_firings() -> None:
    calls = 0
    fixed = FixedClock(60)

    def to_utc(local: int) -> int:
        nonlocal calls
        calls += 1
        return fixed.to_utc(local)

    clock = Clock(to_local=fixed.to_local, to_utc=to_utc)
    rule = parse_every("every(1).day.at(03:00)")
    anchor = m(2000, 1, 1)
    assert count_in(rule, anchor, anchor, m(2199, 12, 31, 12), 10**9, clock) == 73049
    assert latest_in(rule, anchor, anchor, m(2199, 12, 31, 12), clock) == m(2199, 12, 31, 2)
    assert next_after(rule, anchor, m(2199, 6, 1, 12), clock) == m(2199, 6, 2, 2)
    assert calls <= 20


# -- zones ----------------------------------------------------------------------------------------


def reference_to_utc(zone: TzZone, local: int) -> int:
    """The first UTC minute whose local wall time reads ``local`` or later, one minute at a time."""
    u = local - 1440
    while u + zone.utc_offset(u) < local:
        u += 1
    return u


# local wall times of changes (the skipped or repeated hour starts there)
CHANGES = [
    ("Europe/Berlin", m(2024, 3, 31, 2)), ("Europe/Berlin", m(2024, 10, 27, 2)),
    ("America/New_York", m(2024, 3, 10, 2)), ("America/New_York", m(2024, 11, 3, 1)),
    ("Australia/Lord_Howe", m(2024, 10, 6, 2)), ("Australia/Lord_Howe", m(2024, 4, 7, 1, 30)),
    ("Pacific/Apia", m(2011, 12, 30)), ("America/Santiago", m(2024, 9, 8)),
]


@settings(max_examples=200, deadline=None)
@given(change=st.sampled_from(CHANGES), delta=st.integers(-200, 1500))
def test_a_zone_clock_fires_at_the_first_minute_that_reads_the_time(change: tuple[str, int],
                                                                    delta: int) -> None:
    zone = ZONES[change[0]]
    local = change[1] + delta
    assert ZoneClock(zone).to_utc(local) == reference_to_utc(zone, local)


def test_berlin_skipped_and_repeated_times() -> None:
    clock = as_clock(ZONES["Europe/Berlin"])
    assert clock.to_utc(m(2024, 3, 31, 2, 30)) == m(2024, 3, 31, 1)  # skipped: at the change (03:00 CEST)
    assert clock.to_utc(m(2024, 10, 27, 2, 30)) == m(2024, 10, 27, 0, 30)  # repeated: the first, CEST
    rule = parse_every("every(1).day.at(02:30)")
    assert next_runs(rule, m(2024, 3, 29, 12), 3, ZONES["Europe/Berlin"]) == [
        m(2024, 3, 30, 1, 30), m(2024, 3, 31, 1), m(2024, 4, 1, 0, 30)]
    assert next_runs(rule, m(2024, 10, 26, 12), 2, ZONES["Europe/Berlin"]) == [
        m(2024, 10, 27, 0, 30), m(2024, 10, 28, 1, 30)]


def test_apia_fires_its_missing_day_once_at_the_change() -> None:
    rule = parse_every("every(1).day.at(09:00)")
    apia = ZONES["Pacific/Apia"]
    anchor = m(2011, 12, 28, 10)  # 2011-12-28T00:00 at -10:00
    assert next_runs(rule, anchor, 4, apia) == [
        m(2011, 12, 28, 19), m(2011, 12, 29, 19), m(2011, 12, 30, 10), m(2011, 12, 30, 19)]
    assert count_in(rule, anchor, anchor, m(2011, 12, 31), 100, apia) == 4


def test_a_resolver_decides_skipped_and_repeated_times() -> None:
    seen = []

    def second_occurrence(local: int, change: int, before: int, after: int) -> int:
        seen.append((local, change, before, after))
        return local - after if after < before else local - before

    clock = ZoneClock(ZONES["Europe/Berlin"], second_occurrence)
    assert clock.to_utc(m(2024, 10, 27, 2, 30)) == m(2024, 10, 27, 1, 30)
    assert clock.to_utc(m(2024, 3, 31, 2, 30)) == m(2024, 3, 31, 1, 30)
    assert clock.to_utc(m(2024, 7, 1, 12)) == m(2024, 7, 1, 10)
    assert seen == [(m(2024, 10, 27, 2, 30), m(2024, 10, 27, 1), 120, 60),
                    (m(2024, 3, 31, 2, 30), m(2024, 3, 31, 1), 60, 120)]


def test_as_clock_takes_offsets_clocks_and_zones() -> None:
    assert as_clock(None) == FixedClock(0)
    assert as_clock(330) == FixedClock(330)
    assert as_clock(FixedOffset(-300)) == FixedClock(-300)
    clock = Clock(to_local=lambda u: u + 1, to_utc=lambda local: local - 1)
    assert as_clock(clock) is clock
    assert isinstance(as_clock(ZONES["Europe/Berlin"]), ZoneClock)
    with pytest.raises(TypeError):
        as_clock("Europe/Berlin")


def test_an_at_rule_counts_in_the_zone_and_an_elapsed_rule_in_utc() -> None:
    berlin = ZONES["Europe/Berlin"]
    anchor = m(2024, 3, 30, 10)  # 11:00 in Berlin
    daily = parse_every("every(1).day.at(12:00)")
    assert next_runs(daily, anchor, 2, berlin) == [m(2024, 3, 30, 11), m(2024, 3, 31, 10)]
    elapsed = parse_every("every(1).day")
    assert next_runs(elapsed, anchor, 2, berlin) == [m(2024, 3, 31, 10), m(2024, 4, 1, 10)]


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
    assert count_in(plain, anchor, anchor, anchor + 10**6, 500) == count_in(jittered, anchor, anchor,
                                                                            anchor + 10**6, 500)


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
