"""Rendering the operator chart (charts/cronctl) with helm, and the RBAC it must grant.

Shared by the chart tests (tests/charts/test_operator_chart.py) and the tests
that apply the rendered RBAC to the test API server (tests/kube/test_rbac.py).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO_ROOT / "scripts" / "build-control-plane.sh"
CHART = REPO_ROOT / "charts" / "cronctl"
RELEASE_NAMESPACE = "cronctl-system"

# One grant is (apiGroup, resource, verb, resourceName or None). What the operator does in
# each namespace it watches (cronctl/operator/apply.py's calls, kopf's watches in handlers.py
# and metrics.py), granted by the ClusterRole or by each watched namespace's Role:
NAMESPACED_GRANTS = frozenset({
    ("cronctl.dev", "cronschedules", "get", None),        # read a schedule before a reconcile
    ("cronctl.dev", "cronschedules", "list", None),       # kopf's watch: initial list
    ("cronctl.dev", "cronschedules", "watch", None),      # kopf's watch
    ("cronctl.dev", "cronschedules/status", "patch", None),  # the status the core's state lives in
    # a Job's ownerReference blocks its schedule's deletion: OwnerReferencesPermissionEnforcement
    ("cronctl.dev", "cronschedules/finalizers", "update", None),
    ("cronctl.dev", "cronpools", "get", None),            # a pool, when no watch holds it
    ("cronctl.dev", "cronpools", "list", None),           # the pools' watch: initial list
    ("cronctl.dev", "cronpools", "watch", None),          # the pools' watch
    ("cronctl.dev", "cronpools/status", "patch", None),   # busy, queued, the queue's head
    ("batch", "jobs", "get", None),                       # adopt a Job after a name conflict
    ("batch", "jobs", "list", None),                      # the runs of a schedule; kopf's watch
    ("batch", "jobs", "watch", None),                     # kopf's watch of finished Jobs
    ("batch", "jobs", "create", None),                    # a launch
    ("batch", "jobs", "delete", None),                    # Replace, retention
    ("batch", "jobs", "patch", None),                     # resume a Job held for its jitter or its pool
    ("", "events", "create", None),                       # Launched, Skipped, Replaced, ...
    ("", "events", "patch", None),                        # an Event series' count
})
# kopf's resource scanning lists and watches CRDs at the cluster scope: granted by the
# cluster-wide install only, and only while the operator leaves kopf's scanning on.
CRD_SCANNING_GRANTS = frozenset({
    ("apiextensions.k8s.io", "customresourcedefinitions", "list", None),
    ("apiextensions.k8s.io", "customresourcedefinitions", "watch", None),
})


def lease_grants(lease: str = "cronctl-operator") -> frozenset[tuple[str, str, str, str | None]]:
    """Leader election in the release namespace: create any Lease (a create cannot name
    its object in RBAC), get and update only the operator's one; and create Events there (the
    ClockSkew Warning on the Lease)."""
    return frozenset({("coordination.k8s.io", "leases", "create", None),
                      ("coordination.k8s.io", "leases", "get", lease),
                      ("coordination.k8s.io", "leases", "update", lease),
                      ("", "events", "create", None)})


def helm_binary() -> Path:
    """The helm the project's build script makes (building it, minutes, when the cache lacks it)."""
    out = subprocess.run(["bash", str(BUILD_SCRIPT), "--print-bin-dir"], check=True, capture_output=True,
                         text=True).stdout
    binary = Path(out.strip().splitlines()[-1]) / "helm"
    if subprocess.run(["bash", str(BUILD_SCRIPT), "--with-helm", "--check"], capture_output=True).returncode != 0:
        subprocess.run(["bash", str(BUILD_SCRIPT), "--with-helm"], check=True)
    assert binary.is_file(), f"{binary}: the build script did not produce helm"
    return binary


def template(helm: Path, values: Mapping[str, Any] | None = None, *extra: str, release: str = "cronctl",
             namespace: str = RELEASE_NAMESPACE, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``helm template`` of the chart with ``values`` (a values file) and extra helm flags."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
        yaml.safe_dump(dict(values or {}), file)
        file.flush()
        result = subprocess.run([str(helm), "template", release, str(CHART), "--namespace", namespace,
                                 "--values", file.name, *extra], capture_output=True, text=True, timeout=60)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def render(helm: Path, values: Mapping[str, Any] | None = None, *extra: str, **kwargs: Any) -> list[dict[str, Any]]:
    """The objects ``helm install`` creates, parsed (``helm test``'s exist only while it runs:
    ``helm_test_objects``)."""
    return [doc for doc in yaml.safe_load_all(template(helm, values, "--skip-tests", *extra, **kwargs).stdout)
            if doc]


def helm_test_objects(helm: Path, values: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """What ``helm test`` creates, parsed."""
    text = template(helm, values, "--show-only", "templates/tests/operator-test.yaml").stdout
    return [doc for doc in yaml.safe_load_all(text) if doc]


def of_kind(docs: Iterable[Mapping[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [dict(doc) for doc in docs if doc["kind"] in kinds]


def grants(rules: Iterable[Mapping[str, Any]]) -> set[tuple[str, str, str, str | None]]:
    """A rule list expanded to single grants; a wildcard or a nonResourceURL fails."""
    out: set[tuple[str, str, str, str | None]] = set()
    for rule in rules:
        assert not rule.get("nonResourceURLs"), rule
        names = rule.get("resourceNames") or [None]
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    assert "*" not in (group, resource, verb), f"wildcard in {rule}"
                    out.update((group, resource, verb, name) for name in names)
    return out


def notes(helm: Path, chart: Path = CHART, values: Mapping[str, Any] | None = None, release: str = "cronctl",
          namespace: str = RELEASE_NAMESPACE) -> str:
    """The chart's NOTES.txt as ``helm install`` prints it, without a cluster: helm renders
    NOTES only on install, so a copy of the chart renders them into a ConfigMap."""
    import shutil

    with tempfile.TemporaryDirectory() as workdir:
        copy = Path(workdir) / chart.name
        shutil.copytree(chart, copy)
        text = (copy / "templates" / "NOTES.txt").read_text()
        (copy / "templates" / "NOTES.txt").unlink()
        (copy / "templates" / "_notes_under_test.tpl").write_text('{{- define "notes.under.test" -}}' + text
                                                                   + "{{- end -}}")
        (copy / "templates" / "notes-under-test.yaml").write_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes-under-test}\n"
            'data: {notes: {{ include "notes.under.test" . | toJson }}}\n')
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
            yaml.safe_dump(dict(values or {}), file)
            file.flush()
            result = subprocess.run([str(helm), "template", release, str(copy), "--namespace", namespace,
                                     "--values", file.name, "--show-only", "templates/notes-under-test.yaml"],
                                    capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return str(yaml.safe_load(result.stdout)["data"]["notes"])
