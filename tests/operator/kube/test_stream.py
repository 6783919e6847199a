"""A watch's answer read as it comes: its lines whole, a burst in one read, an end, a cut, a stop.

The server here is a loopback socket that writes a scripted answer (bytes,
pauses, a close), as the API server writes a watch: a chunk an event, sent
at once. ``tests/kube/test_operator.py`` runs the watches over TLS against
the API server itself.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Callable, Iterator, Union

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cronctl.operator.kube.cache import Cache
from cronctl.operator.kube.jobwatch import Gone, JobWatch
from cronctl.operator.kube.rest import Rest
from cronctl.operator.kube.stream import Cut, Stream

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
END = b"0\r\n\r\n"
CLOSE = "close"
Step = Union[bytes, float, str]  # bytes to send, seconds to wait, or CLOSE


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def event(number: int, kind: str = "MODIFIED") -> bytes:
    body = {"metadata": {"name": f"sync-{number}", "namespace": "team-a", "resourceVersion": str(100 + number),
                         "labels": {"cronctl.dev/schedule": "sync"}}, "status": {}}
    return json.dumps({"type": kind, "object": body}).encode() + b"\n"


class Scripted:
    """A loopback server: it reads a request's head, then plays its script on that connection."""

    def __init__(self, *script: Step) -> None:
        self.script = script
        self.requests: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            head = b""
            while b"\r\n\r\n" not in head:
                head += connection.recv(4096)
            self.requests.append(head)
            for step in self.script:
                if step == CLOSE:
                    return
                if isinstance(step, float):
                    time.sleep(step)
                else:
                    connection.sendall(step)  # type: ignore[arg-type]
            time.sleep(5)  # the answer stays open unless the script ends it

    def stream(self, pace: float = 0.0, kind: type[Stream] = Stream) -> Stream:
        return kind.open(socket.create_connection(("127.0.0.1", self.port), timeout=10),
                         b"GET /watch HTTP/1.1\r\nHost: x\r\n\r\n", pace)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Scripted]]:
    servers: list[Scripted] = []

    def start(*script: Step) -> Scripted:
        servers.append(Scripted(*script))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


class Counted(Stream):
    """Counts the times the thread woke to read."""

    bursts = 0

    def _read_burst(self) -> None:
        self.bursts += 1
        super()._read_burst()


def test_each_line_comes_whole_however_the_chunks_cut_it(serve: Callable[..., Scripted]) -> None:
    one, two, three = event(1), event(2), event(3)
    server = serve(HEAD, chunk(one[:10]), 0.01, chunk(one[10:] + two), 0.01, chunk(three[:-1]), chunk(b"\n"), END)
    assert list(server.stream()) == [one[:-1], two[:-1], three[:-1]]


def test_the_lines_end_with_the_answer(serve: Callable[..., Scripted]) -> None:
    server = serve(HEAD, chunk(event(1)), END)
    started = time.monotonic()
    assert len(list(server.stream())) == 1
    assert time.monotonic() - started < 2  # not waiting for the server's 5 s


def test_an_event_that_comes_alone_is_read_at_once(serve: Callable[..., Scripted]) -> None:
    server = serve(HEAD, 0.2, chunk(event(1)), 3.0, END)
    lines = iter(server.stream(pace=2.0))
    started = time.monotonic()
    assert next(lines) == event(1)[:-1]
    assert time.monotonic() - started < 1.0


def test_a_burst_of_events_is_read_in_one_wake_up_not_one_each(serve: Callable[..., Scripted]) -> None:
    """The first event is read as it comes; the other 49, a millisecond apart, while the thread
    waits its pace: one read for them all."""
    burst: list[Step] = []
    for number in range(2, 51):
        burst += [chunk(event(number)), 0.001]
    server = serve(HEAD, 0.05, chunk(event(1)), 0.01, *burst, END)
    stream = server.stream(pace=0.5, kind=Counted)
    assert list(stream) == [event(number)[:-1] for number in range(1, 51)]
    assert stream.bursts <= 3  # type: ignore[attr-defined]  # the first event, the other 49, the end (if it came apart)


def test_a_connection_cut_before_the_end_is_an_error_after_the_events_that_came(
        serve: Callable[..., Scripted]) -> None:
    server = serve(HEAD, chunk(event(1)), CLOSE)  # the event and the end in one burst
    lines = iter(server.stream())
    assert next(lines) == event(1)[:-1]
    with pytest.raises(Cut, match="closed the connection before the answer's end"):
        next(lines)


def test_shutdown_wakes_a_read_blocked_on_another_thread(serve: Callable[..., Scripted]) -> None:
    server = serve(HEAD)
    stream = server.stream()
    ended: list[BaseException] = []

    def read() -> None:
        try:
            list(stream)
        except BaseException as error:
            ended.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.1)
    stream.shutdown()
    reader.join(2)
    assert not reader.is_alive() and ended
    stream.release_conn()
    stream.shutdown()  # on a closed socket: nothing


# -- through Rest and the watch ----------------------------------------------------------------


def _rest_to(server: Scripted) -> Rest:
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{server.port}/prefix"
    configuration.api_key = {"authorization": "Bearer secret-token"}
    return Rest(client.ApiClient(configuration))


def test_a_watch_asks_from_its_version_with_bookmarks_and_the_credentials(serve: Callable[..., Scripted]) -> None:
    server = serve(HEAD, END)
    stream = _rest_to(server).watch_namespaced_job("team-a", "cronctl.dev/schedule", "42", 300)
    assert list(stream) == []
    [request] = server.requests
    line, *headers = request.decode().split("\r\n")
    assert line.startswith("GET /prefix/apis/batch/v1/namespaces/team-a/jobs?")
    for part in ("watch=true", "allowWatchBookmarks=true", "resourceVersion=42", "timeoutSeconds=300",
                 "labelSelector=cronctl.dev%2Fschedule"):
        assert part in line
    assert "authorization: Bearer secret-token" in headers


def test_a_watch_answered_gone_is_the_clients_api_exception_and_the_watch_lists_again(serve: Callable[..., Scripted]) -> None:
    status = b'{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version"}'
    server = serve(b"HTTP/1.1 410 Gone\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                   % (len(status), status))
    rest = _rest_to(server)
    with pytest.raises(ApiException) as raised:
        rest.watch_namespaced_job("team-a", "cronctl.dev/schedule", "42", 300)
    assert raised.value.status == 410 and "too old" in str(raised.value.body)
    watch = JobWatch(_rest_to(serve(b"HTTP/1.1 410 Gone\r\nContent-Length: 0\r\n\r\n")), Cache(), "team-a",
                     "cronctl.dev/schedule", print)
    watch.resource_version = "42"
    with pytest.raises(Gone):
        watch.watch_once()


def test_a_watch_cut_short_says_so_in_one_line_and_watches_again_from_its_version(
        serve: Callable[..., Scripted], caplog: pytest.LogCaptureFixture) -> None:
    server = serve(HEAD, chunk(event(1)), CLOSE)
    watch = JobWatch(_rest_to(server), Cache(), "team-a", "cronctl.dev/schedule", print)
    watch.resource_version = "1"
    watch._stopping.wait = lambda seconds: watch._stopping.set()  # type: ignore[method-assign]  # one retry, no wait
    watch.run()
    assert watch.resource_version == "101"  # where the next watch starts
    assert ("the Jobs' watch of team-a failed (the API server closed the connection before the answer's end); "
            "again in 0.5 s") in caplog.text


def test_the_watch_caches_what_the_stream_says_and_stops_at_once(serve: Callable[..., Scripted]) -> None:
    server = serve(HEAD, chunk(event(1, "ADDED")), chunk(event(2, "ADDED")))  # then stays open
    cache = Cache()
    watch = JobWatch(_rest_to(server), cache, "team-a", "cronctl.dev/schedule", print)
    watch.resource_version = "1"
    thread = threading.Thread(target=watch.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while len(cache.jobs("team-a", "sync")) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(job["metadata"]["name"] for job in cache.jobs("team-a", "sync")) == ["sync-1", "sync-2"]
    assert watch.resource_version == "102"
    watch.stop()
    thread.join(2)
    assert not thread.is_alive()
