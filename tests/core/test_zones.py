"""Zones (``core/zones.py``): offsets and IANA names parsed or refused, and what a zone says.

The rows name UTC instants; each says the offset and abbreviation in force
then, or the transitions of a year. Daylight-saving *rules* for schedules
are in ``test_dst.py``; here only the zone data.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from cronctl.core.errors import Code, ZoneError
from cronctl.core.times import format_time, parse_time, to_minute
from cronctl.core.zones import UTC, FixedOffset, IanaZone, Transition, local_rfc3339, parse_offset, parse_zone


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


# -- parse_offset -----------------------------------------------------------------------


@pytest.mark.parametrize("text, minutes, name", [
    ("+05:30", 330, "+05:30"), ("-08:00", -480, "-08:00"), ("+00:00", 0, "+00:00"), ("-00:00", 0, "+00:00"),
    ("+14:00", 840, "+14:00"), ("-14:00", -840, "-14:00"), ("+05:45", 345, "+05:45"), ("-09:30", -570, "-09:30"),
])
def test_parse_offset_takes_hours_and_quarter_hours_up_to_14(text: str, minutes: int, name: str) -> None:
    assert parse_offset(text) == FixedOffset(minutes)
    assert parse_offset(text).name == name


@pytest.mark.parametrize("text, reason", [
    (None, "must be an offset string like +05:30"),
    (330, "must be an offset string like +05:30"),
    ("UTC", "'UTC' is not an offset of the form +HH:MM or -HH:MM"),
    ("05:30", "'05:30' is not an offset of the form +HH:MM or -HH:MM"),
    ("+5:30", "'+5:30' is not an offset of the form +HH:MM or -HH:MM"),
    ("-05:3", "'-05:3' is not an offset of the form +HH:MM or -HH:MM"),
    ("+05:30 ", "'+05:30 ' is not an offset of the form +HH:MM or -HH:MM"),
    ("+05-30", "'+05-30' is not an offset of the form +HH:MM or -HH:MM"),
    ("+1\u0663:00", "'+1\u0663:00': hours must be two digits"),
    ("+\u0660\u0665:30", "'+\u0660\u0665:30': hours must be two digits"),
    ("+05:20", "'+05:20': minutes must be 00, 15, 30 or 45"),
    ("+05:3x", "'+05:3x': minutes must be 00, 15, 30 or 45"),
    ("+14:15", "'+14:15' is beyond the largest offset, 14:00"),
    ("+15:00", "'+15:00' is beyond the largest offset, 14:00"),
])
def test_parse_offset_refuses_naming_the_field_and_the_reason(text: object, reason: str) -> None:
    with pytest.raises(ZoneError) as error:
        parse_offset(text, "timeZone")
    assert (error.value.field, error.value.reason, error.value.code) == ("timeZone", reason, Code.INVALID_TIMEZONE)
    assert error.value.message == f"timeZone: {reason}"


# -- parse_zone -------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["+05:30", "-08:00", "+00:00", "-00:00", "+14:00", "-14:00"])
def test_parse_zone_takes_offsets_exactly_as_parse_offset(text: str) -> None:
    assert parse_zone(text) == parse_offset(text)


@pytest.mark.parametrize("text", ["+14:15", "+5:30", "-05:3", "+05:20", "+1\u0663:00", "+05:30 "])
def test_parse_zone_refuses_the_offsets_parse_offset_refuses_with_the_same_message(text: str) -> None:
    with pytest.raises(ZoneError) as expected:
        parse_offset(text, "timeZone")
    with pytest.raises(ZoneError) as got:
        parse_zone(text, "timeZone")
    assert got.value.message == expected.value.message


@pytest.mark.parametrize("text", ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia",
                                  "UTC", "Etc/GMT+5"])
def test_parse_zone_takes_iana_names(text: str) -> None:
    assert parse_zone(text) == IanaZone(text)
    assert parse_zone(text).name == text


@pytest.mark.parametrize("text, reason", [
    ("Mars/Base", "unknown time zone 'Mars/Base'"),
    ("europe/berlin", "unknown time zone 'europe/berlin'"),
    ("Europe", "unknown time zone 'Europe'"),
    ("../etc/passwd", "unknown time zone '../etc/passwd'"),
    ("", "unknown time zone ''"),
    ("localtime", "unknown time zone 'localtime' (it depends on the host, name a zone)"),
    ("Factory", "unknown time zone 'Factory' (it depends on the host, name a zone)"),
    (330, "must be an offset like +05:30 or a zone name like Europe/Berlin"),
    (None, "must be an offset like +05:30 or a zone name like Europe/Berlin"),
])
def test_parse_zone_refuses_naming_the_field_and_the_reason(text: object, reason: str) -> None:
    with pytest.raises(ZoneError) as error:
        parse_zone(text, "timeZone")
    assert (error.value.field, error.value.reason, error.value.code) == ("timeZone", reason, Code.INVALID_TIMEZONE)


def test_the_field_defaults_to_tz() -> None:
    with pytest.raises(ZoneError, match="^tz: unknown time zone 'Mars/Base'$"):
        parse_zone("Mars/Base")


@pytest.mark.parametrize("text", ["+05:30", "-00:00", "Europe/Berlin", "Pacific/Apia", "UTC"])
def test_a_zone_is_stored_by_its_name_and_read_back_by_parse_zone(text: str) -> None:
    zone = parse_zone(text)
    assert parse_zone(zone.name) == zone


# -- FixedOffset ------------------------------------------------------------------------


@pytest.mark.parametrize("minutes, name", [(0, "+00:00"), (330, "+05:30"), (-570, "-09:30"), (840, "+14:00"),
                                           (-45, "-00:45")])
def test_a_fixed_offset_is_the_same_at_every_instant(minutes: int, name: str) -> None:
    zone = FixedOffset(minutes)
    assert zone.name == name
    assert {zone.utc_offset(m) for m in (t("2000-01-01T00:00"), t("2024-03-31T01:00"), t("2199-12-31T23:59"))} \
        == {minutes}


def test_utc_is_the_zero_offset() -> None:
    assert UTC == FixedOffset(0) == parse_offset("+00:00")


# -- IanaZone: offsets and abbreviations ---------------------------------------------------


@pytest.mark.parametrize("zone, at, offset, abbreviation", [
    # Europe/Berlin: CET (+01:00), CEST (+02:00) from 31 March 01:00 UTC to 27 October 01:00 UTC
    ("Europe/Berlin", "2024-01-15T12:00", 60, "CET"),
    ("Europe/Berlin", "2024-03-31T00:59", 60, "CET"),
    ("Europe/Berlin", "2024-03-31T01:00", 120, "CEST"),
    ("Europe/Berlin", "2024-10-27T00:59", 120, "CEST"),
    ("Europe/Berlin", "2024-10-27T01:00", 60, "CET"),
    ("Europe/Berlin", "2150-07-01T00:00", 120, "CEST"),  # past the listed transitions: the file's TZ rule
    # America/New_York: EST (-05:00), EDT (-04:00)
    ("America/New_York", "2024-03-10T06:59", -300, "EST"),
    ("America/New_York", "2024-03-10T07:00", -240, "EDT"),
    ("America/New_York", "2024-11-03T05:59", -240, "EDT"),
    ("America/New_York", "2024-11-03T06:00", -300, "EST"),
    # Australia/Lord_Howe: a 30-minute daylight saving, +10:30 and +11:00
    ("Australia/Lord_Howe", "2024-04-06T14:59", 660, "+11"),
    ("Australia/Lord_Howe", "2024-04-06T15:00", 630, "+1030"),
    ("Australia/Lord_Howe", "2024-10-05T15:29", 630, "+1030"),
    ("Australia/Lord_Howe", "2024-10-05T15:30", 660, "+11"),
    # Pacific/Apia: from -10:00 to +14:00 at the end of 29 December 2011 (local)
    ("Pacific/Apia", "2011-12-30T09:59", -600, "-10"),
    ("Pacific/Apia", "2011-12-30T10:00", 840, "+14"),
])
def test_an_iana_zone_says_the_offset_and_abbreviation_at_an_instant(zone: str, at: str, offset: int,
                                                                     abbreviation: str) -> None:
    assert IanaZone(zone).utc_offset(t(at)) == offset
    assert IanaZone(zone).abbreviation(t(at)) == abbreviation


def test_apia_skipped_30_december_2011() -> None:
    apia, change = IanaZone("Pacific/Apia"), t("2011-12-30T10:00")
    assert format_time(change - 1 + apia.utc_offset(change - 1)) == "2011-12-29T23:59"
    assert format_time(change + apia.utc_offset(change)) == "2011-12-31T00:00"


# -- IanaZone: transitions --------------------------------------------------------------


@pytest.mark.parametrize("zone, year, expected", [
    ("Europe/Berlin", 2024, [("2024-03-31T01:00", 60, 120), ("2024-10-27T01:00", 120, 60)]),
    ("America/New_York", 2024, [("2024-03-10T07:00", -300, -240), ("2024-11-03T06:00", -240, -300)]),
    ("Australia/Lord_Howe", 2024, [("2024-04-06T15:00", 660, 630), ("2024-10-05T15:30", 630, 660)]),
    # Apia 2011: daylight saving ends (April) and starts again (September), then a day is skipped
    ("Pacific/Apia", 2011, [("2011-04-02T14:00", -600, -660), ("2011-09-24T14:00", -660, -600),
                            ("2011-12-30T10:00", -600, 840)]),
    ("Asia/Tokyo", 2024, []),
])
def test_the_transitions_of_a_year(zone: str, year: int, expected: list[tuple[str, int, int]]) -> None:
    start, end = to_minute(year, 1, 1), to_minute(year + 1, 1, 1)
    assert IanaZone(zone).transitions(start, end) == [Transition(t(at), before, after)
                                                      for at, before, after in expected]


@pytest.mark.parametrize("before, after, jump", [(60, 120, 60), (120, 60, -60), (630, 660, 30), (-600, 840, 1440)])
def test_a_jump_is_positive_forward_and_negative_back(before: int, after: int, jump: int) -> None:
    assert Transition(0, before, after).jump == jump


def test_next_and_last_transition_are_bounded_searches() -> None:
    berlin = IanaZone("Europe/Berlin")
    spring, autumn = t("2024-03-31T01:00"), t("2024-10-27T01:00")
    spring_change, autumn_change = Transition(spring, 60, 120), Transition(autumn, 120, 60)
    # next_transition(after, through): after < at <= through
    assert berlin.next_transition(spring - 1, spring) == spring_change
    assert berlin.next_transition(spring, autumn) == autumn_change
    assert berlin.next_transition(spring, autumn - 1) is None
    # last_transition(at_or_before, since): since < at <= at_or_before
    assert berlin.last_transition(spring, spring - 1) == spring_change
    assert berlin.last_transition(autumn - 1, spring - 1) == spring_change
    assert berlin.last_transition(autumn - 1, spring) is None
    # and both read the file's TZ rule past its listed transitions
    assert berlin.next_transition(t("2150-01-01T00:00"), t("2151-01-01T00:00")) == \
        Transition(t("2150-03-29T01:00"), 60, 120)  # the last Sunday of March


def test_an_iana_zone_is_a_hashable_value_and_checks_its_name() -> None:
    assert IanaZone("Europe/Berlin") == IanaZone("Europe/Berlin")
    assert len({IanaZone("Europe/Berlin"), IanaZone("Europe/Berlin"), IanaZone("Asia/Tokyo")}) == 2
    assert IanaZone("Europe/Berlin") != FixedOffset(60)
    with pytest.raises(ZoneError):
        IanaZone("Mars/Base")


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia",
                                  "Antarctica/Casey", "Antarctica/Troll", "America/Santiago", "Europe/Dublin",
                                  "Africa/Casablanca", "Asia/Tehran", "America/Nuuk", "Asia/Tokyo"])
def test_offsets_and_abbreviations_agree_with_zoneinfo(zone: str) -> None:
    """The core reads the TZif file itself (no datetime in the core); zoneinfo is the judge,
    every 53 hours from 2000 to 2060 and on both sides of every transition."""
    reference, ours = ZoneInfo(zone), IanaZone(zone)
    start, end = t("2000-01-01T00:00"), to_minute(2060, 1, 1)
    probes = list(range(start, end, 53 * 60))
    for change in ours.transitions(start, end):
        probes += [change.at - 1, change.at]
    for minute in probes:
        local = dt.datetime.fromtimestamp(minute * 60, reference)
        assert ours.utc_offset(minute) == local.utcoffset() // dt.timedelta(minutes=1), format_time(minute)
        assert ours.abbreviation(minute) == local.tzname()


@pytest.mark.parametrize(("utc", "zone", "local"), [
    ("2024-03-31T00:59", "Europe/Berlin", "2024-03-31T01:59:00+01:00"),  # the last minute of winter time
    ("2024-03-31T01:00", "Europe/Berlin", "2024-03-31T03:00:00+02:00"),  # the first of summer time
    ("2024-03-01T00:00", "+05:30", "2024-03-01T05:30:00+05:30"),
    ("2024-03-01T12:00", "-03:00", "2024-03-01T09:00:00-03:00"),
    ("2024-03-01T12:00", "+00:00", "2024-03-01T12:00:00+00:00"),
])
def test_a_local_time_is_the_zones_wall_clock_with_its_offset_then(utc: str, zone: str, local: str) -> None:
    minute = parse_time(utc)
    assert minute is not None
    assert local_rfc3339(minute, parse_zone(zone)) == local
