"""Fixtures for the runner's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support import Clock, Helper


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path


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


