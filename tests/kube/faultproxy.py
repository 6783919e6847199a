"""A TCP proxy in front of the test API server that has the faults a cluster's network has.

Clients (the operator, the CronJob controller) connect to ``127.0.0.1:port``
instead of the API server; TLS passes through untouched (the API server's
certificate names 127.0.0.1, and the client certificates reach it as they
are), so HTTP/1.1 and HTTP/2 clients meet the same faults. The faults:

- ``reset_all()``: every open connection reset (RST), watch streams included,
  as a restarted load balancer or a conntrack flush does;
- ``reset_new(seconds)``: new connections reset at once, in the TLS handshake;
- ``blackhole(seconds, reset_at_end)``: nothing crosses, either way: open
  connections hold their bytes (TCP retransmits them once the path heals) and
  new ones hang before their handshake; with ``reset_at_end``, the path comes
  back resetting every connection, and new ones for that many seconds (those
  that waited in the blackhole first), as a load balancer coming back does;
- ``go_silent()``: every open connection goes dead without a word (what it
  is sent vanishes, nothing comes back, nothing closes), as when a NAT or
  conntrack entry is dropped; new connections work;
- ``cut_answers(seconds)``: an answer (or a watch event) from the API server
  is forwarded in part, then the connection closes: answers cut mid-body;
- ``delay(seconds_per_chunk, seconds)``: every chunk either way waits first.

Each fault ends by itself; the proxy counts what it did (``stats``). Only
loopback addresses are used.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections import Counter

READ_BYTES = 65536


class FaultProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(512)
        self.port: int = self._listener.getsockname()[1]
        self._links: set[_Link] = set()
        self._lock = threading.Lock()
        self._open = threading.Event()  # cleared during a blackhole
        self._open.set()
        self._reset_new_until = 0.0
        self._cut_until = 0.0
        self._delay: tuple[float, float] = (0.0, 0.0)  # (seconds per chunk, until)
        self._timers: list[threading.Timer] = []
        self._stopped = False
        self.stats: Counter[str] = Counter()
        self._accepting = threading.Thread(target=self._accept, name="faultproxy-accept", daemon=True)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def __enter__(self) -> FaultProxy:
        self._accepting.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopped = True
        self._open.set()
        for timer in self._timers:
            timer.cancel()
        try:
            self._listener.close()
        except OSError:
            pass
        for link in self._snapshot():
            link.close(reset=False)

    # -- faults ---------------------------------------------------------------------------

    def reset_all(self) -> int:
        """Reset every open connection; how many there were."""
        links = self._snapshot()
        for link in links:
            link.close(reset=True)
        self.stats["reset"] += len(links)
        return len(links)

    def go_silent(self) -> int:
        """Every open connection dead from now on, silently; how many there were."""
        links = self._snapshot()
        for link in links:
            link.dead = True
        self.stats["silenced"] += len(links)
        return len(links)

    def reset_new(self, seconds: float) -> None:
        self._reset_new_until = time.monotonic() + seconds

    def blackhole(self, seconds: float, reset_at_end: float = 0.0) -> None:
        self._open.clear()

        def end() -> None:
            if reset_at_end:
                self.reset_new(reset_at_end)
                self.reset_all()
            self._open.set()

        self._after(seconds, end)

    def cut_answers(self, seconds: float) -> None:
        self._cut_until = time.monotonic() + seconds

    def delay(self, seconds_per_chunk: float, seconds: float) -> None:
        self._delay = (seconds_per_chunk, time.monotonic() + seconds)

    def healed(self) -> bool:
        now = time.monotonic()
        return (self._open.is_set() and now >= self._reset_new_until and now >= self._cut_until
                and now >= self._delay[1])

    def connections(self) -> int:
        return len(self._snapshot())

    # -- the proxy ------------------------------------------------------------------------

    def _after(self, seconds: float, then: object) -> None:
        timer = threading.Timer(seconds, then)  # type: ignore[arg-type]
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _snapshot(self) -> list[_Link]:
        with self._lock:
            return list(self._links)

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(client,), name="faultproxy-link", daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        self._open.wait()  # a blackhole: the handshake hangs until the path heals
        if time.monotonic() < self._reset_new_until:
            self.stats["refused"] += 1
            _reset(client)
            return
        try:
            upstream = socket.create_connection(self.upstream, timeout=10)
        except OSError:
            _reset(client)
            return
        upstream.settimeout(None)
        link = _Link(self, client, upstream)
        with self._lock:
            self._links.add(link)
        self.stats["connections"] += 1
        link.start()

    def _forget(self, link: _Link) -> None:
        with self._lock:
            self._links.discard(link)

    def _pass(self, data: bytes, answer: bool) -> tuple[bytes, bool]:
        """What of a chunk crosses now, and whether the connection then closes (a cut)."""
        self._open.wait()
        per_chunk, until = self._delay
        if per_chunk and time.monotonic() < until:
            time.sleep(per_chunk)
        if answer and time.monotonic() < self._cut_until and len(data) > 1:
            self.stats["cut"] += 1
            return data[: len(data) // 2], True
        return data, False


class _Link:
    """One client connection and its connection to the API server, a thread each way."""

    def __init__(self, proxy: FaultProxy, client: socket.socket, upstream: socket.socket) -> None:
        self.proxy, self.client, self.upstream = proxy, client, upstream
        self._closed = False
        self.dead = False  # what crosses is dropped, both ways, and nothing closes
        self._lock = threading.Lock()

    def start(self) -> None:
        for source, target, answer in ((self.client, self.upstream, False), (self.upstream, self.client, True)):
            threading.Thread(target=self._pump, args=(source, target, answer), name="faultproxy-pump",
                             daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, answer: bool) -> None:
        try:
            while True:
                data = source.recv(READ_BYTES)
                if not data:
                    break
                if self.dead:
                    continue
                data, cut = self.proxy._pass(data, answer)
                target.sendall(data)
                if cut:
                    self.close(reset=False)
                    return
        except OSError:
            pass
        self.close(reset=False)

    def close(self, reset: bool) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for sock in (self.client, self.upstream):
            if reset:
                _reset(sock)
            else:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
        self.proxy._forget(self)


def _reset(sock: socket.socket) -> None:
    """Close with an RST, not a FIN: the peer reads ECONNRESET. A pump thread blocked reading the
    socket holds it open past close() (and no RST would go), so its read is ended first."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RD)  # wakes a recv() in another thread; sends nothing
    except OSError:
        pass
    sock.close()


def kubeconfig_through(source_text: str, server: str, proxy_url: str) -> str:
    """A kubeconfig's text with its server's URL replaced by the proxy's."""
    assert server in source_text, "the kubeconfig does not name the API server's URL"
    return source_text.replace(server, proxy_url)
