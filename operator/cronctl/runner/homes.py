"""The executors of one runner: the scheduled runs' and one per manual trigger or backfill request.

A manual firing's runs live in an executor folder of their own
(``DIR/manual/<trigger id>/``), a backfill's in its request's
(``DIR/backfill/<request id>/``), so that neither shares a key (schedule,
nominal time, attempt) with the scheduled run of that minute.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from .executor import Executor
from .firing import BACKFILL_DIR, MANUAL_DIR
from .values import Ended, RunKey


class Homes:
    def __init__(self, folder: Path, max_log_bytes: int) -> None:
        self.folder = folder
        self.max_log_bytes = max_log_bytes
        self.scheduled = Executor(folder, max_log_bytes=max_log_bytes)
        self._homes: dict[str, Executor] = {}  # by folder: manual/<trigger id>, backfill/<request id>

    def of(self, home: str | None) -> Executor:
        """The executor of that folder (None: scheduled runs'), opened when first asked for."""
        if home is None:
            return self.scheduled
        if home not in self._homes:
            self._homes[home] = Executor(self.folder / home, max_log_bytes=self.max_log_bytes)
        return self._homes[home]

    def open(self) -> Iterator[tuple[str | None, Executor]]:
        """The executors opened, the scheduled runs' first."""
        yield None, self.scheduled
        yield from list(self._homes.items())

    def opened(self) -> set[str]:
        return set(self._homes)

    def adopt(self) -> None:
        """Watch the runs a runner before this one left, in every folder there is."""
        self.scheduled.adopt()
        for home in self.folders():
            executor = Executor(self.folder / home, max_log_bytes=self.max_log_bytes)
            if executor.adopt():
                self._homes[home] = executor

    def folders(self) -> list[str]:
        """The executor folders of manual firings and backfills there are (``manual/<id>``, ...)."""
        homes = []
        for kind in (MANUAL_DIR, BACKFILL_DIR):
            base = self.folder / kind
            if base.is_dir():
                homes += [f"{kind}/{entry.name}" for entry in sorted(base.iterdir())
                          if entry.is_dir() and not entry.name.startswith(".")]
        return homes

    def ended(self, key: RunKey) -> tuple[str | None, Ended | None]:
        """How an attempt ended, in whichever folder it ran (with that folder)."""
        ended = self.scheduled.result(key)
        if ended is not None:
            return None, ended
        for home in self.folders():
            ended = self.of(home).result(key)
            if ended is not None:
                return home, ended
        return None, None

    def exit_fds(self) -> list[int] | None:
        """A descriptor per running wrapper, readable at its exit; None where the system has none."""
        fds: list[int] = []
        for _, executor in self.open():
            mine = executor.exit_fds()
            if mine is None:
                return None
            fds += mine
        return fds

    def newly_exited(self) -> bool:
        return any(executor.newly_exited() for _, executor in self.open())

    def close(self, keep: set[str]) -> None:
        """Forget the idle executors of folders no firing or pending end needs."""
        for home in [h for h, executor in self._homes.items() if h not in keep and not executor.active()]:
            del self._homes[home]

    def forget(self, home: str) -> None:
        self._homes.pop(home, None)
