"""The runner's step, as a table of rules: inputs and a state in, effects and a state out.

No process runs here and no clock is read: each test builds the ``Inputs`` the intake would
read (manifests from files of a temporary folder, trigger and request files as read, the ends
an executor reports) and looks at what ``step`` decides. The process-level tests
(test_engine*.py) prove that the shell carries these effects out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cronctl.runner import retention
from cronctl.runner.backfills import Request
from cronctl.runner.definitions import ManifestFolder
from cronctl.runner.effects import RemovePause, Say, SetAside, Start, Stop
from cronctl.runner.ends import Report
from cronctl.runner.executor import Ended, RunKey
from cronctl.runner.lifecycle import Scan
from cronctl.runner.memory import RunnerState, start_refused
from cronctl.runner.pauses import Pause
from cronctl.runner.requests import RequestFile, TriggerFile
from cronctl.runner.slots import SlotPool
from cronctl.runner.starts import waiting_reason
from cronctl.runner.step import Inputs, Stepped, step

from .support import manifest, t

START = t("2024-03-01T00:00")


class Folder:
    """A runner's folder of manifests and the state of its step, stepped minute by minute."""

    def __init__(self, path: Path, workers: int = 2) -> None:
        self.path = path
        self.manifests = ManifestFolder(path)
        self.state = RunnerState(path, SlotPool(workers))

    def write(self, name: str, schedule: str = "*/5 * * * *", command: list[str] | None = None,
              file: str | None = None, **spec: Any) -> None:
        (self.path / (file or f"{name}.yaml")).write_text(manifest(name, schedule, command or ["true"], **spec))

    def step(self, minute: int, **inputs: Any) -> Stepped:
        loaded, changed = self.manifests.scan(self.state.sources)
        scan = Scan(loaded, changed, frozenset(self.manifests.names))
        return step(Inputs(minute=minute, second=minute * 60.0, manifests=scan, **inputs), self.state)

    def started(self, stepped: Stepped) -> list[Start]:
        return [effect for effect in stepped.effects if isinstance(effect, Start)]

    def ended(self, start: Start, outcome: str = "succeeded", exit_code: int | None = 0) -> Report:
        key = start.request.key
        return Report(start.home, Ended(key, outcome, exit_code, None, "2024-03-01T00:05:00Z",
                                        "2024-03-01T00:05:01Z", None, self.path / "runs" / str(key), {}))

    def rows(self, schedule: str) -> list[tuple[Any, ...]]:
        return [(row["nominal"], row["outcome"]) for row in self.state.journal.get(schedule, [])]


def said(stepped: Stepped, event: str) -> list[str]:
    return [effect.message for effect in stepped.effects if isinstance(effect, Say) and effect.event == event]


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    return Folder(tmp_path)


# -- manifests: added, edited, held, retired ------------------------------------------------------


def test_a_new_manifest_adds_its_schedule_which_starts_at_its_time_with_its_command(folder: Folder) -> None:
    folder.write("report", command=["sh", "-c", "echo $X"], env={"X": "1"})
    assert folder.started(folder.step(START)) == []
    [start] = folder.started(folder.step(START + 5))
    assert (start.request.schedule, start.request.nominal, list(start.request.command)) == (
        "report", START + 5, ["sh", "-c", "echo $X"])
    assert dict(start.request.env) == {"X": "1"} and start.request.cwd == str(folder.path)
    assert start.said.message.startswith("report: fired report-1 for 2024-03-01 00:05 UTC (scheduled, attempt 1)")


def test_due_firings_take_the_free_slots_in_nominal_time_then_name_order_and_the_rest_wait(folder: Folder) -> None:
    for name in ("c", "a", "b"):
        folder.write(name)
    folder.step(START)
    starts = folder.started(folder.step(START + 5))
    assert [s.request.schedule for s in starts] == ["a", "b"]
    assert waiting_reason(folder.state) == "queued: 2/2 workers busy"
    freed = folder.step(START + 5, ends=[folder.ended(starts[0])])
    assert [s.request.schedule for s in folder.started(freed)] == ["c"]  # at once, in the step of the end


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


def test_an_invalid_manifest_holds_its_schedule_without_counting_missed_times_until_fixed(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    folder.write("report", concurrencyPolicy="Sometimes")
    held = folder.step(START + 1)
    assert [m for m in said(held, "invalid") if "its schedule does not fire until the manifest is fixed" in m]
    for minute in range(START + 2, START + 33):
        assert folder.started(folder.step(minute)) == []
    folder.write("report")
    fixed = folder.step(START + 33)
    assert said(fixed, "valid") == [f"report: the manifest {folder.path / 'report.yaml'} is valid again; the "
                                    "schedule fires again"]
    assert folder.started(fixed) == [] and folder.rows("report") == []  # 00:05 ... 00:30 were not missed
    assert [s.request.nominal for s in folder.started(folder.step(START + 35))] == [START + 35]


def test_a_deleted_manifest_retires_its_schedule_stopping_its_runs_and_its_pause_record(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    folder.state.pauses["report"] = Pause("maintenance", "2024-03-01T00:00:00Z")
    (folder.path / "report.yaml").unlink()
    retired = folder.step(START + 6)
    [stop] = [e for e in retired.effects if isinstance(e, Stop)]
    assert (stop.run_id, stop.reason) == (start.run_id, "stopped")
    assert [e.schedule for e in retired.effects if isinstance(e, RemovePause)] == ["report"]
    assert said(retired, "retired") == [
        f"report: retired, its manifest report.yaml is gone (deleted, or the schedule renamed); stopping report-1; "
        f"its pause record {folder.path / 'paused' / 'report.json'} is deleted"]
    assert "report" not in folder.state.controller.state.jobs
    assert folder.state.retired == [{"schedule": "report", "at": START + 6}]


def test_a_waiting_firing_of_a_retired_schedule_is_canceled_and_recorded(tmp_path: Path) -> None:
    folder = Folder(tmp_path, workers=1)
    folder.write("busy")
    folder.write("report")
    folder.step(START)
    folder.step(START + 5)  # busy takes the one slot; report waits
    (folder.path / "report.yaml").unlink()
    folder.step(START + 6)
    assert folder.rows("report") == [(START + 5, "canceled")]


def test_a_second_definition_of_a_schedule_is_named_and_ignored_the_first_file_keeps_it(folder: Folder) -> None:
    folder.write("report", command=["first"], file="report.yaml")
    folder.step(START)
    folder.write("report", command=["copy"], file="a-backup.yaml")  # sorts first, came second
    stepped = folder.step(START + 5)
    assert folder.state.sources["report"] == "report.yaml"
    assert [list(s.request.command) for s in folder.started(stepped)] == [["first"]]
    assert [row["file"] for row in folder.state.invalid] == [str(folder.path / "a-backup.yaml")]


def test_a_run_id_is_never_reused_by_a_schedule_of_a_retired_name(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    folder.step(START + 6, ends=[folder.ended(start)])
    (folder.path / "report.yaml").unlink()
    folder.step(START + 7)
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


@pytest.mark.parametrize("trigger, suffix, why", [
    (TriggerFile(Path("t.json"), "", None, "not a trigger (x)"), ".broken", "not a trigger (x)"),
    (TriggerFile(Path("t.json"), "t.1", "nobody"), ".broken", "no schedule named 'nobody'"),
])
def test_a_trigger_file_that_asks_for_nothing_is_set_aside(folder: Folder, trigger: TriggerFile, suffix: str,
                                                            why: str) -> None:
    folder.write("report")
    stepped = folder.step(START, triggers=[trigger])
    assert [(e.path, e.suffix, e.why) for e in stepped.effects if isinstance(e, SetAside)] == [
        (trigger.path, suffix, why)]


def test_a_trigger_while_the_node_switch_is_off_is_a_canceled_row_saying_why(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    trigger = TriggerFile(folder.path / "triggers" / "t.json", "t.1", "report")
    stepped = folder.step(START + 1, switched_off=True, triggers=[trigger])
    assert folder.started(stepped) == []
    [row] = folder.state.journal["report"]
    assert (row["outcome"], row["reason"], row["trigger"]) == ("canceled", "manual", "t.1")
    assert "node switch is off" in row["note"]


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
    nominals = []
    for minute in range(START + 1, START + 5):
        for start in folder.started(stepped):
            nominals.append(start.request.nominal)
            assert start.home == "backfill/b.1"
        ends = [folder.ended(start) for start in folder.started(stepped)]
        stepped = folder.step(minute + 1, ends=ends)  # the next one starts as the last ends
    assert nominals == [START - 180, START - 120, START - 60]


def test_a_backfill_the_core_refuses_is_set_aside_as_refused(folder: Folder) -> None:
    folder.write("report", schedule="0 * * * *")
    folder.step(START)
    request = RequestFile(folder.path / "backfills" / "b.json", "b.1", Request("report", START + 60, START + 120))
    [aside] = [e for e in folder.step(START + 1, backfills=[request]).effects if isinstance(e, SetAside)]
    assert aside.suffix == ".refused" and aside.why.startswith("backfill of report refused: ")


# -- ends, retries, timeouts, policies ------------------------------------------------------------------


def test_an_attempt_that_succeeded_is_one_history_row_and_frees_its_slot(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    ended = folder.step(START + 6, ends=[folder.ended(start)])
    assert said(ended, "ended") == ["report: report-1 succeeded (exit 0 after 1 s)"]
    assert folder.rows("report") == [(START + 5, "succeeded")]
    assert folder.state.slots.free_count == 2 and folder.state.firings == {}
    assert folder.state.to_acknowledge == [(None, start.request.key)]


def test_a_failed_attempt_with_retries_left_waits_for_its_retry_then_starts_attempt_2(folder: Folder) -> None:
    folder.write("report", maxRetries=1, retryDelayMinutes=2)
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    failed = folder.step(START + 6, ends=[folder.ended(start, "failed", 1)])
    assert said(failed, "retry") == ["report: report-1 attempt 1/2 failed (exit 1 after 1 s); attempt 2/2 at "
                                     "2024-03-01 00:08 UTC"]
    assert folder.started(folder.step(START + 7)) == []
    [again] = folder.started(folder.step(START + 8))
    assert (again.run_id, again.request.attempt, again.request.key) == (
        "report-1", 2, RunKey("report", START + 5, 2))


def test_a_run_past_its_timeout_is_stopped_and_a_waiting_one_is_dropped_timed_out(tmp_path: Path) -> None:
    folder = Folder(tmp_path, workers=1)
    folder.write("slow", timeoutMinutes=2)
    folder.write("waits", timeoutMinutes=2)
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    stepped = folder.step(START + 7)
    assert [(e.run_id, e.reason) for e in stepped.effects if isinstance(e, Stop)] == [(start.run_id, "timed_out")]
    assert folder.rows("waits") == [(START + 5, "timed_out")]


@pytest.mark.parametrize("policy, effect", [("Forbid", "skipped"), ("Replace", "stopped")])
def test_a_due_time_while_a_run_is_active_is_skipped_under_forbid_and_replaces_under_replace(
        folder: Folder, policy: str, effect: str) -> None:
    folder.write("report", concurrencyPolicy=policy)
    folder.step(START)
    [first] = folder.started(folder.step(START + 5))
    stepped = folder.step(START + 10)
    if effect == "skipped":
        assert said(stepped, "skipped") == ["report: skipped 2024-03-01 00:10 UTC (Forbid: a run is active)"]
        assert folder.rows("report") == [(START + 10, "skipped")]
    else:
        assert [(e.run_id, e.reason) for e in stepped.effects if isinstance(e, Stop)] == [(first.run_id, "stopped")]


def test_a_clock_that_went_back_fires_nothing_again(folder: Folder) -> None:
    folder.write("report")
    folder.step(START)
    [start] = folder.started(folder.step(START + 5))
    folder.step(START + 6, ends=[folder.ended(start)])
    assert folder.started(folder.step(START + 4)) == [] and folder.started(folder.step(START + 5)) == []


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
