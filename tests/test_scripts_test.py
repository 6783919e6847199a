"""scripts/test's two passes and the control planes' builds, on fakes (no Go build, no cluster).

scripts/test is copied into a directory of its own beside a fake ``scripts/venv.sh`` (a PATH with a
fake ``python`` whose pytest only says it ran), and a fake ``scripts/build-control-plane.sh``
(whose oldest plane is complete or is built in a second): the oldest plane's build starts in the
background at the lowest priority only when its cache is not complete, overlaps the main pass, is
waited for before the smoke subset, and its failure fails the run with its log's end. And the real
``scripts/build-control-plane.sh --oldest`` on a fake cache and a fake go: it copies the main
plane's kwok when its stamp is the same (one module for both planes) and builds it otherwise.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FAKE_BUILD = r"""#!/usr/bin/env bash
# build-control-plane.sh as scripts/test calls it: each call a line in $FAKE_LOG.
oldest=main
[[ " $* " == *" --oldest "* ]] && oldest=oldest
complete() { [ "$FAKE_OLDEST_COMPLETE" = 1 ] || [ -e "$FAKE_STATE/oldest-built" ]; }
case " $* " in
  *" --print-bin-dir "*) echo "/fake/$oldest/bin"; exit 0 ;;
  *" --check "*) echo "check $oldest" >> "$FAKE_LOG"; [ "$oldest" = main ] || complete; exit $? ;;
esac
if [ "$oldest" = main ]; then echo "build main $*" >> "$FAKE_LOG"; exit 0; fi
if complete; then echo "up to date oldest" >> "$FAKE_LOG"; exit 0; fi
echo "build-start oldest nice=$(nice)" >> "$FAKE_LOG"
sleep "$FAKE_BUILD_SECONDS"
if [ "$FAKE_BUILD_FAILS" = 1 ]; then
  echo "build-control-plane: building kube-apiserver v1.33.13"
  echo "go: the fake compile error"
  exit 3
fi
touch "$FAKE_STATE/oldest-built"
echo "build-end oldest" >> "$FAKE_LOG"
"""

FAKE_PYTHON = r"""#!/usr/bin/env bash
# python -m pytest ARGS: says which pass ran, on which plane, for $FAKE_PYTEST_SECONDS.
shift 2
pass=main
[ -n "${CRONCTL_CONTROL_PLANE_BIN:-}" ] && pass="oldest on $CRONCTL_CONTROL_PLANE_BIN"
echo "pytest-start $pass: $*" >> "$FAKE_LOG"
sleep "$FAKE_PYTEST_SECONDS"
echo "pytest-end $pass" >> "$FAKE_LOG"
"""


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


Ran = tuple[subprocess.CompletedProcess[str], list[str]]


def scripts_test(tmp_path: Path, oldest_complete: bool, build_fails: bool = False,
                 build_seconds: float = 1.5, pytest_seconds: float = 1.0) -> Ran:
    """Runs a copy of scripts/test on the fakes; its result and the fakes' lines, in order."""
    tree, bin_dir, state = tmp_path / "tree", tmp_path / "bin", tmp_path / "state"
    for made in (tree / "scripts", bin_dir, state):
        made.mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "test", tree / "scripts" / "test")
    (tree / "scripts" / "venv.sh").write_text(f'ensure_venv() {{ export PATH="{bin_dir}:$PATH"; }}\n')
    executable(tree / "scripts" / "build-control-plane.sh", FAKE_BUILD)
    executable(bin_dir / "python", FAKE_PYTHON)
    log = tmp_path / "log"
    env = {**os.environ, "FAKE_LOG": str(log), "FAKE_STATE": str(state), "TMPDIR": str(tmp_path),
           "FAKE_OLDEST_COMPLETE": "1" if oldest_complete else "0", "FAKE_BUILD_FAILS": "1" if build_fails else "0",
           "FAKE_BUILD_SECONDS": str(build_seconds), "FAKE_PYTEST_SECONDS": str(pytest_seconds)}
    env.pop("CRONCTL_CONTROL_PLANE_BIN", None)
    done = subprocess.run(["bash", str(tree / "scripts" / "test")], env=env, capture_output=True, text=True,
                          timeout=60)
    return done, log.read_text().splitlines()


def test_with_the_oldest_plane_cached_nothing_is_built_in_the_background(tmp_path: Path) -> None:
    done, lines = scripts_test(tmp_path, oldest_complete=True, pytest_seconds=0.1)
    assert done.returncode == 0, done.stderr
    assert not any(line.startswith("build-start") for line in lines), lines
    assert "in the background" not in done.stderr
    assert lines == ["build main --with-helm --with-promtool", "check oldest",
                     "pytest-start main: --durations=30", "pytest-end main", "up to date oldest",
                     "pytest-start oldest on /fake/oldest/bin: --durations=30 -m smoke tests/kube",
                     "pytest-end oldest on /fake/oldest/bin"]


def test_an_uncached_oldest_plane_is_built_at_the_lowest_priority_during_the_main_pass_and_waited_for(
        tmp_path: Path) -> None:
    done, lines = scripts_test(tmp_path, oldest_complete=False, build_seconds=1.5, pytest_seconds=1.0)
    assert done.returncode == 0, done.stderr
    [started] = [line for line in lines if line.startswith("build-start oldest")]
    assert started == "build-start oldest nice=19"
    # It ran beside the main pass (started before the main pass ended) and the smoke subset came after it.
    assert lines.index(started) < lines.index("pytest-end main"), lines
    assert lines.index("pytest-end main") < lines.index("build-end oldest"), lines  # the build outlasted the pass
    assert lines.index("build-end oldest") < lines.index(
        "pytest-start oldest on /fake/oldest/bin: --durations=30 -m smoke tests/kube"), lines
    assert "waiting for the oldest plane's build" in done.stderr


def test_the_background_builds_failure_fails_the_run_with_its_logs_end(tmp_path: Path) -> None:
    done, lines = scripts_test(tmp_path, oldest_complete=False, build_fails=True, build_seconds=0.2)
    assert done.returncode == 1
    assert "pytest-end main" in lines  # the main pass ran to its end
    assert not any(line.startswith("pytest-start oldest") for line in lines), lines  # no smoke subset without its plane
    assert "building the oldest claimed Kubernetes' plane failed (exit 3)" in done.stderr
    assert "go: the fake compile error" in done.stderr  # the log's tail, said
    assert "the smoke subset on the oldest 1" in done.stderr


# -- build-control-plane.sh --oldest: kwok from the main plane ---------------------------------

FAKE_GO = r"""#!/usr/bin/env bash
echo "go $*" >> "$FAKE_GO_LOG"
case "$1" in
  version) echo "go version go0.0 fake" ;;
  env) echo "/fake/$2" ;;
  *) echo "fake go: $1 is not faked" >&2; exit 1 ;;
esac
"""


def stamp(*files: Path) -> str:
    """build-control-plane.sh's inputs_hash: its build revision, then the files, sha256, 16 digits."""
    rev = re.search(r"^BUILD_REV=(\d+)$", (ROOT / "scripts" / "build-control-plane.sh").read_text(), re.M)
    assert rev is not None
    data = f"rev={rev.group(1)}\n".encode() + b"".join(path.read_bytes() for path in files)
    return hashlib.sha256(data).hexdigest()[:16]


def bin_dir(cache: Path, *flags: str) -> Path:
    """The plane's bin dir in ``cache``, as the script names it."""
    printed = subprocess.run(["bash", str(ROOT / "scripts" / "build-control-plane.sh"), *flags, "--print-bin-dir"],
                             env={**os.environ, "CRONCTL_CACHE": str(cache)}, capture_output=True, text=True,
                             check=True, timeout=60)
    return Path(printed.stdout.strip())


@pytest.mark.parametrize("same_stamp", [True, False], ids=["same-stamp", "other-stamp"])
def test_the_oldest_plane_copies_the_main_planes_kwok_when_it_is_the_same_build(tmp_path: Path,
                                                                                 same_stamp: bool) -> None:
    modules = ROOT / "scripts" / "control-plane"
    kwok_stamp = stamp(modules / "kwok" / "go.mod", modules / "kwok" / "go.sum")
    main_bin, oldest_bin = bin_dir(tmp_path), bin_dir(tmp_path, "--oldest")
    assert main_bin != oldest_bin
    for made in (main_bin, oldest_bin):
        made.mkdir(parents=True)
    for binary in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"):
        executable(oldest_bin / binary, "#!/bin/sh\n")
    oldest = modules / "oldest"
    (oldest_bin / ".stamp-control-plane").write_text(
        stamp(oldest / "go.mod", oldest / "go.sum", oldest / "cmd" / "etcd" / "main.go") + "\n")
    executable(main_bin / "kwok", "#!/bin/sh\necho 'kwok of the main plane'\n")
    (main_bin / ".stamp-kwok").write_text((kwok_stamp if same_stamp else "0123456789abcdef") + "\n")
    go, go_log = tmp_path / "go", tmp_path / "go.log"
    executable(go, FAKE_GO)
    env = {**os.environ, "CRONCTL_CACHE": str(tmp_path), "GO": str(go), "FAKE_GO_LOG": str(go_log)}
    script = [str(ROOT / "scripts" / "build-control-plane.sh"), "--oldest"]
    done = subprocess.run(["bash", *script], env=env, capture_output=True, text=True, timeout=60)
    built = [line for line in go_log.read_text().splitlines() if line.startswith("go build")]
    if same_stamp:
        assert done.returncode == 0, done.stdout + done.stderr
        assert built == []
        assert "copied from the main plane's" in done.stdout
        assert (oldest_bin / "kwok").read_bytes() == (main_bin / "kwok").read_bytes()
        assert (oldest_bin / ".stamp-kwok").read_text().strip() == kwok_stamp
        check = subprocess.run(["bash", *script, "--check"], env=env, timeout=60)
        assert check.returncode == 0  # the oldest plane is complete
    else:
        assert done.returncode != 0  # the fake go builds nothing
        assert [line.split()[-1] for line in built] == ["sigs.k8s.io/kwok/cmd/kwok"]
        assert not (oldest_bin / "kwok").exists()
