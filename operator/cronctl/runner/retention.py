"""Which run folders go, as the core's retention drops their runs (Jobs on the operator).

The folders of the runs the core keeps (``successfulJobsHistoryLimit``,
``failedJobsHistoryLimit``), of runs in flight, and of times the core has not
dealt with yet stay; a manual run's folder goes with its run, a backfill's run
folders with their runs and the request's folder with the last of them. A
retired schedule's folders stay with its history. Decided here; the shell
deletes once the book that dropped the runs is saved.
"""

from __future__ import annotations

from dataclasses import dataclass

from .firing import BACKFILL_DIR, MANUAL_DIR
from .memory import RunnerState
from .values import RunKey


@dataclass(frozen=True)
class Prune:
    """Delete the run folders of ``schedule`` in ``home`` but ``keep`` (and, with ``through``,
    those of times after it); ``last`` says the home's folder goes too once no run is left."""

    home: str | None
    schedule: str
    keep: frozenset[RunKey]
    through: int | None = None
    last: bool = False


@dataclass(frozen=True)
class RemoveHome:
    """Delete a manual trigger's folder: its run is no longer kept."""

    home: str


def plan(memory: RunnerState, schedule: str, opened: set[str]) -> list[Prune | RemoveHome]:
    """What to delete of a schedule's run folders now (``opened``: the executor folders in use)."""
    job = memory.controller.state.jobs.get(schedule)
    if job is None:  # retired: its folders stay with its history
        return []
    runs = memory.controller.state.runs
    kept = {item.run_id for item in job.state.kept_succeeded + job.state.kept_failed} | set(job.state.active)
    keep = {RunKey(schedule, runs[run_id].scheduled_for) for run_id in kept if run_id in runs}
    keep |= {RunKey(f.schedule, f.nominal) for f in memory.firings.values() if f.schedule == schedule}
    dealt_with = job.state.last_schedule if job.state.last_schedule is not None else job.spec.created_at
    actions: list[Prune | RemoveHome] = [Prune(None, schedule, frozenset(keep), through=dealt_with)]
    return actions + _manual(memory, schedule, kept, opened) + _backfills(memory, schedule, kept)


def _manual(memory: RunnerState, schedule: str, kept: set[str], opened: set[str]) -> list[Prune | RemoveHome]:
    in_flight = {f.manual for f in memory.firings.values() if f.manual} | \
        {home.partition("/")[2] for home in opened if home.startswith(f"{MANUAL_DIR}/")}
    triggers = {row["trigger"]: row["run"] for row in memory.journal.get(schedule, []) if row.get("trigger")}
    return [RemoveHome(f"{MANUAL_DIR}/{manual}") for manual, run_id in triggers.items()
            if manual not in in_flight and run_id not in kept]


def _backfills(memory: RunnerState, schedule: str, kept: set[str]) -> list[Prune | RemoveHome]:
    """A backfill's runs share the folder of its request: the folders of those retention drops
    go, and the request's folder once none of its runs is left or in flight."""
    keep: dict[str, set[RunKey]] = {}
    for row in memory.journal.get(schedule, []):
        if row.get("backfill"):
            keys = keep.setdefault(f"{BACKFILL_DIR}/{row['backfill']}", set())
            if row["run"] in kept:
                keys.add(RunKey(schedule, row["nominal"]))
    in_flight = {f.home for f in memory.firings.values() if f.backfill}
    actions: list[Prune | RemoveHome] = []
    for home, keys in keep.items():
        keys |= {f.key for f in memory.firings.values() if f.home == home}
        actions.append(Prune(home, schedule, frozenset(keys), last=home not in in_flight and not keys))
    return actions
