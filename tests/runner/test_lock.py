"""The lock: one runner fires, a second names it, and takes over when it ends, even by kill -9."""

from __future__ import annotations

import json
import os
import signal
import socket
import time

import pytest

from cronctl.runner.lock import (LOCK_NAME, LockRefused, RunnerLock, describe_holder, runner_identity,
                                 wait_for_lock, wait_on_lock)


def test_a_second_lock_in_the_same_folder_cannot_be_taken(tmp_path):
    first = RunnerLock(tmp_path, {"hostname": "a", "pid": 1, "started_at": "2024-01-14T02:00:00Z"})
    second = RunnerLock(tmp_path, {"hostname": "b", "pid": 2, "started_at": "2024-01-14T02:00:01Z"})
    assert first.try_acquire() and first.held
    assert first.try_acquire()  # idempotent for the holder
    assert not second.try_acquire() and not second.held
    assert second.holder() == first.identity
    assert json.loads((tmp_path / LOCK_NAME).read_text()) == first.identity
    first.release()
    assert second.holder() is None
    assert second.try_acquire() and first.holder() == second.identity
    second.release()


def test_the_default_identity_names_this_process():
    identity = runner_identity()
    assert identity["pid"] == os.getpid() and identity["hostname"] == socket.gethostname()
    assert identity["started_at"].endswith("Z")


def test_another_process_cannot_take_the_lock_and_names_its_holder(tmp_path, helpers):
    holder = helpers("lock_holder.py", str(tmp_path))
    assert holder.readline() == f"acquired {holder.pid}"
    mine = RunnerLock(tmp_path)
    assert not mine.try_acquire()
    named = mine.holder()
    assert named["pid"] == holder.pid and named["hostname"] == socket.gethostname()
    assert f"held by pid {holder.pid} on {socket.gethostname()} since " in describe_holder(named)

    holder.process.send_signal(signal.SIGKILL)
    holder.process.wait(timeout=10)
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == holder.pid  # the dead runner's name stays,
    assert mine.holder() is None                                               # but it holds nothing
    assert mine.try_acquire()
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    mine.release()


def test_waiting_for_the_lock_retries_until_the_holder_ends(tmp_path, helpers):
    holder = helpers("lock_holder.py", str(tmp_path))
    assert holder.readline().startswith("acquired")
    seen, sleeps = [], []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:  # the first runner is killed while the second waits
            holder.process.kill()
            holder.process.wait(timeout=10)

    lock = RunnerLock(tmp_path)
    waits = wait_for_lock(lock, sleep=sleep, on_wait=seen.append)
    assert waits == 2 and sleeps == [60, 60] and lock.held
    assert [h["pid"] for h in seen] == [holder.pid, holder.pid]
    lock.release()


def test_giving_up_the_wait_is_raising_from_sleep(tmp_path):
    other = RunnerLock(tmp_path)
    assert other.try_acquire()

    def sleep(seconds: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        wait_for_lock(RunnerLock(tmp_path), retry_seconds=5, sleep=sleep)
    other.release()


def test_processes_the_holder_started_do_not_keep_its_lock(tmp_path, helpers):
    """Runs outlive the runner on purpose; the lock must not live on in them."""
    holder = helpers("lock_holder.py", str(tmp_path), "--child")
    assert holder.readline().startswith("acquired")
    child = int(holder.readline().split()[1])
    try:
        holder.process.kill()
        holder.process.wait(timeout=10)
        os.kill(child, 0)  # still running
        lock = RunnerLock(tmp_path)
        assert lock.try_acquire()
        lock.release()
    finally:
        os.kill(child, signal.SIGKILL)


def test_a_waiting_runner_takes_the_lock_the_moment_its_holder_is_killed(tmp_path, helpers):
    """Blocked on the flock, not trying it every 60 s (issue 45: a standby took over up to 57 s late)."""
    holder = helpers("lock_holder.py", str(tmp_path))
    assert holder.readline().startswith("acquired")
    lock = RunnerLock(tmp_path)
    assert not lock.acquire_within(0.1) and not lock.held
    holder.process.kill()
    killed = time.monotonic()
    assert lock.acquire_within(30) and lock.held
    assert time.monotonic() - killed < 1.0
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    lock.release()
    holder.process.wait(timeout=10)


def test_wait_on_lock_returns_false_when_told_to_stop_and_a_later_grant_is_dropped(tmp_path):
    other = RunnerLock(tmp_path)
    assert other.try_acquire()
    looks: list[None] = []
    seen: list[object] = []
    lock = RunnerLock(tmp_path)
    assert not wait_on_lock(lock, lambda: len(looks.append(None) or looks) > 3, 0.01, seen.append)
    assert seen == [other.identity] and not lock.held
    other.release()  # the wait was given up: its descriptor is closed, nothing holds the lock
    time.sleep(0.1)
    third = RunnerLock(tmp_path)
    assert third.try_acquire()
    third.release()


def test_a_lock_file_this_user_cannot_open_is_named_with_what_to_do(tmp_path, monkeypatch):
    """root's leftover lock: 'cronctl: d: Permission denied' named no file (issue 45)."""
    (tmp_path / LOCK_NAME).write_text("")

    def refused(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("cronctl.runner.lock.os.open", refused)
    with pytest.raises(LockRefused) as raised:
        RunnerLock(tmp_path).try_acquire()
    says = raised.value.strerror
    assert says.startswith(f"{tmp_path / LOCK_NAME}: permission denied (owned by uid ")
    assert f"sudo chown {os.getuid()} {tmp_path / LOCK_NAME}" in says and "or remove it while no runner runs" in says
