"""Helpers for the runner's tests: helper scripts run as real processes, bounded waits."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

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
