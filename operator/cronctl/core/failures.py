"""A job's failures in a row, and when they pause it (``pauseOnFailures``): pure.

Only a run's outcome counts, not its attempts: a failed attempt that a retry
then makes good ends the streak (``JobState.record_finish`` keeps the count,
and the newest success and failure). A timed-out run is a failure. With
``pause_on_failures`` N the job pauses at every Nth failure in a row (the
Nth, and after a resume the 2Nth...), as Temporal's ``pause_on_failure`` does
at the first: the streak a user reads stays the real one, and a resumed job
that fails N more times pauses again.
"""

from __future__ import annotations

PAUSED_ON_FAILURES = "PausedOnFailures"  # the Event's reason, and the pause's


def pauses(limit: int | None, before: int, after: int) -> bool:
    """Whether the streak going from ``before`` to ``after`` failures reached a multiple of ``limit``."""
    return limit is not None and after > before and after // limit > before // limit


def pause_message(limit: int, failures: int) -> str:
    return f"paused after {failures} failed runs in a row (pauseOnFailures: {limit}); resume it to fire again"


__all__ = ["PAUSED_ON_FAILURES", "pause_message", "pauses"]
