"""``@every <N>m`` / ``@every <N>h``: fixed intervals counted from an anchor.

The schedule times are ``anchor + k * interval`` for k = 1, 2, ... (never the
anchor itself), so next fire, latest missed time and the number of missed
times are all plain arithmetic (``Progression``, which the ``every(N).unit``
rules use too). Intervals never run out and take no zone: they count real
minutes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ExpressionError
from .dst import DaylightSaving
from .zones import AnyZone

MAX_INTERVAL_MINUTES = 525_600  # one year of minutes
_UNITS = {"m": 1, "h": 60}


@dataclass(slots=True)  # not frozen: every Timeline of an interval makes one, and a frozen __init__ is slower
class Progression:
    """The times ``first + k * step`` for k = 0, 1, 2, ...: a schedule's times, never ending."""

    first: int
    step: int

    def next_after(self, t: int) -> int:
        if t < self.first:
            return self.first
        return self.first + ((t - self.first) // self.step + 1) * self.step

    def latest_in(self, low: int, high: int) -> int | None:
        k = (high - self.first) // self.step
        latest = self.first + k * self.step
        return latest if k >= 0 and latest > low else None

    def count_in(self, low: int, high: int, limit: int) -> int:
        first_k = max(0, (low - self.first) // self.step + 1)
        last_k = (high - self.first) // self.step
        return max(0, min(limit, last_k - first_k + 1))

    def next_runs(self, after: int, count: int) -> list[int]:
        start = self.next_after(after)
        return [start + k * self.step for k in range(count)]

    def chain_end(self, first: int) -> None:
        return None

    def includes(self, t: int) -> bool:
        return t >= self.first and (t - self.first) % self.step == 0


@dataclass(frozen=True)
class IntervalExpression:
    text: str
    minutes: int

    def times(self, anchor: int, zone: AnyZone, rule: DaylightSaving = DaylightSaving.VIXIE) -> Progression:
        """The schedule times from ``anchor`` on; neither the zone nor its rule matters."""
        return Progression(anchor + self.minutes, self.minutes)


def parse_interval(text: str) -> IntervalExpression:
    parts = text.split()
    if len(parts) != 2 or parts[0] != "@every":
        raise ExpressionError("expression", "the only @ form is '@every <N>m' or '@every <N>h'")
    amount, unit = parts[1][:-1], parts[1][-1:]
    if unit not in _UNITS:
        raise ExpressionError("interval", f"unit of {parts[1]!r} must be m (minutes) or h (hours)")
    if not amount or not amount.isascii() or not amount.isdigit() or amount[0] == "0":
        raise ExpressionError("interval", f"{amount!r} is not a positive whole number without leading zeros")
    if len(amount) > 7 or int(amount) * _UNITS[unit] > MAX_INTERVAL_MINUTES:
        raise ExpressionError("interval", f"{parts[1]} is longer than {MAX_INTERVAL_MINUTES} minutes")
    return IntervalExpression(text=f"@every {parts[1]}", minutes=int(amount) * _UNITS[unit])
