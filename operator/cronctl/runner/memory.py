"""What the runner's step keeps between steps: ``RunnerState``.

The book (``cronctl.json``) is most of it (the core's state, the firings, the
history, what became of the manifests); the rest is what one process
remembers from step to step (the last verdict on each manifest, the
suspensions it has said, the lines said once). The step owns this state: the
shell hands it over and reads it back, and never changes it but through the
step's helpers (:func:`start_refused`, :func:`stop_refused`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.controller import Controller
from .definitions import Definition
from .judge import Judge
from .firing import BookContents, Firing
from .slots import SlotPool
from .values import Pause, RunKey, Suspension


@dataclass
class RunnerState:
    folder: Path  # the runner's folder: where relative working directories and records are
    slots: SlotPool
    grace_seconds: float = 10.0  # SIGTERM, then SIGKILL this much later
    # The folder as an absolute path: where a run's command runs by default, and what a relative
    # workingDir is relative to (the wrapper runs elsewhere). None: ``folder`` (already absolute).
    base: Path | None = None

    @property
    def run_folder(self) -> Path:
        return self.base or self.folder
    controller: Controller = field(default_factory=Controller)
    firings: dict[str, Firing] = field(default_factory=dict)
    journal: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # schedule -> history rows
    # What a waiting firing will run: the command as it was when the firing became due.
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Per schedule, its last overflow (Overflowed.to_json), until it fires on time again.
    overflows: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Per schedule, its Forbid time waiting for the active run (forbid_waits: nominal, behind, ran).
    waits: dict[str, dict[str, Any]] = field(default_factory=dict)
    definitions: dict[str, Definition] = field(default_factory=dict)  # the last valid one of each schedule
    judge: Judge = field(default_factory=Judge)
    sources: dict[str, str] = field(default_factory=dict)  # schedule -> the manifest file it was read from
    invalid: list[dict[str, Any]] = field(default_factory=list)  # the book's manifests.invalid
    retired: list[dict[str, Any]] = field(default_factory=list)  # the book's manifests.retired
    held: dict[str, str] = field(default_factory=dict)  # known schedules whose manifest is invalid -> message
    by_manifest: dict[str, str | None] = field(default_factory=dict)  # spec.suspend: true -> suspendReason
    # The book's manifests.suspended: schedule -> {"since": minute or None (not known), "reason": ...}.
    suspended: dict[str, dict[str, Any]] = field(default_factory=dict)
    pauses: dict[str, Pause] = field(default_factory=dict)  # cronctl suspend's records, by schedule
    suspensions: dict[str, Suspension] = field(default_factory=dict)  # the schedules suspended at the last step
    suspensions_read: bool = False  # the first step says nothing of schedules suspended already
    judged: bool = False  # the manifests were judged once: the first verdict names every invalid one
    imaged: set[str] = field(default_factory=set)  # schedules the notice that images are ignored named
    switched_off: bool | None = None  # the node switch as last seen (None: not looked at yet)
    holding: set[str] = field(default_factory=set)  # the schedules that fire nothing: their backfills wait
    backfills_said: dict[str, tuple[str, bool]] = field(default_factory=dict)  # schedule -> (request, finished)
    noticed: set[str] = field(default_factory=set)  # notices said once
    timed_out: set[str] = field(default_factory=set)  # firings' runs the core timed out (Controller.expired)
    # Ends recorded, acknowledged to their executor once the book that records them is saved.
    to_acknowledge: list[tuple[str | None, RunKey]] = field(default_factory=list)
    taken: dict[str, Path] = field(default_factory=dict)  # trigger and backfill files consumed: deleted once saved
    pools: dict[str, int] = field(default_factory=dict)  # the folder's CronPools: name -> workers
    pool_of: dict[str, str] = field(default_factory=dict)  # schedule -> the pool its spec.pool names
    left_broken: set[str] = field(default_factory=set)  # broken request files that could not be moved aside
    orphans: list[Any] = field(default_factory=list)  # runs going that the book lost (orphans.Orphan)

    def load(self, contents: BookContents) -> None:
        """Take what a book holds (the memory of this process stays)."""
        self.controller = Controller(contents.state)
        self.firings = contents.firings
        self.journal, self.snapshots, self.overflows = contents.journal, contents.snapshots, contents.overflows
        self.waits = contents.waits
        self.invalid, self.retired, self.sources = contents.invalid, contents.retired, contents.sources
        self.suspended = {entry["schedule"]: {"since": entry.get("since"), "reason": entry.get("reason")}
                          for entry in contents.suspended}

    def book(self) -> dict[str, Any]:
        """The book to save."""
        return {"controller": self.controller.state.to_json(),
                "firings": [firing.to_json() for firing in self.firings.values()],
                "journal": self.journal, "snapshots": self.snapshots, "overflows": self.overflows,
                "waits": self.waits,
                "manifests": {"invalid": self.invalid, "retired": self.retired,
                              "suspended": [{"schedule": name, **entry}
                                            for name, entry in sorted(self.suspended.items())]},
                "sources": self.sources, "workers": self.slots.size,
                "pools": {"workers": self.pools, "schedules": self.pool_of}}


def start_refused(memory: RunnerState, run_id: str) -> None:
    """The process of a firing the step started could not start: it waits for a slot again."""
    firing = memory.firings.get(run_id)
    if firing is not None and firing.slot is not None:
        memory.slots.release(firing.slot)
        firing.slot = None


def stop_refused(memory: RunnerState, run_id: str) -> None:
    """A stop the step asked for failed: the next step asks again."""
    firing = memory.firings.get(run_id)
    if firing is not None:
        firing.stopping = None
