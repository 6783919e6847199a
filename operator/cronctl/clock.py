"""Where the operator's "now" comes from: the node's wall clock, the API server's, or a file tests move.

In production the clock is the node's UTC wall time, never ahead of the API
server's (below). With ``CRONCTL_CLOCK_FILE`` set, the time is read from that
file (``YYYY-MM-DDTHH:MM``, or ``YYYY-MM-DDTHH:MM:SS`` when a test needs
seconds, as jitter does) whenever it is asked for, so tests can move time
without waiting for it. Two test hooks make a node whose clock is off (tests of
clock skew): ``CRONCTL_NODE_CLOCK_OFFSET_SECONDS``, a fixed offset, and
``CRONCTL_NODE_CLOCK_OFFSET_FILE``, a file whose number of seconds is read at
each reading and added, so a test can step the node's clock while the
operator runs.

``SkewEstimate`` is how far the API server's clock is from this process's
monotonic clock, read off the ``Date`` header of the answers the operator gets
anyway. A Date has a resolution of one second, and the server wrote it
somewhere between the request's send and its answer's arrival, so each answer
bounds the offset (server minus monotonic) to ``[date - received, date + 1 -
sent]``, as NTP bounds it with the round trip. The estimate is the
intersection of the bounds of the last ten minutes' samples (one a second at
most): its middle, and half its width as the error. A sample that does not
meet it (the API server's clock was stepped) starts the estimate again from
that sample. The samples are kept against the monotonic clock so that a step
of the node's wall clock leaves them true: the node's skew is read at the
moment it is asked for (the node's clock minus the monotonic one, against the
estimate), and a step shows in it at once.

The clocks the operator fires by: ``ApiServerClock`` (``--clock=api-server``)
reads the earliest the API server's clock can show; ``NeverAheadClock`` (the
default) reads the node's clock, but that same earliest while the estimate
says the node is surely ahead of the API server, so no firing is early by the
cluster's clock and a forward step of the node's clock skips no minute.
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
NODE_OFFSET_FILE_ENV = "CRONCTL_NODE_CLOCK_OFFSET_FILE"


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


class PacedClock:
    """A clock that runs at the pace of the loop's timer (the monotonic clock): its minute and how
    long to sleep follow from its seconds."""

    # Wake a hair after the moment, never before it: the loop's timer runs on the monotonic clock,
    # and a wake-up a little early only costs one more short sleep (the loop's floor is 1 ms).
    SKEW_PAD_SECONDS = 0.002

    def seconds(self) -> float:
        raise NotImplementedError

    def minute(self) -> int:
        return int(self.seconds() // 60)

    def seconds_until(self, second: float) -> float:
        return max(0.0, second - self.seconds() + self.SKEW_PAD_SECONDS)


class WallClock(PacedClock):
    """The node's wall clock, off by ``offset`` seconds (NODE_OFFSET_ENV) and by the number of seconds
    in ``offset_file`` at each reading (NODE_OFFSET_FILE_ENV): test hooks, for a node whose clock is
    off, or stepped while the operator runs."""

    def __init__(self, offset: float = 0.0, offset_file: Path | None = None) -> None:
        self.offset, self.offset_file = offset, offset_file

    def seconds(self) -> float:
        return time.time() + self.offset + (0.0 if self.offset_file is None else self._stepped())

    def _stepped(self) -> float:
        assert self.offset_file is not None
        try:
            text = self.offset_file.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return 0.0
        return float(text) if text else 0.0


class Skew(NamedTuple):
    offset: float  # the API server's clock minus the node's, seconds
    error: float  # the offset is within this of the truth
    samples: int


class SkewEstimate:
    """The API server's clock against the monotonic clock, from answers' Date headers, read against
    the node's clock when asked (thread-safe). ``sent`` and ``received`` are ``stamp()`` readings."""

    SAMPLE_EVERY = 1.0  # seconds between two samples taken
    KEEP_SECONDS = 600.0

    def __init__(self, node: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.node = node  # the node's clock, in seconds since 1970
        self.stamp = monotonic  # what the samples are timed by: no step ever moves it
        self._lock = threading.Lock()
        self._bounds: deque[tuple[float, float, float]] = deque()  # (received, low, high)
        self._span: tuple[float, float] | None = None  # their intersection: the API server's minus monotonic
        self._next = float("-inf")  # no sample before this stamp

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
            span = max(b[1] for b in self._bounds), min(b[2] for b in self._bounds)
            if span[0] > span[1]:  # the API server's clock was stepped: start again
                self._bounds, span = deque([(received, low, high)]), (low, high)
            self._span = span

    def server(self) -> tuple[float, float] | None:
        """The API server's clock now: the earliest and the latest it can show (None: no answer yet)."""
        span = self._span
        if span is None:
            return None
        now = self.stamp()
        return now + span[0], now + span[1]

    def node_minus_monotonic(self) -> float:
        """The node's clock minus the monotonic clock: it moves only when the node's clock is stepped
        (and by a few milliseconds a minute when it is slewed)."""
        return self.node() - self.stamp()

    def read(self) -> Skew | None:
        with self._lock:
            span, samples = self._span, len(self._bounds)
        if span is None:
            return None
        return Skew((span[0] + span[1]) / 2 - self.node_minus_monotonic(), (span[1] - span[0]) / 2, samples)


class ApiServerClock(PacedClock):
    """The API server's clock (``--clock=api-server``); the node's until an answer came.

    It reads the earliest time the API server's clock can show (the estimate less its error), so that
    a firing is never early by the server's clock, at most twice the error (about a second) late."""

    def __init__(self, node: Clock, skew: SkewEstimate) -> None:
        self.node, self.skew = node, skew

    def seconds(self) -> float:
        server = self.skew.server()
        return self.node.seconds() if server is None else server[0]


class NeverAheadClock(PacedClock):
    """The node's clock (the default), but the earliest the API server's clock can show while the
    estimate says the node is surely ahead of it (past the latest the API server's can show).

    So a node ahead of the cluster fires nothing early by the cluster's clock, and a forward step
    of the node's clock does not move this one (no minute is stepped over). A node within the
    estimate's error, or behind, is read as it is: a late node's firings are late (``ClockSkew``
    says so), as they were."""

    def __init__(self, node: Clock, skew: SkewEstimate) -> None:
        self.node, self.skew = node, skew

    def seconds(self) -> float:
        node, server = self.node.seconds(), self.skew.server()
        return server[0] if server is not None and node > server[1] else node


class ClockFileError(ValueError):
    """``CLOCK_FILE_ENV``'s file cannot be read as a time: the message names the variable, the file and why."""


class FileClock:
    POLL_SECONDS = 0.2

    def __init__(self, path: Path) -> None:
        self.path = path

    def seconds(self) -> float:
        source = f"{CLOCK_FILE_ENV}={self.path}"
        try:
            text = self.path.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise ClockFileError(f"{source}: {error.strerror or error}") from None
        except UnicodeDecodeError:
            raise ClockFileError(f"{source}: not UTF-8 text, not a time YYYY-MM-DDTHH:MM[:SS]") from None
        try:
            return parse_clock(text, source)
        except ValueError as error:
            raise ClockFileError(str(error)) from None

    def minute(self) -> int:
        return int(self.seconds() // 60)

    def seconds_until(self, second: float) -> float:
        return 0.0 if self.seconds() >= second else self.POLL_SECONDS


class HeldFileClock(FileClock):
    """The runner's file clock: once it has read a time, a file that cannot be read (rewritten, garbled,
    gone) holds the time at that reading, so the runner waits and fires nothing, and ``say`` is told
    once per such streak, not raised. The first reading raises (the runner refuses to start)."""

    def __init__(self, path: Path, say: Callable[[str], None]) -> None:
        super().__init__(path)
        self.say = say
        self.last: float | None = None
        self.failing = False

    def seconds(self) -> float:
        try:
            now = super().seconds()
        except ClockFileError as error:
            if self.last is None:
                raise
            if not self.failing:
                self.say(f"{error}; the runner waits, its time held at {self.last:.0f} s since 1970, "
                         "until the file reads again")
            self.failing = True
            return self.last
        if self.failing:
            self.say(f"{CLOCK_FILE_ENV}={self.path}: reads again")
        self.failing, self.last = False, now
        return now


def parse_clock(text: str, source: str = "clock") -> float:
    """``YYYY-MM-DDTHH:MM`` or ``YYYY-MM-DDTHH:MM:SS`` as seconds since 1970 UTC."""
    minute = parse_time(text[:16])
    extra = text[16:]
    if minute is None or (extra and not (len(extra) == 3 and extra[0] == ":" and extra[1:].isdigit()
                                        and int(extra[1:]) < 60)):
        raise ValueError(f"{source}: {text!r} is not a time YYYY-MM-DDTHH:MM[:SS]")
    return minute * 60 + (int(extra[1:]) if extra else 0)


def node_clock_from_environment() -> WallClock:
    """The node's wall clock, off by ``NODE_OFFSET_ENV`` seconds and ``NODE_OFFSET_FILE_ENV``'s where a
    test sets them."""
    text = os.environ.get(NODE_OFFSET_ENV, "").strip()
    path = os.environ.get(NODE_OFFSET_FILE_ENV, "").strip()
    try:
        offset = float(text) if text else 0.0
    except ValueError:
        raise ValueError(f"{NODE_OFFSET_ENV}: {text!r} is not a number of seconds") from None
    return WallClock(offset, Path(path) if path else None)


def clock_from_environment() -> Clock:
    path = os.environ.get(CLOCK_FILE_ENV)
    return FileClock(Path(path)) if path else node_clock_from_environment()


def runner_clock_from_environment(say: Callable[[str], None]) -> Clock:
    """``clock_from_environment``'s, but a clock file that goes bad while the runner runs holds the time
    (``HeldFileClock``); a file that cannot be read at all raises ``ClockFileError``."""
    path = os.environ.get(CLOCK_FILE_ENV)
    if not path:
        return node_clock_from_environment()
    clock = HeldFileClock(Path(path), say)
    clock.seconds()
    return clock


def operator_clock(choice: str, node: Clock, skew: SkewEstimate) -> Clock:
    """The clock the operator fires by: ``--clock=api-server``'s; else the tests' file clock where
    CLOCK_FILE_ENV is set; else the node's, never ahead of the API server's."""
    if choice == "api-server":
        return ApiServerClock(node, skew)
    path = os.environ.get(CLOCK_FILE_ENV)
    return FileClock(Path(path)) if path else NeverAheadClock(node, skew)
