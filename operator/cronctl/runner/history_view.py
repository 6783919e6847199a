"""``cronctl history`` and ``cronctl next``: a schedule's last runs, and its next fire times.

Plain values first (``history``: JSON-ready, times RFC 3339 UTC), words for people second
(``*_lines``: times as ``YYYY-MM-DD HH:MM UTC`` plus the schedule's own zone).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..core.spec import JobSpec
from ..core.zones import UTC
from .executor import RUNS_DIR
from .files import read_json
from .firing import BACKFILL_DIR, MANUAL_DIR, both_times
from .folder_view import (ViewError, actual_time, book_data, book_suspension, decode, defined, describe_schedule,
                          expressions, manifest_suspension, pause_records, read_manifests, refuse_invalid, rfc3339,
                          rules_of, suspended_line, timeline_of, unknown_schedule, wall_minute)
from .values import RunKey, Suspension, run_folder_name

# -- history -----------------------------------------------------------------------------------


class Exit(NamedTuple):
    code: int | None
    signal: int | None

    def __str__(self) -> str:
        if self.code is not None:
            return str(self.code)
        if self.signal is not None:
            try:
                return signal.Signals(self.signal).name
            except ValueError:
                return f"signal {self.signal}"
        return "-"


def exit_of(entry: dict[str, Any], folder: Path, schedule: str) -> Exit:
    """The exit of a history entry's last attempt: as the entry records it, else as the executor's
    ``exit.json`` of that attempt says (the folder of its trigger's runs for a manual firing);
    nothing when neither has it."""
    if "exit_code" in entry or "signal" in entry:
        code, sig = entry.get("exit_code"), entry.get("signal")
        return Exit(code if isinstance(code, int) else None, sig if isinstance(sig, int) else None)
    attempt = int(entry["attempts"])
    if attempt < 1:
        return Exit(None, None)
    base = folder / MANUAL_DIR / str(entry["trigger"]) if entry.get("trigger") else \
        folder / BACKFILL_DIR / str(entry["backfill"]) if entry.get("backfill") else folder
    key = RunKey(schedule, int(entry["nominal"]), attempt)
    path = base / RUNS_DIR / schedule / run_folder_name(key) / "exit.json"
    try:
        value = read_json(path)
    except (OSError, ValueError):
        return Exit(None, None)
    if not isinstance(value, dict):
        return Exit(None, None)
    code, sig = value.get("exit_code"), value.get("signal")
    return Exit(code if isinstance(code, int) else None, sig if isinstance(sig, int) else None)


@dataclass(frozen=True)
class HistoryRow:
    run: str | None
    reason: str
    nominal: int
    actual: str | None  # RFC 3339 UTC with seconds, as the executor stamps a start
    attempts: int
    exit: Exit
    outcome: str
    finished: int | None
    note: str | None  # why, where the runner says (a trigger not run, a retired schedule)


@dataclass(frozen=True)
class HistoryView:
    name: str
    spec: JobSpec | None  # None: a schedule the book no longer has
    rows: list[HistoryRow]


def history_view(folder: Path, name: str) -> HistoryView:
    data = book_data(folder)
    if data is None:
        known = read_manifests(folder, wall_minute()).specs
        if name not in known:
            raise ViewError(unknown_schedule(name, folder, sorted(known)))
        return HistoryView(name, known[name], [])
    book = decode(folder, data)
    job = book.state.jobs.get(name)
    entries = book.journal.get(name)
    if entries is None and job is None:
        raise ViewError(unknown_schedule(name, folder, sorted(set(book.state.jobs) | set(book.journal))))
    try:
        rows = [HistoryRow(e["run"], str(e["reason"]), int(e["nominal"]), e.get("actual"), int(e["attempts"]),
                           exit_of(e, folder, name), str(e["outcome"]),
                           None if e.get("finished") is None else int(e["finished"]),
                           None if e.get("note") is None else str(e["note"])) for e in entries or []]
    except (KeyError, TypeError, ValueError) as error:
        raise ViewError(f"{folder / 'cronctl.json'}: a history entry of {name!r} is not what this cronctl "
                        f"reads ({type(error).__name__}: {error})") from None
    return HistoryView(name, None if job is None else job.spec, _in_nominal_order(rows))


def _in_nominal_order(rows: list[HistoryRow]) -> list[HistoryRow]:
    """The rows by nominal time (then by when they finished), without a time's ``skipped`` row once
    that time ran after all: a book written before issue 45's fix has such rows (under Forbid the
    seed's rule launches a time held back when the active run ends; it waits now, with no row)."""
    ran = {row.nominal for row in rows if row.run is not None and row.reason in ("scheduled", "catch-up")}
    kept = [row for row in rows if not (row.outcome == "skipped" and row.nominal in ran)]
    return sorted(kept, key=lambda row: (row.nominal, row.finished if row.finished is not None else 0))


def history(folder: Path, name: str) -> dict[str, Any]:
    """``cronctl history NAME --json``: stable keys, times RFC 3339 UTC (see docs/quickstart.md)."""
    view = history_view(folder, name)
    return {
        "schedule": view.name,
        "expression": None if view.spec is None else view.spec.expression,
        "time_zone": None if view.spec is None else view.spec.options.tz.name,
        "runs": [{"run": r.run, "reason": r.reason, "nominal": rfc3339(r.nominal), "actual": r.actual,
                  "attempts": r.attempts, "exit_code": r.exit.code, "signal": r.exit.signal,
                  "outcome": r.outcome, "note": r.note, "finished": rfc3339(r.finished)} for r in view.rows],
    }


HISTORY_COLUMNS = ("RUN", "REASON", "NOMINAL", "ACTUAL", "ATTEMPTS", "EXIT", "OUTCOME")


def history_lines(folder: Path, name: str) -> list[str]:
    """A header, then one row per run, oldest first (the book keeps the last 200)."""
    view = history_view(folder, name)
    zone = UTC if view.spec is None else view.spec.options.tz
    title = name if view.spec is None else f"{name}: {'; '.join(expressions(view.spec))} ({zone.name})"
    if not view.rows:
        return [f"{title}: no runs yet"]
    plural = "run" if len(view.rows) == 1 else "runs"
    table = [list(HISTORY_COLUMNS)] + [
        [r.run or "-", r.reason, both_times(r.nominal, zone), actual_time(r.actual, zone), str(r.attempts),
         str(r.exit), r.outcome if r.note is None else f"{r.outcome} ({r.note})"] for r in view.rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(HISTORY_COLUMNS) - 1)]
    lines = [f"{title}, the last {len(view.rows)} {plural}, oldest first"]
    lines += ["  ".join([*(cell.ljust(width) for cell, width in zip(row, widths)), row[-1]]) for row in table]
    return lines


# -- next ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NextTimes:
    spec: JobSpec
    times: list[int]
    suspension: Suspension | None = None  # suspended: the times are those it fires at if resumed by then

    def header(self) -> str | None:
        """The schedule's expressions, exclusions and daylight-saving rule, for one whose times are
        more than one expression's under the default rule (None for that one)."""
        spec = self.spec
        if not spec.options.more_schedules and rules_of(spec) is None:
            return None
        return describe_schedule(spec)

    def notice(self) -> str | None:
        """What to say before the times of a suspended schedule; None for one that fires."""
        if self.suspension is None:
            return None
        return (f"{self.spec.name} is {suspended_line(self.suspension, self.spec.options.tz)}; "
                "it fires at these times only if resumed by then")


def next_times(folder: Path, name: str, count: int = 5, now: int | None = None) -> NextTimes:
    """The next fire times of a schedule after ``now`` (and after the runner's last step): from the
    book, or, for a schedule the book does not have yet (the runner never ran, a new manifest),
    from its manifest, anchored at ``now`` as the runner's first sight of it would be. A
    suspended schedule's are the times it would fire at once resumed, with its suspension."""
    data = book_data(folder)
    book = None if data is None else decode(folder, data)
    job = None if book is None else book.state.jobs.get(name)
    if book is not None and job is not None:
        spec = job.spec
        start = max(book.state.clock or spec.created_at, now if now is not None else 0)
        refuse_invalid(folder, name, start)  # the book's schedule, its manifest since made invalid: no times
        suspension = book_suspension(book, pause_records(folder), name)
    else:
        start = wall_minute() if now is None else now
        refuse_invalid(folder, name, start)
        manifests, spec = defined(folder, name, start)
        suspension = manifest_suspension(manifests, pause_records(folder), name)
    return NextTimes(spec, timeline_of(spec).upcoming(start, count), suspension)


def next_lines(folder: Path, name: str, count: int = 5, now: int | None = None) -> list[str]:
    """The times, one a line, after a line saying so when the schedule is suspended."""
    found = next_times(folder, name, count, now)
    header, notice = found.header(), found.notice()
    return ([] if header is None else [header]) + ([] if notice is None else [f"{notice}:"]) + [
        both_times(t, found.spec.options.tz) for t in found.times]


