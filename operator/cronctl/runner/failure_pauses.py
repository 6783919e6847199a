"""``spec.pauseOnFailures`` on the runner: a schedule failing N times in a row pauses itself.

The core counts failed runs in a row and says when a streak pauses a job
(``core.failures.pauses``); this rule turns it into what ``cronctl suspend``
would leave: a pause record (``pauses.py``) with the reason, written by the
shell (``WritePause``), so that ``cronctl resume NAME`` ends it as any pause
and the manifest is never touched. The schedule is held from the step the
failure is recorded in, so that step's tick fires nothing for it.

The streak each schedule had at the last step is remembered in memory only:
after a restart the book's streak is the baseline, and a failure whose end is
reported again (its end was not saved before the crash) crosses the line
again and writes the same record again.
"""

from __future__ import annotations

from ..core.failures import pause_message, pauses
from .effects import Out, WritePause
from .memory import RunnerState
from .values import Pause, nominal_iso


def pause_on_failures(memory: RunnerState, now: int, out: Out) -> bool:
    """Pause the schedules whose runs just failed ``pauseOnFailures`` times in a row. Whether any."""
    paused = False
    for name, job in memory.controller.state.jobs.items():
        limit = job.spec.options.pause_on_failures
        if limit is None:
            continue
        streak = job.state.consecutive_failures
        before, memory.streaks[name] = memory.streaks.get(name, streak), streak
        if not pauses(limit, before, streak) or name in memory.pauses:
            continue
        reason, since = pause_message(limit, streak), nominal_iso(now)
        memory.pauses[name] = Pause(reason, since)
        out.add(WritePause(name, reason, since))
        out.say("paused", f"{name}: {reason} with 'cronctl resume {name}'", "warning", schedule=name,
                failures=streak, pause_on_failures=limit)
        paused = True
    return paused
