"""Each run's stdout.log and stderr.log keep the tail of the output, at most the cap, with the cut marked."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from cronctl.runner import wrapper
from cronctl.runner.executor import DEFAULT_MAX_LOG_BYTES, Executor
from cronctl.runner.values import RunRequest
from cronctl.runner.wrapper import READ_CHUNK, CappedLog, cut_slack

from .support import wait_until
from .test_executor import NOMINAL, sh, wait_ended

MIB = 1024 * 1024


def numbers(first: int, last: int) -> bytes:
    return "".join(f"{n}\n" for n in range(first, last + 1)).encode()


def test_output_past_the_cap_keeps_its_tail_under_a_marker_line(tmp_path):
    executor = Executor(tmp_path, max_log_bytes=1000)
    handle = executor.start(sh("seq 1 100000; seq 1 3000 >&2; exit 3"))
    [ended] = wait_ended(executor)
    assert (ended.outcome, ended.exit_code) == ("failed", 3)
    for name, written in [("stdout.log", numbers(1, 100000)), ("stderr.log", numbers(1, 3000))]:
        cut = len(written) - 1000
        assert (handle.run_dir / name).read_bytes() == \
            f"[cronctl: {cut} earlier bytes cut; the last 1000 are kept]\n".encode() + written[-1000:]
    assert sorted(os.listdir(handle.run_dir)) == sorted(
        ["request.json", "wrapper.log", "wrapper.lock", "launching", "pid", "stdout.log", "stderr.log", "exit.json"])


def test_the_cap_is_the_boundary_output_up_to_it_is_kept_whole_and_unmarked(tmp_path):
    executor = Executor(tmp_path, max_log_bytes=1000)
    sizes = [0, 999, 1000, 1001]
    handles = [executor.start(RunRequest("nightly", NOMINAL + n, [sys.executable, "-c",
                                         f"import sys; sys.stdout.write('x' * {size})"]))
               for n, size in enumerate(sizes)]
    wait_ended(executor, count=len(sizes))
    assert [(handle.run_dir / "stdout.log").read_bytes() for handle in handles] == [
        b"", b"x" * 999, b"x" * 1000, b"[cronctl: 1 earlier bytes cut; the last 1000 are kept]\n" + b"x" * 1000]


def test_a_cut_never_splits_a_utf8_character(tmp_path):
    executor = Executor(tmp_path, max_log_bytes=1001)  # an odd cap: the last 1001 bytes begin mid-character
    handle = executor.start(RunRequest("nightly", NOMINAL, [sys.executable, "-c",
                                       "import sys; sys.stdout.buffer.write('é'.encode() * 100000)"]))
    wait_ended(executor)
    text = (handle.run_dir / "stdout.log").read_text(encoding="utf-8")
    assert text == "[cronctl: 199000 earlier bytes cut; the last 1000 are kept]\n" + "é" * 500


def test_the_cap_defaults_to_ten_mib_each_is_checked_and_is_kept_in_the_request(tmp_path):
    assert DEFAULT_MAX_LOG_BYTES == 10 * MIB and Executor(tmp_path).max_log_bytes == DEFAULT_MAX_LOG_BYTES
    for bad in (0, -1, 1.5, True, "10M"):
        with pytest.raises(ValueError):
            Executor(tmp_path, max_log_bytes=bad)
    handle = Executor(tmp_path, max_log_bytes=4096).start(sh("exit 0"))
    assert json.loads((handle.run_dir / "request.json").read_text())["max_log_bytes"] == 4096


def test_a_process_writing_200_mib_fast_leaves_at_most_the_cap_and_the_marker(tmp_path):
    executor = Executor(tmp_path)
    handle = executor.start(sh("head -c 209715200 /dev/zero; echo done >&2"))
    marker = len(b"[cronctl: 199229440 earlier bytes cut; the last 10485760 are kept]\n")
    largest, ended = 0, []
    deadline = time.monotonic() + 120
    while not ended and time.monotonic() < deadline:
        ended = executor.poll()
        try:
            largest = max(largest, (handle.run_dir / "stdout.log").stat().st_size)
        except FileNotFoundError:
            pass
        time.sleep(0.005)
    assert [e.outcome for e in ended] == ["succeeded"]
    log = handle.run_dir / "stdout.log"
    assert log.stat().st_size == marker + DEFAULT_MAX_LOG_BYTES
    assert _first_line(log) == b"[cronctl: 199229440 earlier bytes cut; the last 10485760 are kept]\n"
    assert largest <= marker + DEFAULT_MAX_LOG_BYTES + cut_slack(DEFAULT_MAX_LOG_BYTES) + READ_CHUNK
    assert (handle.run_dir / "stderr.log").read_text() == "done\n"


def test_a_wrapper_killed_while_a_fast_writer_runs_leaves_a_bounded_whole_log(tmp_path):
    cap = MIB
    executor = Executor(tmp_path, max_log_bytes=cap)
    handle = executor.start(sh("head -c 2147483648 /dev/zero"))
    log = handle.run_dir / "stdout.log"
    wait_until(lambda: _first_line(log).startswith(b"[cronctl:"))  # a first cut was made
    pid = json.loads((handle.run_dir / "pid").read_text())
    os.kill(pid["wrapper_pid"], signal.SIGKILL)
    [ended] = wait_ended(executor)
    assert ended.outcome == "failed" and ended.note.startswith("lost:")
    size = log.stat().st_size
    time.sleep(0.3)
    assert log.stat().st_size == size  # the writer lost its pipe with the wrapper: nothing grows the log
    bound = len(b"[cronctl: 2147483648 earlier bytes cut; the last 1048576 are kept]\n") + cap + cut_slack(cap)
    assert size <= bound + READ_CHUNK
    head = _first_line(log)
    assert head.startswith(b"[cronctl: ") and head.endswith(b" are kept]\n")
    assert [name for name in os.listdir(handle.run_dir) if ".tmp-" in name] == []  # a half-made cut is gone


def test_a_process_that_left_the_group_and_keeps_the_pipes_open_does_not_hold_the_end(tmp_path):
    """Guards the pipes: the end is recorded after wrapper.DRAIN_SECONDS, not when the escapee ends;
    and the escapee ends with the run (the wrapper is its subreaper), as a Pod's processes do."""
    pids, escaped = tmp_path / "pids", tmp_path / "escaped"
    escapee = f"{sys.executable} -c 'import os, time; os.setsid(); open(\"{escaped}\", \"w\"); time.sleep(30)'"
    executor = Executor(tmp_path)
    began = time.monotonic()
    handle = executor.start(sh(f"{escapee} & echo $! > {pids}; until [ -e {escaped} ]; do sleep 0.01; done; echo bye"))
    try:
        [ended] = wait_ended(executor, timeout=wrapper.DRAIN_SECONDS + 8)
        assert ended.outcome == "succeeded" and (handle.run_dir / "stdout.log").read_text() == "bye\n"
        assert not _alive(int(pids.read_text()))  # it ran on, outside the group, holding the pipes, until the end
        assert time.monotonic() - began >= wrapper.DRAIN_SECONDS
    finally:
        wait_until(pids.exists)
        try:
            os.kill(int(pids.read_text()), signal.SIGKILL)
        except ProcessLookupError:
            pass


def _first_line(path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.readline(200)
    except FileNotFoundError:
        return b""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_log_that_cannot_be_written_drops_the_rest_and_says_so(tmp_path, monkeypatch):
    log = CappedLog(tmp_path / "stdout.log", cap=1000)
    log.write(b"a" * 10)
    real_write_all = wrapper._write_all

    def full_disk_once(fd, data):
        monkeypatch.setattr(wrapper, "_write_all", real_write_all)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(wrapper, "_write_all", full_disk_once)
    log.write(b"b" * 20)
    log.write(b"c" * 5)  # not tried again: the log has stopped
    log.close()
    assert (tmp_path / "stdout.log").read_text() == (
        "a" * 10 + f"\n[cronctl: this log stopped at an error: [Errno {errno.ENOSPC}] "
        f"{os.strerror(errno.ENOSPC)}; 25 bytes dropped]\n")


def test_without_pidfd_the_end_of_the_command_is_seen_by_looking(tmp_path, monkeypatch):
    """An old kernel (no pidfd_open): the wrapper looks for the end every 0.1 s, kills the rest of
    the group and keeps every byte."""
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    process = subprocess.Popen(["sh", "-c", "sleep 30 & seq 1 50000; echo oops >&2"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0)
    out, err = CappedLog(tmp_path / "stdout.log", 10 * MIB), CappedLog(tmp_path / "stderr.log", 10 * MIB)
    began = time.monotonic()
    wrapper._pump(process, {process.stdout.fileno(): out, process.stderr.fileno(): err})
    out.close()
    err.close()
    process.stdout.close()
    process.stderr.close()
    assert process.wait() == 0 and time.monotonic() - began < 5  # not the 30 s of the straggler
    assert (tmp_path / "stdout.log").read_bytes() == numbers(1, 50000)
    assert (tmp_path / "stderr.log").read_bytes() == b"oops\n"
