"""Executor.prune: the folders of a schedule's finished runs go, except what retention keeps;
nothing that may still run, nothing unrecorded, nothing of another schedule; crash-safe."""

from __future__ import annotations

import fcntl
import json
import os
import signal

import pytest

from cronctl.runner import files
from cronctl.runner.executor import Executor
from cronctl.runner.values import RunKey, RunRequest

from .support import wait_until
from .test_executor import NOMINAL, sh, wait_ended


def finished(executor: Executor, *requests: RunRequest) -> list[RunKey]:
    """Run ``requests`` to their end and acknowledge them, as the engine does once the book is saved."""
    keys = [executor.start(request).key for request in requests]
    for ended in wait_ended(executor, count=len(keys)):
        executor.acknowledge(ended.key)
    return keys


def folders(executor: Executor, schedule: str) -> list[str]:
    folder = executor.runs_dir / schedule
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_prune_removes_the_finished_runs_not_kept_and_keeps_every_attempt_of_a_kept_run(tmp_path):
    executor = Executor(tmp_path)
    finished(executor, sh("exit 0"), sh("exit 1", nominal=NOMINAL + 1), sh("exit 0", nominal=NOMINAL + 2),
             sh("exit 0", schedule="hourly"))
    finished(executor, sh("exit 0", nominal=NOMINAL + 1, attempt=2))
    assert folders(executor, "nightly") == ["20240117T0200", "20240117T0201", "20240117T0201.2", "20240117T0202"]

    removed = executor.prune("nightly", keep=[RunKey("nightly", NOMINAL + 1, 2), RunKey("hourly", NOMINAL)])
    assert removed == [RunKey("nightly", NOMINAL), RunKey("nightly", NOMINAL + 2)]
    assert folders(executor, "nightly") == ["20240117T0201", "20240117T0201.2"]
    assert folders(executor, "hourly") == ["20240117T0200"]  # another schedule's runs are never touched
    assert executor.prune("nightly", keep=[RunKey("nightly", NOMINAL + 1)]) == []
    assert executor.result(RunKey("nightly", NOMINAL + 1, 2)).outcome == "succeeded"


def test_prune_never_removes_a_run_that_may_still_run_or_whose_end_is_not_recorded(tmp_path):
    executor = Executor(tmp_path)
    running = executor.start(sh("sleep 30"))
    unrecorded = executor.start(sh("exit 0", nominal=NOMINAL + 1))
    wait_until(lambda: executor.result(unrecorded.key))
    (executor.runs_dir / "nightly" / "20240117T0202").mkdir()  # a start that crashed before its request
    (executor.runs_dir / "nightly" / "notes").mkdir()  # not a run folder
    try:
        assert executor.prune("nightly", keep=()) == []
        assert folders(executor, "nightly") == ["20240117T0200", "20240117T0201", "20240117T0202", "notes"]
    finally:
        executor.stop(running.key, "stopped", grace_seconds=0)
    for ended in wait_ended(executor, count=2):
        executor.acknowledge(ended.key)
    assert executor.prune("nightly", keep=()) == [running.key, unrecorded.key]
    assert folders(executor, "nightly") == ["20240117T0202", "notes"]


def test_a_run_whose_wrapper_still_holds_its_lock_is_kept_until_it_lets_go(tmp_path):
    executor = Executor(tmp_path)
    [key] = finished(executor, sh("exit 0"))
    fd = os.open(executor.run_dir(key) / "wrapper.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a wrapper that wrote exit.json and has not exited yet
        assert executor.prune("nightly", keep=()) == []
    finally:
        os.close(fd)
    assert executor.prune("nightly", keep=()) == [key]


def test_a_lost_run_is_kept_while_its_process_group_lives(tmp_path):
    executor = Executor(tmp_path)
    handle = executor.start(sh("sleep 30"))
    pid = wait_until(lambda: _read(handle.run_dir / "pid"))
    try:
        os.kill(pid["wrapper_pid"], signal.SIGKILL)
        [ended] = wait_ended(executor)
        assert ended.note.startswith("lost:")
        executor.acknowledge(ended.key)
        assert executor.prune("nightly", keep=()) == []  # its command may run on
    finally:
        os.killpg(pid["pgid"], signal.SIGKILL)
    wait_until(lambda: executor.prune("nightly", keep=()) == [handle.key])


def test_a_removal_cut_short_by_a_crash_confuses_no_one_and_is_finished_by_the_next_prune(tmp_path, monkeypatch):
    first = Executor(tmp_path)
    [gone, kept] = finished(first, sh("exit 0"), sh("exit 1", nominal=NOMINAL + 1))

    def crash_midway(path, *args, **kwargs):
        for name in ("acknowledged", "exit.json"):  # the files that mark a run as over go first
            os.unlink(os.path.join(path, name))
        raise SystemExit("the runner died here")

    with monkeypatch.context() as patch:
        patch.setattr(files.shutil, "rmtree", crash_midway)
        with pytest.raises(SystemExit):
            first.prune("nightly", keep=[kept])
    [trash] = [name for name in folders(first, "nightly") if name.startswith(".deleting-")]

    second = Executor(tmp_path)  # the restarted runner
    assert second.adopt() == [] and second.poll() == []  # no run is resumed, lost or reported again
    assert second.result(gone) is None
    assert second.prune("nightly", keep=[kept]) == []
    assert folders(second, "nightly") == ["20240117T0201"]
    assert not second.start(sh("exit 1", nominal=NOMINAL + 1)).started


def test_a_schedule_left_without_runs_loses_its_folder_and_can_run_again(tmp_path):
    executor = Executor(tmp_path)
    [key] = finished(executor, sh("exit 0", schedule="retired"))
    assert executor.prune("retired", keep=()) == [key]
    assert not (executor.runs_dir / "retired").exists()
    assert executor.prune("retired", keep=()) == [] and executor.prune("never-ran", keep=()) == []
    [again] = finished(executor, sh("exit 0", schedule="retired"))
    assert again == key and executor.result(again).outcome == "succeeded"


def test_prune_takes_only_a_schedule_name(tmp_path):
    executor = Executor(tmp_path)
    finished(executor, sh("exit 0"))
    for bad in ("..", "../nightly", "nightly/20240117T0200", ""):
        with pytest.raises(ValueError):
            executor.prune(bad, keep=())
    assert folders(executor, "nightly") == ["20240117T0200"]


def _read(path):
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
