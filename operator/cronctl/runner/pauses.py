"""Pause records: ``cronctl suspend NAME`` without touching the user's manifest.

The runner's source of truth is the folder's manifests, which their owners
write and keep in git, so ``cronctl suspend`` never rewrites one. It leaves
a pause record instead, ``DIR/paused/<schedule>.json`` (beside the
``triggers/`` of ``cronctl trigger``), written crash-safely with
:func:`.files.atomic_write_json`: ``{"reason": "db migration", "since":
"2024-03-01T00:10:07Z"}`` (the reason may be null; the time is when the
schedule was first paused, RFC 3339 UTC). While the record exists the
schedule is suspended exactly as if its manifest said ``spec.suspend:
true``; ``cronctl resume NAME`` deletes it. A running runner reads the
folder at every step (only the records that changed, as it reads
manifests) and a stopped one at its start, so both commands work whether a
runner runs or not.

A record that cannot be read (not JSON, not the shape above, a permission
refused) still pauses its schedule: whoever wrote it meant to pause, and a
schedule that fired because its pause record got damaged would be the
worse surprise. The problem is carried on the :class:`Pause`, and the
runner and ``cronctl status`` say it; ``cronctl resume`` removes such a
record and ``cronctl suspend`` writes it again.

:class:`Suspension` is what a suspended schedule shows (``cronctl status``,
``next``, the runner's lines): by whom (``cronctl suspend`` or
``manifest``), since when if known, and the reason, the pause record's
before the manifest's ``spec.suspendReason``. It and :class:`Pause` are
values the step decides with, so they live in :mod:`.values`; this module
reads and writes the records.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .files import atomic_write_json, fsync_dir
from .values import PAUSED_DIR, Pause, pause_path

RACY_SECONDS = 2.0  # as folder.RACY_SECONDS: a record this fresh is read again at the next scan


def write_pause(folder: Path, name: str, reason: str | None, since: str) -> Path:
    """Write (or replace) the pause record of ``name``; raises OSError as the file system does."""
    paused = folder / PAUSED_DIR
    if not paused.is_dir():
        paused.mkdir(exist_ok=True)
        fsync_dir(folder)
    path = pause_path(folder, name)
    atomic_write_json(path, {"reason": reason, "since": since})
    return path


def remove_pause(folder: Path, name: str) -> bool:
    """Delete the pause record of ``name``: whether there was one. Raises OSError otherwise."""
    path = pause_path(folder, name)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    fsync_dir(path.parent)
    return True


def read_pause(path: Path) -> Pause:
    """One record (a record that does not read is a pause with its problem); raises only
    FileNotFoundError, for a record deleted meanwhile."""
    try:
        body = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise
    except OSError as error:
        return Pause(None, None, f"{path}: cannot be read ({error.strerror or error})")
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return Pause(None, None, f"{path}: not JSON ({error})")
    return _pause_of(path, body)


def _pause_of(path: Path, body: Any) -> Pause:
    if not isinstance(body, dict):
        return Pause(None, None, f'{path}: not a pause record (it should be {{"reason": ..., "since": ...}})')
    reason, since = body.get("reason"), body.get("since")
    if reason is not None and not isinstance(reason, str):
        return Pause(None, _text_or_none(since), f"{path}: reason: {reason!r} is not text")
    if since is not None and not isinstance(since, str):
        return Pause(reason or None, None, f"{path}: since: {since!r} is not a time")
    return Pause(reason or None, since)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def read_pauses(folder: Path) -> dict[str, Pause]:
    """Every pause record of the folder, by schedule name; raises OSError when the folder of
    records exists but cannot be listed."""
    return PauseFolder(folder).scan()[0]


@dataclass
class _Read:
    stamp: tuple[int, int, int, int]  # mtime_ns, size, inode, ctime_ns
    racy: bool
    pause: Pause


class PauseFolder:
    """The pause records of a folder, each read again only when it changed (as the manifests
    are: a record rewritten within ``RACY_SECONDS`` is read again at the next scan too)."""

    def __init__(self, folder: Path, now: Callable[[], float] = time.time) -> None:
        self.path = folder / PAUSED_DIR
        self._now = now
        self._read: dict[str, _Read] = {}

    def scan(self) -> tuple[dict[str, Pause], bool]:
        """(the records by schedule name, whether any changed since the last scan).

        Raises OSError when the folder of records exists but cannot be listed."""
        stamps: dict[str, tuple[int, int, int, int]] = {}
        try:
            entries = list(os.scandir(self.path))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            if not entry.name.endswith(".json") or entry.name.startswith("."):
                continue  # a temporary file of a write in progress, say
            try:
                info = entry.stat()
            except OSError:
                continue  # gone since the listing
            stamps[entry.name[:-len(".json")]] = (info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns)
        changed = stamps.keys() != self._read.keys()
        now = self._now()
        for name, stamp in stamps.items():
            known = self._read.get(name)
            if known is not None and known.stamp == stamp and not known.racy:
                continue
            try:
                pause = read_pause(self.path / f"{name}.json")
            except FileNotFoundError:
                continue  # resumed since the listing
            changed |= known is None or known.pause != pause
            self._read[name] = _Read(stamp, now - stamp[0] / 1e9 < RACY_SECONDS, pause)
        for name in [name for name in self._read if name not in stamps]:
            del self._read[name]
        return {name: read.pause for name, read in sorted(self._read.items())}, changed
