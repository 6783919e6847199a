"""``cronctl local --echo``: each run's output copied to the runner's stream, line by line.

As supercronic does, every line a job writes is a line of the runner's, with
the run it came from (``nightly-3: ...``; ``nightly-3 (stderr): ...``; in
JSON an ``output`` event with ``run``, ``schedule`` and ``stream``). The run's
logs stay where they are (``cronctl logs``); this only follows them, from the
offset it reached, at every turn, and reads each to its end once the run has
ended. A line with no newline yet waits for its end (up to ``LONGEST_LINE``
bytes); a log cut shorter by its cap is followed from its new end, with a
line saying that some output was not shown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

STREAMS = ("stdout", "stderr")
LONGEST_LINE = 64 * 1024  # a longer line is shown in pieces
READ_BYTES = 1024 * 1024  # at most this much of one log per turn


@dataclass
class _Followed:
    offset: int = 0
    identity: tuple[int, int] | None = None  # (device, inode): a cut log is a new file
    partial: bytes = b""


class Echo:
    def __init__(self, say: Callable[[str, str, str, str], None]) -> None:
        """``say(run, schedule, stream, line)`` shows one line."""
        self._say = say
        self._followed: dict[Path, _Followed] = {}
        self._runs: dict[Path, tuple[str, str]] = {}  # run folder -> (run, schedule)

    def follow(self, run: str, schedule: str, run_dir: Path) -> None:
        """Show what the running run wrote since the last look."""
        self._runs[run_dir] = (run, schedule)
        for stream in STREAMS:
            self._read(run_dir, stream, last=False)

    def finish(self, run: str, schedule: str, run_dir: Path) -> None:
        """The run ended: show the rest of its output (all of it, for one that ended between two
        looks), then forget it."""
        self._runs[run_dir] = (run, schedule)
        for stream in STREAMS:
            self._read(run_dir, stream, last=True)
            self._followed.pop(run_dir / f"{stream}.log", None)
        self._runs.pop(run_dir, None)

    def _read(self, run_dir: Path, stream: str, last: bool) -> None:
        log = run_dir / f"{stream}.log"
        followed = self._followed.setdefault(log, _Followed())
        try:
            with log.open("rb") as file:
                info = os.fstat(file.fileno())
                identity = info.st_dev, info.st_ino
                if followed.identity is not None and (identity != followed.identity or info.st_size < followed.offset):
                    self._line(run_dir, stream, "[cronctl: the log was cut at its cap; some output is not shown]")
                    followed.offset, followed.partial = info.st_size, b""
                followed.identity = identity
                file.seek(followed.offset)
                while data := file.read(READ_BYTES):
                    followed.offset += len(data)
                    self._lines(run_dir, stream, followed, data, last)
                    if not last:
                        break  # the rest at the next turn: one busy log does not hold up the runner
        except FileNotFoundError:
            pass
        if last and followed.partial:
            self._line(run_dir, stream, followed.partial.decode("utf-8", "replace"))
            followed.partial = b""

    def _lines(self, run_dir: Path, stream: str, followed: _Followed, data: bytes, last: bool) -> None:
        lines = (followed.partial + data).split(b"\n")
        followed.partial = lines.pop()
        if len(followed.partial) > LONGEST_LINE:
            lines.append(followed.partial)
            followed.partial = b""
        for line in lines:
            self._line(run_dir, stream, line.decode("utf-8", "replace"))

    def _line(self, run_dir: Path, stream: str, text: str) -> None:
        run, schedule = self._runs.get(run_dir, (run_dir.name, run_dir.parent.name))
        self._say(run, schedule, stream, text)

