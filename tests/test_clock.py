"""The operator's clocks: the node's (off by an injected offset in tests, or stepped through a file),
the API server's, the default that is never ahead of the API server's, and the estimate of the skew
between them from answers' Date headers (NTP-like bounds, kept against the monotonic clock)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import pytest

from cronctl.clock import (ApiServerClock, FileClock, NeverAheadClock, SkewEstimate, WallClock,
                           node_clock_from_environment, operator_clock)

T = 1_800_000_000.0  # a monotonic time, in seconds: the API server's clock reads the same
MINUTE = 30_000_000 * 60  # T is on this minute boundary


class Node:
    """A node's clocks, moved by hand: its monotonic clock, and its wall clock ``ahead`` of it (of the
    API server's, which reads the monotonic clock here); a step of the wall clock changes ``ahead``."""

    def __init__(self, ahead: float = 0.0) -> None:
        self.now, self.ahead = T, ahead

    def monotonic(self) -> float:
        return self.now

    def seconds(self) -> float:
        return self.now + self.ahead

    def minute(self) -> int:
        return int(self.seconds() // 60)

    def seconds_until(self, second: float) -> float:
        return max(0.0, second - self.seconds())

    def estimate(self) -> SkewEstimate:
        return SkewEstimate(self.seconds, self.monotonic)


def answered(estimate: SkewEstimate, sent: float, round_trip: float = 0.2) -> None:
    """An answer from the API server, whose clock reads the monotonic one: asked at ``sent``."""
    estimate.observe(sent, sent + round_trip, math.floor(sent + round_trip / 2))


def test_one_answer_bounds_the_offset_by_its_round_trip_and_the_dates_second() -> None:
    """Asked at T, answered at T + 0.2, Date T + 90 (whole seconds): the server's time was in
    [T + 90, T + 91) at some point in [T, T + 0.2], so the offset is in [89.8, 91]."""
    estimate = Node().estimate()
    estimate.observe(T, T + 0.2, T + 90)
    skew = estimate.read()
    assert skew is not None
    assert (skew.offset, skew.error) == (pytest.approx(90.4), pytest.approx(0.6))


def test_more_answers_narrow_the_bound_to_their_intersection() -> None:
    estimate = Node().estimate()
    estimate.observe(T, T + 0.01, T + 90)  # offset in [89.99, 91.0]
    estimate.observe(T + 10.7, T + 10.71, T + 101)  # the Date ticked at T + 10.7 + offset: in [90.29, 91.3]
    estimate.observe(T + 20.2, T + 20.21, T + 110)  # in [89.79, 90.8]
    skew = estimate.read()
    assert skew is not None
    assert (skew.offset - skew.error, skew.offset + skew.error) == (pytest.approx(90.29), pytest.approx(90.8))
    assert skew.samples == 3


def test_a_stepped_api_server_clock_starts_the_estimate_again() -> None:
    estimate = Node().estimate()
    estimate.observe(T, T + 0.1, T + 90)
    estimate.observe(T + 5, T + 5.1, T + 5)  # the API server's clock was set right: offset near 0
    skew = estimate.read()
    assert skew is not None and skew.samples == 1 and abs(skew.offset) < 1


def test_a_step_of_the_nodes_clock_keeps_the_samples_and_shows_at_once() -> None:
    """The samples are timed by the monotonic clock: a step of the node's wall clock leaves them true,
    and the skew read right after the step is the new one, as narrow as before."""
    node = Node()
    estimate = node.estimate()
    answered(estimate, T)
    answered(estimate, T + 10.5)
    before = estimate.read()
    node.now, node.ahead = T + 31, 90.0  # stepped forward, with no answer since
    after = estimate.read()
    assert before is not None and after is not None
    assert after.samples == before.samples == 2 and after.error == pytest.approx(before.error)
    assert after.offset == pytest.approx(before.offset - 90)
    assert after.offset - after.error <= -90 <= after.offset + after.error


def test_old_samples_leave_after_ten_minutes() -> None:
    estimate = Node().estimate()
    estimate.observe(T, T + 0.1, T)
    estimate.observe(T + 700, T + 700.1, T + 700)
    assert estimate.read().samples == 1  # type: ignore[union-attr]


def test_at_most_one_sample_a_second_is_taken() -> None:
    estimate = Node().estimate()
    assert estimate.wants(T)
    estimate.observe(T, T + 0.1, T)
    assert not estimate.wants(T + 0.5) and estimate.wants(T + 1.1)


def test_nothing_is_known_before_the_first_answer() -> None:
    estimate = Node().estimate()
    assert estimate.read() is None and estimate.server() is None


def test_the_api_servers_clock_is_bounded_by_the_estimate() -> None:
    node = Node(ahead=-90.0)
    estimate = node.estimate()
    answered(estimate, T)  # Date T, asked at T, answered at T + 0.2: the server's clock minus monotonic in [-0.2, 1]
    node.now = T + 30
    server = estimate.server()
    assert server is not None
    assert (server[0] - T, server[1] - T) == (pytest.approx(29.8), pytest.approx(31))


# The API server's clock reads the monotonic one (T + 31 s when read); one answer asked at T bounds it
# to [T + 30.8, T + 32]. Each row: the node's clock ahead of it when the answer came and when read.
NEVER_AHEAD = [
    # name, answered, ahead then, ahead now, reads (seconds after T)
    ("nothing measured yet: the node's, as it is", False, 0.0, 90.0, 121.0),
    ("the node surely ahead: the earliest the API server's can show", True, 90.0, 90.0, 30.8),
    ("stepped forward 90 s after the answer: the same, no jump", True, 0.0, 90.0, 30.8),
    ("stepped back to the truth: the node's", True, 90.0, 0.0, 31.0),
    ("ahead within the estimate's error: the node's", True, 0.0, 0.9, 31.9),
    ("behind: the node's, late (a skew says so)", True, 0.0, -90.0, -59.0),
]


@pytest.mark.parametrize("answer, ahead_then, ahead_now, reads", [row[1:] for row in NEVER_AHEAD],
                         ids=[row[0] for row in NEVER_AHEAD])
def test_the_default_clock_is_never_ahead_of_the_api_servers(
        answer: bool, ahead_then: float, ahead_now: float, reads: float) -> None:
    node = Node(ahead_then)
    estimate = node.estimate()
    if answer:
        answered(estimate, T)
    node.now, node.ahead = T + 31, ahead_now
    assert NeverAheadClock(node, estimate).seconds() - T == pytest.approx(reads)  # T is too large for approx


@pytest.mark.parametrize("answer, ahead, reads", [
    (False, 90.0, 121.0),  # nothing measured yet: the node's
    (True, 90.0, 30.8),  # the earliest the API server's clock can show
    (True, -90.0, 30.8),  # ahead or behind
    (True, 0.5, 30.8),  # at most twice the error late, never early
])
def test_the_api_server_clock_reads_the_earliest_the_api_servers_can_show(
        answer: bool, ahead: float, reads: float) -> None:
    node = Node(ahead)
    estimate = node.estimate()
    if answer:
        answered(estimate, T)
    node.now = T + 31
    assert ApiServerClock(node, estimate).seconds() - T == pytest.approx(reads)


def test_a_forward_step_past_a_minute_boundary_passes_over_no_minute() -> None:
    """Stepped +90 s at 31 s past a minute (the node then reads 1 s past the minute after next): the
    default clock still reads the API server's minute and waits 29 s for the next one."""
    node = Node()
    estimate = node.estimate()
    clock = NeverAheadClock(node, estimate)
    for second in range(0, 31, 3):
        node.now = MINUTE + second
        answered(estimate, node.now, round_trip=0.002)
    node.now, node.ahead = MINUTE + 31, 90.0
    assert node.minute() == MINUTE // 60 + 2
    assert clock.minute() == MINUTE // 60
    wait = clock.seconds_until(MINUTE + 60)
    assert wait == pytest.approx(29, abs=0.01)
    node.now += wait  # the loop slept that long on its (monotonic) timer
    assert clock.minute() == MINUTE // 60 + 1 and clock.seconds() >= MINUTE + 60


def test_the_node_clock_is_stepped_through_its_offset_file(tmp_path: Path) -> None:
    path = tmp_path / "offset"
    clock = WallClock(offset=1.0, offset_file=path)
    assert math.isclose(clock.seconds(), WallClock().seconds() + 1, abs_tol=0.05)  # no file yet: no step
    path.write_text("90\n")
    assert math.isclose(clock.seconds(), WallClock().seconds() + 91, abs_tol=0.05)
    path.write_text("-5")
    assert math.isclose(clock.seconds(), WallClock().seconds() - 4, abs_tol=0.05)


def test_a_node_offset_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CRONCTL_NODE_CLOCK_OFFSET_SECONDS", "90")
    monkeypatch.setenv("CRONCTL_NODE_CLOCK_OFFSET_FILE", str(tmp_path / "offset"))
    clock = node_clock_from_environment()
    assert (clock.offset, clock.offset_file) == (90.0, tmp_path / "offset")
    monkeypatch.setenv("CRONCTL_NODE_CLOCK_OFFSET_SECONDS", "soon")
    with pytest.raises(ValueError, match="CRONCTL_NODE_CLOCK_OFFSET_SECONDS"):
        node_clock_from_environment()


@pytest.mark.parametrize("choice, clock_file, kind", [
    ("node", "", NeverAheadClock),
    ("node", "clock", FileClock),  # the tests' clock stays their truth
    ("api-server", "", ApiServerClock),
    ("api-server", "clock", ApiServerClock),
])
def test_the_operators_clock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, choice: str, clock_file: str,
                             kind: Callable[..., object]) -> None:
    monkeypatch.setenv("CRONCTL_CLOCK_FILE", str(tmp_path / clock_file) if clock_file else "")
    node = Node()
    assert type(operator_clock(choice, node, node.estimate())) is kind
