"""The executor: one firing runs as one local process, at most once, and its outcome survives.

The seed's correlation key of a firing is (schedule name, nominal minute);
a run retried after a failed attempt adds the attempt number, so the key of
one process is (schedule, nominal minute, attempt). This module guarantees,
whatever crashes when, that no second process starts for one key, and that
the outcome of a started run is not lost. It owns the folder ``runs/`` of the
base folder; it decides nothing about *when* to fire, retry or stop (that is
the core's job, wired by the caller).

One directory per key: ``runs/<schedule>/<nominal YYYYmmddTHHMM>/`` for the
first attempt (the folder every run had before retries), and
``runs/<schedule>/<nominal YYYYmmddTHHMM>.<attempt>/`` for attempt 2 on:

=============  =========================================================
request.json   what to run (command, args, env, cwd, reason, nominal
               time, attempt, submitted_at, max_log_bytes); written by
               :meth:`start`; :meth:`adopt` rebuilds the key from it
               (attempt 1 if absent)
wrapper.log    the wrapper's own output (tracebacks, if any)
wrapper.lock   flock'ed by the live wrapper: its liveness, across restarts
launching      written by the wrapper just before starting the command
pid            {pid, pgid, wrapper_pid, started_at} of the command
stdout.log     the command's output, and stderr.log its errors: each the
               tail of at most ``max_log_bytes`` (see "Output cap")
stop.json      {reason, requested_at, grace_seconds, kill_at}: a stop was asked
exit.json      {exit_code, signal, started_at, finished_at[, note, lost]}
acknowledged   the caller recorded the outcome (see :meth:`acknowledge`)
=============  =========================================================

Submit-or-get: :meth:`start` creates the directory with ``os.mkdir``;
succeeding means this call owns the start, failing means the run exists and
its handle is returned without starting anything. The process is started by
:mod:`.wrapper` in a session of its own, so killing the runner (even with
SIGKILL) neither kills the run nor loses its exit status: the wrapper writes
``exit.json``. The wrapper claims the run with a lock and refuses a run that
was already launched, so even a doubled wrapper starts the command once.

Crash points of :meth:`start` and what a restarted runner does:

- after the mkdir, before ``request.json``: nothing was started. The folder is
  not adopted (its request is unknown); the next :meth:`start` of the key
  (the core fires the unsaved firing, or decides the unsaved retry, again)
  finishes the start.
- after ``request.json``, before the wrapper started: :meth:`adopt` watches it;
  :meth:`poll` finds no live wrapper and no ``launching``, so no process ever
  ran, and starts a wrapper for it (the run is resumed, not lost).
- after the wrapper started: the wrapper runs on; :meth:`adopt` watches it
  through ``wrapper.lock`` and :meth:`poll` reports its ``exit.json``.

Each attempt has its own folder, so all of this holds per attempt: a crash
while starting attempt 2 neither starts a second process for attempt 2 nor
touches attempt 1's folder, whose outcome stays as recorded.

A wrapper that died after ``launching`` without writing ``exit.json`` (the
machine restarted, or someone killed it) is reported as ``failed`` with a
note starting "lost:". Its command is not signalled: after a restart its
process group id may belong to someone else.

Outcomes: ``succeeded`` (exit 0), ``failed`` (any other exit, a signal from
elsewhere, a command that cannot start, a lost run), or the reason given to
:meth:`stop` (``timed_out``, ``stopped``, ``canceled``) whenever a stop was
asked before the run's end was seen, whatever the exit code.

Delivery is at least once: :meth:`poll` reports each end once per Executor;
after a restart, :meth:`adopt` reports again every run not acknowledged. The
caller records an outcome in the book, saves the book, then calls
:meth:`acknowledge`.

Output cap: each run's ``stdout.log`` and ``stderr.log`` keep at most the
Executor's ``max_log_bytes`` (default :data:`DEFAULT_MAX_LOG_BYTES`, 10 MiB,
each), the last bytes, the ones that say why a job failed. The wrapper reads
the command's pipes and, once a log is past the cap by a slack (a quarter of
the cap), rewrites it atomically as the marker line ``[cronctl: N earlier
bytes cut; the last M are kept]`` and the last cap bytes; when the run has
ended (``exit.json`` exists) a log holds at most that marker and the cap,
and while it runs at most the marker, 1.25 x the cap and one read (64 KiB),
also if the wrapper is killed midway. The cap is stored in request.json, so
a run keeps the cap it started with.

Pruning: :meth:`prune` deletes the folders of a schedule's finished runs
(ended and acknowledged) that the caller's history retention no longer
keeps. A folder is renamed to a hidden ``.deleting-*`` name first, so a crash
midway leaves it whole or hidden; :meth:`adopt` and :meth:`prune` skip
hidden names, and the next :meth:`prune` of the schedule finishes it.

One Executor per base folder at a time (the holder of :mod:`.lock`), used
from one thread. ``now`` (epoch seconds) is injected: it stamps requests and
stops and decides when a stop's grace period is over.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection

from .files import atomic_write_json, finish_removals, fsync_dir, read_json, remove_tree, utc_iso
from .values import Ended, RunKey, RunRequest, nominal_iso, run_folder_name
from .wrapper import DEFAULT_MAX_LOG_BYTES, DISK_FULL, NOT_MINE

RUNS_DIR = "runs"
STOP_REASONS = ("timed_out", "stopped", "canceled")
OUTCOMES = ("succeeded", "failed") + STOP_REASONS
WRAPPER = Path(__file__).with_name("wrapper.py")
MAX_RESUMES = 3
WRAPPER_EXIT_SECONDS = 0.5  # how long one prune waits for wrappers that wrote exit.json to exit
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")


@dataclass(frozen=True)
class RunHandle:
    key: RunKey
    run_dir: Path
    request: dict[str, Any]  # as stored in request.json
    started: bool  # True when this call started the run, False when it already existed


@dataclass
class _Watch:
    key: RunKey
    run_dir: Path
    request: dict[str, Any]
    popen: subprocess.Popen[bytes] | Forked | None = None
    wrapper_failed: int | None = None
    resumes: int = 0
    term_sent: bool = False
    kill_sent: bool = False


def _check_request(request: RunRequest) -> None:
    if not isinstance(request.schedule, str) or _SAFE_NAME.fullmatch(request.schedule) is None:
        raise ValueError(f"schedule {request.schedule!r}: not usable as a folder name")
    if not isinstance(request.nominal, int) or isinstance(request.nominal, bool):
        raise TypeError(f"nominal {request.nominal!r}: must be minutes since 1970 UTC (int)")
    if not isinstance(request.attempt, int) or isinstance(request.attempt, bool) or request.attempt < 1:
        raise ValueError(f"attempt {request.attempt!r}: must be a whole number >= 1")
    if isinstance(request.command, str) or not request.command \
            or not all(isinstance(part, str) for part in request.command):
        raise ValueError(f"command {request.command!r}: must be a non-empty list of strings")
    if isinstance(request.args, str) or not all(isinstance(part, str) for part in request.args):
        raise ValueError(f"args {request.args!r}: must be a list of strings")


class Executor:
    def __init__(self, base_dir: str | os.PathLike[str], now: Callable[[], float] = time.time,
                 python: str = sys.executable, checkpoint: Callable[[str], None] | None = None,
                 max_log_bytes: int = DEFAULT_MAX_LOG_BYTES) -> None:
        """``checkpoint(name)`` is called at each step of :meth:`start` (``after_mkdir``,
        ``after_request``, ``after_spawn``); tests use it to kill the runner right there.
        ``max_log_bytes`` caps each stream of each run this Executor starts (see "Output cap")."""
        if not isinstance(max_log_bytes, int) or isinstance(max_log_bytes, bool) or max_log_bytes < 1:
            raise ValueError(f"max_log_bytes {max_log_bytes!r}: must be a whole number of bytes >= 1")
        self.max_log_bytes = max_log_bytes
        self.base_dir = Path(base_dir).resolve()
        self.runs_dir = self.base_dir / RUNS_DIR
        self._now = now
        self._python = python
        self._checkpoint = checkpoint or (lambda name: None)
        self._watched: dict[RunKey, _Watch] = {}
        self._reported: set[RunKey] = set()
        self._exiting: list[subprocess.Popen[bytes] | Forked] = []  # wrappers that wrote exit.json, to reap
        self._pidfds: dict[int, int] = {}  # id of a running wrapper's Popen -> its pidfd (exit_fds)

    def run_dir(self, key: RunKey) -> Path:
        return self.runs_dir / key.schedule / run_folder_name(key)

    # -- starting ---------------------------------------------------------------------------

    def start(self, request: RunRequest, timeout_seconds: float | None = None,
              grace_seconds: float = 10.0) -> RunHandle:
        """Submit or get: start the run of ``request.key`` unless it was started before. With
        ``timeout_seconds`` its wrapper stops it once it has run that long by its own (monotonic)
        time, SIGKILL ``grace_seconds`` after SIGTERM, and reports it ``timed_out``."""
        _check_request(request)
        key = request.key
        run_dir = self.run_dir(key)
        if key in self._watched:
            return RunHandle(key, run_dir, self._watched[key].request, started=False)
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(run_dir)
        except FileExistsError:
            made = False
        else:
            made = True  # made durable with the request below: one commit of the file system's journal
        self._checkpoint("after_mkdir")
        stored = read_json(run_dir / "request.json")
        if stored is not None:
            if key not in self._reported and not (run_dir / "acknowledged").exists():
                self._watched.setdefault(key, _Watch(key, run_dir, stored))
            return RunHandle(key, run_dir, stored, started=False)
        # The folder is ours: either we just made it, or a start crashed before writing
        # request.json, in which case no wrapper can have run (it needs request.json).
        body = {
            "schedule": key.schedule, "nominal_minute": key.nominal, "nominal_time": nominal_iso(key.nominal),
            "command": list(request.command), "args": list(request.args), "env": dict(request.env),
            "cwd": str(request.cwd) if request.cwd is not None else str(self.base_dir),
            "reason": request.reason, "attempt": request.attempt, "submitted_at": utc_iso(self._now()),
            "max_log_bytes": self.max_log_bytes, "active_deadline_seconds": request.active_deadline_seconds,
            "backoff_limit": request.backoff_limit,
        }
        if timeout_seconds is not None:
            body.update(timeout_seconds=timeout_seconds, grace_seconds=grace_seconds)
        # The request's fsyncs (its file, its folder), then its folder's entry in the schedule's: each
        # fsync that follows a change commits the file system's journal (milliseconds on a busy disk),
        # one that follows none costs next to nothing, so the folder's is last (it was first: 3 commits).
        atomic_write_json(run_dir / "request.json", body)
        if made:
            fsync_dir(run_dir.parent)
        self._checkpoint("after_request")
        watch = _Watch(key, run_dir, body)
        watch.popen = self._spawn(run_dir)
        self._watched[key] = watch
        self._checkpoint("after_spawn")
        return RunHandle(key, run_dir, body, started=True)

    def _spawn(self, run_dir: Path) -> subprocess.Popen[bytes] | Forked:
        zygote = _zygote(self._python)
        if zygote is not None:
            try:
                return zygote.fork(run_dir, lambda: self._spawn_alone(run_dir))
            except OSError:  # the server is gone: a process of its own, as without it
                pass
        return self._spawn_alone(run_dir)

    def _spawn_alone(self, run_dir: Path) -> subprocess.Popen[bytes]:
        with open(run_dir / "wrapper.log", "ab") as log:
            return subprocess.Popen([self._python, "-s", "-E", str(WRAPPER), str(run_dir)],
                                    cwd=run_dir, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)

    # -- after a restart --------------------------------------------------------------------

    def adopt(self) -> list[RunHandle]:
        """Watch every run in ``runs/`` whose outcome was not acknowledged.

        Live runs are watched until they end; ended ones are reported by the
        next :meth:`poll`; dead ones are resumed or reported lost by it.
        """
        handles: list[RunHandle] = []
        if not self.runs_dir.is_dir():
            return handles
        for schedule_dir in sorted(self.runs_dir.iterdir()):
            if not schedule_dir.is_dir() or schedule_dir.name.startswith("."):
                continue
            for run_dir in sorted(schedule_dir.iterdir()):
                if run_dir.name.startswith(".") or not run_dir.is_dir() \
                        or (run_dir / "acknowledged").exists():
                    continue  # hidden: a folder being removed (see prune)
                request = read_json(run_dir / "request.json")
                if not isinstance(request, dict):
                    continue  # a start that crashed before its request: the next start() finishes it
                key = RunKey(request["schedule"], request["nominal_minute"], request.get("attempt", 1))
                if self.run_dir(key) != run_dir or key in self._watched or key in self._reported:
                    continue
                self._watched[key] = _Watch(key, run_dir, request)
                handles.append(RunHandle(key, run_dir, request, started=False))
        return handles

    # -- watching ---------------------------------------------------------------------------

    def active(self) -> list[RunHandle]:
        """The runs being watched (started or adopted, end not yet reported)."""
        return [RunHandle(w.key, w.run_dir, w.request, started=False) for w in self._watched.values()]

    def watching(self, key: RunKey) -> bool:
        """Whether a later :meth:`poll` will report the end of ``key`` (False once it has)."""
        return key in self._watched

    def exit_fds(self) -> list[int] | None:
        """A descriptor for each wrapper this executor started that runs yet (Linux's pidfd; for
        the ones the forking server started, its answers): each turns readable when a wrapper exits,
        so that a resting runner sleeps until then. None where pidfds are missing (the runner then
        looks every ``WAKE_SECONDS``)."""
        running = {id(w.popen): w.popen for w in self._watched.values()
                   if w.popen is not None and w.popen.returncode is None}
        for key in [k for k in self._pidfds if k not in running]:
            os.close(self._pidfds.pop(key))
        servers = {popen.server.fileno() for popen in running.values()
                   if isinstance(popen, Forked) and popen.alone is None}
        started: dict[int, subprocess.Popen[bytes]] = {}
        for key, popen in running.items():
            alone = popen.alone if isinstance(popen, Forked) else popen
            if alone is not None:
                started[key] = alone
        if started and not hasattr(os, "pidfd_open"):
            return None
        for key, popen in started.items():
            if key not in self._pidfds:
                try:
                    self._pidfds[key] = os.pidfd_open(popen.pid)
                except OSError:  # an old kernel
                    return None
        return list(self._pidfds.values()) + sorted(servers)

    def newly_exited(self) -> bool:
        """Whether the wrapper of a run this executor started has exited since the last look (its
        run has ended: a worker is free). Each exit is seen once; ``poll`` reads its outcome."""
        return any(watch.popen is not None and watch.popen.returncode is None and watch.popen.poll() is not None
                   for watch in list(self._watched.values()))

    def poll(self) -> list[Ended]:
        """The runs that ended since the last poll; also moves stops on (SIGKILL after the grace)."""
        ended = []
        self._exiting = [popen for popen in self._exiting if popen.poll() is None]
        for watch in list(self._watched.values()):
            outcome = self._exit_of(watch)
            if outcome is None:
                self._escalate(watch)
                continue
            if watch.popen is not None and watch.popen.poll() is None:
                self._exiting.append(watch.popen)  # it exits right after writing exit.json
            ended.append(self._ended(watch.key, watch.run_dir, watch.request, outcome))
            del self._watched[watch.key]
            self._reported.add(watch.key)
        return ended

    def result(self, key: RunKey) -> Ended | None:
        """How the run of ``key`` ended, read from its folder; None while it runs or if unknown."""
        run_dir = self.run_dir(key)
        outcome = read_json(run_dir / "exit.json")
        request = read_json(run_dir / "request.json")
        if outcome is None or request is None:
            return None
        return self._ended(key, run_dir, request, outcome)

    def acknowledge(self, key: RunKey, durable: bool = True) -> None:
        """The caller has saved the outcome of ``key``: a later :meth:`adopt` skips the run. With
        ``durable`` False the caller makes it durable itself (:meth:`make_durable`), after marking
        every run it acknowledges: one commit of the file system's journal for all, not one each."""
        run_dir = self.run_dir(key)
        if not (run_dir / "exit.json").exists():
            raise ValueError(f"{key}: has not ended, nothing to acknowledge")
        with open(run_dir / "acknowledged", "ab"):
            pass
        if durable:
            fsync_dir(run_dir)

    def make_durable(self, key: RunKey) -> None:
        """The acknowledgement of ``key`` (``acknowledge(key, durable=False)``) survives a power loss."""
        fsync_dir(self.run_dir(key))

    def forget(self, key: RunKey) -> None:
        """Delete the folder of an ended run (history retention is the caller's; see :meth:`prune`)."""
        run_dir = self.run_dir(key)
        if not (run_dir / "exit.json").exists():
            raise ValueError(f"{key}: has not ended, its folder is kept")
        self._watched.pop(key, None)
        self._reported.discard(key)
        remove_tree(run_dir)

    def prune(self, schedule: str, keep: Collection[RunKey], through: int | None = None) -> list[RunKey]:
        """Delete the folders of ``schedule``'s finished runs but those ``keep`` names; the keys
        of the folders removed, in order. Meant right after :meth:`acknowledge`, with the runs
        the history retention keeps plus every run in flight (one waiting for a retry too).

        ``keep`` names runs: a key keeps the folders of all attempts of its (schedule, nominal
        minute), whatever attempt it gives. Finished is ended (``exit.json``) and acknowledged.
        Never removed: a run not acknowledged or without ``exit.json`` (its process may run, or
        its end is not recorded yet), one whose wrapper still holds its lock (it exits right
        after writing ``exit.json``: one call waits ``WRAPPER_EXIT_SECONDS`` in all for that),
        a lost run whose process group still exists (the command may run on; a reused group
        id only delays the removal), a folder without a readable request or not named after
        it (not this executor's), and anything outside ``runs/<schedule>/``. Removals a
        crash interrupted are finished first. An ``OSError`` of the file system propagates;
        a later call carries on where it stopped. ``through``, if given, keeps every run of a
        later nominal minute (one the caller has not dealt with yet: a runner restarted with
        an earlier clock decides it again, and its folder is what keeps it from running twice).
        """
        if not isinstance(schedule, str) or _SAFE_NAME.fullmatch(schedule) is None:
            raise ValueError(f"schedule {schedule!r}: not usable as a folder name")
        schedule_dir = self.runs_dir / schedule
        finish_removals(schedule_dir)
        if not schedule_dir.is_dir():
            return []
        kept = {_run_of(key) for key in keep}
        removed = []
        exit_deadline = time.monotonic() + WRAPPER_EXIT_SECONDS
        for run_dir in sorted(schedule_dir.iterdir()):
            key = self._finished_key(schedule, run_dir, exit_deadline)
            if key is None or _run_of(key) in kept or (through is not None and key.nominal > through):
                continue
            remove_tree(run_dir)
            self._watched.pop(key, None)
            self._reported.discard(key)
            removed.append(key)
        if removed:
            try:
                schedule_dir.rmdir()  # only when that left it empty (a retired schedule)
            except OSError:
                pass
        return sorted(removed)

    def _finished_key(self, schedule: str, run_dir: Path, exit_deadline: float) -> RunKey | None:
        """The key of the run in ``run_dir`` if :meth:`prune` may remove it, else None."""
        if run_dir.name.startswith(".") or run_dir.is_symlink() or not run_dir.is_dir() \
                or not (run_dir / "acknowledged").exists():
            return None
        try:
            request, outcome = read_json(run_dir / "request.json"), read_json(run_dir / "exit.json")
            if not isinstance(request, dict) or not isinstance(outcome, dict):
                return None
            key = RunKey(request["schedule"], request["nominal_minute"], request.get("attempt", 1))
            if key.schedule != schedule or self.run_dir(key) != run_dir:
                return None
            pid = read_json(run_dir / "pid") if outcome.get("lost") else None
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if key in self._watched or not _lock_released(run_dir / "wrapper.lock", exit_deadline):
            return None
        if isinstance(pid, dict) and isinstance(pid.get("pgid"), int) and pid["pgid"] > 1 \
                and _group_exists(pid["pgid"]):
            return None
        return key

    def _exit_of(self, watch: _Watch) -> dict[str, Any] | None:
        outcome: dict[str, Any] | None = read_json(watch.run_dir / "exit.json")
        if outcome is not None:
            return outcome
        if self._wrapper_alive(watch):
            return None
        ended: dict[str, Any] | None = read_json(watch.run_dir / "exit.json")  # it may have just ended
        if ended is not None:
            return ended
        return self._after_wrapper_death(watch)

    def _wrapper_alive(self, watch: _Watch) -> bool:
        if watch.popen is not None:
            code = watch.popen.poll()
            if code is None:
                return True
            watch.popen = None
            if code != NOT_MINE:
                watch.wrapper_failed = code
                return False
            # Another wrapper claimed the run: watch that one through its lock.
        return _lock_held(watch.run_dir / "wrapper.lock")

    def _after_wrapper_death(self, watch: _Watch) -> dict[str, Any] | None:
        """No wrapper lives and no exit.json: resume the run, or record why it is lost."""
        run_dir = watch.run_dir
        if (run_dir / "launching").exists():
            pid = read_json(run_dir / "pid") or {}
            note = ("lost: the wrapper ended without recording the command's end "
                    "(the machine restarted, or the wrapper was killed)")
            if watch.wrapper_failed == DISK_FULL:
                note = (f"lost: the disk is full (no space left on device): the command ran, and its wrapper "
                        f"could not record its end in {run_dir}")
            elif watch.wrapper_failed is not None:
                note += f"; it exited with code {watch.wrapper_failed}, see wrapper.log"
            if pid.get("pgid"):
                note += f"; process group {pid['pgid']} is not signalled, its id may have been reused"
            for stray in run_dir.glob(".*.tmp-*"):  # a log cut the wrapper did not finish
                stray.unlink(missing_ok=True)
            return self._write_exit(run_dir, note, lost=True)
        if (run_dir / "stop.json").exists():
            return self._write_exit(run_dir, "stopped before the process started", lost=False)
        if watch.wrapper_failed == DISK_FULL:
            return self._write_exit(run_dir, f"lost: the disk is full (no space left on device): its wrapper could "
                                             f"not write its files in {run_dir}; the command did not start", lost=True)
        if watch.wrapper_failed is not None or watch.resumes >= MAX_RESUMES:
            return self._write_exit(run_dir, (
                f"lost: the wrapper exited with code {watch.wrapper_failed} before starting the command; "
                "see wrapper.log"), lost=True)
        # No process ever started for this run (the runner died before its wrapper did
        # anything): start it now. The wrapper's claim keeps this from doubling a run.
        watch.resumes += 1
        watch.popen = self._spawn(run_dir)
        return None

    def _write_exit(self, run_dir: Path, note: str, lost: bool) -> dict[str, Any]:
        outcome: dict[str, Any] = {"exit_code": None, "signal": None, "started_at": None,
                   "finished_at": utc_iso(self._now()), "note": note}
        if lost:
            outcome["lost"] = True
        else:
            outcome["not_started"] = True
        try:
            atomic_write_json(run_dir / "exit.json", outcome)
        except OSError as error:  # a full disk: the end is reported all the same, from memory
            if error.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
        return outcome

    def _ended(self, key: RunKey, run_dir: Path, request: dict[str, Any], outcome: dict[str, Any]) -> Ended:
        stop = read_json(run_dir / "stop.json")
        if stop is not None:
            verdict = stop["reason"]
        elif outcome.get("timed_out"):
            verdict = "timed_out"  # the wrapper's timeout, on the run's own time
        elif outcome.get("exit_code") == 0 and not outcome.get("lost") and not outcome.get("deadline_exceeded"):
            verdict = "succeeded"
        else:
            verdict = "failed"
        elapsed = outcome.get("elapsed_seconds")
        return Ended(key, verdict, outcome.get("exit_code"), outcome.get("signal"), outcome.get("started_at"),
                     outcome.get("finished_at"), outcome.get("note"), run_dir, request,
                     float(elapsed) if isinstance(elapsed, (int, float)) else None)

    # -- stopping ---------------------------------------------------------------------------

    def stop(self, key: RunKey, reason: str, grace_seconds: float = 10.0) -> bool:
        """Ask the run of ``key`` to stop: SIGTERM to its process group now, SIGKILL once
        ``grace_seconds`` have passed (by ``now``) at a later :meth:`poll`. Does not wait.

        Returns False when the run had already ended (its outcome stands). A second
        stop keeps the first one's reason and deadline. The request is written to
        ``stop.json`` first, so it survives a restart of the runner.
        """
        if reason not in STOP_REASONS:
            raise ValueError(f"reason {reason!r}: not one of {', '.join(STOP_REASONS)}")
        run_dir = self.run_dir(key)
        request = read_json(run_dir / "request.json")
        if request is None:
            raise KeyError(f"{key}: no such run")
        if (run_dir / "exit.json").exists():
            return False
        if not (run_dir / "stop.json").exists():
            now = self._now()
            atomic_write_json(run_dir / "stop.json", {"reason": reason, "requested_at": utc_iso(now),
                                                      "grace_seconds": grace_seconds,
                                                      "kill_at": now + grace_seconds})
        if key not in self._reported:
            watch = self._watched.setdefault(key, _Watch(key, run_dir, request))
            self._escalate(watch)
        return True

    def _escalate(self, watch: _Watch) -> None:
        stop = read_json(watch.run_dir / "stop.json")
        if stop is None or watch.kill_sent:
            return
        pid = read_json(watch.run_dir / "pid")
        if pid is None:
            return  # not launched: the wrapper sees stop.json, or a later poll signals
        if not watch.term_sent:
            _killpg(pid["pgid"], signal.SIGTERM)
            watch.term_sent = True
        if self._now() >= stop["kill_at"]:
            _killpg(pid["pgid"], signal.SIGKILL)
            watch.kill_sent = True


def _killpg(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        pass


def _run_of(key: RunKey) -> RunKey:
    """The run a key belongs to, whatever its attempt."""
    return dataclasses.replace(key, attempt=1)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lock_released(path: Path, deadline: float) -> bool:
    """Whether no wrapper holds ``path``, waiting until ``deadline`` (monotonic) for it to let go."""
    while _lock_held(path):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def _lock_held(path: Path) -> bool:
    """Whether a live wrapper holds ``path`` (the kernel drops the lock when it dies)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


class Forked:
    """A wrapper the forking server (``wrapper.py --serve``) started: a ``Popen``'s ``pid``, ``poll`` and
    ``returncode``, its exit known from the server's answers (it is the server's child, not ours). Its
    ``pid`` is None until the server's answer to the fork is read: the runner does not wait for it. A
    server gone (or mute) before it answered: the runner starts the wrapper itself (``alone``); the
    wrapper's claim keeps one the server forked after all from running the command twice."""

    def __init__(self, server: WrapperServer, asked_at: float,
                 fallback: Callable[[], subprocess.Popen[bytes]]) -> None:
        self.server, self.asked_at, self._fallback = server, asked_at, fallback
        self.pid: int | None = None
        self.returncode: int | None = None
        self.alone: subprocess.Popen[bytes] | None = None

    def poll(self) -> int | None:
        if self.alone is not None:
            self.returncode = self.alone.poll()
        elif self.returncode is None:
            self.server.read()
            if self.pid is None and (self.server.gone or time.monotonic() - self.asked_at >= SERVER_ANSWER_SECONDS):
                self.server.gone = True
                self.alone = self._fallback()
                self.pid = self.alone.pid
            elif self.returncode is None and self.server.gone and self.pid is not None \
                    and not _pid_exists(self.pid):
                self.returncode = 0  # the server died before it said; exit.json, if any, says how it ended
        return self.returncode


class WrapperServer:
    """The runner's side of ``wrapper.py --serve``: one per runner process (and Python), started at the
    first run, asked for each wrapper in a line, its answers read as they come (:meth:`read`)."""

    def __init__(self, python: str) -> None:
        self.process = subprocess.Popen([python, "-s", "-E", str(WRAPPER), "--serve"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True,
                                        start_new_session=True)
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in, self._out = self.process.stdin.fileno(), self.process.stdout.fileno()
        os.set_blocking(self._out, False)
        self._pending = b""
        self._asked: list[Forked] = []  # forks asked for whose answer (their pid) is not read yet
        self._forked: dict[int, Forked] = {}
        self._exits: dict[int, int] = {}  # exits said before their Forked was known
        self.gone = False

    def fileno(self) -> int:
        return self._out

    def fork(self, run_dir: Path, fallback: Callable[[], subprocess.Popen[bytes]]) -> Forked:
        """A wrapper for ``run_dir``, asked of the server; OSError when the server is gone. The answer
        (``started PID``) is read later, with the others (:meth:`read`): the runner goes on with its
        turn (the next start, the book) while the server forks, where it waited for each fork."""
        if self.gone:
            raise OSError(errno.EPIPE, "the wrappers' server is gone")
        try:
            os.write(self._in, os.fsencode(str(run_dir)) + b"\n")
        except OSError:
            self.gone = True
            raise
        forked = Forked(self, time.monotonic(), fallback)
        self._asked.append(forked)
        return forked

    def read(self) -> None:
        """Take in the server's answers so far (it never blocks)."""
        while not self.gone:
            try:
                data = os.read(self._out, 65536)
            except BlockingIOError:
                break
            if not data:
                self.gone = True
                break
            self._pending += data
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            word, *numbers = line.split()
            if word == b"started" and self._asked:  # the answers come in the order of the asks
                asked = self._asked.pop(0)
                asked.pid = int(numbers[0])
                self._forked[asked.pid] = asked
                if asked.pid in self._exits:
                    asked.returncode = self._exits.pop(asked.pid)
            elif word == b"exited":
                pid, code = int(numbers[0]), int(numbers[1])
                forked = self._forked.pop(pid, None)
                if forked is None:
                    self._exits[pid] = code
                else:
                    forked.returncode = code


SERVER_ANSWER_SECONDS = 10.0  # how long a fork may take the server before the runner starts wrappers itself
_SERVERS: dict[str, WrapperServer | None] = {}


def _zygote(python: str) -> WrapperServer | None:
    """The forking server of this runner process for ``python``, started at the first run (again if it
    died); None where it cannot run (no fork: not POSIX) or ``CRONCTL_WRAPPER_SERVER=0`` says not to."""
    if not hasattr(os, "fork") or os.environ.get("CRONCTL_WRAPPER_SERVER") == "0":
        return None
    server = _SERVERS.get(python)
    if server is None or server.gone:
        if server is not None:
            server.process.poll()
        try:
            server = _SERVERS[python] = WrapperServer(python)
        except OSError:
            return None
    return server


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
