"""The core and what the drivers share (the manifest reader, the clock, convert) type-check under mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_core_and_the_shared_layer_type_check_strictly() -> None:
    # The files and the strictness are pyproject.toml's [tool.mypy].
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
