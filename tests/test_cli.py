"""The cronctl command: `run`, `next` and `dispatch` as a person or a script uses them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cronctl(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"))
    return subprocess.run([sys.executable, "-m", "cronctl", *args], input=stdin, capture_output=True,
                          text=True, env=env, cwd=ROOT)


def test_run_reads_operations_from_a_file_and_prints_results_on_one_line() -> None:
    result = cronctl("run", "examples/harness/seed-part2.json")
    assert result.returncode == 0
    assert result.stdout.count("\n") == 1
    assert json.loads(result.stdout)[-1] == {"last_schedule": "2024-03-01T01:00",
                                             "next_fire": "2024-03-01T09:40",
                                             "active": ["sync-2"], "launched": 2}


def test_run_reads_standard_input() -> None:
    result = cronctl("run", "-", stdin='[["next_runs", "@every 90m", "2024-03-01T10:07", 2]]')
    assert json.loads(result.stdout) == [["2024-03-01T11:37", "2024-03-01T13:07"]]


def test_run_refuses_a_file_that_is_not_json() -> None:
    result = cronctl("run", "-", stdin="[not json")
    assert result.returncode == 2
    assert "cannot read a JSON array" in result.stderr


def test_next_json_gives_the_utc_times_of_next_runs() -> None:
    result = cronctl("next", "30 2 * * *", "--tz", "+05:30", "--after", "2024-03-01T00:00", "--count", "2",
                     "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == ["2024-03-01T21:00", "2024-03-02T21:00"]


def test_next_shows_utc_and_local_wall_time_for_a_person() -> None:
    result = cronctl("next", "30 2 * * *", "--tz", "+05:30", "--after", "2024-03-01T00:00", "--count", "1")
    assert result.stdout.splitlines() == ["2024-03-01 21:00 UTC   Sat 2024-03-02 02:30 +05:30"]


def test_next_on_a_bad_expression_prints_the_field_and_reason_and_exits_2() -> None:
    result = cronctl("next", "0 9 * * 8")
    assert result.returncode == 2
    assert "day-of-week: 8 is out of range 0-7" in result.stderr


def test_next_on_an_expression_that_never_fires_exits_1() -> None:
    result = cronctl("next", "0 0 30 2 *", "--after", "2024-03-01T00:00", "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout) == []
    assert "never fires" in result.stderr


def test_next_refuses_a_bad_zone() -> None:
    result = cronctl("next", "0 9 * * *", "--tz", "+5:30")
    assert result.returncode == 2
    assert "--tz" in result.stderr


def test_dispatch_runs_the_seed_001_calls_from_standard_input() -> None:
    calls = [["registerWorker", "worker-b"], ["registerWorker", "worker-a"],
             ["scheduleJob", "inventory-sync", 10, 5, 1, 0], ["dispatchJobs", 9],
             ["getJobStatus", "inventory-sync", 10, 9], ["dispatchJobs", 10]]
    result = cronctl("dispatch", "-", stdin=json.dumps(calls))
    assert result.returncode == 0
    assert json.loads(result.stdout) == [True, True, True, [], "SCHEDULED", ["inventory-sync,10,1,worker-a"]]
