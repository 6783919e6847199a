"""scripts/try-operator: the operator in one command on the project's own control plane, as a newcomer runs it."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

from .helpers import KUBECTL, ROOT, wait_for


def test_try_operator_runs_the_examples_a_trigger_makes_a_job_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    out = (tmp_path / "out").open("w+")
    process = subprocess.Popen([str(ROOT / "scripts" / "try-operator")], cwd=ROOT, stdout=out,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        said = wait_for("ready", lambda: "Ctrl-C here stops" in Path(out.name).read_text() and Path(out.name)
                        .read_text(), timeout=300)
        kubeconfig = re.search(r"export KUBECONFIG=(\S+)", said).group(1)  # type: ignore[union-attr]
        url = re.search(r"The API server is (\S+);", said).group(1)  # type: ignore[union-attr]
        env = {**os.environ, "KUBECONFIG": kubeconfig}

        def kubectl(*args: str) -> str:
            return subprocess.run([KUBECTL, *args], env=env, capture_output=True, text=True, timeout=60,
                                  check=True).stdout

        names = json.loads(kubectl("get", "cronschedules", "-o", "json"))["items"]
        assert sorted(item["metadata"]["name"] for item in names) == [
            "business-hours", "heartbeat", "nightly-report", "office-hours"]
        subprocess.run([sys.executable, "-m", "cronctl.plugin", "trigger", "heartbeat"], env=env, check=True,
                       capture_output=True, timeout=60)
        wait_for("the manual run's Job complete", lambda: [
            job for job in json.loads(kubectl("get", "jobs", "-o", "json"))["items"]
            if job["metadata"]["name"].startswith("heartbeat-") and job.get("status", {}).get("succeeded")],
            timeout=120)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
        address = urlparse(url)
        with socket.socket() as probe:
            assert probe.connect_ex((address.hostname, address.port)) != 0  # the API server is gone
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        out.close()
