"""``@every <N>m`` / ``@every <N>h``: fixed intervals counted from an anchor.

The schedule times are ``anchor + k * interval`` for k = 1, 2, ... (never the
anchor itself), so next fire, latest missed time and the number of missed
times are all plain arithmetic. Intervals never run out.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ExpressionError

MAX_INTERVAL_MINUTES = 525_600  # one year of minutes
_UNITS = {"m": 1, "h": 60}


@dataclass(frozen=True)
class IntervalExpression:
    text: str
    minutes: int

    def first_index_after(self, anchor: int, t: int) -> int:
        """The smallest k >= 1 with anchor + k * minutes > t."""
        return max(1, (t - anchor) // self.minutes + 1)


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
