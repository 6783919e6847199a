"""The wrapper: runs one firing's command and records how it ended.

``python wrapper.py RUN_DIR`` (or ``python -m cronctl.runner.wrapper RUN_DIR``)
is what :class:`cronctl.runner.executor.Executor` starts, in a session of its
own, for each run. It exists so that the outcome of a run survives the death
of the runner: the wrapper, not the runner, waits for the command and writes
``exit.json``.

It is standard-library only and imports nothing of cronctl, so it starts fast
and keeps working whatever else in the package is being changed.

Protocol, in RUN_DIR (all JSON files written atomically):

1. Claim: ``flock(LOCK_EX | LOCK_NB)`` on ``wrapper.lock``, held until the
   wrapper exits. Failing to claim, or finding ``exit.json`` or
   ``launching`` already there, means another wrapper owns the run: exit
   with code 75 and touch nothing. At most one wrapper ever passes this
   point for a run directory, so the command starts at most once.
2. If ``stop.json`` exists, the run was stopped before it started: write
   ``exit.json`` with ``not_started`` and exit.
3. Write ``launching`` (from here on the command may have started; nobody
   may start it again), start the command in its own process group with
   stdout/stderr appended to ``stdout.log``/``stderr.log``, and write
   ``pid`` = {pid, pgid, wrapper_pid, started_at}. The runner signals the
   command's process group, never the wrapper.
4. When the command's main process ends, kill what is left of its process
   group (as a container's end does), reap it and write ``exit.json`` =
   {exit_code, signal, started_at, finished_at}.

SIGTERM, SIGINT and SIGHUP sent to the wrapper are ignored (the command's
own signals are untouched), so a shutdown that signals everything still
ends with the command's true outcome recorded.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

NOT_MINE = 75  # EX_TEMPFAIL: another wrapper owns this run directory
PASSED_THROUGH = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _write_json(path: Path, value: object) -> None:
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


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
    _write_json(run_dir / "launching", {"wrapper_pid": os.getpid(), "at": _now()})
    argv = [str(part) for part in list(request["command"]) + list(request.get("args") or [])]
    started_at = _now()
    with open(run_dir / "stdout.log", "ab") as out, open(run_dir / "stderr.log", "ab") as err:
        try:
            process = subprocess.Popen(argv, env=command_environment(request, dict(os.environ)),
                                       cwd=request.get("cwd") or None, stdin=subprocess.DEVNULL,
                                       stdout=out, stderr=err, process_group=0, close_fds=True)
        except OSError as error:
            err.write(f"cronctl: cannot start {argv!r}: {error}\n".encode("utf-8", "replace"))
            err.flush()
            _write_json(run_dir / "exit.json", {
                "exit_code": 127 if error.errno == errno.ENOENT else 126, "signal": None,
                "started_at": started_at, "finished_at": _now(), "not_started": True,
                "note": f"cannot start the command: {error}"})
            return 0
    _write_json(run_dir / "pid", {"pid": process.pid, "pgid": process.pid,
                                  "wrapper_pid": os.getpid(), "started_at": started_at})
    if hasattr(os, "waitid"):
        # Wait without reaping: while the leader is a zombie its group id cannot be reused,
        # so killing the rest of the group cannot hit anyone else.
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    returncode = process.wait()
    _write_json(run_dir / "exit.json", {
        "exit_code": returncode if returncode >= 0 else None,
        "signal": -returncode if returncode < 0 else None,
        "started_at": started_at, "finished_at": _now()})
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: wrapper.py RUN_DIR", file=sys.stderr)
        return 2
    return run(Path(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
