"""The runner's intake: what changed in its folder and what its executors reported, as ``Inputs``.

Manifests and pause records are read again only where they changed; trigger
and backfill request files are read once each (a consumed one waits in
``RunnerState.taken`` until the book is saved, a broken one that could not be
moved aside is skipped); each executor is polled for the attempts that ended.
A folder that cannot be read is a fault, said by the shell, and its part of
the inputs is None (the step then goes on with what it read last). The clock
is read here, once per turn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import backfills
from .folder import ManifestFolder
from .ends import Report
from .firing import SWITCH_OFF_FILE, TRIGGERS_DIR
from .homes import Homes
from .lifecycle import Scan
from .memory import RunnerState
from .pauses import PauseFolder
from .requests import RequestFile, TriggerFile
from .step import Inputs
from .values import Pause

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def trigger_id(path: Path, mtime_ns: int) -> str:
    """A trigger file's identity: its name and modification time, so that a file consumed
    again after a crash is the same trigger and a file made again under a used name is not."""
    stem = _UNSAFE.sub("-", path.stem).lstrip(".") or "trigger"
    return f"{stem}.{mtime_ns}"


@dataclass
class Reading:
    inputs: Inputs
    faults: dict[str, str | None] = field(default_factory=dict)  # what failed -> the line (None: works again)


class Intake:
    def __init__(self, folder: Path, minute: Callable[[], int], seconds: Callable[[], float],
                 one_read: bool = False, manifests: Path | None = None) -> None:
        """``manifests``: the folder the manifests are read from, each turn (by default ``folder``,
        where the pause records, triggers and requests are). ``one_read``: ``minute`` and
        ``seconds`` are one clock's (the runner's own), and a turn reads it once, its minute from that second: two reads could straddle a minute's end. Tests
        that move a minute and a second apart leave it off."""
        self.folder = folder
        self.minute = minute
        self.seconds = seconds
        self.one_read = one_read
        self.manifests_folder = manifests or folder
        self.manifests = ManifestFolder(self.manifests_folder)
        self.pauses = PauseFolder(folder)

    def now(self) -> tuple[int, float]:
        """The turn's minute and second."""
        if self.one_read:
            second = self.seconds()
            return int(second // 60), second
        return self.minute(), self.seconds()

    def read(self, memory: RunnerState, homes: Homes, late: list[Report], rescan: bool = True) -> Reading:
        """This turn's inputs; ``late``: ends found for firings started again after a restart.
        ``rescan`` False: the kernel said no manifest changed, so the last scan stands."""
        faults: dict[str, str | None] = {}
        skip = set(memory.taken) | memory.left_broken
        minute, second = self.now()
        last = self.manifests.last
        manifests = self._manifests(memory, faults) if rescan or last is None else \
            Scan(last, False, frozenset(self.manifests.names))
        inputs = Inputs(minute=minute, second=second,
                        manifests=manifests, pauses=self._pauses(faults),
                        switched_off=(self.folder / SWITCH_OFF_FILE).exists(),
                        triggers=[t for p in self._files(TRIGGERS_DIR, skip) if (t := _trigger(p)) is not None],
                        backfills=[r for p in self._files(backfills.BACKFILLS_DIR, skip)
                                   if (r := _request(p)) is not None],
                        ends=self._ends(homes, faults) + late)
        return Reading(inputs, faults)

    def _manifests(self, memory: RunnerState, faults: dict[str, str | None]) -> Scan | None:
        try:
            loaded, changed = self.manifests.scan(memory.sources)
        except OSError as error:
            faults["manifests"] = (f"cannot read the manifests in {self.manifests_folder}: {error.strerror or error}; "
                                   "the schedules go on as last read")
            return None
        faults["manifests"] = None
        return Scan(loaded, changed, frozenset(self.manifests.names))

    def _pauses(self, faults: dict[str, str | None]) -> dict[str, Pause] | None:
        try:
            pauses, _ = self.pauses.scan()
        except OSError as error:
            faults["pauses"] = (f"cannot read the pause records in {self.pauses.path}: {error.strerror or error}; "
                                "the schedules stay suspended or not as last read")
            return None
        faults["pauses"] = None
        return pauses

    def _files(self, kind: str, skip: set[str]) -> list[Path]:
        try:
            paths = sorted((self.folder / kind).glob("*.json"))  # oldest first: a later request replaces
        except OSError:
            return []
        return [path for path in paths if str(path) not in skip]

    @staticmethod
    def _ends(homes: Homes, faults: dict[str, str | None]) -> list[Report]:
        reports: list[Report] = []
        for home, executor in homes.open():
            try:
                ended = executor.poll()
            except (OSError, ValueError) as error:
                faults[f"poll {home}"] = (f"cannot read how runs ended in {executor.runs_dir}: {error}; trying "
                                          "again at the next step")
                continue
            faults[f"poll {home}"] = None
            reports += [Report(home, end) for end in ended]
        return reports


def _trigger(path: Path) -> TriggerFile | None:
    """A trigger file as read (None: gone since the listing)."""
    try:
        stamp = path.stat().st_mtime_ns
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return TriggerFile(path, "", None, f"not a trigger ({error})")
    name = body.get("schedule") if isinstance(body, dict) else None
    if not isinstance(name, str):
        return TriggerFile(path, "", None, 'not a trigger (it should be {"schedule": "NAME"})')
    return TriggerFile(path, trigger_id(path, stamp), name)


def _request(path: Path) -> RequestFile | None:
    """A backfill request file as read (None: gone since the listing)."""
    try:
        stamp = path.stat().st_mtime_ns
        asked = backfills.read_request(path)
    except FileNotFoundError:
        return None
    except backfills.RequestError as error:
        return RequestFile(path, "", None, str(error))
    except OSError as error:
        return RequestFile(path, "", None, f"not a backfill request ({error})")
    return RequestFile(path, backfills.request_id(path, stamp), asked)
