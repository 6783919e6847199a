"""Schedule times a launch passed over: due since the job's last launch, skip or resume, never
started, and older than the time the tick launched. Pure.

Under ``catchUp: Latest`` (CronJob's rule) a job that could not launch for a
while (its driver down, the API server unreachable across a minute) launches
only the latest missed time; the older ones are never started. That is the
rule, not a fault, but it must not pass in silence: the driver reports them
once, at the launch that passed over them (its status write records the
launch, so a later reconcile does not count them again). Times a starting
deadline dropped count too: they were due and never ran.

Not counted: times already reported as skipped (Forbid), times before a
resume (the user's suspension), an overflow's (it reports itself), and
``catchUp: All`` and WaitForLast (every missed time launches or queues).
A driver that stages firings reports each staged firing it gives up itself
(``staging.staged_fate``), so it does not ask.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .schedule import Timeline
from .spec import CATCH_UP_ALL, JobSpec, Policy
from .state import JobState
from .tick import Decision, Launch, Overflow

MAX_COUNTED = 10_000  # an outage longer than this many schedule times says "at least"


@dataclass(frozen=True)
class PassedOver:
    """``count`` schedule times, ``earliest`` to ``latest``, never started (``count`` is at
    most ``MAX_COUNTED``: an outage that passed over more says "at least")."""

    count: int
    earliest: int
    latest: int


def passed_over(spec: JobSpec, state: JobState, timeline: Timeline, decisions: Sequence[Decision]) -> PassedOver | None:
    """The times the tick's scheduled launch passed over; ``state`` is the job's before the tick."""
    if spec.options.catch_up == CATCH_UP_ALL or spec.policy is Policy.WAIT_FOR_LAST:
        return None
    if any(isinstance(decision, Overflow) for decision in decisions):
        return None
    launched = [d.scheduled_for for d in decisions if isinstance(d, Launch) and d.reason != "manual"]
    if not launched:
        return None
    since = max(t for t in (spec.created_at, state.last_schedule, state.last_skipped, state.not_before)
                if t is not None)
    before = min(launched) - 1
    count = timeline.count_in(since, before, MAX_COUNTED)
    earliest, latest = timeline.next_after(since), timeline.latest_in(since, before)
    if count == 0 or earliest is None or latest is None:
        return None
    return PassedOver(count, earliest, latest)
