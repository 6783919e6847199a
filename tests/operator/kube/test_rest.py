"""The operator's HTTP side: one kept connection per writing thread, and its requests' form."""

from __future__ import annotations

import base64
import http.client
import http.server
import json
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cronctl.operator.kube.credentials import load_client
from cronctl.operator.handlers import CONNECTIONS
from cronctl.operator.loop import CONCURRENCY
from cronctl.operator.kube.proxy import Proxy
from cronctl.operator.kube.rest import Call, Calls, Connections, Rest, Unreachable, tls_context
from cronctl.operator.kube.retry import delay, retry_after

from ...kube.connectproxy import ConnectProxy

KUBECONFIG = """
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.fixture
def kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    from kubernetes.config import kube_config

    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(path))  # read from KUBECONFIG at import
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return path


def test_the_pool_keeps_a_connection_for_every_thread_that_writes(kubeconfig: Path) -> None:
    assert CONNECTIONS > CONCURRENCY
    api = load_client(CONNECTIONS)
    assert api.configuration.connection_pool_maxsize >= CONNECTIONS
    assert api.rest_client.pool_manager.connection_pool_kw["maxsize"] >= CONNECTIONS


class Recording:
    """Stands for the kept connections (``send``) and for the client's pool (``request``)."""

    def __init__(self, status: int = 200, answer: bytes = b'{"ok": true}') -> None:
        self.status, self.answer = status, answer
        self.calls: list[tuple[str, str, bytes | None, dict[str, str]]] = []

    def send(self, requests: list[tuple[str, str, bytes | None, dict[str, str]]],
             seconds: float = 60.0, deadline: float | None = None) -> list[tuple[int, str, bytes]]:
        self.calls.extend(requests)
        return [(self.status, "OK" if self.status == 200 else "Not Found", self.answer) for _ in requests]

    def request(self, method: str, url: str, body: bytes | None, headers: dict[str, str], **_: object):
        self.calls.append((method, url, body, headers))
        return type("Response", (), {"status": self.status, "reason": "OK", "data": self.answer, "headers": {}})()


def test_a_release_is_a_merge_patch_with_the_credentials_and_compact_json(kubeconfig: Path) -> None:
    rest = Rest(load_client())
    rest.direct = Recording()  # type: ignore[assignment]
    assert rest.patch_namespaced_job("team-a", "sync-1", {"spec": {"suspend": False}}) == {"ok": True}
    [(method, url, body, headers)] = rest.direct.calls  # type: ignore[attr-defined]
    assert (method, url) == ("PATCH", "/apis/batch/v1/namespaces/team-a/jobs/sync-1")
    assert body == b'{"spec":{"suspend":false}}'
    assert headers["Content-Type"] == "application/merge-patch+json"
    assert headers["authorization"] == "Bearer secret-token"


def test_a_body_made_json_already_is_sent_as_it_is(kubeconfig: Path) -> None:
    """A kept plan's Job (``operator.kept``) carries its body made at planning, not at the busy second."""
    rest = Rest(load_client())
    rest.direct = Recording()  # type: ignore[assignment]
    made = b'{"metadata":{"name":"sync-1"},"spec":{}}'
    rest.send([Calls.create_namespaced_job("team-a", made)])
    [(method, url, body, headers)] = rest.direct.calls  # type: ignore[attr-defined]
    assert (method, url, headers["Content-Type"]) == ("POST", "/apis/batch/v1/namespaces/team-a/jobs", "application/json")
    assert body is made


def test_an_error_answer_is_the_clients_api_exception_with_its_status(kubeconfig: Path) -> None:
    from kubernetes.client.exceptions import ApiException

    rest = Rest(load_client())
    rest.direct = Recording(status=404, answer=b"{}")  # type: ignore[assignment]
    with pytest.raises(ApiException) as raised:
        rest.read_namespaced_job("team-a", "gone")
    assert raised.value.status == 404


def test_behind_a_proxy_requests_go_through_its_connect_tunnel_with_its_credentials(server: Server) -> None:
    """One transport: the same kept, pipelined connections, opened through the proxy's tunnel."""
    with ConnectProxy(credentials="team:s3cret") as proxy:
        rest = _rest_to(server)
        rest.configuration.proxy = f"http://team:s3cret@127.0.0.1:{proxy.port}"
        rest.direct = Connections.for_configuration(rest.configuration)
        answers = rest.send([Calls.patch_namespaced_job("team-a", f"sync-{n}", {"n": n}) for n in range(3)])
        assert [answer["got"] for answer in answers] == [{"n": 0}, {"n": 1}, {"n": 2}]  # type: ignore[index]
        [(target, headers)] = proxy.requests  # one tunnel, kept for every request
        assert target == f"127.0.0.1:{server.server_address[1]}"
        assert headers["proxy-authorization"] == "Basic " + base64.b64encode(b"team:s3cret").decode()


def test_a_proxy_that_refuses_the_tunnel_is_said_by_name_and_nothing_is_sent(server: Server) -> None:
    with ConnectProxy(credentials="team:s3cret") as proxy:
        rest = _rest_to(server)
        rest.configuration.proxy = proxy.url  # no credentials: 407
        rest.direct = Connections.for_configuration(rest.configuration)
        with pytest.raises(Unreachable, match="407 Proxy Authentication Required"):
            rest.call(Calls.patch_namespaced_job("team-a", "sync-1", {"n": 1}))
        assert server.connections == set()


def test_hosts_no_proxy_names_are_reached_directly(kubeconfig: Path) -> None:
    configuration = load_client().configuration
    configuration.proxy, configuration.no_proxy = "http://proxy.example:3128", "127.0.0.1,.cluster.local"
    assert Connections.for_configuration(configuration).proxy is None
    configuration.no_proxy = "example.com"
    assert Connections.for_configuration(configuration).proxy == Proxy("proxy.example", 3128, {})


@pytest.mark.parametrize("proxy", ["socks5://127.0.0.1:1080", "https://proxy.example:3129"])
def test_a_proxy_the_operator_cannot_use_is_refused_at_start_with_the_reason(kubeconfig: Path, proxy: str) -> None:
    api = load_client()
    api.configuration.proxy = proxy
    with pytest.raises(ValueError, match="only HTTP proxies"):
        Rest(api)


@pytest.mark.parametrize("setting, name", [({"tls_server_name": "kubernetes.default"}, "kubernetes.default"),
                                           ({"assert_hostname": "api.internal"}, "api.internal"),
                                           ({}, "127.0.0.1")])
def test_tls_checks_the_server_name_the_configuration_gives(kubeconfig: Path, setting: dict[str, str],
                                                             name: str) -> None:
    api = load_client()
    for field, value in setting.items():
        setattr(api.configuration, field, value)
    assert Rest(api).direct.server_name == name


def test_credentials_are_built_once_a_second_not_once_a_request(kubeconfig: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    rest = Rest(load_client(), monotonic=lambda: now[0])
    rest.direct = Recording()  # type: ignore[assignment]
    built = []
    settings = rest.configuration.auth_settings
    monkeypatch.setattr(rest.configuration, "auth_settings", lambda: built.append(1) or settings())
    for _ in range(50):
        rest.read_namespaced_job("team-a", "sync-1")
    assert len(built) == 1
    now[0] += 0.999
    rest.read_namespaced_job("team-a", "sync-1")
    assert len(built) == 1
    now[0] += 0.001  # a second after they were built: a refreshed token is seen
    rest.read_namespaced_job("team-a", "sync-1")
    assert len(built) == 2
    assert all(headers["authorization"] == "Bearer secret-token" for *_, headers in rest.direct.calls)


def test_without_verification_the_tls_context_checks_nothing(kubeconfig: Path) -> None:
    context = tls_context(load_client().configuration)  # the kubeconfig says insecure-skip-tls-verify
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_NONE, False)


def test_with_verification_the_tls_context_checks_the_chain_and_the_host(kubeconfig: Path) -> None:
    configuration = load_client().configuration
    configuration.verify_ssl = True
    context = tls_context(configuration)
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)


# -- the kept connections, against a real HTTP server on loopback --------------------------------


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.connections: set[int] = set()  # the clients' ports: one a connection
        self.drop_after: int | None = None  # close a connection after this many answers on it
        self.unanswered: int | None = None  # close a connection at this request on it, unanswered
        self.chunked = False  # answer in chunks (Transfer-Encoding: chunked), as a LIST may be
        self.say_close = False  # answer with Connection: close
        self.cut_short = False  # announce more of the answer than is sent, then close
        self.posts: list[tuple[int, str]] = []  # (the client's port, the Event's reason), as they came


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def do_PATCH(self) -> None:
        self.server.connections.add(self.client_address[1])
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received = getattr(self, "received", 0) + 1
        if self.received == self.server.unanswered:
            self.close_connection = True  # closed as the request came: it was never taken
            return
        answer = json.dumps({"got": json.loads(body)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if self.server.say_close:
            self.send_header("Connection", "close")
            self.close_connection = True
        if self.server.chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(answer), 7):
                piece = answer[start:start + 7]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(answer) + (10 if self.server.cut_short else 0)))
        self.end_headers()
        self.wfile.write(answer)
        if self.server.cut_short:
            self.close_connection = True
            return
        self.answered = getattr(self, "answered", 0) + 1
        if self.server.drop_after is not None and self.answered >= self.server.drop_after:
            self.close_connection = True  # as an API server closing an idle connection, without a word

    def do_POST(self) -> None:
        """An Event: created (201), refused (403) if its reason says Refuse, or shed (429 with
        Retry-After 3, in plain text, as API Priority and Fairness answers) if it says Shed."""
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.posts.append((self.client_address[1], body["reason"]))
        self.server.connections.add(self.client_address[1])
        status = {"Refuse": 403, "Shed": 429}.get(body["reason"], 201)
        answer = (b"Too many requests, please try again later.\n" if status == 429
                  else json.dumps({"kind": "Event", "reason": body["reason"]}).encode())
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "3")
        self.send_header("Content-Length", str(len(answer)))
        if self.server.say_close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(answer)
        self.answered = getattr(self, "answered", 0) + 1
        if self.server.drop_after is not None and self.answered >= self.server.drop_after:
            self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Server]:
    served = Server()
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()


def _rest_to(server: Server) -> Rest:
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{server.server_address[1]}"
    return Rest(client.ApiClient(configuration))


def test_a_thread_keeps_one_connection_for_all_its_requests(server: Server) -> None:
    rest = _rest_to(server)
    for number in range(20):
        assert rest.patch_namespaced_job("team-a", "sync-1", {"n": number}) == {"got": {"n": number}}
    assert len(server.connections) == 1


def test_each_writing_thread_has_its_own_connection(server: Server) -> None:
    rest = _rest_to(server)
    barrier = threading.Barrier(4)

    def patch(number: int) -> dict:
        barrier.wait()
        return rest.patch_namespaced_job("team-a", f"sync-{number}", {"n": number})

    with ThreadPoolExecutor(4) as threads:
        assert list(threads.map(patch, range(4))) == [{"got": {"n": n}} for n in range(4)]
    assert len(server.connections) == 4


def test_a_connection_the_server_closed_is_opened_anew_and_nothing_fails(server: Server) -> None:
    server.drop_after = 1
    rest = _rest_to(server)
    for number in range(5):
        assert rest.patch_namespaced_job("team-a", "sync-1", {"n": number}) == {"got": {"n": number}}
    assert len(server.connections) == 5


def test_a_request_met_by_a_closing_connection_is_sent_again_on_a_new_one(server: Server) -> None:
    server.unanswered = 2  # every kept connection is closed when its second request arrives
    rest = _rest_to(server)
    for number in range(4):
        assert rest.patch_namespaced_job("team-a", "sync-1", {"n": number}) == {"got": {"n": number}}
    assert len(server.connections) == 4


def test_an_answer_in_chunks_is_read_whole_and_the_connection_kept(server: Server) -> None:
    server.chunked = True
    rest = _rest_to(server)
    for number in range(3):
        assert rest.patch_namespaced_job("team-a", "sync-1", {"n": number, "pad": "x" * 100}) == \
            {"got": {"n": number, "pad": "x" * 100}}
    assert len(server.connections) == 1


def test_an_answer_that_says_connection_close_is_read_and_the_next_request_opens_anew(server: Server) -> None:
    server.say_close = True
    rest = _rest_to(server)
    for number in range(3):
        assert rest.patch_namespaced_job("team-a", "sync-1", {"n": number}) == {"got": {"n": number}}
    assert len(server.connections) == 3


def test_an_answer_cut_short_is_an_error_not_a_request_sent_again(server: Server) -> None:
    server.cut_short = True
    rest = _rest_to(server)
    with pytest.raises(http.client.IncompleteRead):
        rest.patch_namespaced_job("team-a", "sync-1", {"n": 1})
    assert len(server.connections) == 1  # the server took it: sending it again could do it twice


def test_a_header_value_with_a_line_break_is_refused_not_sent(server: Server) -> None:
    rest = _rest_to(server)
    rest.user_agent = "cronctl\r\nX-Injected: yes"
    with pytest.raises(ValueError, match="line break"):
        rest.patch_namespaced_job("team-a", "sync-1", {"n": 1})
    assert server.connections == set()


# -- writes pipelined (Events here) ---------------------------------------------------------------------------


def events(*reasons: str) -> list[Call]:
    """Events to post, their answers read (the operator's own are not: ``Calls``)."""
    return [Call("POST", "/api/v1/namespaces/team-a/events",
                 {"kind": "Event", "metadata": {"generateName": "sync."}, "reason": reason}) for reason in reasons]


def created(reasons: list[str]) -> list[dict]:
    return [{"kind": "Event", "reason": reason} for reason in reasons]


class CountingSends:
    """Wraps a socket: counts its sends."""

    def __init__(self, sock: object) -> None:
        self.sock, self.sends = sock, 0

    def sendall(self, data: bytes) -> None:
        self.sends += 1
        self.sock.sendall(data)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.sock, name)


def test_writes_go_out_pipelined_in_one_send_on_one_connection_each_answered_in_order(server: Server) -> None:
    rest = _rest_to(server)
    opened: list[CountingSends] = []
    open_socket = rest.direct.open  # type: ignore[union-attr]
    rest.direct.open = lambda *a: opened.append(CountingSends(open_socket(*a))) or opened[-1]  # type: ignore
    reasons = [f"Launched{n}" for n in range(20)]
    assert rest.send(events(*reasons)) == created(reasons)
    assert [reason for _, reason in server.posts] == reasons
    assert len(server.connections) == 1 and [sock.sends for sock in opened] == [1]


def test_a_write_refused_is_its_api_exception_and_the_others_are_made(server: Server) -> None:
    from kubernetes.client.exceptions import ApiException

    answers = _rest_to(server).send(events("Launched", "Refuse", "Skipped"))
    assert [answers[0], answers[2]] == created(["Launched", "Skipped"])
    assert isinstance(answers[1], ApiException) and answers[1].status == 403
    assert [reason for _, reason in server.posts] == ["Launched", "Refuse", "Skipped"]


def test_what_a_closing_connection_left_unanswered_goes_again_on_a_new_one(server: Server) -> None:
    server.drop_after = 3  # as an API server closing a connection after some answers
    reasons = [f"Launched{n}" for n in range(8)]
    assert _rest_to(server).send(events(*reasons)) == created(reasons)
    assert [reason for _, reason in server.posts] == reasons  # each once
    assert len(server.connections) == 3


def test_an_answer_that_says_connection_close_ends_the_batch_on_that_connection(server: Server) -> None:
    server.say_close = True
    reasons = ["Launched", "Skipped", "Succeeded"]
    assert _rest_to(server).send(events(*reasons)) == created(reasons)
    assert [reason for _, reason in server.posts] == reasons
    assert len(server.connections) == 3


def test_more_writes_than_a_pipeline_holds_go_in_several_sends(server: Server) -> None:
    from cronctl.operator.kube.rest import PIPELINE

    reasons = [f"Launched{n}" for n in range(PIPELINE * 2 + 5)]
    assert _rest_to(server).send(events(*reasons)) == created(reasons)
    assert [reason for _, reason in server.posts] == reasons
    assert len(server.connections) == 1


def test_the_answer_to_an_event_is_not_parsed_nobody_reads_it(server: Server) -> None:
    assert _rest_to(server).send([Calls.create_namespaced_event("team-a", {"reason": "Launched"})]) == [{}]
    assert [reason for _, reason in server.posts] == ["Launched"]


def test_pipelined_writes_hold_at_most_64_kb_unanswered_and_a_larger_one_goes_alone() -> None:
    """Sent whole before any answer is read, a batch must fit the server's receive buffer, or a
    server blocked writing answers to us and we blocked writing requests to it would wait forever
    (Jobs with large templates)."""
    from cronctl.operator.kube.rest import PIPELINE, PIPELINE_BYTES, pipelined

    def of(*sizes: int) -> list:
        return [("POST", "/x", b"x" * size, {}) for size in sizes]

    assert len(pipelined(of(*[100] * 40), 0)) == PIPELINE
    assert len(pipelined(of(*[20_000] * 5), 0)) == 3  # 3 x 21 KB <= 64 KB < 4 x 21 KB
    assert len(pipelined(of(100_000, 100), 0)) == 1  # alone, as a single request goes
    assert len(pipelined(of(100, 100_000), 0)) == 1
    assert pipelined(of(100, 200, 300), 1) == of(200, 300)
    assert 3 * (20_000 + 1024) <= PIPELINE_BYTES


def test_large_writes_go_in_several_sends_each_answered(server: Server) -> None:
    rest = _rest_to(server)
    opened: list[CountingSends] = []
    open_socket = rest.direct.open  # type: ignore[union-attr]
    rest.direct.open = lambda *a: opened.append(CountingSends(open_socket(*a))) or opened[-1]  # type: ignore
    calls = [Call("POST", "/api/v1/namespaces/team-a/events", {"reason": f"Big{n}", "pad": "x" * 30_000})
             for n in range(6)]
    assert rest.send(calls) == created([f"Big{n}" for n in range(6)])
    assert [sock.sends for sock in opened] == [3]  # two of 31 KB a send


def test_a_connection_that_cannot_be_made_is_unreachable_naming_the_host_and_nothing_is_sent() -> None:
    import socket

    from cronctl.operator.kube.rest import Connections, Unreachable

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]  # bound, not listening: a connect is refused
        connections = Connections("http", "127.0.0.1", port, None)
        with pytest.raises(Unreachable, match=f"cannot connect to 127.0.0.1:{port}: Connection refused"):
            connections.send([("GET", "/version", None, {})])


def test_a_429s_retry_after_reaches_the_retry_whether_pipelined_or_alone(server: Server) -> None:
    """API Priority and Fairness says when to come back in a header, with a plain-text body: the
    refusal keeps it, and the reconcile's retry waits that long (it waited 0.1 s)."""
    rest = _rest_to(server)
    created, shed = rest.send([Calls.create_namespaced_event("team-a", {"reason": "Launched"}),
                               Calls.create_namespaced_event("team-a", {"reason": "Shed"})])
    assert created == {} or created.get("reason") == "Launched"
    assert isinstance(shed, ApiException) and shed.status == 429
    assert retry_after(shed) == 3.0 and delay(shed, failures=1) == 3.0
    with pytest.raises(ApiException) as alone:
        rest.call(Calls.create_namespaced_event("team-a", {"reason": "Shed"}))
    assert retry_after(alone.value) == 3.0
    [after] = rest.send([Calls.create_namespaced_event("team-a", {"reason": "Launched"})])
    assert not isinstance(after, ApiException)  # the refusal's state does not outlive its answer
