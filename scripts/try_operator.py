"""scripts/try-operator's body: a control plane, the CRD, the operator and the examples, until Ctrl-C.

The control plane is the test suite's (tests/kube/controlplane.py, ``lifecycle=True``): Jobs get
Pods on kwok's simulated nodes, and the Pods succeed, so a CronSchedule's runs end as on a cluster.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.kube.controlplane import ControlPlane  # noqa: E402

STATE = ROOT / ".try-operator"  # the kubeconfig the user points kubectl at, and the operator's log


def kubectl(kubeconfig: Path, *args: str) -> None:
    subprocess.run([shutil.which("kubectl") or "kubectl", "--kubeconfig", str(kubeconfig), *args], check=True,
                   capture_output=True, text=True, timeout=120)


def main() -> int:
    stop = {"signal": None}

    def stopping(signum: int, _frame: object) -> None:
        stop["signal"] = signum

    for each in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(each, stopping)
    if shutil.which("kubectl") is None:
        print("try-operator: kubectl is not on PATH: install it (https://kubernetes.io/docs/tasks/tools/)",
              file=sys.stderr)
        return 2
    STATE.mkdir(exist_ok=True)
    print("try-operator: starting a control plane with simulated nodes ...", file=sys.stderr, flush=True)
    with ControlPlane(lifecycle=True) as cp:
        assert cp.kubeconfig is not None
        kubeconfig = STATE / "kubeconfig"
        shutil.copy(cp.kubeconfig, kubeconfig)
        kubectl(kubeconfig, "apply", "-f", str(ROOT / "crds" / "cronschedule.yaml"),
                "-f", str(ROOT / "crds" / "cronschedule-policy.yaml"))
        kubectl(kubeconfig, "wait", "--for=condition=Established", "crd/cronschedules.cronctl.dev", "--timeout=60s")
        log = (STATE / "operator.log").open("w")
        operator = subprocess.Popen([sys.executable, "-m", "cronctl", "operator", "--namespace", "default"],
                                    env=cp.env(KUBECONFIG=str(kubeconfig)), stdout=log, stderr=subprocess.STDOUT)
        try:
            kubectl(kubeconfig, "apply", "-n", "default", "-f", str(ROOT / "examples" / "cronschedules"))
            print(instructions(kubeconfig, cp.url), flush=True)
            while stop["signal"] is None and operator.poll() is None:
                time.sleep(0.2)
            if operator.poll() is not None:
                print(f"try-operator: the operator ended (exit {operator.returncode}); its log: "
                      f"{STATE / 'operator.log'}", file=sys.stderr)
                return 1
        finally:
            operator.terminate()
            try:
                operator.wait(timeout=20)
            except subprocess.TimeoutExpired:
                operator.kill()
            log.close()
    print("try-operator: stopped the operator and the control plane", file=sys.stderr)
    return 0


def instructions(kubeconfig: Path, url: str) -> str:
    return f"""try-operator: ready. The API server is {url}; the operator's log is {STATE / 'operator.log'}.
In another terminal (kubectl cronctl is .venv/bin/kubectl-cronctl: add .venv/bin to PATH):

  export KUBECONFIG={kubeconfig}
  kubectl get cronschedules -w                 # the examples, their last and next times
  kubectl cronctl trigger heartbeat            # a manual run now
  kubectl get jobs,pods                        # its Job and Pod (the Pod runs on a simulated node)
  kubectl cronctl describe heartbeat           # spec, next times, runs, conditions, Events

Ctrl-C here stops the operator and the control plane."""


if __name__ == "__main__":
    sys.exit(main())
