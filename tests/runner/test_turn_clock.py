"""A turn of the runner reads the clock once: its minute and its second from one reading."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from cronctl.runner.intake import Intake

MINUTE = 28_487_520  # 2024-03-01T00:00


def straddling() -> Iterator[float]:
    """A clock read at a minute's very end, then (the next read) in the next minute."""
    yield MINUTE * 60 + 59.9999
    yield MINUTE * 60 + 60.0001


def test_a_turn_takes_its_minute_from_the_second_it_read(tmp_path: Path) -> None:
    reads = straddling()
    seconds = lambda: next(reads)  # noqa: E731
    intake = Intake(tmp_path, lambda: int(seconds() // 60), seconds, one_read=True)
    minute, second = intake.now()
    assert (minute, second) == (MINUTE, MINUTE * 60 + 59.9999)


def test_two_reads_could_straddle_the_minute(tmp_path: Path) -> None:
    """Why one read: the minute and the second read apart can disagree."""
    reads = straddling()
    seconds = lambda: next(reads)  # noqa: E731
    minute, second = Intake(tmp_path, lambda: int(seconds() // 60), seconds).now()
    assert minute != int(second // 60)
