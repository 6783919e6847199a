"""A run's output as ``cronctl logs`` shows it: which run a user means, and its log file.

A run's output is in its folder (``executor``): ``stdout.log`` and
``stderr.log``, each the last ``--max-log-bytes`` of its stream. The folder
of a scheduled run is ``DIR/runs/<schedule>/<nominal>``, a manual run's
under ``DIR/manual/<trigger>/``, a backfill's under
``DIR/backfill/<request>/``; a later attempt's name ends ``.<attempt>``.

A user names a run as history does (``nightly-12``), after its schedule's
name or alone: the book's history and its runs in flight say which folder
that is (its last attempt's). Without a run, the schedule's run started last
(manual and backfill runs included). ``follow`` prints the output as it grows
until the run has ended, going on after each cut of the log from the byte
after the last one shown (the cut's marker line says where its kept bytes
start in the stream).
"""

from __future__ import annotations

import re
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
MARKER_BYTES = 128  # past the longest marker line
_MARKER = re.compile(rb"\[cronctl: (\d+) earlier bytes cut; the last \d+ are kept\]\n")


class RunOutput(NamedTuple):
    run: str  # the run's name as history shows it, or its folder's when the book does not name it
    folder: Path  # the run's (last attempt's) folder


def run_output(folder: Path, schedule: str, run: str | None = None) -> RunOutput:
    """The folder of ``run`` of ``schedule`` (by default the run started last); ``schedule`` alone
    may also be a run's name, as history shows it, when no schedule has that name. ViewError when
    the folder is not a runner's, or there is no such run."""
    check_folder(folder)
    book = book_data(folder) or {}
    named = _named_runs(folder, schedule, book)
    if run is None and not named and not any(_run_folders(folder, schedule)):
        owner = _schedule_of_run(book, schedule)
        if owner is not None:
            schedule, run = owner, schedule
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


def _schedule_of_run(book: dict[str, Any], run: str) -> str | None:
    """The schedule whose history or runs in flight name ``run``, if one does."""
    journal = book.get("journal")
    for schedule, entries in (journal.items() if isinstance(journal, dict) else ()):
        if any(isinstance(entry, dict) and entry.get("run") == run for entry in entries or []):
            return str(schedule)
    for firing in book.get("firings") or []:
        if isinstance(firing, dict) and firing.get("run_id") == run and firing.get("schedule"):
            return str(firing["schedule"])
    return None


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
    until the run has ended (its exit.json is there and the log read to its end). Where the wrapper
    cut the log (its cap) while it was followed, the output goes on from the byte after the last
    one written: none repeated, none skipped but those cut before they could be read (a line says
    how many)."""
    log = output.folder / f"{stream}.log"
    shown: int | None = None  # bytes of the stream written so far (None: nothing read yet)
    while True:
        ended = (output.folder / "exit.json").exists()
        shown = _copy_from(log, shown, write)
        if not follow or ended:
            return
        sleep(FOLLOW_SECONDS)


def _copy_from(log: Path, shown: int | None, write: Callable[[bytes], None]) -> int | None:
    """Write the stream's bytes after the first ``shown`` (all of the log, its marker line
    included, the first time); how many of the stream are written now."""
    try:
        with log.open("rb") as file:  # one file: a cut renames a new one over the name
            cut, header = _cut_marker(file.read(MARKER_BYTES))
            if shown is None:
                file.seek(0)  # the marker too: it says what went before
            elif shown < cut:
                write(f"[cronctl: {cut - shown} bytes were cut before they could be shown]\n".encode("ascii"))
                file.seek(header)
            else:
                file.seek(header + shown - cut)
            while chunk := file.read(READ_BYTES):
                write(chunk)
            return cut + file.tell() - header
    except FileNotFoundError:
        return shown


def _cut_marker(head: bytes) -> tuple[int, int]:
    """(the stream's bytes cut before the log's first kept one, the marker line's length) of a log
    that starts with the wrapper's marker (``wrapper.cut_marker``); (0, 0) for one never cut."""
    found = _MARKER.match(head)
    return (int(found[1]), found.end()) if found else (0, 0)
