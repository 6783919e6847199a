"""A runner's folder as the views read it: its book, its manifests, its pause records, and each
schedule's view (``FolderView``, ``ScheduleView``).

The views read the book without the lock (it is rewritten whole and atomically, so a reader
sees a complete book) and never write it. Before the runner has ever run in a folder there is
no book, and the views read the manifests instead, with the runner's reader
(``load_definitions``, then ``read_manifest``). Whatever keeps a view from answering (no
folder, a book that is unreadable, of a newer version or does not parse, an unknown schedule)
is a :class:`ViewError` with one line for people and an exit code.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core.dst import DaylightSaving
from ..core.errors import CronctlError
from ..core.schedule import Timeline
from ..core.spec import JobSpec
from ..core.state import Backfill, ControllerState, Job
from ..core.times import format_time
from ..core.upcoming import upcoming
from ..core.window import ended_reason, remaining_runs
from ..core.zones import AnyZone
from ..manifest import API_VERSION, KIND, read_manifest
from .book import Book, Loaded, Status
from .definitions import load_definitions
from .firing import SWITCH_OFF_FILE, Firing, Overflowed, both_times, skipped_count
from .lock import RunnerLock
from .pauses import read_pauses
from .values import Pause, Suspension, suspension_of

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


def load_book(folder: Path) -> Loaded:
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
    loaded = load_book(folder)
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
    pools: dict[str, int] = field(default_factory=dict)  # the folder's CronPools -> workers
    pool_of: dict[str, str] = field(default_factory=dict)  # schedule -> the pool it names
    waits: dict[str, dict[str, Any]] = field(default_factory=dict)  # Forbid times waiting (forbid_waits)


def decode(folder: Path, data: dict[str, Any]) -> Decoded:
    try:
        manifests = data.get("manifests") or {}  # a book written before they were kept has none
        journal = data.get("journal", {})
        if not isinstance(journal, dict) or not all(isinstance(rows, list) for rows in journal.values()):
            raise TypeError("journal: not a mapping of lists")
        state = ControllerState.from_json(data["controller"])
        return Decoded(
            state=state,
            firings=[Firing(**f) for f in data.get("firings", [])],
            journal=journal,
            overflows={name: Overflowed(**o) for name, o in data.get("overflows", {}).items()},
            workers=int(data.get("workers", 1)),
            invalid=[Invalid(str(i["file"]), i.get("schedule"), str(i["message"]))
                     for i in manifests.get("invalid", [])],
            # A schedule the controller has is not retired, whatever the list says: its manifest was
            # put back (a git checkout, an rsync) and it fires again.
            retired={str(r["schedule"]): int(r["at"]) for r in manifests.get("retired", [])
                     if str(r["schedule"]) not in state.jobs},
            suspended={str(e["schedule"]): {"since": None if e.get("since") is None else int(e["since"]),
                                            "reason": None if e.get("reason") is None else str(e["reason"])}
                       for e in manifests.get("suspended", [])},
            pools={str(name): int(workers) for name, workers in (data.get("pools") or {}).get("workers", {}).items()},
            pool_of={str(name): str(pool) for name, pool in (data.get("pools") or {}).get("schedules", {}).items()},
            waits={str(name): dict(record) for name, record in (data.get("waits") or {}).items()})
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ViewError(f"{folder / 'cronctl.json'}: the book has a field this cronctl cannot read "
                        f"({type(error).__name__}: {error})") from None


def timeline_of(spec: JobSpec) -> Timeline:
    return spec.timeline()


def wall_minute() -> int:
    """Now, for a caller that passed no ``now`` (the command always passes its clock's)."""
    return int(time.time() // 60)


def rfc3339(minute: int | None) -> str | None:
    """A minute as ``2024-03-01T00:05:00Z``."""
    return None if minute is None else f"{format_time(minute)}:00Z"


def expressions(spec: JobSpec) -> list[str]:
    """Every expression of a schedule: ``spec.schedule``, or each of ``spec.schedules``."""
    return [spec.expression, *spec.options.more_schedules]


def rules_of(spec: JobSpec) -> str | None:
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
    rules = rules_of(spec)
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
    scheduled_runs: int = 0  # runs launched for schedule times: what spec.maxRuns counts
    last_success: int | None = None  # when the newest succeeded run ended
    last_failure: int | None = None  # when the newest failed or timed-out run ended
    consecutive_failures: int = 0
    pool: str | None = None  # the CronPool its spec.pool names
    pool_workers: int | None = None  # that pool's workers (None: not in the folder)
    pool_busy: int = 0  # runs of that pool's schedules that run now

    @property
    def ended(self) -> str | None:
        """Why it fires no more (EndTimeReached, MaxRunsReached), for its window or run limit."""
        options = self.spec.options
        return ended_reason(options.window, options.max_runs, self.scheduled_runs, self.next)

    @property
    def remaining_runs(self) -> int | None:
        return remaining_runs(self.spec.options.max_runs, self.scheduled_runs)

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
        return unstarted_view(folder, holder, switched_off, now)
    book = decode(folder, data)
    pauses = pause_records(folder)
    invalid_names = {i.schedule for i in book.invalid}
    views = [_schedule_view(book, job, pauses, invalid=job.spec.name in invalid_names)
             for job in book.state.jobs.values()]
    if now is not None and holder is None and not switched_off:  # no runner fires them: late ones are overdue
        for view in views:
            view.overdue_since = _overdue_since(view, now)
    busy = len({f.slot for f in book.firings if f.slot is not None})
    return FolderView(folder, holder, switched_off, True, book.workers, busy, book.state.clock, views,
                      book.invalid, book.retired)


def _schedule_view(book: Decoded, job: Job, pauses: dict[str, Pause], invalid: bool) -> ScheduleView:
    """One schedule as the book has it: its times, its firings by what they wait for, its pool."""
    spec = job.spec
    mine = [f for f in book.firings if f.schedule == spec.name]
    view = ScheduleView(spec, job.state.last_schedule,
                        upcoming(spec, job.state, timeline_of(spec), book.state.clock or spec.created_at).time,
                        skipped=skipped_count(job.state, book.waits.get(spec.name)),
                        running=[f for f in mine if f.slot is not None],
                        queued=[f for f in mine if f.startable],
                        retrying=[f for f in mine if f.retry_due is not None],
                        overflow=book.overflows.get(spec.name),
                        invalid=invalid, retired_at=book.retired.get(spec.name),
                        suspension=book_suspension(book, pauses, spec.name),
                        backfill=job.state.backfill, active=tuple(job.state.active),
                        scheduled_runs=job.state.scheduled_runs, last_success=job.state.last_success,
                        last_failure=job.state.last_failure,
                        consecutive_failures=job.state.consecutive_failures)
    view.pool = book.pool_of.get(spec.name)
    if view.pool is not None:
        view.pool_workers = book.pools.get(view.pool)
        view.pool_busy = sum(1 for f in book.firings if f.slot is not None and book.pool_of.get(f.schedule)
                             == view.pool)
    if view.ended is not None:
        view.next = None
    return view


def _overdue_since(view: ScheduleView, now: int) -> int | None:
    """The next time, if it passed more than ``OVERDUE_AFTER`` ago and nothing holds the schedule."""
    held = view.invalid or view.suspension is not None or view.retired_at is not None
    if not held and view.next is not None and now - view.next > OVERDUE_AFTER:
        return view.next
    return None


def unstarted_view(folder: Path, holder: dict[str, Any] | None, switched_off: bool,
                    now: int | None) -> FolderView:
    """No book yet: the schedules the manifests define, as a first start would see them."""
    anchor = now if now is not None else wall_minute()
    manifests = read_manifests(folder, anchor)
    pauses = pause_records(folder)
    views = [ScheduleView(spec, None, timeline_of(spec).next_after(anchor),
                          suspension=manifest_suspension(manifests, pauses, spec.name))
             for spec in manifests.specs.values()]
    return FolderView(folder, holder, switched_off, False, 0, 0, None, views, manifests.invalid, {})


def pause_records(folder: Path) -> dict[str, Pause]:
    try:
        return read_pauses(folder)
    except OSError as error:
        raise ViewError(f"{folder}: cannot read its pause records: {error.strerror or error}") from None


def book_suspension(book: Decoded, pauses: dict[str, Pause], name: str) -> Suspension | None:
    """A schedule's suspension: its pause record as it is now, its manifest's as the runner last saw it."""
    seen = book.suspended.get(name)
    return suspension_of(pauses.get(name), seen is not None, None if seen is None else seen["reason"],
                         None if seen is None else rfc3339(seen["since"]))


def manifest_suspension(manifests: Manifests, pauses: dict[str, Pause], name: str) -> Suspension | None:
    """A schedule's suspension before the runner ever ran: since when its manifest says so is not known."""
    return suspension_of(pauses.get(name), name in manifests.suspended, manifests.suspended.get(name), None)


def backfill_waits(view: ScheduleView, switched_off: bool) -> str | None:
    """Why a backfill's runs wait, when its schedule fires nothing."""
    if switched_off:
        return "it waits while the node switch is off"
    if view.suspension is not None:
        return "it waits while the schedule is suspended"
    if view.invalid:
        return "it waits until the manifest is fixed"
    return None


def actual_time(stamp: str | None, zone: AnyZone) -> str:
    """The executor's start stamp (``2024-03-01T00:05:02Z``) in the views' one time format."""
    if stamp is None:
        return "-"
    try:
        moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        return str(stamp)
    return both_times(int(moment.timestamp() // 60), zone)


def manifest_spec(folder: Path, name: str, anchor: int) -> JobSpec:
    """A schedule's spec from its manifest; a ViewError naming the file, field and reason if it is bad."""
    return defined(folder, name, anchor)[1]


def defined(folder: Path, name: str, anchor: int) -> tuple[Manifests, JobSpec]:
    """The folder's manifests and the spec of ``name`` in them; a ViewError as for ``manifest_spec``."""
    manifests = read_manifests(folder, anchor)
    if name in manifests.specs:
        return manifests, manifests.specs[name]
    bad = next((i for i in manifests.invalid if i.schedule == name), None)
    if bad is not None:
        raise ViewError(f"{bad.line()} (nothing fires for {name!r} until it is fixed)")
    raise ViewError(unknown_schedule(name, folder, sorted(manifests.specs)))


EXIT_INVALID = 1  # a schedule whose manifest is invalid has no answer: nothing fires


def refuse_invalid(folder: Path, name: str, now: int) -> None:
    """A ViewError (exit 1) naming the file, the field and the reason when ``name``'s manifest is
    invalid now, whatever a book says it fired at before: the runner holds it, nothing fires."""
    try:
        manifests = read_manifests(folder, now)
    except ViewError:
        return  # a folder that cannot be read: the book's answer stands
    if name in manifests.specs:
        return
    bad = next((i for i in manifests.invalid if i.schedule == name), None)
    if bad is not None:
        raise ViewError(f"{bad.line()} (nothing fires for {name!r} until it is fixed)", EXIT_INVALID)


def unknown_schedule(name: str, folder: Path, known: list[str]) -> str:
    if not known:
        return f"no schedule named {name!r} in {folder}: it has no valid CronSchedule manifest"
    return f"no schedule named {name!r} in {folder}; its manifests define: {', '.join(known)}"


def suspended_line(suspension: Suspension, zone: AnyZone) -> str:
    """``suspended since 2024-03-01 00:10 UTC by cronctl suspend: "db migration"``."""
    since = f" since {actual_time(suspension.since, zone)}" if suspension.since else ""
    return f"suspended{since} {suspension.describe()}"
