"""The wrapper: runs one firing's command and records how it ended.

``python wrapper.py RUN_DIR`` (or ``python -m cronctl.runner.wrapper RUN_DIR``)
is what :class:`cronctl.runner.executor.Executor` starts, in a session of its
own, for each run. It exists so that the outcome of a run survives the death
of the runner: the wrapper, not the runner, waits for the command and writes
``exit.json``.

It is standard-library only and imports nothing of cronctl, so it starts fast
and keeps working whatever else in the package is being changed.

Protocol, in RUN_DIR (the JSON files written atomically, but ``launching``, of which only the
existence is read):

1. Claim: ``flock(LOCK_EX | LOCK_NB)`` on ``wrapper.lock``, held until the
   wrapper exits. Failing to claim, or finding ``exit.json`` or
   ``launching`` already there, means another wrapper owns the run: exit
   with code 75 and touch nothing. At most one wrapper ever passes this
   point for a run directory, so the command starts at most once.
2. If ``stop.json`` exists, the run was stopped before it started: write
   ``exit.json`` with ``not_started`` and exit.
3. Write ``launching`` (from here on the command may have started; nobody
   may start it again), start the command in its own process group with
   its stdout/stderr on pipes the wrapper copies to ``stdout.log`` /
   ``stderr.log`` (see "Output cap" below), and write ``pid`` = {pid, pgid,
   wrapper_pid, started_at}. The runner signals the command's process
   group, never the wrapper.
4. When the command's main process ends, kill what is left of its process
   group (as a container's end does), copy what is left in the pipes (for
   at most ``DRAIN_SECONDS``, against a process that left the group and
   keeps them open), cut each log to its cap, reap the command and write
   ``exit.json`` = {exit_code, signal, started_at, finished_at}: when
   ``exit.json`` exists, the logs are complete.

Output cap: each stream keeps at most ``max_log_bytes`` of request.json
(default ``DEFAULT_MAX_LOG_BYTES``, 10 MiB), its *tail*. Bytes are appended
to the log as they come; once a log holds more than the cap plus a slack
(``cut_slack``, so that cuts are rare), it is rewritten as a marker line,
``[cronctl: N earlier bytes cut; the last M are kept]``, and the last cap
bytes, in a temporary file renamed over the log. A wrapper killed at any
moment leaves the old log or the new one, each at most marker + cap +
slack + one read of ``READ_CHUNK`` bytes, and at most one temporary file
beside it; memory stays at one read. At the end one more cut leaves at most
the marker and the cap. A cut never splits a UTF-8 character. Logs are not
fsync'ed (they are output, not state). If writing a log fails (a full
disk), its further output is counted and dropped, a last line says so, and
the command runs on: its outcome is recorded all the same. A command whose
wrapper died gets EPIPE (SIGPIPE) on its next write.

Tries (the Job's ``backoffLimit``, ``backoff_limit`` in request.json): a try
that fails is run again, up to ``backoff_limit`` more times, after 10 s, 20 s,
40 s ... (at most six minutes; ``backoff_seconds`` in request.json sets the
first wait), as the job controller replaces a failed Pod. The tries share the
run's folder, its logs (a line in ``stderr.log`` between two tries) and its
``activeDeadlineSeconds``, counted from the first; ``pid`` names the running
try; a stop ends the waiting too. ``exit.json`` has the last try's exit, and
``tries`` when there was more than one; a run whose every try failed says
``BackoffLimitExceeded``. Its ``elapsed_seconds`` is the run's own time on the
monotonic clock, first try to last end: the runner judges its timeout by it,
not by the wall clock (stepped, or read late by a stopped runner).

Timeout (``timeout_seconds`` in request.json, the schedule's ``timeoutMinutes``
when the runner leaves it to the wrapper): counted on the monotonic clock from
the first try, as systemd's ``RuntimeMaxSec=``; past it the group is stopped
as at the deadline (SIGTERM, SIGKILL ``grace_seconds`` later) and
``exit.json`` says ``timed_out``. A step of the wall clock moves no deadline.

A file of its own it cannot write because the disk is full (ENOSPC, or
EDQUOT) ends the wrapper with ``DISK_FULL`` (74), so that the runner says it
was the disk, not a restart: its wrapper.log may be as empty as the disk is full.

SIGTERM, SIGINT and SIGHUP sent to the wrapper are ignored (the command's
own signals are untouched), so a shutdown that signals everything still
ends with the command's true outcome recorded.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import select
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, NamedTuple

NOT_MINE = 75  # EX_TEMPFAIL: another wrapper owns this run directory
DISK_FULL = 74  # EX_IOERR: the wrapper could not write its files, the disk full (ENOSPC) or the quota spent
PASSED_THROUGH = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
DEFAULT_MAX_LOG_BYTES = 10 * 1024 * 1024  # per stream, per run; request.json's max_log_bytes overrides it
READ_CHUNK = 64 * 1024  # one read of a pipe, and the least slack of a log
DRAIN_SECONDS = 2.0  # after the command's end, how long its pipes are still read
DEADLINE_GRACE_SECONDS = 10.0  # past activeDeadlineSeconds: SIGTERM to the group, SIGKILL this much later
BACKOFF_SECONDS = 10.0  # the job controller's wait before a failed Pod's replacement, doubled each time
BACKOFF_CAP_SECONDS = 360.0  # ... up to six minutes


def why_not_started(error: OSError, argv: list[str], cwd: str | None,
                    env: Mapping[str, str] | None = None) -> str:
    """Why the command could not be started, as a shell would say it: not found (the command, or
    the working directory), not executable, its arguments too long (``env``: the environment it was
    given, which counts against the same limit)."""
    command = argv[0] if argv else ""
    if error.errno == errno.ENOENT:
        if cwd and error.filename == cwd:
            return f"the working directory {cwd!r} does not exist"
        return f"command not found: {command!r}"
    if error.errno == errno.EACCES:
        return f"not executable (permission denied): {command!r}"
    if error.errno == errno.ENOEXEC:
        return f"not an executable file (no #! line?): {command!r}"
    if error.errno == errno.E2BIG:
        return too_long(argv, env or {})
    if error.errno == errno.ENOTDIR and cwd and error.filename == cwd:
        return f"the working directory {cwd!r} is not a directory"
    return f"{error.strerror or error}: {command!r}"


def too_long(argv: list[str], env: Mapping[str, str]) -> str:
    """The E2BIG line, with the figures that decide it: the arguments' and the environment's bytes
    (each string with its NUL, as the kernel counts them), the longest single string, and the
    limits: ARG_MAX in all and, on Linux, 32 pages (MAX_ARG_STRLEN) for any one string."""
    strings = [part.encode("utf-8", "replace") for part in argv]
    strings_env = [f"{key}={value}".encode("utf-8", "replace") for key, value in env.items()]
    arguments, environment = sum(len(b) + 1 for b in strings), sum(len(b) + 1 for b in strings_env)
    longest = max((len(b) + 1 for b in strings + strings_env), default=0)
    limits = []
    if sys.platform.startswith("linux"):
        limits.append(f"{32 * os.sysconf('SC_PAGESIZE'):,} bytes in any one")
    try:
        limits.append(f"{os.sysconf('SC_ARG_MAX'):,} in all")
    except (ValueError, OSError):
        pass
    limit = f"; the system takes {' and '.join(limits)}" if limits else ""
    return (f"the arguments are too long: {arguments:,} bytes of arguments and {environment:,} of "
            f"environment, the longest string {longest:,} bytes{limit}")


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _write_json(path: Path, value: object, durable: bool = True) -> None:
    # cronctl.runner.files.atomic_write_json, repeated: this file runs by path and imports
    # nothing of cronctl. Keep the two alike (the same temporary names, the same fsyncs).
    # ``durable`` False: atomic, not fsync'ed (``pid``: no process it names outlives a power loss).
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, indent=2)
            handle.write("\n")
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    if not durable:
        return
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _mark_launching(run_dir: Path) -> None:
    """``launching``, durable before the command may start. Only its existence is read (a wrapper
    finding it claims nothing; the executor takes a run without ``exit.json`` but with it as lost),
    so it is written in place, not through a temporary file: one fsync that commits the file system's
    journal and one of the folder that finds nothing left to commit, where a temporary file and its
    rename took two commits (milliseconds each on a busy disk)."""
    path = run_dir / "launching"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            os.write(fd, json.dumps({"wrapper_pid": os.getpid(), "at": _now()}).encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        dir_fd = os.open(run_dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:  # a full disk: the command never starts, so no launching may say it could have
        path.unlink(missing_ok=True)
        raise


def command_environment(request: dict[str, object], inherited: dict[str, str]) -> dict[str, str]:
    """A minimal environment, then the manifest's env, then the CRONCTL_* facts of the run."""
    env = {key: inherited[key] for key in PASSED_THROUGH if key in inherited}
    env.setdefault("PATH", DEFAULT_PATH)
    given = request.get("env") or {}
    assert isinstance(given, dict)
    env.update({str(k): str(v) for k, v in given.items()})
    env.update({
        "CRONCTL_SCHEDULE": str(request["schedule"]),
        "CRONCTL_NOMINAL_TIME": str(request["nominal_time"]),
        "CRONCTL_REASON": str(request.get("reason", "")),
        "CRONCTL_ATTEMPT": str(request.get("attempt", 1)),
    })
    return env


def _ignore(signum: int, frame: object) -> None:
    pass


def cut_slack(cap: int) -> int:
    """How far a log may grow past its cap before its front is cut: a quarter of the cap, at
    least one read. Each cut copies the cap, so a chatty command costs about four bytes copied
    per byte written (200 MiB through a 10 MiB cap: under a second)."""
    return max(READ_CHUNK, cap // 4)


def cut_marker(cut: int, kept: int) -> bytes:
    """The first line of a log that was cut: how many bytes went, how many follow."""
    return f"[cronctl: {cut} earlier bytes cut; the last {kept} are kept]\n".encode("ascii")


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _copy(source: int, offset: int, count: int, target: int) -> None:
    """``count`` bytes of ``source`` from ``offset`` on, appended at ``target``'s position."""
    while count > 0:
        if hasattr(os, "copy_file_range"):
            try:
                done = os.copy_file_range(source, target, count, offset)
            except OSError:  # not across these files (an old kernel, some file systems): by hand
                done = 0
            if done > 0:
                offset, count = offset + done, count - done
                continue
        data = os.pread(source, min(count, 1024 * 1024), offset)
        if not data:
            raise OSError(errno.EIO, f"the log shrank under the wrapper at byte {offset}")
        _write_all(target, data)
        offset, count = offset + len(data), count - len(data)


class CappedLog:
    """One stream of the command: appended to ``path`` as it comes, its front cut past the cap."""

    def __init__(self, path: Path, cap: int) -> None:
        self.path, self.cap, self.slack = path, cap, cut_slack(cap)
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        self.size = os.fstat(self.fd).st_size
        self.header = 0  # bytes of the marker line at the top, 0 until a first cut
        self.cut = 0  # bytes cut so far
        self.error: OSError | None = None
        self.dropped = 0  # bytes not written since an error

    def write(self, data: bytes) -> None:
        if self.error is not None:
            self.dropped += len(data)
            return
        try:
            _write_all(self.fd, data)
        except OSError as error:
            written = os.fstat(self.fd).st_size - self.size  # a part may have been written
            self.error, self.size, self.dropped = error, self.size + written, len(data) - written
            return
        self.size += len(data)
        if self.size - self.header > self.cap + self.slack:
            try:
                self._cut()
            except OSError as error:  # the log keeps its bytes so far and takes no more
                self.error = error

    def close(self) -> None:
        """The last cut, when one is due, then a line about an error, if any."""
        try:
            if self.error is None and self.size - self.header > self.cap:
                self._cut()
        except OSError as error:
            self.error = error
        if self.error is not None:
            note = f"\n[cronctl: this log stopped at an error: {self.error}; {self.dropped} bytes dropped]\n"
            try:
                _write_all(self.fd, note.encode("utf-8", "replace"))
            except OSError:
                pass
        os.close(self.fd)

    def _cut(self) -> None:
        """Rewrite the log as a marker line and its last ``cap`` bytes, atomically."""
        start = self.size - self.cap
        head = os.pread(self.fd, 3, start)
        while head and head[0] & 0xC0 == 0x80:  # a UTF-8 continuation byte: start after it
            head, start = head[1:], start + 1
        self.cut += start - self.header
        kept = self.size - start
        marker = cut_marker(self.cut, kept)
        fd, temp = tempfile.mkstemp(prefix=f".{self.path.name}.tmp-", dir=self.path.parent)
        try:
            os.fchmod(fd, os.fstat(self.fd).st_mode & 0o777)
            _write_all(fd, marker)
            _copy(self.fd, start, kept, fd)
            os.replace(temp, self.path)
        except BaseException:
            os.close(fd)
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass
            raise
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        os.close(self.fd)
        self.fd, self.header, self.size = fd, len(marker), len(marker) + kept


def _max_log_bytes(request: dict[str, object]) -> int:
    cap = request.get("max_log_bytes", DEFAULT_MAX_LOG_BYTES)
    return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1 else DEFAULT_MAX_LOG_BYTES


def _leader_ended(process: subprocess.Popen[bytes], block: bool) -> bool:
    """Whether the command's main process ended. With ``waitid`` it is not reaped: while it is
    a zombie its group id cannot be reused, so killing the rest of the group hits no one else."""
    if hasattr(os, "waitid"):
        flags = os.WEXITED | os.WNOWAIT | (0 if block else os.WNOHANG)
        return os.waitid(os.P_PID, process.pid, flags) is not None
    return (process.wait() if block else process.poll()) is not None


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    if hasattr(os, "waitid"):  # the leader is an unreaped zombie (see _leader_ended)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def _become_subreaper() -> bool:
    """Make the processes the command leaves behind (a daemon it started, in a session of its own)
    this wrapper's children when their parent ends, as a Pod's container runtime holds them, so that
    they end with the run (``_end_descendants``). Linux only; elsewhere they outlive it."""
    try:
        import ctypes

        return int(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _children(parent: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone since the listing
        if int(fields[1]) == parent:
            found.append(int(entry))
    return found


def _end_descendants() -> None:
    """Kill and reap every process the command left behind: they became this wrapper's children
    (``_become_subreaper``); each one killed hands its own children to it, so until none is left."""
    for _ in range(1000):
        try:
            os.waitpid(-1, os.WNOHANG)  # reaps one that ended, if any
        except ChildProcessError:
            return  # none left: no need to read /proc
        children = _children(os.getpid())
        if not children:
            return
        for child in children:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for child in children:
            try:
                os.waitpid(child, 0)
            except ChildProcessError:
                pass


class _Deadline:
    """The Job's ``activeDeadlineSeconds`` or the schedule's ``timeoutMinutes``, whichever comes
    first: past it the command's group is stopped (SIGTERM, then SIGKILL ``grace`` seconds later),
    as the job controller stops a Job's Pods."""

    def __init__(self, process: subprocess.Popen[bytes], seconds: float | None,
                 grace: float = DEADLINE_GRACE_SECONDS) -> None:
        self.process, self.grace = process, grace
        self.at = None if seconds is None else time.monotonic() + seconds
        self.passed = False

    def timeout(self, timeout: float | None) -> float | None:
        """``timeout``, shortened to the next stop of the group."""
        if self.at is None:
            return timeout
        left = max(0.0, self.at - time.monotonic())
        return left if timeout is None else min(timeout, left)

    def check(self) -> None:
        if self.at is None or time.monotonic() < self.at:
            return
        signum = signal.SIGKILL if self.passed else signal.SIGTERM
        self.at = None if self.passed else time.monotonic() + self.grace
        self.passed = True
        try:
            os.killpg(self.process.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def _pump(process: subprocess.Popen[bytes], logs: dict[int, CappedLog], deadline_seconds: float | None = None,
          grace: float = DEADLINE_GRACE_SECONDS) -> bool:
    """Copy the command's pipes to their logs until its main process ends, kill what is left
    of its group, and copy what remains (until the pipes close, for ``DRAIN_SECONDS`` at most).
    Whether the run's deadline passed (``_Deadline``)."""
    stop = _Deadline(process, deadline_seconds, grace)
    selector = selectors.DefaultSelector()
    for fd in logs:
        selector.register(fd, selectors.EVENT_READ)
    leader: int | None = None
    if hasattr(os, "pidfd_open"):
        try:
            leader = os.pidfd_open(process.pid)
            selector.register(leader, selectors.EVENT_READ)
        except OSError:  # an old kernel: look every 0.1 s
            leader = None
    deadline: float | None = None
    try:
        while logs:
            if deadline is None:
                timeout: float | None = stop.timeout(None if leader is not None else 0.1)
            else:
                timeout = max(0.0, deadline - time.monotonic())
            for key, _ in selector.select(timeout):
                if key.fd == leader:
                    selector.unregister(leader)  # it stays readable; the check below sees the end
                    continue
                data = os.read(key.fd, READ_CHUNK)
                if data:
                    logs[key.fd].write(data)
                else:
                    selector.unregister(key.fd)
                    del logs[key.fd]
            if deadline is None:
                stop.check()
            if deadline is None and _leader_ended(process, block=False):
                _kill_group(process)
                deadline = time.monotonic() + DRAIN_SECONDS
            elif deadline is not None and time.monotonic() >= deadline:
                break  # someone outside the group holds the pipes: they are closed on it
        if deadline is None:  # the command closed its output and runs on
            while not _leader_ended(process, block=stop.at is None):
                time.sleep(min(0.1, stop.timeout(0.1) or 0.0))
                stop.check()
            _kill_group(process)
    finally:
        selector.close()
        if leader is not None:
            os.close(leader)
    return stop.passed


class _Tried(NamedTuple):
    """How one try of the command ended (a Pod, on a cluster)."""

    exit_code: int | None
    signal: int | None
    deadline_passed: bool = False
    not_started: str | None = None  # why it could not start


def _try(run_dir: Path, request: dict[str, Any], argv: list[str], logs: tuple[CappedLog, CappedLog],
         started_at: str, deadline_at: float | None) -> _Tried:
    """Run the command once, its output appended to the logs, until it ends or the deadline passes."""
    out, err = logs
    env = command_environment(request, dict(os.environ))
    try:
        process = subprocess.Popen(argv, env=env,
                                   cwd=request.get("cwd") or None, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0,
                                   close_fds=True)
    except OSError as error:
        why = why_not_started(error, argv, request.get("cwd"), env)
        err.write(f"cronctl: cannot start {argv!r}: {why}\n".encode("utf-8", "replace"))
        return _Tried(127 if error.errno == errno.ENOENT else 126, None, not_started=why)
    _write_json(run_dir / "pid", {"pid": process.pid, "pgid": process.pid,
                                  "wrapper_pid": os.getpid(), "started_at": started_at}, durable=False)
    assert process.stdout is not None and process.stderr is not None
    try:
        left = None if deadline_at is None else max(0.0, deadline_at - time.monotonic())
        passed = _pump(process, {process.stdout.fileno(): out, process.stderr.fileno(): err}, left,
                       _grace_seconds(request))
    finally:
        process.stdout.close()
        process.stderr.close()
    returncode = process.wait()
    return _Tried(returncode if returncode >= 0 else None, -returncode if returncode < 0 else None, passed)


def backoff_seconds(failures: int, base: float = BACKOFF_SECONDS) -> float:
    """The wait before the next try after ``failures`` failed ones: 10 s, 20 s, 40 s ... at most
    six minutes, as the job controller waits before a failed Job's next Pod."""
    return float(min(base * 2 ** (failures - 1), BACKOFF_CAP_SECONDS))


def _wait_to_retry(run_dir: Path, seconds: float, deadline_at: float | None) -> bool:
    """Wait before the next try; False when the run is stopped or its deadline passes meanwhile."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if (run_dir / "stop.json").exists() or (deadline_at is not None and time.monotonic() >= deadline_at):
            return False
        time.sleep(min(0.1, max(0.0, until - time.monotonic())))
    return not (run_dir / "stop.json").exists()


def run(run_dir: Path) -> int:
    lock_fd = os.open(run_dir / "wrapper.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return NOT_MINE
    if (run_dir / "exit.json").exists() or (run_dir / "launching").exists():
        return NOT_MINE
    request = json.loads((run_dir / "request.json").read_text(encoding="utf-8"))
    if (run_dir / "stop.json").exists():
        _write_json(run_dir / "exit.json", {"exit_code": None, "signal": None, "started_at": None,
                                            "finished_at": _now(), "not_started": True,
                                            "note": "stopped before the process started"})
        return 0
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _ignore)  # a handler, not SIG_IGN: exec resets it for the command
    _mark_launching(run_dir)
    _write_json(run_dir / "exit.json", _run_tries(run_dir, request))
    return 0


def _run_tries(run_dir: Path, request: dict[str, Any]) -> dict[str, Any]:
    """Try the command until it succeeds, its ``backoff_limit`` of failed tries is used up, the
    deadline passes or the run is stopped; what ``exit.json`` says of it."""
    argv = [str(part) for part in list(request["command"]) + list(request.get("args") or [])]
    cap = _max_log_bytes(request)
    logs = CappedLog(run_dir / "stdout.log", cap), CappedLog(run_dir / "stderr.log", cap)
    started_at, began = _now(), time.monotonic()
    deadline_at = _stop_at(request, began)
    limit = int(request.get("backoff_limit") or 0)
    reaping = _become_subreaper()
    failures = 0
    try:
        while True:
            tried = _try(run_dir, request, argv, logs, started_at, deadline_at)
            if reaping:
                _end_descendants()  # after the command's own exit status is read: waitpid takes any child
            if tried.exit_code == 0 or tried.deadline_passed or tried.not_started or failures >= limit:
                break
            failures += 1
            wait = backoff_seconds(failures, float(request.get("backoff_seconds") or BACKOFF_SECONDS))
            logs[1].write(f"[cronctl: try {failures} of {limit + 1} failed ({_how(tried)}); the next in "
                          f"{wait:g} s (backoffLimit {limit})]\n".encode())
            if not _wait_to_retry(run_dir, wait, deadline_at):
                break
    finally:
        for log in logs:
            log.close()
    record = _exit_record(tried, failures + 1, started_at, deadline_at, request, began)
    # The run's own time: no step of the wall clock, nor a stop of the runner, is in it.
    record["elapsed_seconds"] = round(time.monotonic() - began, 3)
    return record


def _seconds(request: dict[str, Any], key: str) -> float | None:
    value = request.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _grace_seconds(request: dict[str, Any]) -> float:
    grace = request.get("grace_seconds")
    return float(grace) if isinstance(grace, (int, float)) and grace >= 0 else DEADLINE_GRACE_SECONDS


def _stop_at(request: dict[str, Any], began: float) -> float | None:
    """When the run is stopped, on the monotonic clock: at its ``activeDeadlineSeconds`` or its
    ``timeout_seconds`` (the schedule's ``timeoutMinutes``), whichever comes first. Both count the
    run's own time, as systemd's ``RuntimeMaxSec=``: no step of the wall clock moves them."""
    limits = [s for s in (_seconds(request, "active_deadline_seconds"), _seconds(request, "timeout_seconds"))
              if s is not None]
    return began + min(limits) if limits else None


def _timeout_first(request: dict[str, Any]) -> bool:
    """Whether the schedule's timeout, not the Job's deadline, is the limit that stops the run."""
    timeout, deadline = _seconds(request, "timeout_seconds"), _seconds(request, "active_deadline_seconds")
    return timeout is not None and (deadline is None or timeout <= deadline)


def _exit_record(tried: _Tried, tries: int, started_at: str, deadline_at: float | None,
                 request: dict[str, Any], began: float) -> dict[str, Any]:
    """What ``exit.json`` says of a run whose last try was ``tried``: its exit, and why it ended
    so if the command did not end it (not started, its timeout or deadline, its backoff limit)."""
    ended: dict[str, Any] = {"exit_code": tried.exit_code, "signal": tried.signal, "started_at": started_at,
                             "finished_at": _now()}
    limit = int(request.get("backoff_limit") or 0)
    passed = tried.deadline_passed or (deadline_at is not None and time.monotonic() >= deadline_at)
    if tried.not_started:
        ended.update(not_started=True, note=f"did not start: {tried.not_started}")
    elif passed and _timeout_first(request):
        minutes = float(request["timeout_seconds"]) / 60
        ended.update(timed_out=True, note=f"timed out: stopped after {time.monotonic() - began:.0f} s of its own "
                                          f"time (timeoutMinutes {minutes:g})")
    elif passed:
        ended.update(deadline_exceeded=True, note="DeadlineExceeded: stopped at its activeDeadlineSeconds "
                                                  f"({request.get('active_deadline_seconds')} s)")
    elif limit and tried.exit_code != 0:
        ended.update(note=f"BackoffLimitExceeded: failed {tries} tim{'e' if tries == 1 else 'es'} "
                          f"(backoffLimit {limit})")
    if tries > 1:
        ended["tries"] = tries
    return ended


def _how(tried: _Tried) -> str:
    return f"exit {tried.exit_code}" if tried.exit_code is not None else f"signal {tried.signal}"


def serve() -> int:
    """``wrapper.py --serve``: the wrappers' forking server (a zygote). Each line ``RUN_DIR`` read on
    stdin forks a wrapper for it, already started and its modules imported (a Python process start and
    its imports cost 30 ms or more a run, a fork 1 ms), and answers ``started PID``; each wrapper that
    exits is reaped and said as ``exited PID CODE``. At the end of stdin (its runner gone) it ends;
    the wrappers it forked live on, each in a session of its own, as the ones the runner starts do."""
    import ctypes  # noqa: F401 - imported once here, not in each forked wrapper (_become_subreaper)
    import traceback  # noqa: F401

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, _ignore)  # a handler, so that the wakeup fd is written at each exit
    pending = b""
    while True:
        ready = select.select([0, wake_r], [], [])[0]
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap_forked()
        if 0 not in ready:
            continue
        data = os.read(0, 65536)
        if not data:
            return 0
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            pid = _fork_wrapper(Path(os.fsdecode(line)), (wake_r, wake_w))
            _write_all(1, f"started {pid}\n".encode())


def _reap_forked() -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _write_all(1, f"exited {pid} {os.waitstatus_to_exitcode(status)}\n".encode())


def _fork_wrapper(run_dir: Path, wake: tuple[int, int]) -> int:
    """Fork a wrapper for ``run_dir``, as the executor would start one: a session of its own, stdin
    from /dev/null, stdout and stderr to ``wrapper.log``, in the run's folder."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in wake:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(run_dir / "wrapper.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(null)
        os.close(log)
        os.chdir(run_dir)
        code = main(["wrapper.py", str(run_dir)])
    except BaseException:  # noqa: B036 - whatever happens, the forked child must not return to the loop
        try:
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:  # noqa: B036
            pass
    finally:
        os._exit(code)


def main(argv: list[str]) -> int:
    if argv[1:] == ["--serve"]:
        return serve()
    if len(argv) != 2:
        print("usage: wrapper.py RUN_DIR | --serve", file=sys.stderr)
        return 2
    try:
        return run(Path(argv[1]))
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        try:  # wrapper.log, if a byte still fits: the exit code says it all the same
            print(f"cronctl wrapper: {error}", file=sys.stderr, flush=True)
        except OSError:
            pass
        return DISK_FULL


if __name__ == "__main__":
    sys.exit(main(sys.argv))
