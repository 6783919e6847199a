"""An HTTP proxy between the operator and the API server: a CONNECT tunnel.

A kubeconfig's ``proxy-url`` (or ``HTTPS_PROXY``, which the kubernetes client
reads into its configuration) names an HTTP proxy; as client-go's transport
does, the operator asks it for a tunnel to the API server (``CONNECT
host:port``) and speaks TLS to the API server through it, on its own kept
connections, so that requests, pipelining, watches, timeouts and retries are
the same code with or without a proxy. The proxy's credentials come from the
client's ``proxy_headers`` (a ``user:password@`` in the URL included); hosts
in ``no_proxy`` are reached directly, by the client's own rule.

Not supported, and refused at start with the reason: SOCKS proxies and
proxies reached over TLS (``https://`` proxy URLs).
"""

from __future__ import annotations

import base64
import socket
from dataclasses import dataclass, field
from typing import Any, Mapping
from urllib.parse import unquote

import urllib3
from kubernetes.client.rest import should_bypass_proxies

REPLY_BYTES = 16384  # a proxy's answer to CONNECT: a status line and a few headers


class ProxyRefused(ConnectionError):
    """The proxy answered CONNECT with something else than 200: no tunnel."""


class UnsupportedProxy(ValueError):
    """A proxy the operator cannot use (SOCKS, or one reached over TLS)."""


@dataclass(frozen=True)
class Proxy:
    host: str
    port: int
    headers: Mapping[str, str] = field(default_factory=dict)  # Proxy-Authorization, if any

    @classmethod
    def of(cls, configuration: Any) -> Proxy | None:
        """The proxy the configuration sends the API server's requests through; None where there
        is none or ``no_proxy`` names the API server's host. Raises UnsupportedProxy."""
        if not configuration.proxy or should_bypass_proxies(configuration.host, configuration.no_proxy or ""):
            return None
        url = urllib3.util.parse_url(configuration.proxy)
        if url.scheme not in (None, "http") or not url.host:
            raise UnsupportedProxy(f"the proxy {configuration.proxy!r} is not an http:// proxy: only HTTP "
                                   "proxies (CONNECT) are supported")
        headers = {str(name): str(value) for name, value in (configuration.proxy_headers or {}).items()}
        if url.auth and not any(name.lower() == "proxy-authorization" for name in headers):
            token = base64.b64encode(unquote(url.auth).encode()).decode()
            headers["Proxy-Authorization"] = f"Basic {token}"
        return cls(url.host.strip("[]"), url.port or 80, headers)

    def tunnel(self, host: str, port: int, seconds: float) -> socket.socket:
        """A socket to ``host:port`` through the proxy, whose connect and each read wait at most
        ``seconds``. Raises OSError (the proxy unreachable, or ProxyRefused)."""
        sock = socket.create_connection((self.host, self.port), timeout=seconds)
        try:
            target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            head = [f"CONNECT {target} HTTP/1.1", f"Host: {target}",
                    *(f"{name}: {value}" for name, value in self.headers.items()), "", ""]
            sock.sendall("\r\n".join(head).encode("latin-1"))
            status = _status_line(_reply(sock))
            if status.split(" ", 2)[1:2] != ["200"]:
                raise ProxyRefused(f"the proxy {self.host}:{self.port} answered {status!r} to CONNECT {target}")
        except BaseException:
            sock.close()
            raise
        return sock


def _reply(sock: socket.socket) -> bytes:
    """The proxy's answer up to the blank line after its headers, read a byte at a time so that
    none of the tunnel's own bytes is read here (once a connection: it is kept)."""
    reply = b""
    while not reply.endswith(b"\r\n\r\n"):
        byte = sock.recv(1)
        if not byte:
            raise ProxyRefused("the proxy closed the connection before answering CONNECT")
        reply += byte
        if len(reply) > REPLY_BYTES:
            raise ProxyRefused("the proxy's answer to CONNECT is too long")
    return reply


def _status_line(reply: bytes) -> str:
    return reply.split(b"\r\n", 1)[0].decode("latin-1")
