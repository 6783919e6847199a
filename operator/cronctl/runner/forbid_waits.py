"""A Forbid time due while a run is active: it waits for that run, and is skipped only if it cannot start.

The core's ``Skip`` under Forbid leaves the time missed (seed 000: the last
schedule time stays where it was, so the time is still missed at the next
tick), so the time starts when the active runs end, as a CronJob's does. It is
given up only if, by then, a newer time is due (the newest missed time is the
one that starts), or the time can no longer start (its
``startingDeadlineSeconds`` passed, the schedule is held, ended or gone). The
runner says the time waits, writes no history row and counts no skip for it
until then; a time given up is one ``skipped`` row and one line.

This module owns the book's ``waits``: per schedule, the time waiting
(``nominal``, None when none), the run it waits for (``behind``) and how many
waiting times started after all (``ran``); the core counts every time it held
back (``JobState.skipped``), so a schedule's skipped count is that less the
ones that ran and the one still waiting (``firing.skipped_count``).
"""

from __future__ import annotations

from ..core.tick import Enqueue, Launch, Skip, window_start
from ..core.transitions import BACKFILL, MANUAL
from .effects import Out
from .journal import SCHEDULED, remember, time_of, unrun
from .memory import RunnerState
from .values import nominal_iso


def wait(memory: RunnerState, skip: Skip, now: int, out: Out) -> None:
    """The core held the time back, a run being active: it waits for that run (a time that waited
    before it is given up: the newest due time waits in its place)."""
    job = memory.controller.state.jobs[skip.job]
    behind = job.state.active[0] if job.state.active else None
    record = memory.waits.setdefault(skip.job, {"nominal": None, "behind": None, "ran": 0})
    earlier = record["nominal"]
    record.update(nominal=skip.scheduled_for, behind=behind)
    shown = time_of(memory, skip.job, skip.scheduled_for)
    if earlier is not None and earlier != skip.scheduled_for:
        give_up(memory, skip.job, earlier, now, out, f"{shown} is due while {behind} is active, and waits for it "
                                                     "in its place")
        return
    out.say("waiting", f"{skip.job}: {shown} waits for the active run {behind} (Forbid: it starts when that run "
                       "ends, unless a newer time is due by then)",
            schedule=skip.job, nominal=nominal_iso(skip.scheduled_for), run=behind)


def started(memory: RunnerState, decision: Launch | Enqueue, now: int, out: Out) -> None:
    """A time of the schedule starts (or is queued): the waiting one if it is that time, else it
    is given up for the newer one."""
    record = memory.waits.get(decision.job)
    if record is None or record["nominal"] is None or decision.reason in (MANUAL, BACKFILL):
        return
    nominal, record["nominal"] = record["nominal"], None
    if decision.scheduled_for == nominal:
        record["ran"] += 1
        return
    give_up(memory, decision.job, nominal, now, out, f"when {record['behind']} ended, "
                                                      f"{time_of(memory, decision.job, decision.scheduled_for)} "
                                                      "was due and starts in its place")


def settle(memory: RunnerState, now: int, out: Out) -> None:
    """After the turn: a time still waiting though its schedule has no active run (or is gone) did
    not start when it could, and never will: it is given up."""
    for schedule, record in memory.waits.items():
        nominal = record["nominal"]
        job = memory.controller.state.jobs.get(schedule)
        if nominal is None or (job is not None and job.state.active):
            continue
        record["nominal"] = None
        if job is None:
            why = "its manifest is gone"
        elif schedule in memory.holding:
            why = f"{record['behind']} ended while the schedule is held"
        elif nominal <= window_start(job.spec, None, now):  # the core's missed-time window has left it behind
            why = f"{record['behind']} ended past the time's startingDeadlineSeconds"
        else:
            why = f"{record['behind']} ended when the time could no longer start"
        give_up(memory, schedule, nominal, now, out, why)


def give_up(memory: RunnerState, schedule: str, nominal: int, now: int, out: Out, why: str) -> None:
    remember(memory, schedule, unrun(SCHEDULED, nominal, "skipped", now))
    out.say("skipped", f"{schedule}: skipped {time_of(memory, schedule, nominal)} (Forbid: {why})",
            schedule=schedule, nominal=nominal_iso(nominal), outcome="skipped")
