"""The runner's run folders follow the core's retention, as the operator's Jobs do."""

from __future__ import annotations

from pathlib import Path

from cronctl.runner.views import trigger

from .support import Clock, journal, manifest, runner, until


def folders(folder: Path, name: str) -> list[str]:
    return sorted(p.name for p in (folder / "runs" / name).iterdir()) if (folder / "runs" / name).is_dir() else []


def test_only_the_runs_retention_keeps_keep_their_folders(folder: Path, clock: Clock) -> None:
    (folder / "tidy.yaml").write_text(manifest("tidy", "*/5 * * * *", ["true"], successfulJobsHistoryLimit=1,
                                               failedJobsHistoryLimit=1))
    r = runner(folder, clock)
    r.step()
    for minute, done in (("00:05", 1), ("00:10", 2), ("00:15", 3)):
        clock.set(f"2024-03-01T{minute}")
        until(r, lambda: len(journal(folder, "tidy")) == done)
    r.step()
    assert len(journal(folder, "tidy")) == 3  # the history keeps every row
    assert folders(folder, "tidy") == ["20240301T0015"]


def test_a_manual_runs_folder_goes_when_retention_drops_its_run(folder: Path, clock: Clock) -> None:
    (folder / "adhoc.yaml").write_text(manifest("adhoc", "*/5 * * * *", ["true"], successfulJobsHistoryLimit=1))
    r = runner(folder, clock)
    r.step()
    trigger(folder, "adhoc")
    until(r, lambda: len(journal(folder, "adhoc")) == 1)
    assert len(list((folder / "manual").iterdir())) == 1
    clock.set("2024-03-01T00:05")
    until(r, lambda: len(journal(folder, "adhoc")) == 2)
    r.step()
    assert list((folder / "manual").iterdir()) == []
    assert folders(folder, "adhoc") == ["20240301T0005"]
