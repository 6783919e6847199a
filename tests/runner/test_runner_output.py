"""The runner says what happens: one line per firing, end, failure, timeout, retry and takeover,
in text or as one JSON object per line with the same facts; Ctrl-C returns cleanly and says which
runs go on (they run under detached wrappers, and the next runner adopts them).

The clock is injected; the runs are real processes.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from cronctl.runner.engine import Runner, run_forever
from cronctl.runner.files import read_json

from .support import Clock, journal, manifest, until

# Attempt 1 fails with exit 3; attempt 2 ignores SIGTERM and runs until the timeout's SIGKILL.
FAIL_THEN_HANG = ["sh", "-c", 'if [ "$CRONCTL_ATTEMPT" = 1 ]; then exit 3; fi; trap "" TERM; '
                              "while :; do sleep 0.02; done"]
HOLD = ["sh", "-c", "while [ ! -e release ]; do sleep 0.02; done"]


def a_runner(folder: Path, clock: Clock, said: list[str], log_format: str = "text") -> Runner:
    formats = {} if log_format == "text" else {"log_format": log_format}
    r = Runner(folder, clock, 1, say=said.append, grace_seconds=0.3, seconds=lambda: clock.now * 60.0, **formats)
    assert r.open()
    return r


def a_failing_retried_and_timed_out_run(folder: Path, clock: Clock, said: list[str], log_format: str) -> None:
    (folder / "tick.yaml").write_text(manifest("tick", "*/5 * * * *", FAIL_THEN_HANG, maxRetries=1,
                                               retryDelayMinutes=1, timeoutMinutes=3))
    r = a_runner(folder, clock, said, log_format)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: any(f.retry_due for f in r.firings.values()))
    clock.set("2024-03-01T00:06")
    until(r, lambda: list((folder / "runs/tick").glob("*.2/pid")))
    clock.set("2024-03-01T00:08")  # three minutes after the first launch
    until(r, lambda: journal(folder, "tick"))


def test_each_firing_end_failure_retry_and_timeout_is_one_line(folder: Path, clock: Clock) -> None:
    said: list[str] = []
    a_failing_retried_and_timed_out_run(folder, clock, said, "text")
    lines = [line for line in said if line.startswith("tick: ")]
    expected = [
        r"tick: fired tick-1 for 2024-03-01 00:05 UTC \(scheduled, attempt 1\) on worker-1",
        r"tick: tick-1 attempt 1/2 failed \(exit 3 after \d+ s\); attempt 2/2 at 2024-03-01 00:06 UTC",
        r"tick: fired tick-1 for 2024-03-01 00:05 UTC \(scheduled, attempt 2\) on worker-1",
        r"tick: tick-1 timed out \(timeoutMinutes 3\): stopping it \(SIGTERM, SIGKILL after 0.3 s\)",
        r"tick: tick-1 timed_out \(signal 9 after \d+ s\)",
    ]
    assert len(lines) == len(expected), lines
    for line, pattern in zip(lines, expected):
        assert re.fullmatch(pattern, line), line


def test_with_log_format_json_each_line_is_one_object_with_the_same_facts(folder: Path, clock: Clock) -> None:
    said: list[str] = []
    a_failing_retried_and_timed_out_run(folder, clock, said, "json")
    objects = [json.loads(line) for line in said]  # every line, notices included, is JSON
    assert all({"time", "level", "event", "message"} <= set(o) for o in objects)
    facts = [{k: v for k, v in o.items() if k not in ("time", "level", "message", "duration_seconds")}
             for o in objects if o.get("schedule") == "tick"]
    run = {"schedule": "tick", "run": "tick-1", "nominal": "2024-03-01T00:05:00Z", "firing": "scheduled"}
    assert facts == [
        {"event": "fired", **run, "attempt": 1, "slot": "worker-1"},
        {"event": "retry", **run, "attempt": 1, "outcome": "failed", "exit_code": 3,
         "retry_at": "2024-03-01T00:06:00Z"},
        {"event": "fired", **run, "attempt": 2, "slot": "worker-1"},
        {"event": "timeout", **run, "attempt": 2},
        {"event": "ended", **run, "attempt": 2, "outcome": "timed_out", "signal": 9},
    ]
    ended = [o for o in objects if o["event"] == "ended"][0]
    assert isinstance(ended["duration_seconds"], int) and ended["level"] == "warning"
    assert ended["message"].startswith("tick: tick-1 timed_out (signal 9 after")


def test_a_runner_that_takes_the_lock_over_says_so(folder: Path, clock: Clock) -> None:
    first: list[str] = []
    holder = a_runner(folder, clock, first)
    holder.step()
    said: list[str] = []
    second = Runner(folder, clock, 1, say=said.append)
    turns = iter(range(1000))

    def stop_after_takeover() -> bool:
        if next(turns) == 3:
            holder.lock.release()  # the first runner ends
        return second.lock.held

    run_forever(second, poll_seconds=0.01, retry_lock_seconds=0.02, should_stop=stop_after_takeover)
    assert said[0].startswith(f"read-only: held by pid {os.getpid()}")
    assert [line for line in said if line.startswith("took over")] == [
        f"took over: the runner that held cronctl.lock ended; this runner (pid {os.getpid()}) fires the "
        "schedules now"]


def test_ctrl_c_returns_cleanly_and_says_which_runs_go_on_for_the_next_runner_to_adopt(
        folder: Path, clock: Clock) -> None:
    (folder / "hold.yaml").write_text(manifest("hold", "*/5 * * * *", HOLD))
    clock.set("2024-03-01T00:04")
    said: list[str] = []
    r = Runner(folder, clock, 1, say=said.append, seconds=lambda: clock.now * 60.0)
    turns = iter(range(10_000))

    def ctrl_c_once_it_runs() -> bool:
        if next(turns) == 1:
            clock.set("2024-03-01T00:05")
        if (folder / "runs/hold/20240301T0005/pid").exists():
            raise KeyboardInterrupt
        return False

    try:
        run_forever(r, poll_seconds=0.01, should_stop=ctrl_c_once_it_runs)
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C went through run_forever")
    pid = read_json(folder / "runs/hold/20240301T0005/pid")["pid"]
    assert said[-1] == f"cronctl: stopped; 1 run goes on and the next runner adopts them: hold-1 (pid {pid})"
    os.kill(pid, 0)  # it goes on
    r.lock.release()  # the runner's process ends
    adopted: list[str] = []
    again = a_runner(folder, clock, adopted)
    (folder / "release").touch()
    entries = until(again, lambda: journal(folder, "hold"))
    assert [(e["run"], e["outcome"]) for e in entries] == [("hold-1", "succeeded")]


def test_ctrl_c_while_waiting_for_the_lock_returns_cleanly(folder: Path, clock: Clock) -> None:
    holder = a_runner(folder, clock, [])
    said: list[str] = []
    waiting = Runner(folder, clock, 1, say=said.append)

    def ctrl_c() -> Any:
        raise KeyboardInterrupt

    try:
        run_forever(waiting, poll_seconds=0.01, retry_lock_seconds=0.02, should_stop=ctrl_c)
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C went through run_forever")
    assert said[-1] == "cronctl: stopped; no run was running"
    holder.lock.release()


def test_the_start_says_how_many_schedules_and_which_fires_next_and_when(tmp_path: Path) -> None:
    """Issue 45: the start line said nothing of what will fire and when."""
    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "hourly.yaml").write_text(manifest("hourly", "0 * * * *", ["true"]))
    (folder / "soon.yaml").write_text(manifest("soon", "7 0 * * *", ["true"]))
    (folder / "off.yaml").write_text(manifest("off", "1 0 * * *", ["true"], suspend=True))
    (folder / "bad.yaml").write_text(manifest("bad", "2 0 * * *", ["true"], timeoutMinutes="ten"))
    said: list[str] = []
    r = a_runner(folder, Clock("2024-03-01T00:00"), said)
    turns = iter(range(1))
    run_forever(r, poll_seconds=0.01, should_stop=lambda: next(turns, None) is None)
    assert "3 schedules (1 invalid, 1 held), next: soon at 2024-03-01 00:07 UTC" in said, said


def test_the_start_line_says_when_nothing_fires(tmp_path: Path) -> None:
    folder = tmp_path / "schedules"
    folder.mkdir()
    said: list[str] = []
    r = a_runner(folder, Clock("2024-03-01T00:00"), said, log_format="json")
    run_forever(r, poll_seconds=0.01, should_stop=lambda: True)
    [plan] = [json.loads(line) for line in said if '"plan"' in line]
    assert (plan["message"], plan["schedules"], plan["next"]) == ("0 schedules, next: nothing fires", 0, None)
