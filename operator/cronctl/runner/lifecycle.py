"""What becomes of a schedule as its manifest changes: added, edited, held, retired.

As the operator treats CronSchedule objects. A manifest that becomes invalid
holds its schedule as a suspension does (no firing, no missed run counted)
while its runs go on under their timeouts; it fires again once fixed. A
schedule whose manifest is gone (the file deleted, or the schedule renamed: a
new name is a new schedule) is retired, as deleting a CronSchedule
garbage-collects its Jobs: its running processes are stopped, its waiting
firings canceled, each recorded, and it leaves the controller. A schedule
stays with the file that defined it first (``sources``); a second definition
is the one named and ignored. The book's ``manifests`` says which manifests
are invalid and which schedules were retired (the last ``RETIRED_LIMIT``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from . import composition
from .definitions import KIND, LoadedDefinitions, image_notice, timed_by_core
from .judge import Verdict
from .effects import Out, RemovePause
from .journal import entry, remember, unrun
from .memory import RunnerState
from .stops import CANCELED, STOPPED, ask_stop
from .values import pause_path

RETIRED_LIMIT = 20  # retired schedules the book names (and keeps the history of)
RETIRED_NOTE = "its schedule was retired: the manifest was deleted, or the schedule renamed"


@dataclass(frozen=True)
class Scan:
    """The folder's manifests as read at this step: those that changed read again."""

    loaded: LoadedDefinitions
    changed: bool
    files: frozenset[str]  # the names of the folder's manifest files


def sync_manifests(memory: RunnerState, scan: Scan | None, now: int, out: Out) -> bool:
    """Add, edit, hold (invalid) or retire schedules where the folder changed (``scan`` None:
    the folder could not be read, the schedules go on as last read). Whether the book changed."""
    if scan is None or (not scan.changed and memory.judged):
        return False
    first, memory.judged = not memory.judged, True
    _pass_on_notices(scan.loaded, out)
    jobs = memory.controller.state.jobs
    sources = dict(memory.sources)
    verdict = memory.judge(scan.loaded, {name: memory.sources.get(name) for name in jobs}, set(scan.files))
    changed = _load_valid(memory, verdict, now)
    _notice_images(memory, verdict, out)
    gone = [name for name in jobs if name not in verdict.valid and name not in verdict.invalid]
    for name in gone:
        retire(memory, name, now, out)
    memory.by_manifest = {name: read.suspend_reason for name, (_, read) in verdict.valid.items() if read.suspend}
    _sync_pools(memory, scan.loaded, verdict, out)
    _hold_invalid(memory, verdict)
    invalid = _invalid_records(verdict)
    _say_manifests(memory, invalid, verdict, first, out)
    news = invalid != memory.invalid or memory.sources != sources
    memory.invalid = invalid
    return changed or bool(gone) or news


def _pass_on_notices(loaded: LoadedDefinitions, out: Out) -> None:
    """Say what reading the folder noticed, but the image notice: ``_notice_images`` says it once."""
    everyone = image_notice(loaded.definitions)
    for notice in loaded.notices:
        if notice != everyone:
            out.notice(notice)


def _hold_invalid(memory: RunnerState, verdict: Verdict) -> None:
    """Hold the known schedules whose manifest turned invalid: they fire nothing until it is
    fixed, and keep the file they were read from."""
    jobs = memory.controller.state.jobs
    memory.held = {name: message for name, (_, message) in verdict.invalid.items() if name in jobs}
    for name in memory.held:
        memory.sources.setdefault(name, verdict.invalid[name][0].name)


def _invalid_records(verdict: Verdict) -> list[dict[str, Any]]:
    """The book's records of what is invalid: each schedule's manifest, then what names no schedule."""
    invalid: list[dict[str, Any]] = [{"file": str(file), "schedule": name, "message": message}
                                     for name, (file, message) in sorted(verdict.invalid.items())]
    return invalid + [{"file": str(error.file), "schedule": None, "message": str(error)} for error in verdict.others]


def _load_valid(memory: RunnerState, verdict: Verdict, now: int) -> bool:
    """Add the valid schedules that are new, edit those that changed (later firings only);
    one that never fires is invalid. Whether any was added or edited."""
    controller = memory.controller
    jobs = controller.state.jobs
    changed = False
    next_index = max((job.spec.index for job in jobs.values()), default=-1) + 1
    for name, (definition, read) in verdict.valid.items():
        job = jobs.get(name)
        anchor, index = (now, next_index) if job is None else (job.spec.created_at, job.spec.index)
        spec = timed_by_core(dataclasses.replace(read.job, created_at=anchor, index=index))  # the wrapper's timeout
        if not spec.fires_from(spec.created_at):
            verdict.invalid[name] = (definition.file, f"{definition.file}: {KIND} {name!r}: spec.schedule: "
                                                      "never fires")
            continue
        if job is None:
            composition.add_schedule(memory, spec, last_number(memory, name))  # run ids are never reused
            memory.retired = [row for row in memory.retired if row["schedule"] != name]  # put back: not retired
            changed, next_index = True, next_index + 1
        else:
            changed |= composition.edit_schedule(memory, spec)
        memory.definitions[name] = definition
        memory.sources[name] = definition.file.name
    for name in [n for n in verdict.invalid if n in verdict.valid]:
        del verdict.valid[name]
    return changed


def _notice_images(memory: RunnerState, verdict: Verdict, out: Out) -> None:
    """Said once for each schedule, as it first loads: the runner runs no image."""
    images = [d for name, (d, _) in verdict.valid.items() if d.image and name not in memory.imaged]
    if images:
        out.notice(image_notice(images) or "")
        memory.imaged.update(d.name for d in images)


def _say_manifests(memory: RunnerState, invalid: list[dict[str, Any]], verdict: Verdict, first: bool,
                   out: Out) -> None:
    """A line for each manifest that became invalid (each one at the first reading),
    and for each that is valid again."""
    jobs = memory.controller.state.jobs
    before = set() if first else {row["message"] for row in memory.invalid}
    for row in invalid:
        if row["message"] in before:
            continue
        if row["schedule"] in jobs:
            then = "its schedule does not fire until the manifest is fixed"
        elif row["schedule"] is not None:
            then = "not loaded until it is fixed"
        else:
            then = "ignored"
        out.say("invalid", f"{row['message']} ({then})", "warning", schedule=row["schedule"], file=row["file"])
    for row in memory.invalid:
        name = row["schedule"]
        if name in verdict.valid and name in jobs:
            out.say("valid", f"{name}: the manifest {memory.definitions[name].file} is valid again; "
                             "the schedule fires again", schedule=name)


def _sync_pools(memory: RunnerState, loaded: LoadedDefinitions, verdict: Verdict, out: Out) -> None:
    """The folder's CronPools and the pool each schedule names; a line for a schedule whose
    pool is missing (its runs wait until the pool is in the folder), once."""
    missing_before = {name for name, pool in memory.pool_of.items() if pool not in memory.pools}
    memory.pools = {name: pool.workers for name, pool in loaded.pools.items()}
    memory.pool_of = {name: read.pool for name, (_, read) in verdict.valid.items() if read.pool is not None}
    for name, pool in sorted(memory.pool_of.items()):
        if pool not in memory.pools and name not in missing_before:
            out.say("pool", f"{name}: spec.pool: CronPool {pool!r} is not in the folder: its runs wait until it "
                            "is", "warning", schedule=name)


def last_number(memory: RunnerState, name: str) -> int:
    """The highest run number a schedule of this name had (a retired one, say), so that a
    new schedule of the name starts after it and no two runs share an id."""
    prefix = f"{name}-"
    ids = [f.run_id for f in memory.firings.values() if f.schedule == name]
    ids += [row["run"] for row in memory.journal.get(name, []) if row.get("run")]
    numbers = [int(run_id[len(prefix):]) for run_id in ids
               if run_id.startswith(prefix) and run_id[len(prefix):].isdigit()]
    return max(numbers, default=0)


def retire(memory: RunnerState, name: str, now: int, out: Out) -> None:
    """The schedule's manifest is gone: its processes are stopped, its waiting firings
    canceled, each recorded, and the schedule leaves the controller."""
    job = composition.retire_schedule(memory, name)
    paused = name in memory.pauses
    stopping = []
    for firing in [f for f in memory.firings.values() if f.schedule == name]:
        firing.note = RETIRED_NOTE
        if firing.slot is None:
            del memory.firings[firing.run_id]
            remember(memory, name, entry(firing, CANCELED, now, firing.attempts_made))
        else:
            stopping.append(firing.run_id)
            if firing.stopping is None:
                ask_stop(memory, firing, STOPPED, out)
    for queued in job.state.queue:
        remember(memory, name, unrun(queued.reason, queued.nominal, CANCELED, now, note=RETIRED_NOTE))
    _forget(memory, name, now)
    file = memory.sources.pop(name, None)
    what = f"stopping {', '.join(stopping)}" if stopping else "nothing was running"
    path = pause_path(memory.folder, name)
    out.add(RemovePause(name, path))  # as deleting a CronSchedule takes its spec.suspend along
    if paused:
        what += f"; its pause record {path} is deleted"
    out.say("retired", f"{name}: retired, its manifest{f' {file}' if file else ''} is gone (deleted, or the "
                       f"schedule renamed); {what}", schedule=name, file=file, stopping=stopping)


def _forget(memory: RunnerState, name: str, now: int) -> None:
    """What the runner kept of a retired schedule, but for its history (kept for the last few)."""
    memory.snapshots = {key: value for key, value in memory.snapshots.items() if not key.startswith(f"{name}@")}
    memory.overflows.pop(name, None)
    memory.definitions.pop(name, None)
    memory.suspended.pop(name, None)
    memory.suspensions.pop(name, None)
    memory.pauses.pop(name, None)
    memory.retired = [row for row in memory.retired if row["schedule"] != name]
    memory.retired.append({"schedule": name, "at": now})
    del memory.retired[:-RETIRED_LIMIT]
    kept = set(memory.controller.state.jobs) | {row["schedule"] for row in memory.retired}
    memory.journal = {schedule: rows for schedule, rows in memory.journal.items() if schedule in kept}
