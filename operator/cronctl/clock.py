"""Where the operator's "now" comes from: the wall clock, the API server's, or a file tests move.

In production the clock is the node's UTC wall time. With ``CRONCTL_CLOCK_FILE`` set,
the time is read from that file (``YYYY-MM-DDTHH:MM``, or
``YYYY-MM-DDTHH:MM:SS`` when a test needs seconds, as jitter does) whenever
it is asked for, so tests can move time without waiting for it;
``CRONCTL_NODE_CLOCK_OFFSET_SECONDS`` makes a node whose clock is off by that
much (tests of clock skew).

``SkewEstimate`` is how far the API server's clock is from the node's, read
off the ``Date`` header of the answers the operator gets anyway. A Date has a
resolution of one second, and the server wrote it somewhere between the
request's send and its answer's arrival, so each answer bounds the offset
(server minus node) to ``[date - received, date + 1 - sent]``, as NTP bounds
it with the round trip. The estimate is the intersection of the bounds of
the last ten minutes' samples (one a second at most): its middle, and half
its width as the error. A sample that does not meet it (a clock was
stepped) starts the estimate again from that sample. ``ApiServerClock``
fires by the API server's time: the node's plus the estimate, at its earliest.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Callable, NamedTuple, Protocol

from .core.times import parse_time

CLOCK_FILE_ENV = "CRONCTL_CLOCK_FILE"
NODE_OFFSET_ENV = "CRONCTL_NODE_CLOCK_OFFSET_SECONDS"


class Clock(Protocol):
    def seconds(self) -> float:
        """Now, in seconds since 1970 UTC."""
        ...

    def minute(self) -> int:
        """The current minute, in minutes since 1970 UTC."""
        ...

    def seconds_until(self, second: float) -> float:
        """How long to sleep before that second has come (0 when it has)."""
        ...


class WallClock:
    # Wake a hair after the moment, never before it: the loop's timer runs on the monotonic clock,
    # and a wake-up a little early only costs one more short sleep (the loop's floor is 1 ms).
    SKEW_PAD_SECONDS = 0.002

    def __init__(self, offset: float = 0.0) -> None:
        self.offset = offset  # a node whose clock is off by this much (NODE_OFFSET_ENV)

    def seconds(self) -> float:
        return time.time() + self.offset

    def minute(self) -> int:
        return int(self.seconds() // 60)

    def seconds_until(self, second: float) -> float:
        return max(0.0, second - self.seconds() + self.SKEW_PAD_SECONDS)


class Skew(NamedTuple):
    offset: float  # the API server's clock minus the node's, seconds
    error: float  # the offset is within this of the truth
    samples: int


class SkewEstimate:
    """The API server's clock against the node's, from answers' Date headers (thread-safe)."""

    SAMPLE_EVERY = 1.0  # seconds between two samples taken
    KEEP_SECONDS = 600.0

    def __init__(self, node: Callable[[], float] = time.time) -> None:
        self.node = node  # the node's clock, in seconds since 1970
        self._lock = threading.Lock()
        self._bounds: deque[tuple[float, float, float]] = deque()  # (received, low, high)
        self._next = 0.0  # no sample before this node time

    def wants(self, received: float) -> bool:
        """Whether an answer received at ``received`` should be a sample (at most one a second)."""
        return received >= self._next

    def observe(self, sent: float, received: float, date: float) -> None:
        """An answer whose Date says ``date`` (whole seconds), asked at ``sent``, read at ``received``."""
        low, high = date - received, date + 1.0 - sent
        with self._lock:
            self._next = received + self.SAMPLE_EVERY
            while self._bounds and received - self._bounds[0][0] > self.KEEP_SECONDS:
                self._bounds.popleft()
            self._bounds.append((received, low, high))
            if max(b[1] for b in self._bounds) > min(b[2] for b in self._bounds):
                self._bounds = deque([(received, low, high)])  # a clock was stepped: start again

    def read(self) -> Skew | None:
        with self._lock:
            if not self._bounds:
                return None
            low, high = max(b[1] for b in self._bounds), min(b[2] for b in self._bounds)
            return Skew((low + high) / 2, (high - low) / 2, len(self._bounds))


class ApiServerClock(WallClock):
    """The node's clock set right by the estimate (``--clock=api-server``); the node's until one exists.

    It reads the earliest time the API server's clock can show (the estimate less its error), so that
    a firing is never early by the server's clock, at most twice the error (about a second) late."""

    def __init__(self, node: WallClock, skew: SkewEstimate) -> None:
        super().__init__(node.offset)
        self.skew = skew

    def seconds(self) -> float:
        estimate = self.skew.read()
        return super().seconds() + (0.0 if estimate is None else estimate.offset - estimate.error)


class FileClock:
    POLL_SECONDS = 0.2

    def __init__(self, path: Path) -> None:
        self.path = path

    def seconds(self) -> float:
        text = self.path.read_text(encoding="utf-8").strip()
        return parse_clock(text, str(self.path))

    def minute(self) -> int:
        return int(self.seconds() // 60)

    def seconds_until(self, second: float) -> float:
        return 0.0 if self.seconds() >= second else self.POLL_SECONDS


def parse_clock(text: str, source: str = "clock") -> float:
    """``YYYY-MM-DDTHH:MM`` or ``YYYY-MM-DDTHH:MM:SS`` as seconds since 1970 UTC."""
    minute = parse_time(text[:16])
    extra = text[16:]
    if minute is None or (extra and not (len(extra) == 3 and extra[0] == ":" and extra[1:].isdigit()
                                        and int(extra[1:]) < 60)):
        raise ValueError(f"{source}: {text!r} is not a time YYYY-MM-DDTHH:MM[:SS]")
    return minute * 60 + (int(extra[1:]) if extra else 0)


def node_clock_from_environment() -> WallClock:
    """The node's wall clock, off by ``NODE_OFFSET_ENV`` seconds where a test sets it."""
    text = os.environ.get(NODE_OFFSET_ENV, "").strip()
    try:
        return WallClock(float(text) if text else 0.0)
    except ValueError:
        raise ValueError(f"{NODE_OFFSET_ENV}: {text!r} is not a number of seconds") from None


def clock_from_environment() -> Clock:
    path = os.environ.get(CLOCK_FILE_ENV)
    return FileClock(Path(path)) if path else node_clock_from_environment()
