"""The single-node runner's shell: it carries out what each step decides, as local processes.

A turn is intake -> step -> effects. The intake (:mod:`.intake`) reads what
changed in the folder (manifests, pause records, manual triggers, backfill
requests, the node switch) and what the executors reported, with the time
read once; the step (:mod:`.step`) decides every runner rule and calls the
core for every scheduling decision; this shell starts and stops processes,
says lines, moves files aside, and saves the book (``cronctl.json``).

Crash safety rests on the executor's key (schedule, nominal time, attempt):
a crash between starting a process and saving the book makes the next
runner decide the same launch (or retry) again, and ``Executor.start`` then
returns the run that already exists instead of starting a second process.
Outcomes are acknowledged to the executor only after the book that records
them is saved; an end reported again after a restart is only acknowledged.
A consumed trigger or backfill file is deleted only once the book that
records it is saved, so a crash in between consumes it again into the same
key.

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
import math
import os
import select
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..core.spec import JobSpec
from ..core.upcoming import upcoming
from ..manifest import read_manifest
from . import retention
from .adoption import adopt
from .book import Book, Status
from .definitions import API_VERSION, KIND, Definition, wrapper_timeout
from .echo import Echo
from .effects import Effect, Out, RemovePause, Say, SetAside, Start, Stop, WritePause
from .ends import Report
from .backfills import BACKFILLS_DIR
from .files import read_json, remove_tree, utc_iso
from .firing import TRIGGERS_DIR, BookContents, Firing, Unreadable, read_book
from .folder import FolderWatch
from .homes import Homes
from .intake import Intake, trigger_id
from .journal import time_of
from .lock import (DEFAULT_RETRY_SECONDS, RunnerLock, describe_holder, runner_home, runner_identity,
                   wait_on_lock)
from .memory import RunnerState, start_refused, stop_refused
from .pauses import remove_pause, write_pause
from .requests import backfills_now
from .slots import SlotPool
from .starts import waiting_reason
from .stops import STOPPED, ask_stop
from .step import step as decide  # the pure step; Runner.step is the whole turn
from .values import PAUSED_DIR, nominal_iso, pause_path
from .wrapper import DEFAULT_MAX_LOG_BYTES

if TYPE_CHECKING:  # prometheus-client is imported only with --metrics-port
    from .metrics import RunnerMetrics

__all__ = ["LOG_FORMATS", "Runner", "job_spec", "run_forever", "trigger_id"]

WAKE_SECONDS = 0.01  # how often a resting runner looks whether a run of its own ended, with no pidfds
IDLE_TURN_SECONDS = 60.0  # a quiet runner turns at least this often all the same
SAVE_EVERY_SECONDS = 0.25  # how often a busy runner's loop saves its book, at most
LOG_FORMATS = ("text", "json")


def job_spec(definition: Definition, created_at: int, index: int) -> JobSpec:
    """The core's view of a manifest, judged by the CRD's schema and the core's checks
    (``read_manifest``), as the operator's API server and reader judge it."""
    body = definition.body or {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": definition.name},
                               "spec": definition.spec}
    return dataclasses.replace(read_manifest(body, created_at).job, index=index)


class Runner:
    def __init__(self, folder: Path, minute: Callable[[], int], workers: int,
                 say: Callable[[str], None] = print, grace_seconds: float = 10.0,
                 seconds: Callable[[], float] | None = None, log_format: str = "text",
                 max_log_bytes: int = DEFAULT_MAX_LOG_BYTES, echo: bool = False, one_read: bool = False) -> None:
        if log_format not in LOG_FORMATS:
            raise ValueError(f"log format {log_format!r}: must be one of {', '.join(LOG_FORMATS)}")
        self.folder = folder  # the name given: its manifests are read through it at every turn
        # Resolved once (a deploy may switch a symlink on the way): the lock, book, runs, pause records
        # and requests stay here whatever the name comes to point to (see _follow_name).
        self.home = Path(os.path.realpath(folder))
        self.minute = minute
        # The time in seconds, for jitter and log lines (the wall clock's second within the given minute
        # unless a test says otherwise); the intake reads it once per turn.
        self.seconds = seconds or (lambda: minute() * 60 + time.time() % 60)
        self.say = say
        self.log_format = log_format
        self.memory = RunnerState(folder, SlotPool(workers), grace_seconds, base=Path(os.path.abspath(folder)))
        self.book = Book(self.home)
        self.lock = RunnerLock(self.home, {**runner_identity(), "home": str(self.home)})
        self._claim: tuple[Path, RunnerLock | None] | None = None  # the name's new target, its lock if taken
        self.homes = Homes(self.home, max_log_bytes)  # each run stream's output capped at max_log_bytes
        # one_read: minute and seconds are one clock
        self.intake = Intake(self.home, minute, self.seconds, one_read, manifests=folder)
        self.may_fire = True
        self._unreadable = False  # the book could not be read: load it again at the next step
        self._read_only = False  # another runner held the lock when this one tried
        self._faults: dict[str, str] = {}  # what failed -> the line said about it, until it works again
        self._unsaved = False  # a save failed: save again at the next step
        self._late: list[Report] = []  # ends found for firings started again: the next step records them
        self.echo = Echo(self._say_output) if echo else None  # --echo: the runs' output on this stream
        self._watch: FolderWatch | None = None  # the kernel's word on the folders (watch_folders)
        self._watched_target = ""
        self._turned = (0, 0.0)  # the minute and the monotonic second of the last turn
        self._dirty = True  # the folders may have changed since the last scan of the manifests
        # A busy loop saves the book at most this often (run_forever: SAVE_EVERY_SECONDS): a crash before a
        # save decides the same launches again, which start no second process, and ends are acknowledged
        # only once saved. 0: after every step that changed it.
        self.save_every = 0.0
        self._owed_save = False
        self._saved_at = 0.0
        self._scanned = time.monotonic()  # when the manifests were last scanned for want of a watch's word
        self.metrics: RunnerMetrics | None = None  # --metrics-port: fed with what the runner says and starts
        self._draining = False  # --wait-runs: stopping, no run starts

    # What the step keeps, for the views and the tests that look at a runner.
    controller = property(lambda self: self.memory.controller)
    firings = property(lambda self: self.memory.firings)
    journal = property(lambda self: self.memory.journal)
    slots = property(lambda self: self.memory.slots)
    definitions = property(lambda self: self.memory.definitions)
    executor = property(lambda self: self.homes.scheduled)

    # -- start ----------------------------------------------------------------------------

    def open(self) -> bool:
        """Take the lock and load the book; False when another runner holds the lock."""
        if not self.lock.try_acquire():
            if not self._read_only:
                self._say(Say("read_only", f"read-only: {describe_holder(self.lock.holder())} fires these "
                                           "schedules; this runner takes over the moment it ends"))
            self._read_only = True
            return False
        if self._read_only:
            self._say(Say("takeover", f"took over: the runner that held {self.lock.path.name} ended; this "
                                      f"runner (pid {os.getpid()}) fires the schedules now"))
        try:
            self.book.remove_stale_temps()  # of a save that crashed
        except OSError:
            pass
        self._load()
        return True

    def _follow_name(self) -> None:
        """A deploy switched the name to another folder: its manifests are read from there, while this
        runner's files stay in its home; it holds the new folder's lock too, naming its home, so that a
        second runner started on the name waits and ``cronctl status`` on the name finds this one."""
        try:
            target = Path(os.path.realpath(self.folder))
        except OSError:
            return
        if self._claim is not None and self._claim[0] == target or self._claim is None and target == self.home:
            return
        if self._claim is not None and self._claim[1] is not None:
            self._claim[1].release()
        self._claim = None
        if target == self.home:
            self._say(Say("moved", f"{self.folder} points to {self.home} again, this runner's home"))
            return
        claim = RunnerLock(target, self.lock.identity)
        try:
            taken = claim.try_acquire()
        except OSError as error:
            taken, why = False, f"cannot take its lock: {error.strerror or error}"
        else:
            why = "" if taken else f"its lock is {describe_holder(claim.holder())}"
        self._claim = (target, claim if taken else None)
        if taken:
            self._say(Say("moved", f"{self.folder} now points to {target}: its manifests are read from there; "
                                   f"the book, lock and runs stay in {self.home}"))
        else:
            self._say(Say("moved", f"{self.folder} now points to {target}, and {why}: a runner started there "
                                   "fires too", "warning"))

    def _load(self) -> None:
        loaded = self.book.load()
        self._unreadable = loaded.status is Status.UNREADABLE
        out = Out(self.memory)
        if loaded.message:
            out.notice(loaded.message, "warning" if loaded.status is not Status.MISSING else "info")
        self.may_fire = loaded.may_fire
        if self.may_fire:
            try:
                contents, problems = read_book(loaded.data) if loaded.status is Status.OK else (BookContents(), [])
            except Unreadable as error:
                out.notice(self.book.move_aside(str(error)).message, "warning")
                contents, problems = BookContents(), []
            for problem in problems:
                out.notice(f"{self.book.path}: {problem}", "warning")
            self.memory.load(contents)
            self.memory.backfills_said = backfills_now(self.memory)  # what a runner before this one said already
            adopt(self.memory, self.homes, out)
        self._carry_out(out.effects)

    # -- one turn ---------------------------------------------------------------------------

    def step(self) -> None:
        if self._unreadable:
            self._load()
        if not self.may_fire:
            return
        self._follow_name()
        self._look_at_folders()
        rescan = self._dirty or self._watch is None or not self._watch.available
        self._dirty = False  # a change from here on is read at the next turn
        reading = self.intake.read(self.memory, self.homes, self._late, rescan=rescan)
        self._late = []
        for what, fault in reading.faults.items():
            if fault is None:
                self._clear_fault(what)
            else:
                self._fault(what, fault)
        if self.echo is not None:
            self._echo_ended(reading.inputs.ends)  # before the lines that say they ended
        stepped = decide(reading.inputs, self.memory)
        self._carry_out(stepped.effects)
        if self.echo is not None:
            for run_dir, (run, schedule) in self._running().items():
                self.echo.follow(run, schedule, run_dir)
        if stepped.changed or self._unsaved:
            self._owed_save = True
        if self._owed_save and time.monotonic() - self._saved_at >= self.save_every:
            self.flush()

    def flush(self) -> None:
        """Save the book owed (``save_every``): at once, as at the loop's end."""
        if self._owed_save:
            self._owed_save = False
            self._save_and_settle()
            self._saved_at = time.monotonic()

    def _running(self) -> dict[Path, tuple[str, str]]:
        """The folders of the runs running now: (run, schedule) of each."""
        return {self.homes.of(f.home).run_dir(f.key): (f.run_id, f.schedule)
                for f in self.memory.firings.values() if f.slot is not None}

    def _echo_ended(self, ends: list[Report]) -> None:
        """--echo: the rest of the output of each run that ended."""
        assert self.echo is not None
        running = self._running()
        for report in ends:
            key, run_dir = report.end.key, report.end.run_dir
            run, schedule = running.get(run_dir, (f"{key.schedule}@{run_dir.name}", key.schedule))
            self.echo.finish(run, schedule, run_dir)

    def _say_output(self, run: str, schedule: str, stream: str, text: str) -> None:
        if self.log_format == "text":
            self.say(f"{run}: {text}" if stream == "stdout" else f"{run} ({stream}): {text}")
        else:
            self._say(Say("output", text, facts={"run": run, "schedule": schedule, "stream": stream}))

    def turn(self) -> None:
        """A step of the loop: a fault no part of the step handles is said once, and the next
        turn goes on (the book, saved at the end of a step, is as a crash would leave it)."""
        self._turned = (self.intake.now()[0], time.monotonic())
        try:
            self.step()
        except Exception as error:  # the runner outlives what one step could not do
            self._fault("step", f"a step failed ({type(error).__name__}: {error}); the runner goes on")
        else:
            self._clear_fault("step")
        if self.metrics is not None:
            firings = self.memory.firings.values()
            self.metrics.turned(sum(f.startable for f in firings), sum(f.slot is not None for f in firings),
                                len(self.memory.controller.state.jobs))

    def rest(self, seconds: float, sleep: Callable[[float], None] = time.sleep) -> None:
        """Wait until the next turn: ``seconds``, or less once a run this runner started ends, so
        that its worker takes the next waiting run at once, not at the next poll, or (watching)
        once its folders change. Asleep in ``select`` on the wrappers' pidfds and the folder watch;
        where the system has no pidfds (or a test injects ``sleep``), it looks every
        ``WAKE_SECONDS``."""
        now = self.seconds()
        to_minute = (now // 60 + 1) * 60 - now  # the next minute's first second: its runs start then
        deadline = time.monotonic() + min(seconds, max(to_minute, 0.001))
        exits = self.homes.exit_fds() if sleep is time.sleep else None
        if exits is None:
            while time.monotonic() < deadline:
                if self.homes.newly_exited():
                    return
                sleep(min(WAKE_SECONDS, max(deadline - time.monotonic(), 0.0)))
            return
        watch = [self._watch.fileno()] if self._watch is not None and self._watch.available else []
        try:
            select.select(exits + watch, [], [], max(deadline - time.monotonic(), 0.0))
        except InterruptedError:  # a signal: the loop looks whether to stop
            pass
        self.homes.newly_exited()  # reaps the wrapper that woke it, so its pidfd is not waited on again

    # -- idle -------------------------------------------------------------------------------

    def watch_folders(self) -> None:
        """Let the kernel say when the folders the runner reads change (:class:`.folder.FolderWatch`),
        so that :meth:`quiet` turns can be skipped; watched anew when the name points elsewhere."""
        if self._watch is not None:
            self._watch.close()
        self._watched_target = os.path.realpath(self.folder)
        self._watch = FolderWatch([Path(self._watched_target), self.home] +
                                  [self.home / sub for sub in (PAUSED_DIR, TRIGGERS_DIR, BACKFILLS_DIR)])

    def say_plan(self) -> None:
        """One line at the start of what will fire and when: ``3 schedules, next: backup at
        2024-03-01 02:00 UTC`` (with the schedules that fire nothing: invalid, suspended, ended)."""
        memory, state = self.memory, self.memory.controller.state
        now = state.clock if state.clock is not None else self.intake.now()[0]
        held = set(memory.held) | set(memory.suspensions) | memory.holding
        soonest: tuple[int, str] | None = None
        ended = 0
        for name, job in state.jobs.items():
            if name in held:
                continue
            fires = upcoming(job.spec, job.state, job.spec.timeline(), now).fires
            ended += fires is None
            if fires is not None and (soonest is None or (fires, name) < soonest):
                soonest = (fires, name)
        count = len(state.jobs)
        parts = [f"{count} schedule{'' if count == 1 else 's'}"]
        quiet = [f"{n} {what}" for n, what in ((len(memory.invalid), "invalid"), (len(held & set(state.jobs)),
                                                                                 "held"), (ended, "ended")) if n]
        if quiet:
            parts[0] += f" ({', '.join(quiet)})"
        parts.append("next: " + (f"{soonest[1]} at {time_of(memory, soonest[1], soonest[0])}" if soonest
                                 else "nothing fires"))
        self._say(Say("plan", ", ".join(parts), facts={"schedules": count, "next": soonest[1] if soonest else None,
                                                      "at": nominal_iso(soonest[0]) if soonest else None}))

    def _look_at_folders(self) -> None:
        """Read what the kernel said of the folders (so that it wakes no rest again): a change makes
        the next turn scan the manifests; every ``IDLE_TURN_SECONDS`` they are scanned all the same."""
        if self._watch is not None and self._watch.changed() or self.intake.manifests.racy:
            self._dirty = True  # changed, or read within the file system's clock tick: read it again
        if time.monotonic() - self._scanned >= IDLE_TURN_SECONDS:
            self._dirty, self._scanned = True, time.monotonic()

    def stop_watching(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    def quiet(self) -> bool:
        """Whether a turn now would find nothing to do, so the loop skips it (an idle runner with
        2,000 manifests scanned them every second): watching its folders, no run of its own, no
        fault or unsaved book, the minute that of the last turn, nothing changed in its folders,
        the name where it pointed, and a full turn less than ``IDLE_TURN_SECONDS`` ago."""
        if self._watch is None or not self._watch.available:
            return False
        self._look_at_folders()
        if self.memory.firings or self._faults or self._unsaved or self._late or self._unreadable or self._owed_save:
            return False
        if self._dirty or time.monotonic() - self._turned[1] >= IDLE_TURN_SECONDS:
            return False
        if os.path.realpath(self.folder) != self._watched_target:
            self.watch_folders()
            return False
        return self.intake.now()[0] == self._turned[0]

    # -- effects ----------------------------------------------------------------------------

    def _carry_out(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Say):
                self._say(effect)
            elif isinstance(effect, Start):
                self._start(effect)
            elif isinstance(effect, Stop):
                self._stop(effect)
            elif isinstance(effect, SetAside):
                self._set_aside(effect)
            elif isinstance(effect, RemovePause):
                self._remove_pause(effect)
            elif isinstance(effect, WritePause):
                self._write_pause(effect)

    def _start(self, start: Start) -> None:
        if self._draining:  # stopping: the firing waits in the book for the next runner
            start_refused(self.memory, start.run_id)
            return
        executor = self.homes.of(start.home)
        definition = self.memory.definitions.get(start.request.schedule)
        try:
            handle = executor.start(start.request, wrapper_timeout(definition) if definition else None,
                                    self.memory.grace_seconds)
        except OSError as error:
            start_refused(self.memory, start.run_id)
            self._process_fault("start", start.request.schedule, start.run_id, error)
            return
        self._clear_fault(f"start {start.run_id}")
        if handle.started:
            if self.metrics is not None:
                self.metrics.started(start.request.nominal, self.seconds())
            self._say(start.said)
        elif not executor.watching(handle.key):
            # It ran, and its end was reported before its firing existed here (a runner that crashed
            # before saving the book restarted with its clock before the launch): the next step records it.
            ended = executor.result(handle.key)
            if ended is not None:
                self._late.append(Report(start.home, ended, acknowledge=False))

    def _stop(self, stop: Stop) -> None:
        try:
            self.homes.of(stop.home).stop(stop.key, stop.reason, stop.grace_seconds)
        except KeyError:  # no process was ever started for it (a book edited by hand)
            pass
        except OSError as error:
            stop_refused(self.memory, stop.run_id)
            self._process_fault("stop", stop.schedule, stop.run_id, error)
            return
        self._clear_fault(f"stop {stop.run_id}")
        self._say(stop.said)

    def _process_fault(self, verb: str, schedule: str, run_id: str, error: OSError) -> None:
        self._fault(f"{verb} {run_id}", f"{schedule}: cannot {verb} {run_id}: {error.strerror or error}; trying "
                                        "again at the next step")

    def _set_aside(self, effect: SetAside) -> None:
        path = effect.path
        kind = "backfill" if path.parent.name == "backfills" else "trigger"
        aside = path.with_name(path.name + effect.suffix)
        try:
            os.replace(path, aside)
        except FileNotFoundError:
            return
        except OSError as error:
            self.memory.left_broken.add(str(path))
            self._say(Say(kind, f"{path}: {effect.why}; it cannot be moved aside ({error.strerror or error}), "
                                "ignored", "warning", {"file": str(path)}))
            return
        self._say(Say(kind, f"{path}: {effect.why}; moved aside as {aside.name}", "warning", {"file": str(path)}))

    def _write_pause(self, effect: WritePause) -> None:
        """A pause record that cannot be written pauses nothing past this step (the next one reads
        the records again): the fault says so."""
        try:
            write_pause(self.home, effect.schedule, effect.reason, effect.since)
            self._clear_fault(f"pause {effect.schedule}")
        except OSError as error:
            self._fault(f"pause {effect.schedule}", f"{effect.schedule}: cannot write the pause record "
                                                    f"{pause_path(self.home, effect.schedule)} ({effect.reason}): "
                                                    f"{error.strerror or error}; it is not paused")

    def _remove_pause(self, effect: RemovePause) -> None:
        try:
            remove_pause(self.home, effect.schedule)
        except OSError as error:
            self._fault(f"unpause {effect.schedule}", f"{effect.schedule}: cannot delete the pause record of a "
                                                      f"retired schedule {effect.path}: {error.strerror or error}")

    # -- the book ---------------------------------------------------------------------------

    def save(self) -> None:
        """Write the book (raises OSError as the file system does)."""
        self.book.save(self.memory.book())

    def _save_and_settle(self) -> None:
        """Save the book; once it is saved, acknowledge the ends and delete the trigger files
        it records, and prune the run folders retention drops. A save that fails is said once
        and tried again at the next step."""
        try:
            self.save()
        except OSError as error:
            self._unsaved = True
            self._fault("save", f"cannot save the book {self.book.path}: {error.strerror or error}; the runner "
                                "goes on with what it has in memory and tries again every step")
            return
        self._unsaved = False
        if self._clear_fault("save"):
            self._say(Say("saved", f"the book {self.book.path} is saved again; nothing was lost"))
        memory = self.memory
        keep: list[Any] = []
        ended: set[str] = set()
        marked = []
        for home, key in memory.to_acknowledge:  # all marked, then all made durable: one journal commit
            try:
                self.homes.of(home).acknowledge(key, durable=False)
                marked.append((home, key))
            except OSError:
                keep.append((home, key))  # said by the next save's fault, if the disk stays so
        for home, key in marked:
            try:
                self.homes.of(home).make_durable(key)
                ended.add(key.schedule)
            except OSError:
                keep.append((home, key))
        memory.to_acknowledge = keep
        for schedule in sorted(ended):
            self._prune(schedule)
        for name, path in list(memory.taken.items()):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                continue
            del memory.taken[name]
        self.homes.close({f.home for f in memory.firings.values() if f.home} | {h for h, _ in keep if h})

    def _prune(self, schedule: str) -> None:
        """Delete the run folders retention drops (:mod:`.retention`)."""
        try:
            for action in retention.plan(self.memory, schedule, self.homes.opened()):
                folder = self.home / action.home if action.home is not None else self.home
                if isinstance(action, retention.RemoveHome):
                    if folder.is_dir():
                        remove_tree(folder)
                elif action.home is None or folder.is_dir():
                    self.homes.of(action.home).prune(schedule, action.keep, through=action.through)
                    if action.last and action.home is not None and not any((folder / "runs").glob("*/*")):
                        self.homes.forget(action.home)
                        remove_tree(folder)
        except OSError as error:  # the disk: said, and tried again at the next end
            self._fault("prune", f"cannot prune the run folders of {schedule}: {error.strerror or error}")

    # -- what the runner says ----------------------------------------------------------------

    def _say(self, line: Say) -> None:
        """One line: the message, or in JSON the same facts as fields."""
        if self.metrics is not None:
            self.metrics.said(line.event, line.facts)
        if self.log_format == "text":
            self.say(line.message)
            return
        fields = {"time": utc_iso(self.seconds()), "level": line.level, "event": line.event,
                  "message": line.message, **line.facts}
        self.say(json.dumps(fields, ensure_ascii=False))

    def _fault(self, what: str, text: str) -> None:
        """Say a fault once, until it clears (``_clear_fault``)."""
        if self._faults.get(what) != text:
            self._faults[what] = text
            self._say(Say("fault", text, "error"))

    def _clear_fault(self, what: str) -> bool:
        return self._faults.pop(what, None) is not None

    # -- the loop ---------------------------------------------------------------------------

    def waiting_reason(self) -> str | None:
        return waiting_reason(self.memory)

    def _under_way(self) -> list[Firing]:
        return [f for f in self.memory.firings.values() if f.slot is not None]

    def wait_for_runs(self, limit: float, poll_seconds: float = 1.0) -> None:
        """``--wait-runs``: asked to stop, start nothing more and wait for the runs under way to end,
        recording each, for at most ``limit`` seconds (``math.inf``: as long as they run); then, or at
        a second signal, stop the rest (SIGTERM to each group, SIGKILL after the grace) and record them
        ``stopped``, as supercronic forwards SIGTERM to its jobs and waits for them."""
        if not self._under_way():
            return
        self._draining = True
        runs = ", ".join(f.run_id for f in self._under_way())
        bound = "" if limit == math.inf else f" (at most {limit:g} s, then they are stopped)"
        self._say(Say("waiting", f"cronctl: stopping: waiting for the runs under way to end{bound}: {runs}",
                      facts={"runs": [f.run_id for f in self._under_way()], "limit_seconds":
                             None if limit == math.inf else limit}))
        deadline = time.monotonic() + limit
        try:
            self._turn_while(lambda: bool(self._under_way()) and time.monotonic() < deadline, poll_seconds)
        except KeyboardInterrupt:  # a second signal: stop them now
            pass
        if self._under_way():
            out = Out(self.memory)
            for firing in self._under_way():
                if firing.stopping is None:
                    firing.note = firing.note or f"the runner was stopping and --wait-runs' {limit:g} s passed"
                    ask_stop(self.memory, firing, STOPPED, out)
            self._carry_out(out.effects)
            last = time.monotonic() + self.memory.grace_seconds + 5.0  # the SIGKILL, and its end read
            self._turn_while(lambda: bool(self._under_way()) and time.monotonic() < last, poll_seconds)

    def _turn_while(self, going: Callable[[], bool], poll_seconds: float) -> None:
        while going():
            self.turn()
            self.rest(poll_seconds)
        self.turn()  # the last ends recorded and the book saved

    def say_stopped(self) -> None:
        """The line for Ctrl-C: the runs that go on (under their wrappers) for the next runner."""
        running = [f for f in self.memory.firings.values() if f.slot is not None]
        described = []
        for firing in running:
            try:
                pid = (read_json(self.homes.of(firing.home).run_dir(firing.key) / "pid") or {}).get("pid")
            except (OSError, ValueError):
                pid = None
            described.append(f"{firing.run_id} (pid {pid})" if pid else f"{firing.run_id} (starting)")
        if not running:
            text = "cronctl: stopped; no run was running"
        else:
            verb = "run goes on" if len(running) == 1 else "runs go on"
            text = f"cronctl: stopped; {len(running)} {verb} and the next runner adopts them: {', '.join(described)}"
        self._say(Say("stopped", text, facts={"runs": [f.run_id for f in running]}))


def run_forever(runner: Runner, poll_seconds: float = 1.0, retry_lock_seconds: float = DEFAULT_RETRY_SECONDS,
                should_stop: Callable[[], bool] = lambda: False, wait_runs: float | None = None) -> None:
    """Take the lock (waiting read-only while another runner holds it), then step every
    ``poll_seconds`` until ``should_stop``. Ctrl-C returns too, saying which runs go on:
    they run under detached wrappers, and the next runner adopts them; with ``wait_runs``
    (seconds, ``math.inf`` for no limit) it waits for them first (:meth:`Runner.wait_for_runs`)."""
    shown = False

    def show_once(holder: object) -> None:
        nonlocal shown
        if shown or not runner.book.path.exists():
            return
        shown = True
        from .status_view import status_lines  # the read-only view of what the holder fires
        try:
            for line in status_lines(runner_home(runner.folder)):
                runner.say(line)
        except SystemExit as refused:  # the views' way to say the book cannot be shown
            runner.say(str(refused))

    runner.save_every = SAVE_EVERY_SECONDS
    try:
        if not runner.open():
            # Blocked on the lock (no polling): the holder's end, kill -9 included, hands it over at once.
            if not wait_on_lock(runner.lock, should_stop, min(poll_seconds, retry_lock_seconds), show_once):
                return
            runner.open()
        runner.watch_folders()
        runner.turn()
        runner.say_plan()
        while not should_stop():
            if not runner.quiet():
                runner.turn()
            runner.rest(poll_seconds)
    except KeyboardInterrupt:
        if wait_runs is not None:
            runner.wait_for_runs(wait_runs, poll_seconds)
        runner.say_stopped()
    finally:
        runner.flush()
        runner.stop_watching()
