"""Time zones: where a schedule's local calendar sits relative to UTC.

A cron expression is matched against local wall time; everything stored or
returned is UTC. ``Zone`` is the interface the schedules use. Fixed offsets
(``+05:30``) have no daylight saving, so local time is UTC plus a constant
and the schedule can search in local minutes directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .errors import ZoneError

MAX_OFFSET_MINUTES = 14 * 60
_QUARTERS = ("00", "15", "30", "45")


class Zone(Protocol):
    name: str

    def utc_offset(self, utc_minute: int) -> int:
        """Minutes to add to UTC to get local wall time at that instant."""
        ...


@dataclass(frozen=True)
class FixedOffset:
    """A constant UTC offset in minutes (``+05:30`` is 330)."""

    minutes: int

    @property
    def name(self) -> str:
        sign = "-" if self.minutes < 0 else "+"
        hours, mins = divmod(abs(self.minutes), 60)
        return f"{sign}{hours:02d}:{mins:02d}"

    def utc_offset(self, utc_minute: int) -> int:
        return self.minutes


UTC = FixedOffset(0)


def parse_offset(text: object, field: str = "tz") -> FixedOffset:
    """``+HH:MM`` / ``-HH:MM``: hours 00-14, minutes 00/15/30/45, at most 14:00."""
    if not isinstance(text, str):
        raise ZoneError(field, "must be an offset string like +05:30")
    if len(text) != 6 or text[0] not in "+-" or text[3] != ":":
        raise ZoneError(field, f"{text!r} is not an offset of the form +HH:MM or -HH:MM")
    hours, mins = text[1:3], text[4:6]
    if not (hours.isascii() and hours.isdigit()) or mins not in _QUARTERS:
        raise ZoneError(field, f"{text!r}: minutes must be 00, 15, 30 or 45")
    magnitude = int(hours) * 60 + int(mins)
    if magnitude > MAX_OFFSET_MINUTES:
        raise ZoneError(field, f"{text!r} is beyond the largest offset, 14:00")
    return FixedOffset(-magnitude if text[0] == "-" else magnitude)
