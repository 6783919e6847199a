"""cronctl's version, from git at build time (everything else is pyproject.toml's).

- ``CRONCTL_VERSION`` in the environment wins: ``scripts/release VERSION`` and the Dockerfile's
  ``VERSION`` build argument set it (a Docker build context holds no ``.git``).
- A tag ``vX.Y.Z`` (or ``vX.Y.ZrcN``) on the commit built: ``X.Y.Z``; N commits past it:
  ``X.Y.(Z+1).devN+gHASH`` (``X.Y.Zrc(N+1).devN+gHASH``), so a build between two releases sorts after
  the first and before the next (PEP 440, as setuptools-scm guesses). No tag yet (a fresh clone of a project never released): ``0.1.devN+gHASH``, N the
  commits in all. Uncommitted changes add ``.dirty`` to the local part: two builds differ.
- No git: the version an sdist recorded in its ``PKG-INFO``, else ``0+unknown``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent
TAG = re.compile(r"v(\d+)\.(\d+)\.(\d+)(?:(a|b|rc)(\d+))?")  # v0.2.0, v0.3.0rc1


def pep440_of_describe(described: str, commits: int) -> str:
    """The version ``git describe --tags --long --match 'v[0-9]*' --dirty --always`` names:
    ``v0.2.0-0-gabc1234`` is ``0.2.0``, ``v0.2.0-3-gabc1234-dirty`` ``0.2.1.dev3+gabc1234.dirty``,
    a bare ``abc1234`` (no tag) or a tag that is no version ``0.1.dev{commits}+gabc1234``."""
    dirty = described.endswith("-dirty")
    described = described.removesuffix("-dirty")
    suffix = ".dirty" if dirty else ""
    found = re.fullmatch(r"(.+)-(\d+)-g([0-9a-f]+)", described)
    if found is None:
        return f"0.1.dev{commits}+g{described}{suffix}"
    tag, distance, sha = found.group(1), int(found.group(2)), found.group(3)
    release = TAG.fullmatch(tag)
    if release is None:
        return f"0.1.dev{commits}+g{sha}{suffix}"
    major, minor, patch, pre, number = release.groups()
    if distance == 0:
        return tag[1:] + (f"+{suffix[1:]}" if dirty else "")
    after = f"{major}.{minor}.{patch}{pre}{int(number) + 1}" if pre else f"{major}.{minor}.{int(patch) + 1}"
    return f"{after}.dev{distance}+g{sha}{suffix}"


def git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def version() -> str:
    if os.environ.get("CRONCTL_VERSION"):
        return os.environ["CRONCTL_VERSION"]
    if (ROOT / ".git").exists():
        described = git("describe", "--tags", "--long", "--match", "v[0-9]*", "--dirty", "--always", "--abbrev=7")
        commits = git("rev-list", "--count", "HEAD")
        if described and commits:
            return pep440_of_describe(described, int(commits))
    pkg_info = ROOT / "PKG-INFO"
    if pkg_info.is_file():
        found = re.search(r"^Version: (.+)$", pkg_info.read_text(), re.M)
        if found:
            return found.group(1).strip()
    return "0+unknown"


if __name__ == "__main__":  # as setuptools runs it; scripts/build-image calls version() alone
    from setuptools import setup

    setup(version=version())
