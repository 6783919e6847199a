"""The wrapper's tries: a Job's backoffLimit, as the job controller replaces a failed Pod."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cronctl.runner.wrapper import backoff_seconds, too_long


def run(run_dir: Path) -> int:
    """The wrapper as the executor starts it: a process of its own (it becomes a subreaper)."""
    return subprocess.run([sys.executable, "-m", "cronctl.runner.wrapper", str(run_dir)], timeout=60).returncode


def a_run(tmp_path: Path, script: str, **request: Any) -> Path:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    body = {"schedule": "nightly", "nominal_time": "2024-03-01T00:05:00Z", "command": ["sh", "-c", script], "args": [], "env": {}, "cwd": str(tmp_path), "backoff_seconds": 0.05,
            **request}
    (run_dir / "request.json").write_text(json.dumps(body))
    return run_dir


def ended(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "exit.json").read_text())


@pytest.mark.parametrize("failures, wait", [(1, 10), (2, 20), (3, 40), (6, 320), (7, 360), (30, 360)])
def test_the_wait_before_the_next_try_doubles_from_10_seconds_up_to_six_minutes(failures, wait):
    assert backoff_seconds(failures) == wait


def test_a_failed_try_is_run_again_until_one_succeeds_within_the_backoff_limit(tmp_path):
    count = tmp_path / "tries"
    run_dir = a_run(tmp_path, f'echo x >> {count}; test "$(wc -l < {count})" -ge 3', backoff_limit=2)
    assert run(run_dir) == 0
    assert count.read_text().count("x") == 3
    assert (ended(run_dir)["exit_code"], ended(run_dir)["tries"]) == (0, 3)
    assert "note" not in ended(run_dir)
    assert (run_dir / "stderr.log").read_text().splitlines() == [
        "[cronctl: try 1 of 3 failed (exit 1); the next in 0.05 s (backoffLimit 2)]",
        "[cronctl: try 2 of 3 failed (exit 1); the next in 0.1 s (backoffLimit 2)]"]


def test_a_run_whose_every_try_fails_is_failed_with_backoff_limit_exceeded(tmp_path):
    count = tmp_path / "tries"
    run_dir = a_run(tmp_path, f"echo x >> {count}; exit 4", backoff_limit=1)
    run(run_dir)
    assert count.read_text().count("x") == 2
    assert ended(run_dir)["exit_code"] == 4
    assert ended(run_dir)["note"] == "BackoffLimitExceeded: failed 2 times (backoffLimit 1)"


def test_without_a_backoff_limit_a_failed_run_is_tried_once(tmp_path):
    count = tmp_path / "tries"
    run_dir = a_run(tmp_path, f"echo x >> {count}; exit 4")
    run(run_dir)
    assert count.read_text().count("x") == 1
    assert "tries" not in ended(run_dir) and "note" not in ended(run_dir)


def test_a_stop_while_waiting_for_the_next_try_ends_the_run(tmp_path):
    count = tmp_path / "tries"
    run_dir = a_run(tmp_path, f"echo x >> {count}; touch {tmp_path}/stop-me; exit 1", backoff_limit=5,
                    backoff_seconds=30)
    (tmp_path / "stop-me").unlink(missing_ok=True)
    def stop_once_failed() -> None:
        while not (tmp_path / "stop-me").exists():
            time.sleep(0.01)
        (run_dir / "stop.json").write_text(json.dumps({"reason": "stopped"}))

    threading.Thread(target=stop_once_failed, daemon=True).start()
    began = time.monotonic()
    run(run_dir)
    assert time.monotonic() - began < 5  # not the 30 s wait
    assert count.read_text().count("x") == 1


def test_the_active_deadline_counts_across_tries(tmp_path):
    count = tmp_path / "tries"
    run_dir = a_run(tmp_path, f"echo x >> {count}; sleep 0.4; exit 1", backoff_limit=50,
                    backoff_seconds=0.05, active_deadline_seconds=1)
    began = time.monotonic()
    run(run_dir)
    assert time.monotonic() - began < 3
    assert 1 < count.read_text().count("x") < 5
    assert ended(run_dir)["note"] == "DeadlineExceeded: stopped at its activeDeadlineSeconds (1 s)"


@pytest.mark.parametrize("limits, says", [
    ({"timeout_seconds": 0.3}, "timed_out"),
    ({"timeout_seconds": 0.3, "active_deadline_seconds": 60}, "timed_out"),  # the timeout comes first
    ({"timeout_seconds": 60, "active_deadline_seconds": 1}, "deadline_exceeded"),  # the deadline comes first
])
def test_the_timeout_stops_the_run_on_its_own_time_and_says_which_limit_it_was(tmp_path, limits, says):
    run_dir = a_run(tmp_path, "sleep 30", grace_seconds=0.2, **limits)
    began = time.monotonic()
    run(run_dir)
    assert time.monotonic() - began < 10
    assert ended(run_dir)[says] is True and ended(run_dir)["signal"] == 15
    other = {"timed_out", "deadline_exceeded"} - {says}
    assert not other & set(ended(run_dir))


def test_the_too_long_line_counts_the_arguments_and_the_environment_and_names_the_limits() -> None:
    """E2BIG says the figures that decide it: each string with its NUL, as the kernel counts them,
    the longest one, and the limits (on Linux 32 pages for any one string, ARG_MAX in all)."""
    line = too_long(["echo", "x" * 200_000], {"HOME": "/root", "A": "b"})
    assert line.startswith("the arguments are too long: 200,006 bytes of arguments and 15 of environment, "
                           "the longest string 200,001 bytes")
    if sys.platform.startswith("linux"):
        assert f"{32 * os.sysconf('SC_PAGESIZE'):,} bytes in any one" in line
    assert f"{os.sysconf('SC_ARG_MAX'):,} in all" in line
