"""Fixtures for the Helm chart tests: the helm binary the project's build script makes.

helm is built from the Go module proxy by ``scripts/build-control-plane.sh
--with-helm`` (``.ci/run`` does so), into the same cache as the control plane.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO_ROOT / "scripts" / "build-control-plane.sh"
CHARTS = REPO_ROOT / "charts"


@pytest.fixture(scope="session")
def helm() -> Path:
    """The path of the helm binary; builds it (minutes, once) when the cache lacks it."""
    bin_dir = Path(subprocess.run(["bash", str(BUILD_SCRIPT), "--print-bin-dir"], check=True,
                                  capture_output=True, text=True).stdout.strip().splitlines()[-1])
    if subprocess.run(["bash", str(BUILD_SCRIPT), "--with-helm", "--check"], capture_output=True).returncode != 0:
        subprocess.run(["bash", str(BUILD_SCRIPT), "--with-helm"], check=True)
    binary = bin_dir / "helm"
    assert binary.is_file(), f"{binary}: the build script did not produce helm"
    return binary
