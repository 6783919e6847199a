"""docs/upgrades.md's CRD handover, followed as written, on the API server.

CRDs applied with kubectl (as `kubectl apply -f crds/`, or chart 0.1.0's `crds/` folder, left
them) belong to no release, and so does the CronSchedule's policy they apply with them: `helm
install` stops with "invalid ownership metadata" on each. The page's commands hand all over; before, they named cronschedules.cronctl.dev only, and the
install then stopped on cronpools.cronctl.dev. `helm install --dry-run=server` makes the same
ownership check as an install, before it changes nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..charts.operator_chart import CHART, RELEASE_NAMESPACE
from .helpers import KUBECTL, ROOT, kubectl

pytestmark = pytest.mark.cluster

CRDS = ("cronschedules.cronctl.dev", "cronpools.cronctl.dev")


def handover() -> str:
    """The shell block of docs/upgrades.md that hands the CRDs to the release."""
    page = (ROOT / "docs" / "upgrades.md").read_text()
    [block] = [block for block in re.findall(r"```sh\n(.*?)```", page, re.DOTALL) if "meta.helm.sh" in block]
    return block


# The CronSchedule's ValidatingAdmissionPolicy and binding (issue 47), applied with the CRDs.
POLICIES = ("validatingadmissionpolicy", "validatingadmissionpolicybinding")


def unowned(cp: Any) -> None:
    """The CRDs and the policy as kubectl apply leaves them: no Helm label or annotation."""
    for kind, name in [*(("crd", name) for name in CRDS), *((kind, "cronschedules.cronctl.dev") for kind in POLICIES)]:
        kubectl(cp, "label", kind, name, "app.kubernetes.io/managed-by-", check=False)
        kubectl(cp, "annotate", kind, name, "meta.helm.sh/release-name-", "meta.helm.sh/release-namespace-",
                check=False)


def test_the_crd_handover_as_written_lets_helm_install_take_both_crds(control_plane: Any, crd: None,
                                                                      helm: Path) -> None:
    made = kubectl(control_plane, "create", "namespace", RELEASE_NAMESPACE, check=False).returncode == 0
    for name in CRDS:
        assert kubectl(control_plane, "get", "crd", name, check=False).returncode == 0, f"{name} is not applied"
    install = [str(helm), "--kubeconfig", str(control_plane.kubeconfig), "install", "cronctl", str(CHART),
               "--namespace", RELEASE_NAMESPACE, "--dry-run=server"]
    unowned(control_plane)
    try:
        refused = subprocess.run(install, capture_output=True, text=True, timeout=120)
        assert refused.returncode != 0 and "invalid ownership metadata" in refused.stderr, refused.stderr
        environment = {**os.environ, "KUBECONFIG": str(control_plane.kubeconfig),
                       "PATH": f"{Path(KUBECTL).parent}{os.pathsep}{os.environ['PATH']}"}
        followed = subprocess.run(["bash", "-euc", handover()], capture_output=True, text=True, timeout=120,
                                  env=environment)
        assert followed.returncode == 0, followed.stderr
        installed = subprocess.run(install, capture_output=True, text=True, timeout=120)
        assert installed.returncode == 0, installed.stderr
    finally:
        unowned(control_plane)  # the other tests' CRDs, as they applied them
        if made:  # gone before the next test that installs the chart there (test_rbac) creates it
            kubectl(control_plane, "delete", "namespace", RELEASE_NAMESPACE, "--wait=true", "--timeout=120s",
                    check=False)
