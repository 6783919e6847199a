"""The executor, with real processes: outcomes, stops, logs, and crashes that never double a run."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from cronctl.runner.executor import Executor
from cronctl.runner.values import Ended, RunKey, RunRequest, nominal_stamp, run_folder_name

from .support import wait_until

NOMINAL = 28_424_280  # 2024-01-17T02:00Z in minutes since 1970


class FakeClock:
    def __init__(self, now: float = 1_705_456_800.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def sh(script: str, **fields) -> RunRequest:
    return RunRequest(schedule=fields.pop("schedule", "nightly"), nominal=fields.pop("nominal", NOMINAL),
                      command=["sh", "-c", script], **fields)


def wait_ended(executor: Executor, count: int = 1, timeout: float = 10.0) -> list[Ended]:
    ended: list[Ended] = []

    def done() -> bool:
        ended.extend(executor.poll())
        return len(ended) >= count

    wait_until(done, timeout=timeout)
    return ended


def test_the_run_folder_is_named_by_schedule_and_nominal_minute(tmp_path):
    assert nominal_stamp(NOMINAL) == "20240117T0200"
    executor = Executor(tmp_path)
    handle = executor.start(sh("exit 0"))
    assert handle.started and handle.run_dir == tmp_path.resolve() / "runs" / "nightly" / "20240117T0200"
    assert handle.request["nominal_time"] == "2024-01-17T02:00:00Z" and handle.request["attempt"] == 1
    wait_ended(executor)
    assert {"request.json", "stdout.log", "stderr.log", "pid", "exit.json"} <= set(os.listdir(handle.run_dir))


def test_each_attempt_has_its_own_key_and_folder_the_first_keeping_the_plain_name(tmp_path):
    count = tmp_path / "count"
    executor = Executor(tmp_path)
    first = executor.start(sh(f'echo "$CRONCTL_ATTEMPT" >> {count}'))
    second = executor.start(sh(f'echo "$CRONCTL_ATTEMPT" >> {count}', attempt=2))
    assert first.started and second.started
    assert (first.key, second.key) == (RunKey("nightly", NOMINAL), RunKey("nightly", NOMINAL, 2))
    assert [first.run_dir.name, second.run_dir.name] == ["20240117T0200", "20240117T0200.2"]
    assert str(second.key) == "nightly@20240117T0200.2" and run_folder_name(first.key) == "20240117T0200"
    assert not executor.start(sh("exit 0", attempt=2)).started  # submit-or-get, per attempt
    assert sorted(ended.key.attempt for ended in wait_ended(executor, count=2)) == [1, 2]
    assert sorted(count.read_text().split()) == ["1", "2"]


def test_adopt_rebuilds_the_key_with_the_attempt_of_the_request(tmp_path):
    executor = Executor(tmp_path)
    later = executor.start(sh("exit 1", attempt=3))
    old = executor.start(sh("exit 1", schedule="before-retries"))
    wait_ended(executor, count=2)
    request = json.loads((old.run_dir / "request.json").read_text())
    del request["attempt"]  # a folder written before runs had attempts
    (old.run_dir / "request.json").write_text(json.dumps(request))
    adopted = Executor(tmp_path).adopt()
    assert sorted(handle.key for handle in adopted) == sorted([later.key, RunKey("before-retries", NOMINAL)])


@pytest.mark.parametrize("script, outcome, exit_code, signum", [
    ("exit 0", "succeeded", 0, None),
    ("exit 3", "failed", 3, None),
    ("kill -9 $$", "failed", None, 9),
])
def test_the_exit_status_maps_to_the_outcome(tmp_path, script, outcome, exit_code, signum):
    executor = Executor(tmp_path)
    executor.start(sh(script))
    [ended] = wait_ended(executor)
    assert (ended.outcome, ended.exit_code, ended.signal) == (outcome, exit_code, signum)
    assert ended.key == RunKey("nightly", NOMINAL) and ended.finished_at.endswith("Z")
    assert executor.poll() == []  # reported once
    assert executor.result(ended.key) == ended


def test_a_command_that_cannot_start_fails_with_its_reason(tmp_path):
    executor = Executor(tmp_path)
    handle = executor.start(RunRequest("nightly", NOMINAL, ["no-such-command-cronctl"]))
    [ended] = wait_ended(executor)
    assert ended.outcome == "failed" and ended.exit_code == 127
    assert ended.note == "did not start: command not found: 'no-such-command-cronctl'"
    assert "no-such-command-cronctl" in (handle.run_dir / "stderr.log").read_text()


def test_env_args_and_cwd_reach_the_command_in_a_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RUNNER_SECRET", "must-not-leak")
    work = tmp_path / "work"
    work.mkdir()
    executor = Executor(tmp_path / "base")
    request = RunRequest("report", NOMINAL, ["sh", "-c", 'echo "$GREETING $1 $2"; pwd; echo oops >&2; env',
                                             "sh"], args=["first arg", "second"],
                         env={"GREETING": "hello world"}, reason="catch-up", attempt=2, cwd=str(work))
    handle = executor.start(request)
    [ended] = wait_ended(executor)
    assert ended.outcome == "succeeded"
    out = (handle.run_dir / "stdout.log").read_text().splitlines()
    assert out[0] == "hello world first arg second" and out[1] == str(work)
    env = dict(line.split("=", 1) for line in out[2:] if "=" in line)
    assert env["CRONCTL_SCHEDULE"] == "report" and env["CRONCTL_NOMINAL_TIME"] == "2024-01-17T02:00:00Z"
    assert env["CRONCTL_REASON"] == "catch-up" and env["CRONCTL_ATTEMPT"] == "2"
    assert "RUNNER_SECRET" not in env and "PYTHONPATH" not in env and "PATH" in env
    assert (handle.run_dir / "stderr.log").read_text() == "oops\n"


def test_the_default_working_folder_is_the_base_folder(tmp_path):
    executor = Executor(tmp_path)
    handle = executor.start(sh("pwd"))
    wait_ended(executor)
    assert (handle.run_dir / "stdout.log").read_text().strip() == str(tmp_path.resolve())


def test_starting_one_key_twice_starts_one_process(tmp_path):
    count = tmp_path / "count"
    request = sh(f"echo ran >> {count}; sleep 0.2")
    executor = Executor(tmp_path)
    first = executor.start(request)
    second = executor.start(request)
    third = Executor(tmp_path).start(request)  # another executor over the same folder
    assert first.started and not second.started and not third.started
    assert third.request == first.request
    [ended] = wait_ended(executor)
    assert ended.outcome == "succeeded"
    assert executor.start(request).started is False  # also after the end
    assert count.read_text() == "ran\n"


def test_a_stop_sends_sigterm_to_the_process_group(tmp_path):
    clock = FakeClock()
    executor = Executor(tmp_path, now=clock)
    handle = executor.start(sh("echo ready; sleep 30 & wait"))
    wait_until(lambda: "ready" in _text(handle.run_dir / "stdout.log"))
    assert executor.stop(handle.key, "stopped", grace_seconds=10)
    [ended] = wait_ended(executor)
    assert ended.outcome == "stopped" and ended.signal == signal.SIGTERM
    assert executor.stop(handle.key, "canceled") is False  # already ended
    with pytest.raises(ValueError):
        executor.stop(handle.key, "bored")


def test_a_timeout_kills_a_process_that_ignores_sigterm_after_the_grace(tmp_path):
    clock = FakeClock()
    executor = Executor(tmp_path, now=clock)
    handle = executor.start(sh("trap '' TERM; echo ready; sleep 30; echo survived"))
    wait_until(lambda: "ready" in _text(handle.run_dir / "stdout.log"))
    assert executor.stop(handle.key, "timed_out", grace_seconds=5)
    stop = json.loads((handle.run_dir / "stop.json").read_text())
    assert stop["reason"] == "timed_out" and stop["kill_at"] == clock.now + 5
    time.sleep(0.3)  # SIGTERM was sent; it is ignored
    assert executor.poll() == []
    clock.now += 4.9
    assert executor.poll() == []  # the grace is not over
    clock.now += 0.1
    [ended] = wait_ended(executor)
    assert ended.outcome == "timed_out" and ended.signal == signal.SIGKILL
    assert "survived" not in (handle.run_dir / "stdout.log").read_text()


def test_the_wrapper_times_out_a_run_on_its_own_elapsed_time_whatever_the_clock_says(tmp_path):
    """The schedule's timeout handed to the wrapper (issue 45): it stops the run once the run has gone
    that long on the monotonic clock (SIGTERM, SIGKILL after the grace), reported ``timed_out``; the
    runner's clock (here frozen, or stepped a day on) has no say in it."""
    clock = FakeClock()
    executor = Executor(tmp_path, now=clock)
    handle = executor.start(sh("trap '' TERM; sleep 30; echo survived"), timeout_seconds=0.5, grace_seconds=0.3)
    began = time.monotonic()
    [ended] = wait_ended(executor)
    assert ended.outcome == "timed_out" and ended.signal == signal.SIGKILL
    assert 0.8 <= time.monotonic() - began < 10
    assert ended.note.startswith("timed out: stopped after 1 s of its own time (timeoutMinutes ")
    clock.now += 86_400 * 2  # a step of two days: a run within its timeout runs on
    quick = executor.start(sh("sleep 0.5; echo done", nominal=NOMINAL + 1), timeout_seconds=60)
    [done] = wait_ended(executor)
    assert done.outcome == "succeeded" and _text(quick.run_dir / "stdout.log") == "done\n"


def test_a_wrapper_that_found_the_disk_full_is_a_lost_run_blamed_on_the_disk_not_a_restart(tmp_path):
    """Issue 45: a full disk made runs 'lost', blamed on a restart, pointing to an empty wrapper.log.
    The wrapper exits DISK_FULL (74) when it cannot write its files (here a stand-in that only does so)."""
    fake = tmp_path / "python-on-a-full-disk"
    fake.write_text("#!/bin/sh\nexit 74\n")
    fake.chmod(0o755)
    executor = Executor(tmp_path / "base", now=FakeClock(), python=str(fake))
    handle = executor.start(sh("echo never"))
    [ended] = wait_ended(executor)
    assert ended.outcome == "failed" and ended.exit_code is None
    assert ended.note == (f"lost: the disk is full (no space left on device): its wrapper could not write its "
                          f"files in {handle.run_dir}; the command did not start")
    assert "restart" not in ended.note and "wrapper.log" not in ended.note


def test_the_wrapper_on_a_full_file_system_exits_disk_full(tmp_path):
    """A real full disk: a small tmpfs (root only; skipped elsewhere), filled up before the wrapper runs."""
    import errno
    import subprocess
    import sys

    from cronctl.runner.wrapper import DISK_FULL

    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("no tmpfs to fill (not root, or mount refused)")
    try:
        run_dir = mount / "run"
        run_dir.mkdir()
        (run_dir / "request.json").write_text(json.dumps({
            "schedule": "nightly", "nominal_time": "2024-03-01T00:05:00Z", "command": ["true"], "args": []}))
        filler = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(filler, b"x" * 1024)
        except OSError as error:
            assert error.errno == errno.ENOSPC
        finally:
            os.close(filler)
        code = subprocess.run([sys.executable, "-m", "cronctl.runner.wrapper", str(run_dir)], timeout=60,
                              capture_output=True).returncode
        assert code == DISK_FULL
        assert not (run_dir / "launching").exists() and not (run_dir / "exit.json").exists()
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_wrappers_are_forked_by_one_server_and_their_runs_end_as_any(tmp_path):
    """Issue 45: a Python process start per run (30 ms and more) was the cost of each start; the
    executor asks one forking server (wrapper.py --serve) for each wrapper instead."""
    from cronctl.runner.executor import Forked

    executor = Executor(tmp_path, now=FakeClock())
    handles = [executor.start(sh(f"echo {n}", nominal=NOMINAL + n)) for n in range(3)]
    assert all(isinstance(executor._watched[h.key].popen, Forked) for h in handles)
    servers = {executor._watched[h.key].popen.server for h in handles}
    assert len(servers) == 1
    ended = wait_ended(executor, count=3)
    assert sorted((e.key.nominal, e.outcome) for e in ended) == [(NOMINAL + n, "succeeded") for n in range(3)]
    assert [_text(h.run_dir / "stdout.log") for h in handles] == ["0\n", "1\n", "2\n"]
    assert executor.exit_fds() == []  # none runs: nothing to wait on


def test_a_run_outlives_the_wrapper_server_and_a_new_one_serves_the_next(tmp_path):
    from cronctl.runner.executor import Forked

    executor = Executor(tmp_path, now=FakeClock())
    first = executor.start(sh("sleep 0.5; echo first"))
    server = executor._watched[first.key].popen.server
    assert server.fileno() in executor.exit_fds()
    server.process.kill()
    server.process.wait(timeout=10)
    [ended] = wait_ended(executor)
    assert ended.outcome == "succeeded" and _text(first.run_dir / "stdout.log") == "first\n"
    second = executor.start(sh("echo second", nominal=NOMINAL + 1))
    popen = executor._watched[second.key].popen
    assert isinstance(popen, Forked) and popen.server is not server
    [ended] = wait_ended(executor)
    assert ended.outcome == "succeeded"


def test_without_the_server_each_wrapper_is_a_process_of_its_own(tmp_path, monkeypatch):
    import subprocess

    monkeypatch.setenv("CRONCTL_WRAPPER_SERVER", "0")
    executor = Executor(tmp_path, now=FakeClock())
    handle = executor.start(sh("echo alone"))
    assert isinstance(executor._watched[handle.key].popen, subprocess.Popen)
    [ended] = wait_ended(executor)
    assert ended.outcome == "succeeded"


def test_what_the_command_left_behind_in_its_group_ends_with_it(tmp_path):
    pids = tmp_path / "pids"
    executor = Executor(tmp_path)
    executor.start(sh(f"sleep 30 & echo $! > {pids}; exit 0"))
    [ended] = wait_ended(executor)
    assert ended.outcome == "succeeded"
    straggler = int(pids.read_text())
    wait_until(lambda: not _alive(straggler))


def test_a_runner_killed_right_after_start_leaves_a_run_a_new_runner_adopts(tmp_path, helpers):
    count = tmp_path / "count"
    request = {"schedule": "nightly", "nominal": NOMINAL,
               "command": ["sh", "-c", f"echo ran >> {count}; sleep 0.5; echo done; exit 4"]}
    runner = helpers("executor_crash.py", str(tmp_path), "none", json.dumps(request))
    assert runner.readline() == "started"
    runner.process.send_signal(signal.SIGKILL)
    runner.process.wait(timeout=10)

    executor = Executor(tmp_path)
    [adopted] = executor.adopt()
    assert adopted.key == RunKey("nightly", NOMINAL) and not adopted.started
    [ended] = wait_ended(executor)
    assert ended.outcome == "failed" and ended.exit_code == 4
    assert (adopted.run_dir / "stdout.log").read_text() == "done\n"
    assert count.read_text() == "ran\n"


@pytest.mark.parametrize("attempt", [1, 2])
@pytest.mark.parametrize("point", ["after_mkdir", "after_request", "after_spawn"])
def test_a_crash_at_each_point_of_start_runs_the_command_exactly_once(tmp_path, helpers, point, attempt):
    """Kill the runner at each step; the restarted one adopts, the core fires the unsaved firing
    (or decides the unsaved retry) again. Attempt 2 starts after attempt 1 ended."""
    count = tmp_path / "count"
    request = {"schedule": "nightly", "nominal": NOMINAL, "attempt": attempt,
               "command": ["sh", "-c", f'echo "ran $CRONCTL_ATTEMPT" >> {count}']}
    if attempt > 1:
        earlier = Executor(tmp_path)
        earlier.start(RunRequest(**{**request, "attempt": attempt - 1}))
        earlier.acknowledge(wait_ended(earlier)[0].key)
    runner = helpers("executor_crash.py", str(tmp_path), point, json.dumps(request))
    assert runner.process.wait(timeout=10) == -signal.SIGKILL

    executor = Executor(tmp_path)
    adopted = executor.adopt()
    assert [h.key for h in adopted] == ([] if point == "after_mkdir" else [RunKey("nightly", NOMINAL, attempt)])
    handle = executor.start(RunRequest(**request))
    assert handle.started == (point == "after_mkdir")
    [ended] = wait_ended(executor)
    assert ended.outcome == "succeeded" and ended.key.attempt == attempt
    time.sleep(0.2)  # a doubled process would have written by now
    assert count.read_text().splitlines() == [f"ran {n}" for n in range(1, attempt + 1)]


def test_a_run_stopped_before_its_process_started_never_starts(tmp_path, helpers):
    count = tmp_path / "count"
    request = {"schedule": "nightly", "nominal": NOMINAL, "command": ["sh", "-c", f"echo ran >> {count}"]}
    runner = helpers("executor_crash.py", str(tmp_path), "after_request", json.dumps(request))
    runner.process.wait(timeout=10)
    executor = Executor(tmp_path)
    executor.adopt()
    assert executor.stop(RunKey("nightly", NOMINAL), "canceled")
    [ended] = wait_ended(executor)
    assert ended.outcome == "canceled" and ended.note == "stopped before the process started"
    assert not count.exists()


def test_a_stop_outlives_the_runner_that_asked_for_it(tmp_path):
    clock = FakeClock()
    first = Executor(tmp_path, now=clock)
    handle = first.start(sh("trap '' TERM; echo ready; sleep 30"))
    wait_until(lambda: "ready" in _text(handle.run_dir / "stdout.log"))
    first.stop(handle.key, "timed_out", grace_seconds=5)
    del first  # the runner is gone; its wrapper and the command are not

    second = Executor(tmp_path, now=clock)
    assert [h.key for h in second.adopt()] == [handle.key]
    assert second.poll() == []
    clock.now += 5
    [ended] = wait_ended(second)
    assert ended.outcome == "timed_out" and ended.signal == signal.SIGKILL


def test_a_run_whose_wrapper_died_is_reported_lost(tmp_path):
    executor = Executor(tmp_path)
    handle = executor.start(sh("sleep 30"))
    pid = wait_until(lambda: _read(handle.run_dir / "pid"))
    try:
        os.kill(pid["wrapper_pid"], signal.SIGKILL)  # as a machine restart would
        [ended] = wait_ended(executor)
        assert ended.outcome == "failed" and ended.note.startswith("lost:")
        assert Executor(tmp_path).result(handle.key).outcome == "failed"
    finally:
        os.killpg(pid["pgid"], signal.SIGKILL)


def test_ends_are_reported_again_after_a_restart_until_acknowledged(tmp_path):
    first = Executor(tmp_path)
    done = first.start(sh("exit 0", schedule="a"))
    failed = first.start(sh("exit 1", schedule="b"))
    assert len(wait_ended(first, count=2)) == 2
    first.acknowledge(done.key)

    second = Executor(tmp_path)  # the runner died before saving the outcome of b
    assert [h.key for h in second.adopt()] == [failed.key]
    [ended] = second.poll()
    assert ended.key == failed.key and ended.outcome == "failed" and ended.exit_code == 1
    second.acknowledge(failed.key)
    assert Executor(tmp_path).adopt() == []
    second.forget(done.key)
    assert not done.run_dir.exists()


def test_requests_are_checked(tmp_path):
    executor = Executor(tmp_path)
    with pytest.raises(ValueError):
        executor.start(sh("exit 0", schedule="../escape"))
    with pytest.raises(ValueError):
        executor.start(RunRequest("nightly", NOMINAL, "echo hi"))  # a string, not a list
    with pytest.raises(TypeError):
        executor.start(RunRequest("nightly", 1.5, ["true"]))
    with pytest.raises(ValueError):
        executor.start(RunRequest("nightly", NOMINAL, ["true"], attempt=0))
    with pytest.raises(KeyError):
        executor.stop(RunKey("nightly", NOMINAL), "stopped")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def _read(path):
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _text(path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""
