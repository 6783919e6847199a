"""When the operator says its node's clock is off the API server's, when it is back, and each time
the node's clock is stepped."""

from __future__ import annotations

import pytest

from cronctl.clock import Skew, SkewEstimate
from cronctl.operator.skew import BACK, OFF, Seen, SkewWatch, step, verdict

T = 1_800_000_000.0


class Node:
    """The node's monotonic clock and its wall clock ``ahead`` of it, moved by hand (the API server's
    clock reads the monotonic one)."""

    def __init__(self) -> None:
        self.now, self.ahead = T, 0.0

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        return self.now + self.ahead


@pytest.mark.parametrize("skew, was_off, said", [
    (None, False, None),
    (Skew(0.3, 0.5, 10), False, None),
    (Skew(90.0, 0.5, 10), False, OFF),
    (Skew(-90.0, 0.5, 10), False, OFF),  # ahead or behind
    (Skew(2.4, 0.5, 10), False, None),  # 2.4 +- 0.5 may be 1.9: not surely past 2 s
    (Skew(2.6, 0.5, 10), False, OFF),
    (Skew(90.0, 0.5, 10), True, None),  # said once
    (Skew(1.9, 0.5, 10), True, BACK),
    (Skew(2.2, 0.5, 10), True, None),  # not surely off, not back either: no flapping
])
def test_verdict(skew: Skew | None, was_off: bool, said: str | None) -> None:
    assert verdict(skew, 2.0, was_off) == said


@pytest.mark.parametrize("before, now, stepped", [
    (None, 90.0, None),  # the first look: nothing to compare
    (5.0, 5.0, None),
    (5.0, 5.004, None),  # slewed by NTP: milliseconds, not a step
    (5.0, 6.0, None),  # a second at most is not a step
    (5.0, 6.5, 1.5),
    (5.0, 95.0, 90.0),  # stepped forward
    (95.0, 5.0, -90.0),  # and back
])
def test_step(before: float | None, now: float, stepped: float | None) -> None:
    assert step(before, now) == (None if stepped is None else pytest.approx(stepped))


def test_a_skew_is_said_once_with_a_warning_event_and_again_when_it_is_back() -> None:
    node, posted = Node(), []
    estimate = SkewEstimate(node.wall, node.monotonic)
    watch = SkewWatch(estimate, 2.0, posted.append)
    estimate.observe(T, T + 0.2, T + 90.0)
    assert watch.look() == Seen(OFF, None) and watch.look() == Seen(None, None)
    assert [(e.type, e.reason) for e in posted] == [("Warning", "ClockSkew")]
    assert posted[0].message.startswith("this node's clock is 90.4 s (within 0.6 s) behind the API server's")
    estimate.observe(T + 5.0, T + 5.1, T + 5.0)  # the API server's clock set right: the estimate starts again
    assert watch.look() == Seen(BACK, None) and len(posted) == 1


def test_each_step_of_the_nodes_clock_is_said_forward_and_back(caplog: pytest.LogCaptureFixture) -> None:
    node, posted = Node(), []
    estimate = SkewEstimate(node.wall, node.monotonic)
    watch = SkewWatch(estimate, 2.0, posted.append)
    estimate.observe(T, T + 0.002, T)  # one Date: the API server's clock within half a second
    assert watch.look() == Seen(None, None)
    node.now, node.ahead = T + 31, 90.0  # stepped forward
    assert watch.look() == (OFF, pytest.approx(90.0))
    node.now = T + 40
    assert watch.look() == Seen(None, None)
    node.now, node.ahead = T + 50, 0.0  # and back
    assert watch.look() == (BACK, pytest.approx(-90.0))
    node.now, node.ahead = T + 60, 90.0  # and forward again: said again
    assert watch.look() == (OFF, pytest.approx(90.0))
    assert [(e.type, e.reason) for e in posted] == [("Warning", "ClockStepped"), ("Warning", "ClockSkew"),
                                                   ("Warning", "ClockStepped"),
                                                   ("Warning", "ClockStepped"), ("Warning", "ClockSkew")]
    assert [e.message for e in posted[:3]] == [
        "this node's clock was stepped 90.0 s forward: it is now 89.5 s (within 0.5 s) ahead of the API server's",
        "this node's clock is 89.5 s (within 0.5 s) ahead of the API server's, past the 2 s threshold: "
        "schedules wait for their time on the API server's clock until it is set right",
        "this node's clock was stepped 90.0 s back: it is now 0.5 s (within 0.5 s) behind the API server's"]
    said = [record.getMessage() for record in caplog.records if record.name == "cronctl.operator"]
    assert [line for line in said if line.startswith("clock step: ")] == [
        f"clock step: {posted[0].message}", f"clock step: {posted[2].message}", f"clock step: {posted[3].message}"]


def test_without_a_lease_a_step_is_said_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    node = Node()
    watch = SkewWatch(SkewEstimate(node.wall, node.monotonic), 2.0)
    watch.look()
    node.ahead = -30.0
    assert watch.look() == (None, pytest.approx(-30.0))  # no answer yet: no skew to say
    assert "clock step: this node's clock was stepped 30.0 s back" in caplog.text

