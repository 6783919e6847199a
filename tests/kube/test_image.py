"""The operator's image, built from the Dockerfile without a Docker daemon and started.

``scripts/build-image`` makes a Python base from Debian's packages (mmdebstrap) and builds the
Dockerfile on it with ``buildah bud --isolation chroot``; both are cached in buildah's storage, and
a cold build prints its time. The operator then runs from the image, as the image's non-root user,
against the test API server, with the clock injected through a mounted file: a CronSchedule fires a
Job. ``buildah run --isolation chroot`` shares the host's network, so the operator reaches the API
server on loopback and the test reaches its health endpoint.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import time
import tomllib
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from .helpers import ROOT, Cluster, job_of, kubectl, ready, schedule_manifest, wait_for
from .test_metrics import free_port

pytestmark = pytest.mark.cluster

RUNTIME_USER = "10001:10001"


@pytest.fixture(scope="session")
def image(request: pytest.FixtureRequest) -> str:
    """The image's tag, built first if buildah's storage lacks it (progress shown, not captured)."""
    capman = request.config.pluginmanager.getplugin("capturemanager")
    started = time.monotonic()
    with capman.global_and_fixture_disabled():
        done = subprocess.run([str(ROOT / "scripts" / "build-image")], stdout=subprocess.PIPE, text=True,
                              stderr=sys.stderr)
    assert done.returncode == 0, "scripts/build-image failed (its output is above)"
    print(f"\nimage {done.stdout.split()[-1]} ready in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return done.stdout.split()[-1]


def buildah(*args: str) -> str:
    return subprocess.run(["buildah", *args], check=True, capture_output=True, text=True).stdout


def inspect(tag: str) -> dict[str, Any]:
    return json.loads(buildah("inspect", "--type", "image", tag))


def run_in(tag: str, script: str) -> subprocess.CompletedProcess[str]:
    container = buildah("from", "--quiet", tag).strip()
    try:
        return subprocess.run(["buildah", "run", "--isolation", "chroot", container, "--", "sh", "-c", script],
                              capture_output=True, text=True, timeout=120)
    finally:
        buildah("rm", container)


# -- what is in the image -----------------------------------------------------------------


def test_the_image_runs_as_a_non_root_user_and_says_what_it_is(image: str) -> None:
    config = inspect(image)["OCIv1"]["config"]
    assert config["User"] == RUNTIME_USER
    assert config["Entrypoint"] == ["cronctl", "operator"]
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == version
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert labels["org.opencontainers.image.title"] == "cronctl"
    assert re.fullmatch(r"[0-9a-f]{40}", labels["org.opencontainers.image.revision"])
    done = run_in(image, "id -u; cronctl --version; kubectl-cronctl --version")
    assert done.stdout.split("\n")[:3] == ["10001", f"cronctl {version}", f"kubectl-cronctl {version}"], done.stderr


def test_nothing_in_the_running_image_can_install_or_build_a_package(image: str) -> None:
    done = run_in(image, "python -c 'import pip' 2>/dev/null && echo pip-imports; "
                         "for tool in pip pip3 gcc cc make; do command -v $tool; done; "
                         "find / -xdev \\( -name '*.whl' -o -name ensurepip -o -name 'setuptools' \\) -print 2>/dev/null")
    assert done.stdout == "", f"installers left in the image:\n{done.stdout}"


def test_no_layer_of_the_image_holds_a_wheel_or_an_installer(image: str, tmp_path: Path) -> None:
    """What is deleted in a later layer still ships in the earlier one: the layers the Dockerfile
    adds over its base are read file by file."""
    base_layers = set(inspect(base_of(image))["OCIv1"]["rootfs"]["diff_ids"])
    added = [layer for layer in inspect(image)["OCIv1"]["rootfs"]["diff_ids"] if layer not in base_layers]
    assert added, "the Dockerfile added no layer?"
    buildah("push", "--quiet", "--disable-compression", image, f"dir:{tmp_path / 'image'}")
    offending = []
    for layer in added:
        with tarfile.open(tmp_path / "image" / layer.split(":")[1]) as tar:
            offending += [name for name in tar.getnames()
                          if name.endswith(".whl") or re.search(r"site-packages/(pip|setuptools|wheel)(/|-)", name)]
    assert offending == []


def base_of(tag: str) -> str:
    """The base the build script builds on (the Dockerfile's PYTHON_IMAGE)."""
    return subprocess.run([str(ROOT / "scripts" / "build-image"), "--print-base"], check=True,
                          capture_output=True, text=True).stdout.strip()


# -- the operator from the image -----------------------------------------------------------


class ImageOperator:
    """``cronctl operator`` inside a working container of the image (``buildah run``)."""

    def __init__(self, tag: str, cp: Any, namespace: str, workdir: Path) -> None:
        self.config_dir, self.clock_dir = workdir / "config", workdir / "clock"
        for folder in (self.config_dir, self.clock_dir):
            folder.mkdir(mode=0o755)
            folder.chmod(0o755)  # read by the image's user 10001, not by root
        flat = kubectl(cp, "config", "view", "--flatten", "--minify").stdout
        (self.config_dir / "kubeconfig").write_text(flat)
        (self.config_dir / "kubeconfig").chmod(0o644)
        self.set_clock("2024-03-01T00:00")
        self.port = free_port()
        self.container = buildah("from", "--quiet", tag).strip()
        self.log = (workdir / "operator.log").open("wb")
        self.process = subprocess.Popen(
            ["buildah", "run", "--isolation", "chroot",
             "--volume", f"{self.config_dir}:/config:ro", "--volume", f"{self.clock_dir}:/clock:ro",
             "--env", "KUBECONFIG=/config/kubeconfig", "--env", "CRONCTL_CLOCK_FILE=/clock/now",
             self.container, "--", "cronctl", "operator", "--namespace", namespace,
             "--liveness", f"http://127.0.0.1:{self.port}/healthz"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def set_clock(self, text: str) -> None:
        tmp = self.clock_dir / "now.tmp"
        tmp.write_text(text)
        tmp.chmod(0o644)
        tmp.replace(self.clock_dir / "now")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def inner_pid(self) -> int:
        """The operator's own process (buildah's chroot runs it in the host's PID namespace)."""
        pending = [self.process.pid]
        while pending:
            pid = pending.pop()
            for task in Path(f"/proc/{pid}/task").iterdir():
                children = (task / "children").read_text().split()
                pending += [int(child) for child in children]
                for child in children:
                    cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
                    if not cmdline[0].startswith(b"buildah") and any(part.endswith(b"/cronctl") for part in cmdline[:2]):
                        return int(child)
        raise AssertionError("the operator's process is not under buildah run")

    def stop(self) -> int | None:
        """SIGTERM to the operator itself (buildah run answers its own SIGTERM with a kill)."""
        if self.process.poll() is None:
            try:
                os.kill(self.inner_pid(), signal.SIGTERM)
                return self.process.wait(timeout=30)
            except (AssertionError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(timeout=30)
        return None

    def close(self) -> None:
        self.stop()
        self.log.close()
        subprocess.run(["buildah", "rm", self.container], capture_output=True)


@pytest.fixture
def image_operator(image: str, control_plane: Any, crd: None, namespace: str,
                   tmp_path: Path) -> Iterator[ImageOperator]:
    operator = ImageOperator(image, control_plane, namespace, tmp_path)
    yield operator
    operator.close()
    print((tmp_path / "operator.log").read_text(errors="replace")[-6000:])


def test_the_operator_started_from_the_image_launches_a_job(image_operator: ImageOperator, cluster: Cluster) -> None:
    wait_for("the operator's health endpoint", image_operator.healthy, timeout=90)
    status = Path(f"/proc/{image_operator.inner_pid()}/status").read_text()
    assert re.search(r"^Uid:\s+10001\s", status, re.M), "the operator does not run as the image's user"

    cluster.apply(schedule_manifest("tick", "*/5 * * * *"))
    wait_for("tick seen", ready(cluster, "tick"))
    image_operator.set_clock("2024-03-01T00:05")
    wait_for("the Job of 00:05", lambda: cluster.job_names("tick") == [job_of("tick", "2024-03-01T00:05")])
    wait_for("the launch recorded", lambda: cluster.status("tick").get("launched") == 1)

    assert image_operator.stop() == 0, "SIGTERM did not stop the operator cleanly"
