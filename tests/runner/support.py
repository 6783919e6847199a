"""Helpers for the runner's tests: helper scripts run as real processes, bounded waits,
manifests, an injected minute clock and a runner stepped until something holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from cronctl.core.times import parse_time
from cronctl.runner.engine import Runner

HERE = Path(__file__).resolve().parent
HELPERS = HERE / "helpers"
SOURCE_ROOT = HERE.parent.parent / "operator"


def helper_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SOURCE_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


class Helper:
    """A helper script in a subprocess that reports on its stdout, one line at a time."""

    def __init__(self, script: str, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, str(HELPERS / script), *args], env=helper_env(),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    @property
    def pid(self) -> int:
        return self.process.pid

    def readline(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, f"the helper ended (code {self.process.wait()}) before saying anything"
        return line.strip()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


def wait_until(condition: Callable[[], object], timeout: float = 10.0, step: float = 0.02) -> object:
    """Poll ``condition`` until it is truthy (a bounded real wait, for real subprocesses)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout} s")
        time.sleep(step)


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


def manifest(name: str, schedule: str | list[str], command: list[str], **spec: Any) -> str:
    """A CronSchedule manifest; a list of expressions is its ``spec.schedules``."""
    container = {"name": "main", "image": "busybox", "command": command}
    if "env" in spec:
        container["env"] = [{"name": k, "value": v} for k, v in spec.pop("env").items()]
    times = {"schedules": schedule} if isinstance(schedule, list) else {"schedule": schedule}
    return json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": name},
                       "spec": {**times, **spec, "jobTemplate": {"spec": {"template": {"spec": {
                           "restartPolicy": "Never", "containers": [container]}}}}}})


class Clock:
    def __init__(self, text: str) -> None:
        self.now = t(text)

    def set(self, text: str) -> None:
        self.now = t(text)

    def __call__(self) -> int:
        return self.now


def runner(folder: Path, clock: Clock, workers: int = 2) -> Runner:
    r = Runner(folder, clock, workers, say=lambda text: None, grace_seconds=0.5)
    assert r.open()
    return r


def until(r: Runner, done: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r.step()
        value = done()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def journal(folder: Path, name: str) -> list[dict[str, Any]]:
    return json.loads((folder / "cronctl.json").read_text())["journal"].get(name, [])
