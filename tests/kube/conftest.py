"""Fixtures for tests against a real kube-apiserver + etcd, with a
kube-controller-manager running only the garbage collector and the namespace
controller (see controlplane.py).

``control_plane`` starts one ControlPlane per test session (building the
binaries first if the cache lacks them) and points KUBECONFIG at its admin
kubeconfig while the session lasts. Tests under tests/kube are marked
``cluster`` automatically, so ``-m "not cluster"`` skips them.
"""

from __future__ import annotations

import os
import sys

import pytest

from .controlplane import ControlPlane, ensure_binaries, find_binaries


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "control_plane" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cluster)


@pytest.fixture(scope="session")
def control_plane(request):
    bin_dir, ready = find_binaries()
    if not ready:
        # A cold build takes minutes: show its progress instead of capturing it.
        capman = request.config.pluginmanager.getplugin("capturemanager")
        with capman.global_and_fixture_disabled():
            bin_dir = ensure_binaries(stream=sys.stderr)

    with ControlPlane(bin_dir=bin_dir) as cp:
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
