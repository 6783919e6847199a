"""What the runner's book keeps beside the core's state, written by the engine and read by the views.

A ``Firing`` is a launch the core decided, kept until its run is over; an
``Overflowed`` is an overflow the runner carried out (more missed schedule
times than ``missedSchedulesLimit``), kept for ``cronctl status`` until the
schedule fires on time again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.tick import MAX_COUNTED_DROPPED, Decision, Enqueue, Launch, Overflow, Skip
from ..core.times import format_time
from ..core.zones import UTC, AnyZone
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


@dataclass
class Overflowed:
    """An overflow and what its tick did instead of launching every missed time."""

    at: int  # the minute the overflow was decided at
    limit: int
    dropped: int = 0  # catchUp All: the older missed times given up
    launched: list[list[Any]] = field(default_factory=list)  # [nominal, reason] of each launch
    queued: list[int] = field(default_factory=list)  # WaitForLast: times left waiting for the active run
    skipped: int | None = None  # Forbid: the time skipped, a run being active

    @classmethod
    def of(cls, at: int, overflow: Overflow, decisions: list[Decision]) -> Overflowed:
        """The overflow of a tick of one schedule, with the tick's other decisions."""
        launched = [[d.scheduled_for, d.reason] for d in decisions if isinstance(d, Launch)]
        queued = [d.scheduled_for for d in decisions if isinstance(d, Enqueue)
                  and [d.scheduled_for, d.reason] not in launched]
        skipped = next((d.scheduled_for for d in decisions if isinstance(d, Skip)), None)
        return cls(at, overflow.limit, overflow.dropped, launched, queued, skipped)

    def describe(self, zone: AnyZone) -> str:
        """E.g. ``overflow at 2024-03-01 03:01 UTC: more than 100 missed; launched ... (scheduled)``."""
        def show(minute: int) -> str:
            return both_times(minute, zone)

        if self.dropped:
            at_least = "at least " if self.dropped >= MAX_COUNTED_DROPPED else ""
            missed = f"{at_least}{self.limit + self.dropped} missed, more than {self.limit}"
        else:
            missed = f"more than {self.limit} missed"
        parts = [f"overflow at {show(self.at)}: {missed}"]
        if self.launched:
            parts.append("launched " + ", ".join(f"{show(nominal)} ({reason})" for nominal, reason in self.launched))
        if self.queued:
            parts.append("queued " + ", ".join(show(nominal) for nominal in self.queued))
        if self.skipped is not None:
            parts.append(f"skipped {show(self.skipped)} (Forbid: a run is active)")
        if not (self.launched or self.queued or self.skipped is not None):
            parts.append("launched nothing")
        if self.dropped:
            parts.append(f"dropped the {self.dropped} older ones")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def both_times(minute: int | None, zone: AnyZone) -> str:
    """A time in UTC and in the schedule's zone."""
    if minute is None:
        return "-"
    utc = format_time(minute).replace("T", " ")
    offset = zone.utc_offset(minute)
    if zone == UTC:
        return utc + " UTC"
    return f"{utc} UTC ({format_time(minute + offset).replace('T', ' ')} {zone.name})"
