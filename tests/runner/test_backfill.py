"""Backfills on the runner: a request file (``cronctl backfill``) runs every schedule time of a past range,
oldest first, one at a time, each run with reason backfill and its own nominal time, in a folder of its own;
the book keeps it across a restart; a request that is not one, or that the core refuses, never stops the
runner. The clock is injected; the runs are real processes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from cronctl.runner.backfills import write_request
from cronctl.runner.engine import Runner
from cronctl.runner.values import Request
from cronctl.runner.views import ask_backfill, resume, status, status_lines, suspend

from .support import Clock, journal, manifest, t, until

COUNT = ["sh", "-c", 'echo "$CRONCTL_REASON $CRONCTL_NOMINAL_TIME" >> count']
HOURLY = "0 * * * *"  # created at 2024-03-01T00:00 (the clock fixture): its first own time is 01:00
THREE_HOURS = ("2024-02-29T21:00", "2024-02-29T23:00")  # 21:00, 22:00 and 23:00, both ends included


def a_runner(folder: Path, clock: Clock, said: list[str] | None = None, workers: int = 2) -> Runner:
    r = Runner(folder, clock, workers, say=(said.append if said is not None else lambda text: None),
               grace_seconds=0.3)
    assert r.open()
    return r


def ask(folder: Path, name: str, start: str, end: str) -> Path:
    """A backfill request, as ``cronctl backfill`` writes one."""
    return write_request(folder, Request(name, t(start), t(end)))


def ran(folder: Path) -> list[str]:
    return (folder / "count").read_text().splitlines() if (folder / "count").exists() else []


def hourly(folder: Path, policy: str = "Allow", command: list[str] = COUNT) -> None:
    (folder / "hourly.yaml").write_text(manifest("hourly", HOURLY, command, concurrencyPolicy=policy))


def test_a_backfill_runs_its_times_one_at_a_time_oldest_first_with_reason_backfill_and_their_own_nominal_time(
        folder: Path, clock: Clock) -> None:
    hourly(folder)  # Allow, and two worker slots: only the backfill keeps its runs one at a time
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    request = ask(folder, "hourly", *THREE_HOURS)
    entries = until(r, lambda: len(journal(folder, "hourly")) == 3 and journal(folder, "hourly"))
    assert ran(folder) == ["backfill 2024-02-29T21:00:00Z", "backfill 2024-02-29T22:00:00Z",
                           "backfill 2024-02-29T23:00:00Z"]
    assert [(e["run"], e["reason"], e["nominal"], e["outcome"]) for e in entries] == [
        ("hourly-1", "backfill", t("2024-02-29T21:00"), "succeeded"),
        ("hourly-2", "backfill", t("2024-02-29T22:00"), "succeeded"),
        ("hourly-3", "backfill", t("2024-02-29T23:00"), "succeeded")]
    runs = [line.split(": ", 1)[1] for line in said if " fired " in line or " succeeded " in line]
    assert [line.split(" (")[0] for line in runs] == [
        "fired hourly-1 for 2024-02-29 21:00 UTC", "hourly-1 succeeded",
        "fired hourly-2 for 2024-02-29 22:00 UTC", "hourly-2 succeeded",
        "fired hourly-3 for 2024-02-29 23:00 UTC", "hourly-3 succeeded"]
    assert "(backfill, attempt 1)" in runs[0]
    assert not request.exists()
    book = json.loads((folder / "cronctl.json").read_text())
    assert book["controller"]["jobs"][0]["state"]["last_schedule"] is None  # a backfill moves no schedule time


def test_a_backfill_run_never_collides_with_the_scheduled_run_of_the_same_minute(folder: Path, clock: Clock) -> None:
    (folder / "often.yaml").write_text(manifest("often", "*/5 * * * *", COUNT))
    r = a_runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: journal(folder, "often"))
    clock.set("2024-03-01T00:06")
    ask(folder, "often", "2024-03-01T00:05", "2024-03-01T00:05")
    entries = until(r, lambda: len(journal(folder, "often")) == 2 and journal(folder, "often"))
    assert [(e["reason"], e["nominal"], e["outcome"]) for e in entries] == [
        ("scheduled", t("2024-03-01T00:05"), "succeeded"), ("backfill", t("2024-03-01T00:05"), "succeeded")]
    assert ran(folder) == ["scheduled 2024-03-01T00:05:00Z", "backfill 2024-03-01T00:05:00Z"]
    [own] = list((folder / "backfill").glob("*/runs/often/20240301T0005"))  # a folder of its own
    assert (own / "exit.json").exists() and (folder / "runs/often/20240301T0005/exit.json").exists()


def test_a_backfill_says_when_it_starts_and_when_it_completes(folder: Path, clock: Clock) -> None:
    hourly(folder)
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    request = ask(folder, "hourly", *THREE_HOURS)
    ident = f"{request.stem}.{request.stat().st_mtime_ns}"  # the request id: the file's name and time
    until(r, lambda: len(journal(folder, "hourly")) == 3)
    r.step()
    assert [line for line in said if line.startswith("hourly: backfill ")] == [
        f"hourly: backfill {ident} of 3 schedule times from 2024-02-29 21:00 UTC to 2024-02-29 23:00 UTC, "
        "oldest first, one at a time",
        f"hourly: backfill {ident} complete: 3 of 3 schedule times from 2024-02-29 21:00 UTC to "
        "2024-02-29 23:00 UTC launched"]
    assert status_lines(folder, clock.now)[-1] == (
        "  backfill 2024-02-29 21:00 UTC to 2024-02-29 23:00 UTC: 3/3 launched, complete")
    assert status(folder, clock.now)["schedules"][0]["backfill"]["state"] == "complete"


def test_a_backfill_logs_its_start_launches_and_end_as_json_facts(folder: Path, clock: Clock) -> None:
    hourly(folder)
    said: list[str] = []
    r = Runner(folder, clock, 2, say=said.append, grace_seconds=0.3, log_format="json")
    assert r.open()
    r.step()
    ask(folder, "hourly", "2024-02-29T23:00", "2024-02-29T23:00")
    until(r, lambda: journal(folder, "hourly"))
    r.step()
    events = [json.loads(line) for line in said]
    started, complete = [e for e in events if e["event"] == "backfill"]
    [fired] = [e for e in events if e["event"] == "fired"]
    assert (started["state"], started["total"]) == ("started", 1)
    assert (complete["state"], complete["launched"]) == ("complete", 1)
    assert (fired["firing"], fired["nominal"], fired["backfill"]) == ("backfill", "2024-02-29T23:00:00Z",
                                                                      started["backfill"])


def test_a_backfill_under_way_goes_on_after_a_runner_restart(folder: Path, clock: Clock) -> None:
    hourly(folder)
    r = a_runner(folder, clock)
    r.step()
    request = ask(folder, "hourly", *THREE_HOURS)
    until(r, lambda: journal(folder, "hourly"))  # the first run ended, the second was launched
    r.lock.release()
    again = a_runner(folder, clock)
    entries = until(again, lambda: len(journal(folder, "hourly")) == 3 and journal(folder, "hourly"))
    for _ in range(5):
        again.step()
    assert [(e["run"], e["nominal"]) for e in entries] == [
        ("hourly-1", t("2024-02-29T21:00")), ("hourly-2", t("2024-02-29T22:00")), ("hourly-3", t("2024-02-29T23:00"))]
    assert len(ran(folder)) == 3 and len(journal(folder, "hourly")) == 3 and not request.exists()


def test_a_request_file_found_again_after_its_backfill_was_saved_is_only_deleted(folder: Path, clock: Clock) -> None:
    hourly(folder)
    r = a_runner(folder, clock)
    r.step()
    request = ask(folder, "hourly", "2024-02-29T23:00", "2024-02-29T23:00")
    body, stamp = request.read_bytes(), request.stat().st_mtime_ns
    until(r, lambda: journal(folder, "hourly"))
    request.write_bytes(body)  # as a crash after the save and before the delete leaves it
    os.utime(request, ns=(stamp, stamp))
    r.lock.release()
    again = a_runner(folder, clock)
    for _ in range(5):
        again.step()
    assert not request.exists() and ran(folder) == ["backfill 2024-02-29T23:00:00Z"]


def test_a_new_request_replaces_the_backfill_under_way(folder: Path, clock: Clock) -> None:
    hourly(folder, policy="Forbid")
    r = a_runner(folder, clock)
    r.step()
    ask(folder, "hourly", *THREE_HOURS)
    until(r, lambda: journal(folder, "hourly"))  # 21:00 ran, 22:00 was launched
    ask(folder, "hourly", "2024-02-29T12:00", "2024-02-29T12:00")
    until(r, lambda: len(journal(folder, "hourly")) == 3)
    for _ in range(5):
        r.step()
    assert ran(folder) == ["backfill 2024-02-29T21:00:00Z", "backfill 2024-02-29T22:00:00Z",
                           "backfill 2024-02-29T12:00:00Z"]  # 23:00 never: the new backfill took its place


def test_cronctl_backfill_says_the_running_runner_takes_it_and_which_backfill_it_replaces(
        folder: Path, clock: Clock) -> None:
    hourly(folder, command=["sh", "-c", "sleep 30"])
    r = a_runner(folder, clock)
    r.step()
    ask(folder, "hourly", *THREE_HOURS)
    until(r, lambda: any(f.slot for f in r.firings.values()))
    asked = ask_backfill(folder, "hourly", t("2024-02-29T12:00"), t("2024-02-29T13:00"), clock.now)
    assert asked.message == (
        "backfill of hourly: 2 schedule times from 2024-02-29 12:00 UTC to 2024-02-29 13:00 UTC run oldest first, "
        "one at a time; the runner takes it on its next poll; it replaces the backfill under way (1/3 launched)")
    assert asked.path.parent == folder / "backfills"


def test_a_broken_request_file_is_moved_aside_and_never_stops_the_runner(folder: Path, clock: Clock) -> None:
    (folder / "often.yaml").write_text(manifest("often", "*/5 * * * *", COUNT))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    (folder / "backfills").mkdir(exist_ok=True)
    (folder / "backfills" / "junk.json").write_text("{not json")
    (folder / "backfills" / "shape.json").write_text(json.dumps({"schedule": "often", "from": "yesterday"}))
    (folder / "backfills" / "nobody.json").write_text(json.dumps(
        {"schedule": "nobody", "from": "2024-02-29T00:00", "to": "2024-02-29T01:00"}))
    clock.set("2024-03-01T00:05")
    until(r, lambda: journal(folder, "often"))  # the schedule fires on
    assert sorted(p.name for p in (folder / "backfills").iterdir()) == [
        "junk.json.broken", "nobody.json.broken", "shape.json.broken"]
    aside = [line for line in said if "moved aside" in line]
    assert len(aside) == 3
    assert any("from: 'yesterday' is not a UTC time" in line for line in aside)
    assert any("no schedule named 'nobody'" in line for line in aside)


def test_a_request_the_core_refuses_is_said_as_a_warning_and_moved_aside(folder: Path, clock: Clock) -> None:
    hourly(folder)
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    request = ask(folder, "hourly", "2024-02-29T23:00", "2024-03-01T05:00")  # reaches past now (00:00)
    r.step()
    assert not request.exists() and request.with_name(request.name + ".refused").exists()
    [line] = [line for line in said if "refused" in line]
    assert "backfill of hourly refused: the range ends at 2024-03-01T05:00, after now (2024-03-01T00:00)" in line
    assert ran(folder) == [] and r.controller.state.jobs["hourly"].state.backfill is None


def test_a_backfill_waits_while_its_schedule_is_suspended_and_goes_on_once_resumed(folder: Path, clock: Clock) -> None:
    hourly(folder)
    r = a_runner(folder, clock)
    r.step()
    suspend(folder, "hourly", "not now", at=clock.now * 60)
    r.step()
    ask(folder, "hourly", "2024-02-29T23:00", "2024-02-29T23:00")
    for _ in range(5):
        r.step()
    assert ran(folder) == [] and "it waits while the schedule is suspended" in "\n".join(status_lines(folder))
    resume(folder, "hourly", clock.now)
    until(r, lambda: journal(folder, "hourly"))
    assert ran(folder) == ["backfill 2024-02-29T23:00:00Z"]


def test_status_shows_a_backfills_range_progress_and_next_time(folder: Path, clock: Clock) -> None:
    hourly(folder, command=["sh", "-c", "sleep 30"])
    r = a_runner(folder, clock)
    r.step()
    ask(folder, "hourly", *THREE_HOURS)
    until(r, lambda: any(f.slot for f in r.firings.values()))
    assert status_lines(folder, clock.now)[-2:] == [
        "  backfill 2024-02-29 21:00 UTC to 2024-02-29 23:00 UTC: 1/3 launched, next 2024-02-29 22:00 UTC "
        "(running hourly-1)",
        "  running: hourly-1 on worker-1"]
    shown = status(folder, clock.now)["schedules"][0]["backfill"]
    assert {key: shown[key] for key in ("state", "from", "to", "total", "launched", "next", "running")} == {
        "state": "running", "from": "2024-02-29T21:00:00Z", "to": "2024-02-29T23:00:00Z", "total": 3,
        "launched": 1, "next": "2024-02-29T22:00:00Z", "running": "hourly-1"}


def test_a_schedule_with_several_expressions_exclusions_and_a_daylight_saving_rule_survives_a_restart(
        folder: Path, clock: Clock) -> None:
    (folder / "office.yaml").write_text(manifest("office", ["0 9 * * *", "30 12 * * *"], COUNT,
                                                 exclude=["2024-03-02"], daylightSaving="Skip"))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    r.lock.release()
    again = a_runner(folder, clock, said)
    job = again.controller.state.jobs["office"]  # read back, not left out and made anew
    assert (job.spec.options.more_schedules, job.spec.options.exclude) == (("30 12 * * *",), ("2024-03-02",))
    assert not [line for line in said if "left out" in line]
