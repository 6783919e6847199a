"""The layers hold (core <- manifest and clock <- drivers <- cli; no driver imports another), the
core stays pure, and the harness stays standard-library only."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_import_contracts_of_pyproject_hold() -> None:
    lint_imports = shutil.which("lint-imports")
    assert lint_imports is not None, "import-linter is a test dependency: pip install -e '.[test]'"
    result = subprocess.run([lint_imports], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_importing_the_harness_loads_only_the_standard_library() -> None:
    probe = ("import sys; from cronctl import run; "
             "print(sorted(m for m in ('kopf', 'kubernetes', 'yaml', 'aiohttp') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                            env={"PYTHONPATH": str(ROOT / "operator")}, check=True)
    assert result.stdout.strip() == "[]"
