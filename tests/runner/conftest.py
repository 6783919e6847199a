"""Fixtures for the runner's tests."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Iterator

import pytest

from .support import Clock, Helper


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    stop_left_over_runs(tmp_path)


def stop_left_over_runs(folder: Path) -> None:
    """Runs outlive their runner by design (a detached wrapper): a test's are stopped with it,
    so that none goes on spinning for the rest of the suite."""
    for pid_file in folder.rglob("pid"):
        try:
            pgid = json.loads(pid_file.read_text())["pgid"]
            os.killpg(int(pgid), signal.SIGKILL)
        except (OSError, ValueError, KeyError, TypeError):
            pass


@pytest.fixture
def clock() -> Clock:
    return Clock("2024-03-01T00:00")


@pytest.fixture
def helpers():
    started: list[Helper] = []

    def start(script: str, *args: str) -> Helper:
        helper = Helper(script, *args)
        started.append(helper)
        return helper

    yield start
    for helper in started:
        helper.kill()


