"""A server certificate that does not verify is one ERROR line per streak of handshakes that met
it, naming the problem as TLS words it, whichever thread met it; the first handshake that
verifies after that says so, and a later streak is said again."""

from __future__ import annotations

import logging
import socket
import ssl
import subprocess
import threading
from pathlib import Path
from typing import Iterator

import pytest

from cronctl.operator.kube.rest import Connections, Unreachable


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A TLS server on loopback with a self-signed certificate for 127.0.0.1: its port and the
    certificate (to trust it)."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", "server.key", "-out", "server.crt", "-days", "1", "-subj", "/CN=server",
                    "-addext", "subjectAltName=IP:127.0.0.1"], cwd=tmp_path, check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server.crt", tmp_path / "server.key")
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                accepted, _ = listener.accept()
            except OSError:
                return
            try:
                context.wrap_socket(accepted, server_side=True).close()
            except (OSError, ssl.SSLError):
                accepted.close()

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1], tmp_path / "server.crt"
    listener.close()


def said(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(record.levelname, record.getMessage()) for record in caplog.records if "certificate" in record.getMessage()]


def test_an_untrusted_certificate_is_one_error_line_a_streak_naming_the_problem(
        tls_server: tuple[int, Path], caplog: pytest.LogCaptureFixture) -> None:
    port, certificate = tls_server
    untrusted, trusted = ssl.create_default_context(), ssl.create_default_context(cafile=str(certificate))
    connections = Connections("https", "127.0.0.1", port, untrusted)

    def tries(times: int) -> None:
        """``times`` connections refused on this thread, then one on each of three others."""
        for _ in range(times):
            with pytest.raises(ssl.SSLCertVerificationError):
                connections.open(5.0)
        met: list[BaseException] = []

        def request() -> None:
            try:
                connections._connection(5.0)
            except Unreachable as error:  # as a request says it: "cannot connect to ..."
                met.append(error)

        threads = [threading.Thread(target=request) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(met) == 3 and all("CERTIFICATE_VERIFY_FAILED" in str(error) for error in met)

    with caplog.at_level(logging.INFO, logger="cronctl.operator"):
        tries(3)
        connections.context = trusted
        connections.open(5.0).close()
        connections.open(5.0).close()
        connections.context = untrusted
        tries(2)
    error = (f"the API server's certificate is not trusted: certificate verify failed: self-signed certificate "
             f"(https://127.0.0.1:{port}); nothing reaches the API server until it is: check the cluster's CA (the "
             "kubeconfig's certificate-authority, in a Pod the service account's ca.crt) and the server's certificate")
    assert said(caplog) == [("ERROR", error), ("INFO", f"the API server's certificate is trusted again "
                                                       f"(https://127.0.0.1:{port})"), ("ERROR", error)]
