"""A release: the version from git (setup.py), `scripts/release VERSION`'s artifacts and their
versions, and the charts' versions against what changed in them (charts/versions.txt)."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUP = runpy.run_path(str(ROOT / "setup.py"), run_name="version")


# -- the version from git -------------------------------------------------------------------


@pytest.mark.parametrize(("described", "commits", "version"), [
    ("v0.2.0-0-gabc1234", 40, "0.2.0"),
    ("v0.2.0-0-gabc1234-dirty", 40, "0.2.0+dirty"),
    ("v0.2.0-3-gabc1234", 43, "0.2.1.dev3+gabc1234"),
    ("v0.2.0-3-gabc1234-dirty", 43, "0.2.1.dev3+gabc1234.dirty"),
    ("v1.10.9-12-g0123abc", 99, "1.10.10.dev12+g0123abc"),
    ("v0.3.0rc1-0-gabc1234", 48, "0.3.0rc1"),
    ("v0.3.0rc1-2-gabc1234", 50, "0.3.0rc2.dev2+gabc1234"),
    ("abc1234", 431, "0.1.dev431+gabc1234"),  # a clone with no tag
    ("abc1234-dirty", 431, "0.1.dev431+gabc1234.dirty"),
    ("release-1-2-gabc1234", 7, "0.1.dev7+gabc1234"),  # a tag that is no version
])
def test_the_version_of_a_build_is_pep440_and_names_its_commit(described: str, commits: int, version: str) -> None:
    from packaging.version import Version

    assert SETUP["pep440_of_describe"](described, commits) == version
    assert str(Version(version)) == version


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A clone of this repository's last commit with setup.py as this tree has it."""
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--depth", "1", f"file://{ROOT}", str(target)], check=True)
    (target / "setup.py").write_bytes((ROOT / "setup.py").read_bytes())
    git(target, "config", "user.email", "t@example.invalid")
    git(target, "config", "user.name", "t")
    git(target, "add", "setup.py")
    git(target, "commit", "--quiet", "--allow-empty", "-m", "setup.py")
    return target


def version_in(tree: Path, **env: str) -> str:
    code = "import runpy; print(runpy.run_path('setup.py', run_name='v')['version']())"
    environ = {k: v for k, v in os.environ.items() if k != "CRONCTL_VERSION"} | env
    return subprocess.run([sys.executable, "-c", code], cwd=tree, check=True, capture_output=True, text=True,
                          env=environ).stdout.strip()


def test_a_fresh_clone_without_a_tag_a_tagged_one_and_one_past_the_tag(clone: Path) -> None:
    head = git(clone, "rev-parse", "--short=7", "HEAD")
    commits = git(clone, "rev-list", "--count", "HEAD")
    assert version_in(clone) == f"0.1.dev{commits}+g{head}"
    git(clone, "tag", "v0.2.0")
    assert version_in(clone) == "0.2.0"
    (clone / "README.md").write_text("changed\n")
    assert version_in(clone) == "0.2.0+dirty"
    git(clone, "commit", "--quiet", "-am", "after the release")
    assert version_in(clone) == f"0.2.1.dev1+g{git(clone, 'rev-parse', '--short=7', 'HEAD')}"
    assert version_in(clone, CRONCTL_VERSION="0.3.0") == "0.3.0"


def test_an_sdist_without_git_has_the_version_it_recorded_else_a_marked_unknown(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_bytes((ROOT / "setup.py").read_bytes())
    assert version_in(tmp_path) == "0+unknown"
    (tmp_path / "PKG-INFO").write_text("Metadata-Version: 2.4\nName: cronctl\nVersion: 0.2.0\n")
    assert version_in(tmp_path) == "0.2.0"
