"""Faults are reported, never fatal: a broken trigger file is moved aside, a mistyped item of the
book is left out, a save the file system refuses is said once and tried again at every step with
nothing lost, and a restart works whatever the book and the folder hold.

A full disk and a read-only folder are the book's atomic write raising (tests run as root, whom
chmod does not stop); a folder where the book's file should be and a file where the runs' folder
should be are real. The clock is injected; the runs are real processes.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from cronctl.runner import book as book_module
from cronctl.runner.engine import Runner
from cronctl.runner.journal import remember

from .support import Clock, journal, manifest, t, until

HOLD = ["sh", "-c", "while [ ! -e release ]; do sleep 0.02; done"]  # runs until the file release exists


def a_runner(folder: Path, clock: Clock, said: list[str] | None = None, workers: int = 2) -> Runner:
    r = Runner(folder, clock, workers, say=(said.append if said is not None else lambda text: None),
               grace_seconds=0.3)
    assert r.open()
    return r


def read_book(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "cronctl.json").read_text())


@pytest.mark.parametrize("name, content, why", [
    ("a.json", b"{not json", "not a trigger (Expecting property name enclosed in double quotes"),
    ("b.json", b"\xff\xfe", "not a trigger ('utf-8' codec can't decode"),
    ("c.json", b'["tick"]', 'not a trigger (it should be {"schedule": "NAME"})'),
    ("d.json", b'{"schedule": 3}', 'not a trigger (it should be {"schedule": "NAME"})'),
    ("e.json", b'{"schedule": "nope"}', "no schedule named 'nope'"),
])
def test_a_garbage_trigger_file_is_moved_aside_with_one_line_and_the_runner_goes_on(
        folder: Path, clock: Clock, name: str, content: bytes, why: str) -> None:
    (folder / "tick.yaml").write_text(manifest("tick", "*/5 * * * *", ["true"]))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    (folder / "triggers").mkdir()
    (folder / "triggers" / name).write_bytes(content)
    for _ in range(3):
        r.step()
    path = folder / "triggers" / name
    [line] = [line for line in said if str(path) in line]
    assert line.startswith(f"{path}: {why}") and line.endswith(f"; moved aside as {name}.broken")
    assert (folder / "triggers" / f"{name}.broken").read_bytes() == content and not path.exists()
    clock.set("2024-03-01T00:05")
    assert [e["outcome"] for e in until(r, lambda: journal(folder, "tick"))] == ["succeeded"]


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(book: dict[str, Any]) -> None:
        node = book
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    return change


@pytest.mark.parametrize("change, named", [
    (_set(["controller", "jobs", 0, "state", "launched"], "x"), "controller.jobs[0].state.launched"),
    (_set(["controller", "jobs", 0, "expression"], "not cron"), "controller.jobs[0] (tick)"),
    (_set(["controller", "jobs", 0, "options", "tz"], "Mars/Olympus"), "controller.jobs[0] (tick)"),
    (_set(["controller", "runs", 0, "number"], "1"), "controller.runs[0].number"),
    (_set(["controller", "runs", 0, "scheduled_for"], "yesterday"), "controller.runs[0] (tick-1)"),
    (_set(["firings", 0, "nominal"], "soon"), "firings[0].nominal"),
    (_set(["firings", 0, "slot"], 7), "firings[0].slot"),
    (_set(["journal"], ["x"]), "journal: not a mapping"),
    (_set(["journal", "tick", 0, "nominal"], 1.5), "journal.tick[0].nominal"),
    (_set(["snapshots"], {"tick@1": 3}), "snapshots.tick@1"),
    (_set(["overflows"], {"tick": "many"}), "overflows.tick"),
    (_set(["manifests"], 5), "manifests: not a mapping"),
    (_set(["manifests", "retired"], [{"schedule": 1, "at": 2}]), "manifests.retired[0].schedule"),
    (_set(["controller", "clock"], "yesterday"), "moved aside as cronctl.json.broken-"),
    (_set(["controller"], []), "moved aside as cronctl.json.broken-"),
    (lambda book: book.pop("controller"), "not a book a runner wrote; moved aside as cronctl.json.broken-"),
])
def test_a_mistyped_item_of_the_book_is_left_out_with_one_line_and_the_runner_goes_on(
        folder: Path, clock: Clock, change: Callable[[dict[str, Any]], None], named: str) -> None:
    (folder / "tick.yaml").write_text(manifest("tick", "*/5 * * * *", HOLD))
    r = a_runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: r.firings and all(f.slot for f in r.firings.values()))
    remember(r.memory, "tick", {"run": None, "reason": "scheduled", "nominal": 1, "actual": None, "attempts": 0,
                               "outcome": "skipped", "finished": 1})
    r.save()
    r.lock.release()
    data = read_book(folder)
    change(data)
    (folder / "cronctl.json").write_text(json.dumps(data))
    said: list[str] = []
    again = a_runner(folder, clock, said)
    assert [line for line in said if named in line], said
    again.step()  # a schedule left out of the book is read again from its manifest, as new, at 00:05
    (folder / "release").touch()
    clock.set("2024-03-01T00:10")
    until(again, lambda: any(e["nominal"] == t("2024-03-01T00:10") for e in journal(folder, "tick")))
    assert read_book(folder)["version"] == 1


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_save_the_file_system_refuses_is_said_once_and_retried_and_nothing_recorded_is_lost(
        folder: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    for name in ("one", "two"):
        (folder / f"{name}.yaml").write_text(manifest(name, "*/5 * * * *", ["true"]))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    write = book_module.atomic_write_bytes

    def refuse(path: Any, data: bytes) -> None:
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(book_module, "atomic_write_bytes", refuse)
    clock.set("2024-03-01T00:05")
    until(r, lambda: {"one", "two"} <= set(r.journal))  # both schedules are served meanwhile
    (folder / "triggers").mkdir()
    trigger = folder / "triggers" / "one.1.json"
    trigger.write_text('{"schedule": "one"}')
    until(r, lambda: len(r.journal["one"]) == 2)
    for _ in range(5):
        r.step()
    faults = [line for line in said if line.startswith("cannot save the book")]
    assert faults == [f"cannot save the book {folder / 'cronctl.json'}: {os.strerror(code)}; the runner goes on "
                      "with what it has in memory and tries again every step"]
    assert trigger.exists()  # not deleted before the book that records it is saved
    assert not list((folder / "runs").glob("*/*/acknowledged"))  # nor any end acknowledged
    monkeypatch.setattr(book_module, "atomic_write_bytes", write)
    r.step()
    assert said[-1] == f"the book {folder / 'cronctl.json'} is saved again; nothing was lost"
    book = read_book(folder)
    assert [(e["reason"], e["outcome"]) for e in book["journal"]["one"]] == [("scheduled", "succeeded"),
                                                                              ("manual", "succeeded")]
    assert [e["outcome"] for e in book["journal"]["two"]] == ["succeeded"]
    assert not trigger.exists() and len(list((folder / "runs").glob("*/*/acknowledged"))) == 2


def test_a_folder_where_the_book_should_be_is_a_fault_while_running_and_moved_aside_at_a_restart(
        folder: Path, clock: Clock) -> None:
    (folder / "tick.yaml").write_text(manifest("tick", "*/5 * * * *", ["true"]))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    (folder / "cronctl.json").unlink()
    (folder / "cronctl.json").mkdir()
    clock.set("2024-03-01T00:05")
    until(r, lambda: r.journal.get("tick"))
    assert any(line.startswith("cannot save the book") and "directory" in line for line in said)
    r.lock.release()
    said.clear()
    again = a_runner(folder, clock, said)  # a restart: the folder is moved aside, the runner starts empty
    assert any("(a folder, not a file); moved aside as cronctl.json.broken-" in line for line in said), said
    again.step()
    assert read_book(folder)["version"] == 1


def test_a_file_where_the_runs_folder_should_be_keeps_firings_waiting_until_it_is_gone(
        folder: Path, clock: Clock) -> None:
    (folder / "tick.yaml").write_text(manifest("tick", "*/5 * * * *", ["true"]))
    (folder / "runs").write_text("not a folder")
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    clock.set("2024-03-01T00:05")
    for _ in range(3):
        r.step()
    assert [line for line in said if line.startswith("tick: cannot start tick-1")] == [
        "tick: cannot start tick-1: Not a directory; trying again at the next step"]
    assert r.slots.free_count == 2 and [f.slot for f in r.firings.values()] == [None]
    (folder / "runs").unlink()
    assert [e["outcome"] for e in until(r, lambda: journal(folder, "tick"))] == ["succeeded"]


@pytest.mark.parametrize("before, after", [(4, 1), (2, 12)])
def test_a_restart_with_another_number_of_workers_adopts_the_runs_that_go_on(
        folder: Path, clock: Clock, before: int, after: int) -> None:
    """A slot of the old pool (worker-3 of 4, or worker-1 when the new names are worker-01..)
    stays busy until its run ends."""
    for name in ("a", "b", "c"):
        (folder / f"{name}.yaml").write_text(manifest(name, "*/5 * * * *", HOLD))
    r = a_runner(folder, clock, workers=before)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: len([f for f in r.firings.values() if f.slot]) == min(3, before))
    r.lock.release()
    again = a_runner(folder, clock, workers=after)
    (folder / "release").touch()
    until(again, lambda: all(len(journal(folder, name)) == 1 for name in "abc"))
    assert again.slots.free_count == after and not again.firings


def test_the_temporary_files_of_a_crashed_save_are_removed_when_the_runner_takes_the_lock(
        folder: Path, clock: Clock) -> None:
    stale = folder / ".cronctl.json.tmp-x1y2"
    stale.write_text('{"version": 1, "half')
    a_runner(folder, clock)
    assert not stale.exists()


def test_a_book_that_cannot_be_moved_aside_stays_and_the_runner_starts_empty(
        folder: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    (folder / "cronctl.json").write_text("{half")

    def refuse(*args: Any) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(book_module.os, "link", refuse)
    monkeypatch.setattr(book_module.os, "rename", refuse)
    said: list[str] = []
    r = a_runner(folder, clock, said)
    assert any("it cannot be moved aside (Read-only file system), so it stays" in line for line in said)
    monkeypatch.undo()
    (folder / "tick.yaml").write_text(manifest("tick", "*/5 * * * *", ["true"]))
    r.step()
    assert read_book(folder)["version"] == 1
    shutil.rmtree(folder / "runs", ignore_errors=True)


def test_a_book_that_cannot_be_read_fires_nothing_touches_nothing_and_is_read_again_at_each_step(
        folder: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    (folder / "tick.yaml").write_text(manifest("tick", "*/5 * * * *", ["true"]))
    r = a_runner(folder, clock)
    r.step()
    r.lock.release()
    before = (folder / "cronctl.json").read_bytes()
    read_bytes = Path.read_bytes

    def denied(path: Path) -> bytes:
        if path.name == "cronctl.json":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", denied)
    said: list[str] = []
    again = a_runner(folder, clock, said)
    clock.set("2024-03-01T00:05")
    for _ in range(3):
        again.step()
    assert [line for line in said if "cannot be read" in line] == [
        f"{folder / 'cronctl.json'}: the book cannot be read (Permission denied); nothing fires and the file "
        "is left untouched; trying again every step"]
    monkeypatch.undo()
    assert (folder / "cronctl.json").read_bytes() == before and not (folder / "runs").exists()
    assert [e["nominal"] for e in until(again, lambda: journal(folder, "tick"))] == [t("2024-03-01T00:05")]


def test_a_step_that_fails_where_nothing_handles_it_is_one_line_and_the_loop_goes_on(
        folder: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    r = a_runner(folder, clock, said)

    def broken(now: int, holding: object = (), triggers: object = None, ends: object = ()) -> list[Any]:
        raise RuntimeError("something unforeseen")

    monkeypatch.setattr(r.controller, "step", broken)
    for _ in range(3):
        r.turn()
    assert [line for line in said if "step failed" in line] == [
        "a step failed (RuntimeError: something unforeseen); the runner goes on"]
