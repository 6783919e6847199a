"""An HTTP proxy that makes CONNECT tunnels, for the tests of the operator behind a proxy.

It answers ``CONNECT host:port`` with 200 and relays bytes both ways, or with
``407`` when it wants credentials it was not given (``credentials``: the
``user:password`` it expects in ``Proxy-Authorization: Basic``). It records
each CONNECT's target and headers (``requests``). Loopback only.
"""

from __future__ import annotations

import base64
import socket
import threading

READ_BYTES = 65536


class ConnectProxy:
    def __init__(self, credentials: str | None = None) -> None:
        self.credentials = credentials
        self.requests: list[tuple[str, dict[str, str]]] = []  # (target, headers), one per CONNECT
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> ConnectProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._closing = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            data = client.recv(READ_BYTES)
            if not data:
                client.close()
                return
            head += data
        lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
        self.requests.append((target, headers))
        if method != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        expected = None if self.credentials is None else "Basic " + base64.b64encode(self.credentials.encode()).decode()
        if expected is not None and headers.get("proxy-authorization") != expected:
            client.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        host, _, port = target.rpartition(":")
        upstream = socket.create_connection((host.strip("[]"), int(port)))
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        threading.Thread(target=_relay, args=(upstream, client), daemon=True).start()
        _relay(client, upstream)


def _relay(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(READ_BYTES):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
