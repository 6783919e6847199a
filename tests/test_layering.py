"""The core stays pure and the harness stays standard-library only."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("lint-imports") is None, reason="import-linter is not installed")
def test_the_core_imports_no_framework_and_no_clock() -> None:
    result = subprocess.run(["lint-imports"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_importing_the_harness_loads_only_the_standard_library() -> None:
    probe = ("import sys; from cronctl import run; "
             "print(sorted(m for m in ('kopf', 'kubernetes', 'yaml', 'aiohttp') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                            env={"PYTHONPATH": str(ROOT / "operator")}, check=True)
    assert result.stdout.strip() == "[]"
