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


# -- the charts' versions against what changed in them ------------------------------------------

RELEASE = runpy.run_path(str(ROOT / "scripts" / "release"), run_name="release")
Refused = RELEASE["Refused"]


def test_every_charts_files_are_those_recorded_at_its_version() -> None:
    """charts/versions.txt holds, for each chart version, the digest of the chart's files: a chart
    changed since its version was recorded fails here until its version is bumped and recorded."""
    assert RELEASE["chart_problems"](ROOT / "charts", ROOT / "charts" / "versions.txt") == []


@pytest.fixture
def charts(tmp_path: Path) -> Path:
    """A copy of the charts and their ledger."""
    import shutil

    copy = tmp_path / "charts"
    shutil.copytree(ROOT / "charts", copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def set_chart_version(chart: Path, version: str) -> None:
    import re

    text = (chart / "Chart.yaml").read_text()
    (chart / "Chart.yaml").write_text(re.sub(r"^version: .*$", f"version: {version}", text, count=1, flags=re.M))


def test_a_chart_changed_without_a_bump_fails_until_its_new_version_is_recorded(charts: Path) -> None:
    problems, record = RELEASE["chart_problems"], RELEASE["record_chart"]
    ledger = charts / "versions.txt"
    chart = charts / "cronctl"
    version = RELEASE["chart_version"](chart)
    with (chart / "values.yaml").open("a") as values:
        values.write("# a change\n")
    assert problems(charts, ledger) == [
        f"charts/cronctl changed since version {version} was recorded: bump its version in "
        f"charts/cronctl/Chart.yaml, run scripts/chart-readme.py (the README names it), "
        f"then scripts/release --record-chart cronctl"]
    with pytest.raises(Refused, match="is not newer than"):
        record(charts, ledger, "cronctl")  # recording the same version again would hide the change
    set_chart_version(chart, "99.0.0")
    assert problems(charts, ledger) == [
        "chart cronctl 99.0.0 is not recorded in versions.txt: bump its version in "
        "charts/cronctl/Chart.yaml, run scripts/chart-readme.py (the README names it), "
        "then scripts/release --record-chart cronctl"]
    assert record(charts, ledger, "cronctl").startswith("cronctl 99.0.0 sha256:")
    assert problems(charts, ledger) == []


def test_a_chart_version_recorded_out_of_order_is_a_problem(charts: Path) -> None:
    ledger = charts / "versions.txt"
    lines = ledger.read_text().splitlines()
    name, version, digest = [line for line in lines if line.startswith("cronctl ")][-1].split()
    ledger.write_text("\n".join(lines + [f"cronctl 0.0.1 {digest}"]) + "\n")
    assert "the versions of chart cronctl do not increase line by line" in "\n".join(
        RELEASE["chart_problems"](charts, ledger))


def test_the_digest_is_of_the_files_and_their_names_not_of_caches(charts: Path) -> None:
    digest = RELEASE["chart_digest"]
    chart = charts / "cronctl"
    before = digest(chart)
    (chart / "files" / "__pycache__").mkdir(exist_ok=True)
    (chart / "files" / "__pycache__" / "helm-test.cpython-311.pyc").write_bytes(b"cache")
    assert digest(chart) == before
    (chart / "files" / "alerts.yaml").rename(chart / "files" / "alerts2.yaml")
    assert digest(chart) != before


# -- what the release says and names ------------------------------------------------------------

CHANGELOG = """# Changelog

## [Unreleased]

### Added
- a thing

### Upgrade notes
- do this

## [0.2.0]

### Fixed
- a bug

### Upgrade notes
- nothing to do

## [0.1.0]
"""


def test_the_release_notes_are_the_versions_section_or_unreleased_and_hold_upgrade_notes() -> None:
    notes = RELEASE["release_notes"]
    assert notes(CHANGELOG, "0.2.0") == ("## [0.2.0]\n\n### Fixed\n- a bug\n\n### Upgrade notes\n- nothing to do\n", True)
    text, own = notes(CHANGELOG, "0.3.0")
    assert (text.splitlines()[0], own) == ("## [0.3.0] (from Unreleased)", False)
    assert "- a thing" in text and "- do this" in text
    with pytest.raises(Refused, match="no '### Upgrade notes'"):
        notes(CHANGELOG, "0.1.0")


def test_this_changelog_can_be_released_now() -> None:
    text, _ = RELEASE["release_notes"]((ROOT / "CHANGELOG.md").read_text(), "99.0.0")
    assert "### Upgrade notes" in text


@pytest.mark.parametrize("version", ["0.2", "v0.2.0", "0.2.0-rc1", "0.2.0.dev1", "0.2.0+local"])
def test_a_release_version_is_a_plain_pep440_release(version: str) -> None:
    with pytest.raises(Refused, match="a release version is X.Y.Z"):
        RELEASE["check_tree"](version, True)


def test_the_artifact_hub_annotations_name_both_crds_and_the_image_at_the_app_version() -> None:
    import yaml

    chart = yaml.safe_load((ROOT / "charts" / "cronctl" / "Chart.yaml").read_text())
    described = {(crd["kind"], crd["name"], crd["version"])
                 for crd in yaml.safe_load(chart["annotations"]["artifacthub.io/crds"])}
    shipped = set()
    for path in (ROOT / "charts" / "cronctl" / "files").glob("*-crd.yaml"):
        crd = yaml.safe_load(path.read_text())
        shipped |= {(crd["spec"]["names"]["kind"], crd["metadata"]["name"], version["name"])
                    for version in crd["spec"]["versions"] if version.get("served")}
    assert described == shipped and len(shipped) == 2
    [image] = yaml.safe_load(chart["annotations"]["artifacthub.io/images"])
    assert image["image"] == f"{RELEASE['DEFAULT_IMAGE_REPOSITORY']}:{chart['appVersion']}"


def test_the_packaged_chart_names_the_release_and_its_image(charts: Path) -> None:
    import yaml

    chart = charts / "cronctl"
    RELEASE["stamp_chart"](chart, "0.2.0", "registry.example/cronctl")
    metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
    assert metadata["appVersion"] == "0.2.0"
    assert yaml.safe_load(metadata["annotations"]["artifacthub.io/images"]) == [
        {"name": "cronctl", "image": "registry.example/cronctl:0.2.0"}]
    assert yaml.safe_load((chart / "values.yaml").read_text())["image"]["repository"] == "registry.example/cronctl"


# -- a release of a clean clone -----------------------------------------------------------------

needs_image_tools = pytest.mark.skipif(
    not (Path("/usr/bin/buildah").exists() and os.geteuid() == 0),
    reason="the image is built with buildah as root (scripts/build-image)")
RELEASED = "0.2.0"


@pytest.fixture(scope="module")
def released(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """scripts/release 0.2.0 run in a fresh clone of this repository's last commit: (clone, dist).
    Its image layers come from buildah's cache where the files match; progress is shown."""
    clone = tmp_path_factory.mktemp("release") / "cronctl"
    subprocess.run(["git", "clone", "--quiet", f"file://{ROOT}", str(clone)], check=True)
    capman = request.config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled():
        done = subprocess.run([str(clone / "scripts" / "release"), RELEASED], cwd=clone, stdout=subprocess.PIPE,
                              text=True, timeout=3600)
    assert done.returncode == 0, "scripts/release failed (its output is above)"
    return clone, clone / "dist"


def oci_config(archive: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """An OCI archive's index and its image's config."""
    import json
    import tarfile

    with tarfile.open(archive) as tar:
        def blob(digest: str) -> Any:
            return json.load(tar.extractfile(f"blobs/sha256/{digest.split(':')[1]}"))  # type: ignore[arg-type]

        index = json.load(tar.extractfile("index.json"))  # type: ignore[arg-type]
        manifest = blob(index["manifests"][0]["digest"])
        return index, blob(manifest["config"]["digest"])


@needs_image_tools
def test_a_release_of_a_clean_clone_makes_every_artifact_at_one_version(released: tuple[Path, Path]) -> None:
    import hashlib
    import json
    import tarfile
    import zipfile

    import yaml

    clone, dist = released
    chart_version = RELEASE["chart_version"](clone / "charts" / "cronctl")
    fleet_version = RELEASE["chart_version"](clone / "charts" / "cronschedule-fleet")
    v = RELEASED
    assert sorted(path.name for path in dist.iterdir()) == sorted([
        f"cronctl-{v}.tar.gz", f"cronctl-{v}-py3-none-any.whl", f"cronctl-{v}-image.oci.tar",
        f"cronctl-{chart_version}.tgz", f"cronschedule-fleet-{fleet_version}.tgz", f"cronctl-{v}.cdx.json",
        f"cronctl-{v}-notes.md", "SHA256SUMS"])
    with zipfile.ZipFile(dist / f"cronctl-{v}-py3-none-any.whl") as wheel:
        assert f"Version: {v}\n" in wheel.read(f"cronctl-{v}.dist-info/METADATA").decode()
        assert "cronctl/cronschedule-crd.yaml" in wheel.namelist()
    with tarfile.open(dist / f"cronctl-{v}.tar.gz") as sdist:
        assert f"Version: {v}\n" in sdist.extractfile(f"cronctl-{v}/PKG-INFO").read().decode()  # type: ignore[union-attr]
    with tarfile.open(dist / f"cronctl-{chart_version}.tgz") as package:
        chart = yaml.safe_load(package.extractfile("cronctl/Chart.yaml"))  # type: ignore[arg-type]
        values = yaml.safe_load(package.extractfile("cronctl/values.yaml"))  # type: ignore[arg-type]
        readme = package.extractfile("cronctl/README.md").read().decode()  # type: ignore[union-attr]
    with tarfile.open(dist / f"cronschedule-fleet-{fleet_version}.tgz") as package:
        fleet = yaml.safe_load(package.extractfile("cronschedule-fleet/Chart.yaml"))  # type: ignore[arg-type]
    assert (fleet["version"], fleet["appVersion"]) == (fleet_version, v)
    image = f"{RELEASE['DEFAULT_IMAGE_REPOSITORY']}:{v}"
    assert (chart["version"], chart["appVersion"]) == (chart_version, v)
    assert yaml.safe_load(chart["annotations"]["artifacthub.io/images"]) == [{"name": "cronctl", "image": image}]
    assert values["image"]["repository"] == RELEASE["DEFAULT_IMAGE_REPOSITORY"] and not values["image"]["tag"]
    assert f"operator (appVersion) {v}." in readme and RELEASE["DEFAULT_IMAGE_REPOSITORY"] in readme
    rendered = subprocess.run([str(RELEASE["helm"]()), "template", "cronctl", str(dist / f"cronctl-{chart_version}.tgz"),
                               "--namespace", "cronctl-system"], check=True, capture_output=True, text=True).stdout
    [deployment] = [doc for doc in yaml.safe_load_all(rendered) if doc and doc["kind"] == "Deployment"]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == image  # the release's, as installed
    index, config = oci_config(dist / f"cronctl-{v}-image.oci.tar")
    assert index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] == image
    assert config["config"]["Labels"]["org.opencontainers.image.version"] == v
    assert config["config"]["Labels"]["org.opencontainers.image.revision"] == git(clone, "rev-parse", "HEAD")
    sbom = json.loads((dist / f"cronctl-{v}.cdx.json").read_text())
    assert (sbom["bomFormat"], sbom["metadata"]["component"]["version"]) == ("CycloneDX", v)
    by_name = {component["name"]: component for component in sbom["components"]}
    assert by_name["cronctl"]["version"] == v and by_name["cronctl"]["purl"] == f"pkg:pypi/cronctl@{v}"
    assert {"kopf", "kubernetes", "libc6", "python3.11-minimal", "libssl3"} <= set(by_name)
    notes = (dist / f"cronctl-{v}-notes.md").read_text()
    assert notes.startswith(f"## [{v}]") and "### Upgrade notes" in notes
    for line in (dist / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256((dist / name).read_bytes()).hexdigest() == digest, name
    assert len((dist / "SHA256SUMS").read_text().splitlines()) == 7
    assert not list((clone / "operator").glob("*.egg-info")), "built in the tree: its tests would read that version"


@needs_image_tools
def test_the_released_image_archive_runs_and_says_its_version(released: tuple[Path, Path]) -> None:
    _, dist = released
    archive = f"oci-archive:{dist / f'cronctl-{RELEASED}-image.oci.tar'}"
    container = subprocess.run(["buildah", "from", "--quiet", archive], check=True, capture_output=True,
                               text=True).stdout.strip()
    try:
        said = subprocess.run(["buildah", "run", "--isolation", "chroot", container, "--", "cronctl", "--version"],
                              capture_output=True, text=True, timeout=120)
    finally:
        subprocess.run(["buildah", "rm", container], capture_output=True)
        subprocess.run(["buildah", "rmi", f"{RELEASE['DEFAULT_IMAGE_REPOSITORY']}:{RELEASED}"], capture_output=True)
    assert said.stdout == f"cronctl {RELEASED}\n", said.stderr


def test_the_release_empties_only_a_dist_folder_of_release_files(tmp_path: Path) -> None:
    clear = RELEASE["clear_dist"]
    (tmp_path / "cronctl-0.1.0.tar.gz").write_text("old")
    (tmp_path / "SHA256SUMS").write_text("old")
    clear(tmp_path)
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "pyproject.toml").write_text("not ours")
    with pytest.raises(Refused, match="holds files no release wrote"):
        clear(tmp_path)
    assert (tmp_path / "pyproject.toml").exists()
