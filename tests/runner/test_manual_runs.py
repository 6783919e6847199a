"""Manual runs have their own identity: every trigger file runs exactly one process, in a folder
of its own, whatever else runs that minute; the node switch applies to them; a trigger file is
consumed once, also across a crash. The clock is injected; the runs are real processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cronctl.runner.engine import Runner
from cronctl.runner.views import ViewError, trigger

from .support import SOURCE_ROOT, Clock, journal, manifest, t, until

COUNT = ["sh", "-c", 'echo "$CRONCTL_REASON $CRONCTL_NOMINAL_TIME" >> count']


def a_runner(folder: Path, clock: Clock, said: list[str] | None = None, workers: int = 2) -> Runner:
    r = Runner(folder, clock, workers, say=(said.append if said is not None else lambda text: None),
               grace_seconds=0.3)
    assert r.open()
    return r


def ask(folder: Path, name: str) -> Path:
    """A trigger file, as ``cronctl trigger`` writes one."""
    (folder / "triggers").mkdir(exist_ok=True)
    path = folder / "triggers" / f"{name}.{time.time_ns()}.json"
    path.write_text(json.dumps({"schedule": name}))
    return path


def ran(folder: Path) -> list[str]:
    return (folder / "count").read_text().splitlines() if (folder / "count").exists() else []


def test_a_trigger_in_a_minute_the_schedule_already_ran_in_runs_its_own_process(folder: Path, clock: Clock) -> None:
    (folder / "often.yaml").write_text(manifest("often", "*/5 * * * *", COUNT))
    r = a_runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: journal(folder, "often"))
    ask(folder, "often")
    entries = until(r, lambda: len(journal(folder, "often")) == 2 and journal(folder, "often"))
    assert [(e["run"], e["reason"], e["nominal"], e["outcome"]) for e in entries] == [
        ("often-1", "scheduled", t("2024-03-01T00:05"), "succeeded"),
        ("often-2", "manual", t("2024-03-01T00:05"), "succeeded")]
    assert ran(folder) == ["scheduled 2024-03-01T00:05:00Z", "manual 2024-03-01T00:05:00Z"]
    [manual] = list((folder / "manual").glob("*/runs/often/20240301T0005"))  # a folder of its own
    assert (manual / "exit.json").exists() and (folder / "runs/often/20240301T0005/exit.json").exists()
    assert not list((folder / "triggers").iterdir())


def test_two_triggers_in_one_minute_run_two_processes(folder: Path, clock: Clock) -> None:
    (folder / "adhoc.yaml").write_text(manifest("adhoc", "0 0 1 1 *", COUNT))
    r = a_runner(folder, clock)
    r.step()
    ask(folder, "adhoc")
    ask(folder, "adhoc")
    entries = until(r, lambda: len(journal(folder, "adhoc")) == 2 and journal(folder, "adhoc"))
    assert sorted((e["run"], e["outcome"]) for e in entries) == [("adhoc-1", "succeeded"), ("adhoc-2", "succeeded")]
    assert len({e["trigger"] for e in entries}) == 2
    assert ran(folder) == ["manual 2024-03-01T00:00:00Z"] * 2
    assert len(list((folder / "manual").glob("*/runs/adhoc/20240301T0000/stdout.log"))) == 2


def test_a_trigger_consumed_while_the_node_switch_is_off_is_not_run_and_history_says_why(
        folder: Path, clock: Clock) -> None:
    (folder / "adhoc.yaml").write_text(manifest("adhoc", "0 0 1 1 *", COUNT))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    (folder / "cronctl.disabled").touch()
    path = ask(folder, "adhoc")
    r.step()
    [entry] = journal(folder, "adhoc")
    assert (entry["reason"], entry["outcome"], entry["run"]) == ("manual", "canceled", None)
    assert entry["note"] == "the node switch is off (cronctl.disabled exists)"
    assert [line for line in said if line.startswith("adhoc: manual trigger")] == [
        f"adhoc: manual trigger {path.name} not run: the node switch is off (cronctl.disabled exists)"]
    assert not path.exists() and not r.firings
    (folder / "cronctl.disabled").unlink()
    for _ in range(3):
        r.step()
    assert ran(folder) == [] and len(journal(folder, "adhoc")) == 1  # consumed once, never run later


CRASHING_RUNNER = """
import os, sys
from pathlib import Path
sys.path.insert(0, {operator!r})
import cronctl.runner.executor as executor
from cronctl.runner.engine import Runner

start = executor.Executor.__init__
def crash(name):
    if name == "after_spawn":
        os._exit(9)  # like kill -9 right after the process started: no book saved
def with_crash(self, *args, **kwargs):
    start(self, *args, **kwargs)
    self._checkpoint = crash
executor.Executor.__init__ = with_crash
r = Runner(Path({folder!r}), lambda: {minute}, 1, say=lambda text: None)
assert r.open()
r.step()
"""


def test_a_crash_between_starting_a_triggers_process_and_saving_the_book_starts_no_second_process(
        folder: Path, clock: Clock) -> None:
    (folder / "once.yaml").write_text(manifest("once", "0 0 1 1 *", COUNT))
    r = a_runner(folder, clock)
    r.step()
    r.lock.release()
    path = ask(folder, "once")
    script = CRASHING_RUNNER.format(operator=str(SOURCE_ROOT), folder=str(folder), minute=clock.now)
    assert subprocess.run([sys.executable, "-c", script]).returncode == 9
    assert path.exists()  # not consumed: the book that records its firing was never saved
    again = a_runner(folder, clock)
    entries = until(again, lambda: journal(folder, "once"))
    assert [(e["reason"], e["outcome"]) for e in entries] == [("manual", "succeeded")]
    for _ in range(5):
        again.step()
    assert ran(folder) == ["manual 2024-03-01T00:00:00Z"] and not path.exists()
    assert len(journal(folder, "once")) == 1


def test_a_trigger_of_a_schedule_that_never_fires_is_refused_at_once_saying_why(folder: Path, clock: Clock) -> None:
    """The runner holds such a schedule invalid and would set the request aside: nothing is asked."""
    (folder / "never.yaml").write_text(manifest("never", "0 0 30 2 *", COUNT))  # February 30th
    r = a_runner(folder, clock)
    r.step()
    with pytest.raises(ViewError) as refused:
        trigger(folder, "never", t("2024-03-01T00:00"))
    assert refused.value.exit_code == 2 and refused.value.message == (
        "never was not triggered: its spec.schedule never fires, so the runner holds never as invalid and runs "
        "nothing of it (fix the schedule, then trigger again)")
    assert not any((folder / "triggers").glob("*"))  # nothing asked


def test_a_trigger_of_a_pooled_schedule_whose_workers_are_busy_says_it_waits_for_one(folder: Path,
                                                                                    clock: Clock) -> None:
    (folder / "pool.yaml").write_text(json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronPool",
                                                  "metadata": {"name": "reports"}, "spec": {"workers": 1}}))
    hold = ["sh", "-c", "while [ ! -e go ]; do sleep 0.05; done"]
    (folder / "long.yaml").write_text(manifest("long", "*/5 * * * *", hold, pool="reports"))
    (folder / "adhoc.yaml").write_text(manifest("adhoc", "0 0 1 1 *", COUNT, pool="reports"))
    r = a_runner(folder, clock, workers=4)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: any(f.slot for f in r.firings.values()))
    asked = trigger(folder, "adhoc", t("2024-03-01T00:05"))
    assert asked.message == "queued: it waits for a worker of CronPool 'reports' (1/1 worker busy)"
    r.step()
    r.step()
    assert not ran(folder)  # as it said: it waits on the pool
    (folder / "go").touch()
    until(r, lambda: journal(folder, "adhoc"))
    assert ran(folder) == ["manual 2024-03-01T00:05:00Z"]
    assert trigger(folder, "adhoc", t("2024-03-01T00:05")).message == "queued: the runner starts it within a second"
