"""What a job fires next, as every driver shows it: one rule, asked once.

``upcoming`` answers it at ``now``: the job's next schedule time (inside its
window; none when none is left), whether the job has ended (``window.ended_reason``:
its window's end passed, or its run limit was reached) and the time that
fires next: that time, unless the job is held (suspended, paused on failures,
being deleted) or has ended. The operator writes ``fires`` as
``status.nextFireTime``; the runner's ``status`` shows ``time`` with what holds
it ("if resumed by then"); the harness's job status is ``fires``.
"""

from __future__ import annotations

from typing import NamedTuple

from .schedule import Timeline
from .spec import JobSpec
from .state import JobState
from .window import ended_reason


class Upcoming(NamedTuple):
    time: int | None  # the next schedule time after now, within the window (None: none is left)
    ended: str | None  # why the job fires no more (EndTimeReached, MaxRunsReached), if it does not
    fires: int | None  # the time that fires next: ``time``, unless the job is held or ended


def upcoming(spec: JobSpec, state: JobState, timeline: Timeline, now: int, held: bool = False) -> Upcoming:
    """The job's next time after ``now``; ``held``: suspended, paused or being deleted."""
    time = timeline.next_after(now)
    ended = ended_reason(spec.options.window, spec.options.max_runs, state.scheduled_runs, time)
    return Upcoming(time, ended, None if held or ended is not None else time)


__all__ = ["Upcoming", "upcoming"]
