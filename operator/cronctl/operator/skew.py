"""Clock skew in the operator: whether the node's clock is off the API server's, said once per episode.

The estimate is ``clock.SkewEstimate`` (the Date headers of the answers the
operator gets anyway, bounded as NTP bounds its samples). ``verdict`` is the
rule, pure: a skew is *off* only when even the nearest end of its error bound
is past the threshold (a one-second Date cannot accuse a clock of 1.5 s), and
*back* once the estimate itself is within it. ``SkewWatch`` carries it out
every ``EVERY_SECONDS``: a log line, and a Warning Event ``ClockSkew`` on the
operator's Lease (where it has one) when the clock goes off; a log line when
it is back. The gauges ``cronctl_clock_skew_seconds`` and
``cronctl_clock_skew_error_seconds`` are read off the estimate at each scrape
(``Metrics.watch_skew``), and the chart's alert fires on them.
"""

from __future__ import annotations

import logging
from typing import Callable

from ..clock import Skew, SkewEstimate
from .manifests import EventSpec
from .messages import warning

log = logging.getLogger("cronctl.operator")

EVERY_SECONDS = 10.0
DEFAULT_THRESHOLD_SECONDS = 2.0
OFF, BACK = "off", "back"


def verdict(skew: Skew | None, threshold: float, was_off: bool) -> str | None:
    """``OFF`` when the clock became surely more than ``threshold`` off, ``BACK`` when it is within
    it again, None when nothing changed (or nothing is measured yet)."""
    if skew is None:
        return None
    surely_off = abs(skew.offset) - skew.error > threshold
    if surely_off and not was_off:
        return OFF
    if was_off and abs(skew.offset) <= threshold:
        return BACK
    return None


def skew_event(skew: Skew, threshold: float) -> EventSpec:
    return warning("ClockSkew", describe(skew, threshold))


def describe(skew: Skew, threshold: float) -> str:
    ahead = "behind" if skew.offset > 0 else "ahead of"
    return (f"this node's clock is {abs(skew.offset):.1f} s (within {skew.error:.1f} s) {ahead} the API server's, "
            f"past the {threshold:g} s threshold: schedules fire that much off unless the node's clock is set "
            "right or the operator runs with --clock=api-server")


class SkewWatch:
    """Looks at the estimate now and then; says when the clock goes off and when it is back."""

    def __init__(self, estimate: SkewEstimate, threshold: float,
                 post: Callable[[EventSpec], None] | None = None) -> None:
        self.estimate, self.threshold, self.post = estimate, threshold, post
        self.off = False

    def look(self) -> str | None:
        skew = self.estimate.read()
        said = verdict(skew, self.threshold, self.off)
        if said == OFF and skew is not None:
            self.off = True
            log.warning("clock skew: %s", describe(skew, self.threshold))
            if self.post is not None:
                self.post(skew_event(skew, self.threshold))
        elif said == BACK and skew is not None:
            self.off = False
            log.info("clock skew: the node's clock is within %g s of the API server's again (%+.1f s)",
                     self.threshold, skew.offset)
        return said
