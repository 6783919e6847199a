"""Fixtures for tests against a real kube-apiserver + etcd, with a
kube-controller-manager running only the garbage collector and the namespace
controller (see controlplane.py).

``control_plane`` starts one ControlPlane per test session (building the
binaries first if the cache lacks them) and points KUBECONFIG at its admin
kubeconfig while the session lasts. Tests under tests/kube are marked
``cluster`` automatically, so ``-m "not cluster"`` skips them. The tests in
``lifecycle/`` run on a control plane of their own with the job controller,
kube-scheduler and kwok (its conftest overrides ``control_plane``).

The files in ``SMOKE`` are also marked ``smoke``: the subset ``scripts/test`` runs again on the
oldest Kubernetes minor the chart claims (``scripts/build-control-plane.sh --oldest``), where the
whole suite runs on the newest.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from .controlplane import ControlPlane
from .helpers import Cluster, Operator, binaries, install_crd, kubectl


# What a cluster of the oldest claimed minor must do as the newest does: serve both CRDs and their
# rules, take the operator's writes and watches, run its Jobs as the CronJob controller's, and say
# no through admission as cronctl reads it.
SMOKE = {"test_control_plane.py", "test_operator.py", "test_cronjob_contract.py", "test_refusals.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "control_plane" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cluster)
            if item.path.name in SMOKE and item.path.parent == Path(__file__).parent:
                item.add_marker(pytest.mark.smoke)


@pytest.fixture(scope="session")
def control_plane(request):
    with ControlPlane(bin_dir=binaries(request)) as cp:
        print(f"\ncontrol plane: {cp.url} ready in {cp.start_seconds:.1f}s, kube-controller-manager "
              f"healthy after {cp.controller_manager_seconds:.1f}s of it (logs in {cp.tmp_dir}/logs)",
              file=sys.stderr)
        old = os.environ.get("KUBECONFIG")
        os.environ["KUBECONFIG"] = str(cp.kubeconfig)
        try:
            yield cp
        finally:
            if old is None:
                os.environ.pop("KUBECONFIG", None)
            else:
                os.environ["KUBECONFIG"] = old


# -- the operator's scenarios: a CRD per session, a namespace and an operator per test --


@pytest.fixture(scope="session")
def crd(control_plane: Any) -> None:
    install_crd(control_plane)


@pytest.fixture
def namespace(control_plane: Any, crd: None) -> Iterator[str]:
    name = f"op-{uuid.uuid4().hex[:8]}"
    kubectl(control_plane, "create", "namespace", name)
    yield name
    kubectl(control_plane, "delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture
def operator_env() -> dict[str, str]:
    """The operator's environment beyond the control plane's (a module overrides it: staging on)."""
    return {}


@pytest.fixture
def operator(control_plane: Any, namespace: str, tmp_path: Path, operator_env: dict[str, str]) -> Iterator[Operator]:
    op = Operator(control_plane, namespace, tmp_path, extra_env=operator_env)
    op.set_clock("2024-03-01T00:00")
    op.start()
    yield op
    op.stop()
    print(op.log()[-6000:])


@pytest.fixture
def cluster(control_plane: Any, namespace: str) -> Cluster:
    return Cluster(control_plane, namespace)


@pytest.fixture(scope="session")
def helm() -> Path:
    """The helm binary (the same build as tests/charts' fixture), for the chart's tests on the API server."""
    from ..charts.operator_chart import helm_binary

    return helm_binary()
