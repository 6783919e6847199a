"""The single-node runner: the core's decisions carried out as local processes.

``Runner.step`` is one turn of the loop: read the manifests (only those that
changed), consume manual triggers, let the in-memory controller
(``cronctl.core``) step, hand due firings to free worker slots, stop runs the
core timed out or replaced, and record how runs ended. Everything it must not
forget lives in the book (``cronctl.json``): the controller's state, the
firings waiting for a slot, running, or waiting for their next attempt, each
schedule's last 200 runs, the overflow of a schedule that has not fired on
time since, and what became of the folder's manifests.

The core decides and applies its decisions to the schedules' state
(``Controller.step``); the runner only carries out their effects, and only
once: a decision that repeats an earlier tick's (``Applied.news`` False: a
schedule time skipped again a second later, an overflow that goes on) has
none. So a skipped schedule time is one history row, and an overflow one
line on the runner's output, kept for ``cronctl status`` until a scheduled
launch of a later tick; the launches that follow an overflow are carried out
as any launch. A firing's reason (scheduled, catch-up, manual) is the core's.

Retries (``maxRetries``, ``retryDelayMinutes``) are the core's: a failed
attempt with retries left puts the run in ``retry_pending`` and the firing
stays in the book without a slot (``retry_due`` set, not startable) until a
later tick decides ``Retry``; the firing then takes the next attempt number
and waits for a free slot like any due firing. A timed-out run is never
retried (the timeout counts from the run's first launch, across attempts);
a replace stops the replaced run's process (outcome stopped), or cancels a
run that has none (waiting for a slot or a retry: canceled). History records a
run once, when it is over, with the attempts it took.

Manifests, as the operator treats CronSchedule objects. Each is read with
``cronctl.manifest.read_manifest`` (the CRD's schema, then the core's
checks). A manifest that becomes invalid holds its schedule as a suspension
does (``transitions.hold``: no firing, no missed run counted) while its runs
go on under their timeouts; it fires again once fixed. A schedule whose
manifest is gone (the file deleted, or the schedule renamed: a new name is a
new schedule) is retired at the next step, as deleting a CronSchedule
garbage-collects its Jobs: its running processes are stopped (SIGTERM, then
SIGKILL after the grace), its waiting firings canceled, each recorded, and it
leaves the controller's state. The book's ``manifests`` says which manifests
are invalid and which schedules were retired (the last 20).

Crash safety rests on the executor's key (schedule, nominal time, attempt):
a crash between starting a process and saving the book makes the next
runner decide the same launch (or retry) again, and ``Executor.start`` then
returns the run that already exists instead of starting a second process.
Outcomes are acknowledged to the executor only after the book that records
them is saved; an end reported again after a restart is only acknowledged.
A manual firing has its own key: the runs of one trigger file live in an
executor folder of their own (``DIR/manual/<trigger id>/``), whatever else
runs that minute; the file is deleted once the book that records its firing
is saved, so a crash in between consumes it again into the same key.

Backfills (``cronctl backfill``, :mod:`.backfills`): a request file in
``DIR/backfills/`` is handed to the core (``Controller.backfill``, with the
file's identity as the request), which keeps the backfill in the schedule's
state, so in the book, and launches its times one at a time, oldest first,
through the policy (``Launch`` with reason backfill and the time's own
nominal minute). Each run lives in the executor folder of its request
(``DIR/backfill/<request id>/``), so it never shares a key with the
scheduled run of that minute. The file is deleted once the book that
records the backfill is saved; a request the core refuses is said and moved
aside. A backfill's start and end are one line each, its launches the usual
"fired" lines. While its schedule fires nothing (suspended, its manifest
invalid, the node switch off) its runs wait, as on the operator.

Suspension, as ``spec.suspend: true`` does on the operator: a schedule
whose manifest says so, or that has a pause record (``DIR/paused/<name>.json``,
written by ``cronctl suspend`` and deleted by ``cronctl resume``; see
:mod:`.pauses`), fires nothing scheduled and counts no missed run for the
time it is off (``transitions.hold``, as for an invalid manifest); manual
triggers still run, as they did for a suspended manifest. The records are
read at every step (only those that changed), as trigger files are, and a
record that does not read pauses its schedule all the same. Each schedule
that becomes suspended (or whose suspension changes: its reason, by whom)
or resumed is one line; the first step says nothing of the schedules
suspended already. The book's ``manifests.suspended`` keeps since when each
manifest suspension was seen (None: since before this runner saw it), for
``cronctl status``. A retired schedule's pause record is deleted with it, as
deleting a CronSchedule takes its ``spec.suspend`` along.

Faults are reported, never fatal: a broken trigger file is moved aside, an
item of the book that does not read is left out, and a save the file system
refuses (a full disk, a read-only folder) is said once and tried again at
every step, with everything kept in memory meanwhile (nothing is
acknowledged or deleted before the book that records it is saved).

Every line the runner says is one fact (a firing, an end, a timeout, a
retry, a takeover, a manifest or a fault); with ``log_format="json"`` each is
one JSON object with the same facts as fields.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from datetime import datetime, timezone
from itertools import groupby
from pathlib import Path
from typing import Any, Callable

from ..core.backfill import BackfillError
from ..core.controller import Controller
from ..core.schedule import Timeline
from ..core.spec import JobSpec
from ..core.state import FAILED, RETRY_PENDING, RUNNING, SUCCEEDED, TIMED_OUT
from ..core.tick import Coalesce, Enqueue, Launch, Overflow, Replace, Retry, Skip, start_time, window_start
from ..core.transitions import BACKFILL, Applied, apply, hold
from ..manifest import read_manifest
from . import backfills
from .book import Book, Status
from .definitions import API_VERSION, KIND, Definition, Judge, ManifestFolder, image_notice
from .executor import RUNS_DIR, Ended, Executor, RunKey, RunRequest, nominal_iso
from .files import read_json, remove_tree, utc_iso
from .firing import (BACKFILL_DIR, MANUAL_DIR, SWITCH_OFF_FILE, TRIGGERS_DIR, BookContents, Firing, Overflowed,
                     Unreadable, both_times, origin_of, read_book)
from .lock import DEFAULT_RETRY_SECONDS, RunnerLock, describe_holder, runner_identity, wait_for_lock
from .pauses import BY_COMMAND, Pause, PauseFolder, Suspension, pause_path, remove_pause, suspension_of
from .slots import SlotPool, order_due
from .wrapper import DEFAULT_MAX_LOG_BYTES

HISTORY_LIMIT = 200
RETIRED_LIMIT = 20  # retired schedules the book names (and keeps the history of)
SCHEDULED = "scheduled"
MANUAL = "manual"
WAKE_SECONDS = 0.01  # how often a resting runner looks whether a run of its own ended
LOG_FORMATS = ("text", "json")
RETIRED_NOTE = "its schedule was retired: the manifest was deleted, or the schedule renamed"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def job_spec(definition: Definition, created_at: int, index: int) -> JobSpec:
    """The core's view of a manifest, judged by the CRD's schema and the core's checks
    (``read_manifest``), as the operator's API server and reader judge it."""
    body = definition.body or {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": definition.name},
                               "spec": definition.spec}
    return dataclasses.replace(read_manifest(body, created_at).job, index=index)


def trigger_id(path: Path, mtime_ns: int) -> str:
    """A trigger file's identity: its name and modification time, so that a file consumed
    again after a crash is the same trigger and a file made again under a used name is not."""
    stem = _UNSAFE.sub("-", path.stem).lstrip(".") or "trigger"
    return f"{stem}.{mtime_ns}"


class Runner:
    def __init__(self, folder: Path, minute: Callable[[], int], workers: int,
                 say: Callable[[str], None] = print, grace_seconds: float = 10.0,
                 seconds: Callable[[], float] | None = None, log_format: str = "text",
                 max_log_bytes: int = DEFAULT_MAX_LOG_BYTES) -> None:
        if log_format not in LOG_FORMATS:
            raise ValueError(f"log format {log_format!r}: must be one of {', '.join(LOG_FORMATS)}")
        self.folder = folder
        self.minute = minute
        # The second within the clock's minute, for jitter (wall time unless a test says otherwise).
        self.seconds = seconds or (lambda: minute() * 60 + time.time() % 60)
        self.say = say
        self.log_format = log_format
        self.grace_seconds = grace_seconds
        self.book = Book(folder)
        self.lock = RunnerLock(folder, runner_identity())
        self.max_log_bytes = max_log_bytes  # each stream of each run (the executor's output cap)
        self.executor = Executor(folder, max_log_bytes=max_log_bytes)
        # A manual firing's or a backfill's own executor, by its folder (Firing.home: manual/<trigger id>,
        # backfill/<request id>).
        self._homes: dict[str, Executor] = {}
        self.slots = SlotPool(workers)
        self.controller = Controller()
        self.firings: dict[str, Firing] = {}
        self.journal: dict[str, list[dict[str, Any]]] = {}
        # What a waiting firing will run: the command as it was when the firing became due.
        self.snapshots: dict[str, dict[str, Any]] = {}
        # Per schedule, its last overflow (Overflowed.to_json), until it fires on time again.
        self.overflows: dict[str, dict[str, Any]] = {}
        self.definitions: dict[str, Definition] = {}  # the last valid one of each schedule
        self.manifests = ManifestFolder(folder)
        self.judge = Judge()
        self.sources: dict[str, str] = {}  # schedule -> the name of the manifest file it was read from
        self.invalid: list[dict[str, Any]] = []  # the book's manifests.invalid
        self.retired: list[dict[str, Any]] = []  # the book's manifests.retired
        self._held: dict[str, str] = {}  # known schedules whose manifest is invalid -> its message
        self._by_manifest: dict[str, str | None] = {}  # manifests saying spec.suspend: true -> suspendReason
        # The book's manifests.suspended: schedule -> {"since": minute or None (not known), "reason": ...}.
        self.suspended: dict[str, dict[str, Any]] = {}
        self.pauses = PauseFolder(folder)
        self._pauses: dict[str, Pause] = {}  # cronctl suspend's pause records, by schedule
        self._suspensions: dict[str, Suspension] = {}  # the schedules suspended at the last step
        self._suspensions_read = False  # the first step says nothing of schedules suspended already
        self._imaged: set[str] = set()  # schedules the notice that images are ignored named
        self._switched_off: bool | None = None
        self._judged = False
        self.may_fire = True
        self._unreadable = False  # the book could not be read: load it again at the next step
        self._read_only = False  # another runner held the lock when this one tried
        self._noticed: set[str] = set()
        self._faults: dict[str, str] = {}  # what failed -> the line said about it, until it works again
        self._unsaved = False  # a save failed: save again at the next step
        self._to_acknowledge: list[tuple[str | None, RunKey]] = []  # ends recorded, acknowledged once saved
        self._taken: dict[str, Path] = {}  # trigger and backfill files consumed, deleted once the book is saved
        self._left_broken: set[str] = set()  # broken trigger and backfill files that could not be moved aside
        self._holding: set[str] = set()  # the schedules that fire nothing at this step: their backfills wait
        self._backfills_said: dict[str, tuple[str, bool]] = {}  # schedule -> (request, finished) as last said

    # -- start ----------------------------------------------------------------------------

    def open(self) -> bool:
        """Take the lock and load the book; False when another runner holds the lock."""
        if not self.lock.try_acquire():
            if not self._read_only:
                self._event("read_only", f"read-only: {describe_holder(self.lock.holder())} fires these "
                                         "schedules; trying again every 60 seconds")
            self._read_only = True
            return False
        if self._read_only:
            self._event("takeover", f"took over: the runner that held {self.lock.path.name} ended; this "
                                    f"runner (pid {os.getpid()}) fires the schedules now")
        try:
            self.book.remove_stale_temps()  # of a save that crashed
        except OSError:
            pass
        self._load()
        return True

    def _load(self) -> None:
        loaded = self.book.load()
        self._unreadable = loaded.status is Status.UNREADABLE
        if loaded.message:
            self._notice(loaded.message, "warning" if loaded.status is not Status.MISSING else "info")
        if not loaded.may_fire:
            self.may_fire = False
            return
        self.may_fire = True
        try:
            contents, problems = read_book(loaded.data) if loaded.status is Status.OK else (BookContents(), [])
        except Unreadable as error:
            self._notice(self.book.move_aside(str(error)).message, "warning")
            contents, problems = BookContents(), []
        for problem in problems:
            self._notice(f"{self.book.path}: {problem}", "warning")
        self.controller = Controller(contents.state)
        self._backfills_said = self._backfills_now()  # what a runner before this one said already
        self.firings = contents.firings
        self.journal, self.snapshots, self.overflows = contents.journal, contents.snapshots, contents.overflows
        self.invalid, self.retired, self.sources = contents.invalid, contents.retired, contents.sources
        self.suspended = {entry["schedule"]: {"since": entry.get("since"), "reason": entry.get("reason")}
                          for entry in contents.suspended}
        self._adopt()

    def _adopt(self) -> None:
        """Watch the runs a runner before this one left, and give their firings their slots."""
        self.executor.adopt()
        for home in self._home_folders():
            executor = Executor(self.folder / home, max_log_bytes=self.max_log_bytes)
            if executor.adopt():
                self._homes[home] = executor
        for firing in self.firings.values():
            if firing.slot is None:
                continue
            try:
                self.slots.take(firing.slot)
            except ValueError as error:  # a book edited by hand: the firing queues for a slot again
                self._notice(f"{firing.run_id}: {error}; it takes a free slot again", "warning")
                firing.slot = None
        state = self.controller.state
        for firing in self.firings.values():
            if firing.run_id not in state.runs and firing.stopping is None:
                firing.note = "its run was not in the book's state (an entry left out)"
        firing_of = {firing.run_id for firing in self.firings.values()}
        for run in [r for r in state.runs.values() if r.state == RUNNING and r.id not in firing_of]:
            self._firing_from_folder(run.id)

    def _firing_from_folder(self, run_id: str) -> None:
        """A running run the book has no firing for (an entry left out): rebuilt from its
        process's folder, or, when it never had one, canceled."""
        run = self.controller.state.runs[run_id]
        backfill = self.controller.state.jobs[run.job].state.backfill
        home = None if backfill is None or backfill.running != run.id else f"{BACKFILL_DIR}/{backfill.request}"
        request = None
        try:
            request = read_json(self._executor(home).run_dir(RunKey(run.job, run.scheduled_for, run.attempt))
                                / "request.json")
        except (OSError, ValueError):
            pass
        if isinstance(request, dict) and isinstance(request.get("command"), list):
            manual, of_backfill = origin_of(home)
            self.firings[run.id] = Firing(run.id, run.job, run.scheduled_for, request.get("reason") or SCHEDULED,
                                          request["command"], request.get("args") or [],
                                          request.get("env") or {}, start_at=run.scheduled_for * 60,
                                          attempt=run.attempt, manual=manual, backfill=of_backfill,
                                          cwd=request.get("cwd"),
                                          active_deadline_seconds=request.get("active_deadline_seconds"))
            return
        self._drop_run(run.job, run.id)
        self._remember(run.job, {"run": run.id, "reason": SCHEDULED, "nominal": run.scheduled_for, "actual": None,
                                 "attempts": 0, "outcome": "canceled", "finished": run.launched_at,
                                 "note": "its firing was not in the book (an entry left out)"})

    # -- one turn ---------------------------------------------------------------------------

    def step(self) -> None:
        if self._unreadable:
            self._load()
        if not self.may_fire:
            return
        now = self.minute()
        if self.controller.state.clock is not None and now < self.controller.state.clock:
            now = self.controller.state.clock  # a clock that went back fires nothing again
        changed = self._sync_definitions(now)
        changed |= self._sync_suspensions(now)
        changed |= self._hold(now)
        changed |= self._take_triggers(now)
        changed |= self._take_backfills(now)
        # Runs end before the tick decides, as in the harness (finish, then tick): a run over by
        # now frees a Forbid schedule's time, and the core's timeouts come first (advance), so an
        # end reported at the very expiry is too late.
        self.controller.advance(now)
        changed |= self._record_ends(now)
        applied = self.controller.step(now, holding=self._holding)  # their backfills wait
        self._carry_out_tick(applied, now)
        changed |= any(item.news for item in applied)
        changed |= self._stop_expired()
        changed |= self._drop_expired(now)
        changed |= self._start_waiting(now)
        self._say_backfills()
        if changed or self._unsaved:
            self._save_and_settle()

    def turn(self) -> None:
        """A step of the loop: a fault no part of the step handles is said once, and the next
        turn goes on (the book, saved at the end of a step, is as a crash would leave it)."""
        try:
            self.step()
        except Exception as error:  # the runner outlives what one step could not do
            self._fault("step", f"a step failed ({type(error).__name__}: {error}); the runner goes on")
        else:
            self._clear_fault("step")

    def rest(self, seconds: float, sleep: Callable[[float], None] = time.sleep) -> None:
        """Wait until the next turn: ``seconds``, or less once a run this runner started ends, so
        that its worker takes the next waiting run at once (within ``WAKE_SECONDS``), not at the
        next poll."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if any(executor.newly_exited() for executor in [self.executor, *self._homes.values()]):
                return
            sleep(min(WAKE_SECONDS, max(deadline - time.monotonic(), 0.0)))

    def save(self) -> None:
        """Write the book (raises OSError as the file system does)."""
        self.book.save({"controller": self.controller.state.to_json(),
                        "firings": [firing.to_json() for firing in self.firings.values()],
                        "journal": self.journal, "snapshots": self.snapshots, "overflows": self.overflows,
                        "manifests": {"invalid": self.invalid, "retired": self.retired,
                                      "suspended": [{"schedule": name, **entry}
                                                    for name, entry in sorted(self.suspended.items())]},
                        "sources": self.sources, "workers": self.slots.size})

    def _save_and_settle(self) -> None:
        """Save the book; once it is saved, acknowledge the ends and delete the trigger files
        it records. A save that fails is said once and tried again at the next step."""
        try:
            self.save()
        except OSError as error:
            self._unsaved = True
            self._fault("save", f"cannot save the book {self.book.path}: {error.strerror or error}; the runner "
                                "goes on with what it has in memory and tries again every step")
            return
        self._unsaved = False
        if self._clear_fault("save"):
            self._event("saved", f"the book {self.book.path} is saved again; nothing was lost")
        keep: list[tuple[str | None, RunKey]] = []
        ended: set[str] = set()
        for home, key in self._to_acknowledge:
            try:
                self._executor(home).acknowledge(key)
                ended.add(key.schedule)
            except OSError:
                keep.append((home, key))  # said by the next save's fault, if the disk stays so
        self._to_acknowledge = keep
        for schedule in sorted(ended):
            self._prune(schedule)
        for name, path in list(self._taken.items()):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                continue
            del self._taken[name]
        for home in [h for h, executor in self._homes.items() if not executor.active()
                     and not any(f.home == h for f in self.firings.values())
                     and not any(h == pending for pending, _ in keep)]:
            del self._homes[home]

    # -- manifests -----------------------------------------------------------------------

    def _sync_definitions(self, now: int) -> bool:
        """Read the folder where it changed: add, edit, hold (invalid) or retire schedules."""
        try:
            loaded, changed = self.manifests.scan(self.sources)
        except OSError as error:
            self._fault("manifests", f"cannot read the manifests in {self.folder}: {error.strerror or error}; "
                                     "the schedules go on as last read")
            return False
        self._clear_fault("manifests")
        if not changed and self._judged:
            return False
        first, self._judged = not self._judged, True
        everyone = image_notice(loaded.definitions)
        for notice in loaded.notices:
            if notice != everyone:
                self._notice(notice)
        state = self.controller.state
        sources = dict(self.sources)
        verdict = self.judge(loaded, {name: self.sources.get(name) for name in state.jobs}, self.manifests.names)
        added = edited = False
        next_index = max((job.spec.index for job in state.jobs.values()), default=-1) + 1
        for name, (definition, read) in verdict.valid.items():
            job = state.jobs.get(name)
            anchor, index = (now, next_index) if job is None else (job.spec.created_at, job.spec.index)
            spec = dataclasses.replace(read.job, created_at=anchor, index=index)
            if not Timeline(spec.compiled, spec.created_at, spec.options.tz).fires:
                verdict.invalid[name] = (definition.file, f"{definition.file}: {KIND} {name!r}: spec.schedule: "
                                                          "never fires")
                continue
            if job is None:
                self.controller.add_job(spec)
                state.jobs[name].state.launched = self._last_number(name)  # run ids are never reused
                added, next_index = True, next_index + 1
            elif spec != job.spec:
                job.spec = spec  # an edit changes later firings only
                edited = True
            self.definitions[name] = definition
            self.sources[name] = definition.file.name
        for name in [n for n in verdict.invalid if n in verdict.valid]:
            del verdict.valid[name]
        images = [d for name, (d, _) in verdict.valid.items() if d.image and name not in self._imaged]
        if images:  # said once for each schedule, as it first loads
            self._notice(image_notice(images) or "")
            self._imaged.update(d.name for d in images)
        gone = [name for name in state.jobs if name not in verdict.valid and name not in verdict.invalid]
        for name in gone:
            self._retire(name, now)
        if edited or gone:
            self.controller = Controller(state)
        self._by_manifest = {name: read.suspend_reason for name, (_, read) in verdict.valid.items() if read.suspend}
        self._held = {name: message for name, (_, message) in verdict.invalid.items() if name in state.jobs}
        for name in self._held:
            self.sources.setdefault(name, verdict.invalid[name][0].name)
        invalid: list[dict[str, Any]] = [{"file": str(file), "schedule": name, "message": message}
                                         for name, (file, message) in sorted(verdict.invalid.items())]
        invalid += [{"file": str(error.file), "schedule": None, "message": str(error)} for error in verdict.others]
        self._say_manifests(invalid, verdict.valid, first)
        news = invalid != self.invalid or self.sources != sources
        self.invalid = invalid
        return added or edited or bool(gone) or news

    def _say_manifests(self, invalid: list[dict[str, Any]], valid: dict[str, Any], first: bool) -> None:
        """A line for each manifest that became invalid (each one at the first reading),
        and for each that is valid again."""
        before = set() if first else {entry["message"] for entry in self.invalid}
        for entry in invalid:
            if entry["message"] in before:
                continue
            if entry["schedule"] in self.controller.state.jobs:
                then = "its schedule does not fire until the manifest is fixed"
            elif entry["schedule"] is not None:
                then = "not loaded until it is fixed"
            else:
                then = "ignored"
            self._event("invalid", f"{entry['message']} ({then})", "warning", schedule=entry["schedule"],
                        file=entry["file"])
        for entry in self.invalid:
            name = entry["schedule"]
            if name in valid and name in self.controller.state.jobs:
                self._event("valid", f"{name}: the manifest {self.definitions[name].file} is valid again; "
                                     "the schedule fires again", schedule=name)

    def _last_number(self, name: str) -> int:
        """The highest run number a schedule of this name had (a retired one, say), so that a
        new schedule of the name starts after it and no two runs share an id."""
        prefix = f"{name}-"
        ids = [f.run_id for f in self.firings.values() if f.schedule == name]
        ids += [entry["run"] for entry in self.journal.get(name, []) if entry.get("run")]
        numbers = [int(run_id[len(prefix):]) for run_id in ids
                   if run_id.startswith(prefix) and run_id[len(prefix):].isdigit()]
        return max(numbers, default=0)

    def _retire(self, name: str, now: int) -> None:
        """The schedule's manifest is gone: its processes are stopped, its waiting firings
        canceled, each recorded, and the schedule leaves the controller's state."""
        state = self.controller.state
        job = state.jobs.pop(name)
        for run_id in [run.id for run in state.runs.values() if run.job == name]:
            del state.runs[run_id]
        stopping = []
        for firing in [f for f in self.firings.values() if f.schedule == name]:
            firing.note = RETIRED_NOTE
            if firing.slot is None:
                del self.firings[firing.run_id]
                self._remember(name, self._entry(firing, "canceled", now, firing.attempts_made))
            else:
                stopping.append(firing.run_id)
                if firing.stopping is None:
                    self._ask_stop(firing, "stopped")
        for queued in job.state.queue:
            self._remember(name, {"run": None, "reason": queued.reason, "nominal": queued.nominal, "actual": None,
                                  "attempts": 0, "outcome": "canceled", "finished": now, "note": RETIRED_NOTE})
        self.snapshots = {key: value for key, value in self.snapshots.items() if not key.startswith(f"{name}@")}
        self.overflows.pop(name, None)
        self.definitions.pop(name, None)
        file = self.sources.pop(name, None)
        self.retired = [entry for entry in self.retired if entry["schedule"] != name]
        self.retired.append({"schedule": name, "at": now})
        del self.retired[:-RETIRED_LIMIT]
        kept = set(state.jobs) | {entry["schedule"] for entry in self.retired}
        self.journal = {schedule: rows for schedule, rows in self.journal.items() if schedule in kept}
        what = f"stopping {', '.join(stopping)}" if stopping else "nothing was running"
        self.suspended.pop(name, None)
        self._suspensions.pop(name, None)
        try:
            if remove_pause(self.folder, name):  # as deleting a CronSchedule takes its spec.suspend along
                what += f"; its pause record {pause_path(self.folder, name)} is deleted"
        except OSError as error:
            self._fault(f"unpause {name}", f"{name}: cannot delete the pause record of a retired schedule "
                                           f"{pause_path(self.folder, name)}: {error.strerror or error}")
        self._event("retired", f"{name}: retired, its manifest{f' {file}' if file else ''} is gone (deleted, or the "
                               f"schedule renamed); {what}", schedule=name, file=file, stopping=stopping)

    def _drop_run(self, schedule: str, run_id: str) -> None:
        """A run the runner cannot carry out leaves the core (as a replaced one does)."""
        job = self.controller.state.jobs[schedule]
        apply(job.state, Replace(schedule, run_id))
        del self.controller.state.runs[run_id]
        self.controller = Controller(self.controller.state)

    def _hold(self, now: int) -> bool:
        """A suspended schedule, one whose manifest is invalid, or every schedule while the
        node switch is off, counts no missed run: its window of missed times starts after
        this minute."""
        switched_off = (self.folder / SWITCH_OFF_FILE).exists()
        if switched_off != self._switched_off:
            if switched_off:
                self._event("switch", f"the node switch is off ({SWITCH_OFF_FILE} exists): no schedule fires, "
                                      "manual triggers included, and the time it is off counts no missed run",
                            switch="off")
            elif self._switched_off is not None:
                self._event("switch", "the node switch is on again: the schedules fire", switch="on")
            self._switched_off = switched_off
        jobs = self.controller.state.jobs
        names = list(jobs) if switched_off else [n for n in (*self._held, *self._suspensions) if n in jobs]
        held = False
        for name in names:
            held |= hold(jobs[name].state, now)
        if held:
            self.controller = Controller(self.controller.state)  # re-derive who is due
        released, self._holding = self._holding - set(names), set(names)
        for name in sorted(released & set(jobs)):
            self.controller.wake(now, name)  # its backfill under way goes on at this step
        return held

    # -- suspensions ------------------------------------------------------------------------

    def _sync_suspensions(self, now: int) -> bool:
        """Read the pause records (those that changed), say each schedule that became suspended or
        resumed since the last step, and keep since when each manifest suspension was seen.
        Whether the book's ``manifests.suspended`` changed."""
        try:
            self._pauses, _ = self.pauses.scan()
        except OSError as error:
            self._fault("pauses", f"cannot read the pause records in {self.pauses.path}: {error.strerror or error}; "
                                  "the schedules stay suspended or not as last read")
        else:
            self._clear_fault("pauses")
        jobs = self.controller.state.jobs
        first, self._suspensions_read = not self._suspensions_read, True
        suspended: dict[str, dict[str, Any]] = {
            name: {"since": self.suspended.get(name, {}).get("since", None if first else now), "reason": reason}
            for name, reason in self._by_manifest.items() if name in jobs}
        for name in self._pauses:
            if name not in jobs:
                self._notice(f"{pause_path(self.folder, name)}: no schedule named {name!r}; the pause record is "
                             "ignored until a valid manifest defines it", "warning")
        before, self._suspensions = self._suspensions, {}
        for name in jobs:
            since = suspended.get(name, {}).get("since")
            found = suspension_of(self._pauses.get(name), name in suspended, self._by_manifest.get(name),
                                  None if since is None else nominal_iso(since))
            if found is not None:
                self._suspensions[name] = found
        if not first:
            for name, suspension in self._suspensions.items():
                if before.get(name) != suspension:
                    self._say_suspended(name, suspension)
            for name, was in before.items():
                if name not in self._suspensions and name in jobs:
                    self._say_resumed(name, was, now)
        changed, self.suspended = suspended != self.suspended, suspended
        return changed

    def _say_suspended(self, name: str, suspension: Suspension) -> None:
        lifted = f"'cronctl resume {name}'" if suspension.by == BY_COMMAND else ""
        if suspension.manifest:
            lifted += f"{' and ' if lifted else ''}its manifest says spec.suspend: false"
        self._event("suspended", f"{name}: suspended {suspension.describe()}; no scheduled firing until {lifted} "
                                 "(the time it is off counts no missed run)",
                    "warning" if suspension.problem else "info", schedule=name, **suspension.to_json())

    def _say_resumed(self, name: str, was: Suspension, now: int) -> None:
        job = self.controller.state.jobs[name]
        start = window_start(job.spec, job.state.last_schedule, now, job.state.not_before)
        next_fire = Timeline(job.spec.compiled, job.spec.created_at, job.spec.options.tz).next_after(start)
        then = "it fires no more" if next_fire is None else f"next fire {self._time(name, next_fire)}"
        self._event("resumed", f"{name}: resumed (it was suspended {was.describe()}); {then}", schedule=name,
                    was=was.to_json(), next=None if next_fire is None else nominal_iso(next_fire))

    # -- manual triggers -------------------------------------------------------------------

    def _take_triggers(self, now: int) -> bool:
        folder = self.folder / TRIGGERS_DIR
        try:
            paths = sorted(folder.glob("*.json"))
        except OSError:
            return False
        changed = False
        for path in paths:
            if str(path) not in self._taken and str(path) not in self._left_broken:
                changed |= self._take_trigger(path, now)
        return changed

    def _take_trigger(self, path: Path, now: int) -> bool:
        """One trigger file: a manual firing, or a history row saying why not (the node switch
        is off, the manifest is invalid); a file that is no trigger is moved aside."""
        try:
            stamp = path.stat().st_mtime_ns
            body = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            return self._set_aside(path, f"not a trigger ({error})")
        name = body.get("schedule") if isinstance(body, dict) else None
        if not isinstance(name, str):
            return self._set_aside(path, 'not a trigger (it should be {"schedule": "NAME"})')
        manual = trigger_id(path, stamp)
        if self._trigger_known(manual):  # consumed before a crash, the book saved: only delete it
            self._taken[str(path)] = path
            return True
        job = self.controller.state.jobs.get(name)
        if job is None:
            bad = next((entry["message"] for entry in self.invalid if entry["schedule"] == name), None)
            return self._set_aside(path, f"no schedule named {name!r}" if bad is None
                                   else f"the manifest of {name!r} is invalid: {bad}")
        why_not = (f"the node switch is off ({SWITCH_OFF_FILE} exists)" if self._switched_off
                   else f"its manifest is invalid: {self._held[name]}" if name in self._held else None)
        if why_not is not None:
            self._remember(name, {"run": None, "reason": MANUAL, "nominal": now, "actual": None, "attempts": 0,
                                  "outcome": "canceled", "finished": now, "note": why_not, "trigger": manual})
            self._event("canceled", f"{name}: manual trigger {path.name} not run: {why_not}", "warning",
                        schedule=name, firing=MANUAL, outcome="canceled", trigger=manual)
        else:
            self._carry_out(self.controller.trigger(now, name), now, manual)
        self._taken[str(path)] = path
        return True

    def _trigger_known(self, manual: str) -> bool:
        return any(f.manual == manual for f in self.firings.values()) or any(
            entry.get("trigger") == manual for rows in self.journal.values() for entry in rows)

    def _set_aside(self, path: Path, why: str, suffix: str = ".broken") -> bool:
        """A trigger or backfill file that asks for nothing is renamed ``<name><suffix>``, said once."""
        kind = "backfill" if path.parent.name == backfills.BACKFILLS_DIR else "trigger"
        aside = path.with_name(path.name + suffix)
        try:
            os.replace(path, aside)
        except FileNotFoundError:
            return False
        except OSError as error:
            self._left_broken.add(str(path))
            self._event(kind, f"{path}: {why}; it cannot be moved aside ({error.strerror or error}), "
                              "ignored", "warning", file=str(path))
            return False
        self._event(kind, f"{path}: {why}; moved aside as {aside.name}", "warning", file=str(path))
        return False

    # -- backfills ----------------------------------------------------------------------------

    def _take_backfills(self, now: int) -> bool:
        folder = self.folder / backfills.BACKFILLS_DIR
        try:
            paths = sorted(folder.glob("*.json"))  # oldest first: a later request replaces an earlier one
        except OSError:
            return False
        changed = False
        for path in paths:
            if str(path) not in self._taken and str(path) not in self._left_broken:
                changed |= self._take_backfill(path, now)
        return changed

    def _take_backfill(self, path: Path, now: int) -> bool:
        """One request file: a backfill handed to the core, which may refuse it (said, and the
        file moved aside, as a file that is no request is)."""
        try:
            stamp = path.stat().st_mtime_ns
            asked = backfills.read_request(path)
        except FileNotFoundError:
            return False
        except (OSError, backfills.RequestError) as error:
            return self._set_aside(path, str(error) if isinstance(error, backfills.RequestError)
                                   else f"not a backfill request ({error})")
        request = backfills.request_id(path, stamp)
        name = asked.schedule
        job = self.controller.state.jobs.get(name)
        if job is not None and self._backfill_known(name, request):  # the book saved has it: only delete it
            self._taken[str(path)] = path
            return True
        if job is None:
            bad = next((entry["message"] for entry in self.invalid if entry["schedule"] == name), None)
            return self._set_aside(path, f"no schedule named {name!r}" if bad is None
                                   else f"the manifest of {name!r} is invalid: {bad}")
        before = job.state.backfill
        try:
            begun = self.controller.backfill(now, name, asked.start, asked.end, request)
        except BackfillError as error:
            return self._set_aside(path, f"backfill of {name} refused: {error.message}", ".refused")
        self._taken[str(path)] = path
        replaced = before if before is not None and not backfills.finished(before, job.state.active) else None
        said = f"; it replaces backfill {replaced.request} ({replaced.launched}/{replaced.total} launched)" \
            if replaced is not None else ""
        if name in self._holding and not begun.done:
            said += f"; its runs wait: {self._why_holding(name)}"
        self._backfills_said[name] = (request, False)
        self._event("backfill", f"{name}: backfill {request} of {begun.total} schedule "
                                f"time{'' if begun.total == 1 else 's'} from {self._time(name, begun.start)} to "
                                f"{self._time(name, begun.end)}, oldest first, one at a time{said}",
                    schedule=name, backfill=request, state="started", total=begun.total,
                    start=nominal_iso(begun.start), end=nominal_iso(begun.end),
                    replaces=None if replaced is None else replaced.request)
        return True

    def _why_holding(self, name: str) -> str:
        if self._switched_off:
            return f"the node switch is off ({SWITCH_OFF_FILE} exists)"
        if name in self._held:
            return "its manifest is invalid"
        return "the schedule is suspended"

    def _backfill_known(self, name: str, request: str) -> bool:
        """Whether the book has the backfill of this request already (consumed before a crash)."""
        job = self.controller.state.jobs[name]
        return (job.state.backfill is not None and job.state.backfill.request == request) or any(
            f.backfill == request for f in self.firings.values()) or any(
            entry.get("backfill") == request for entry in self.journal.get(name, []))

    def _backfills_now(self) -> dict[str, tuple[str, bool]]:
        return {name: (job.state.backfill.request, backfills.finished(job.state.backfill, job.state.active))
                for name, job in self.controller.state.jobs.items() if job.state.backfill is not None}

    def _say_backfills(self) -> None:
        """One line for each backfill that completed since the last step."""
        now = self._backfills_now()
        for name, (request, finished) in now.items():
            if finished and self._backfills_said.get(name) != (request, True):
                backfill = self.controller.state.jobs[name].state.backfill
                assert backfill is not None
                self._event("backfill", f"{name}: backfill {request} complete: {backfill.launched} of "
                                        f"{backfill.total} schedule time{'' if backfill.total == 1 else 's'} "
                                        f"from {self._time(name, backfill.start)} to "
                                        f"{self._time(name, backfill.end)} launched",
                            schedule=name, backfill=request, state="complete", total=backfill.total,
                            launched=backfill.launched)
        self._backfills_said = now

    # -- decisions ---------------------------------------------------------------------------

    def _carry_out_tick(self, applied: list[Applied], now: int) -> None:
        """A tick's decisions, schedule by schedule (the controller gives each schedule's
        together); a repeat of an earlier tick's decision was carried out then."""
        for schedule, group in groupby(applied, key=lambda item: item.decision.job):
            items = list(group)
            for item in items:
                if item.news:
                    self._carry_out(item.decision, now)
            self._keep_overflow(schedule, items, now)

    def _keep_overflow(self, schedule: str, items: list[Applied], now: int) -> None:
        """Say an overflow once and keep it for status, with what its tick launched instead,
        until a later tick launches the schedule on time."""
        decisions = [item.decision for item in items]
        overflow = next((item for item in items if isinstance(item.decision, Overflow)), None)
        if overflow is None:
            if any(isinstance(d, Launch) and d.reason == SCHEDULED for d in decisions):
                self.overflows.pop(schedule, None)
            return
        assert isinstance(overflow.decision, Overflow)
        note = Overflowed.of(now, overflow.decision, decisions)
        if overflow.news:
            self.overflows[schedule] = note.to_json()
            self._event("overflow", f"{schedule}: {note.describe(self._zone(schedule))}", "warning",
                        schedule=schedule, limit=note.limit, dropped=note.dropped)
        elif schedule in self.overflows and (note.launched or note.queued):
            # The same overflow goes on, and this tick launches (the run that kept it waiting ended).
            self.overflows[schedule].update(launched=note.launched, queued=note.queued, skipped=None)

    def _carry_out(self, decision: object, now: int, manual: str | None = None) -> None:
        if isinstance(decision, Launch):
            backfill = self._backfill_of(decision)
            command = None if backfill is not None else \
                self.snapshots.pop(_snapshot_key(decision.job, decision.scheduled_for), None)
            if command is None:
                command = self._command_of(decision.job)
            if command is None:  # held invalid since before a restart: nothing to run it with
                self._drop_run(decision.job, decision.run_id)
                self._remember(decision.job, {"run": decision.run_id, "reason": decision.reason,
                                              "nominal": decision.scheduled_for, "actual": None, "attempts": 0,
                                              "outcome": "canceled", "finished": now,
                                              "note": "no valid manifest to run it with"})
                return
            command.pop("reason", None)  # a book written before launches carried their reason has it here
            firing = Firing(decision.run_id, decision.job, decision.scheduled_for, decision.reason, **command,
                            manual=manual, backfill=backfill)
            job = self.controller.state.jobs[decision.job]
            firing.start_at = start_time(job.spec, decision)
            self.firings[decision.run_id] = firing
        elif isinstance(decision, Enqueue):
            # The firing keeps the command it had when it became due; an edit changes later ones.
            command = self._command_of(decision.job)
            if command is not None:
                self.snapshots[_snapshot_key(decision.job, decision.scheduled_for)] = command
        elif isinstance(decision, Coalesce):
            self.snapshots.pop(_snapshot_key(decision.job, decision.scheduled_for), None)
            self._remember(decision.job, {"run": None, "reason": "scheduled", "nominal": decision.scheduled_for,
                                          "actual": None, "attempts": 0, "outcome": "coalesced", "finished": now})
        elif isinstance(decision, Retry):
            self._retry(decision)
        elif isinstance(decision, Replace):
            replaced = self.firings.pop(decision.run_id, None)
            if replaced is not None:  # its process, if it has one, is stopped; else it is canceled
                self._stop_or_drop(replaced, "stopped" if replaced.slot is not None else "canceled", now)
        elif isinstance(decision, Skip):
            self._remember(decision.job, {"run": None, "reason": "scheduled", "nominal": decision.scheduled_for,
                                          "actual": None, "attempts": 0, "outcome": "skipped", "finished": now})
            self._event("skipped", f"{decision.job}: skipped {self._time(decision.job, decision.scheduled_for)} "
                                   "(Forbid: a run is active)", schedule=decision.job,
                        nominal=nominal_iso(decision.scheduled_for), outcome="skipped")

    def _backfill_of(self, launch: Launch) -> str | None:
        """The request of the backfill a launch is a run of (None: not a backfill's)."""
        if launch.reason != BACKFILL:
            return None
        backfill = self.controller.state.jobs[launch.job].state.backfill
        return backfill.request if backfill is not None else launch.run_id

    def _command_of(self, schedule: str) -> dict[str, Any] | None:
        definition = self.definitions.get(schedule)
        if definition is None:
            return None
        command = {"command": list(definition.command), "args": list(definition.args), "env": dict(definition.env)}
        if definition.working_dir is not None:
            command["cwd"] = str(self.folder / definition.working_dir)  # an absolute one stays as it is
        if definition.active_deadline_seconds is not None:
            command["active_deadline_seconds"] = definition.active_deadline_seconds
        return command

    def _retry(self, decision: Retry) -> None:
        """The core retries a run: its firing takes the next attempt and waits for a slot."""
        firing = self.firings.get(decision.run_id) or self._firing_to_retry(decision)
        if firing is not None:
            firing.attempt, firing.retry_due = decision.attempt, None

    def _firing_to_retry(self, decision: Retry) -> Firing | None:
        """A retry whose firing the book lacks (a book written before the runner kept
        retrying firings): rebuilt from the run and the current manifest, with the reason
        its failed attempt ran with (scheduled if that attempt's folder is gone)."""
        run = self.controller.state.runs[decision.run_id]
        command = self._command_of(decision.job)
        if command is None:
            self._notice(f"{decision.job}: no manifest to retry run {run.id} with")
            return None
        home, failed = self._attempt_ended(RunKey(run.job, run.scheduled_for, decision.attempt - 1))
        reason = failed.request.get("reason") if failed is not None else None
        manual, backfill = origin_of(home)
        firing = Firing(run.id, run.job, run.scheduled_for, reason or SCHEDULED, **command,
                        start_at=run.scheduled_for * 60, manual=manual, backfill=backfill)
        self.firings[run.id] = firing
        return firing

    def _attempt_ended(self, key: RunKey) -> tuple[str | None, Ended | None]:
        """How an attempt ended, found in the folder of scheduled runs or of a manual firing's or
        a backfill's (the home it was found in, with it)."""
        ended = self.executor.result(key)
        if ended is not None:
            return None, ended
        for home in self._home_folders():
            ended = self._executor(home).result(key)
            if ended is not None:
                return home, ended
        return None, None

    def _home_folders(self) -> list[str]:
        """The executor folders of manual firings and backfills there are (``manual/<id>``, ...)."""
        homes = []
        for kind in (MANUAL_DIR, BACKFILL_DIR):
            base = self.folder / kind
            if base.is_dir():
                homes += [f"{kind}/{entry.name}" for entry in sorted(base.iterdir())
                          if entry.is_dir() and not entry.name.startswith(".")]
        return homes

    def _stop_or_drop(self, firing: Firing, reason: str, now: int) -> None:
        if firing.slot is None:  # not running (never started, or waiting for a retry): it only leaves
            self._remember(firing.schedule, self._entry(firing, reason, now, firing.attempts_made))
            return
        self.firings[firing.run_id] = firing  # keeps its slot until the process is gone
        self._ask_stop(firing, reason)

    def _ask_stop(self, firing: Firing, reason: str) -> bool:
        """Ask the executor to stop a firing's process (SIGTERM now, SIGKILL after the grace)."""
        try:
            self._executor_of(firing).stop(firing.key, reason, self.grace_seconds)
        except KeyError:  # no process was ever started for it (a book edited by hand)
            pass
        except OSError as error:
            self._fault(f"stop {firing.run_id}", f"{firing.schedule}: cannot stop {firing.run_id}: "
                                                 f"{error.strerror or error}; trying again at the next step")
            return False
        self._clear_fault(f"stop {firing.run_id}")
        firing.stopping = reason
        if reason == TIMED_OUT:
            timeout = self._job_timeout(firing.schedule)
            why = f"timed out (timeoutMinutes {timeout})" if timeout else "timed out"
        elif firing.note:
            why = firing.note
        else:
            why = "replaced by a newer run (Replace)" if reason == "stopped" else reason
        self._event("timeout" if reason == TIMED_OUT else "stopping",
                    f"{firing.schedule}: {firing.run_id} {why}: stopping it (SIGTERM, SIGKILL after "
                    f"{self.grace_seconds:g} s)", "warning", **self._facts(firing))
        return True

    def _ended_by_core(self, firing: Firing) -> str | None:
        """How the core ended a firing's run on its own: timed_out, or, when the run is gone
        (replaced), stopped if a process runs for it, else canceled; None while the run runs
        or waits for its next attempt."""
        run = self.controller.state.runs.get(firing.run_id)
        if run is not None and run.state in (RUNNING, RETRY_PENDING):
            return None
        if run is not None and run.state == TIMED_OUT:
            return TIMED_OUT
        return "stopped" if firing.slot is not None else "canceled"

    def _stop_expired(self) -> bool:
        """Runs the core timed out (launch + timeout) while their process runs: stop it."""
        stopped = False
        for firing in self.firings.values():
            reason = self._ended_by_core(firing) if firing.slot is not None and firing.stopping is None else None
            if reason is not None:
                stopped |= self._ask_stop(firing, reason)
        return stopped

    def _drop_expired(self, now: int) -> bool:
        """Runs the core timed out while no process runs for them (waiting for a slot or for
        their next attempt): they leave, recorded with the core's outcome, never retried."""
        dropped = False
        for firing in [f for f in self.firings.values() if f.slot is None]:
            reason = self._ended_by_core(firing)
            if reason is not None:
                del self.firings[firing.run_id]
                self._remember(firing.schedule, self._entry(firing, reason, now, firing.attempts_made))
                dropped = True
        return dropped

    def _record_ends(self, now: int) -> bool:
        ended_any = False
        for home, executor in [(None, self.executor), *self._homes.items()]:
            try:
                ended = executor.poll()
            except (OSError, ValueError) as error:
                self._fault(f"poll {home}", f"cannot read how runs ended in {executor.runs_dir}: {error}; "
                                            "trying again at the next step")
                continue
            self._clear_fault(f"poll {home}")
            for end in ended:
                firing = self._firing_running(home, end.key)
                if firing is not None:
                    self._end_attempt(firing, end, now)
                self._to_acknowledge.append((home, end.key))
            ended_any |= bool(ended)
        return ended_any

    def _firing_running(self, home: str | None, key: RunKey) -> Firing | None:
        """The firing whose current attempt is ``key`` in that executor's folder; None for an end
        recorded before (reported again after a restart: the book already moved on) or of a run
        the book does not know."""
        return next((f for f in self.firings.values()
                     if f.home == home and f.key == key and f.retry_due is None), None)

    def _end_attempt(self, firing: Firing, end: Ended, now: int) -> None:
        """An attempt ended: the firing waits for its next attempt, or its run is over."""
        if firing.slot is not None:  # None: the restarted runner had not started it again yet
            self.slots.release(firing.slot)
            firing.slot = None
        firing.actual = firing.actual or end.started_at
        outcome = end.outcome
        retry_due = self._finish_attempt(firing, outcome, now)
        how = _how(end)
        if retry_due is not None:
            firing.retry_due = retry_due
            attempts = self._attempts(firing.schedule, firing.attempt + 1)
            self._event("retry", f"{firing.schedule}: {firing.run_id} attempt {firing.attempt}/{attempts} failed "
                                 f"({how}); attempt {firing.attempt + 1}/{attempts} at "
                                 f"{self._time(firing.schedule, retry_due)}", "warning",
                        **self._facts(firing), outcome=FAILED, **_end_facts(end),
                        retry_at=nominal_iso(retry_due))
            return
        del self.firings[firing.run_id]
        run = self.controller.state.runs.get(firing.run_id)
        if run is not None and run.state == TIMED_OUT:  # the core's verdict: its timeout came first
            outcome = TIMED_OUT
        entry = self._entry(firing, outcome, now, firing.attempt)
        entry.update(exit_code=end.exit_code, signal=end.signal)  # of its last attempt
        if end.note and not firing.note:
            entry["note"] = end.note  # why it did not start, or was lost
        self._remember(firing.schedule, entry)
        note = f"; {firing.note}" if firing.note else ""
        self._event("ended", f"{firing.schedule}: {firing.run_id} {outcome} ({how}){note}",
                    "info" if outcome == SUCCEEDED else "warning", **self._facts(firing), outcome=outcome,
                    **_end_facts(end))

    def _finish_attempt(self, firing: Firing, outcome: str, now: int) -> int | None:
        """Tell the core how the firing's running attempt ended; the minute of its next
        attempt when the core retries it, else None (the run is over)."""
        run = self.controller.state.runs.get(firing.run_id)
        if run is None or run.state != RUNNING or run.attempt != firing.attempt:
            return None  # the core ended it already (timed out, replaced)
        verdict = SUCCEEDED if outcome == SUCCEEDED else FAILED
        self.controller.finish(max(now, self.controller.state.clock or now), run.id, verdict, run.attempt)
        if run.state != RETRY_PENDING:
            return None
        pending = self.controller.state.jobs[run.job].state.pending_retries
        return next(p.due for p in pending if p.run_id == run.id)

    def _start_waiting(self, now: int) -> bool:
        started = False
        second = self.seconds()
        waiting = [f for f in self.firings.values() if f.startable and f.start_at <= second]
        for firing in order_due(waiting, nominal=lambda f: f.nominal, schedule=lambda f: f.schedule):
            slot = self.slots.acquire()
            if slot is None:
                break
            executor = self._executor_of(firing)
            request = RunRequest(firing.schedule, firing.nominal, firing.command, firing.args, firing.env,
                                 firing.reason, firing.attempt, cwd=firing.cwd or str(self.executor.base_dir),
                                 active_deadline_seconds=firing.active_deadline_seconds)
            try:
                handle = executor.start(request)
            except OSError as error:
                self.slots.release(slot)
                self._fault(f"start {firing.run_id}", f"{firing.schedule}: cannot start {firing.run_id}: "
                                                      f"{error.strerror or error}; trying again at the next step")
                continue
            self._clear_fault(f"start {firing.run_id}")
            firing.slot = slot
            if handle.started:
                self._event("fired", f"{firing.schedule}: fired {firing.run_id} for "
                                     f"{self._time(firing.schedule, firing.nominal)} ({firing.reason}, attempt "
                                     f"{firing.attempt}) on {slot}", **self._facts(firing), slot=slot)
            elif not executor.watching(handle.key):
                self._end_known_run(firing, executor, handle.key, now)
            started = True
        return started

    def _end_known_run(self, firing: Firing, executor: Executor, key: RunKey, now: int) -> None:
        """The attempt ran and its end was reported before its firing existed here: a runner
        that crashed before saving the book restarted with its clock before the launch, so
        the end came with nothing to record it on. It is recorded now."""
        ended = executor.result(key)
        if ended is not None:
            self._end_attempt(firing, ended, now)

    def _prune(self, schedule: str) -> None:
        """Run folders follow the core's retention, as Jobs do on the operator: those of the runs
        it keeps (successfulJobsHistoryLimit, failedJobsHistoryLimit), of runs in flight, and of
        times it has not dealt with yet stay; a manual run's folder goes with its run, a backfill's
        run folders with their runs and its folder with the last of them."""
        job = self.controller.state.jobs.get(schedule)
        if job is None:  # retired: its folders stay with its history
            return
        runs = self.controller.state.runs
        kept = {item.run_id for item in job.state.kept_succeeded + job.state.kept_failed} | set(job.state.active)
        keep = {RunKey(schedule, runs[run_id].scheduled_for) for run_id in kept if run_id in runs}
        keep |= {RunKey(f.schedule, f.nominal) for f in self.firings.values() if f.schedule == schedule}
        try:
            dealt_with = job.state.last_schedule if job.state.last_schedule is not None else job.spec.created_at
            self.executor.prune(schedule, keep, through=dealt_with)
            self._prune_manual(schedule, kept)
            self._prune_backfills(schedule, kept)
        except OSError as error:  # the disk: said, and tried again at the next end
            self._fault("prune", f"cannot prune the run folders of {schedule}: {error.strerror or error}")

    def _prune_manual(self, schedule: str, kept: set[str]) -> None:
        in_flight = {f.manual for f in self.firings.values() if f.manual} | \
            {home.partition("/")[2] for home in self._homes if home.startswith(f"{MANUAL_DIR}/")}
        triggers = {entry["trigger"]: entry["run"] for entry in self.journal.get(schedule, []) if entry.get("trigger")}
        for manual, run_id in triggers.items():
            folder = self.folder / MANUAL_DIR / manual
            if manual not in in_flight and run_id not in kept and folder.is_dir():
                remove_tree(folder)

    def _prune_backfills(self, schedule: str, kept: set[str]) -> None:
        """A backfill's runs share the folder of its request: the folders of those retention drops
        go, and the request's folder once none of its runs is left or in flight."""
        keep: dict[str, set[RunKey]] = {}
        for entry in self.journal.get(schedule, []):
            if entry.get("backfill"):
                keys = keep.setdefault(f"{BACKFILL_DIR}/{entry['backfill']}", set())
                if entry["run"] in kept:
                    keys.add(RunKey(schedule, entry["nominal"]))
        in_flight = {f.home for f in self.firings.values() if f.backfill}
        for home, keys in keep.items():
            folder = self.folder / home
            if not folder.is_dir():
                continue
            keys |= {f.key for f in self.firings.values() if f.home == home}
            self._executor(home).prune(schedule, keys)
            if home not in in_flight and not keys and not any((folder / RUNS_DIR).glob("*/*")):
                self._homes.pop(home, None)
                remove_tree(folder)

    def _executor_of(self, firing: Firing) -> Executor:
        return self._executor(firing.home)

    def _executor(self, home: str | None) -> Executor:
        """The executor of scheduled runs, or the one of a manual firing's or a backfill's runs (a
        folder of its own per trigger or request, so that its key is its own whatever else runs
        that minute)."""
        if home is None:
            return self.executor
        if home not in self._homes:
            self._homes[home] = Executor(self.folder / home, max_log_bytes=self.max_log_bytes)
        return self._homes[home]

    # -- history ----------------------------------------------------------------------------

    @staticmethod
    def _entry(firing: Firing, outcome: str, now: int, attempts: int) -> dict[str, Any]:
        entry = {"run": firing.run_id, "reason": firing.reason, "nominal": firing.nominal, "actual": firing.actual,
                 "attempts": attempts, "outcome": outcome, "finished": now}
        if firing.note:
            entry["note"] = firing.note
        if firing.manual:
            entry["trigger"] = firing.manual
        if firing.backfill:
            entry["backfill"] = firing.backfill
        return entry

    def _remember(self, schedule: str, entry: dict[str, Any]) -> None:
        entries = self.journal.setdefault(schedule, [])
        entries.append(entry)
        del entries[:-HISTORY_LIMIT]

    # -- what the runner says ----------------------------------------------------------------

    def _event(self, event: str, message: str, level: str = "info", **facts: Any) -> None:
        """One line: the message, or in JSON the same facts as fields."""
        if self.log_format == "text":
            self.say(message)
            return
        fields = {"time": utc_iso(self.seconds()), "level": level, "event": event, "message": message,
                  **{key: value for key, value in facts.items() if value is not None}}
        self.say(json.dumps(fields, ensure_ascii=False))

    def _notice(self, text: str, level: str = "info") -> None:
        if text not in self._noticed:
            self._noticed.add(text)
            self._event("notice", text, level)

    def _fault(self, what: str, text: str) -> None:
        """Say a fault once, until it clears (``_clear_fault``)."""
        if self._faults.get(what) != text:
            self._faults[what] = text
            self._event("fault", text, "error")

    def _clear_fault(self, what: str) -> bool:
        return self._faults.pop(what, None) is not None

    def _facts(self, firing: Firing) -> dict[str, Any]:
        return {"schedule": firing.schedule, "run": firing.run_id, "nominal": nominal_iso(firing.nominal),
                "firing": firing.reason, "attempt": firing.attempt, "trigger": firing.manual,
                "backfill": firing.backfill}

    def _zone(self, schedule: str) -> Any:
        job = self.controller.state.jobs.get(schedule)
        return job.spec.options.tz if job is not None else None

    def _time(self, schedule: str, minute: int) -> str:
        zone = self._zone(schedule)
        return both_times(minute, zone) if zone is not None else nominal_iso(minute)

    def _job_timeout(self, schedule: str) -> int | None:
        job = self.controller.state.jobs.get(schedule)
        return job.spec.options.timeout if job is not None else None

    def _attempts(self, schedule: str, at_least: int) -> int:
        job = self.controller.state.jobs.get(schedule)
        return max(at_least, job.spec.options.retries + 1 if job is not None else at_least)

    # -- the loop ---------------------------------------------------------------------------

    def waiting_reason(self) -> str | None:
        if any(f.startable for f in self.firings.values()) and self.slots.free_count == 0:
            return self.slots.describe_wait()
        return None

    def say_stopped(self) -> None:
        """The line for Ctrl-C: the runs that go on (under their wrappers) for the next runner."""
        running = [f for f in self.firings.values() if f.slot is not None]
        described = []
        for firing in running:
            try:
                pid = (read_json(self._executor_of(firing).run_dir(firing.key) / "pid") or {}).get("pid")
            except (OSError, ValueError):
                pid = None
            described.append(f"{firing.run_id} (pid {pid})" if pid else f"{firing.run_id} (starting)")
        if not running:
            text = "cronctl: stopped; no run was running"
        else:
            verb = "run goes on" if len(running) == 1 else "runs go on"
            text = f"cronctl: stopped; {len(running)} {verb} and the next runner adopts them: {', '.join(described)}"
        self._event("stopped", text, runs=[f.run_id for f in running])


def _snapshot_key(schedule: str, nominal: int) -> str:
    return f"{schedule}@{nominal}"


def _how(end: Ended) -> str:
    """``exit 3 after 12 s``, ``signal 9 after 2 s``, or the executor's note on a run that never ran."""
    if end.exit_code is not None:
        how = f"exit {end.exit_code}" + (f": {end.note}" if end.note else "")
    elif end.signal is not None:
        how = f"signal {end.signal}" + (f": {end.note}" if end.note else "")
    else:
        how = (end.note or "no exit code").split(";")[0]
    seconds = _seconds_between(end.started_at, end.finished_at)
    return how if seconds is None else f"{how} after {seconds} s"


def _end_facts(end: Ended) -> dict[str, Any]:
    return {"exit_code": end.exit_code, "signal": end.signal,
            "duration_seconds": _seconds_between(end.started_at, end.finished_at)}


def _seconds_between(started: str | None, finished: str | None) -> int | None:
    if not started or not finished:
        return None
    try:
        parse = [datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
                 for text in (started, finished)]
    except ValueError:
        return None
    return int((parse[1] - parse[0]).total_seconds())


class _Stop(Exception):
    """``should_stop`` said so while waiting for the lock."""


def run_forever(runner: Runner, poll_seconds: float = 1.0, retry_lock_seconds: float = DEFAULT_RETRY_SECONDS,
                should_stop: Callable[[], bool] = lambda: False) -> None:
    """Take the lock (waiting read-only while another runner holds it), then step every
    ``poll_seconds`` until ``should_stop``. Ctrl-C returns too, saying which runs go on:
    they run under detached wrappers, and the next runner adopts them."""
    shown = False

    def show_once(holder: object) -> None:
        nonlocal shown
        if shown or not runner.book.path.exists():
            return
        shown = True
        from .views import status_lines  # the read-only view of what the holder fires
        try:
            for line in status_lines(runner.folder):
                runner.say(line)
        except SystemExit as refused:  # the views' way to say the book cannot be shown
            runner.say(str(refused))

    def sleep(seconds: float) -> None:
        for _ in range(max(1, round(seconds / poll_seconds))):
            if should_stop():
                raise _Stop
            time.sleep(poll_seconds)

    try:
        if not runner.open():
            wait_for_lock(runner.lock, retry_lock_seconds, sleep=sleep, on_wait=show_once)
            runner.open()
        while not should_stop():
            runner.turn()
            runner.rest(poll_seconds)
    except _Stop:
        return
    except KeyboardInterrupt:
        runner.say_stopped()
