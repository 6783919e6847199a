"""The runner's step, as a table of rules: inputs and a state in, effects and a state out.

No process runs here and no clock is read: each test builds the ``Inputs`` the intake would
read (manifests from files of a temporary folder, trigger and request files as read, the ends
an executor reports) and looks at what ``step`` decides. The process-level tests
(test_engine*.py) prove that the shell carries these effects out.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from cronctl.runner import retention
from cronctl.runner.folder import ManifestFolder
from cronctl.runner.effects import RemovePause, Say, SetAside, Start, Stop
from cronctl.runner.ends import Report
from cronctl.runner.lifecycle import RETIRED_NOTE, Scan
from cronctl.runner.memory import RunnerState, start_refused
from cronctl.runner.requests import RequestFile, TriggerFile
from cronctl.runner.slots import SlotPool
from cronctl.runner.starts import waiting_reason
from cronctl.runner.step import Inputs, Stepped, step
from cronctl.runner.values import Ended, Pause, Request, RunKey

from .support import manifest, t

START = t("2024-03-01T00:00")
UNREAD = object()  # Folder.step: the manifests as the intake reads them (None: the folder could not be read)


class Folder:
    """A runner's folder of manifests and the state of its step, stepped minute by minute."""

    def __init__(self, path: Path, workers: int = 2) -> None:
        self.path = path
        self.manifests = ManifestFolder(path)
        self.state = RunnerState(path, SlotPool(workers))

    def write(self, name: str, schedule: str = "*/5 * * * *", command: list[str] | None = None,
              file: str | None = None, container: dict[str, Any] | None = None, **spec: Any) -> None:
        """A manifest; ``container``: more fields of its container (args, workingDir)."""
        text = manifest(name, schedule, command or ["true"], **spec)
        if container:
            body = json.loads(text)
            body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0].update(container)
            text = json.dumps(body)
        (self.path / (file or f"{name}.yaml")).write_text(text)

    def step(self, minute: int, manifests: Any = UNREAD, **inputs: Any) -> Stepped:
        if manifests is UNREAD:
            loaded, changed = self.manifests.scan(self.state.sources)
            manifests = Scan(loaded, changed, frozenset(self.manifests.names))
        return step(Inputs(minute=minute, second=minute * 60.0, manifests=manifests, **inputs), self.state)

    def started(self, stepped: Stepped) -> list[Start]:
        return [effect for effect in stepped.effects if isinstance(effect, Start)]

    def ended(self, start: Start, outcome: str = "succeeded", exit_code: int | None = 0,
              signal: int | None = None) -> Report:
        key = start.request.key
        return Report(start.home, Ended(key, outcome, exit_code, signal, "2024-03-01T00:05:00Z",
                                        "2024-03-01T00:05:01Z", None, self.path / "runs" / str(key), {}))

    def rows(self, schedule: str) -> list[tuple[Any, ...]]:
        return [(row["nominal"], row["outcome"]) for row in self.state.journal.get(schedule, [])]


def said(stepped: Stepped, event: str) -> list[str]:
    return [effect.message for effect in stepped.effects if isinstance(effect, Say) and effect.event == event]


def stops(stepped: Stepped) -> list[tuple[str, str]]:
    return [(effect.run_id, effect.reason) for effect in stepped.effects if isinstance(effect, Stop)]


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    return Folder(tmp_path)


# -- manifests: added, edited, held, retired ------------------------------------------------------


def test_a_new_manifest_adds_its_schedule_which_starts_at_its_time_with_its_command(folder: Folder) -> None:
    folder.write("report", command=["sh", "-c", "echo $X"], env={"X": "1"})
    assert folder.started(folder.step(START)) == []
    assert "report" in folder.state.controller.state.jobs
    [start] = folder.started(folder.step(START + 5))
    assert (start.request.schedule, start.request.nominal, list(start.request.command)) == (
        "report", START + 5, ["sh", "-c", "echo $X"])
    assert dict(start.request.env) == {"X": "1"} and start.request.cwd == str(folder.path)
    assert (start.run_id, start.home, start.request.attempt) == ("report-1", None, 1)
    assert start.said.message.startswith("report: fired report-1 for 2024-03-01 00:05 UTC (scheduled, attempt 1)")
    assert folder.state.firings["report-1"].slot == "worker-1"


@pytest.mark.parametrize("working_dir, cwd", [
    (None, "{folder}"),  # the runner's folder
    ("jobs/report", "{folder}/jobs/report"),  # relative: to the runner's folder
    ("/srv/report", "/srv/report"),  # absolute: as it is
])
def test_a_start_runs_the_manifests_args_in_its_working_directory(folder: Folder, working_dir: str | None,
                                                                   cwd: str) -> None:
    container: dict[str, Any] = {"args": ["--day", "$(DAY)"]}
    if working_dir is not None:
        container["workingDir"] = working_dir
    folder.write("report", command=["report.sh"], env={"DAY": "friday"}, container=container)
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    assert (list(start.request.command), list(start.request.args)) == (["report.sh"], ["--day", "friday"])
    assert start.request.cwd == cwd.format(folder=folder.path)


def test_due_firings_take_the_free_slots_in_nominal_time_then_name_order_and_the_rest_wait(folder: Folder) -> None:
    for name in ("c", "a", "b"):
        folder.write(name)
    folder.step(START)
    starts = folder.started(folder.step(START + 5))
    assert [s.request.schedule for s in starts] == ["a", "b"]
    assert waiting_reason(folder.state) == "queued: 2/2 workers busy"
    assert folder.state.firings["c-1"].slot is None
    freed = folder.step(START + 5, ends=[folder.ended(starts[0])])
    assert [s.request.schedule for s in folder.started(freed)] == ["c"]  # at once, in the step of the end
    assert waiting_reason(folder.state) is None


def test_an_older_waiting_firing_takes_a_freed_slot_before_a_newer_one_whatever_its_name(tmp_path: Path) -> None:
    folder = Folder(tmp_path, workers=1)
    folder.write("b", schedule="5 * * * *")
    folder.write("z", schedule="5 * * * *")
    folder.write("a", schedule="7 * * * *")
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    assert first.request.schedule == "b"  # z waits
    assert folder.started(folder.step(START + 7)) == []  # a waits too
    [next_one] = folder.started(folder.step(START + 8, ends=[folder.ended(first)]))
    assert (next_one.request.schedule, next_one.request.nominal) == ("z", START + 5)


def test_a_start_the_shell_could_not_carry_out_gives_the_slot_back_and_is_tried_again(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    start_refused(folder.state, start.run_id)
    assert folder.state.slots.free_count == 2
    assert [s.run_id for s in folder.started(folder.step(START + 5))] == [start.run_id]


def test_an_edited_manifest_changes_later_firings_only(folder: Folder) -> None:
    folder.write("report", command=["old"])
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    folder.write("report", command=["new"])
    folder.step(START + 6, ends=[folder.ended(first)])
    [second] = folder.started(folder.step(START + 10))
    assert (list(first.request.command), list(second.request.command)) == (["old"], ["new"])


@pytest.mark.parametrize("policy, workers", [
    ("WaitForLast", 2),  # the 00:10 time is enqueued behind the active run: a snapshot of its command
    ("Allow", 1),  # the 00:10 firing waits for the one slot with the command it was launched with
])
def test_a_firing_already_waiting_when_its_manifest_is_edited_keeps_the_command_it_became_due_with(
        tmp_path: Path, policy: str, workers: int) -> None:
    folder = Folder(tmp_path, workers=workers)
    folder.write("report", command=["old"], concurrencyPolicy=policy)
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    assert folder.started(folder.step(START + 10)) == []  # 00:10 waits
    folder.write("report", command=["new"], concurrencyPolicy=policy)
    folder.step(START + 11)
    [waited] = folder.started(folder.step(START + 12, ends=[folder.ended(first)]))
    assert (waited.request.nominal, list(waited.request.command)) == (START + 10, ["old"])
    folder.step(START + 13, ends=[folder.ended(waited)])
    [later] = folder.started(folder.step(START + 15))
    assert (later.request.nominal, list(later.request.command)) == (START + 15, ["new"])
    assert folder.state.snapshots == {}


def test_an_invalid_manifest_holds_its_schedule_without_counting_missed_times_until_fixed(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    folder.write("report", concurrencyPolicy="Sometimes")
    held = folder.step(START + 1)
    assert [m for m in said(held, "invalid") if "its schedule does not fire until the manifest is fixed" in m]
    assert "report" in folder.state.held and "report" in folder.state.controller.state.jobs
    for minute in range(START + 2, START + 33):
        assert folder.started(folder.step(minute)) == []
    folder.write("report")
    fixed = folder.step(START + 33)
    assert said(fixed, "valid") == [f"report: the manifest {folder.path / 'report.yaml'} is valid again; the "
                                    "schedule fires again"]
    assert folder.started(fixed) == [] and folder.rows("report") == []  # 00:05 ... 00:30 were not missed
    assert folder.state.held == {} and folder.state.invalid == []
    assert [s.request.nominal for s in folder.started(folder.step(START + 35))] == [START + 35]


def test_a_manifest_that_no_longer_parses_holds_its_schedule_rather_than_retiring_it(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    (folder.path / "report.yaml").write_text("spec: [half saved")
    broken = folder.step(START + 1)
    assert said(broken, "retired") == [] and "report" in folder.state.controller.state.jobs
    [line] = said(broken, "invalid")
    assert "not valid YAML" in line and line.endswith("(its schedule does not fire until the manifest is fixed)")
    assert folder.started(folder.step(START + 5)) == []
    folder.write("report")
    assert said(folder.step(START + 6), "valid") and folder.started(folder.step(START + 10))


def test_a_schedule_whose_manifest_is_invalid_from_the_start_is_not_loaded(folder: Folder) -> None:
    folder.write("report", concurrencyPolicy="Sometimes")
    first = folder.step(START)
    [line] = said(first, "invalid")
    assert line.endswith("(not loaded until it is fixed)")
    assert folder.state.controller.state.jobs == {} and folder.started(folder.step(START + 5)) == []


def test_with_the_folder_unreadable_the_schedules_go_on_as_last_read(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    (folder.path / "report.yaml").unlink()  # not seen: the folder could not be read
    stepped = folder.step(START + 5, manifests=None)
    assert said(stepped, "retired") == [] and len(folder.started(stepped)) == 1


def test_a_deleted_manifest_retires_its_schedule_stopping_its_runs_and_its_pause_record(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    folder.state.pauses["report"] = Pause("maintenance", "2024-03-01T00:00:00Z")
    (folder.path / "report.yaml").unlink()
    retired = folder.step(START + 6)
    assert stops(retired) == [(start.run_id, "stopped")]
    assert [e.schedule for e in retired.effects if isinstance(e, RemovePause)] == ["report"]
    assert said(retired, "retired") == [
        f"report: retired, its manifest report.yaml is gone (deleted, or the schedule renamed); stopping report-1; "
        f"its pause record {folder.path / 'paused' / 'report.json'} is deleted"]
    assert "report" not in folder.state.controller.state.jobs and "report" not in folder.state.sources
    assert folder.state.retired == [{"schedule": "report", "at": START + 6}]
    assert folder.state.firings["report-1"].stopping == "stopped"  # keeps its slot until its process is gone


def test_a_waiting_firing_of_a_retired_schedule_is_canceled_and_recorded(tmp_path: Path) -> None:
    folder = Folder(tmp_path, workers=1)
    folder.write("busy")
    folder.write("report")
    folder.step(START)
    folder.step(START + 5)  # busy takes the one slot; report waits
    (folder.path / "report.yaml").unlink()
    retired = folder.step(START + 6)
    assert stops(retired) == [] and "report-1" not in folder.state.firings
    assert folder.rows("report") == [(START + 5, "canceled")]
    assert folder.state.journal["report"][0]["note"] == RETIRED_NOTE
    assert said(retired, "retired")[0].endswith("nothing was running")
    assert [e.schedule for e in retired.effects if isinstance(e, RemovePause)] == ["report"]


def test_a_time_queued_behind_the_active_run_of_a_retired_schedule_is_canceled_and_its_snapshot_forgotten(
        folder: Folder) -> None:
    folder.write("report", concurrencyPolicy="WaitForLast")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    folder.step(START + 10)  # 00:10 waits for report-1
    assert list(folder.state.snapshots) == [f"report@{START + 10}"]
    (folder.path / "report.yaml").unlink()
    retired = folder.step(START + 11)
    assert stops(retired) == [(start.run_id, "stopped")]
    assert [(row["nominal"], row["outcome"], row["note"]) for row in folder.state.journal["report"]] == [
        (START + 10, "canceled", RETIRED_NOTE)]
    assert folder.state.snapshots == {}


def test_a_second_definition_of_a_schedule_is_named_and_ignored_the_first_file_keeps_it(folder: Folder) -> None:
    folder.write("report", command=["first"], file="report.yaml")
    folder.step(START)
    folder.write("report", command=["copy"], file="a-backup.yaml")  # sorts first, came second
    stepped = folder.step(START + 5)
    assert folder.state.sources["report"] == "report.yaml"
    assert [list(s.request.command) for s in folder.started(stepped)] == [["first"]]
    assert [row["file"] for row in folder.state.invalid] == [str(folder.path / "a-backup.yaml")]
    [line] = said(stepped, "invalid")
    assert line == (f"{folder.path / 'a-backup.yaml'}: CronSchedule 'report': metadata.name: already defined in "
                    f"{folder.path / 'report.yaml'} (ignored)")


def ran_once_then_retired(folder: Folder) -> Start:
    """report ran at 00:05 and succeeded; its manifest was deleted at 00:07."""
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    folder.step(START + 6, ends=[folder.ended(start)])
    (folder.path / "report.yaml").unlink()
    folder.step(START + 7)
    return start


def test_a_run_id_is_never_reused_by_a_schedule_of_a_retired_name(folder: Folder) -> None:
    ran_once_then_retired(folder)
    folder.write("report")
    folder.step(START + 8)
    assert [s.run_id for s in folder.started(folder.step(START + 10))] == ["report-2"]


# -- holds: the node switch and suspensions ---------------------------------------------------------


def test_with_the_node_switch_off_nothing_fires_and_no_time_is_missed_when_it_is_on_again(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    off = folder.step(START + 1, switched_off=True)
    assert [m for m in said(off, "switch") if "the node switch is off" in m]
    assert all(folder.started(folder.step(m, switched_off=True)) == [] for m in range(START + 2, START + 21))
    on = folder.step(START + 21)
    assert said(on, "switch") == ["the node switch is on again: the schedules fire"]
    assert folder.started(on) == [] and folder.rows("report") == []
    assert len(folder.started(folder.step(START + 25))) == 1


@pytest.mark.parametrize("switched_off, lines", [
    (True, 1),  # off at the first step: said
    (False, 0),  # on at the first step: nothing to say
])
def test_the_first_step_says_the_node_switch_only_when_it_is_off(folder: Folder, switched_off: bool,
                                                                lines: int) -> None:
    folder.write("report")
    assert len(said(folder.step(START, switched_off=switched_off), "switch")) == lines
    assert said(folder.step(START + 1, switched_off=switched_off), "switch") == []  # said once


@pytest.mark.parametrize("first_step_paused, lines", [
    (False, ["suspended"]),
    (True, []),  # the first step says nothing of schedules suspended already
])
def test_a_pause_record_suspends_its_schedule_and_its_removal_resumes_it(
        folder: Folder, first_step_paused: bool, lines: list[str]) -> None:
    folder.write("report")
    pause = {"report": Pause("maintenance", "2024-03-01T00:00:00Z")}
    first = folder.step(START, pauses=pause if first_step_paused else {})
    paused = folder.step(START + 1, pauses=pause)
    assert [e.event for e in first.effects + paused.effects if isinstance(e, Say) and e.event == "suspended"] == lines
    assert folder.started(folder.step(START + 5, pauses=pause)) == []
    resumed = folder.step(START + 6, pauses={})
    assert said(resumed, "resumed") == [
        'report: resumed (it was suspended by cronctl suspend: "maintenance"); next fire 2024-03-01 00:10 UTC']
    assert folder.rows("report") == [] and len(folder.started(folder.step(START + 10, pauses={}))) == 1


@pytest.mark.parametrize("pause, spec, level, says", [
    (Pause("db", "2024-03-01T00:01:00Z"), {}, "info", 'suspended by cronctl suspend: "db"'),
    (Pause(None, None, "paused/report.json: not JSON (x)"), {}, "warning",  # a damaged record pauses all the same
     "its pause record is unreadable (paused/report.json: not JSON (x))"),
    (None, {"suspend": True, "suspendReason": "db"}, "info", 'suspended by its manifest: "db"'),
])
def test_a_suspended_schedule_fires_nothing_and_its_line_says_by_whom_and_why(
        folder: Folder, pause: Pause | None, spec: dict[str, Any], level: str, says: str) -> None:
    folder.write("report")
    folder.step(START)
    folder.write("report", **spec)
    pauses = {} if pause is None else {"report": pause}
    suspended = folder.step(START + 1, pauses=pauses)
    [line] = [e for e in suspended.effects if isinstance(e, Say) and e.event == "suspended"]
    assert says in line.message and line.level == level
    assert folder.started(folder.step(START + 5, pauses=pauses)) == [] and folder.rows("report") == []


def test_pause_records_that_could_not_be_read_are_kept_as_last_read(folder: Folder) -> None:
    folder.write("report")
    folder.step(START, pauses={"report": Pause(None, "2024-03-01T00:00:00Z")})
    assert folder.started(folder.step(START + 5, pauses=None)) == []


# -- manual triggers and backfills ----------------------------------------------------------------------


def test_a_manual_trigger_runs_whatever_the_policy_in_a_folder_of_its_own(folder: Folder) -> None:
    folder.write("report", concurrencyPolicy="Forbid")
    folder.step(START)
    folder.step(START + 5)
    trigger = TriggerFile(folder.path / "triggers" / "t.json", "t.1", "report")
    [start] = folder.started(folder.step(START + 6, triggers=[trigger]))
    assert (start.request.reason, start.home) == ("manual", "manual/t.1")
    assert folder.state.taken == {str(trigger.path): trigger.path}  # deleted once the book is saved


def test_a_manual_trigger_of_a_suspended_schedule_still_runs(folder: Folder) -> None:
    folder.write("report")
    pauses = {"report": Pause("maintenance", None)}
    folder.step(START, pauses=pauses)
    trigger = TriggerFile(folder.path / "triggers" / "t.json", "t.1", "report")
    [start] = folder.started(folder.step(START + 1, pauses=pauses, triggers=[trigger]))
    assert (start.request.reason, start.request.nominal) == ("manual", START + 1)


@pytest.mark.parametrize("trigger, suffix, why", [
    (TriggerFile(Path("t.json"), "", None, "not a trigger (x)"), ".broken", "not a trigger (x)"),
    (TriggerFile(Path("t.json"), "t.1", "nobody"), ".broken", "no schedule named 'nobody'"),
    (TriggerFile(Path("t.json"), "t.1", "broken"), ".broken", "the manifest of 'broken' is invalid: "),
])
def test_a_trigger_file_that_asks_for_nothing_is_set_aside(folder: Folder, trigger: TriggerFile, suffix: str,
                                                            why: str) -> None:
    folder.write("report")
    folder.write("broken", concurrencyPolicy="Sometimes")  # invalid from the start: never loaded
    stepped = folder.step(START, triggers=[trigger])
    [aside] = [e for e in stepped.effects if isinstance(e, SetAside)]
    assert (aside.path, aside.suffix) == (trigger.path, suffix) and aside.why.startswith(why)
    assert folder.started(stepped) == [] and folder.state.taken == {}


@pytest.mark.parametrize("switched_off, invalid, note", [
    (True, False, "the node switch is off (cronctl.disabled exists)"),
    (False, True, "its manifest is invalid: "),
])
def test_a_trigger_of_a_schedule_that_cannot_fire_is_a_canceled_row_saying_why(
        folder: Folder, switched_off: bool, invalid: bool, note: str) -> None:
    folder.write("report")
    folder.step(START)
    if invalid:
        folder.write("report", concurrencyPolicy="Sometimes")
    trigger = TriggerFile(folder.path / "triggers" / "t.json", "t.1", "report")
    stepped = folder.step(START + 1, switched_off=switched_off, triggers=[trigger])
    assert folder.started(stepped) == []
    [row] = folder.state.journal["report"]
    assert (row["outcome"], row["reason"], row["trigger"]) == ("canceled", "manual", "t.1")
    assert row["note"].startswith(note)
    assert [m for m in said(stepped, "canceled") if "manual trigger t.json not run" in m]
    assert str(trigger.path) in folder.state.taken  # consumed all the same


def test_a_trigger_the_book_knows_already_is_only_deleted(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    trigger = TriggerFile(folder.path / "triggers" / "t.json", "t.1", "report")
    folder.step(START + 1, triggers=[trigger])
    folder.state.taken.clear()  # a crash after the save, before the file was deleted
    assert folder.started(folder.step(START + 1, triggers=[trigger])) == []
    assert str(trigger.path) in folder.state.taken


def test_a_backfill_launches_its_times_oldest_first_one_at_a_time(folder: Folder) -> None:
    folder.write("report", schedule="0 * * * *")
    folder.step(START)
    request = RequestFile(folder.path / "backfills" / "b.json", "b.1",
                          Request("report", START - 180, START - 60))
    stepped = folder.step(START + 1, backfills=[request])
    assert [m for m in said(stepped, "backfill") if "backfill b.1 of 3 schedule times" in m]
    assert folder.state.taken == {str(request.path): request.path}
    nominals = []
    complete = []
    for minute in range(START + 1, START + 5):
        starts = folder.started(stepped)
        assert len(starts) <= 1  # one at a time
        for start in starts:
            nominals.append(start.request.nominal)
            assert (start.home, start.request.reason) == ("backfill/b.1", "backfill")
        stepped = folder.step(minute + 1, ends=[folder.ended(start) for start in starts])  # the next one starts
        complete += [m for m in said(stepped, "backfill") if "complete" in m]
    assert nominals == [START - 180, START - 120, START - 60]
    assert complete == ["report: backfill b.1 complete: 3 of 3 schedule times from 2024-02-29 21:00 UTC to "
                        "2024-02-29 23:00 UTC launched"]
    assert [row["backfill"] for row in folder.state.journal["report"]] == ["b.1"] * 3


def test_a_backfill_of_a_held_schedule_waits_until_it_fires_again(folder: Folder) -> None:
    folder.write("report", schedule="0 * * * *")
    folder.step(START)
    request = RequestFile(folder.path / "backfills" / "b.json", "b.1", Request("report", START - 120, START - 60))
    stepped = folder.step(START + 1, backfills=[request], switched_off=True)
    assert said(stepped, "backfill")[0].endswith("its runs wait: the node switch is off (cronctl.disabled exists)")
    assert folder.started(stepped) == []
    assert [s.request.nominal for s in folder.started(folder.step(START + 2))] == [START - 120]


def test_a_backfill_the_core_refuses_is_set_aside_as_refused(folder: Folder) -> None:
    folder.write("report", schedule="0 * * * *")
    folder.step(START)
    request = RequestFile(folder.path / "backfills" / "b.json", "b.1", Request("report", START + 60, START + 120))
    stepped = folder.step(START + 1, backfills=[request])
    [aside] = [e for e in stepped.effects if isinstance(e, SetAside)]
    assert aside.suffix == ".refused" and aside.why.startswith("backfill of report refused: ")
    assert said(stepped, "backfill") == [] and folder.state.taken == {}
    assert folder.state.controller.state.jobs["report"].state.backfill is None


@pytest.mark.parametrize("request_file, why", [
    (RequestFile(Path("b.json"), "", None, "not a backfill request (x)"), "not a backfill request (x)"),
    (RequestFile(Path("b.json"), "b.1", Request("nobody", START - 60, START - 60)), "no schedule named 'nobody'"),
])
def test_a_backfill_file_that_asks_for_nothing_is_set_aside_as_broken(folder: Folder, request_file: RequestFile,
                                                                      why: str) -> None:
    folder.write("report")
    stepped = folder.step(START, backfills=[request_file])
    assert [(e.path, e.suffix, e.why) for e in stepped.effects if isinstance(e, SetAside)] == [
        (request_file.path, ".broken", why)]


# -- ends, retries, timeouts, policies ------------------------------------------------------------------


@pytest.mark.parametrize("outcome, exit_code, signal, level, line", [
    ("succeeded", 0, None, "info", "report: report-1 succeeded (exit 0 after 1 s)"),
    ("failed", 3, None, "warning", "report: report-1 failed (exit 3 after 1 s)"),
    ("failed", None, 9, "warning", "report: report-1 failed (signal 9 after 1 s)"),
])
def test_an_attempt_that_ended_is_one_history_row_with_its_outcome_and_frees_its_slot(
        folder: Folder, outcome: str, exit_code: int | None, signal: int | None, level: str, line: str) -> None:
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    assert folder.state.slots.free_count == 1
    ended = folder.step(START + 6, ends=[folder.ended(start, outcome, exit_code, signal)])
    assert [(e.message, e.level) for e in ended.effects if isinstance(e, Say) and e.event == "ended"] == [
        (line, level)]
    [row] = folder.state.journal["report"]
    assert (row["run"], row["nominal"], row["outcome"], row["attempts"], row["exit_code"], row["signal"]) == (
        "report-1", START + 5, outcome, 1, exit_code, signal)
    assert folder.state.slots.free_count == 2 and folder.state.firings == {}
    assert folder.state.to_acknowledge == [(None, start.request.key)]


def test_an_end_reported_again_for_a_run_already_over_changes_nothing_but_is_acknowledged(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    folder.step(START + 6, ends=[folder.ended(start)])
    again = folder.step(START + 7, ends=[folder.ended(start, "failed", 1)])
    assert said(again, "ended") == [] and folder.rows("report") == [(START + 5, "succeeded")]
    assert folder.state.to_acknowledge == [(None, start.request.key)] * 2


def test_a_failed_attempt_with_retries_left_waits_for_its_retry_then_starts_attempt_2(folder: Folder) -> None:
    folder.write("report", maxRetries=1, retryDelayMinutes=2)
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    failed = folder.step(START + 6, ends=[folder.ended(start, "failed", 1)])
    assert said(failed, "retry") == ["report: report-1 attempt 1/2 failed (exit 1 after 1 s); attempt 2/2 at "
                                     "2024-03-01 00:08 UTC"]
    firing = folder.state.firings["report-1"]
    assert (firing.retry_due, firing.slot) == (START + 8, None) and folder.rows("report") == []
    assert folder.started(folder.step(START + 7)) == []
    [again] = folder.started(folder.step(START + 8))
    assert (again.run_id, again.request.attempt, again.request.key) == (
        "report-1", 2, RunKey("report", START + 5, 2))
    last = folder.step(START + 9, ends=[folder.ended(again, "failed", 1)])  # no retries left: the run is over
    assert said(last, "retry") == [] and folder.state.firings == {}
    [row] = folder.state.journal["report"]
    assert (row["outcome"], row["attempts"]) == ("failed", 2)


@pytest.mark.parametrize("limits", [
    {},
    {"failedJobsHistoryLimit": 0},  # the core drops the timed-out run at once: its verdict is kept all the same
])
def test_a_run_past_its_timeout_is_stopped_and_a_waiting_one_is_dropped_timed_out(
        tmp_path: Path, limits: dict[str, Any]) -> None:
    folder = Folder(tmp_path, workers=1)
    # maxRetries: the core times the run on the runner's clock (without, the wrapper does, on the run's own)
    folder.write("slow", timeoutMinutes=2, maxRetries=1, **limits)
    folder.write("waits", timeoutMinutes=2, maxRetries=1, **limits)
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    assert start.request.schedule == "slow"
    assert folder.state.firings["waits-1"].slot is None
    stepped = folder.step(START + 7)
    [stop] = [e for e in stepped.effects if isinstance(e, Stop)]
    assert (stop.run_id, stop.reason) == (start.run_id, "timed_out")
    assert stop.said.message.startswith("slow: slow-1 timed out (timeoutMinutes 2): stopping it")
    assert folder.rows("waits") == [(START + 5, "timed_out")] and "waits-1" not in folder.state.firings
    assert folder.started(stepped) == []  # the slot is slow-1's until its process is gone
    gone = folder.step(START + 8, ends=[folder.ended(start, stop.reason, None, 15)])  # as the executor reports it
    assert folder.rows("slow") == [(START + 5, "timed_out")] and stops(gone) == []


def test_an_end_reported_at_the_very_minute_of_the_timeout_is_too_late_the_run_timed_out(folder: Folder) -> None:
    folder.write("report", timeoutMinutes=2, maxRetries=1)  # the core's timeout (see wrapper_timeout)
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    late = folder.step(START + 7, ends=[folder.ended(start)])  # exit 0, seen as the timeout expires
    assert said(late, "ended") == ["report: report-1 timed_out (exit 0 after 1 s)"]
    assert folder.rows("report") == [(START + 5, "timed_out")] and stops(late) == []


@pytest.mark.parametrize("seen_at, exit_code, elapsed, outcome, retries", [
    (7, 0, 1.0, "succeeded", 1),  # seen as the timeout expires: it ended after 1 s of its own time
    (1505, 0, 1.0, "succeeded", 1),  # the runner's clock stepped 25 h on before it looked
    (1505, 3, 1.0, "failed", 0),
    (7, 0, 119.0, "succeeded", 1),
    (7, 0, 120.0, "timed_out", 1),  # its own time reached the timeout: nobody was there to stop it
    (1505, 0, None, "timed_out", 1),  # a wrapper that did not measure it: the clock's verdict
    (1505, 0, None, "succeeded", 0),  # no maxRetries: the wrapper times it, and it ended on its own
])
def test_a_run_that_ended_within_its_own_timeout_keeps_its_outcome_whatever_the_clock_says_when_seen(
        folder: Folder, seen_at: int, exit_code: int, elapsed: float | None, outcome: str, retries: int) -> None:
    folder.write("report", timeoutMinutes=2, maxRetries=retries)
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    report = folder.ended(start, "succeeded" if exit_code == 0 else "failed", exit_code)
    report = Report(report.home, dataclasses.replace(report.end, elapsed_seconds=elapsed))
    seen = folder.step(START + seen_at, ends=[report])
    assert folder.rows("report") == [(START + 5, outcome)] and stops(seen) == []
    assert said(seen, "ended") == [f"report: report-1 {outcome} (exit {exit_code} after 1 s)"]


def test_a_run_its_wrapper_times_is_not_stopped_by_the_clock_and_its_wrappers_timeout_is_recorded(
        folder: Folder) -> None:
    """No maxRetries: the run's timeout is its wrapper's, on its own elapsed time (issue 45). The clock
    stepped 25 h past launch + timeout stops nothing; the wrapper's ``timed_out`` end is the outcome."""
    folder.write("report", timeoutMinutes=2)
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    assert folder.state.controller.state.jobs["report"].spec.options.timeout is None  # the core times nothing
    assert stops(folder.step(START + 1505)) == [] and "report-1" in folder.state.firings
    ended = folder.step(START + 1506, ends=[folder.ended(start, "timed_out", None, 15)])
    assert folder.rows("report") == [(START + 5, "timed_out")]
    # The core records the worker's verdict as it is (issue 44: one rule, the drivers translate), not failed.
    assert folder.state.controller.state.runs["report-1"].state == "timed_out"
    assert said(ended, "ended") == ["report: report-1 timed_out (signal 15 after 1 s)"]


# Forbid's time due while a run is active: tests/runner/test_forbid_waits.py


def test_replace_stops_the_running_run_and_launches_the_new_one(folder: Folder) -> None:
    folder.write("report", concurrencyPolicy="Replace")
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    stepped = folder.step(START + 10)
    assert stops(stepped) == [(first.run_id, "stopped")]
    assert [(s.run_id, s.request.nominal) for s in folder.started(stepped)] == [("report-2", START + 10)]


def test_replace_cancels_a_run_still_waiting_for_a_slot(tmp_path: Path) -> None:
    folder = Folder(tmp_path, workers=1)
    folder.write("a-busy", schedule="*/5 * * * *")
    folder.write("report", concurrencyPolicy="Replace")
    folder.step(START)
    folder.step(START + 5)  # a-busy takes the slot; report-1 waits
    stepped = folder.step(START + 10)
    assert stops(stepped) == [] and folder.rows("report") == [(START + 5, "canceled")]
    assert "report-1" not in folder.state.firings and "report-2" in folder.state.firings


def test_a_clock_that_went_back_fires_nothing_again(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    folder.step(START + 6, ends=[folder.ended(start)])
    for minute in (START + 4, START + 5, START + 1):
        back = folder.step(minute)
        assert folder.started(back) == [] and [e for e in back.effects if isinstance(e, Say)] == []
    assert folder.state.controller.state.clock == START + 6
    assert folder.rows("report") == [(START + 5, "succeeded")]
    assert [s.request.nominal for s in folder.started(folder.step(START + 10))] == [START + 10]


# -- retention ------------------------------------------------------------------------------------------


def test_retention_keeps_the_folders_of_kept_runs_and_runs_in_flight(folder: Folder) -> None:
    folder.write("report", successfulJobsHistoryLimit=1)
    folder.step(START)
    for minute in (START + 5, START + 10):
        [start] = folder.started(folder.step(minute))
        folder.step(minute + 1, ends=[folder.ended(start)])
    folder.started(folder.step(START + 15))  # in flight
    [prune] = [a for a in retention.plan(folder.state, "report", set()) if isinstance(a, retention.Prune)]
    assert prune.keep == {RunKey("report", START + 10), RunKey("report", START + 15)}
    assert prune.through == START + 15


def test_retention_keeps_the_folder_of_a_run_the_core_let_go_while_its_process_is_still_stopping(
        folder: Folder) -> None:
    folder.write("report", timeoutMinutes=2, maxRetries=1, failedJobsHistoryLimit=0)
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    assert [run for run, _ in stops(folder.step(START + 7))] == [start.run_id]  # the core's run is over, not kept
    [prune] = [a for a in retention.plan(folder.state, "report", set()) if isinstance(a, retention.Prune)]
    assert prune.keep == {RunKey("report", START + 5)}  # its process runs until the stop is carried out
    folder.step(START + 8, ends=[folder.ended(start, "timed_out", None, 15)])
    [prune] = [a for a in retention.plan(folder.state, "report", set()) if isinstance(a, retention.Prune)]
    assert prune.keep == frozenset()


def test_retention_leaves_a_retired_schedules_folders_with_its_history(folder: Folder) -> None:
    ran_once_then_retired(folder)
    assert retention.plan(folder.state, "report", set()) == []
    assert folder.rows("report") == [(START + 5, "succeeded")]


def test_retention_removes_a_manual_runs_folder_once_its_run_is_no_longer_kept(folder: Folder) -> None:
    folder.write("report", schedule="0 0 1 1 *", successfulJobsHistoryLimit=1)
    folder.step(START)
    homes = []
    for minute, name in ((START + 1, "t.1"), (START + 3, "t.2")):
        trigger = TriggerFile(folder.path / "triggers" / f"{name}.json", name, "report")
        [start] = folder.started(folder.step(minute, triggers=[trigger]))
        folder.step(minute + 1, ends=[folder.ended(start)])
        homes.append(start.home)
    assert homes == ["manual/t.1", "manual/t.2"]
    removed = [a.home for a in retention.plan(folder.state, "report", set()) if isinstance(a, retention.RemoveHome)]
    assert removed == ["manual/t.1"]  # t.2's run is the one successfulJobsHistoryLimit keeps
