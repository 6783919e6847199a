"""A run's output as ``cronctl logs`` shows it: which run a user means, and its log file.

A run's output is in its folder (``executor``): ``stdout.log`` and
``stderr.log``, each the last ``--max-log-bytes`` of its stream. The folder
of a scheduled run is ``DIR/runs/<schedule>/<nominal>``, a manual run's
under ``DIR/manual/<trigger>/``, a backfill's under
``DIR/backfill/<request>/``; a later attempt's name ends ``.<attempt>``.

A user names a run as history does (``nightly-12``): the book's history and
its runs in flight say which folder that is (its last attempt's). Without a
name, the run started last (manual and backfill runs included). ``follow``
prints the output as it grows until the run has ended.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple

from .executor import RUNS_DIR
from .files import read_json
from .firing import BACKFILL_DIR, MANUAL_DIR
from .folder_view import EXIT_USAGE, ViewError, book_data, check_folder
from .values import RunKey, run_folder_name

EXIT_NO_RUN = 1
FOLLOW_SECONDS = 0.2  # how often a followed log is looked at
READ_BYTES = 65536


class RunOutput(NamedTuple):
    run: str  # the run's name as history shows it, or its folder's when the book does not name it
    folder: Path  # the run's (last attempt's) folder


def run_output(folder: Path, schedule: str, run: str | None = None) -> RunOutput:
    """The folder of ``run`` of ``schedule`` (by default the run started last). ViewError when the
    folder is not a runner's, or there is no such run."""
    check_folder(folder)
    book = book_data(folder) or {}
    named = _named_runs(folder, schedule, book)
    if run is not None:
        if run in named:
            return RunOutput(run, named[run])
        known = ", ".join(sorted(named, key=_run_number)[-5:]) or "none yet"
        raise ViewError(f"{schedule} has no run {run!r} (its latest: {known})", EXIT_USAGE)
    started = sorted(_run_folders(folder, schedule), key=_started)
    if not started:
        raise ViewError(f"{schedule} has no run yet in {folder}", EXIT_NO_RUN)
    newest = started[-1]
    name = next((run for run, path in named.items() if path == newest), newest.name)
    return RunOutput(name, newest)


def _named_runs(folder: Path, schedule: str, book: dict[str, Any]) -> dict[str, Path]:
    """Each run history or the runs in flight name, and its last attempt's folder."""
    runs: dict[str, Path] = {}
    journal = book.get("journal") if isinstance(book.get("journal"), dict) else {}
    for entry in journal.get(schedule) or []:
        if isinstance(entry, dict) and entry.get("run") and int(entry.get("attempts") or 0) >= 1:
            runs[str(entry["run"])] = _folder_of(folder, schedule, entry["nominal"], entry["attempts"],
                                                 entry.get("trigger"), entry.get("backfill"))
    for firing in book.get("firings") or []:
        if isinstance(firing, dict) and firing.get("schedule") == schedule:
            runs[str(firing["run_id"])] = _folder_of(folder, schedule, firing["nominal"], firing.get("attempt", 1),
                                                     firing.get("manual"), firing.get("backfill"))
    return runs


def _folder_of(folder: Path, schedule: str, nominal: Any, attempt: Any, trigger: Any, backfill: Any) -> Path:
    base = folder / MANUAL_DIR / str(trigger) if trigger else folder / BACKFILL_DIR / str(backfill) if backfill \
        else folder
    return base / RUNS_DIR / schedule / run_folder_name(RunKey(schedule, int(nominal), int(attempt)))


def _run_folders(folder: Path, schedule: str) -> Iterable[Path]:
    for base in [folder, *(folder / MANUAL_DIR).glob("*"), *(folder / BACKFILL_DIR).glob("*")]:
        yield from (path for path in (base / RUNS_DIR / schedule).glob("*") if (path / "request.json").exists())


def _started(path: Path) -> tuple[str, float]:
    """When the run of ``path`` was submitted (its request's stamp, then its file's time)."""
    try:
        request = read_json(path / "request.json")
        stamp = str(request.get("submitted_at") or "") if isinstance(request, dict) else ""
        return stamp, (path / "request.json").stat().st_mtime
    except (OSError, ValueError):
        return "", 0.0


def _run_number(run: str) -> tuple[int, str]:
    number = run.rpartition("-")[2]
    return (int(number), run) if number.isdigit() else (0, run)


def show(output: RunOutput, stream: str, write: Callable[[bytes], None], follow: bool = False,
         sleep: Callable[[float], None] = time.sleep) -> None:
    """Write the run's ``stream`` log (stdout or stderr); with ``follow``, go on writing what comes
    until the run has ended (its exit.json is there and the log read to its end)."""
    log = output.folder / f"{stream}.log"
    offset = 0
    while True:
        ended = (output.folder / "exit.json").exists()
        offset = _copy_from(log, offset, write)
        if not follow or ended:
            return
        sleep(FOLLOW_SECONDS)


def _copy_from(log: Path, offset: int, write: Callable[[bytes], None]) -> int:
    """Write the log from ``offset`` on; the new offset. A log cut shorter (its cap) starts over."""
    try:
        with log.open("rb") as file:
            if file.seek(0, 2) < offset:
                offset = 0
            file.seek(offset)
            while chunk := file.read(READ_BYTES):
                write(chunk)
                offset += len(chunk)
    except FileNotFoundError:
        pass
    return offset
