"""The lock: ``cronctl.lock`` in the base folder decides which runner fires.

Two runners may share one base folder; the one that holds the lock fires,
the other shows the schedules read-only, names the holder and tries again
every 60 seconds (seed 004, "The book and the lock").

The lock is ``fcntl.flock(LOCK_EX)`` on a file descriptor kept open for the
runner's whole life. The kernel drops it when the process ends in any way,
``kill -9`` included, so a dead runner never leaves a stale lock. The
descriptor is not inheritable, so the processes the runner starts (which
outlive it on purpose) do not keep the lock alive.

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


class RunnerLock:
    def __init__(self, base_dir: str | os.PathLike[str], identity: Mapping[str, Any] | None = None) -> None:
        self.path = Path(base_dir) / LOCK_NAME
        self.identity = dict(identity) if identity is not None else runner_identity()
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if it is free and write our identity; True if we hold it."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        try:
            text = (json.dumps(self.identity, sort_keys=True) + "\n").encode("utf-8")
            os.ftruncate(fd, 0)
            os.pwrite(fd, text, 0)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

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
        """Give the lock up (also done by the kernel when the process ends)."""
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
