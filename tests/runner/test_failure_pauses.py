"""pauseOnFailures on the runner: N failed runs in a row leave a pause record, as cronctl suspend does,
and cronctl resume ends it; the failure times and the streak show in cronctl status --json."""

from __future__ import annotations

import json
from pathlib import Path

from cronctl.runner.asking import resume
from cronctl.runner.views import status, status_lines

from .support import Clock, journal, manifest, runner, t, until

FAILS = ["sh", "-c", "exit 3"]


def test_two_failed_runs_in_a_row_pause_the_schedule_and_resume_ends_it(folder: Path, clock: Clock) -> None:
    (folder / "flaky.yaml").write_text(manifest("flaky", "*/5 * * * *", FAILS, pauseOnFailures=2))
    r = runner(folder, clock)
    r.step()
    for minute in ("00:05", "00:10"):
        clock.set(f"2024-03-01T{minute}")
        until(r, lambda m=minute: any(e["nominal"] == t(f"2024-03-01T{m}") for e in journal(folder, "flaky")))
        r.step()
    record = json.loads((folder / "paused" / "flaky.json").read_text())
    assert record["reason"] == "paused after 2 failed runs in a row (pauseOnFailures: 2); resume it to fire again"
    shown = status(folder, t("2024-03-01T00:11"))["schedules"][0]
    assert shown["suspended"]["reason"] == record["reason"]
    assert shown["consecutive_failures"] == 2 and shown["last_failure"] is not None
    clock.set("2024-03-01T00:15")
    r.step()
    r.step()
    assert [e["nominal"] for e in journal(folder, "flaky")] == [t("2024-03-01T00:05"), t("2024-03-01T00:10")]
    assert not r.firings  # nothing fired at 00:15

    resume(folder, "flaky")
    clock.set("2024-03-01T00:20")
    until(r, lambda: any(e["nominal"] == t("2024-03-01T00:20") for e in journal(folder, "flaky")))
    r.step()
    assert not (folder / "paused" / "flaky.json").exists()  # one more failure: 3 in a row, not 4


def test_status_shows_the_newest_success_and_failure(folder: Path, clock: Clock) -> None:
    (folder / "ok.yaml").write_text(manifest("ok", "*/5 * * * *", ["true"]))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: journal(folder, "ok"))
    r.step()
    shown = status(folder, t("2024-03-01T00:06"))["schedules"][0]
    assert (shown["last_success"], shown["last_failure"], shown["consecutive_failures"]) == (
        "2024-03-01T00:05:00Z", None, 0)
    assert "  last success: 2024-03-01 00:05 UTC" in status_lines(folder, t("2024-03-01T00:06"))
