"""A Forbid time due while a run is active waits for it: said so, no history row, not counted skipped.

The core's Skip under Forbid leaves the time missed (seed 000: "last_schedule stays where it was, so
that time is still missed at the next tick"), so it starts when the active run ends. The runner said
"skipped", wrote a skipped row and counted it in status and metrics, then started that very time
(issue 45). A time is skipped only once it can no longer start: a newer time took its place, or the
active run ended and the time could not start (its startingDeadlineSeconds passed, the schedule held).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cronctl.runner.book import Book
from cronctl.runner.firing import read_book
from cronctl.runner.folder_view import folder_view

from .test_step import START, Folder, said

WAITS = "report: 2024-03-01 00:10 UTC waits for the active run report-1 (Forbid: it starts when that run ends, " \
        "unless a newer time is due by then)"


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    return Folder(tmp_path)


def status_skipped(folder: Folder) -> int:
    Book(folder.path).save(folder.state.book())
    [view] = folder_view(folder.path).schedules
    return view.skipped


def test_a_time_due_while_the_run_is_active_waits_and_starts_when_it_ends_with_no_skipped_row(
        folder: Folder) -> None:
    folder.write("report", concurrencyPolicy="Forbid")
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    due = folder.step(START + 10)
    assert said(due, "waiting") == [WAITS] and said(due, "skipped") == []
    assert folder.rows("report") == [] and folder.started(due) == []
    assert said(folder.step(START + 11), "waiting") == []  # said once
    ended = folder.step(START + 12, ends=[folder.ended(first)])
    [second] = folder.started(ended)
    assert (second.run_id, second.request.nominal) == ("report-2", START + 10)
    assert said(ended, "skipped") == [] and folder.rows("report") == [(START + 5, "succeeded")]
    assert status_skipped(folder) == 0


def test_a_newer_time_due_while_the_run_is_still_active_skips_the_waiting_one_and_waits_in_its_place(
        folder: Folder) -> None:
    folder.write("report", concurrencyPolicy="Forbid")
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    folder.step(START + 10)
    newer = folder.step(START + 15)
    assert said(newer, "skipped") == ["report: skipped 2024-03-01 00:10 UTC (Forbid: 2024-03-01 00:15 UTC is due "
                                      "while report-1 is active, and waits for it in its place)"]
    assert folder.rows("report") == [(START + 10, "skipped")]
    [second] = folder.started(folder.step(START + 17, ends=[folder.ended(first)]))
    assert second.request.nominal == START + 15
    assert folder.rows("report") == [(START + 10, "skipped"), (START + 5, "succeeded")]
    assert status_skipped(folder) == 1


def test_a_time_due_as_the_run_ends_starts_and_the_waiting_one_is_skipped(folder: Folder) -> None:
    folder.write("report", concurrencyPolicy="Forbid")
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    folder.step(START + 10)
    ended = folder.step(START + 15, ends=[folder.ended(first)])
    assert [start.request.nominal for start in folder.started(ended)] == [START + 15]
    assert said(ended, "skipped") == ["report: skipped 2024-03-01 00:10 UTC (Forbid: when report-1 ended, "
                                      "2024-03-01 00:15 UTC was due and starts in its place)"]
    assert folder.rows("report") == [(START + 5, "succeeded"), (START + 10, "skipped")]
    assert status_skipped(folder) == 1


def test_a_waiting_time_past_its_starting_deadline_when_the_run_ends_is_skipped_then(folder: Folder) -> None:
    folder.write("report", concurrencyPolicy="Forbid", startingDeadlineSeconds=120)
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    assert said(folder.step(START + 10), "waiting") == [WAITS]
    ended = folder.step(START + 13, ends=[folder.ended(first)])
    assert folder.started(ended) == []
    assert said(ended, "skipped") == ["report: skipped 2024-03-01 00:10 UTC (Forbid: report-1 ended past the "
                                      "time's startingDeadlineSeconds)"]
    assert folder.rows("report") == [(START + 5, "succeeded"), (START + 10, "skipped")]
    assert status_skipped(folder) == 1


def test_a_wait_outlives_a_restart_of_the_runner(tmp_path: Path) -> None:
    """The waiting time is in the book: a runner restarted on it starts the time, counting no skip."""
    folder = Folder(tmp_path)
    folder.write("report", concurrencyPolicy="Forbid")
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    folder.step(START + 10)
    again = Folder(tmp_path)
    contents, problems = read_book(json.loads(json.dumps(folder.state.book())))
    assert problems == []
    again.state.load(contents)
    again.state.slots.take("worker-1")  # as the engine's adoption does for the run going on
    ended = again.step(START + 12, ends=[again.ended(first)])
    assert [start.request.nominal for start in again.started(ended)] == [START + 10]
    assert said(ended, "skipped") == [] and status_skipped(again) == 0
