"""What a runner step asks its shell to do, and the collector the step's rules write to.

The step decides; these records say what to carry out: a line to say, a
process to start or stop, a request file to move aside, a pause record to
delete. What follows a saved book (acknowledging ends, deleting consumed
files, pruning run folders) is in the state the step leaves
(``RunnerState.to_acknowledge``, ``taken``), carried out by the shell once the
book that records it is on disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from .memory import RunnerState
from .values import RunKey, RunRequest


@dataclass(frozen=True)
class Say:
    """One line: the message, or in JSON the same facts as fields."""

    event: str
    message: str
    level: str = "info"
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Start:
    """Start the process of a firing that took ``slot``; ``said`` once it started."""

    run_id: str
    home: str | None  # the executor folder (None: scheduled runs')
    request: RunRequest
    said: Say


@dataclass(frozen=True)
class Stop:
    """Stop a firing's process (SIGTERM now, SIGKILL after ``grace_seconds``); ``said`` once asked."""

    run_id: str
    schedule: str
    home: str | None
    key: RunKey
    reason: str
    grace_seconds: float
    said: Say


@dataclass(frozen=True)
class SetAside:
    """A trigger or backfill file that asks for nothing: renamed ``<name><suffix>``, said once."""

    path: Path
    why: str
    suffix: str = ".broken"


@dataclass(frozen=True)
class RemovePause:
    """Delete a retired schedule's pause record (as deleting a CronSchedule takes its suspend along)."""

    schedule: str
    path: Path


@dataclass(frozen=True)
class WritePause:
    """Write a pause record for a schedule its failures paused (``failure_pauses.py``)."""

    schedule: str
    reason: str
    since: str  # RFC 3339 UTC


Effect = Union[Say, Start, Stop, SetAside, RemovePause, WritePause]


class Out:
    """The effects a step collects, in order."""

    def __init__(self, memory: RunnerState) -> None:
        self.effects: list[Effect] = []
        self._noticed = memory.noticed

    def add(self, effect: Effect) -> None:
        self.effects.append(effect)

    def say(self, event: str, message: str, level: str = "info", **facts: Any) -> None:
        self.effects.append(line(event, message, level, **facts))

    def notice(self, text: str, level: str = "info") -> None:
        """Said once in the runner's life."""
        if text not in self._noticed:
            self._noticed.add(text)
            self.say("notice", text, level)


def line(event: str, message: str, level: str = "info", **facts: Any) -> Say:
    return Say(event, message, level, {key: value for key, value in facts.items() if value is not None})
