"""The floor of bench_vs_cronjob.py: the least any controller can ask of the control plane per
launch, one Job create at its nominal second and nothing else (no status, no Event, no watch).

Run by the benchmark as a process of its own, with its own client user (so the audit log tells
its requests apart): ``python benchmarks/floor_controller.py KUBECONFIG``. It reads one plan from
stdin, a JSON object ``{"namespace": ..., "launches": [[nominal_second, [job, ...]], ...]}``, and
at each nominal second POSTs that second's Jobs, eight at a time on kept connections (as many as
the benchmark's own creator uses), then waits to be stopped. A 429 or 5xx is retried after a short pause.
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

WORKERS = 8


def ssl_context(kubeconfig: dict[str, Any]) -> tuple[str, int, ssl.SSLContext]:
    cluster, user = kubeconfig["clusters"][0]["cluster"], kubeconfig["users"][0]["user"]
    url = urlsplit(cluster["server"])
    context = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    with tempfile.TemporaryDirectory() as folder:
        cert, key = Path(folder) / "cert", Path(folder) / "key"
        cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
        key.write_bytes(base64.b64decode(user["client-key-data"]))
        context.load_cert_chain(str(cert), str(key))
    return str(url.hostname), int(url.port or 443), context


def main() -> int:
    host, port, context = ssl_context(yaml.safe_load(Path(sys.argv[1]).read_text()))
    plan = json.loads(sys.stdin.readline())
    path = f"/apis/batch/v1/namespaces/{plan['namespace']}/jobs"
    local = threading.local()

    def create(job: dict[str, Any]) -> None:
        body = json.dumps(job).encode()
        for _ in range(50):
            connection = getattr(local, "connection", None) or http.client.HTTPSConnection(host, port, context=context)
            local.connection = connection
            try:
                connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
                answer = connection.getresponse()
                answer.read()
            except (http.client.HTTPException, OSError):
                connection.close()
                local.connection = None
                continue
            if answer.status < 300 or answer.status == 409:
                return
            if answer.status != 429 and answer.status < 500:
                print(f"floor: {answer.status} creating {job['metadata']['name']}", file=sys.stderr)
                return
            time.sleep(0.1)

    with ThreadPoolExecutor(WORKERS) as pool:
        for nominal, jobs in plan["launches"]:
            time.sleep(max(0.0, nominal - time.time()))
            list(pool.map(create, jobs))
    print(f"floor: {sum(len(jobs) for _, jobs in plan['launches'])} Jobs created", flush=True)
    threading.Event().wait()  # stays, as a controller does, until the benchmark stops it
    return 0


if __name__ == "__main__":
    sys.exit(main())
