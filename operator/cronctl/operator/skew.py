"""Clock skew and clock steps in the operator: whether the node's clock is off the API server's, said
once per episode, and each step of the node's clock, said each time.

The estimate is ``clock.SkewEstimate`` (the Date headers of the answers the
operator gets anyway, bounded as NTP bounds its samples, kept against the
monotonic clock). ``verdict`` is the skew rule, pure: a skew is *off* only when
even the nearest end of its error bound is past the threshold (a one-second
Date cannot accuse a clock of 1.5 s), and *back* once the estimate itself is
within it. ``step`` is the step rule, pure: the node's clock minus the
monotonic one moved by more than ``STEP_SECONDS`` between two looks (a slew
moves it by milliseconds). ``SkewWatch`` carries both out every
``EVERY_SECONDS``: for a step, forward or back, a log line and a Warning Event
``ClockStepped`` on the operator's Lease (where it has one); for a skew, a log
line and a Warning Event ``ClockSkew`` when the clock goes off, a log line when
it is back. The gauges ``cronctl_clock_skew_seconds`` and
``cronctl_clock_skew_error_seconds`` are read off the estimate at each scrape
(``Metrics.watch_skew``), and the chart's alert fires on them.
"""

from __future__ import annotations

import logging
from typing import Callable, NamedTuple

from ..clock import Skew, SkewEstimate
from .manifests import EventSpec
from .messages import warning

log = logging.getLogger("cronctl.operator")

EVERY_SECONDS = 1.0  # a look reads two clocks: often enough that a step and its undoing are each said
DEFAULT_THRESHOLD_SECONDS = 2.0
STEP_SECONDS = 1.0
OFF, BACK = "off", "back"


class Seen(NamedTuple):
    """What a look said: the skew's verdict (OFF, BACK or None) and the step of the node's clock
    since the last look, in seconds (None: not stepped)."""

    verdict: str | None
    stepped: float | None


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


def step(before: float | None, now: float) -> float | None:
    """How far the node's clock was stepped between two looks that read its clock minus the monotonic
    one as ``before`` and ``now``: None when it moved by ``STEP_SECONDS`` or less (or on the first look)."""
    if before is None or abs(now - before) <= STEP_SECONDS:
        return None
    return now - before


def skew_event(skew: Skew, threshold: float) -> EventSpec:
    return warning("ClockSkew", describe(skew, threshold))


def step_event(stepped: float, skew: Skew | None) -> EventSpec:
    return warning("ClockStepped", describe_step(stepped, skew))


def describe(skew: Skew, threshold: float) -> str:
    if skew.offset < 0:
        where, then = "ahead of", "schedules wait for their time on the API server's clock until it is set right"
    else:
        where, then = "behind", ("schedules fire that much late unless the node's clock is set right or the "
                                 "operator runs with --clock=api-server")
    return (f"this node's clock is {abs(skew.offset):.1f} s (within {skew.error:.1f} s) {where} the API server's, "
            f"past the {threshold:g} s threshold: {then}")


def describe_step(stepped: float, skew: Skew | None) -> str:
    way = "forward" if stepped > 0 else "back"
    said = f"this node's clock was stepped {abs(stepped):.1f} s {way}"
    if skew is None:
        return said
    where = "ahead of" if skew.offset < 0 else "behind"
    return f"{said}: it is now {abs(skew.offset):.1f} s (within {skew.error:.1f} s) {where} the API server's"


class SkewWatch:
    """Looks at the estimate now and then; says each step of the node's clock, and when the clock goes
    off and when it is back."""

    def __init__(self, estimate: SkewEstimate, threshold: float,
                 post: Callable[[EventSpec], None] | None = None) -> None:
        self.estimate, self.threshold, self.post = estimate, threshold, post
        self.off = False
        self.node_minus_monotonic: float | None = None  # at the last look

    def look(self) -> Seen:
        now = self.estimate.node_minus_monotonic()
        stepped, self.node_minus_monotonic = step(self.node_minus_monotonic, now), now
        skew = self.estimate.read()
        if stepped is not None:
            self._say("step", step_event(stepped, skew))
        said = verdict(skew, self.threshold, self.off)
        if said == OFF and skew is not None:
            self.off = True
            self._say("skew", skew_event(skew, self.threshold))
        elif said == BACK and skew is not None:
            self.off = False
            log.info("clock skew: the node's clock is within %g s of the API server's again (%+.1f s)",
                     self.threshold, skew.offset)
        return Seen(said, stepped)

    def _say(self, what: str, event: EventSpec) -> None:
        log.warning("clock %s: %s", what, event.message)
        if self.post is not None:
            self.post(event)
