"""The book: the runner's state file ``cronctl.json`` in the base folder.

This module owns the file, not its meaning: what the schedules' state looks
like is the caller's business (it comes from the core). What the file
promises (seed 004, "The book and the lock"):

- Each write is the whole file, made atomic by :mod:`.files` (temporary file
  in the same folder, flush and fsync, ``os.replace``, fsync of the folder),
  so a crash at any point leaves the old file or the new one.
- The file carries ``"version": SCHEMA_VERSION``. A book of a newer version
  is refused: :meth:`Book.load` answers ``newer``, nothing may fire, and this
  :class:`Book` will not write the file (:meth:`Book.save` raises
  :class:`BookRefused`), so the newer cronctl finds it as it left it.
- A book that does not parse (not JSON, not an object, no whole-number
  version >= 1, a folder where the file should be) is moved aside as
  ``cronctl.json.broken-<YYYYmmddTHHMMSSZ>`` and the runner starts with an
  empty book, saying so in ``Loaded.message``. Where it cannot be moved (a
  read-only folder) it stays, and the first save that succeeds replaces it.
- A book that exists but cannot be read (permissions, an I/O error) is
  ``unreadable``: nothing may fire and the file is not written, as for a
  newer book, until a later :meth:`Book.load` reads it.
- :meth:`Book.save` raises ``OSError`` as the file system does (a full disk,
  a read-only folder); the old book then stays whole, and the caller keeps
  what it has and saves again later.

Reading never changes the file; only the lock holder should call
:meth:`Book.save` or load a book that may be broken (moving aside is a write).
A runner waiting for the lock reads with ``load(move_broken=False)``.
"""

from __future__ import annotations

import enum
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import orjson

from .files import atomic_write_bytes, fsync_dir, utc_compact

SCHEMA_VERSION = 1
BOOK_NAME = "cronctl.json"


class Status(str, enum.Enum):
    MISSING = "missing"  # no file yet: start empty
    OK = "ok"            # the file of this schema version
    NEWER = "newer"      # a newer schema version: refuse, fire nothing, touch nothing
    BROKEN = "broken"    # did not parse: moved aside, start empty
    UNREADABLE = "unreadable"  # exists but cannot be read: fire nothing, touch nothing, try again later


class BookRefused(RuntimeError):
    """Raised by :meth:`Book.save` once the book on disk was found to be of a newer version."""


@dataclass(frozen=True)
class Loaded:
    """What :meth:`Book.load` found.

    ``data`` is the book without its ``version`` key (empty unless ``ok``);
    ``version`` is the version the file declared (None when missing/broken).
    """

    status: Status
    data: dict[str, Any] = field(default_factory=dict)
    version: int | None = None
    message: str = ""
    moved_to: Path | None = None

    @property
    def may_fire(self) -> bool:
        """False for a book of a newer version or one that cannot be read: fire nothing."""
        return self.status not in (Status.NEWER, Status.UNREADABLE)


class Book:
    def __init__(self, base_dir: str | os.PathLike[str],
                 now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> None:
        self.base_dir = Path(base_dir)
        self.path = self.base_dir / BOOK_NAME
        self._now = now
        self._refusal: str | None = None  # why save() must not write the file

    def load(self, move_broken: bool = True) -> Loaded:
        problem: str | None
        value: dict[str, Any]
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return Loaded(Status.MISSING, message=f"{self.path}: no book yet, starting with an empty one")
        except IsADirectoryError:
            problem, value = "a folder, not a file", {}
        except OSError as error:
            self._refusal = f"{self.path}: refusing to overwrite a book that could not be read"
            return Loaded(Status.UNREADABLE, message=(
                f"{self.path}: the book cannot be read ({error.strerror or error}); nothing fires and "
                "the file is left untouched; trying again every step"))
        else:
            problem, value = _parse(raw)
        self._refusal = None
        if problem is None:
            version = value.pop("version")
            if version > SCHEMA_VERSION:
                self._refusal = (f"{self.path}: refusing to overwrite a book of schema version {version} "
                                 f"(this cronctl writes version {SCHEMA_VERSION})")
                return Loaded(Status.NEWER, version=version, message=(
                    f"{self.path}: the book has schema version {version} and this cronctl reads version "
                    f"{SCHEMA_VERSION}; nothing fires and the file is left untouched until a cronctl "
                    f"that reads version {version} runs"))
            return Loaded(Status.OK, data=value, version=version)
        if not move_broken:
            return Loaded(Status.BROKEN, message=f"{self.path}: the book does not parse ({problem})")
        return self.move_aside(f"the book does not parse ({problem})")

    def move_aside(self, why: str) -> Loaded:
        """Move the book aside as ``cronctl.json.broken-<time>``, to start with an empty one."""
        try:
            moved = self._move_aside()
        except OSError as error:
            return Loaded(Status.BROKEN, message=(
                f"{self.path}: {why}; it cannot be moved aside ({error.strerror or error}), so it stays "
                "until the first save replaces it; starting with an empty book"))
        return Loaded(Status.BROKEN, moved_to=moved, message=(
            f"{self.path}: {why}; moved aside as {moved.name}, starting with an empty book"))

    def save(self, data: dict[str, Any]) -> None:
        """Write the whole book atomically, stamped with ``SCHEMA_VERSION``."""
        if self._refusal is not None:
            raise BookRefused(self._refusal)
        if not isinstance(data, dict):
            raise TypeError(f"the book must be a dict, not {type(data).__name__}")
        body = {"version": SCHEMA_VERSION, **{k: v for k, v in data.items() if k != "version"}}
        # orjson: the book is written at every start and end, and json's indented encoder (pure
        # Python) took 80 ms of each for 200 schedules, holding up the next start (bench_runner_starts).
        atomic_write_bytes(self.path, orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))

    def remove_stale_temps(self) -> list[Path]:
        """Delete temporary files a crashed save left behind; only for the lock holder."""
        removed = []
        for temp in self.base_dir.glob(f".{BOOK_NAME}.tmp-*"):
            try:
                temp.unlink()
                removed.append(temp)
            except FileNotFoundError:
                pass
        return removed

    def _move_aside(self) -> Path:
        stamp = utc_compact(self._now())
        for n in range(1, 1000):
            target = self.base_dir / (f"{BOOK_NAME}.broken-{stamp}" + ("" if n == 1 else f"-{n}"))
            if target.exists():
                continue
            try:
                os.link(self.path, target)  # fails rather than overwrite an earlier broken book
            except FileExistsError:
                continue
            except OSError:  # a file system without hard links, or a folder (no hard links to those)
                os.rename(self.path, target)
            else:
                os.unlink(self.path)
            fsync_dir(self.base_dir)
            return target
        raise RuntimeError(f"{self.path}: too many broken books named for {stamp}")


def _parse(raw: bytes) -> tuple[str | None, dict[str, Any]]:
    """(None, the object) for a readable book, else (the reason, {})."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        return f"not UTF-8: {error.reason} at byte {error.start}", {}
    except json.JSONDecodeError as error:
        return f"not JSON: {error.msg} at line {error.lineno} column {error.colno}", {}
    if not isinstance(value, dict):
        return f"not a JSON object but {type(value).__name__}", {}
    if "version" not in value:
        return "no version", {}
    version = value["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return f"version {version!r} is not a whole number >= 1", {}
    return None, value
