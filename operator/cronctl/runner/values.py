"""The runner's value types: what a run, a pause and a backfill request are, and nothing that does I/O.

The step (:mod:`.step`) and its rules decide with these values; the shell's
modules that read and write the folder (:mod:`.executor`, :mod:`.pauses`,
:mod:`.backfills`) make and take them. Kept here, apart from those modules,
so that importing a value never imports a process, a file or the clock: the
import-linter contract on the step checks its indirect imports too.

- a run: :class:`RunKey` (schedule, nominal minute, attempt: one process),
  :class:`RunRequest` (what to start), :class:`Ended` (how a run ended, as the
  executor reports it), and how a nominal minute is written;
- a pause: :class:`Pause` (a pause record as read) and :class:`Suspension`
  (what a suspended schedule shows), and where a record lives;
- a backfill: :class:`Request` (what ``cronctl backfill`` asks).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

PAUSED_DIR = "paused"
MAX_REASON = 256  # characters, as the CRD's maxLength of spec.suspendReason
BY_COMMAND = "cronctl suspend"
BY_MANIFEST = "manifest"


def nominal_stamp(nominal: int) -> str:
    """A nominal minute (minutes since 1970 UTC) as the run folder's name, ``YYYYmmddTHHMM``."""
    return datetime.fromtimestamp(nominal * 60, timezone.utc).strftime("%Y%m%dT%H%M")


def run_folder_name(key: RunKey) -> str:
    """``YYYYmmddTHHMM`` for a first attempt, ``YYYYmmddTHHMM.<attempt>`` for a later one."""
    stamp = nominal_stamp(key.nominal)
    return stamp if key.attempt == 1 else f"{stamp}.{key.attempt}"


def nominal_iso(nominal: int) -> str:
    return datetime.fromtimestamp(nominal * 60, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, order=True)
class RunKey:
    """One process: the seed's correlation key (schedule name, nominal minute, in minutes
    since 1970 UTC) and the attempt of that firing (1 unless a failed attempt is retried)."""

    schedule: str
    nominal: int
    attempt: int = 1

    def __str__(self) -> str:
        return f"{self.schedule}@{run_folder_name(self)}"


@dataclass(frozen=True)
class RunRequest:
    schedule: str
    nominal: int
    command: Sequence[str]
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    reason: str = "scheduled"
    attempt: int = 1
    cwd: str | None = None  # None: the base folder
    active_deadline_seconds: int | None = None  # the wrapper stops the command once it has run this long
    backoff_limit: int = 0  # failed tries of the command the wrapper runs again (the Job's backoffLimit)

    @property
    def key(self) -> RunKey:
        return RunKey(self.schedule, self.nominal, self.attempt)


@dataclass(frozen=True)
class Ended:
    key: RunKey
    outcome: str
    exit_code: int | None
    signal: int | None
    started_at: str | None
    finished_at: str | None
    note: str | None
    run_dir: Path
    request: dict[str, Any]
    elapsed_seconds: float | None = None  # the run's own time, on the wrapper's monotonic clock


@dataclass(frozen=True)
class Pause:
    """A pause record as read: its reason and time, or the problem that keeps it from being read."""

    reason: str | None
    since: str | None  # RFC 3339 UTC, as written
    problem: str | None = None  # e.g. "paused/x.json: not JSON (...)"; the schedule is paused all the same


def pause_path(folder: Path, name: str) -> Path:
    return folder / PAUSED_DIR / f"{name}.json"


@dataclass(frozen=True)
class Suspension:
    """Why a schedule does not fire: by a pause record (``cronctl suspend``), by its manifest
    (``spec.suspend: true``), or both (``by`` is then the pause record's, ``manifest`` True)."""

    by: str  # BY_COMMAND or BY_MANIFEST
    reason: str | None
    since: str | None  # RFC 3339 UTC; None: not known
    manifest: bool  # the manifest says spec.suspend: true (cronctl resume cannot lift that)
    problem: str | None = None  # the pause record does not read

    def describe(self) -> str:
        """``by cronctl suspend: "db migration"``, ``by its manifest (no reason given)``, ...; the
        reason JSON-quoted, so that the line stays one line."""
        who = "by cronctl suspend" if self.by == BY_COMMAND else "by its manifest"
        if self.reason:
            text = f"{who}: {quoted(self.reason)}"
        else:
            text = who if self.problem else f"{who} (no reason given)"
        if self.problem:
            text += f"; its pause record is unreadable ({self.problem})"
        if self.by == BY_COMMAND and self.manifest:
            text += "; its manifest says spec.suspend: true as well"
        return text

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "since": self.since, "reason": self.reason, "manifest": self.manifest,
                "problem": self.problem}


def suspension_of(pause: Pause | None, manifest: bool, manifest_reason: str | None,
                  manifest_since: str | None) -> Suspension | None:
    """What suspends a schedule, if anything: its pause record first, then its manifest."""
    if pause is not None:
        return Suspension(BY_COMMAND, pause.reason or (manifest_reason if manifest else None), pause.since,
                          manifest, pause.problem)
    if manifest:
        return Suspension(BY_MANIFEST, manifest_reason, manifest_since, True)
    return None


def quoted(reason: str | None) -> str:
    """A reason as people read it in one line: JSON-quoted (``"db migration"``)."""
    return json.dumps(reason, ensure_ascii=False)


@dataclass(frozen=True)
class Request:
    """A backfill asked for: every time of ``schedule`` from ``start`` to ``end``."""

    schedule: str
    start: int  # UTC minutes, both ends included
    end: int
