"""A watch's answer, read as it comes on a connection of its own, a burst of events at a time.

The API server writes each watch event as a chunk of its own, and sends it at
once. Read through urllib3 (a Python chunked reader over a buffered file),
every event woke the watch's thread on its own, to take the GIL from the
threads launching Jobs and read one line through a dozen Python calls. Over
a herd of launches the events that echo the operator's own writes (a Job
released, a schedule's status) cost 0.2 ms of CPU per launch
(``benchmarks/bench_launch_cost.py --no-watches``), a fifth of a launch.

Here httptools (llhttp, in C) takes the chunks apart, and after a burst of
events the thread waits ``PACE_SECONDS`` before it reads again: what came
meanwhile is read in one go, a few wake-ups for a herd's hundreds of events.
An event that comes alone is read at once; one inside a burst, at most
``PACE_SECONDS`` later. Nothing waits on a watch event by the millisecond:
the Jobs' ends and the users' edits are acted on through the loop, and the
echoes of the operator's own writes are already in its cache.
"""

from __future__ import annotations

import socket
import ssl
import time
from typing import Iterator

import httptools
from urllib3.util.wait import wait_for_read

PACE_SECONDS = 0.02  # after a burst of events, how long the thread lets the next gather
BURST_BYTES = 1 << 20  # read at most this much before handing the events on
READ_BYTES = 65536
CUT = "the API server closed the connection before the answer's end"


class Cut(ConnectionError):
    """The connection ended before the answer did (the API server restarting, a proxy's timeout):
    said in the watch's log line as it is."""


class Stream:
    """One streamed HTTP answer on its own socket: its status, then its body a line at a time
    (a watch event a line). The iteration ends with the answer; a connection cut before that is
    ``Cut``."""

    def __init__(self, sock: socket.socket, pace: float = PACE_SECONDS) -> None:
        self.sock, self.pace = sock, pace
        self.status = 0
        self.reason = ""
        self.retry_after: str | None = None  # a refusal's Retry-After header
        self._head_read = self._complete = self._cut = False  # cut: the connection ended early
        self._body = bytearray()
        self._parser = httptools.HttpResponseParser(self)

    @classmethod
    def open(cls, sock: socket.socket, request: bytes, pace: float = PACE_SECONDS) -> Stream:
        """Send ``request`` and read the answer's head; the socket is closed if that fails."""
        stream = cls(sock, pace)
        try:
            sock.sendall(request)
            while not stream._head_read:
                stream._read_once()
        except BaseException:
            stream.release_conn()
            raise
        return stream

    def __iter__(self) -> Iterator[bytes]:
        while True:
            lines = self._whole_lines()
            yield from lines
            if self._complete:
                if self._body:
                    yield bytes(self._body)  # a last line without its newline
                return
            if lines:
                time.sleep(self.pace)
            self._read_burst()

    def read(self) -> bytes:
        """The rest of the answer at once (an error's body)."""
        while not self._complete:
            self._read_once()
        return bytes(self._body)

    def shutdown(self) -> None:
        """Wake a read blocked on this stream from another thread: it ends, cut short."""
        try:
            self.sock.shutdown(socket.SHUT_RD)
        except OSError:
            pass  # closed already: nothing blocks on it

    def release_conn(self) -> None:
        self.sock.close()

    # -- reading ------------------------------------------------------------------------

    def _read_burst(self) -> None:
        """Wait for the next bytes, then take what else is there without waiting. An end met
        after the first read is raised at the next burst, once what came before it is handed on."""
        if self._cut:
            raise Cut(CUT)
        self._read_once()
        while not self._complete and len(self._body) < BURST_BYTES and self._readable():
            try:
                self._read_once()
            except Cut:
                self._cut = True
                return

    def _readable(self) -> bool:
        pending = isinstance(self.sock, ssl.SSLSocket) and self.sock.pending() > 0  # decrypted, not yet taken
        return pending or wait_for_read(self.sock, timeout=0.0)

    def _read_once(self) -> None:
        data = self.sock.recv(READ_BYTES)
        if not data:
            raise Cut(CUT)
        self._parser.feed_data(data)

    def _whole_lines(self) -> list[bytes]:
        end = self._body.rfind(b"\n")
        if end < 0:
            return []
        lines = bytes(self._body[:end]).split(b"\n")
        del self._body[:end + 1]
        return lines

    # -- httptools' callbacks ----------------------------------------------------------

    def on_status(self, reason: bytes) -> None:
        self.reason += reason.decode("latin-1")

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"retry-after":
            self.retry_after = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self._head_read = True
        self.status = self._parser.get_status_code()

    def on_body(self, data: bytes) -> None:
        self._body += data

    def on_message_complete(self) -> None:
        self._complete = True
