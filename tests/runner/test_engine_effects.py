"""The runner carries out the core's decisions, each once: a skipped schedule time is one
history row, an overflow one line on the runner's output and in ``cronctl status``, and a
firing's process is told the core's reason.

The clock is injected (minutes, and seconds within them); the runs are real processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cronctl.runner.engine import Runner
from cronctl.runner.views import history_lines, status_lines, trigger

from .support import Clock, helper_env, journal, manifest, t, until

HOLD = ["sh", "-c", "while [ ! -e release ]; do sleep 0.02; done"]  # runs until the file release exists
PRINT_ENV = ["sh", "-c", "env"]
JUST_AFTER_MIDNIGHT = "2024-03-01T00:01"
THREE_HOURS_LATER = "2024-03-01T03:01"


class SecondClock:
    """An injected wall clock in seconds since 1970; the runner's minute clock follows it."""

    def __init__(self, text: str) -> None:
        self.second = t(text) * 60

    def minute(self) -> int:
        return self.second // 60

    def seconds(self) -> float:
        return float(self.second)


def a_runner(folder: Path, minute, workers: int = 1, said: list[str] | None = None,
             seconds=None) -> Runner:
    r = Runner(folder, minute, workers, say=(said.append if said is not None else lambda text: None),
               grace_seconds=0.5, seconds=seconds)
    assert r.open()
    return r


def outcomes(folder: Path, name: str) -> list[tuple[int, str, str]]:
    return [(e["nominal"], e["reason"], e["outcome"]) for e in journal(folder, name)]


def book_state(folder: Path, name: str) -> dict:
    book = json.loads((folder / "cronctl.json").read_text())
    return next(job["state"] for job in book["controller"]["jobs"] if job["name"] == name)


def reason_seen(folder: Path, name: str, run_folder: str) -> str:
    """The CRONCTL_REASON a run's process printed with its environment (a manual run's folder
    is in the executor folder of its trigger, DIR/manual/<trigger id>/)."""
    [found] = [path for path in (folder / "runs" / name / run_folder,
                                 *folder.glob(f"manual/*/runs/{name}/{run_folder}")) if path.exists()]
    lines = (found / "stdout.log").read_text().splitlines()
    return next(line.partition("=")[2] for line in lines if line.startswith("CRONCTL_REASON="))


def cronctl_status(folder: Path) -> list[str]:
    result = subprocess.run([sys.executable, "-m", "cronctl", "status", "--dir", str(folder)],
                            capture_output=True, text=True, env=helper_env(), check=True)
    return result.stdout.splitlines()


# -- Forbid: one history row per skipped schedule time --------------------------------------------


def test_a_forbid_run_of_three_minutes_stepped_every_second_leaves_one_skipped_row_per_skipped_time(
        folder: Path) -> None:
    """00:02 waits for the 00:01 run, then 00:03 takes its place (00:02 skipped, one row); 00:03 waits
    and starts when the run ends, so it has no skipped row (issue 45: it had one, and ran)."""
    (folder / "overlap.yaml").write_text(manifest("overlap", "* * * * *", HOLD, concurrencyPolicy="Forbid"))
    clock = SecondClock("2024-03-01T00:00")
    r = a_runner(folder, clock.minute, seconds=clock.seconds)
    r.step()
    clock.second = t(JUST_AFTER_MIDNIGHT) * 60
    for _ in range(3 * 60):  # 00:01:00 .. 00:03:59, one step a second: the 00:01 run holds on
        r.step()
        clock.second += 1
    clock.second -= 1
    (folder / "release").touch()
    until(r, lambda: len([e for e in journal(folder, "overlap") if e["outcome"] == "succeeded"]) == 2)
    assert outcomes(folder, "overlap") == [
        (t("2024-03-01T00:02"), "scheduled", "skipped"),
        (t("2024-03-01T00:01"), "scheduled", "succeeded"),
        (t("2024-03-01T00:03"), "scheduled", "succeeded")]
    state = book_state(folder, "overlap")
    assert (state["skipped"], state["last_skipped"]) == (2, "2024-03-01T00:03")


# -- an outage past missedSchedulesLimit: the newest times are launched, and it is said -------------


def stop_after_a_run_at_0001(folder: Path, clock: Clock) -> None:
    """A runner whose schedules fired at 00:01, then stopped: its book says the last run was then."""
    r = a_runner(folder, clock)
    r.step()
    clock.set(JUST_AFTER_MIDNIGHT)
    until(r, lambda: not r.firings and r.controller.state.clock == t(JUST_AFTER_MIDNIGHT))
    r.lock.release()


def test_after_a_three_hour_outage_an_every_minute_schedule_fires_the_latest_minute_and_status_says_so(
        folder: Path, clock: Clock) -> None:
    (folder / "often.yaml").write_text(manifest("often", "* * * * *", PRINT_ENV))
    stop_after_a_run_at_0001(folder, clock)
    assert outcomes(folder, "often") == [(t(JUST_AFTER_MIDNIGHT), "scheduled", "succeeded")]
    clock.set(THREE_HOURS_LATER)
    said: list[str] = []
    again = a_runner(folder, clock, said=said)
    again.step()  # the first step after the restart launches
    assert [(f.nominal, f.reason) for f in again.firings.values()] == [(t(THREE_HOURS_LATER), "scheduled")]
    until(again, lambda: len(journal(folder, "often")) == 2)
    assert outcomes(folder, "often")[1:] == [(t(THREE_HOURS_LATER), "scheduled", "succeeded")]
    overflow = ("overflow at 2024-03-01 03:01 UTC: more than 100 missed; "
                "launched 2024-03-01 03:01 UTC (scheduled)")
    assert [line for line in said if "overflow" in line] == [f"often: {overflow}"]
    assert f"  {overflow}" in cronctl_status(folder)
    for _ in range(3):
        again.step()
    assert [line for line in said if "overflow" in line] == [f"often: {overflow}"]  # said once
    clock.set("2024-03-01T03:02")
    until(again, lambda: len(journal(folder, "often")) == 3)  # on time again: the overflow is over
    assert not any("overflow" in line for line in cronctl_status(folder))


def test_a_second_outage_after_a_restart_is_said_again(folder: Path, clock: Clock) -> None:
    """The recovery launch ends the first outage in the book, so the second is news, though
    no tick came between the two."""
    (folder / "often.yaml").write_text(manifest("often", "* * * * *", PRINT_ENV))
    stop_after_a_run_at_0001(folder, clock)
    for outage, expected in ((THREE_HOURS_LATER, 1), ("2024-03-01T06:01", 2)):
        clock.set(outage)
        said: list[str] = []
        again = a_runner(folder, clock, said=said)
        until(again, lambda: journal(folder, "often")[-1]["nominal"] == t(outage))
        again.lock.release()
        assert [line for line in said if "overflow" in line] == [
            f"often: overflow at {outage.replace('T', ' ')} UTC: more than 100 missed; "
            f"launched {outage.replace('T', ' ')} UTC (scheduled)"]
        assert book_state(folder, "often")["overflowed"] == expected


def test_catch_up_all_past_its_limit_runs_the_newest_times_in_order_and_says_how_many_it_dropped(
        folder: Path, clock: Clock) -> None:
    (folder / "every.yaml").write_text(manifest("every", "* * * * *", PRINT_ENV, catchUp="All",
                                                missedSchedulesLimit=3))
    stop_after_a_run_at_0001(folder, clock)
    clock.set(THREE_HOURS_LATER)
    said: list[str] = []
    again = a_runner(folder, clock, said=said)
    until(again, lambda: len(journal(folder, "every")) == 4)
    assert outcomes(folder, "every")[1:] == [
        (t("2024-03-01T02:59"), "catch-up", "succeeded"),
        (t("2024-03-01T03:00"), "catch-up", "succeeded"),
        (t("2024-03-01T03:01"), "scheduled", "succeeded")]
    overflow = ("overflow at 2024-03-01 03:01 UTC: 180 missed, more than 3; launched 2024-03-01 02:59 UTC "
                "(catch-up), 2024-03-01 03:00 UTC (catch-up), 2024-03-01 03:01 UTC (scheduled); "
                "dropped the 177 older ones")
    assert [line for line in said if "overflow" in line] == [f"every: {overflow}"]
    assert f"  {overflow}" in status_lines(folder)
    assert [reason_seen(folder, "every", run) for run in ("20240301T0259", "20240301T0300")] == [
        "catch-up", "catch-up"]


# -- CRONCTL_REASON: the core's reason, as the process sees it and history shows it --------------


def test_a_firings_process_sees_its_reason_scheduled_catch_up_or_manual(folder: Path, clock: Clock) -> None:
    (folder / "why.yaml").write_text(manifest("why", "*/5 * * * *", PRINT_ENV))
    r = a_runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: len(journal(folder, "why")) == 1)
    clock.set("2024-03-01T00:11")  # 00:10 went by without a step
    until(r, lambda: len(journal(folder, "why")) == 2)
    trigger(folder, "why")
    until(r, lambda: len(journal(folder, "why")) == 3)
    assert [reason_seen(folder, "why", run) for run in ("20240301T0005", "20240301T0010", "20240301T0011")] == [
        "scheduled", "catch-up", "manual"]
    assert [line.split()[:2] for line in history_lines(folder, "why")[2:]] == [
        ["why-1", "scheduled"], ["why-2", "catch-up"], ["why-3", "manual"]]


def test_a_retried_manual_run_rebuilt_from_an_older_book_keeps_its_reason(folder: Path, clock: Clock) -> None:
    """A book an older runner wrote dropped the firing of a failed attempt: the retry is rebuilt
    with the reason the failed attempt ran with."""
    (folder / "again.yaml").write_text(manifest("again", "0 0 1 1 *", [
        "sh", "-c", 'env; test "$CRONCTL_ATTEMPT" -ge 2'], maxRetries=1, retryDelayMinutes=1))
    r = a_runner(folder, clock)
    r.step()
    trigger(folder, "again")
    until(r, lambda: any(f.retry_due is not None for f in r.firings.values()))
    r.firings.clear()
    r.save()
    r.lock.release()
    clock.set(JUST_AFTER_MIDNIGHT)
    restarted = a_runner(folder, clock)
    until(restarted, lambda: journal(folder, "again"))
    assert [reason_seen(folder, "again", run) for run in ("20240301T0000", "20240301T0000.2")] == [
        "manual", "manual"]
    assert outcomes(folder, "again") == [(t("2024-03-01T00:00"), "manual", "succeeded")]


def test_a_book_an_older_runner_wrote_still_loads_and_its_waiting_firing_runs(folder: Path, clock: Clock) -> None:
    """Older books keep no overflows, and a waiting firing's command carries its reason."""
    (folder / "queue.yaml").write_text(manifest("queue", "*/5 * * * *", HOLD, concurrencyPolicy="WaitForLast"))
    r = a_runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: any(f.slot for f in r.firings.values()))
    clock.set("2024-03-01T00:10")
    r.step()  # 00:10 waits for the 00:05 run
    r.lock.release()
    path = folder / "cronctl.json"
    book = json.loads(path.read_text())
    del book["overflows"]
    [command] = book["snapshots"].values()
    command["reason"] = "scheduled"
    path.write_text(json.dumps(book))
    assert status_lines(folder)[1].startswith("queue: */5 * * * *")
    again = a_runner(folder, clock)
    (folder / "release").touch()
    until(again, lambda: len(journal(folder, "queue")) == 2)
    assert outcomes(folder, "queue") == [(t("2024-03-01T00:05"), "scheduled", "succeeded"),
                                         (t("2024-03-01T00:10"), "scheduled", "succeeded")]
