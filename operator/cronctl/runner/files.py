"""Crash-safe file writes and removals shared by the runner's modules.

A reader of a file written here sees the old content or the new, never a
mixture: the bytes go to a temporary file in the same folder (named
``.<name>.tmp-*``), which is flushed and fsync'ed, renamed over the target
with ``os.replace`` (atomic on POSIX within one file system), and then the
folder itself is fsync'ed so that the rename survives a power loss too.
``wrapper.py`` repeats the JSON write (it runs by path, importing nothing of
cronctl): keep the two alike.

A folder removed here is first renamed to a hidden ``.deleting-*`` name
beside it, durably, and only then deleted: a crash midway leaves the folder
whole under its own name, or hidden under the trash name, never half of it
under its own name. :func:`finish_removals` deletes what a crash left.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

TRASH_PREFIX = ".deleting-"


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """Make renames and creations inside ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old file or the new one."""
    target = Path(path)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.tmp-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(target.parent)


def atomic_write_json(path: str | os.PathLike[str], value: Any, indent: int | None = 2) -> None:
    atomic_write_bytes(path, (json.dumps(value, indent=indent, ensure_ascii=False) + "\n").encode("utf-8"))


def read_json(path: str | os.PathLike[str]) -> Any | None:
    """The JSON value in ``path``, or None when the file does not exist.

    Only for files written with :func:`atomic_write_json`, which are complete
    whenever they exist; a file that does not parse raises ``ValueError``.
    """
    try:
        with open(path, "rb") as handle:
            return json.loads(handle.read())
    except FileNotFoundError:
        return None


def utc_iso(seconds: float) -> str:
    """Epoch seconds as ``2024-01-14T02:00:05Z`` (UTC, whole seconds)."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_compact(moment: datetime) -> str:
    """An aware datetime as ``20240114T020005Z``, the form used in file names."""
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def remove_tree(folder: str | os.PathLike[str]) -> None:
    """Delete ``folder`` and what it holds, crash-safely (see the module's docstring)."""
    path = Path(folder)
    trash = path.with_name(f"{TRASH_PREFIX}{path.name}-{uuid.uuid4().hex[:8]}")
    os.rename(path, trash)
    fsync_dir(path.parent)
    shutil.rmtree(trash)


def finish_removals(parent: str | os.PathLike[str]) -> None:
    """Delete the ``.deleting-*`` folders in ``parent`` that a crash left behind."""
    try:
        entries = list(os.scandir(parent))
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.name.startswith(TRASH_PREFIX) and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
