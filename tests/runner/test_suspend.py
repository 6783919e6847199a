"""Pause with a reason: ``cronctl suspend NAME --reason TEXT`` and ``cronctl resume NAME`` on the runner.

A pause is a record in ``DIR/paused/`` (the manifests are their owners', never rewritten);
while it exists the schedule is suspended exactly as by ``spec.suspend: true``. The running
runner notices records at its next step and says one line when a schedule becomes suspended
or resumed; ``status`` and ``next`` say who suspended it, since when and why. The clock is
injected; a firing is a real process, seen by the line that says it fired (nobody waits for
it to end).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from cronctl.core.controller import Controller
from cronctl.manifest import read_manifest
from cronctl.runner.book import Book
from cronctl.runner.definitions import load_definitions
from cronctl.runner.engine import Runner
from cronctl.runner.views import ViewError, next_lines, resume, status, status_lines, suspend, trigger

from .support import Clock, manifest, t

PAUSED_AT = t("2024-03-01T00:02") * 60 + 7  # the second `cronctl suspend` ran at: 00:02:07
NOW = t("2024-03-01T00:03")
WHY = "db migration until Friday"


def write(folder: Path, name: str, schedule: str = "*/5 * * * *", **spec: Any) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(manifest(name, schedule, ["true"], **spec))
    return path


def record(folder: Path, name: str) -> Any:
    return json.loads((folder / "paused" / f"{name}.json").read_text())


def a_runner(folder: Path, clock: Clock, said: list[str] | None = None, log_format: str = "text") -> Runner:
    r = Runner(folder, clock, 2, say=(said.append if said is not None else lambda text: None), grace_seconds=0.3,
               log_format=log_format)
    assert r.open()
    return r


def fired(said: list[str]) -> list[str]:
    return [line.split(" on ")[0] for line in said if ": fired " in line]


def a_book(folder: Path, clock: str = "2024-03-01T00:03", **manifests: Any) -> None:
    """The book of a runner that read the folder's manifests at 00:00 and last stepped at ``clock``."""
    controller = Controller()
    for index, definition in enumerate(load_definitions(folder).definitions):
        spec = read_manifest(definition.body, t("2024-03-01T00:00")).job
        controller.add_job(dataclasses.replace(spec, index=index))
    controller.state.clock = t(clock)
    Book(folder).save({"controller": controller.state.to_json(), "firings": [], "journal": {}, "snapshots": {},
                       "overflows": {}, "workers": 1,
                       "manifests": {"invalid": [], "retired": [], "suspended": [], **manifests}})


# -- suspend and resume ------------------------------------------------------------------------


def test_suspend_writes_a_pause_record_with_the_reason_and_time_and_leaves_the_manifest_alone(folder: Path) -> None:
    path = write(folder, "nightly-report")
    before = path.read_text()
    paused = suspend(folder, "nightly-report", WHY, at=PAUSED_AT)
    assert paused.message == 'nightly-report suspended: "db migration until Friday"'
    assert paused.path == folder / "paused" / "nightly-report.json"
    assert record(folder, "nightly-report") == {"reason": WHY, "since": "2024-03-01T00:02:07Z"}
    assert path.read_text() == before
    assert [p.name for p in (folder / "paused").iterdir()] == ["nightly-report.json"]  # no temporary file left


def test_suspend_without_a_reason_records_none(folder: Path) -> None:
    write(folder, "nightly-report")
    assert suspend(folder, "nightly-report", None, at=PAUSED_AT).message == \
        "nightly-report suspended (no reason given)"
    assert record(folder, "nightly-report") == {"reason": None, "since": "2024-03-01T00:02:07Z"}


def test_suspending_a_paused_schedule_replaces_the_reason_and_keeps_its_time(folder: Path) -> None:
    write(folder, "nightly-report")
    suspend(folder, "nightly-report", "first reason", at=PAUSED_AT)
    again = suspend(folder, "nightly-report", WHY, at=PAUSED_AT + 3600)
    assert again.message == ('nightly-report suspended: "db migration until Friday"; since 2024-03-01 00:02 UTC, '
                             'the reason was "first reason"')
    assert record(folder, "nightly-report") == {"reason": WHY, "since": "2024-03-01T00:02:07Z"}


def test_a_reason_longer_than_256_characters_is_refused_naming_reason_and_nothing_is_written(folder: Path) -> None:
    write(folder, "nightly-report")
    assert suspend(folder, "nightly-report", "x" * 256, at=PAUSED_AT).message.endswith('"' + "x" * 256 + '"')
    with pytest.raises(ViewError) as refused:
        suspend(folder, "nightly-report", "y" * 257, at=PAUSED_AT)
    assert refused.value.message == "--reason: 257 characters, more than the 256 that spec.suspendReason allows"
    assert refused.value.exit_code == 2
    assert record(folder, "nightly-report")["reason"] == "x" * 256


@pytest.mark.parametrize("command", [lambda folder: suspend(folder, "nightly", WHY, at=PAUSED_AT),
                                     lambda folder: resume(folder, "nightly", NOW)], ids=["suspend", "resume"])
def test_suspend_and_resume_of_an_unknown_schedule_name_the_ones_the_manifests_define(folder: Path, command) -> None:
    write(folder, "nightly-report")
    write(folder, "hello")
    with pytest.raises(ViewError) as refused:
        command(folder)
    assert refused.value.message == f"no schedule named 'nightly' in {folder}; its manifests define: hello, " \
                                    "nightly-report"
    assert refused.value.exit_code == 2
    assert not (folder / "paused").exists()


def test_resume_deletes_the_record_and_says_when_it_fires_next_in_the_schedules_zone(folder: Path) -> None:
    write(folder, "nightly-report", "30 2 * * *", timeZone="+05:30")
    suspend(folder, "nightly-report", WHY, at=PAUSED_AT)
    resumed = resume(folder, "nightly-report", NOW)
    assert resumed.message == "nightly-report resumed; next fire 2024-03-01 21:00 UTC (2024-03-02 02:30 +05:30)"
    assert not resumed.path.exists()
    assert resume(folder, "nightly-report", NOW).message == \
        "nightly-report was not suspended; next fire 2024-03-01 21:00 UTC (2024-03-02 02:30 +05:30)"


def test_resume_of_a_schedule_its_manifest_suspends_is_refused_naming_the_file_and_keeps_the_record(
        folder: Path) -> None:
    write(folder, "nightly-report", suspend=True, suspendReason="frozen for the audit")
    paused = suspend(folder, "nightly-report", WHY, at=PAUSED_AT)
    assert paused.message == (f'nightly-report suspended: "db migration until Friday"; its manifest '
                              f"{folder / 'nightly-report.yaml'} says spec.suspend: true as well")
    with pytest.raises(ViewError) as refused:
        resume(folder, "nightly-report", NOW)
    assert refused.value.message == (f"nightly-report is suspended by its manifest {folder / 'nightly-report.yaml'} "
                                     "(spec.suspend: true), not by cronctl suspend: set spec.suspend: false there "
                                     "to resume it")
    assert refused.value.exit_code == 2
    assert record(folder, "nightly-report")["reason"] == WHY


# -- the running runner --------------------------------------------------------------------------


def test_a_running_runner_fires_nothing_scheduled_while_a_pause_record_exists(folder: Path, clock: Clock) -> None:
    write(folder, "tick")
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    suspend(folder, "tick", WHY, at=clock.now * 60)
    for minute in ("00:05", "00:10", "00:15"):
        clock.set(f"2024-03-01T{minute}")
        r.step()
    assert fired(said) == [] and not r.firings
    assert r.controller.state.jobs["tick"].state.last_schedule is None


def test_a_paused_schedule_fires_again_after_resume_without_catching_up_the_paused_time(
        folder: Path, clock: Clock) -> None:
    write(folder, "tick")
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    suspend(folder, "tick", WHY, at=clock.now * 60)
    clock.set("2024-03-01T00:12")
    r.step()
    resume(folder, "tick", clock.now)
    clock.set("2024-03-01T00:13")
    r.step()
    assert fired(said) == []  # 00:05 and 00:10 were paused: no catch-up
    clock.set("2024-03-01T00:15")
    r.step()
    assert fired(said) == ["tick: fired tick-1 for 2024-03-01 00:15 UTC (scheduled, attempt 1)"]


def test_a_runner_started_with_a_pause_record_fires_nothing(folder: Path, clock: Clock) -> None:
    write(folder, "tick")
    suspend(folder, "tick", WHY, at=clock.now * 60)  # no runner runs
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    clock.set("2024-03-01T00:05")
    r.step()
    assert fired(said) == [] and not r.firings


def test_a_manual_trigger_of_a_paused_schedule_still_runs_as_for_a_suspended_manifest(
        folder: Path, clock: Clock) -> None:
    write(folder, "tick")
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    suspend(folder, "tick", WHY, at=clock.now * 60)
    trigger(folder, "tick", clock.now)
    r.step()
    assert fired(said) == ["tick: fired tick-1 for 2024-03-01 00:00 UTC (manual, attempt 1)"]


def test_the_runner_says_one_line_when_a_schedule_is_suspended_or_resumed_with_the_reason(
        folder: Path, clock: Clock) -> None:
    write(folder, "tick")
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    said.clear()
    suspend(folder, "tick", WHY, at=clock.now * 60)
    r.step()
    r.step()
    suspend(folder, "tick", "longer than planned", at=clock.now * 60)
    r.step()
    clock.set("2024-03-01T00:03")
    resume(folder, "tick", clock.now)
    r.step()
    r.step()
    assert said == [
        'tick: suspended by cronctl suspend: "db migration until Friday"; no scheduled firing until '
        "'cronctl resume tick' (the time it is off counts no missed run)",
        'tick: suspended by cronctl suspend: "longer than planned"; no scheduled firing until '
        "'cronctl resume tick' (the time it is off counts no missed run)",
        'tick: resumed (it was suspended by cronctl suspend: "longer than planned"); next fire 2024-03-01 00:05 UTC']


def test_the_runner_says_one_line_when_a_manifest_suspends_or_resumes_its_schedule(
        folder: Path, clock: Clock) -> None:
    write(folder, "tick")
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    said.clear()
    write(folder, "tick", suspend=True, suspendReason="frozen")
    clock.set("2024-03-01T00:01")
    r.step()
    write(folder, "tick")
    clock.set("2024-03-01T00:02")
    r.step()
    assert said == [
        'tick: suspended by its manifest: "frozen"; no scheduled firing until its manifest says spec.suspend: '
        "false (the time it is off counts no missed run)",
        'tick: resumed (it was suspended by its manifest: "frozen"); next fire 2024-03-01 00:05 UTC']


def test_the_first_step_says_nothing_of_schedules_suspended_already(folder: Path, clock: Clock) -> None:
    write(folder, "frozen", suspend=True)
    write(folder, "paused")
    suspend(folder, "paused", WHY, at=clock.now * 60)
    said: list[str] = []
    a_runner(folder, clock, said).step()
    assert not [line for line in said if "suspended" in line or "resumed" in line]


def test_in_json_the_lines_carry_who_suspended_since_when_and_why(folder: Path, clock: Clock) -> None:
    write(folder, "tick")
    said: list[str] = []
    r = a_runner(folder, clock, said, log_format="json")
    r.step()
    said.clear()
    suspend(folder, "tick", WHY, at=PAUSED_AT)
    r.step()
    resume(folder, "tick", clock.now)
    r.step()
    suspended, resumed = [json.loads(line) for line in said]
    assert {key: suspended[key] for key in ("event", "schedule", "by", "reason", "since", "manifest")} == {
        "event": "suspended", "schedule": "tick", "by": "cronctl suspend", "reason": WHY,
        "since": "2024-03-01T00:02:07Z", "manifest": False}
    assert (resumed["event"], resumed["schedule"], resumed["next"], resumed["was"]["reason"]) == (
        "resumed", "tick", "2024-03-01T00:05:00Z", WHY)


@pytest.mark.parametrize("damage, problem", [
    (lambda path: path.write_text("{not json"), "not JSON"),
    (lambda path: path.write_text('["db migration"]'), "not a pause record"),
    (lambda path: path.write_text('{"reason": 42}'), "reason: 42 is not text"),
    (lambda path: path.mkdir(), "cannot be read"),
], ids=["not-json", "not-an-object", "reason-not-text", "a-folder"])
def test_a_pause_record_that_does_not_read_keeps_its_schedule_suspended_and_is_said(
        folder: Path, clock: Clock, damage, problem: str) -> None:
    write(folder, "tick")
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    said.clear()
    (folder / "paused").mkdir()
    damage(folder / "paused" / "tick.json")
    r.step()
    clock.set("2024-03-01T00:05")
    r.step()
    assert fired(said) == []
    [line] = said
    assert line.startswith(f"tick: suspended by cronctl suspend; its pause record is unreadable "
                           f"({folder / 'paused' / 'tick.json'}: {problem}")
    assert line.endswith("no scheduled firing until 'cronctl resume tick' (the time it is off counts no missed run)")
    [shown] = [line for line in status_lines(folder, clock.now) if "suspended" in line]
    assert shown.startswith(f"  suspended by cronctl suspend; its pause record is unreadable ({folder}/paused/tick.json")
    assert status(folder, clock.now)["schedules"][0]["suspended"]["problem"].startswith(
        f"{folder / 'paused' / 'tick.json'}: {problem}")


def test_resume_deletes_a_pause_record_it_cannot_read(folder: Path) -> None:
    write(folder, "tick")
    (folder / "paused").mkdir()
    (folder / "paused" / "tick.json").write_text("{not json")
    assert resume(folder, "tick", NOW).message == "tick resumed; next fire 2024-03-01 00:05 UTC"
    assert not (folder / "paused" / "tick.json").exists()


def test_a_broken_record_is_replaced_by_suspend(folder: Path) -> None:
    write(folder, "tick")
    (folder / "paused").mkdir()
    (folder / "paused" / "tick.json").write_text("{not json")
    assert suspend(folder, "tick", WHY, at=PAUSED_AT).message == \
        'tick suspended: "db migration until Friday"; its unreadable pause record is replaced'
    assert record(folder, "tick") == {"reason": WHY, "since": "2024-03-01T00:02:07Z"}


def test_a_pause_record_of_no_schedule_is_ignored_with_one_notice(folder: Path, clock: Clock) -> None:
    write(folder, "tick")
    (folder / "paused").mkdir()
    (folder / "paused" / "gone.json").write_text('{"reason": null, "since": null}')
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    r.step()
    assert [line for line in said if "gone" in line] == [
        f"{folder / 'paused' / 'gone.json'}: no schedule named 'gone'; the pause record is ignored until a valid "
        "manifest defines it"]


def test_a_retired_schedules_pause_record_is_deleted_with_it(folder: Path, clock: Clock) -> None:
    path = write(folder, "tick")
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    suspend(folder, "tick", WHY, at=clock.now * 60)
    r.step()
    path.unlink()
    r.step()
    assert not (folder / "paused" / "tick.json").exists()
    assert said[-1] == (f"tick: retired, its manifest tick.yaml is gone (deleted, or the schedule renamed); nothing "
                        f"was running; its pause record {folder / 'paused' / 'tick.json'} is deleted")


def test_a_restarted_runner_keeps_since_when_it_saw_a_manifest_suspend_its_schedule(
        folder: Path, clock: Clock) -> None:
    write(folder, "tick")
    r = a_runner(folder, clock)
    r.step()
    write(folder, "tick", suspend=True, suspendReason="frozen")
    clock.set("2024-03-01T00:01")
    r.step()
    r.lock.release()
    clock.set("2024-03-01T00:02")
    a_runner(folder, clock).step()
    assert status(folder, clock.now)["schedules"][0]["suspended"] == {
        "by": "manifest", "since": "2024-03-01T00:01:00Z", "reason": "frozen", "manifest": True, "problem": None}


# -- status and next -----------------------------------------------------------------------------


def test_status_shows_who_suspended_a_schedule_since_when_and_why(folder: Path) -> None:
    write(folder, "nightly-report", "30 2 * * *", timeZone="+05:30")
    a_book(folder)
    suspend(folder, "nightly-report", WHY, at=PAUSED_AT)
    assert status_lines(folder, NOW)[1:] == [
        "nightly-report: 30 2 * * * (+05:30, allow)",
        "  last:  -",
        '  suspended since 2024-03-01 00:02 UTC (2024-03-01 05:32 +05:30) by cronctl suspend: "db migration until '
        'Friday"',
        "  next:  2024-03-01 21:00 UTC (2024-03-02 02:30 +05:30) if resumed by then"]


def test_status_json_has_the_suspension_of_each_schedule(folder: Path) -> None:
    write(folder, "hello")
    write(folder, "nightly-report")
    a_book(folder)
    suspend(folder, "nightly-report", WHY, at=PAUSED_AT)
    hello, nightly = status(folder, NOW)["schedules"]
    assert hello["suspended"] is None
    assert nightly["suspended"] == {"by": "cronctl suspend", "since": "2024-03-01T00:02:07Z", "reason": WHY,
                                    "manifest": False, "problem": None}


def test_status_of_a_manifest_suspension_shows_its_reason_and_since_when_the_runner_saw_it(folder: Path) -> None:
    write(folder, "nightly-report", suspend=True, suspendReason="frozen")
    a_book(folder, suspended=[{"schedule": "nightly-report", "since": t("2024-03-01T00:01"), "reason": "frozen"}])
    assert status_lines(folder, NOW)[3] == '  suspended since 2024-03-01 00:01 UTC by its manifest: "frozen"'
    assert status(folder, NOW)["schedules"][0]["suspended"] == {
        "by": "manifest", "since": "2024-03-01T00:01:00Z", "reason": "frozen", "manifest": True, "problem": None}


def test_a_pause_records_reason_comes_before_the_manifests_and_one_without_takes_the_manifests(
        folder: Path) -> None:
    write(folder, "nightly-report", suspend=True, suspendReason="frozen")
    a_book(folder, suspended=[{"schedule": "nightly-report", "since": None, "reason": "frozen"}])
    suspend(folder, "nightly-report", WHY, at=PAUSED_AT)
    assert status(folder, NOW)["schedules"][0]["suspended"]["reason"] == WHY
    suspend(folder, "nightly-report", None, at=PAUSED_AT)
    assert status(folder, NOW)["schedules"][0]["suspended"] == {
        "by": "cronctl suspend", "since": "2024-03-01T00:02:07Z", "reason": "frozen", "manifest": True,
        "problem": None}


def test_status_before_the_runner_ever_ran_shows_the_suspensions_of_records_and_manifests(folder: Path) -> None:
    write(folder, "frozen", suspend=True)
    write(folder, "paused")
    suspend(folder, "paused", WHY, at=PAUSED_AT)
    frozen, paused = status(folder, NOW)["schedules"]
    assert frozen["suspended"] == {"by": "manifest", "since": None, "reason": None, "manifest": True, "problem": None}
    assert paused["suspended"]["since"] == "2024-03-01T00:02:07Z"
    assert "  suspended by its manifest (no reason given)" in status_lines(folder, NOW)


def test_a_suspended_schedule_is_never_overdue(folder: Path) -> None:
    write(folder, "tick", "* * * * *")
    a_book(folder)
    suspend(folder, "tick", WHY, at=PAUSED_AT)
    assert status(folder, t("2024-03-01T01:00"))["schedules"][0]["overdue_since"] is None
    assert not any("overdue" in line for line in status_lines(folder, t("2024-03-01T01:00")))


def test_next_of_a_suspended_schedule_says_so_then_lists_the_times_it_fires_at_if_resumed_by_then(
        folder: Path) -> None:
    write(folder, "nightly-report", "30 2 * * *")
    a_book(folder)
    suspend(folder, "nightly-report", WHY, at=PAUSED_AT)
    assert next_lines(folder, "nightly-report", 2, NOW) == [
        'nightly-report is suspended since 2024-03-01 00:02 UTC by cronctl suspend: "db migration until Friday"; '
        "it fires at these times only if resumed by then:",
        "2024-03-01 02:30 UTC", "2024-03-02 02:30 UTC"]
    resume(folder, "nightly-report", NOW)
    assert next_lines(folder, "nightly-report", 1, NOW) == ["2024-03-01 02:30 UTC"]
