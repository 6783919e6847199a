"""What both charts owe their users alike: a clean `helm lint`, a README generated from
values.yaml that `helm show readme` prints, and the files copied into them current.

The generators are scripts/chart-readme.py and scripts/sync-chart-crd.py; each test
that finds a file out of date says which one to run.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from .conftest import CHARTS, REPO_ROOT

CHART_DIRS = [CHARTS / "cronctl", CHARTS / "cronschedule-fleet"]
FLEET = {"prefix": "probe", "count": 3, "schedules": ["*/5 * * * *"], "timeZone": "Europe/Berlin"}


def script(name: str) -> ModuleType:
    """A script of scripts/ as a module (its name has a hyphen)."""
    path = REPO_ROOT / "scripts" / name
    spec = importlib.util.spec_from_file_location(path.stem.replace("-", "_"), path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("chart", "values"), [
    (CHART_DIRS[0], {}),
    (CHART_DIRS[0], {"watchNamespaces": ["team-a"], "shards": ["a"], "crds": {"enabled": False, "keep": True}}),
    (CHART_DIRS[0], {"replicas": 1, "leaderElection": {"enabled": False, "leaseName": "x", "leaseSeconds": 3}}),
    (CHART_DIRS[1], {}),
    (CHART_DIRS[1], FLEET),
], ids=["operator-defaults", "operator-namespaced-shards-no-crd", "operator-one-replica", "fleet-defaults",
        "fleet-iana-zone"])
def test_helm_lint_prints_no_warning(helm: Path, tmp_path: Path, chart: Path, values: dict[str, Any]) -> None:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    result = subprocess.run([str(helm), "lint", "--strict", str(chart), "--values", str(values_file)],
                            capture_output=True, text=True, timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[WARNING]" not in output and "[ERROR]" not in output, output
    assert "symbolic link" not in output, output
    assert result.stderr == "", result.stderr


@pytest.mark.parametrize("chart", CHART_DIRS, ids=lambda c: c.name)
def test_the_chart_readme_is_generated_from_values_yaml_and_current(chart: Path) -> None:
    generated = script("chart-readme.py").render(chart)
    assert (chart / "README.md").read_text(encoding="utf-8") == generated, (
        f"{chart.name}/README.md is not current: run scripts/chart-readme.py")


@pytest.mark.parametrize("chart", CHART_DIRS, ids=lambda c: c.name)
def test_the_readme_lists_every_documented_value_with_its_default(chart: Path) -> None:
    readme = script("chart-readme.py")
    text = (chart / "values.yaml").read_text(encoding="utf-8")
    rows = {row.key: row for row in readme.rows(text)}
    values = yaml.safe_load(text)
    top_level = {key for key in values if "." not in key}
    # Every top-level value is in the table, itself or through its keys.
    assert {key for key in top_level if key in rows or any(k.startswith(key + ".") for k in rows)} == top_level
    for key, row in rows.items():
        value: Any = values
        for part in key.split("."):
            value = value[part]
        assert row.description, key
        assert json.loads(row.default) == value, key  # no '# @default --' in these files
        assert f"| {row.key} | {row.type} | `" in (chart / "README.md").read_text(encoding="utf-8"), key


def test_the_readme_generator_refuses_a_doc_comment_that_documents_nothing() -> None:
    readme = script("chart-readme.py")
    with pytest.raises(readme.ReadmeError, match="directly above"):
        readme.rows("# -- lost\n\nkey: 1\n")
    with pytest.raises(readme.ReadmeError, match="give its type"):
        readme.rows("# -- untyped\nkey: null\n")
    assert readme.rows("# -- (int) typed\n# @default -- none\nkey: null\n") == [
        readme.Row("key", "int", "none", "typed")]


@pytest.mark.parametrize("chart", CHART_DIRS, ids=lambda c: c.name)
def test_helm_show_readme_prints_the_readme_from_the_folder_and_the_package(helm: Path, tmp_path: Path,
                                                                          chart: Path) -> None:
    readme = (chart / "README.md").read_text(encoding="utf-8")
    assert "| Key | Type | Default | Description |" in readme
    shown = subprocess.run([str(helm), "show", "readme", str(chart)], capture_output=True, text=True, check=True,
                           timeout=60).stdout
    assert shown.strip() == readme.strip()
    subprocess.run([str(helm), "package", str(chart), "--destination", str(tmp_path)], check=True,
                   capture_output=True, timeout=60)
    (package,) = tmp_path.glob("*.tgz")
    shown = subprocess.run([str(helm), "show", "readme", str(package)], capture_output=True, text=True, check=True,
                           timeout=60).stdout
    assert shown.strip() == readme.strip()
    with tarfile.open(package) as archive:
        assert not [name for name in archive.getnames() if name.endswith(".gotmpl")]


def test_a_chart_changed_since_its_version_was_recorded_is_bumped() -> None:
    """charts/versions.txt holds each chart version's files' digest (tests/test_release.py tests the
    rule): a change to a chart fails here until its version is bumped and recorded."""
    import runpy

    release = runpy.run_path(str(REPO_ROOT / "scripts" / "release"), run_name="release")
    assert release["chart_problems"](CHARTS, CHARTS / "versions.txt") == []


def test_the_files_copied_into_the_charts_are_current() -> None:
    """The CRD (crds/cronschedule.yaml) and the tz database's zone names (the tzdata package)."""
    sync = script("sync-chart-crd.py")
    for path, content in sync.expected().items():
        assert path.is_file() and not path.is_symlink(), path
        assert path.read_bytes() == content, (
            f"{path.relative_to(REPO_ROOT)} is not current: run scripts/sync-chart-crd.py")
    check = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "sync-chart-crd.py"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def _kubernetes_minor(plane: Path) -> tuple[int, int]:
    """The Kubernetes minor a test control plane's wrapper module pins (k8s.io/kubernetes v1.MINOR.PATCH)."""
    [version] = re.findall(r"^\s*k8s\.io/kubernetes (v1\.\d+\.\d+)", (plane / "go.mod").read_text(), re.M)
    major, minor = version[1:].split(".")[:2]
    return int(major), int(minor)


@pytest.mark.parametrize("name", ["cronctl", "cronschedule-fleet"])
def test_each_chart_claims_the_oldest_kubernetes_the_tests_run_and_the_main_plane_is_newer(name: str) -> None:
    """kubeVersion is what is run: the smoke subset on scripts/control-plane/oldest, every test on the
    main plane, which pins a newer minor."""
    chart = yaml.safe_load((CHARTS / name / "Chart.yaml").read_text())
    oldest = _kubernetes_minor(REPO_ROOT / "scripts" / "control-plane" / "oldest")
    assert chart["kubeVersion"] == f">={oldest[0]}.{oldest[1]}.0-0"
    assert _kubernetes_minor(REPO_ROOT / "scripts" / "control-plane") > oldest
    compatibility = (REPO_ROOT / "docs" / "compatibility.md").read_text()
    assert f"v{oldest[0]}.{oldest[1]}." in compatibility


def test_the_operators_chart_says_what_artifact_hub_shows_and_its_crd_annotation_is_the_crd() -> None:
    chart = yaml.safe_load((CHARTS / "cronctl" / "Chart.yaml").read_text())
    crds = [yaml.safe_load((REPO_ROOT / "crds" / f"{name}.yaml").read_text()) for name in ("cronschedule", "cronpool")]
    annotations = chart["annotations"]
    assert annotations["artifacthub.io/license"] == "Apache-2.0"
    described = yaml.safe_load(annotations["artifacthub.io/crds"])  # both CRDs the chart installs
    assert [(each["name"], each["kind"]) for each in described] == [
        (crd["metadata"]["name"], crd["spec"]["names"]["kind"]) for crd in crds]
    for each, crd in zip(described, crds):
        assert each["version"] in [v["name"] for v in crd["spec"]["versions"]]
    [image] = yaml.safe_load(annotations["artifacthub.io/images"])
    assert image["image"].endswith(f":{chart['appVersion']}")
    assert {change["kind"] for change in yaml.safe_load(annotations["artifacthub.io/changes"])} <= {
        "added", "changed", "deprecated", "removed", "fixed", "security"}
