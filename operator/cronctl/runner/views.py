"""What ``cronctl status``, ``history``, ``next``, ``trigger``, ``backfill``, ``suspend`` and ``resume``
show or do for a runner's folder.

They read the book without the lock (it is rewritten whole and atomically,
so a reader sees a complete book) and never write it; a manual trigger or a
backfill is a file the running runner consumes once (:mod:`.backfills`), a
pause a record it reads at every step (:mod:`.pauses`; the manifests, the
user's, are never rewritten). Before the runner has ever run in a
folder there is no book, and the views read the manifests instead, with the
runner's reader (``load_definitions``, then ``read_manifest``).

Each view builds plain values first (``status``, ``history``: JSON-ready,
times RFC 3339 UTC) and words them for people second (``*_lines``: times as
``YYYY-MM-DD HH:MM UTC`` plus the schedule's own zone). ``now`` (minutes
since 1970 UTC) is an argument: the command passes its clock, tests a
constant. Whatever keeps a view from answering (no folder, a book that is
unreadable, of a newer version or does not parse, an unknown schedule) is a
:class:`ViewError` with one line for people and an exit code.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from ..core import backfill as core_backfill
from ..core.dst import DaylightSaving
from ..core.errors import CronctlError
from ..core.schedule import Timeline
from ..core.spec import JobSpec
from ..core.state import Backfill, ControllerState
from ..core.times import format_time
from ..core.zones import UTC, AnyZone
from ..manifest import API_VERSION, KIND, read_manifest
from .book import Book, Loaded, Status
from . import backfills
from .definitions import load_definitions
from .executor import RUNS_DIR, RunKey, run_folder_name
from .files import read_json, utc_iso
from .firing import BACKFILL_DIR, MANUAL_DIR, SWITCH_OFF_FILE, TRIGGERS_DIR, Firing, Overflowed, both_times
from .lock import RunnerLock, describe_holder
from .pauses import (MAX_REASON, Pause, Suspension, pause_path, quoted, read_pause, read_pauses, remove_pause,
                     suspension_of, write_pause)

OVERDUE_AFTER = 1  # minutes a next time may lie in the past before a stopped runner makes it overdue
EXIT_USAGE = 2


class ViewError(SystemExit):
    """A view that cannot answer: ``message`` is the one line for people (without ``cronctl:``),
    ``exit_code`` the command's exit status.

    A ``SystemExit`` (whose ``code`` is the message), as the views raised before: a caller that
    catches that, as a runner waiting for the lock does to show what it cannot, still does, and
    one that catches nothing ends with the message rather than a traceback."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message, self.exit_code = message, exit_code


# -- reading the folder ------------------------------------------------------------------------


@dataclass(frozen=True)
class Invalid:
    """A manifest the runner does not fire: the file, its schedule if it names one, the reason."""

    file: str
    schedule: str | None
    message: str

    def line(self) -> str:
        return self.message if self.message.startswith(self.file) else f"{self.file}: {self.message}"


@dataclass(frozen=True)
class Manifests:
    """The folder's manifests as the runner reads them: the valid ones, and the others."""

    specs: dict[str, JobSpec]
    invalid: list[Invalid]
    files: dict[str, str] = field(default_factory=dict)  # schedule -> its manifest file (the valid ones)
    suspended: dict[str, str | None] = field(default_factory=dict)  # spec.suspend: true -> spec.suspendReason


def read_manifests(folder: Path, now: int) -> Manifests:
    """The schedules of the folder's manifests, anchored at ``now`` as a first start anchors them."""
    try:
        loaded = load_definitions(folder)
    except OSError as error:
        raise ViewError(f"{folder}: cannot read its manifests: {error.strerror or error}") from None
    manifests = Manifests({}, [Invalid(str(e.file), e.schedule, str(e)) for e in loaded.errors])
    for definition in loaded.definitions:
        body = definition.body or {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": definition.name},
                                   "spec": definition.spec}
        try:
            read = read_manifest(body, now)
        except CronctlError as error:
            manifests.invalid.append(Invalid(str(definition.file), definition.name,
                                             f"{definition.file}: {KIND} {definition.name!r}: {error.message}"))
            continue
        manifests.specs[definition.name] = read.job
        manifests.files[definition.name] = str(definition.file)
        if read.suspend:
            manifests.suspended[definition.name] = read.suspend_reason
    return manifests


def check_folder(folder: Path) -> None:
    if not folder.exists():
        raise ViewError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise ViewError(f"{folder}: not a folder")


def _load(folder: Path) -> Loaded:
    """The book as it is (missing or broken included); a ViewError when it cannot be read or is newer."""
    check_folder(folder)
    book = Book(folder)
    try:
        loaded = book.load(move_broken=False)
    except OSError as error:
        raise ViewError(f"{book.path}: cannot read the book: {error.strerror or error}") from None
    if loaded.status not in (Status.OK, Status.MISSING, Status.BROKEN):  # newer, or unreadable: nothing fires
        raise ViewError(loaded.message)
    return loaded


def book_data(folder: Path) -> dict[str, Any] | None:
    """The book's data, or None when the runner has never run here."""
    loaded = _load(folder)
    if loaded.status is Status.BROKEN:
        raise ViewError(f"{loaded.message}; 'cronctl local {folder}' moves it aside and starts with an empty book")
    return loaded.data if loaded.status is Status.OK else None


@dataclass
class Decoded:
    """The parts of a book the views show, read into their types."""

    state: ControllerState
    firings: list[Firing]
    journal: dict[str, list[dict[str, Any]]]
    overflows: dict[str, Overflowed]
    workers: int
    invalid: list[Invalid]
    retired: dict[str, int]
    suspended: dict[str, dict[str, Any]]  # manifests saying spec.suspend: true -> {"since", "reason"}


def _decode(folder: Path, data: dict[str, Any]) -> Decoded:
    try:
        manifests = data.get("manifests") or {}  # a book written before they were kept has none
        journal = data.get("journal", {})
        if not isinstance(journal, dict) or not all(isinstance(rows, list) for rows in journal.values()):
            raise TypeError("journal: not a mapping of lists")
        return Decoded(
            state=ControllerState.from_json(data["controller"]),
            firings=[Firing(**f) for f in data.get("firings", [])],
            journal=journal,
            overflows={name: Overflowed(**o) for name, o in data.get("overflows", {}).items()},
            workers=int(data.get("workers", 1)),
            invalid=[Invalid(str(i["file"]), i.get("schedule"), str(i["message"]))
                     for i in manifests.get("invalid", [])],
            retired={str(r["schedule"]): int(r["at"]) for r in manifests.get("retired", [])},
            suspended={str(e["schedule"]): {"since": None if e.get("since") is None else int(e["since"]),
                                            "reason": None if e.get("reason") is None else str(e["reason"])}
                       for e in manifests.get("suspended", [])})
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ViewError(f"{folder / 'cronctl.json'}: the book has a field this cronctl cannot read "
                        f"({type(error).__name__}: {error})") from None


def _timeline(spec: JobSpec) -> Timeline:
    return Timeline(spec.compiled, spec.created_at, spec.options.tz)


def _wall_minute() -> int:
    """Now, for a caller that passed no ``now`` (the command always passes its clock's)."""
    return int(time.time() // 60)


def rfc3339(minute: int | None) -> str | None:
    """A minute as ``2024-03-01T00:05:00Z``."""
    return None if minute is None else f"{format_time(minute)}:00Z"


def expressions(spec: JobSpec) -> list[str]:
    """Every expression of a schedule: ``spec.schedule``, or each of ``spec.schedules``."""
    return [spec.expression, *spec.options.more_schedules]


def _rules(spec: JobSpec) -> str | None:
    """``6 exclusions; daylight saving: Skip``: what changes a schedule's times beyond its
    expressions (None when nothing does: no exclusion, the default Vixie rule)."""
    parts = []
    if spec.options.exclude:
        count = len(spec.options.exclude)
        parts.append(f"{count} exclusion{'' if count == 1 else 's'}")
    if spec.options.daylight_saving is not DaylightSaving.VIXIE:
        parts.append(f"daylight saving: {spec.options.daylight_saving.value}")
    return "; ".join(parts) or None


def describe_schedule(spec: JobSpec) -> str:
    """``name: expr; expr (zone)``, with its exclusions and daylight-saving rule if any."""
    rules = _rules(spec)
    return f"{spec.name}: {'; '.join(expressions(spec))} ({spec.options.tz.name})" + (f"; {rules}" if rules else "")


# -- status ------------------------------------------------------------------------------------


@dataclass
class ScheduleView:
    spec: JobSpec
    last: int | None
    next: int | None
    overdue_since: int | None = None
    skipped: int = 0
    running: list[Firing] = field(default_factory=list)
    queued: list[Firing] = field(default_factory=list)
    retrying: list[Firing] = field(default_factory=list)
    overflow: Overflowed | None = None
    invalid: bool = False
    retired_at: int | None = None
    suspension: Suspension | None = None
    backfill: Backfill | None = None  # the last backfill asked for, under way or done
    active: tuple[str, ...] = ()  # the schedule's runs not over (a backfill's among them)

    @property
    def attempts(self) -> int:
        return self.spec.options.retries + 1


@dataclass
class FolderView:
    folder: Path
    holder: dict[str, Any] | None  # the runner holding the lock; None: no runner runs
    switched_off: bool
    has_book: bool
    workers: int
    busy: int
    clock: int | None  # the minute the runner last stepped at
    schedules: list[ScheduleView]
    invalid: list[Invalid]
    retired: dict[str, int]

    @property
    def fires(self) -> bool:
        return self.holder is not None and not self.switched_off


def folder_view(folder: Path, now: int | None = None) -> FolderView:
    """What ``cronctl status`` shows; ``now`` (minutes) judges overdue times, None judges none."""
    data = book_data(folder)
    holder = RunnerLock(folder).holder()
    switched_off = (folder / SWITCH_OFF_FILE).exists()
    if data is None:
        return _unstarted_view(folder, holder, switched_off, now)
    book = _decode(folder, data)
    pauses = _pauses(folder)
    invalid_names = {i.schedule for i in book.invalid}
    views = []
    for job in book.state.jobs.values():
        spec = job.spec
        mine = [f for f in book.firings if f.schedule == spec.name]
        view = ScheduleView(spec, job.state.last_schedule,
                            _timeline(spec).next_after(book.state.clock or spec.created_at),
                            skipped=job.state.skipped,
                            running=[f for f in mine if f.slot is not None],
                            queued=[f for f in mine if f.startable],
                            retrying=[f for f in mine if f.retry_due is not None],
                            overflow=book.overflows.get(spec.name),
                            invalid=spec.name in invalid_names, retired_at=book.retired.get(spec.name),
                            suspension=_book_suspension(book, pauses, spec.name),
                            backfill=job.state.backfill, active=tuple(job.state.active))
        if (now is not None and holder is None and not switched_off and not view.invalid
                and view.suspension is None
                and view.retired_at is None and view.next is not None and now - view.next > OVERDUE_AFTER):
            view.overdue_since = view.next
        views.append(view)
    busy = len({f.slot for f in book.firings if f.slot is not None})
    return FolderView(folder, holder, switched_off, True, book.workers, busy, book.state.clock, views,
                      book.invalid, book.retired)


def _unstarted_view(folder: Path, holder: dict[str, Any] | None, switched_off: bool,
                    now: int | None) -> FolderView:
    """No book yet: the schedules the manifests define, as a first start would see them."""
    anchor = now if now is not None else _wall_minute()
    manifests = read_manifests(folder, anchor)
    pauses = _pauses(folder)
    views = [ScheduleView(spec, None, _timeline(spec).next_after(anchor),
                          suspension=_manifest_suspension(manifests, pauses, spec.name))
             for spec in manifests.specs.values()]
    return FolderView(folder, holder, switched_off, False, 0, 0, None, views, manifests.invalid, {})


def _pauses(folder: Path) -> dict[str, Pause]:
    try:
        return read_pauses(folder)
    except OSError as error:
        raise ViewError(f"{folder}: cannot read its pause records: {error.strerror or error}") from None


def _book_suspension(book: Decoded, pauses: dict[str, Pause], name: str) -> Suspension | None:
    """A schedule's suspension: its pause record as it is now, its manifest's as the runner last saw it."""
    seen = book.suspended.get(name)
    return suspension_of(pauses.get(name), seen is not None, None if seen is None else seen["reason"],
                         None if seen is None else rfc3339(seen["since"]))


def _manifest_suspension(manifests: Manifests, pauses: dict[str, Pause], name: str) -> Suspension | None:
    """A schedule's suspension before the runner ever ran: since when its manifest says so is not known."""
    return suspension_of(pauses.get(name), name in manifests.suspended, manifests.suspended.get(name), None)


def _backfill_waits(view: ScheduleView, switched_off: bool) -> str | None:
    """Why a backfill's runs wait, when its schedule fires nothing."""
    if switched_off:
        return "it waits while the node switch is off"
    if view.suspension is not None:
        return "it waits while the schedule is suspended"
    if view.invalid:
        return "it waits until the manifest is fixed"
    return None


def _suspended_line(suspension: Suspension, zone: AnyZone) -> str:
    """``suspended since 2024-03-01 00:10 UTC by cronctl suspend: "db migration"``."""
    since = f" since {_actual(suspension.since, zone)}" if suspension.since else ""
    return f"suspended{since} {suspension.describe()}"


def status(folder: Path, now: int | None = None) -> dict[str, Any]:
    """``cronctl status --json``: stable keys, times RFC 3339 UTC (see the README)."""
    view = folder_view(folder, now)
    holder = view.holder
    return {
        "folder": str(view.folder),
        "runner": {"running": holder is not None, "pid": (holder or {}).get("pid"),
                   "hostname": (holder or {}).get("hostname"), "since": (holder or {}).get("started_at")},
        "node_switch": "off" if view.switched_off else "on",
        "fires": view.fires,
        "book": view.has_book,
        "clock": rfc3339(view.clock),
        "workers": view.workers,
        "busy": view.busy,
        "schedules": [_schedule_json(s, view.switched_off) for s in view.schedules],
        "invalid_manifests": [{"file": i.file, "schedule": i.schedule, "message": i.line()} for i in view.invalid],
        "retired": [{"schedule": name, "at": rfc3339(at)} for name, at in view.retired.items()],
    }


def _schedule_json(view: ScheduleView, switched_off: bool) -> dict[str, Any]:
    spec = view.spec
    return {
        "name": spec.name, "expression": spec.expression, "schedules": expressions(spec),
        "exclude": list(spec.options.exclude), "daylight_saving": spec.options.daylight_saving.value,
        "time_zone": spec.options.tz.name,
        "policy": spec.policy.value, "last": rfc3339(view.last), "next": rfc3339(view.next),
        "overdue_since": rfc3339(view.overdue_since), "skipped": view.skipped,
        "running": [{"run": f.run_id, "slot": f.slot, "attempt": f.attempt} for f in view.running],
        "queued": [{"run": f.run_id, "attempt": f.attempt} for f in view.queued],
        "retrying": [{"run": f.run_id, "failed_attempt": f.attempt, "next_attempt": f.attempt + 1,
                      "due": rfc3339(f.retry_due)} for f in view.retrying],
        "overflow": None if view.overflow is None else {
            "at": rfc3339(view.overflow.at), "limit": view.overflow.limit, "dropped": view.overflow.dropped,
            "message": view.overflow.describe(spec.options.tz)},
        "invalid": view.invalid, "retired": rfc3339(view.retired_at),
        "suspended": None if view.suspension is None else view.suspension.to_json(),
        "backfill": None if view.backfill is None else backfills.progress_json(
            view.backfill, view.active, _backfill_waits(view, switched_off)),
    }


def status_lines(folder: Path, now: int | None = None) -> list[str]:
    view = folder_view(folder, now)
    if view.holder is not None:
        lines = [f"runner: {describe_holder(view.holder)}"]
    else:
        lines = [f"no runner is running: nothing fires until 'cronctl local {folder}' runs"]
    if view.switched_off:
        lines.append(f"the node switch is off: nothing fires while {folder / SWITCH_OFF_FILE} exists")
    if not view.has_book:
        lines.append(f"no book yet ({folder / 'cronctl.json'}): the runner has not run here; "
                     "the manifests' schedules:")
    for schedule in view.schedules:
        lines.extend(_schedule_lines(schedule, view))
    if view.invalid:
        lines.append("invalid manifests (nothing fires for them until they are fixed):")
        lines.extend(f"  {i.line()}" for i in view.invalid)
    if view.retired:
        lines.append("retired schedules (their manifests are gone):")
        lines.extend(f"  {name} at {both_times(at, UTC)}" for name, at in view.retired.items())
    return lines


def _schedule_lines(view: ScheduleView, folder: FolderView) -> list[str]:
    spec = view.spec
    zone = spec.options.tz
    lines = [f"{spec.name}: {'; '.join(expressions(spec))} ({zone.name}, {spec.policy.value})"]
    rules = _rules(spec)
    if rules:
        lines.append(f"  {rules}")
    if folder.has_book:
        lines.append(f"  last:  {both_times(view.last, zone)}")
    suspended = view.suspension is not None and view.retired_at is None
    if view.suspension is not None and suspended:
        lines.append(f"  {_suspended_line(view.suspension, zone)}")
    if view.retired_at is not None:
        lines.append(f"  retired at {both_times(view.retired_at, zone)}: its manifest is gone, nothing fires")
    elif view.invalid:
        lines.append("  its manifest is invalid (below): nothing fires until it is fixed")
    elif suspended:
        lines.append(f"  next:  {both_times(view.next, zone)} if resumed by then")
    elif view.overdue_since is not None:
        lines.append(f"  next:  {both_times(view.next, zone)}, overdue since {both_times(view.overdue_since, zone)}")
    else:
        lines.append(f"  next:  {both_times(view.next, zone)}")
    if view.overflow is not None:
        lines.append(f"  {view.overflow.describe(zone)}")
    if view.backfill is not None:
        waits = _backfill_waits(view, folder.switched_off)
        lines.append(f"  {backfills.describe(view.backfill, view.active, zone, waits)}")
    if view.running:
        lines.append("  running: " + ", ".join(f"{f.run_id} on {f.slot}{_attempt_of(f, view.attempts)}"
                                               for f in view.running))
    if view.queued:
        noun = "worker" if folder.workers == 1 else "workers"
        lines.append("  " + ", ".join(f"{f.run_id}{_attempt_of(f, view.attempts)}" for f in view.queued)
                     + f" queued: {folder.busy}/{folder.workers} {noun} busy")
    lines.extend(f"  {_retry_line(f, view.attempts, zone)}" for f in view.retrying)
    return lines


def _attempt_of(firing: Firing, attempts: int) -> str:
    """`` (attempt 2/3)`` for a schedule that retries; nothing for one that does not."""
    if attempts == 1 and firing.attempt == 1:
        return ""
    return f" (attempt {firing.attempt}/{max(attempts, firing.attempt)})"


def _retry_line(firing: Firing, attempts: int, zone: AnyZone) -> str:
    """A run waiting for its next attempt, e.g. ``tick-1: attempt 1/3 failed, retry 2/3 at ...``."""
    total = max(attempts, firing.attempt + 1)  # the manifest may have been edited since
    return (f"{firing.run_id}: attempt {firing.attempt}/{total} failed, "
            f"retry {firing.attempt + 1}/{total} at {both_times(firing.retry_due, zone)}")


# -- history -----------------------------------------------------------------------------------


class Exit(NamedTuple):
    code: int | None
    signal: int | None

    def __str__(self) -> str:
        if self.code is not None:
            return str(self.code)
        if self.signal is not None:
            try:
                return signal.Signals(self.signal).name
            except ValueError:
                return f"signal {self.signal}"
        return "-"


def exit_of(entry: dict[str, Any], folder: Path, schedule: str) -> Exit:
    """The exit of a history entry's last attempt: as the entry records it, else as the executor's
    ``exit.json`` of that attempt says (the folder of its trigger's runs for a manual firing);
    nothing when neither has it."""
    if "exit_code" in entry or "signal" in entry:
        code, sig = entry.get("exit_code"), entry.get("signal")
        return Exit(code if isinstance(code, int) else None, sig if isinstance(sig, int) else None)
    attempt = int(entry["attempts"])
    if attempt < 1:
        return Exit(None, None)
    base = folder / MANUAL_DIR / str(entry["trigger"]) if entry.get("trigger") else \
        folder / BACKFILL_DIR / str(entry["backfill"]) if entry.get("backfill") else folder
    key = RunKey(schedule, int(entry["nominal"]), attempt)
    path = base / RUNS_DIR / schedule / run_folder_name(key) / "exit.json"
    try:
        value = read_json(path)
    except (OSError, ValueError):
        return Exit(None, None)
    if not isinstance(value, dict):
        return Exit(None, None)
    code, sig = value.get("exit_code"), value.get("signal")
    return Exit(code if isinstance(code, int) else None, sig if isinstance(sig, int) else None)


@dataclass(frozen=True)
class HistoryRow:
    run: str | None
    reason: str
    nominal: int
    actual: str | None  # RFC 3339 UTC with seconds, as the executor stamps a start
    attempts: int
    exit: Exit
    outcome: str
    finished: int | None
    note: str | None  # why, where the runner says (a trigger not run, a retired schedule)


@dataclass(frozen=True)
class HistoryView:
    name: str
    spec: JobSpec | None  # None: a schedule the book no longer has
    rows: list[HistoryRow]


def history_view(folder: Path, name: str) -> HistoryView:
    data = book_data(folder)
    if data is None:
        known = read_manifests(folder, _wall_minute()).specs
        if name not in known:
            raise ViewError(_unknown(name, folder, sorted(known)))
        return HistoryView(name, known[name], [])
    book = _decode(folder, data)
    job = book.state.jobs.get(name)
    entries = book.journal.get(name)
    if entries is None and job is None:
        raise ViewError(_unknown(name, folder, sorted(set(book.state.jobs) | set(book.journal))))
    try:
        rows = [HistoryRow(e["run"], str(e["reason"]), int(e["nominal"]), e.get("actual"), int(e["attempts"]),
                           exit_of(e, folder, name), str(e["outcome"]),
                           None if e.get("finished") is None else int(e["finished"]),
                           None if e.get("note") is None else str(e["note"])) for e in entries or []]
    except (KeyError, TypeError, ValueError) as error:
        raise ViewError(f"{folder / 'cronctl.json'}: a history entry of {name!r} is not what this cronctl "
                        f"reads ({type(error).__name__}: {error})") from None
    return HistoryView(name, None if job is None else job.spec, _in_nominal_order(rows))


def _in_nominal_order(rows: list[HistoryRow]) -> list[HistoryRow]:
    """The rows by nominal time (then by when they finished), without a time's ``skipped`` row once
    that time ran after all (under Forbid the seed's rule launches it when the active run ends
    within its minute, after a step found it still active)."""
    ran = {row.nominal for row in rows if row.run is not None and row.reason in ("scheduled", "catch-up")}
    kept = [row for row in rows if not (row.outcome == "skipped" and row.nominal in ran)]
    return sorted(kept, key=lambda row: (row.nominal, row.finished if row.finished is not None else 0))


def history(folder: Path, name: str) -> dict[str, Any]:
    """``cronctl history NAME --json``: stable keys, times RFC 3339 UTC (see the README)."""
    view = history_view(folder, name)
    return {
        "schedule": view.name,
        "expression": None if view.spec is None else view.spec.expression,
        "time_zone": None if view.spec is None else view.spec.options.tz.name,
        "runs": [{"run": r.run, "reason": r.reason, "nominal": rfc3339(r.nominal), "actual": r.actual,
                  "attempts": r.attempts, "exit_code": r.exit.code, "signal": r.exit.signal,
                  "outcome": r.outcome, "note": r.note, "finished": rfc3339(r.finished)} for r in view.rows],
    }


HISTORY_COLUMNS = ("RUN", "REASON", "NOMINAL", "ACTUAL", "ATTEMPTS", "EXIT", "OUTCOME")


def history_lines(folder: Path, name: str) -> list[str]:
    """A header, then one row per run, oldest first (the book keeps the last 200)."""
    view = history_view(folder, name)
    zone = UTC if view.spec is None else view.spec.options.tz
    title = name if view.spec is None else f"{name}: {'; '.join(expressions(view.spec))} ({zone.name})"
    if not view.rows:
        return [f"{title}: no runs yet"]
    plural = "run" if len(view.rows) == 1 else "runs"
    table = [list(HISTORY_COLUMNS)] + [
        [r.run or "-", r.reason, both_times(r.nominal, zone), _actual(r.actual, zone), str(r.attempts),
         str(r.exit), r.outcome if r.note is None else f"{r.outcome} ({r.note})"] for r in view.rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(HISTORY_COLUMNS) - 1)]
    lines = [f"{title}, the last {len(view.rows)} {plural}, oldest first"]
    lines += ["  ".join([*(cell.ljust(width) for cell, width in zip(row, widths)), row[-1]]) for row in table]
    return lines


def _actual(stamp: str | None, zone: AnyZone) -> str:
    """The executor's start stamp (``2024-03-01T00:05:02Z``) in the views' one time format."""
    if stamp is None:
        return "-"
    try:
        moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        return str(stamp)
    return both_times(int(moment.timestamp() // 60), zone)


# -- next ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NextTimes:
    spec: JobSpec
    times: list[int]
    suspension: Suspension | None = None  # suspended: the times are those it fires at if resumed by then

    def header(self) -> str | None:
        """The schedule's expressions, exclusions and daylight-saving rule, for one whose times are
        more than one expression's under the default rule (None for that one)."""
        spec = self.spec
        if not spec.options.more_schedules and _rules(spec) is None:
            return None
        return describe_schedule(spec)

    def notice(self) -> str | None:
        """What to say before the times of a suspended schedule; None for one that fires."""
        if self.suspension is None:
            return None
        return (f"{self.spec.name} is {_suspended_line(self.suspension, self.spec.options.tz)}; "
                "it fires at these times only if resumed by then")


def next_times(folder: Path, name: str, count: int = 5, now: int | None = None) -> NextTimes:
    """The next fire times of a schedule after ``now`` (and after the runner's last step): from the
    book, or, for a schedule the book does not have yet (the runner never ran, a new manifest),
    from its manifest, anchored at ``now`` as the runner's first sight of it would be. A
    suspended schedule's are the times it would fire at once resumed, with its suspension."""
    data = book_data(folder)
    book = None if data is None else _decode(folder, data)
    job = None if book is None else book.state.jobs.get(name)
    if book is not None and job is not None:
        spec = job.spec
        start = max(book.state.clock or spec.created_at, now if now is not None else 0)
        suspension = _book_suspension(book, _pauses(folder), name)
    else:
        start = _wall_minute() if now is None else now
        manifests, spec = _defined(folder, name, start)
        suspension = _manifest_suspension(manifests, _pauses(folder), name)
    return NextTimes(spec, _timeline(spec).upcoming(start, count), suspension)


def next_lines(folder: Path, name: str, count: int = 5, now: int | None = None) -> list[str]:
    """The times, one a line, after a line saying so when the schedule is suspended."""
    found = next_times(folder, name, count, now)
    header, notice = found.header(), found.notice()
    return ([] if header is None else [header]) + ([] if notice is None else [f"{notice}:"]) + [
        both_times(t, found.spec.options.tz) for t in found.times]


def _manifest_spec(folder: Path, name: str, anchor: int) -> JobSpec:
    """A schedule's spec from its manifest; a ViewError naming the file, field and reason if it is bad."""
    return _defined(folder, name, anchor)[1]


def _defined(folder: Path, name: str, anchor: int) -> tuple[Manifests, JobSpec]:
    """The folder's manifests and the spec of ``name`` in them; a ViewError as for ``_manifest_spec``."""
    manifests = read_manifests(folder, anchor)
    if name in manifests.specs:
        return manifests, manifests.specs[name]
    bad = next((i for i in manifests.invalid if i.schedule == name), None)
    if bad is not None:
        raise ViewError(f"{bad.line()} (nothing fires for {name!r} until it is fixed)")
    raise ViewError(_unknown(name, folder, sorted(manifests.specs)))


def _unknown(name: str, folder: Path, known: list[str]) -> str:
    if not known:
        return f"no schedule named {name!r} in {folder}: it has no valid CronSchedule manifest"
    return f"no schedule named {name!r} in {folder}; its manifests define: {', '.join(known)}"


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
    _load(folder)  # the folder exists, and a runner may fire from its book
    _manifest_spec(folder, name, _wall_minute() if now is None else now)
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
    return Triggered(path, "queued: the runner starts it within a second")


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
    _load(folder)
    now = _wall_minute() if now is None else now
    manifests, spec = _defined(folder, name, now)  # the runner reads the manifest before the request
    data = book_data(folder)
    book = None if data is None else _decode(folder, data)
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
    suspension = (_book_suspension(book, _pauses(folder), name) if book is not None
                  else _manifest_suspension(manifests, _pauses(folder), name))
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
        path = backfills.write_request(folder, backfills.Request(name, start, end))
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
    manifests, spec = _defined(folder, name, int(seconds // 60))
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
        said += f"; {'already ' if not was else ''}since {_actual(since, spec.options.tz)}{was}"
    if name in manifests.suspended:
        said += f"; its manifest {manifests.files[name]} says spec.suspend: true as well"
    return Paused(path, said)


def resume(folder: Path, name: str, now: int | None = None) -> Paused:
    """Lift ``cronctl suspend``'s pause of ``name`` and say when it fires next; refused (a ViewError)
    when its manifest says spec.suspend: true, which only its owner lifts, in the manifest."""
    check_folder(folder)
    now = _wall_minute() if now is None else now
    manifests, spec = _defined(folder, name, now)
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
        found = NextTimes(spec, _timeline(spec).upcoming(now, 1))
    zone = found.spec.options.tz
    then = f"next fire {both_times(found.times[0], zone)}" if found.times else "it fires no more"
    return Paused(path, f"{name} resumed; {then}" if removed else f"{name} was not suspended; {then}")
