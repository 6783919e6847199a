"""The lock: ``cronctl.lock`` in the base folder decides which runner fires.

Two runners may share one base folder; the one that holds the lock fires,
the other shows the schedules read-only, names the holder and takes over
when it ends (seed 004, "The book and the lock", tried every 60 seconds
there; here at once, see below).

The lock is ``fcntl.flock(LOCK_EX)`` on a file descriptor kept open for the
runner's whole life. The kernel drops it when the process ends in any way,
``kill -9`` included, so a dead runner never leaves a stale lock. The
descriptor is not inheritable, so the processes the runner starts (which
outlive it on purpose) do not keep the lock alive.

A waiting runner waits on the lock itself: a blocking ``flock`` in a helper
thread (:meth:`RunnerLock.acquire_within`), so it takes over the moment the
holder lets go or dies, not at its next try (up to 60 s later). The waiting
descriptor is closed when the wait is given up; a lock the kernel grants it
after that is dropped with the descriptor's last reference.

The holder writes its identity (hostname, pid, start time in UTC) into the
file so that a second runner can name it. The file is never deleted:
unlinking a flock'ed file lets a newcomer lock a fresh inode while the old
holder still fires. Identity text left by a runner that died is ignored,
because :meth:`RunnerLock.holder` reports a holder only while the lock is
actually held.

A runner's folder may be a name a deploy switches (``cur -> rel1`` made
``cur -> rel2`` by ``mv -T``): the runner resolves it once, at start, and
keeps its files in that folder, its home; the identity it writes names the
home, and the runner takes the lock of each folder the name comes to point
to as well, so that a second runner or ``cronctl status`` on the name finds
it there and :func:`runner_home` leads them to its book.

Two machines sharing the folder over NFS are served too: Linux maps flock
onto NFS byte-range locks there. Waiting is :func:`wait_for_lock` (the
runner's loop, ``engine.run_forever``, waits with it), whose sleep is
injected so that tests need not wait 60 seconds.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

LOCK_NAME = "cronctl.lock"
DEFAULT_RETRY_SECONDS = 60.0


def runner_identity(now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> dict[str, Any]:
    """This process as the lock names it: hostname, pid and start time (UTC)."""
    return {"hostname": socket.gethostname(), "pid": os.getpid(),
            "started_at": now().astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def describe_holder(holder: Mapping[str, Any] | None) -> str:
    """A line for a waiting runner, e.g. ``held by pid 4242 on host-a since 2024-...Z``."""
    if holder is None:
        return "the lock is free"
    if not holder.get("pid"):
        return "held by a runner that has not written its name yet"
    return (f"held by pid {holder.get('pid')} on {holder.get('hostname', '?')}"
            f" since {holder.get('started_at', '?')}")


class LockRefused(OSError):
    """The lock file cannot be opened (another user's, root's leftover): says which file and what to do."""


def _open_refused(path: Path, error: OSError) -> LockRefused:
    if isinstance(error, PermissionError):
        try:
            owner = path.stat().st_uid
        except OSError:
            owner = None
        whose = f" (owned by uid {owner}, this runner is uid {os.getuid()})" if owner is not None else ""
        why = (f"{path}: permission denied{whose}; the runner needs to read and write it: run cronctl as "
               f"that user, or give the file to this one (sudo chown {os.getuid()} {path}), or remove it "
               "while no runner runs on the folder")
    else:
        why = f"{path}: {error.strerror or error}"
    return LockRefused(error.errno or 0, why)


class _Waiter:
    """A blocking ``flock`` on its own descriptor, in a daemon thread: ``granted`` is set the moment
    the kernel gives it the lock (or the call failed: ``error``)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.granted = fd, threading.Event()
        self.error: OSError | None = None
        threading.Thread(target=self._wait, name="cronctl-lock-wait", daemon=True).start()

    def _wait(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError as error:  # EBADF once the wait was given up; EINTR is retried by Python
            self.error = error
        self.granted.set()


class RunnerLock:
    def __init__(self, base_dir: str | os.PathLike[str], identity: Mapping[str, Any] | None = None) -> None:
        self.path = Path(base_dir) / LOCK_NAME
        self.identity = dict(identity) if identity is not None else runner_identity()
        self._fd: int | None = None
        self._waiter: _Waiter | None = None

    def _open(self) -> int:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise _open_refused(self.path, error) from error

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if it is free and write our identity; True if we hold it."""
        if self._fd is not None:
            return True
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self._hold(fd)
        return True

    def acquire_within(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the lock, blocked on it (no polling): taken the moment the
        holder lets go or dies. A wait that times out goes on, for the next call; True if we hold it."""
        if self._fd is not None:
            return True
        if self._waiter is None:
            self._waiter = _Waiter(self._open())
        waiter = self._waiter
        if not waiter.granted.wait(max(0.0, seconds)):
            return False
        self._waiter = None
        if waiter.error is not None:
            os.close(waiter.fd)
            raise _open_refused(self.path, waiter.error)
        self._hold(waiter.fd)
        return True

    def stop_waiting(self) -> None:
        """Give up a wait under way: its descriptor is closed (a grant that comes later is dropped)."""
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            os.close(waiter.fd)

    def _hold(self, fd: int) -> None:
        """The lock is ours on ``fd``: write our identity into the file."""
        try:
            text = (json.dumps(self.identity, sort_keys=True) + "\n").encode("utf-8")
            os.ftruncate(fd, 0)
            os.pwrite(fd, text, 0)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def holder(self) -> dict[str, Any] | None:
        """Who holds the lock: their identity, ``{}`` while it is held but not yet named, None when free."""
        if self._fd is not None:
            return dict(self.identity)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        try:
            try:
                # A shared probe: it succeeds only when nobody holds the lock exclusively.
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            else:
                fcntl.flock(fd, fcntl.LOCK_UN)
                return None
            raw = os.pread(fd, 65536, 0)
        finally:
            os.close(fd)
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return {}  # held, the holder is between truncating and writing its name
        return value if isinstance(value, dict) else {}

    def release(self) -> None:
        """Give the lock up (also done by the kernel when the process ends), or the wait for it."""
        self.stop_waiting()
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)  # the name of a runner that no longer holds the lock would mislead
        finally:
            os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self) -> "RunnerLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def runner_home(folder: Path) -> Path:
    """Where the runner that holds ``folder``'s lock keeps its book, runs and records: the home its
    identity names when the folder is a deploy's new target it only holds for it; else ``folder``."""
    try:
        holder = RunnerLock(folder).holder()
    except OSError:
        return folder
    home = (holder or {}).get("home")
    if not isinstance(home, str) or not Path(home).is_dir() \
            or os.path.realpath(home) == os.path.realpath(folder):
        return folder
    return Path(home)


def wait_for_lock(lock: RunnerLock, retry_seconds: float = DEFAULT_RETRY_SECONDS,
                  sleep: Callable[[float], None] = time.sleep,
                  on_wait: Callable[[dict[str, Any] | None], None] | None = None) -> int:
    """Try the lock until it is ours; returns how many times we had to wait.

    Each failed try calls ``on_wait(holder)`` (the holder's identity, or None
    if it ended between the try and the look) and then ``sleep(retry_seconds)``.
    To give up, let ``sleep`` or ``on_wait`` raise (a KeyboardInterrupt does).
    """
    waits = 0
    while not lock.try_acquire():
        waits += 1
        if on_wait is not None:
            on_wait(lock.holder())
        sleep(retry_seconds)
    return waits


def wait_on_lock(lock: RunnerLock, should_stop: Callable[[], bool], look_seconds: float = 1.0,
                 on_wait: Callable[[dict[str, Any] | None], None] | None = None) -> bool:
    """Wait for the lock blocked on it (:meth:`RunnerLock.acquire_within`), looking at
    ``should_stop`` every ``look_seconds``: True once it is ours (the moment its holder ends), False
    when told to stop. ``on_wait(holder)`` is called once, before the wait."""
    if lock.try_acquire():
        return True
    if on_wait is not None:
        on_wait(lock.holder())
    try:
        while not should_stop():
            if lock.acquire_within(look_seconds):
                return True
    except BaseException:
        lock.stop_waiting()
        raise
    lock.stop_waiting()
    return False
