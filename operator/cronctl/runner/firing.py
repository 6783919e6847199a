"""A firing of the runner: a launch the core decided, as the book keeps it until its run is over."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .executor import RunKey

TRIGGERS_DIR = "triggers"  # manual firings asked for by ``cronctl trigger``: one file each


@dataclass
class Firing:
    """A launch the core decided: waiting for a worker slot, running in one, or
    waiting for its next attempt (``retry_due`` set) after a failed one."""

    run_id: str
    schedule: str
    nominal: int
    reason: str
    command: list[str]
    args: list[str]
    env: dict[str, str]
    slot: str | None = None
    stopping: str | None = None  # why we asked its process to stop (timed_out, stopped)
    start_at: float = 0.0  # seconds since 1970: not before its nominal time plus its jitter
    attempt: int = 1  # the attempt it runs, or runs once it has a slot
    # An attempt failed: the minute the core retries it; no slot meanwhile. Not only a copy of the
    # core's pending retry: once the core drops that (timeout, replace) it still says this attempt ran.
    retry_due: int | None = None
    actual: str | None = None  # when its first attempt started (history's actual time)

    @property
    def key(self) -> RunKey:
        return RunKey(self.schedule, self.nominal, self.attempt)

    @property
    def startable(self) -> bool:
        """Waiting for a slot: not running, and not waiting for the core to retry it."""
        return self.slot is None and self.retry_due is None

    @property
    def attempts_made(self) -> int:
        """The attempts that started: the current one only once it had a slot."""
        return self.attempt - 1 if self.startable else self.attempt

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)
