"""Retries in the single-node runner: maxRetries and retryDelayMinutes, one process per attempt.

Commands are real short shell commands that read ``CRONCTL_ATTEMPT`` and
append it to the file ``attempts`` in the base folder (their working folder),
so a test sees exactly which attempts ran, and how often.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cronctl.runner.views import history, status_lines

from .support import SOURCE_ROOT, Clock, journal, manifest, runner, t, until


def succeeds_from(attempt: int, then: str = "") -> list[str]:
    """A command whose attempts before ``attempt`` fail at once; ``then`` runs before the check."""
    return ["sh", "-c", f'echo "$CRONCTL_ATTEMPT" >> attempts; {then} test "$CRONCTL_ATTEMPT" -ge {attempt}']


def attempts_run(folder: Path) -> list[str]:
    path = folder / "attempts"
    return path.read_text().split() if path.exists() else []


def run_folders(folder: Path, name: str) -> list[str]:
    return sorted(path.name for path in (folder / "runs" / name).iterdir())


def retry_pending(r) -> bool:
    return any(f.retry_due is not None for f in r.firings.values())


def test_failed_attempts_are_retried_until_one_succeeds_and_history_records_the_run_once(
        folder: Path, clock: Clock) -> None:
    (folder / "flaky.yaml").write_text(manifest("flaky", "*/5 * * * *", succeeds_from(3), maxRetries=2))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    entries = until(r, lambda: journal(folder, "flaky"))
    assert [(e["run"], e["nominal"], e["attempts"], e["outcome"]) for e in entries] == [
        ("flaky-1", t("2024-03-01T00:05"), 3, "succeeded")]
    assert entries[0]["actual"] is not None
    assert attempts_run(folder) == ["1", "2", "3"]
    assert run_folders(folder, "flaky") == ["20240301T0005", "20240301T0005.2", "20240301T0005.3"]
    assert not r.firings
    assert [(run["attempts"], run["exit_code"], run["outcome"]) for run in history(folder, "flaky")["runs"]] == [
        (3, 0, "succeeded")]  # the exit code of its last attempt


def test_a_run_whose_every_attempt_fails_is_recorded_failed_with_all_its_attempts(
        folder: Path, clock: Clock) -> None:
    (folder / "broken.yaml").write_text(manifest("broken", "*/5 * * * *", succeeds_from(99), maxRetries=3))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    entries = until(r, lambda: journal(folder, "broken"))
    for _ in range(5):
        r.step()
    assert [(e["attempts"], e["outcome"]) for e in journal(folder, "broken")] == [(4, "failed")]
    assert attempts_run(folder) == ["1", "2", "3", "4"]
    assert entries and not r.firings


def test_a_retry_waits_retry_delay_minutes_and_holds_no_slot_meanwhile(folder: Path, clock: Clock) -> None:
    (folder / "later.yaml").write_text(manifest("later", "5 * * * *", succeeds_from(2), maxRetries=1,
                                                retryDelayMinutes=5))
    r = runner(folder, clock, workers=1)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: retry_pending(r))
    [firing] = r.firings.values()
    assert (firing.attempt, firing.retry_due, firing.slot) == (1, t("2024-03-01T00:10"), None)
    assert r.slots.free_count == 1 and r.waiting_reason() is None
    clock.set("2024-03-01T00:09")
    for _ in range(5):
        r.step()
    assert attempts_run(folder) == ["1"] and retry_pending(r)
    clock.set("2024-03-01T00:10")
    entries = until(r, lambda: journal(folder, "later"))
    assert [(e["attempts"], e["outcome"]) for e in entries] == [(2, "succeeded")]
    assert attempts_run(folder) == ["1", "2"]


def test_a_run_stopped_by_its_timeout_is_not_retried(folder: Path, clock: Clock) -> None:
    (folder / "slow.yaml").write_text(manifest("slow", "*/5 * * * *", ["sh", "-c", "trap '' TERM; sleep 60"],
                                               timeoutMinutes=1, maxRetries=2))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: list((folder / "runs" / "slow").glob("*/pid")))
    clock.set("2024-03-01T00:06")
    entries = until(r, lambda: journal(folder, "slow"), timeout=20)
    for _ in range(5):
        r.step()
    assert [(e["attempts"], e["outcome"]) for e in journal(folder, "slow")] == [(1, "timed_out")]
    assert entries and run_folders(folder, "slow") == ["20240301T0005"] and not r.firings


def test_the_timeout_counts_from_the_first_launch_and_stops_a_later_attempt(folder: Path, clock: Clock) -> None:
    hangs_after_a_failure = succeeds_from(2, 'test "$CRONCTL_ATTEMPT" = 1 || sleep 60;')
    (folder / "drags.yaml").write_text(manifest("drags", "*/5 * * * *", hangs_after_a_failure, timeoutMinutes=1,
                                                maxRetries=2))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: list((folder / "runs" / "drags").glob("*.2/pid")))
    clock.set("2024-03-01T00:06")  # the run's first launch + 1 minute, whatever its attempt
    entries = until(r, lambda: journal(folder, "drags"), timeout=20)
    assert [(e["attempts"], e["outcome"]) for e in entries] == [(2, "timed_out")]
    assert run_folders(folder, "drags") == ["20240301T0005", "20240301T0005.2"]


def test_a_run_that_times_out_while_waiting_for_its_retry_is_not_retried(folder: Path, clock: Clock) -> None:
    (folder / "late.yaml").write_text(manifest("late", "5 * * * *", succeeds_from(2), timeoutMinutes=2,
                                               maxRetries=2, retryDelayMinutes=5))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: retry_pending(r))
    clock.set("2024-03-01T00:07")
    r.step()
    assert [(e["attempts"], e["outcome"]) for e in journal(folder, "late")] == [(1, "timed_out")]
    assert not r.firings
    clock.set("2024-03-01T00:10")
    for _ in range(5):
        r.step()
    assert attempts_run(folder) == ["1"] and run_folders(folder, "late") == ["20240301T0005"]


def test_a_replace_while_a_retry_waits_records_the_run_as_canceled(folder: Path, clock: Clock) -> None:
    (folder / "swap.yaml").write_text(manifest("swap", "*/5 * * * *", succeeds_from(2), maxRetries=1,
                                               retryDelayMinutes=30, concurrencyPolicy="Replace"))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: retry_pending(r))
    clock.set("2024-03-01T00:10")
    r.step()
    assert [(e["run"], e["attempts"], e["outcome"]) for e in journal(folder, "swap")] == [("swap-1", 1, "canceled")]
    assert list(r.firings) == ["swap-2"]


def test_status_shows_the_attempt_of_a_retry_pending_and_of_a_running_firing(folder: Path, clock: Clock) -> None:
    (folder / "shown.yaml").write_text(manifest("shown", "*/5 * * * *", succeeds_from(3, "sleep 1;"),
                                                maxRetries=2, retryDelayMinutes=1))
    r = runner(folder, clock, workers=1)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: retry_pending(r))
    assert "  shown-1: attempt 1/3 failed, retry 2/3 at 2024-03-01 00:06 UTC" in status_lines(folder)
    clock.set("2024-03-01T00:06")
    until(r, lambda: any(f.slot for f in r.firings.values()))
    assert "  running: shown-1 on worker-1 (attempt 2/3)" in status_lines(folder)


def test_a_retry_without_its_firing_in_the_book_is_rebuilt_from_the_manifest(folder: Path, clock: Clock) -> None:
    """A book an older runner wrote: it dropped the firing of a failed attempt the core retries."""
    (folder / "old.yaml").write_text(manifest("old", "5 * * * *", succeeds_from(2), maxRetries=1,
                                              retryDelayMinutes=1))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: retry_pending(r))
    r.firings.clear()
    r.save()
    r.lock.release()
    clock.set("2024-03-01T00:06")
    again = runner(folder, clock)
    entries = until(again, lambda: journal(folder, "old"))
    assert [(e["run"], e["attempts"], e["outcome"]) for e in entries] == [("old-1", 2, "succeeded")]
    assert attempts_run(folder) == ["1", "2"]


CRASHING_RUNNER = """
import os, sys, time
from pathlib import Path
sys.path.insert(0, {operator!r})
from cronctl.runner.engine import Runner

r = Runner(Path({folder!r}), lambda: {minute}, 1, say=lambda text: None)
assert r.open()
point = {point!r}
seen = []

def crash(*args, **kwargs):
    os._exit(9)  # like kill -9: no cleanup

def retry_pending():
    return any(f.retry_due is not None for f in r.firings.values())

def at_second_start(name):
    seen.append(name)
    if seen.count(point) == 2:  # the checkpoint of attempt 2's start
        crash()

if point == "before_save":  # the failed attempt is recorded in memory only
    save = r.save
    r.save = lambda: crash() if retry_pending() else save()
elif point == "before_acknowledge":  # the book with the failed attempt is saved
    r.executor.acknowledge = crash
else:
    r.executor._checkpoint = at_second_start
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    r.step()
    if point == "before_retry" and retry_pending():  # saved and acknowledged, not yet retried
        crash()
    time.sleep(0.05)
sys.exit(1)
"""


def crash_runner(folder: Path, minute: str, point: str) -> None:
    script = CRASHING_RUNNER.format(operator=str(SOURCE_ROOT), folder=str(folder), minute=t(minute), point=point)
    assert subprocess.run([sys.executable, "-c", script]).returncode == 9


def prepared(folder: Path, clock: Clock, **spec) -> None:
    """A schedule whose first attempt fails and second succeeds, its book saved, the lock free."""
    (folder / "once.yaml").write_text(manifest("once", "*/5 * * * *", succeeds_from(2), maxRetries=2, **spec))
    r = runner(folder, clock)
    r.step()
    r.save()
    r.lock.release()


@pytest.mark.parametrize("point", ["before_save", "before_acknowledge", "before_retry"])
def test_a_runner_killed_between_a_failed_attempt_and_its_retry_runs_each_attempt_once(
        folder: Path, clock: Clock, point: str) -> None:
    prepared(folder, clock, retryDelayMinutes=1)
    crash_runner(folder, "2024-03-01T00:05", point)
    clock.set("2024-03-01T00:05")
    again = runner(folder, clock)
    until(again, lambda: retry_pending(again))
    for _ in range(5):
        again.step()
    assert attempts_run(folder) == ["1"]  # not before its delay, and attempt 1 not repeated
    clock.set("2024-03-01T00:06")
    entries = until(again, lambda: journal(folder, "once"))
    for _ in range(5):
        again.step()
    assert [(e["attempts"], e["outcome"]) for e in journal(folder, "once")] == [(2, "succeeded")]
    assert entries and attempts_run(folder) == ["1", "2"]
    assert run_folders(folder, "once") == ["20240301T0005", "20240301T0005.2"]


@pytest.mark.parametrize("point", ["after_mkdir", "after_request", "after_spawn"])
def test_a_runner_killed_at_any_point_of_a_retrys_start_runs_that_attempt_once(
        folder: Path, clock: Clock, point: str) -> None:
    prepared(folder, clock)
    crash_runner(folder, "2024-03-01T00:05", point)
    clock.set("2024-03-01T00:05")
    again = runner(folder, clock)
    entries = until(again, lambda: journal(folder, "once"))
    for _ in range(5):
        again.step()
    assert [(e["attempts"], e["outcome"]) for e in journal(folder, "once")] == [(2, "succeeded")]
    assert entries and attempts_run(folder) == ["1", "2"]
    assert run_folders(folder, "once") == ["20240301T0005", "20240301T0005.2"]
