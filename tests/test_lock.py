"""requirements.lock: what the image installs (pip --require-hashes) and what the tests run on.

It must say what pyproject.toml asks for, nothing stale, every file hashed; and the environment the
tests run in holds cronctl's dependencies at the locked versions (scripts/venv.sh constrains it), so
what passes here is what ships. scripts/lock rewrites it.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCK_TEXT = (ROOT / "requirements.lock").read_text()
STALE = "requirements.lock is stale: run scripts/lock"


def locked() -> dict[str, tuple[str, list[str], list[str]]]:
    """name -> (version, hashes, what pulls it in), read from pip-compile's output."""
    entries: dict[str, tuple[str, list[str], list[str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", LOCK_TEXT):
        pin = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", block)
        if not pin:
            continue
        hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", block)
        comments = block.split("# via", 1)[1].split("\n\n")[0] if "# via" in block else ""
        via = re.findall(r"#?\s*([A-Za-z0-9][^\n]*)", comments)
        entries[canonicalize_name(pin[1])] = (pin[2], hashes, [v.strip() for v in via])
    return entries


def dependencies() -> list[Requirement]:
    return [Requirement(text) for text in PYPROJECT["project"]["dependencies"]]


def test_every_dependency_of_pyproject_is_locked_at_a_version_it_allows() -> None:
    lock = locked()
    for requirement in dependencies():
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{requirement} is not in requirements.lock: {STALE}"
        assert requirement.specifier.contains(lock[name][0], prereleases=True), \
            f"{requirement} does not allow the locked {lock[name][0]}: {STALE}"


def test_the_build_requirement_is_locked_too() -> None:
    """The image builds cronctl's wheel without fetching anything the lock does not hash."""
    lock = locked()
    for text in PYPROJECT["build-system"]["requires"]:
        requirement = Requirement(text)
        version = lock[canonicalize_name(requirement.name)][0]
        assert requirement.specifier.contains(version), f"{requirement} vs locked {version}: {STALE}"


def test_nothing_in_the_lock_is_stale() -> None:
    """Every locked package is pulled in by cronctl, its build, or another locked package."""
    lock = locked()
    for name, (_, _, via) in lock.items():
        assert via, f"{name} says nothing of what needs it"
        pulled_by = {canonicalize_name(v.split()[0]) for v in via}
        assert pulled_by & ({"cronctl"} | set(lock)), f"{name} is locked for {via}: {STALE}"


def test_every_locked_package_carries_the_hashes_of_its_files() -> None:
    for name, (version, hashes, _) in locked().items():
        assert hashes, f"{name}=={version} has no --hash: the image's pip --require-hashes would refuse it"


def test_the_tests_run_on_the_locked_versions() -> None:
    lock = locked()
    wrong = {}
    for requirement in dependencies():
        name = canonicalize_name(requirement.name)
        installed = metadata.version(requirement.name)
        if installed != lock[name][0]:
            wrong[name] = (installed, lock[name][0])
    assert wrong == {}, f"installed vs locked (scripts/venv.sh installs with the lock as constraints): {wrong}"


def test_the_image_installs_the_lock_and_only_the_lock() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    installs = re.findall(r"pip install ([^\n]*)", dockerfile)
    assert any("--require-hashes" in line and "requirements.lock" in line for line in installs), installs
    assert all("--no-deps" in line for line in installs), f"an install may resolve afresh: {installs}"
