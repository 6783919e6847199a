"""The single-node runner: the core's decisions carried out as local processes.

``Runner.step`` is one turn of the loop: read the manifests, consume manual
triggers, let the in-memory controller (``cronctl.core``) step, hand due
firings to free worker slots, stop runs the core timed out or replaced, and
record how runs ended. Everything it must not forget lives in the book
(``cronctl.json``): the controller's state, the firings waiting for a slot,
running, or waiting for their next attempt, each schedule's last 200 runs, and
the overflow of a schedule that has not fired on time since.

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

Crash safety rests on the executor's key (schedule, nominal time, attempt):
a crash between starting a process and saving the book makes the next
runner decide the same launch (or retry) again, and ``Executor.start`` then
returns the run that already exists instead of starting a second process.
Outcomes are acknowledged to the executor only after the book that records
them is saved; an end reported again after a restart is only acknowledged.
"""

from __future__ import annotations

import dataclasses
import json
import time
from itertools import groupby
from pathlib import Path
from typing import Any, Callable

from ..core.controller import Controller
from ..core.errors import CronctlError
from ..core.spec import JobSpec
from ..core.state import FAILED, RETRY_PENDING, RUNNING, SUCCEEDED, TIMED_OUT, ControllerState
from ..core.tick import Coalesce, Enqueue, Launch, Overflow, Replace, Retry, Skip, start_time
from ..core.transitions import Applied, hold
from ..manifest import read_spec
from .book import Book, Status
from .definitions import Definition, image_notice, load_definitions
from .executor import Executor, RunKey, RunRequest
from .firing import TRIGGERS_DIR, Firing, Overflowed
from .lock import RunnerLock, describe_holder, runner_identity
from .slots import SlotPool, order_due

HISTORY_LIMIT = 200
SWITCH_OFF_FILE = "cronctl.disabled"  # the node switch: while it exists nothing fires
SCHEDULED = "scheduled"


def job_spec(definition: Definition, created_at: int, index: int) -> JobSpec:
    """The core's view of a manifest: the operator's reader, so both read the same fields."""
    body = {"metadata": {"name": definition.name}, "spec": definition.spec}
    return dataclasses.replace(read_spec(body, created_at).job, index=index)


def is_suspended(definition: Definition) -> bool:
    return bool(definition.spec.get("suspend", False))


class Runner:
    def __init__(self, folder: Path, minute: Callable[[], int], workers: int,
                 say: Callable[[str], None] = print, grace_seconds: float = 10.0,
                 seconds: Callable[[], float] | None = None) -> None:
        self.folder = folder
        self.minute = minute
        # The second within the clock's minute, for jitter (wall time unless a test says otherwise).
        self.seconds = seconds or (lambda: minute() * 60 + time.time() % 60)
        self.say = say
        self.grace_seconds = grace_seconds
        self.book = Book(folder)
        self.lock = RunnerLock(folder, runner_identity())
        self.executor = Executor(folder)
        self.slots = SlotPool(workers)
        self.controller = Controller()
        self.firings: dict[str, Firing] = {}
        self.journal: dict[str, list[dict[str, Any]]] = {}
        # What a waiting firing will run: the command as it was when the firing became due.
        self.snapshots: dict[str, dict[str, Any]] = {}
        # Per schedule, its last overflow (Overflowed.to_json), until it fires on time again.
        self.overflows: dict[str, dict[str, Any]] = {}
        self.definitions: dict[str, Definition] = {}
        self.may_fire = True
        self._noticed: set[str] = set()
        self._to_acknowledge: list[RunKey] = []  # ends recorded, acknowledged once the book is saved

    # -- start ----------------------------------------------------------------------------

    def open(self) -> bool:
        """Take the lock and load the book; False when another runner holds the lock."""
        if not self.lock.try_acquire():
            self.say(f"read-only: {describe_holder(self.lock.holder())} fires these schedules; "
                     "trying again every 60 seconds")
            return False
        loaded = self.book.load()
        if loaded.message:
            self.say(loaded.message)
        if loaded.status is Status.NEWER:
            self.may_fire = False
            return True
        data = loaded.data if loaded.status is Status.OK else {}
        if "controller" in data:
            self.controller = Controller(ControllerState.from_json(data["controller"]))
        self.firings = {f["run_id"]: Firing(**f) for f in data.get("firings", [])}
        self.journal = data.get("journal", {})
        self.snapshots = data.get("snapshots", {})
        self.overflows = data.get("overflows", {})
        self.executor.adopt()
        for firing in self.firings.values():
            if firing.slot is not None:
                self.slots.take(firing.slot)
        return True

    # -- one turn ---------------------------------------------------------------------------

    def step(self) -> None:
        if not self.may_fire:
            return
        now = self.minute()
        if self.controller.state.clock is not None and now < self.controller.state.clock:
            now = self.controller.state.clock  # a clock that went back fires nothing again
        changed = self._sync_definitions(now)
        changed |= self._hold_suspended(now)
        changed |= self._take_triggers(now)
        # Runs end before the tick decides, as in the harness (finish, then tick): a run over by
        # now frees a Forbid schedule's time, and the core's timeouts come first (advance), so an
        # end reported at the very expiry is too late.
        self.controller.advance(now)
        changed |= self._record_ends(now)
        applied = self.controller.step(now)
        self._carry_out_tick(applied, now)
        changed |= any(item.news for item in applied)
        changed |= self._stop_expired()
        changed |= self._drop_expired(now)
        changed |= self._start_waiting(now)
        if changed:
            self.save()
            for key in self._to_acknowledge:
                self.executor.acknowledge(key)
            self._to_acknowledge = []

    def save(self) -> None:
        self.book.save({"controller": self.controller.state.to_json(),
                        "firings": [firing.to_json() for firing in self.firings.values()],
                        "journal": self.journal, "snapshots": self.snapshots, "overflows": self.overflows,
                        "workers": self.slots.size})

    # -- manifests -----------------------------------------------------------------------

    def _sync_definitions(self, now: int) -> bool:
        loaded = load_definitions(self.folder)
        for problem in loaded.errors:
            self._notice(str(problem))
        notice = image_notice(loaded.definitions)
        if notice:
            self._notice(notice)
        self.definitions = {d.name: d for d in loaded.definitions}
        state = self.controller.state
        changed = False
        for definition in loaded.definitions:
            job = state.jobs.get(definition.name)
            try:
                spec = job_spec(definition, now if job is None else job.spec.created_at,
                                len(state.jobs) if job is None else job.spec.index)
                if job is None:
                    self.controller.add_job(spec)
                    changed = True
                elif spec != job.spec:
                    job.spec = spec  # an edit changes later firings only
                    self.controller = Controller(state)
                    changed = True
            except CronctlError as error:
                self._notice(f"{definition.file}: CronSchedule {definition.name!r}: {error.message}")
        return changed

    def _hold_suspended(self, now: int) -> bool:
        """A suspended schedule, or every schedule while the node switch is off, counts no
        missed run: its window of missed times starts after this minute."""
        switched_off = (self.folder / SWITCH_OFF_FILE).exists()
        if switched_off:
            self._notice(f"the node switch is off ({SWITCH_OFF_FILE} exists): nothing fires")
        held = False
        for name, job in self.controller.state.jobs.items():
            definition = self.definitions.get(name)
            if switched_off or (definition is not None and is_suspended(definition)):
                held |= hold(job.state, now)
        if held:
            self.controller = Controller(self.controller.state)  # re-derive who is due
        return held

    def _notice(self, text: str) -> None:
        if text not in self._noticed:
            self._noticed.add(text)
            self.say(text)

    # -- manual triggers -------------------------------------------------------------------

    def _take_triggers(self, now: int) -> bool:
        folder = self.folder / TRIGGERS_DIR
        if not folder.is_dir():
            return False
        changed = False
        for path in sorted(folder.glob("*.json")):
            name = json.loads(path.read_text()).get("schedule")
            try:
                self._carry_out(self.controller.trigger(now, name), now)
                changed = True
            except CronctlError as error:
                self.say(f"trigger {path.name}: {error.message}")
            path.unlink()
        return changed

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
            self.say(f"{schedule}: {note.describe(self.controller.state.jobs[schedule].spec.options.tz)}")
        elif schedule in self.overflows and (note.launched or note.queued):
            # The same overflow goes on, and this tick launches (the run that kept it waiting ended).
            self.overflows[schedule].update(launched=note.launched, queued=note.queued, skipped=None)

    def _carry_out(self, decision: object, now: int) -> None:
        if isinstance(decision, Launch):
            command = self.snapshots.pop(_snapshot_key(decision.job, decision.scheduled_for), None)
            if command is None:
                command = self._command_of(decision.job)
            command.pop("reason", None)  # a book written before launches carried their reason has it here
            firing = Firing(decision.run_id, decision.job, decision.scheduled_for, decision.reason, **command)
            job = self.controller.state.jobs[decision.job]
            firing.start_at = start_time(job.spec, decision)
            self.firings[decision.run_id] = firing
        elif isinstance(decision, Enqueue):
            # The firing keeps the command it had when it became due; an edit changes later ones.
            self.snapshots[_snapshot_key(decision.job, decision.scheduled_for)] = self._command_of(decision.job)
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

    def _command_of(self, schedule: str) -> dict[str, Any]:
        definition = self.definitions[schedule]
        return {"command": list(definition.command), "args": list(definition.args), "env": dict(definition.env)}

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
        if decision.job not in self.definitions:
            self._notice(f"{decision.job}: no manifest to retry run {run.id} with")
            return None
        failed = self.executor.result(RunKey(run.job, run.scheduled_for, decision.attempt - 1))
        reason = failed.request.get("reason") if failed is not None else None
        firing = Firing(run.id, run.job, run.scheduled_for, reason or SCHEDULED,
                        **self._command_of(run.job), start_at=run.scheduled_for * 60)
        self.firings[run.id] = firing
        return firing

    def _stop_or_drop(self, firing: Firing, reason: str, now: int) -> None:
        if firing.slot is None:  # not running (never started, or waiting for a retry): it only leaves
            self._remember(firing.schedule, self._entry(firing, reason, now, firing.attempts_made))
            return
        self.firings[firing.run_id] = firing  # keeps its slot until the process is gone
        firing.stopping = reason
        self.executor.stop(firing.key, reason, self.grace_seconds)

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
                firing.stopping = reason
                self.executor.stop(firing.key, reason, self.grace_seconds)
                stopped = True
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
        ended = self.executor.poll()
        for end in ended:
            firing = self._firing_running(end.key)
            if firing is not None:
                self._end_attempt(firing, end.outcome, end.started_at, now)
            self._to_acknowledge.append(end.key)
        return bool(ended)

    def _firing_running(self, key: RunKey) -> Firing | None:
        """The firing whose current attempt is ``key``; None for an end recorded before (reported
        again after a restart: the book already moved on) or of a run the book does not know."""
        return next((f for f in self.firings.values() if f.key == key and f.retry_due is None), None)

    def _end_attempt(self, firing: Firing, outcome: str, started_at: str | None, now: int) -> None:
        """An attempt ended: the firing waits for its next attempt, or its run is over."""
        if firing.slot is not None:  # None: the restarted runner had not started it again yet
            self.slots.release(firing.slot)
            firing.slot = None
        firing.actual = firing.actual or started_at
        retry_due = self._finish_attempt(firing, outcome, now)
        if retry_due is not None:
            firing.retry_due = retry_due
            return
        del self.firings[firing.run_id]
        run = self.controller.state.runs.get(firing.run_id)
        if run is not None and run.state == TIMED_OUT:  # the core's verdict: its timeout came first
            outcome = TIMED_OUT
        self._remember(firing.schedule, self._entry(firing, outcome, now, firing.attempt))

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
            firing.slot = slot
            handle = self.executor.start(RunRequest(firing.schedule, firing.nominal, firing.command, firing.args,
                                                    firing.env, firing.reason, firing.attempt))
            if not handle.started and not self.executor.watching(handle.key):
                self._end_known_run(firing, handle.key, now)
            started = True
        return started

    def _end_known_run(self, firing: Firing, key: RunKey, now: int) -> None:
        """The attempt ran and its end was reported before its firing existed here: a runner
        that crashed before saving the book restarted with its clock before the launch, so
        the end came with nothing to record it on. It is recorded now."""
        ended = self.executor.result(key)
        if ended is not None:
            self._end_attempt(firing, ended.outcome, ended.started_at, now)

    # -- history ----------------------------------------------------------------------------

    @staticmethod
    def _entry(firing: Firing, outcome: str, now: int, attempts: int) -> dict[str, Any]:
        return {"run": firing.run_id, "reason": firing.reason, "nominal": firing.nominal, "actual": firing.actual,
                "attempts": attempts, "outcome": outcome, "finished": now}

    def _remember(self, schedule: str, entry: dict[str, Any]) -> None:
        entries = self.journal.setdefault(schedule, [])
        entries.append(entry)
        del entries[:-HISTORY_LIMIT]

    # -- the loop ---------------------------------------------------------------------------

    def waiting_reason(self) -> str | None:
        if any(f.startable for f in self.firings.values()) and self.slots.free_count == 0:
            return self.slots.describe_wait()
        return None


def _snapshot_key(schedule: str, nominal: int) -> str:
    return f"{schedule}@{nominal}"


def run_forever(runner: Runner, poll_seconds: float = 1.0, retry_lock_seconds: float = 60.0,
                should_stop: Callable[[], bool] = lambda: False) -> None:
    shown = False
    while not runner.open():
        if not shown and runner.book.path.exists():  # read-only: show what the holder fires
            from .views import status_lines
            for line in status_lines(runner.folder):
                runner.say(line)
            shown = True
        for _ in range(int(retry_lock_seconds / poll_seconds)):
            if should_stop():
                return
            time.sleep(poll_seconds)
    if not runner.may_fire:
        runner.say("nothing fires: the book is of a newer version")
    while not should_stop():
        runner.step()
        time.sleep(poll_seconds)
