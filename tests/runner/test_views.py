"""What ``cronctl status``, ``history``, ``next`` and ``trigger`` tell a person or a script about a folder.

The books here are built from the core's state (the book is the views' input),
with the engine's shape for its other keys, so no runner and no process is
needed; ``now`` is passed in, as the command passes its clock's minute.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cronctl.core.controller import Controller
from cronctl.manifest import read_manifest
from cronctl.runner.book import Book
from cronctl.runner.definitions import load_definitions
from cronctl.runner.lock import RunnerLock
from cronctl.runner.views import (ViewError, history, history_lines, next_lines, status, status_lines,
                                  trigger)

from .support import manifest, t

CREATED = "2024-03-01T00:00"
LAST_STEP = "2024-03-01T00:03"  # the runner's last step: "* * * * *" next fires at 00:04
A_MINUTE_LATE = t("2024-03-01T00:05")
LONG_AFTER = t("2024-03-01T00:10")


def write(folder: Path, name: str, schedule: str | list[str] = "* * * * *", **spec: Any) -> None:
    (folder / f"{name}.yaml").write_text(manifest(name, schedule, ["true"], **spec))


def a_book(folder: Path, clock: str = LAST_STEP, **keys: Any) -> None:
    """The book of a runner that read the folder's manifests at CREATED and last stepped at ``clock``."""
    controller = Controller()
    for index, definition in enumerate(load_definitions(folder).definitions):
        spec = read_manifest(definition.body, t(CREATED)).job
        controller.add_job(dataclasses.replace(spec, index=index))
    controller.state.clock = t(clock)
    Book(folder).save({"controller": controller.state.to_json(), "firings": [], "journal": {}, "snapshots": {},
                       "overflows": {}, "workers": 1, **keys})


def exit_json(folder: Path, schedule: str, run_folder: str, **outcome: Any) -> None:
    path = folder / "runs" / schedule / run_folder
    path.mkdir(parents=True)
    (path / "exit.json").write_text(json.dumps({"exit_code": None, "signal": None, "started_at": None,
                                                "finished_at": None, **outcome}))


def entry(run: str | None, nominal: str, outcome: str, attempts: int = 1, reason: str = "scheduled",
          actual: str | None = None) -> dict[str, Any]:
    return {"run": run, "reason": reason, "nominal": t(nominal), "actual": actual, "attempts": attempts,
            "outcome": outcome, "finished": t(nominal) + 1}


@pytest.fixture
def running(folder: Path):
    """A runner holds the folder's lock (this process, by another descriptor than the views')."""
    lock = RunnerLock(folder, {"hostname": "host-a", "pid": 4242, "started_at": "2024-03-01T00:00:00Z"})
    assert lock.try_acquire()
    yield lock
    lock.release()


# -- history --------------------------------------------------------------------------------------


def test_history_has_a_header_the_exit_code_of_each_runs_last_attempt_and_one_time_format(folder: Path) -> None:
    write(folder, "nightly", "30 2 * * *", timeZone="+05:30", maxRetries=1)
    a_book(folder, journal={"nightly": [
        entry("nightly-1", "2024-02-29T21:00", "succeeded", actual="2024-02-29T21:00:07Z"),
        entry("nightly-2", "2024-03-01T21:00", "failed", attempts=2, actual="2024-03-01T21:00:02Z"),
        entry("nightly-3", "2024-03-02T21:00", "timed_out", actual="2024-03-02T21:00:01Z"),
        entry(None, "2024-03-03T21:00", "skipped", attempts=0)]})
    exit_json(folder, "nightly", "20240229T2100", exit_code=0)
    exit_json(folder, "nightly", "20240301T2100", exit_code=1)
    exit_json(folder, "nightly", "20240301T2100.2", exit_code=3)
    exit_json(folder, "nightly", "20240302T2100", signal=15)
    header, *table = history_lines(folder, "nightly")
    assert header == "nightly: 30 2 * * * (+05:30), the last 4 runs, oldest first"
    assert [re.split(r"\s{2,}", row) for row in table] == [
        ["RUN", "REASON", "NOMINAL", "ACTUAL", "ATTEMPTS", "EXIT", "OUTCOME"],
        ["nightly-1", "scheduled", "2024-02-29 21:00 UTC (2024-03-01 02:30 +05:30)",
         "2024-02-29 21:00 UTC (2024-03-01 02:30 +05:30)", "1", "0", "succeeded"],
        ["nightly-2", "scheduled", "2024-03-01 21:00 UTC (2024-03-02 02:30 +05:30)",
         "2024-03-01 21:00 UTC (2024-03-02 02:30 +05:30)", "2", "3", "failed"],
        ["nightly-3", "scheduled", "2024-03-02 21:00 UTC (2024-03-03 02:30 +05:30)",
         "2024-03-02 21:00 UTC (2024-03-03 02:30 +05:30)", "1", "SIGTERM", "timed_out"],
        ["-", "scheduled", "2024-03-03 21:00 UTC (2024-03-04 02:30 +05:30)", "-", "0", "-", "skipped"]]
    assert len({row.index(row.split()[-1]) for row in table}) == 1  # the columns line up


def test_history_json_has_stable_keys_and_rfc3339_utc_times(folder: Path) -> None:
    write(folder, "hello")
    a_book(folder, journal={"hello": [entry("hello-1", "2024-03-01T00:01", "succeeded",
                                            actual="2024-03-01T00:01:03Z"),
                                      entry("hello-2", "2024-03-01T00:02", "failed")]})
    exit_json(folder, "hello", "20240301T0001", exit_code=0)
    assert history(folder, "hello") == {"schedule": "hello", "expression": "* * * * *", "time_zone": "+00:00",
                                        "runs": [
        {"run": "hello-1", "reason": "scheduled", "nominal": "2024-03-01T00:01:00Z",
         "actual": "2024-03-01T00:01:03Z", "attempts": 1, "exit_code": 0, "signal": None, "outcome": "succeeded",
         "note": None, "finished": "2024-03-01T00:02:00Z"},
        {"run": "hello-2", "reason": "scheduled", "nominal": "2024-03-01T00:02:00Z", "actual": None,
         "attempts": 1, "exit_code": None, "signal": None, "outcome": "failed", "note": None,
         "finished": "2024-03-01T00:03:00Z"}]}


def test_history_is_in_nominal_order_and_a_skipped_time_that_ran_after_all_is_one_row(folder: Path) -> None:
    """Under Forbid a step may skip a time whose active run then ends within the minute, and the
    seed's rule launches it: one row for the time, the run's, below the earlier run's."""
    write(folder, "tick", "*/5 * * * *", concurrencyPolicy="Forbid")
    a_book(folder, journal={"tick": [entry(None, "2024-03-01T00:10", "skipped"),
                                     entry("tick-1", "2024-03-01T00:05", "succeeded"),
                                     entry("tick-2", "2024-03-01T00:10", "succeeded"),
                                     entry(None, "2024-03-01T00:15", "skipped")]})
    assert [(run["run"], run["nominal"], run["outcome"]) for run in history(folder, "tick")["runs"]] == [
        ("tick-1", "2024-03-01T00:05:00Z", "succeeded"), ("tick-2", "2024-03-01T00:10:00Z", "succeeded"),
        (None, "2024-03-01T00:15:00Z", "skipped")]


def test_history_takes_the_exit_the_runner_recorded_and_a_manual_firings_own_folder(folder: Path) -> None:
    write(folder, "hello")
    a_book(folder, journal={"hello": [
        {**entry("hello-1", "2024-03-01T00:01", "failed"), "exit_code": 4, "signal": None},
        {**entry("hello-2", "2024-03-01T00:01", "succeeded", reason="manual"), "trigger": "hello.17.18"},
        {**entry(None, "2024-03-01T00:02", "canceled", attempts=0, reason="manual"),
         "note": "the node switch is off"}]})
    exit_json(folder, "hello", "20240301T0001", exit_code=9)  # the scheduled run's folder: not hello-2's
    (folder / "manual" / "hello.17.18").mkdir(parents=True)
    exit_json(folder / "manual" / "hello.17.18", "hello", "20240301T0001", exit_code=0)
    assert [(run["run"], run["exit_code"], run["note"]) for run in history(folder, "hello")["runs"]] == [
        ("hello-1", 4, None), ("hello-2", 0, None), (None, None, "the node switch is off")]
    assert history_lines(folder, "hello")[-1].endswith("  -     canceled (the node switch is off)")


def test_history_of_a_known_schedule_without_runs_says_so(folder: Path) -> None:
    write(folder, "hello")
    a_book(folder)
    assert history_lines(folder, "hello") == ["hello: * * * * * (+00:00): no runs yet"]


def test_history_of_an_unknown_schedule_names_the_ones_it_knows(folder: Path) -> None:
    write(folder, "hello")
    write(folder, "report")
    a_book(folder)
    with pytest.raises(ViewError) as refused:
        history(folder, "helo")
    assert refused.value.message == f"no schedule named 'helo' in {folder}; its manifests define: hello, report"
    assert refused.value.exit_code == 2


# -- status ---------------------------------------------------------------------------------------


def test_status_says_no_runner_is_running_and_which_times_are_overdue(folder: Path) -> None:
    write(folder, "hello")
    a_book(folder)
    assert status_lines(folder, LONG_AFTER) == [
        f"no runner is running: nothing fires until 'cronctl local {folder}' runs",
        "hello: * * * * * (+00:00, allow)",
        "  last:  -",
        "  next:  2024-03-01 00:04 UTC, overdue since 2024-03-01 00:04 UTC"]


def test_a_next_time_a_minute_late_is_not_yet_overdue(folder: Path) -> None:
    write(folder, "hello")
    a_book(folder)
    assert "  next:  2024-03-01 00:04 UTC" in status_lines(folder, A_MINUTE_LATE)


def test_a_running_runner_makes_nothing_overdue_and_is_named(folder: Path, running: RunnerLock) -> None:
    write(folder, "hello")
    a_book(folder)
    lines = status_lines(folder, LONG_AFTER)
    assert lines[0] == "runner: held by pid 4242 on host-a since 2024-03-01T00:00:00Z"
    assert "  next:  2024-03-01 00:04 UTC" in lines


def test_status_says_nothing_fires_while_the_node_switch_is_off(folder: Path, running: RunnerLock) -> None:
    write(folder, "hello")
    a_book(folder)
    (folder / "cronctl.disabled").touch()
    lines = status_lines(folder, LONG_AFTER)
    assert lines[1] == f"the node switch is off: nothing fires while {folder / 'cronctl.disabled'} exists"
    assert not any("overdue" in line for line in lines)


def test_status_shows_invalid_and_retired_manifests_the_engine_recorded(folder: Path, running: RunnerLock) -> None:
    write(folder, "hello")
    write(folder, "broken")
    a_book(folder, manifests={
        "invalid": [{"file": str(folder / "broken.yaml"), "schedule": "broken",
                     "message": f"{folder / 'broken.yaml'}: CronSchedule 'broken': spec.timeoutMinutes: "
                                'must be a whole number, not "ten"'},
                    {"file": str(folder / "junk.yaml"), "schedule": None, "message": "not valid YAML: line 3"}],
        "retired": [{"schedule": "gone", "at": t("2024-03-01T00:02")}]})
    lines = status_lines(folder, LONG_AFTER)
    broken = lines.index("broken: * * * * * (+00:00, allow)")
    assert lines[broken + 2] == "  its manifest is invalid (below): nothing fires until it is fixed"
    assert lines[-5:] == [
        "invalid manifests (nothing fires for them until they are fixed):",
        f"  {folder / 'broken.yaml'}: CronSchedule 'broken': spec.timeoutMinutes: must be a whole number, "
        'not "ten"',
        f"  {folder / 'junk.yaml'}: not valid YAML: line 3",
        "retired schedules (their manifests are gone):",
        "  gone at 2024-03-01 00:02 UTC"]


def test_a_book_without_manifests_shows_no_manifest_lines(folder: Path, running: RunnerLock) -> None:
    write(folder, "hello")
    a_book(folder)
    assert status_lines(folder, LONG_AFTER)[1:] == [
        "hello: * * * * * (+00:00, allow)", "  last:  -", "  next:  2024-03-01 00:04 UTC"]


def test_status_json_has_stable_keys_and_rfc3339_utc_times(folder: Path) -> None:
    write(folder, "hello")
    a_book(folder, manifests={"invalid": [], "retired": [{"schedule": "gone", "at": t("2024-03-01T00:02")}]})
    assert status(folder, LONG_AFTER) == {
        "folder": str(folder),
        "runner": {"running": False, "pid": None, "hostname": None, "since": None},
        "node_switch": "on", "fires": False, "book": True, "clock": "2024-03-01T00:03:00Z",
        "workers": 1, "busy": 0,
        "schedules": [{"name": "hello", "expression": "* * * * *", "schedules": ["* * * * *"], "exclude": [],
                       "daylight_saving": "Vixie", "time_zone": "+00:00", "policy": "allow",
                       "last": None, "next": "2024-03-01T00:04:00Z", "overdue_since": "2024-03-01T00:04:00Z",
                       "skipped": 0, "ended": None, "remaining_runs": None, "last_success": None,
                       "last_failure": None, "consecutive_failures": 0,
                       "running": [], "queued": [], "pool": None, "retrying": [], "overflow": None,
                       "invalid": False, "retired": None, "suspended": None, "backfill": None}],
        "invalid_manifests": [],
        "retired": [{"schedule": "gone", "at": "2024-03-01T00:02:00Z"}]}


def test_status_counts_down_max_runs_and_says_when_the_last_was_launched(folder: Path) -> None:
    write(folder, "twice", maxRuns=2)
    a_book(folder)
    book = json.loads((folder / "cronctl.json").read_text())
    book["controller"]["jobs"][0]["state"]["scheduled_runs"] = 1
    (folder / "cronctl.json").write_text(json.dumps(book))
    assert "  1 of its 2 scheduled runs left (maxRuns)" in status_lines(folder, A_MINUTE_LATE)
    book["controller"]["jobs"][0]["state"]["scheduled_runs"] = 2
    (folder / "cronctl.json").write_text(json.dumps(book))
    assert status_lines(folder, A_MINUTE_LATE)[1:] == [
        "twice: * * * * * (+00:00, allow)",
        "  last:  -",
        "  ended (MaxRunsReached): its 2 scheduled runs (maxRuns) were launched, nothing fires"]
    shown = status(folder, A_MINUTE_LATE)["schedules"][0]
    assert (shown["ended"], shown["remaining_runs"], shown["next"]) == ("MaxRunsReached", 0, None)


def test_status_says_a_schedule_past_its_end_time_has_ended(folder: Path) -> None:
    write(folder, "window", endTime="2024-03-01T00:02:00Z")
    a_book(folder)
    assert "  ended (EndTimeReached): no schedule time is left before its endTime, nothing fires" in \
        status_lines(folder, A_MINUTE_LATE)


def test_status_before_the_runner_ever_ran_lists_the_manifests(folder: Path) -> None:
    write(folder, "hello")
    (folder / "bad.yaml").write_text(manifest("bad", "0 9 * * 8", ["true"]))
    assert status_lines(folder, LONG_AFTER) == [
        f"no runner is running: nothing fires until 'cronctl local {folder}' runs",
        f"no book yet ({folder / 'cronctl.json'}): the runner has not run here; the manifests' schedules:",
        "hello: * * * * * (+00:00, allow)",
        "  next:  2024-03-01 00:11 UTC",
        "invalid manifests (nothing fires for them until they are fixed):",
        f"  {folder / 'bad.yaml'}: CronSchedule 'bad': spec.schedule: day-of-week: 8 is out of range 0-7"]


@pytest.mark.parametrize("book, says", [
    ('{"version": 2}', "the book has schema version 2"),
    ("{not json", "the book does not parse (not JSON"),
    ('{"version": 1, "controller": {"version": 1}}', "the book has a field this cronctl cannot read"),
    ('{"version": 1, "controller": {"version": 1, "clock": null, "jobs": [], "runs": []}, "journal": []}',
     "the book has a field this cronctl cannot read"),
])
def test_a_book_status_cannot_read_is_one_message(folder: Path, book: str, says: str) -> None:
    (folder / "cronctl.json").write_text(book)
    with pytest.raises(ViewError) as refused:
        status_lines(folder, LONG_AFTER)
    assert says in refused.value.message
    assert "\n" not in refused.value.message


def test_a_missing_folder_is_one_message(folder: Path) -> None:
    with pytest.raises(ViewError) as refused:
        status(folder / "nope", LONG_AFTER)
    assert refused.value.message == f"{folder / 'nope'}: no such folder"


# -- next -----------------------------------------------------------------------------------------


def test_next_works_from_the_manifest_before_the_runner_ever_ran(folder: Path) -> None:
    write(folder, "nightly", "30 2 * * *", timeZone="+05:30")
    assert not (folder / "cronctl.json").exists()
    assert next_lines(folder, "nightly", 2, now=LONG_AFTER) == [
        "2024-03-01 21:00 UTC (2024-03-02 02:30 +05:30)", "2024-03-02 21:00 UTC (2024-03-03 02:30 +05:30)"]


def test_next_of_an_every_schedule_counts_from_the_runners_first_sight(folder: Path) -> None:
    write(folder, "report", "@every 90m")
    assert next_lines(folder, "report", 2, now=LONG_AFTER) == ["2024-03-01 01:40 UTC", "2024-03-01 03:10 UTC"]


def test_next_of_a_bad_manifest_names_the_file_the_schedule_the_field_and_the_reason(folder: Path) -> None:
    write(folder, "nightly", "30 2 * * *", timeoutMinutes="ten")
    with pytest.raises(ViewError) as refused:
        next_lines(folder, "nightly", now=LONG_AFTER)
    assert refused.value.message.startswith(
        f"{folder / 'nightly.yaml'}: CronSchedule 'nightly': spec.timeoutMinutes: must be a whole number")
    assert refused.value.exit_code == 1  # no answer: nothing fires


def test_next_of_a_schedule_the_book_has_whose_manifest_is_now_invalid_lists_no_times(folder: Path) -> None:
    """Issue 45: the book's times were listed, exit 0, while the runner holds the schedule."""
    write(folder, "nightly", "30 2 * * *")
    a_book(folder)
    write(folder, "nightly", "30 2 * * *", timeoutMinutes="ten")
    with pytest.raises(ViewError) as refused:
        next_lines(folder, "nightly", now=LONG_AFTER)
    assert refused.value.message == (
        f"{folder / 'nightly.yaml'}: CronSchedule 'nightly': spec.timeoutMinutes: must be a whole number, "
        "not \"ten\" (nothing fires for 'nightly' until it is fixed)")
    assert refused.value.exit_code == 1


def test_next_from_a_book_starts_at_now_after_a_long_stop(folder: Path) -> None:
    write(folder, "hello")
    a_book(folder)
    assert next_lines(folder, "hello", 1, now=LONG_AFTER) == ["2024-03-01 00:11 UTC"]


OFFICE = {"exclude": ["2024-03-04", "2024-03-06/2024-03-07", "0 9 * * FRI"], "timeZone": "Europe/Berlin",
          "daylightSaving": "Skip"}  # from Friday 2024-03-01: a Monday, a Wednesday and Thursday, Fridays' 09:00
FRIDAY_AFTERNOON = t("2024-03-01T12:00")  # 13:00 in Berlin


def test_next_lists_the_merged_times_of_a_schedules_list_without_the_excluded_ones(folder: Path) -> None:
    write(folder, "office", ["0 9 * * MON-FRI", "30 12 * * MON-FRI"], **OFFICE)
    assert next_lines(folder, "office", 4, now=FRIDAY_AFTERNOON) == [
        "office: 0 9 * * MON-FRI; 30 12 * * MON-FRI (Europe/Berlin); 3 exclusions; daylight saving: Skip",
        "2024-03-05 08:00 UTC (2024-03-05 09:00 +01:00 Europe/Berlin)",  # Monday the 4th is excluded
        "2024-03-05 11:30 UTC (2024-03-05 12:30 +01:00 Europe/Berlin)",
        "2024-03-08 11:30 UTC (2024-03-08 12:30 +01:00 Europe/Berlin)",  # the 6th, 7th and Friday's 09:00 are
        "2024-03-11 08:00 UTC (2024-03-11 09:00 +01:00 Europe/Berlin)"]


def test_status_shows_every_expression_the_exclusions_and_the_daylight_saving_rule(folder: Path) -> None:
    write(folder, "office", ["0 9 * * MON-FRI", "30 12 * * MON-FRI"], **OFFICE)
    assert status_lines(folder, FRIDAY_AFTERNOON)[2:5] == [
        "office: 0 9 * * MON-FRI; 30 12 * * MON-FRI (Europe/Berlin, allow)",
        "  3 exclusions; daylight saving: Skip",
        "  next:  2024-03-05 08:00 UTC (2024-03-05 09:00 +01:00 Europe/Berlin)"]
    [office] = status(folder, FRIDAY_AFTERNOON)["schedules"]
    assert (office["expression"], office["schedules"], office["exclude"], office["daylight_saving"]) == (
        "0 9 * * MON-FRI", ["0 9 * * MON-FRI", "30 12 * * MON-FRI"], OFFICE["exclude"], "Skip")


def test_status_says_nothing_of_exclusions_and_the_daylight_saving_rule_of_a_schedule_without_them(
        folder: Path) -> None:
    write(folder, "nightly", "30 2 * * *", timeZone="Europe/Berlin")
    assert status_lines(folder, FRIDAY_AFTERNOON)[2:4] == [
        "nightly: 30 2 * * * (Europe/Berlin, allow)", "  next:  2024-03-02 01:30 UTC (2024-03-02 02:30 +01:00 Europe/Berlin)"]
    assert next_lines(folder, "nightly", 1, now=FRIDAY_AFTERNOON) == [
        "2024-03-02 01:30 UTC (2024-03-02 02:30 +01:00 Europe/Berlin)"]


@pytest.mark.parametrize("rule, fires", [
    ("Vixie", ["2024-03-30 01:30 UTC", "2024-03-31 01:00 UTC", "2024-04-01 00:30 UTC"]),  # 03:00 at the change
    ("Literal", ["2024-03-30 01:30 UTC", "2024-04-01 00:30 UTC", "2024-04-02 00:30 UTC"]),  # 02:30 never was
])
def test_next_applies_the_daylight_saving_rule_at_berlins_spring_forward(folder: Path, rule: str,
                                                                         fires: list[str]) -> None:
    write(folder, "nightly", "30 2 * * *", timeZone="Europe/Berlin", daylightSaving=rule)
    lines = next_lines(folder, "nightly", 3, now=t("2024-03-29T12:00"))
    assert [line.split(" (")[0] for line in lines if not line.startswith("nightly:")] == fires


# -- trigger --------------------------------------------------------------------------------------


def test_trigger_with_a_runner_says_it_starts_within_a_second(folder: Path, running: RunnerLock) -> None:
    write(folder, "hello")
    triggered = trigger(folder, "hello", LONG_AFTER)
    assert triggered.message == "queued: the runner starts it within a second"
    assert json.loads(triggered.path.read_text()) == {"schedule": "hello"}


def test_trigger_without_a_runner_says_it_runs_when_the_runner_starts(folder: Path) -> None:
    write(folder, "hello")
    triggered = trigger(folder, "hello", LONG_AFTER)
    assert triggered.message == f"queued: no runner is running; hello runs when 'cronctl local {folder}' starts"
    assert triggered.path.exists()


def test_trigger_while_the_node_switch_is_off_asks_nothing(folder: Path, running: RunnerLock) -> None:
    write(folder, "hello")
    (folder / "cronctl.disabled").touch()
    with pytest.raises(ViewError) as refused:
        trigger(folder, "hello", LONG_AFTER)
    assert refused.value.message == (f"hello was not triggered: the node switch is off, and nothing runs while "
                                     f"{folder / 'cronctl.disabled'} exists (remove it, then trigger again)")
    assert refused.value.exit_code == 1
    assert not (folder / "triggers").exists()


def test_trigger_of_an_unknown_schedule_names_the_manifests_it_knows(folder: Path, running: RunnerLock) -> None:
    write(folder, "hello")
    write(folder, "report")
    with pytest.raises(ViewError) as refused:
        trigger(folder, "helo", LONG_AFTER)
    assert refused.value.message == f"no schedule named 'helo' in {folder}; its manifests define: hello, report"
    assert refused.value.exit_code == 2
    assert not (folder / "triggers").exists()


def test_a_runner_waiting_for_the_lock_says_why_it_cannot_show_the_book_and_waits_on(
        folder: Path, running: RunnerLock) -> None:
    """The views' refusal is what a waiting runner catches (a SystemExit, as it always was)."""
    from cronctl.runner.engine import Runner, run_forever

    write(folder, "hello")
    (folder / "cronctl.json").write_text("{not json")
    said: list[str] = []
    waiting = Runner(folder, lambda: LONG_AFTER, 1, say=said.append)
    run_forever(waiting, poll_seconds=0.001, retry_lock_seconds=0.001,
                should_stop=lambda: any("does not parse" in line for line in said))
    assert any(line.startswith(f"{folder / 'cronctl.json'}: the book does not parse") for line in said)
    assert (folder / "cronctl.json").read_text() == "{not json"  # a waiting runner writes nothing


def test_the_two_times_of_a_repeated_daylight_saving_hour_read_apart() -> None:
    from cronctl.core.zones import parse_zone
    from cronctl.runner.firing import both_times

    zone = parse_zone("America/New_York")
    assert [both_times(t(utc), zone) for utc in ("2024-11-03T05:30", "2024-11-03T06:30")] == [
        "2024-11-03 05:30 UTC (2024-11-03 01:30 -04:00 America/New_York)",
        "2024-11-03 06:30 UTC (2024-11-03 01:30 -05:00 America/New_York)"]


def test_status_of_a_folder_without_manifests_says_so(tmp_path: Path) -> None:
    lines = status_lines(tmp_path, now=t("2024-03-01T00:00"))
    assert lines[-1] == (f"no schedules: {tmp_path} has no CronSchedule manifest (*.yaml, *.yml); put one there "
                         "(examples/local/hello.yaml is one) and the runner loads it within a second")
