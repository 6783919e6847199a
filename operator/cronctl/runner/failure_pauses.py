"""``spec.pauseOnFailures`` on the runner: a schedule failing N times in a row pauses itself.

The core counts failed runs in a row and says when a streak pauses a job
(``core.failures.pauses``); this rule turns it into what ``cronctl suspend``
would leave: a pause record (``pauses.py``) with the reason, written by the
shell (``WritePause``), so that ``cronctl resume NAME`` ends it as any pause
and the manifest is never touched. The schedule is held from the step the
failure is recorded in, so that step's tick fires nothing for it.

The core says which schedule a run's failure paused (``core.reconcile.ends``,
through ``Controller.paused``: its failures in a row crossed the line), as it
says it to the operator: a failure whose end is reported again after a crash
(its end was not saved) crosses the line again and writes the same record
again.
"""

from __future__ import annotations

from ..core.failures import pause_message
from .effects import Out, WritePause
from .memory import RunnerState
from .values import Pause, nominal_iso


def pause_on_failures(memory: RunnerState, now: int, out: Out) -> bool:
    """Pause the schedules the core says a failure paused at this turn's ends. Whether any."""
    paused = False
    for name in dict.fromkeys(memory.controller.paused):
        job = memory.controller.state.jobs.get(name)
        if job is None or job.spec.options.pause_on_failures is None or name in memory.pauses:
            continue
        limit, streak = job.spec.options.pause_on_failures, job.state.consecutive_failures
        reason, since = pause_message(limit, streak), nominal_iso(now)
        memory.pauses[name] = Pause(reason, since)
        out.add(WritePause(name, reason, since))
        out.say("paused", f"{name}: {reason} with 'cronctl resume {name}'", "warning", schedule=name,
                failures=streak, pause_on_failures=limit)
        paused = True
    return paused
