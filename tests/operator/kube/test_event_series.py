"""kube.event_series: isomorphic Events as one Event with a count, as client-go's recorder
writes them. One test per rule; times are seconds given to the series."""

from __future__ import annotations

from typing import Any, Mapping

from cronctl.operator.kube.event_series import REFRESH_SECONDS, SERIES_SECONDS, Series, Written
from cronctl.operator.manifests import EventSpec

T0 = 1_000_000.0


def about(name: str = "sync", event: str = "sync.1") -> Mapping[str, Any]:
    return {"metadata": {"name": name, "namespace": "team-a", "uid": f"uid-{name}"}, "event": event}


def launched(number: int) -> EventSpec:
    return EventSpec("Normal", "Launched", f"launched run {number}")


def shape(written: Written | None) -> tuple[bool, int, str] | None:
    return None if written is None else (written.new, written.count, written.event.message)


def test_the_first_event_of_its_kind_is_created() -> None:
    assert shape(Series().record(about(), launched(1), T0)) == (True, 1, "launched run 1")


def test_the_second_within_the_series_time_starts_a_series_at_once() -> None:
    series = Series()
    series.record(about(), launched(1), T0)
    assert shape(series.record(about(), launched(2), T0 + 60)) == (False, 2, "launched run 2")


def test_later_ones_are_only_counted() -> None:
    series = Series()
    for number in (1, 2):
        series.record(about(), launched(number), T0 + 60 * number)
    assert series.record(about(), launched(3), T0 + 180) is None
    assert series.due(T0 + 240) == []  # nothing due before the refresh


def test_the_count_is_written_at_each_refresh_with_the_latest_message() -> None:
    series = Series()
    for number in range(1, 32):
        series.record(about(), launched(number), T0 + 60 * number)
    started = T0 + 120  # the second one: the series' start, written
    assert series.due(started + REFRESH_SECONDS - 1) == []
    [written] = series.due(started + REFRESH_SECONDS)
    assert shape(written) == (False, 31, "launched run 31") and written.first == T0 + 60
    assert series.due(started + REFRESH_SECONDS + 10) == []  # written: nothing new since


def test_a_series_without_news_for_the_series_time_ends_with_its_count_and_the_next_starts_afresh() -> None:
    series = Series()
    for number in (1, 2, 3):
        series.record(about(), launched(number), T0 + 60 * number)
    [final] = series.due(T0 + 180 + SERIES_SECONDS + 1)
    assert shape(final) == (False, 3, "launched run 3")
    assert series.open == {}
    assert shape(series.record(about(event="sync.2"), launched(4), T0 + 3600)) == (True, 1, "launched run 4")


def test_an_hourly_schedules_events_are_each_their_own() -> None:
    series = Series()
    assert series.record(about(), launched(1), T0).new
    assert series.record(about(), launched(2), T0 + 3600).new


def test_another_reason_another_type_or_another_schedule_is_another_series() -> None:
    series = Series()
    series.record(about(), launched(1), T0)
    assert series.record(about(), EventSpec("Normal", "Succeeded", "run 1 succeeded"), T0 + 1).new
    assert series.record(about(), EventSpec("Warning", "Launched", "odd"), T0 + 2).new
    assert series.record(about("other"), launched(1), T0 + 3).new


def test_at_stop_every_count_not_written_is_written() -> None:
    series = Series()
    for number in (1, 2, 3, 4):
        series.record(about(), launched(number), T0 + 60 * number)
    series.record(about("other"), launched(1), T0)
    assert [shape(w) for w in series.pending()] == [(False, 4, "launched run 4")]


def test_an_occurrence_and_a_write_are_slots_objects() -> None:
    """Issue 47: an every-minute schedule keeps a series per reason; no dict of attributes each."""
    from cronctl.operator.kube.event_series import Occurrence, Written

    assert not hasattr(Occurrence({}, None, 0.0, 0.0), "__dict__")
    assert not hasattr(Written({}, None, 0.0, 0.0, 1), "__dict__")
