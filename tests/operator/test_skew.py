"""When the operator says its node's clock is off the API server's, and when it is back."""

from __future__ import annotations

import pytest

from cronctl.clock import Skew, SkewEstimate
from cronctl.operator.skew import BACK, OFF, SkewWatch, verdict


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


def test_a_skew_is_said_once_with_a_warning_event_and_again_when_it_is_back() -> None:
    estimate, posted = SkewEstimate(), []
    watch = SkewWatch(estimate, 2.0, posted.append)
    estimate.observe(1000.0, 1000.1, 1090.0)
    assert watch.look() == OFF and watch.look() is None
    assert [(e.type, e.reason) for e in posted] == [("Warning", "ClockSkew")]
    assert posted[0].message.startswith("this node's clock is 90.4 s (within 0.6 s) behind the API server's")
    estimate.observe(1005.0, 1005.1, 1005.0)  # set right: the estimate starts again
    assert watch.look() == BACK and len(posted) == 1
