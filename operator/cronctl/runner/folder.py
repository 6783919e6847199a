"""The manifest folder of ``cronctl local DIR``, scanned for changes.

:class:`ManifestFolder` reads a folder again only where it changed: a file
whose size, modification time, inode and change time are those of the last
read keeps its records (the same objects), so a runner stepping every second
parses nothing while nobody edits. A file modified within the last
``RACY_SECONDS`` is read again at the next scan too, since two writes within
one tick of the file system's clock can leave the same stamps (git's "racy"
files).
"""

from __future__ import annotations

import os
import stat
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .book import BOOK_NAME
from .definitions import Definition, LoadedDefinitions, combine, load_file

RACY_SECONDS = 2.0

Stamp = tuple[int, int, int, int]  # mtime_ns, size, inode, ctime_ns


@dataclass
class _Read:
    stamp: Stamp
    racy: bool  # modified so recently that a second write may share its stamp: read again
    loaded: LoadedDefinitions


class ManifestFolder:
    """The manifests of one folder, read again only where they changed (see the module's
    docstring). ``scan`` answers the folder's load and whether it differs from the last."""

    def __init__(self, folder: str | Path, now: Callable[[], float] = time.time) -> None:
        self.folder = Path(folder)
        self._now = now
        self._files: dict[str, _Read] = {}
        self._combined: LoadedDefinitions | None = None
        self._skipped: list[str] = []  # what the last scan passed over, and why, as notices
        self._owners: dict[str, str] = {}

    @property
    def names(self) -> set[str]:
        """The manifest files of the last scan, by name."""
        return set(self._files)

    @property
    def racy(self) -> bool:
        """Whether a file of the last scan was modified so recently that the next scan reads it again."""
        return any(read.racy for read in self._files.values())

    @property
    def last(self) -> LoadedDefinitions | None:
        """The folder's load at the last scan (None before the first): what a scan finds while the
        kernel says nothing changed (:class:`FolderWatch`)."""
        return self._combined

    def scan(self, owners: Mapping[str, str] | None = None) -> tuple[LoadedDefinitions, bool]:
        """(the folder's load, whether any file changed since the last scan). ``owners``: the file
        each schedule was first read from (``combine``).

        Raises ``OSError`` when the folder cannot be listed (gone, not a folder).
        """
        stamps, skipped = self._listed()
        changed = self._combined is None or stamps.keys() != self._files.keys() or skipped != self._skipped
        self._skipped = sorted(skipped)
        changed |= self._read(stamps)
        owners = dict(owners or {})
        changed |= owners != self._owners
        self._owners = owners
        if changed or self._combined is None:
            self._combined = combine([self._files[name].loaded for name in sorted(self._files)], owners)
            self._combined.notices[:0] = self._skipped
        return self._combined, changed

    def _listed(self) -> tuple[dict[str, Stamp], list[str]]:
        """The folder's manifest files with their stamps, and what the listing passed over that a
        user may wonder about, and why."""
        stamps: dict[str, Stamp] = {}
        skipped: list[str] = []
        with os.scandir(self.folder) as entries:
            for entry in entries:
                stamp = self._stamp(entry, skipped)
                if stamp is not None:
                    stamps[entry.name] = stamp
        if not stamps and not skipped:
            skipped.append(f"{self.folder}: no .yaml or .yml manifest here: nothing fires until one is added")
        return stamps, skipped

    def _stamp(self, entry: os.DirEntry[str], skipped: list[str]) -> Stamp | None:
        """A manifest file's stamp; None for any other entry (said in ``skipped`` if it looks meant)."""
        name = entry.name
        if name.startswith(".") or not name.endswith((".yaml", ".yml", ".json")):
            return None
        if name.endswith(".json"):
            if name != BOOK_NAME:
                skipped.append(f"{self.folder / name}: skipped: the runner reads .yaml and .yml files")
            return None
        try:
            info = entry.stat()
        except OSError as error:  # a dangling symlink, a loop; or gone since the listing
            if entry.is_symlink():
                skipped.append(f"{self.folder / name}: skipped: a symlink that leads nowhere "
                               f"({error.strerror or error})")
            return None
        if not stat.S_ISREG(info.st_mode):
            skipped.append(f"{self.folder / name}: skipped: not a file")
            return None
        return info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns

    def _read(self, stamps: Mapping[str, Stamp]) -> bool:
        """Read the files whose stamps changed (or may hide a change: racy), forget the gone ones;
        whether what any file says changed."""
        changed = False
        now = self._now()
        for name, stamp in stamps.items():
            known = self._files.get(name)
            if known is not None and known.stamp == stamp and not known.racy:
                continue
            loaded = load_file(self.folder / name)
            if known is None or _differs(known.loaded, loaded):
                changed = True
            else:
                loaded = known.loaded  # the same records: whoever keeps them by identity keeps them
            self._files[name] = _Read(stamp, now - stamp[0] / 1e9 < RACY_SECONDS, loaded)
        for name in [name for name in self._files if name not in stamps]:
            del self._files[name]
        return changed


def _differs(before: LoadedDefinitions, after: LoadedDefinitions) -> bool:
    return (before.errors != after.errors or before.notices != after.notices or before.pools != after.pools
            or [_meaning(d) for d in before.definitions] != [_meaning(d) for d in after.definitions])


def _meaning(d: Definition) -> tuple[Any, ...]:
    return d.name, d.body, d.command, d.args, d.env, d.working_dir, d.active_deadline_seconds, d.backoff_limit


class FolderWatch:
    """Whether anything the runner reads changed in its folders, told by the kernel (Linux's
    inotify), so that an idle runner need not scan its manifests every second: :meth:`fileno` is
    readable once something changed, :meth:`changed` says so and forgets it. Where inotify is
    missing (not Linux, no watches left) ``available`` is False and the runner scans every turn.

    A folder made after the watch (``triggers/`` at the first ``cronctl trigger``) is an event of
    its parent, and is watched from the next :meth:`changed` on.

    Written by hand: three libc calls through ctypes and a non-blocking read, where a library
    (inotify_simple, watchdog) would add a dependency for them and watchdog a thread of its own;
    the measurement that asked for it: an idle runner with 2,000 manifests at 0.067% of a core
    with the watch, 1.2-3% scanning every second (``benchmarks/bench_runner_idle.py``)."""

    _MASK = (0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800)
    # IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE,
    # IN_DELETE_SELF, IN_MOVE_SELF

    def __init__(self, folders: list[Path]) -> None:
        self.folders = list(folders)
        self._fd: int | None = None
        self._libc: Any = None
        try:
            import ctypes
            import ctypes.util

            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        except (OSError, AttributeError):
            return
        if fd >= 0:
            self._fd, self._libc = fd, libc
            self._add_watches()

    @property
    def available(self) -> bool:
        return self._fd is not None

    def fileno(self) -> int:
        assert self._fd is not None
        return self._fd

    def _add_watches(self) -> None:
        for folder in self.folders:
            if self._libc.inotify_add_watch(self._fd, os.fsencode(folder), self._MASK) < 0 and folder.is_dir():
                self.close()  # out of watches (fs.inotify.max_user_watches): scan every turn instead
                return

    def changed(self) -> bool:
        """Whether an event came since the last call (all read), but of the runner's own files (its
        book, lock and run folders: ``OWN``); True, always, when not available."""
        if self._fd is None:
            return True
        seen = made = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                return True
            if not data:
                break
            for name, mask in _events(data):
                made |= bool(mask & 0x100)  # IN_CREATE: a folder made since is watched too
                seen |= not _own(name)
        if made:
            self._add_watches()  # an existing watch is kept
        return seen

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


OWN = frozenset({BOOK_NAME, "cronctl.lock", "runs", "manual", "backfill"})  # what the runner itself writes


def _own(name: str) -> bool:
    return name in OWN or name.startswith(f".{BOOK_NAME}.")  # the book's temporary files


def _events(data: bytes) -> list[tuple[str, int]]:
    """The (name, mask) of each ``struct inotify_event`` in ``data``; the name empty for the folder's own."""
    events, offset = [], 0
    while offset + 16 <= len(data):
        _, mask, _, length = struct.unpack_from("iIII", data, offset)
        name = data[offset + 16:offset + 16 + length].split(b"\0", 1)[0]
        events.append((os.fsdecode(name), mask))
        offset += 16 + length
    return events
