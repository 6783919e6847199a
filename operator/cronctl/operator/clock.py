"""Where the operator's "now" comes from: the wall clock, or a file tests move.

In production the clock is UTC wall time floored to the minute. With
``CRONCTL_CLOCK_FILE`` set, the minute is read from that file
(``YYYY-MM-DDTHH:MM``) whenever it is asked for, so tests can move time
without waiting for it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Protocol

from ..core.times import parse_time

CLOCK_FILE_ENV = "CRONCTL_CLOCK_FILE"


class Clock(Protocol):
    def minute(self) -> int:
        """The current minute, in minutes since 1970 UTC."""
        ...

    def seconds_until(self, minute: int) -> float:
        """How long to sleep before that minute has come (0 when it has)."""
        ...


class WallClock:
    SKEW_PAD_SECONDS = 0.5  # wake a little after the minute turns, never before

    def minute(self) -> int:
        return int(time.time() // 60)

    def seconds_until(self, minute: int) -> float:
        return max(0.0, minute * 60 - time.time() + self.SKEW_PAD_SECONDS)


class FileClock:
    POLL_SECONDS = 0.2

    def __init__(self, path: Path) -> None:
        self.path = path

    def minute(self) -> int:
        text = self.path.read_text(encoding="utf-8").strip()
        minute = parse_time(text)
        if minute is None:
            raise ValueError(f"{self.path}: {text!r} is not a time YYYY-MM-DDTHH:MM")
        return minute

    def seconds_until(self, minute: int) -> float:
        return 0.0 if self.minute() >= minute else self.POLL_SECONDS


def clock_from_environment() -> Clock:
    path = os.environ.get(CLOCK_FILE_ENV)
    return FileClock(Path(path)) if path else WallClock()
