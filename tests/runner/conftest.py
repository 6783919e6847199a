"""Fixtures for the runner's tests."""

from __future__ import annotations

import pytest

from .support import Helper


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


