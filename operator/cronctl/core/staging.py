"""Staged launches: which schedule time a driver prepares ahead of its minute, and what
becomes of a prepared one. Pure, like the tick it follows.

The core knows each schedule's next time in advance. A driver that can make a
firing ready before it is due (the operator creates its Job suspended, during
the minute before) asks ``to_stage`` which time to prepare now, and
``next_staging`` when to look again. At each later tick it asks
``staged_fate`` what becomes of each prepared time, given the tick's
decisions and the state they left:

- ``RELEASE`` when the tick launches that very time (on time, late under
  Forbid, or with Replace's victims named by the launch), at the second the
  launch may start (its jitter; a late launch takes none);
- ``KEEP`` while it still belongs to a time the core may launch: the next
  time, not come yet; or a time come and still missed (Forbid found a run
  active), until a newer time supersedes it;
- ``DELETE`` otherwise: staging is off (unless its time launches now), the job is suspended, its spec
  changed what the prepared firing would be (``current`` False), the time is
  no schedule time any more, was dealt with otherwise, or fell out of the
  window of missed times (a starting deadline passed).

A deleted time that came and never got its run, for no choice of the user's
(a newer time superseded it, or its starting deadline passed, while the
driver could not launch it), is ``missed``, with why: the driver reports it
(a missed run is never given up in silence). A time skipped under Forbid was
reported as skipped, and one the user's edit or suspension removed is no
miss.

Only scheduled firings of Allow, Forbid and Replace are staged: WaitForLast
queues its firings, and catch-up and manual firings are decided at the very
tick they launch, so the driver creates them then, as without staging.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from .schedule import Timeline
from .spec import CATCH_UP_ALL, JobSpec, Policy
from .state import JobState
from .tick import Decision, Launch, start_time, window_start

STAGE_LEAD_MINUTES = 1  # a firing is staged during the minute before it (its nominal minute - 1)
STAGED_POLICIES = (Policy.ALLOW, Policy.FORBID, Policy.REPLACE)

KEEP, RELEASE, DELETE = "keep", "release", "delete"


class Fate(NamedTuple):
    """What becomes of one staged time. A release names the launch it carries out and
    the second (since 1970) from which its run may start."""

    action: str  # KEEP, RELEASE or DELETE
    launch: Launch | None = None
    start_at: int | None = None
    missed: str | None = None  # a DELETE of a time whose run never started: SUPERSEDED or DEADLINE


SUPERSEDED, DEADLINE = "superseded", "deadline"


def _given_up(state: JobState, staged: int, why: str) -> Fate:
    """A DELETE of a time come and never run: missed, unless it was skipped (reported as such)."""
    skipped = state.last_skipped is not None and staged <= state.last_skipped
    return Fate(DELETE, missed=None if skipped else why)


def to_stage(spec: JobSpec, state: JobState, timeline: Timeline, now: int, *, suspended: bool = False,
             lead: int = STAGE_LEAD_MINUTES) -> int | None:
    """The schedule time to stage at ``now``: the next one, once it is at most ``lead``
    minutes away; None when there is none to stage (yet)."""
    if suspended or spec.policy not in STAGED_POLICIES:
        return None
    nominal = timeline.next_after(now)
    if nominal is None or nominal - now > lead:
        return None
    if state.last_schedule is not None and nominal <= state.last_schedule:
        return None  # dealt with already (a clock behind the one that launched it)
    return nominal


def next_staging(spec: JobSpec, timeline: Timeline, now: int, *, suspended: bool = False,
                 lead: int = STAGE_LEAD_MINUTES) -> int | None:
    """The first minute after ``now`` at which ``to_stage`` names a time (None: never)."""
    if suspended or spec.policy not in STAGED_POLICIES:
        return None
    nominal = timeline.next_after(now)
    if nominal is None:
        return None
    if nominal - lead > now:
        return nominal - lead
    following = timeline.next_after(nominal)  # ``nominal`` is staged now; the one after it next
    return None if following is None else max(following - lead, now + 1)


def staged_fate(spec: JobSpec, state: JobState, timeline: Timeline, now: int, staged: int,
                decisions: Sequence[Decision], *, suspended: bool = False, current: bool = True,
                enabled: bool = True) -> Fate:
    """What becomes of the firing staged for ``staged`` at the tick at ``now``.

    ``decisions`` are the tick's and ``state`` is the one they left (applied).
    ``current`` says whether the staged firing is still what the job's spec
    would stage (the driver compares its template); ``enabled`` whether the
    driver stages at all now.
    """
    if suspended or not current:
        return Fate(DELETE)
    launch = _launch_of(staged, decisions)
    if launch is not None:
        # Also with staging off (an operator that staged it, then restarted without): one
        # write instead of a delete and a create of the same name.
        return Fate(RELEASE, launch, start_time(spec, launch))
    if not _still_staged(spec, timeline, staged, enabled):
        return Fate(DELETE)
    if state.last_schedule is not None and staged < state.last_schedule:
        return _given_up(state, staged, SUPERSEDED)  # a newer time launched first
    if state.last_schedule is not None and staged == state.last_schedule:
        return Fate(DELETE)  # dealt with otherwise
    if staged > now:
        return Fate(KEEP if staged == timeline.next_after(now) else DELETE)
    return _fate_once_come(spec, state, timeline, now, staged)


def _launch_of(staged: int, decisions: Sequence[Decision]) -> Launch | None:
    """The tick's launch of the staged time itself, if it made one (a manual run is another run)."""
    return next((decision for decision in decisions if isinstance(decision, Launch)
                 and decision.reason != "manual" and decision.scheduled_for == staged), None)


def _still_staged(spec: JobSpec, timeline: Timeline, staged: int, enabled: bool) -> bool:
    """Whether the driver would stage this time still: staging is on, the policy is one that
    stages (changed to WaitForLast, its firings queue and are created when they launch), and it
    is still a schedule time (the expression, the zone or the anchor may have changed)."""
    return enabled and spec.policy in STAGED_POLICIES and timeline.next_after(staged - 1) == staged


def _fate_once_come(spec: JobSpec, state: JobState, timeline: Timeline, now: int, staged: int) -> Fate:
    """The fate of a staged time that has come and was not launched: kept while the core may
    still launch it as a missed time, else deleted (a miss, unless the user held it)."""
    start = window_start(spec, state.last_schedule, now, state.not_before)
    if state.not_before is not None and staged <= state.not_before:
        return Fate(DELETE)  # held (suspended) through its time: the user's choice
    if staged <= start:
        return _given_up(state, staged, DEADLINE)  # out of the window of missed times
    if spec.options.catch_up == CATCH_UP_ALL:
        return Fate(KEEP)  # every missed time launches in order: its turn comes
    if timeline.latest_in(start, now) == staged:
        return Fate(KEEP)
    return _given_up(state, staged, SUPERSEDED)  # only the latest launches
