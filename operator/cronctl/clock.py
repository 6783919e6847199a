"""Where the operator's "now" comes from: the wall clock, or a file tests move.

In production the clock is UTC wall time. With ``CRONCTL_CLOCK_FILE`` set,
the time is read from that file (``YYYY-MM-DDTHH:MM``, or
``YYYY-MM-DDTHH:MM:SS`` when a test needs seconds, as jitter does) whenever
it is asked for, so tests can move time without waiting for it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Protocol

from .core.times import parse_time

CLOCK_FILE_ENV = "CRONCTL_CLOCK_FILE"


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

    def seconds(self) -> float:
        return time.time()

    def minute(self) -> int:
        return int(self.seconds() // 60)

    def seconds_until(self, second: float) -> float:
        return max(0.0, second - time.time() + self.SKEW_PAD_SECONDS)


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


def clock_from_environment() -> Clock:
    path = os.environ.get(CLOCK_FILE_ENV)
    return FileClock(Path(path)) if path else WallClock()
