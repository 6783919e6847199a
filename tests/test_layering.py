"""The layers hold (api <- core <- manifest and clock <- drivers <- cli; no driver imports another),
the core stays pure, the harness stays standard-library only, the operator's deciding modules
never reach its Kubernetes layer, and that layer never reaches the core."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def contracts() -> list[dict[str, Any]]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        return list(tomllib.load(file)["tool"]["importlinter"]["contracts"])


def forbidding(source: str, forbidden: str) -> dict[str, Any]:
    """The contract that forbids ``source`` to reach ``forbidden``, even through other modules."""
    [contract] = [contract for contract in contracts() if contract["type"] == "forbidden"
                  and source in contract["source_modules"] and forbidden in contract["forbidden_modules"]
                  and not contract.get("allow_indirect_imports")]
    return contract


def test_the_import_contracts_of_pyproject_hold() -> None:
    lint_imports = shutil.which("lint-imports")
    assert lint_imports is not None, "import-linter is a test dependency: pip install -e '.[test]'"
    result = subprocess.run([lint_imports], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    said = " ".join(result.stdout.split())  # lint-imports wraps the names at its width
    unchecked = [contract["name"] for contract in contracts()
                 if " ".join(contract["name"].split()) + " KEPT" not in said]
    assert unchecked == []


def test_the_operators_deciding_modules_never_reach_its_kubernetes_layer_nor_the_wall_clock() -> None:
    for deciding in ("plan", "observe", "status", "effects", "messages"):
        for forbidden in ("cronctl.operator.kube", "kubernetes", "kopf", "time"):
            forbidding(f"cronctl.operator.{deciding}", forbidden)


def test_the_operators_kubernetes_layer_never_reaches_the_core() -> None:
    forbidding("cronctl.operator.kube", "cronctl.core")


def test_importing_the_operators_deciding_modules_loads_neither_the_kubernetes_client_nor_kopf() -> None:
    deciding = forbidding("cronctl.operator.plan", "cronctl.operator.kube")["source_modules"]
    probe = (f"import sys, importlib; [importlib.import_module(m) for m in {deciding!r}]; "
             "print(sorted(m for m in ('kopf', 'kubernetes', 'cronctl.operator.kube') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                            env={"PYTHONPATH": str(ROOT / "operator")}, check=True)
    assert result.stdout.strip() == "[]"


def test_importing_the_harness_loads_only_the_standard_library() -> None:
    probe = ("import sys; from cronctl import run; "
             "print(sorted(m for m in ('kopf', 'kubernetes', 'yaml', 'aiohttp') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                            env={"PYTHONPATH": str(ROOT / "operator")}, check=True)
    assert result.stdout.strip() == "[]"
