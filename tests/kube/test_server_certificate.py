"""The operator given a kubeconfig whose CA is not the one that signed the API server's serving
certificate: one ERROR line names the certificate problem, however often the watches, the Lease
and the start-up try again meanwhile (not only their warnings)."""

from __future__ import annotations

import base64
import subprocess
import time
from pathlib import Path
from typing import Any

from .helpers import Operator, wait_for

SAID = "the API server's certificate is not trusted"


def another_ca(directory: Path) -> Path:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", "other-ca.key", "-out", "other-ca.crt", "-days", "1", "-subj", "/CN=another-ca",
                    "-addext", "basicConstraints=critical,CA:TRUE"], cwd=directory, check=True, capture_output=True)
    return directory / "other-ca.crt"


def test_a_server_certificate_from_an_untrusted_ca_is_one_error_line_naming_it(control_plane: Any, namespace: str,
                                                                               tmp_path: Path) -> None:
    ours, other = (base64.b64encode(path.read_bytes()).decode() for path in (control_plane.ca_file,
                                                                             another_ca(tmp_path)))
    text = control_plane.kubeconfig.read_text()
    assert ours in text
    kubeconfig = tmp_path / "another-ca.kubeconfig"
    kubeconfig.write_text(text.replace(ours, other))
    operator = Operator(control_plane, namespace, tmp_path, kubeconfig=kubeconfig)
    operator.set_clock("2024-03-01T00:00")
    try:
        operator.start()
        wait_for("the certificate problem said", lambda: SAID in operator.log(), timeout=30)
        time.sleep(6.0)  # the Lease tries every 2 s, the start-up and the watches on their own
        lines = operator.log().splitlines()
        errors = [line for line in lines if " ERROR " in line and "certificate" in line]
        assert len(errors) == 1, "\n".join(errors)
        assert (f"{SAID}: certificate verify failed: unable to get local issuer certificate ({control_plane.url})"
                in errors[0])
        assert len([line for line in lines if "CERTIFICATE_VERIFY_FAILED" in line]) > 1  # it was met again
    finally:
        operator.stop()
        print(operator.log()[-6000:])
