"""What a run's start and end cost the file system (issue 45, the speed goal of 200 starts in 2 s).

Each fsync that follows a change commits the file system's journal (milliseconds on a busy disk);
one that follows none costs next to nothing. So each file is made durable with its changes first
and the folders after: the request's folder after its request.json, ``launching`` written in place
(only its existence is read), the acknowledgements of a save all marked before any is made durable.
And the runner does not wait for the forking server's answer to each fork.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cronctl.runner.engine import Runner
from cronctl.runner.executor import Executor, Forked

from .support import SOURCE_ROOT, Clock, journal, manifest, until
from .test_executor import FakeClock, sh, wait_ended


def fsynced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths this process fsyncs from here on, in order."""
    paths: list[str] = []
    real = os.fsync

    def recorded(fd: int) -> None:
        paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", recorded)
    return paths


def test_a_start_makes_its_request_durable_then_its_folder_then_the_folders_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mkdir, the request's temporary file (its fsync commits the folder's creation too), its rename
    and the folder's fsync: two commits. The schedule's folder last, with nothing left to commit; it
    was first (three commits)."""
    executor = Executor(tmp_path, now=FakeClock())
    paths = fsynced(monkeypatch)
    handle = executor.start(sh("true"))
    assert len(paths) == 3 and Path(paths[0]).name.startswith(".request.json.tmp-")
    assert paths[1:] == [str(handle.run_dir), str(handle.run_dir.parent)]
    wait_ended(executor)


WRAPPER_EVENTS = """
import json, os, sys
from pathlib import Path
sys.path.insert(0, {operator!r})
from cronctl.runner import wrapper
events, fsync, replace = [], os.fsync, os.replace
os.fsync = lambda fd: (events.append(["fsync", os.readlink(f"/proc/self/fd/{{fd}}")]), fsync(fd))[1]
os.replace = lambda a, b: (events.append(["replace", str(b)]), replace(a, b))[1]
wrapper.run(Path({run_dir!r}))
print(json.dumps(events))
"""


def test_the_wrapper_writes_launching_in_place_with_one_commit(tmp_path: Path) -> None:
    """launching: its fsync and its folder's, no temporary file renamed over it (two commits)."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "request.json").write_text(json.dumps({"schedule": "nightly", "nominal_time": "2024-03-01T00:05:00Z",
                                                      "command": ["true"], "args": []}))
    result = subprocess.run([sys.executable, "-c", WRAPPER_EVENTS.format(operator=str(SOURCE_ROOT),
                                                                          run_dir=str(run_dir))],
                            capture_output=True, text=True, timeout=60, check=True)
    events = json.loads(result.stdout)
    before_pid = events[:events.index(["replace", str(run_dir / "pid")])]
    assert before_pid == [["fsync", str(run_dir / "launching")], ["fsync", str(run_dir)]]
    assert (run_dir / "launching").exists() and json.loads((run_dir / "exit.json").read_text())["exit_code"] == 0


def test_a_save_marks_every_end_acknowledged_before_it_makes_any_durable(folder: Path) -> None:
    for name in ("a", "b", "c"):
        (folder / f"{name}.yaml").write_text(manifest(name, "5 0 * * *", ["true"]))
    clock = Clock("2024-03-01T00:04")
    r = Runner(folder, clock, 3, say=lambda text: None)
    assert r.open()
    r.step()
    r.save_every = 3600.0  # the ends wait in memory for the one save below
    r.flush()
    clock.set("2024-03-01T00:05")
    until(r, lambda: len(r.memory.to_acknowledge) == 3)
    events: list[tuple[str, str]] = []
    acknowledge, make_durable = r.executor.acknowledge, r.executor.make_durable
    r.executor.acknowledge = lambda key, durable=True: (events.append(("mark", key.schedule)),  # type: ignore
                                                       acknowledge(key, durable))
    r.executor.make_durable = lambda key: (events.append(("durable", key.schedule)), make_durable(key))  # type: ignore
    r.flush()
    assert [what for what, _ in events] == ["mark"] * 3 + ["durable"] * 3
    assert all((run / "acknowledged").exists() for run in folder.glob("runs/*/*"))
    assert {row["outcome"] for name in "abc" for row in journal(folder, name)} == {"succeeded"}
    r.lock.release()


def test_the_runner_asks_the_server_for_a_wrapper_and_does_not_wait_for_its_answer(tmp_path: Path) -> None:
    """The fork's answer (the wrapper's pid) is read later, with the server's other answers; the
    executor waited for it in each start (1-2 ms of the runner's turn a run)."""
    executor = Executor(tmp_path, now=FakeClock())
    handle = executor.start(sh("echo hi"))
    forked = executor._watched[handle.key].popen
    assert isinstance(forked, Forked) and forked.pid is None  # asked, not waited for
    [ended] = wait_ended(executor)
    assert ended.outcome == "succeeded" and isinstance(forked.pid, int)
