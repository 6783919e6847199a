"""The operator's clocks: the node's (off by an injected offset in tests), the API server's, and the
estimate of the skew between them from answers' Date headers (NTP-like bounds)."""

from __future__ import annotations

import math

import pytest

from cronctl.clock import ApiServerClock, SkewEstimate, WallClock, node_clock_from_environment

T = 1_800_000_000.0  # a node time, in seconds since 1970


def test_one_answer_bounds_the_offset_by_its_round_trip_and_the_dates_second() -> None:
    """Asked at T, answered at T + 0.2, Date T + 90 (whole seconds): the server's time was in
    [T + 90, T + 91) at some point in [T, T + 0.2], so the offset is in [89.8, 91]."""
    estimate = SkewEstimate()
    estimate.observe(T, T + 0.2, T + 90)
    skew = estimate.read()
    assert skew is not None
    assert (skew.offset, skew.error) == (pytest.approx(90.4), pytest.approx(0.6))


def test_more_answers_narrow_the_bound_to_their_intersection() -> None:
    estimate = SkewEstimate()
    estimate.observe(T, T + 0.01, T + 90)  # offset in [89.99, 91.0]
    estimate.observe(T + 10.7, T + 10.71, T + 101)  # the Date ticked at T + 10.7 + offset: in [90.29, 91.3]
    estimate.observe(T + 20.2, T + 20.21, T + 110)  # in [89.79, 90.8]
    skew = estimate.read()
    assert skew is not None
    assert (skew.offset - skew.error, skew.offset + skew.error) == (pytest.approx(90.29), pytest.approx(90.8))
    assert skew.samples == 3


def test_a_stepped_clock_starts_the_estimate_again() -> None:
    estimate = SkewEstimate()
    estimate.observe(T, T + 0.1, T + 90)
    estimate.observe(T + 5, T + 5.1, T + 5)  # the node's clock was set right: offset near 0
    skew = estimate.read()
    assert skew is not None and skew.samples == 1 and abs(skew.offset) < 1


def test_old_samples_leave_after_ten_minutes() -> None:
    estimate = SkewEstimate()
    estimate.observe(T, T + 0.1, T)
    estimate.observe(T + 700, T + 700.1, T + 700)
    assert estimate.read().samples == 1  # type: ignore[union-attr]


def test_at_most_one_sample_a_second_is_taken() -> None:
    estimate = SkewEstimate()
    estimate.observe(T, T + 0.1, T)
    assert not estimate.wants(T + 0.5) and estimate.wants(T + 1.1)


def test_nothing_is_known_before_the_first_answer() -> None:
    assert SkewEstimate().read() is None


def test_the_api_servers_clock_is_the_nodes_set_right_by_the_estimate() -> None:
    node = WallClock(offset=-90.0)  # a node 90 s behind
    estimate = SkewEstimate(node.seconds)
    clock = ApiServerClock(node, estimate)
    assert math.isclose(clock.seconds(), node.seconds(), abs_tol=0.05)  # nothing measured yet: the node's
    now = node.seconds()
    estimate.observe(now, now + 0.001, math.floor(now + 90.0))
    skew = estimate.read()
    assert skew is not None
    assert math.isclose(clock.seconds(), node.seconds() + skew.offset - skew.error, abs_tol=0.05)  # never early
    assert node.seconds() + 89.0 <= clock.seconds() <= node.seconds() + 90.0


def test_a_node_offset_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRONCTL_NODE_CLOCK_OFFSET_SECONDS", "90")
    assert node_clock_from_environment().offset == 90.0
    monkeypatch.setenv("CRONCTL_NODE_CLOCK_OFFSET_SECONDS", "soon")
    with pytest.raises(ValueError, match="CRONCTL_NODE_CLOCK_OFFSET_SECONDS"):
        node_clock_from_environment()
