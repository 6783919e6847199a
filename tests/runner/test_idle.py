"""An idle runner sleeps until something happens (issue 45): a new minute, a change in its folders,
a run of its own that ends; it neither wakes 100 times a second nor scans its manifests every second."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from cronctl.runner.engine import Runner, run_forever

from .support import Clock, journal, manifest, t


def counting(r: Runner) -> list[float]:
    """The monotonic time of each turn the runner takes from here on."""
    turns: list[float] = []
    turn = r.turn

    def counted() -> None:
        turns.append(time.monotonic())
        turn()

    r.turn = counted  # type: ignore[method-assign]
    return turns


def in_background(r: Runner, poll: float) -> tuple[threading.Thread, threading.Event]:
    stop = threading.Event()
    thread = threading.Thread(target=run_forever, args=(r,), daemon=True,
                              kwargs={"poll_seconds": poll, "should_stop": stop.is_set})
    thread.start()
    return thread, stop


def settle(turns: list[float], quiet_for: float = 0.5, timeout: float = 10.0) -> None:
    """Until no turn came for ``quiet_for`` seconds (the first turn and its book's save are over)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if turns and time.monotonic() - turns[-1] >= quiet_for:
            return
    raise AssertionError(f"still turning: {len(turns)} turns")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "schedules"
    folder.mkdir()
    for n in range(50):
        (folder / f"s{n}.yaml").write_text(manifest(f"s{n}", "0 0 1 1 *", ["true"]))
    return folder


def test_a_quiet_runner_takes_no_turn_while_its_minute_and_folders_stay_as_they_were(folder: Path) -> None:
    clock = Clock("2024-03-01T00:00")
    r = Runner(folder, clock, 2, say=lambda text: None)
    turns = counting(r)
    thread, stop = in_background(r, 0.02)
    try:
        settle(turns)
        before = len(turns)
        time.sleep(1.0)  # 50 polls
        assert len(turns) == before  # it turned every poll, scanning every manifest
        clock.set("2024-03-01T00:01")  # a new minute: a turn
        deadline = time.monotonic() + 5
        while len(turns) == before:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        stop.set()
        thread.join(timeout=10)


def test_a_manifest_written_while_it_rests_wakes_it_at_once(folder: Path) -> None:
    clock = Clock("2024-03-01T00:00")
    r = Runner(folder, clock, 2, say=lambda text: None)
    turns = counting(r)
    thread, stop = in_background(r, 30.0)  # a long poll: only the folder's change can wake it
    try:
        settle(turns)
        (folder / "new.yaml").write_text(manifest("new", "5 0 * * *", ["true"]))
        written = time.monotonic()
        deadline = written + 5
        while "new" not in r.controller.state.jobs:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert time.monotonic() - written < 1.0
    finally:
        stop.set()
        (folder / "wake.txt").write_text("")  # wakes the rest, so the loop sees the stop
        thread.join(timeout=10)


def test_a_run_that_ends_frees_its_worker_at_once_with_no_poll(tmp_path: Path) -> None:
    """Two runs due on one worker: the second starts as the first ends, woken by the first's
    wrapper exiting (its pidfd), not at the next poll (30 s here)."""
    folder = tmp_path / "schedules"
    folder.mkdir()
    for name in ("a", "b"):
        (folder / f"{name}.yaml").write_text(manifest(name, "5 0 * * *", ["sleep", "0.3"]))
    clock = Clock("2024-03-01T00:04")
    r = Runner(folder, clock, 1, say=lambda text: None)
    thread, stop = in_background(r, 30.0)
    try:
        time.sleep(0.5)
        clock.set("2024-03-01T00:05")
        (folder / "wake.txt").write_text("")  # the new minute is seen at the next wake: make it now
        deadline = time.monotonic() + 10
        while not ((folder / "cronctl.json").exists() and journal(folder, "b")):
            assert time.monotonic() < deadline, "b did not end within 10 s: its start waited for a poll"
            time.sleep(0.05)
    finally:
        stop.set()
        (folder / "wake2.txt").write_text("")
        thread.join(timeout=10)
    [a], [b] = journal(folder, "a"), journal(folder, "b")
    assert (a["outcome"], b["outcome"], b["nominal"]) == ("succeeded", "succeeded", t("2024-03-01T00:05"))


def test_manifests_read_within_the_file_systems_clock_tick_are_read_again_at_the_next_turn(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two writes within one tick of the file system's clock can leave a file the same stamps, and the
    kernel's watch already reported the first: a file read that recently (racy) is read again at the
    next turn, which the quiet loop takes for it, not at the next full turn a minute later (d2d88a3).
    The tick is injected: first every file is racy (a clock that ticks once an hour), then none."""
    from cronctl.runner import folder as manifest_folder

    loads: list[Path] = []
    load_file = manifest_folder.load_file
    monkeypatch.setattr(manifest_folder, "load_file", lambda path: loads.append(path) or load_file(path))
    monkeypatch.setattr(manifest_folder, "RACY_SECONDS", 3600.0)
    r = Runner(folder, Clock("2024-03-01T00:00"), 2, say=lambda text: None)
    assert r.open()
    r.watch_folders()
    try:
        r.turn()
        assert len(loads) == 50 and not r.quiet()  # read within the tick: the next turn reads them again
        r.turn()
        assert len(loads) == 100 and not r.quiet()
        monkeypatch.setattr(manifest_folder, "RACY_SECONDS", 0.0)
        r.turn()  # read again, now past the tick
        assert len(loads) == 150 and r.quiet()  # nothing changed, nothing racy: no turn
    finally:
        r.stop_watching()
        r.flush()
