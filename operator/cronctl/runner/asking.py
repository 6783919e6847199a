"""What the commands ask of a runner: ``cronctl trigger``, ``backfill``, ``suspend`` and ``resume``.

A manual trigger or a backfill is a file the running runner consumes once (:mod:`.backfills`),
a pause a record it reads at every step (:mod:`.pauses`); the manifests, the user's, are never
rewritten, and neither is the book.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..core import backfill as core_backfill
from ..core.spec import JobSpec
from ..core.state import Backfill
from . import backfills
from .files import utc_iso
from .firing import SWITCH_OFF_FILE, TRIGGERS_DIR, both_times
from .folder_view import (ViewError, actual_time, book_data, book_suspension, check_folder, decode, defined,
                          folder_view, load_book, manifest_spec, manifest_suspension, pause_records, timeline_of,
                          wall_minute)
from .history_view import NextTimes, next_times
from .lock import RunnerLock
from .pauses import read_pause, remove_pause, write_pause
from .slots import pool_missing, workers_busy
from .values import MAX_REASON, Pause, Request, pause_path, quoted

# -- trigger ----------------------------------------------------------------------------------


class Triggered(NamedTuple):
    path: Path
    message: str  # what will happen, for people


def trigger(folder: Path, name: str, now: int | None = None) -> Triggered:
    """Ask the runner for a manual firing of ``name`` and say what will happen.

    The schedule must have a valid manifest in the folder. While the node
    switch is off nothing is asked (a request that fired whenever the switch
    came back on would surprise); without a running runner the request waits
    for the next start.
    """
    load_book(folder)  # the folder exists, and a runner may fire from its book
    spec = manifest_spec(folder, name, wall_minute() if now is None else now)
    if not spec.fires_from(spec.created_at):  # the runner holds it invalid, and would set the request aside
        raise ViewError(f"{name} was not triggered: its spec.schedule never fires, so the runner holds "
                        f"{name} as invalid and runs nothing of it (fix the schedule, then trigger again)")
    if (folder / SWITCH_OFF_FILE).exists():
        raise ViewError(f"{name} was not triggered: the node switch is off, and nothing runs while "
                        f"{folder / SWITCH_OFF_FILE} exists (remove it, then trigger again)", exit_code=1)
    triggers = folder / TRIGGERS_DIR
    path = triggers / f"{name}.{time.time_ns()}.json"
    tmp = path.with_suffix(".tmp")
    try:
        triggers.mkdir(exist_ok=True)
        tmp.write_text(json.dumps({"schedule": name}))
        os.replace(tmp, path)
    except OSError as error:
        raise ViewError(f"{name} was not triggered: cannot write {path}: {error.strerror or error}") from None
    if RunnerLock(folder).holder() is None:
        return Triggered(path, f"queued: no runner is running; {name} runs when 'cronctl local {folder}' starts")
    return Triggered(path, f"queued: {_when_it_starts(folder, name)}")


def _when_it_starts(folder: Path, name: str) -> str:
    """When the running runner starts a manual run of ``name``, as its book last said: at once,
    or when a worker of its CronPool (or of the node) is free."""
    view = folder_view(folder)
    if not view.has_book:  # a runner just started: nothing of it runs yet
        return "the runner starts it within a second"
    mine = next((s for s in view.schedules if s.spec.name == name), None)
    pool = None if mine is None else mine.pool
    if mine is not None and pool is not None:
        ahead = sum(len(s.queued) for s in view.schedules if s.pool == pool)
        if mine.pool_workers is None:
            return f"{pool_missing(pool)}: it starts once the pool is defined there"
        if mine.pool_busy + ahead >= mine.pool_workers:
            return (f"it waits for a worker of CronPool {pool!r} ({workers_busy(mine.pool_busy, mine.pool_workers)}"
                    f"{_and_queued(ahead)})")
    ahead = sum(len(s.queued) for s in view.schedules)
    if view.busy + ahead >= view.workers:
        return f"it waits for a worker ({workers_busy(view.busy, view.workers)}{_and_queued(ahead)})"
    return "the runner starts it within a second"


def _and_queued(count: int) -> str:
    return f", {count} run{'' if count == 1 else 's'} queued before it" if count else ""


# -- backfill ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class BackfillPlan:
    """The times a backfill of [start, end] runs, oldest first, as the runner's core would."""

    spec: JobSpec
    start: int
    end: int
    times: list[int]
    under_way: Backfill | None = None  # the backfill a request would replace
    waits: str | None = None  # why its runs would wait (the schedule fires nothing now)


def backfill_plan(folder: Path, name: str, start: int, end: int, now: int | None = None) -> BackfillPlan:
    """What ``cronctl backfill NAME --from --to`` runs: the schedule times of the range (its
    manifest's expressions, exclusions and daylight-saving rule; an interval's grid counted from
    the runner's first sight of it). A ViewError (exit 2) when the core refuses the range: it
    ends before it starts, reaches past ``now``, or holds more than MAX_BACKFILL_RUNS times."""
    load_book(folder)
    now = wall_minute() if now is None else now
    manifests, spec = defined(folder, name, now)  # the runner reads the manifest before the request
    data = book_data(folder)
    book = None if data is None else decode(folder, data)
    job = None if book is None else book.state.jobs.get(name)
    if job is not None:
        spec = dataclasses.replace(spec, created_at=job.spec.created_at, index=job.spec.index)
    try:
        times = core_backfill.preview(spec, start, end, now)
    except core_backfill.BackfillError as error:
        raise ViewError(f"backfill of {name} refused: {error.message}") from None
    under_way = None
    if job is not None and job.state.backfill is not None \
            and not backfills.finished(job.state.backfill, job.state.active):
        under_way = job.state.backfill
    suspension = (book_suspension(book, pause_records(folder), name) if book is not None
                  else manifest_suspension(manifests, pause_records(folder), name))
    waits = (f"the node switch is off: its runs wait until {folder / SWITCH_OFF_FILE} is removed"
             if (folder / SWITCH_OFF_FILE).exists()
             else f"{name} is suspended: its runs wait until it is resumed" if suspension is not None else None)
    return BackfillPlan(spec, start, end, times, under_way, waits)


def _nothing_to_backfill(plan: BackfillPlan) -> ViewError:
    zone = plan.spec.options.tz
    return ViewError(f"no schedule time of {plan.spec.name} from {both_times(plan.start, zone)} to "
                     f"{both_times(plan.end, zone)}: nothing to backfill", exit_code=1)


def _times(count: int) -> str:
    return f"{count} schedule time{'' if count == 1 else 's'}"


def backfill_preview_lines(folder: Path, name: str, start: int, end: int, now: int | None = None) -> list[str]:
    """``cronctl backfill --dry-run``: the times, one a line in UTC and the schedule's zone, then
    how many; nothing is asked. A ViewError (exit 1) when the range holds no schedule time."""
    plan = backfill_plan(folder, name, start, end, now)
    if not plan.times:
        raise _nothing_to_backfill(plan)
    zone = plan.spec.options.tz
    return [both_times(t, zone) for t in plan.times] + [
        f"{_times(len(plan.times))} of {name} from {both_times(start, zone)} to {both_times(end, zone)}; "
        "a backfill runs them oldest first, one at a time (a dry run: nothing was asked)"]


class Asked(NamedTuple):
    path: Path  # the request file
    message: str  # the one line for people


def ask_backfill(folder: Path, name: str, start: int, end: int, now: int | None = None) -> Asked:
    """Hand the runner a backfill of ``name`` (a request file, :mod:`.backfills`) and say what
    will happen. A ViewError as for :func:`backfill_plan`, or with exit 1 when the range holds
    no schedule time (nothing is asked then)."""
    plan = backfill_plan(folder, name, start, end, now)
    if not plan.times:
        raise _nothing_to_backfill(plan)
    try:
        path = backfills.write_request(folder, Request(name, start, end))
    except OSError as error:
        raise ViewError(f"no backfill of {name} was asked: cannot write in {folder / backfills.BACKFILLS_DIR}: "
                        f"{error.strerror or error}") from None
    zone = plan.spec.options.tz
    said = (f"backfill of {name}: {_times(len(plan.times))} from {both_times(start, zone)} to "
            f"{both_times(end, zone)} run oldest first, one at a time; ")
    if RunnerLock(folder).holder() is None:
        said += f"no runner is running: the runner takes it when 'cronctl local {folder}' starts"
    else:
        said += "the runner takes it on its next poll"
    if plan.under_way is not None:
        said += (f"; it replaces the backfill under way ({plan.under_way.launched}/{plan.under_way.total} "
                 "launched)")
    if plan.waits is not None:
        said += f"; {plan.waits}"
    return Asked(path, said)


# -- suspend and resume -----------------------------------------------------------------------


class Paused(NamedTuple):
    path: Path  # the pause record
    message: str  # the one line for people


def suspend(folder: Path, name: str, reason: str | None, at: float | None = None) -> Paused:
    """Suspend ``name`` with a pause record (``at``, seconds since 1970, is its time; the command
    passes its clock's) and say so. The manifest is left as its owner wrote it; a schedule
    paused already keeps its time and takes the new reason."""
    check_folder(folder)
    if reason is not None and len(reason) > MAX_REASON:
        raise ViewError(f"--reason: {len(reason)} characters, more than the {MAX_REASON} that "
                        "spec.suspendReason allows")
    seconds = time.time() if at is None else at
    manifests, spec = defined(folder, name, int(seconds // 60))
    reason = reason or None
    path = pause_path(folder, name)
    try:
        before: Pause | None = read_pause(path)
    except FileNotFoundError:
        before = None
    since = before.since if before is not None and before.since and not before.problem else utc_iso(seconds)
    try:
        write_pause(folder, name, reason, since)
    except OSError as error:
        raise ViewError(f"{name} was not suspended: cannot write {path}: {error.strerror or error}") from None
    said = f"{name} suspended: {quoted(reason)}" if reason else f"{name} suspended (no reason given)"
    if before is not None and before.problem:
        said += "; its unreadable pause record is replaced"
    elif before is not None:
        was = ("" if before.reason == reason else f", the reason was {quoted(before.reason)}" if before.reason
               else ", it had no reason")
        said += f"; {'already ' if not was else ''}since {actual_time(since, spec.options.tz)}{was}"
    if name in manifests.suspended:
        said += f"; its manifest {manifests.files[name]} says spec.suspend: true as well"
    return Paused(path, said)


def resume(folder: Path, name: str, now: int | None = None) -> Paused:
    """Lift ``cronctl suspend``'s pause of ``name`` and say when it fires next; refused (a ViewError)
    when its manifest says spec.suspend: true, which only its owner lifts, in the manifest."""
    check_folder(folder)
    now = wall_minute() if now is None else now
    manifests, spec = defined(folder, name, now)
    if name in manifests.suspended:
        raise ViewError(f"{name} is suspended by its manifest {manifests.files[name]} (spec.suspend: true), "
                        "not by cronctl suspend: set spec.suspend: false there to resume it")
    path = pause_path(folder, name)
    try:
        removed = remove_pause(folder, name)
    except OSError as error:
        raise ViewError(f"{name} was not resumed: cannot delete {path}: {error.strerror or error}") from None
    try:
        found = next_times(folder, name, 1, now)
    except ViewError:  # a book the views cannot read: the manifest's times, as before a first start
        found = NextTimes(spec, timeline_of(spec).upcoming(now, 1))
    zone = found.spec.options.tz
    then = f"next fire {both_times(found.times[0], zone)}" if found.times else "it fires no more"
    return Paused(path, f"{name} resumed; {then}" if removed else f"{name} was not suspended; {then}")
