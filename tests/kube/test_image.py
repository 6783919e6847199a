"""The operator's image, built from the Dockerfile without a Docker daemon and started.

``scripts/build-image`` makes a Debian stage from Debian's packages (mmdebstrap) and builds the
Dockerfile with it (``buildah bud --isolation chroot``): the image is a minimal root file system copied
out of that stage, from scratch, and the operator's environment; both are cached in buildah's storage,
and a cold build prints its time. There is no shell in it: what the tests run in it is a program
(``buildah run CONTAINER -- cronctl ...``), and what they look for in it they read from its mounted
file system. The operator runs from the image, as the image's non-root user, against the test API
server, with the clock injected through a mounted file: a CronSchedule fires a Job. ``buildah run
--isolation chroot`` shares the host's network, so the operator reaches the API server on loopback
and the test reaches its health endpoint.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import signal
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from .helpers import ROOT, Cluster, job_of, kubectl, ready, schedule_manifest, wait_for
from .test_metrics import free_port

pytestmark = pytest.mark.cluster

RUNTIME_USER = "10001:10001"
MAX_IMAGE_BYTES = 120 * 10**6


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


def run_in(tag: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """A program run in a working container of the image (there is no shell to run a script)."""
    container = buildah("from", "--quiet", tag).strip()
    try:
        return subprocess.run(["buildah", "run", "--isolation", "chroot", container, "--", *argv],
                              capture_output=True, text=True, timeout=120)
    finally:
        buildah("rm", container)


@pytest.fixture(scope="session")
def rootfs(image: str) -> Iterator[Path]:
    """The image's file system, mounted read-only in a working container."""
    container = buildah("from", "--quiet", image).strip()
    try:
        yield Path(buildah("mount", container).strip())
    finally:
        subprocess.run(["buildah", "rm", container], capture_output=True)


@pytest.fixture(scope="session")
def layers(image: str, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The image's layers as uncompressed tar files (``buildah push dir:``)."""
    folder = tmp_path_factory.mktemp("image") / "image"
    buildah("push", "--quiet", "--disable-compression", image, f"dir:{folder}")
    return [folder / layer.split(":")[1] for layer in inspect(image)["OCIv1"]["rootfs"]["diff_ids"]]


# -- what is in the image -----------------------------------------------------------------


def test_the_image_runs_as_a_non_root_user_and_says_what_it_is(image: str) -> None:
    config = inspect(image)["OCIv1"]["config"]
    assert config["User"] == RUNTIME_USER
    assert config["Entrypoint"] == ["cronctl", "operator"]
    version = runpy.run_path(str(ROOT / "setup.py"), run_name="version")["version"]()  # as build-image asks
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == version
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert labels["org.opencontainers.image.title"] == "cronctl"
    assert re.fullmatch(r"[0-9a-f]{40}", labels["org.opencontainers.image.revision"])
    for argv, said in [(["python", "-c", "import os; print(os.getuid())"], "10001"),
                       (["cronctl", "--version"], f"cronctl {version}"),
                       (["kubectl-cronctl", "--version"], f"kubectl-cronctl {version}")]:
        done = run_in(image, *argv)
        assert done.stdout.strip() == said, done.stderr


def test_the_image_is_under_120_mb_from_scratch_with_no_shell(image: str, layers: list[Path]) -> None:
    """FROM scratch: every layer is the Dockerfile's own (no base image under it)."""
    size = sum(layer.stat().st_size for layer in layers)
    print(f"\nthe image's layers: {size / 10**6:.1f} MB uncompressed")
    assert size <= MAX_IMAGE_BYTES
    assert len(layers) == 2, "the root file system and the operator's environment, nothing under them"
    assert run_in(image, "sh", "-c", "true").returncode != 0


NO_PROGRAM = re.compile(r"(^|/)(s?bin|libexec)/(sh|bash|dash|rbash|busybox|perl[\d.]*|apt[\w-]*|dpkg[\w-]*|"
                        r"pip[\d.]*|gcc|cc|make|ld|su|sudo|ls|cat|env)$")


def test_nothing_in_the_image_is_a_shell_a_package_manager_perl_or_an_installer(image: str, rootfs: Path) -> None:
    found = []
    for path in rootfs.rglob("*"):
        name = "/" + str(path.relative_to(rootfs))
        if NO_PROGRAM.search(name) or re.search(r"(\.whl|/ensurepip|/setuptools|/perl5?|/apt)$", name):
            found.append(name)
    assert found == [], f"left in the image: {found}"
    assert run_in(image, "python", "-c", "import pip").returncode != 0
    assert (rootfs / "usr" / "bin" / "python3").exists() and (rootfs / "etc" / "ssl" / "certs" / "ca-certificates.crt").is_file()


def test_the_image_records_its_debian_packages_and_its_python_ones(rootfs: Path) -> None:
    """What scanners and the release's SBOM read: dpkg's status of exactly the packages copied, and
    each Python distribution's metadata."""
    status = (rootfs / "var" / "lib" / "dpkg" / "status").read_text()
    packages = set(re.findall(r"^Package: (.+)$", status, re.M))
    assert {"python3.11-minimal", "libpython3.11-stdlib", "libc6", "libssl3", "ca-certificates"} <= packages
    assert not packages & {"bash", "dash", "perl-base", "dpkg", "apt", "coreutils", "debconf"}
    site = next((rootfs / "opt" / "cronctl" / "lib").glob("python3.*/site-packages"))
    distributions = {path.name.split("-")[0].lower() for path in site.glob("*.dist-info")}
    assert {"cronctl", "kopf", "kubernetes"} <= distributions and "pip" not in distributions


def test_the_images_time_zones_are_the_locked_tzdata_wheels(image: str) -> None:
    """Debian's tzdata is left out of the image: zoneinfo finds no system zones and reads the tzdata
    wheel requirements.lock pins, the one the CRD's timeZone rule is written from."""
    import tzdata

    done = run_in(image, "python", "-c", "import os, zoneinfo, tzdata; zoneinfo.ZoneInfo('America/New_York'); "
                                         "print(any(map(os.path.isdir, zoneinfo.TZPATH)), tzdata.IANA_VERSION)")
    assert done.stdout.split() == ["False", tzdata.IANA_VERSION], done.stderr


def test_no_layer_of_the_image_holds_a_wheel_or_an_installer(layers: list[Path]) -> None:
    """What is deleted in a later layer still ships in the earlier one: every layer is read file by file."""
    offending = []
    for layer in layers:
        with tarfile.open(layer) as tar:
            offending += [name for name in tar.getnames()
                          if name.endswith(".whl") or re.search(r"site-packages/(pip|setuptools|wheel)(/|-)", name)]
    assert offending == []


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
