"""JSON requests to the API server with the kubernetes client's settings and credentials.

The generated client (kubernetes 37) validates every call's arguments with
pydantic, serializes models, and parses headers it does not need: profiled
over a herd of 2,000 launches, that was most of the operator's CPU per
launch. The writes of a launch are small JSON documents the operator
already holds as dicts, so they go out here as bytes, with the client's
credentials (``Configuration.auth_settings``, which refreshes an expiring
service-account token), and their answers come back as dicts.

They go out on one kept connection per thread (``Connections``), with the
TLS settings of the client's configuration, and the credentials' headers are
rebuilt once a second, not once a request. A request is written in one
send and its answer parsed by httptools (llhttp, Node.js's parser), not by
``http.client``, which writes the head and the body in two sends and parses
the answer's head with the standard library's e-mail parser. Measured
against the test API server (one thread, CPU time): a Job's merge patch cost
490 us through urllib3's pool and the credentials built anew, 310 us on a
kept ``http.client`` connection, and 180 us this way. Behind an HTTP proxy
the same connections go through a CONNECT tunnel (``proxy``), and a TLS
server name (``tls-server-name``) or a pinned hostname is the name TLS
checks: one transport for every configuration the operator accepts.

Writes that do not depend on each other go out together (``Rest.send``):
pipelined on the thread's connection (HTTP/1.1 allows it; the API server's
Go server answers them in order), so a thread wakes for a read of several
answers rather than once per request. Measured against the test API server
(500 Job patches, CPU time): 0.16-0.19 ms a request one at a time, on one
thread or sixteen; 0.08-0.10 ms pipelined 125 at a time, in the same wall
time (the API server was the bound either way). A watch is read on a
connection of its own (``stream``).

A request may be given a ``deadline`` instead (a Lease's renewal): its
connect, TLS handshake and answer all end by then, as client-go's context
bounds a request, so a slow path's handshake counts within the try's time,
not as a second timeout of its own. A server certificate that does not
verify (another CA, a changed or expired certificate, another name) is one
ERROR line per streak of handshakes that met it (``Trust``), whichever
thread met it: every request and watch fails until it is trusted.

Each request's end is told to a ``RequestObserver`` when there is one
(``request_kinds``: the operator's ``metrics.ApiRequests`` counts it by verb,
resource and code and times it): a pipelined request is timed to its own
answer, a watch to its answer's head, and a request that met a connection's
error counts as ``<error>``. Measured with timeit on the hot path, a fake
connection in place of the socket (so that only the counting differs):
2.3-3.5 us more a request sent alone (2.7-4.3 us without counting), 2.7 us
more a request pipelined 32 at a time (1.1 to 3.8 us), of which naming its
kind is 0.6 us and prometheus-client's counter and histogram 1.7 us; against
a loopback server answering at once, 5.0 to 8.0 us of the client's CPU a
pipelined request. That is 1.5-3.5% of a request's 0.08-0.19 ms above.

Errors are the client's ``ApiException`` with the status and reason, so
callers tell NotFound from Conflict as they would with the client. The
calls are named as the client's are (``create_namespaced_job``...), which is
also how the chart's tests match each call to its RBAC grant.
"""

from __future__ import annotations

import email.utils
import http.client
import logging
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple, Protocol
from urllib.parse import quote, urlencode

import httptools
import orjson
import urllib3
from urllib3.util.wait import wait_for_read
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from ...api import GROUP, POOL_PLURAL, VERSION
from .proxy import Proxy
from .request_kinds import ERROR_CODE, RequestObserver, kind_of
from .stream import Stream

log = logging.getLogger("cronctl.operator")

MERGE_PATCH = "application/merge-patch+json"
SECONDS = 60.0  # a connection's timeout, to connect and for each read of a list or a read
# ... and of a write's answer, which comes in milliseconds unless the connection is dead (a
# conntrack entry dropped, a reset that never arrived) or etcd stalls: a write waits no longer,
# and is tried again on a new connection (``retry``), while its minute can still be kept.
WRITE_SECONDS = 10.0
# How long the credentials' headers are reused. Building them (``auth_settings``) runs the
# client's refresh hook, which from a kubeconfig reads every environment variable for proxies:
# 48 us a request. A token is valid for minutes or more, and its refresh is seen within this.
CREDENTIALS_SECONDS = 1.0


class Closed(ConnectionError):
    """The server closed the connection before the answer's first byte: the request was not taken."""


class Unreachable(ConnectionError):
    """No connection could be made (refused, reset during the TLS handshake, timed out): nothing was sent."""


def left(deadline: float) -> float:
    """The seconds until ``deadline`` (monotonic); a TimeoutError once none are left."""
    seconds = deadline - time.monotonic()
    if seconds <= 0:
        raise TimeoutError("timed out")
    return seconds


def _reason(error: BaseException) -> str:
    """An OS or TLS error in a few words: its strerror, else its text, else its type."""
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


# What a kept connection raises when the API server closed it while idle: the request is sent
# again once, on a new connection (a create sent twice is refused as AlreadyExists, which the
# operator adopts; the other writes are merge patches, the same twice).
STALE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, ssl.SSLEOFError)
READ_BYTES = 65536  # a read of an answer: a Job's is 3-4 KB
# Requests written at once on a connection: at most PIPELINE, and no more bytes than
# PIPELINE_BYTES (a larger one alone). All are sent before any answer is read: requests that fit
# the server's receive buffer (128 KB by Linux's default) are sent whole even while the server
# answers the first ones, and neither side waits on the other's full buffer.
PIPELINE = 32
PIPELINE_BYTES = 65536
HEAD_BYTES = 1024  # a request's head, as counted against PIPELINE_BYTES (the credentials' token included)


class Answer(NamedTuple):
    """One answer as the connection read it."""

    status: int
    reason: str
    body: bytes
    retry_after: str | None = None  # a refusal's Retry-After header (API Priority and Fairness' 429s)
    received: float = 0.0  # when it was read whole (monotonic): a pipelined request's own end


class SkewSampler(Protocol):
    """What a connection tells the Date of an answer now and then: the operator's
    ``clock.SkewEstimate``, named by its shape so that this layer never imports ``cronctl.clock``
    (which parses times with the core)."""

    def stamp(self) -> float: ...

    def wants(self, received: float) -> bool: ...

    def observe(self, sent: float, received: float, date: float) -> None: ...


class Connection:
    """One HTTP/1.1 connection: requests written in one send, their answers parsed by httptools."""

    def __init__(self, sock: socket.socket, host_header: str, seconds: float = SECONDS,
                 skew: SkewSampler | None = None) -> None:
        self.sock: socket.socket | None = sock
        self.host_header = host_header
        self.seconds = seconds  # how long a read waits
        self.skew = skew  # told the Date of an answer now and then (clock.SkewEstimate)

    def wait_at_most(self, seconds: float) -> None:
        """Each read of the next exchanges waits at most ``seconds`` (a socket call only when it changes)."""
        if seconds != self.seconds and self.sock is not None:
            self.sock.settimeout(seconds)
            self.seconds = seconds

    def exchange(self, requests: list[tuple[str, str, bytes | None, Mapping[str, str]]],
                 deadline: float | None = None) -> list[Answer]:
        """Requests written in one send (several: HTTP/1.1 pipelining), their answers read in order:
        the server takes them one after another, and the thread wakes for a read of several answers,
        not one each. Fewer answers than requests: the server closed the connection after the last
        (the rest were not taken); an answer cut short raises ``http.client.IncompleteRead``.
        With a ``deadline``, the answers are read by then (else TimeoutError)."""
        if self.sock is None:
            return []
        answers = _Answers()
        parser = httptools.HttpResponseParser(answers)
        answers.parser = parser
        sent = None if self.skew is None else self.skew.stamp()
        try:
            self.sock.sendall(b"".join(_request(method, path, self.host_header, headers, body)
                                       for method, path, body, headers in requests))
        except STALE:
            self.close()
            return []
        while len(answers.done) < len(requests) and not answers.closing:
            if deadline is not None:
                self.wait_at_most(left(deadline))
            try:
                data = self.sock.recv(READ_BYTES)
            except STALE:
                data = b""
            if not data:
                if answers.started:
                    self.close()
                    raise http.client.IncompleteRead(b"".join(answers.body))
                break
            parser.feed_data(data)
        if len(answers.done) < len(requests) or answers.closing:
            self.close()
        if sent is not None and answers.date is not None:
            self._sample(sent, answers.date)
        return answers.done

    def _sample(self, sent: float, date: bytes) -> None:
        """The exchange's first Date against the monotonic clock (clock.SkewEstimate), at most once a second."""
        assert self.skew is not None
        received = self.skew.stamp()
        if self.skew.wants(received):
            try:
                stamp = email.utils.parsedate_to_datetime(date.decode("latin-1")).timestamp()
            except (TypeError, ValueError, IndexError):
                return  # not an HTTP date: no sample
            self.skew.observe(sent, received, stamp)

    def idle_closed(self) -> bool:
        """Whether the server closed this idle connection (as far as can be told without sending:
        one the server closed reads as ready)."""
        return self.sock is None or wait_for_read(self.sock, timeout=0.0)

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            sock.close()


class _Answers:
    """httptools' callbacks for answers one after another on a connection."""

    def __init__(self) -> None:
        self.parser: Any = None
        self.done: list[Answer] = []
        self.started = self.closing = False  # started: an answer begun, not yet whole
        self.reason = ""
        self.refused = False  # the answer being read is a refusal: its Retry-After is kept
        self.date: bytes | None = None  # the first answer's Date header
        self.retry_after: str | None = None
        self.body: list[bytes] = []

    def on_message_begin(self) -> None:
        self.started = True

    def on_status(self, reason: bytes) -> None:
        self.reason += reason.decode("latin-1")
        self.refused = self.parser.get_status_code() >= 400

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.refused and name.lower() == b"retry-after":
            self.retry_after = value.decode("latin-1")
        elif self.date is None and len(name) == 4 and name.lower() == b"date":
            self.date = value

    def on_body(self, data: bytes) -> None:
        self.body.append(data)

    def on_message_complete(self) -> None:
        self.done.append(Answer(self.parser.get_status_code(), self.reason, b"".join(self.body), self.retry_after,
                                time.monotonic()))
        self.closing = not self.parser.should_keep_alive()  # the server closes after this answer
        self.started, self.reason, self.body, self.refused, self.retry_after = False, "", [], False, None


def _request(method: str, path: str, host_header: str, headers: Mapping[str, str], body: bytes | None) -> bytes:
    """A request's bytes, head and body, for one send."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host_header}"]
    lines.extend(f"{name}: {_header_value(value)}" for name, value in headers.items())
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + (body or b"")


def _header_value(value: str) -> str:
    if "\r" in value or "\n" in value:
        raise ValueError("a header value holds a line break")
    return value


@dataclass(frozen=True)
class Call:
    """A request as data (its ``target`` below the API's base path), to send alone or with others."""

    method: str
    target: str
    body: Any = None  # sent as JSON; bytes: JSON made already (``operator.kept``), sent as they are
    content_type: str = "application/json"
    answer: bool = True  # False: nobody reads the answer, which is not parsed ({} stands for it)

    @property
    def data(self) -> bytes | None:
        """The body as sent: its JSON, or the bytes it is already."""
        if self.body is None or isinstance(self.body, bytes):
            return self.body
        return orjson.dumps(self.body, option=orjson.OPT_NON_STR_KEYS)


class Calls:
    """The writes a plan's effects make, as ``Call``s, named as the client's calls are."""

    @staticmethod
    def create_namespaced_job(namespace: str, body: Mapping[str, Any] | bytes) -> Call:
        return Call("POST", _jobs(namespace), body)

    @staticmethod
    def patch_namespaced_job(namespace: str, name: str, patch: Mapping[str, Any]) -> Call:
        """A JSON merge patch (RFC 7386): a null removes a field, a label for one."""
        return Call("PATCH", _jobs(namespace, name), patch, MERGE_PATCH)

    @staticmethod
    def delete_namespaced_job(namespace: str, name: str, propagation_policy: str) -> Call:
        return Call("DELETE", _jobs(namespace, name),
                    {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation_policy})

    @staticmethod
    def patch_namespaced_custom_object_status(group: str, version: str, namespace: str, plural: str, name: str,
                                              patch: Mapping[str, Any]) -> Call:
        return Call("PATCH", _custom(group, version, namespace, plural, name) + "/status", patch, MERGE_PATCH)

    @staticmethod
    def create_namespaced_event(namespace: str, body: Mapping[str, Any]) -> Call:
        return Call("POST", _events(namespace), body, answer=False)

    @staticmethod
    def patch_namespaced_event(namespace: str, name: str, patch: Mapping[str, Any]) -> Call:
        return Call("PATCH", f"{_events(namespace)}/{quote(name)}", patch, MERGE_PATCH, answer=False)


class Connections:
    """One kept HTTP/1.1 connection to the API server per thread that asks."""

    def __init__(self, scheme: str, host: str, port: int | None, context: ssl.SSLContext | None,
                 server_name: str | None = None, proxy: Proxy | None = None,
                 skew: SkewSampler | None = None) -> None:
        self.scheme, self.context, self.proxy, self.skew = scheme, context, proxy, skew
        self.host = host.strip("[]")  # an IPv6 address is bracketed in URLs and Host, not for connecting
        self.port = port if port is not None else (443 if scheme == "https" else 80)
        self.host_header = host if port is None else f"{host}:{port}"
        self.server_name = server_name or self.host  # the name TLS asks for and checks
        self.trust = Trust(f"{scheme}://{self.host_header}")
        self._local = threading.local()

    @classmethod
    def for_configuration(cls, configuration: Any, skew: SkewSampler | None = None) -> Connections:
        """The connections the client's configuration describes: the API server's URL, its TLS
        settings (a ``tls-server-name``, else a pinned hostname, is the name checked), its proxy.
        Raises ValueError for what the operator cannot use (an address that is no http(s) URL,
        a SOCKS or TLS proxy)."""
        url = urllib3.util.parse_url(configuration.host)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"the API server's address {configuration.host!r} is not an http:// or https:// URL")
        pinned = configuration.assert_hostname if isinstance(configuration.assert_hostname, str) else None
        context = tls_context(configuration) if url.scheme == "https" else None
        return cls(url.scheme, url.host, url.port, context, configuration.tls_server_name or pinned,
                   Proxy.of(configuration), skew)

    def send(self, requests: list[tuple[str, str, bytes | None, dict[str, str]]],
             seconds: float = SECONDS, deadline: float | None = None) -> list[Answer]:
        """Each request's answer, in order, the requests pipelined (``pipelined``).
        What a closing connection left unanswered goes again on a new one: a kept connection the
        API server had closed while idle, once (``_connection`` then opens one: not reused, so a
        request is never sent a third time); one it closed after some answers, for the rest. An
        answer cut short raises: the server took that request, and sending it again could do it twice.
        A connect and each read wait at most ``seconds``; with a ``deadline`` (monotonic), all of it
        (a new connection's connect and TLS handshake too) ends by then."""
        answers: list[Answer] = []
        while len(answers) < len(requests):
            batch = pipelined(requests, len(answers))
            connection, reused = self._connection(seconds, deadline)
            connection.wait_at_most(seconds if deadline is None else left(deadline))
            try:
                got = connection.exchange(batch, deadline)
            except BaseException:
                connection.close()  # half an exchange: the next request opens anew
                raise
            if not got and not reused:
                raise Closed("the server closed the connection without an answer")
            answers.extend(got)  # none from a stale kept connection: the batch goes again on a new one
        return answers

    def _connection(self, seconds: float = SECONDS, deadline: float | None = None) -> tuple[Connection, bool]:
        """This thread's connection, and whether it was open already (and, as far as can be told
        without sending, still is)."""
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is not None and not connection.idle_closed():
            return connection, True
        if connection is not None:
            connection.close()
        self._local.connection = None
        try:
            sock = self.open(seconds, deadline)
        except (OSError, ssl.SSLError) as error:  # refused, reset in the handshake, timed out
            raise Unreachable(f"cannot connect to {self.host_header}: {_reason(error)}") from error
        connection = self._local.connection = Connection(sock, self.host_header, seconds, self.skew)
        return connection, False

    def open(self, seconds: float = SECONDS, deadline: float | None = None) -> socket.socket:
        """A new connection's socket, whose connect, TLS handshake and each read wait at most
        ``seconds``; with a ``deadline``, the connect and the handshake end by then."""
        if deadline is not None:
            seconds = min(seconds, left(deadline))
        if self.proxy is None:
            sock = socket.create_connection((self.host, self.port), timeout=seconds)
        else:
            sock = self.proxy.tunnel(self.host, self.port, seconds)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # a request is one send: never held back
        if self.context is not None:
            try:
                if deadline is not None:
                    sock.settimeout(left(deadline))  # the whole handshake's bound (Python 3.5+)
                sock = self.context.wrap_socket(sock, server_hostname=self.server_name)
            except ssl.SSLCertVerificationError as error:
                sock.close()
                self.trust.refused(error)
                raise
            except BaseException:
                sock.close()
                raise
            if deadline is not None:
                sock.settimeout(seconds)
            self.trust.verified()
        return sock


class Trust:
    """Whether the API server's certificate verified, said once per streak: the first handshake
    that finds it untrusted is one ERROR line naming the problem as TLS words it, whichever of the
    operator's threads met it (the watches, the Lease, the writes fail with it each try), and the
    first that verifies again after that says so."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._lock = threading.Lock()
        self._refused = False

    def refused(self, error: ssl.SSLCertVerificationError) -> None:
        with self._lock:
            said, self._refused = self._refused, True
        if not said:
            log.error("the API server's certificate is not trusted: %s (%s); nothing reaches the API server "
                      "until it is: check the cluster's CA (the kubeconfig's certificate-authority, in a Pod the "
                      "service account's ca.crt) and the server's certificate", certificate_problem(error), self.url)

    def verified(self) -> None:
        with self._lock:
            said, self._refused = self._refused, False
        if said:
            log.info("the API server's certificate is trusted again (%s)", self.url)


def certificate_problem(error: ssl.SSLCertVerificationError) -> str:
    """What TLS found wrong with a certificate, without the OpenSSL source location."""
    detail = getattr(error, "verify_message", None)
    return f"certificate verify failed: {detail}" if detail else _reason(error)


def pipelined(requests: list[tuple[str, str, bytes | None, dict[str, str]]],
              start: int) -> list[tuple[str, str, bytes | None, dict[str, str]]]:
    """The requests from ``start`` to write at once: at most PIPELINE of them and PIPELINE_BYTES
    of their bodies and heads, and always at least one."""
    size, end = 0, start
    while end < len(requests) and end - start < PIPELINE:
        body = requests[end][2]
        size += HEAD_BYTES + (0 if body is None else len(body))
        if size > PIPELINE_BYTES and end > start:
            break
        end += 1
    return requests[start:end]


def tls_context(configuration: Any) -> ssl.SSLContext:
    """TLS as the kubernetes client's urllib3 pool does it: the cluster's CA (else the system's),
    the client certificate if any, and no checks where ``verify_ssl`` or ``assert_hostname`` is off."""
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif configuration.assert_hostname is False:
        context.check_hostname = False
    return context


class Rest:
    def __init__(self, api_client: client.ApiClient, monotonic: Callable[[], float] = time.monotonic,
                 skew: SkewSampler | None = None, requests: RequestObserver | None = None) -> None:
        """``monotonic`` tells when the credentials' headers are built again (injected by tests);
        ``skew`` is told the API server's Date now and then (clock.SkewEstimate); ``requests``
        each request's end (``request_kinds``: the operator's metrics.ApiRequests)."""
        self.configuration = api_client.configuration
        self._monotonic = monotonic
        self.requests = requests
        self.direct = Connections.for_configuration(self.configuration, skew)
        self.base_path = urllib3.util.parse_url(self.configuration.host).path or ""
        self.user_agent = api_client.user_agent
        self._credentials: tuple[float, dict[str, str]] = (0.0, {})  # (monotonic time until, headers)

    # -- Jobs -------------------------------------------------------------------------

    def list_namespaced_job(self, namespace: str, label_selector: str) -> dict[str, Any]:
        """The JobList: its ``items``, and the ``metadata.resourceVersion`` to watch from."""
        return self.request("GET", _jobs(namespace), query={"labelSelector": label_selector})

    def list_job_for_all_namespaces(self, label_selector: str) -> dict[str, Any]:
        return self.request("GET", "/apis/batch/v1/jobs", query={"labelSelector": label_selector})

    def watch_namespaced_job(self, namespace: str, label_selector: str, resource_version: str | None,
                             timeout_seconds: int) -> Stream:
        """The open stream of watch events, one JSON document a line (``jobwatch`` reads it)."""
        return self.stream(_jobs(namespace), _watch_query(label_selector, resource_version, timeout_seconds),
                           timeout_seconds)

    def watch_job_for_all_namespaces(self, label_selector: str, resource_version: str | None,
                                     timeout_seconds: int) -> Stream:
        return self.stream("/apis/batch/v1/jobs", _watch_query(label_selector, resource_version, timeout_seconds),
                           timeout_seconds)

    def read_namespaced_job(self, namespace: str, name: str) -> dict[str, Any]:
        return self.request("GET", _jobs(namespace, name))

    def create_namespaced_job(self, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.call(Calls.create_namespaced_job(namespace, body))

    def patch_namespaced_job(self, namespace: str, name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        return self.call(Calls.patch_namespaced_job(namespace, name, patch))

    def delete_namespaced_job(self, namespace: str, name: str, propagation_policy: str) -> None:
        self.call(Calls.delete_namespaced_job(namespace, name, propagation_policy))

    # -- CronSchedules and Events -----------------------------------------------------------

    def get_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                     name: str) -> dict[str, Any]:
        return self.request("GET", _custom(group, version, namespace, plural, name))

    def list_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                      label_selector: str) -> dict[str, Any]:
        return self.request("GET", _custom(group, version, namespace, plural), query={"labelSelector": label_selector})

    def list_custom_object_for_all_namespaces(self, group: str, version: str, plural: str,
                                              label_selector: str) -> dict[str, Any]:
        return self.request("GET", f"/apis/{group}/{version}/{plural}", query={"labelSelector": label_selector})

    def watch_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                       label_selector: str, resource_version: str | None,
                                       timeout_seconds: int) -> Stream:
        return self.stream(_custom(group, version, namespace, plural),
                           _watch_query(label_selector, resource_version, timeout_seconds), timeout_seconds)

    def watch_custom_object_for_all_namespaces(self, group: str, version: str, plural: str, label_selector: str,
                                               resource_version: str | None,
                                               timeout_seconds: int) -> Stream:
        return self.stream(f"/apis/{group}/{version}/{plural}",
                           _watch_query(label_selector, resource_version, timeout_seconds), timeout_seconds)

    def patch_namespaced_custom_object_status(self, group: str, version: str, namespace: str, plural: str,
                                              name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        return self.call(Calls.patch_namespaced_custom_object_status(group, version, namespace, plural, name, patch))

    # -- CronPools ------------------------------------------------------------------------

    def get_namespaced_cron_pool(self, namespace: str, name: str) -> dict[str, Any]:
        return self.request("GET", _custom(GROUP, VERSION, namespace, POOL_PLURAL, name))

    def list_namespaced_cron_pool(self, namespace: str) -> dict[str, Any]:
        return self.request("GET", _custom(GROUP, VERSION, namespace, POOL_PLURAL))

    def list_cron_pool_for_all_namespaces(self) -> dict[str, Any]:
        return self.request("GET", f"/apis/{GROUP}/{VERSION}/{POOL_PLURAL}")

    def watch_namespaced_cron_pool(self, namespace: str, resource_version: str | None,
                                   timeout_seconds: int) -> Stream:
        return self.stream(_custom(GROUP, VERSION, namespace, POOL_PLURAL),
                           _watch_query("", resource_version, timeout_seconds), timeout_seconds)

    def watch_cron_pool_for_all_namespaces(self, resource_version: str | None, timeout_seconds: int) -> Stream:
        return self.stream(f"/apis/{GROUP}/{VERSION}/{POOL_PLURAL}",
                           _watch_query("", resource_version, timeout_seconds), timeout_seconds)

    def patch_namespaced_cron_pool_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        return self.call(Calls.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, POOL_PLURAL, name,
                                                                     patch))

    # -- Leases (leader election) -----------------------------------------------------------

    # A Lease's request takes at most ``seconds`` in all, a new connection's set-up included.

    def read_namespaced_lease(self, namespace: str, name: str, seconds: float = SECONDS) -> dict[str, Any]:
        return self.request("GET", _leases(namespace, name), deadline=time.monotonic() + seconds)

    def create_namespaced_lease(self, namespace: str, body: Mapping[str, Any],
                                seconds: float = SECONDS) -> dict[str, Any]:
        return self.request("POST", _leases(namespace), body, deadline=time.monotonic() + seconds)

    def replace_namespaced_lease(self, namespace: str, name: str, body: Mapping[str, Any],
                                 seconds: float = SECONDS) -> dict[str, Any]:
        return self.request("PUT", _leases(namespace, name), body, deadline=time.monotonic() + seconds)

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                query: Mapping[str, str] | None = None, seconds: float | None = None,
                deadline: float | None = None) -> dict[str, Any]:
        """The answer as a dict; a refusal raised as the client's ``ApiException``. A read waits
        SECONDS for each part of its answer, a write WRITE_SECONDS, unless ``seconds`` says; with
        a ``deadline`` (monotonic), the whole request ends by then."""
        if seconds is None:
            seconds = SECONDS if method == "GET" else WRITE_SECONDS
        return self.call(Call(method, path + ("?" + urlencode(query) if query else ""), body, content_type), seconds,
                         deadline)

    def call(self, call: Call, seconds: float = WRITE_SECONDS, deadline: float | None = None) -> dict[str, Any]:
        [answer] = self.send([call], seconds, deadline)
        if isinstance(answer, ApiException):
            raise answer
        return answer

    def send(self, calls: list[Call], seconds: float = WRITE_SECONDS,
             deadline: float | None = None) -> list[dict[str, Any] | ApiException]:
        """Requests pipelined on this thread's connection (``Connections.send``): for each, in
        order, its answer or the API's refusal. A connection's failure raises; a connect and each
        read wait at most ``seconds``, and all of it ends by a ``deadline`` (monotonic)."""
        headers = self._headers()
        requests = []
        for call in calls:
            data = call.data
            requests.append((call.method, call.target, data,
                             headers if data is None else {**headers, "Content-Type": call.content_type}))
        base = self.base_path.rstrip("/")
        started = 0.0 if self.requests is None else time.monotonic()
        try:
            answers = self.direct.send([(method, base + target, data, headers)
                                        for method, target, data, headers in requests], seconds, deadline)
        except Exception:
            if self.requests is not None:
                failed = time.monotonic()
                for call in calls:  # none was answered, as far as the caller can tell: each goes again
                    self._observed(call.target, call.method, ERROR_CODE, started, failed)
            raise
        if self.requests is not None:
            for call, answer in zip(calls, answers):
                self._observed(call.target, call.method, str(answer[0]), started, answer.received)
        return [(orjson.loads(answer[2]) if call.answer and answer[2] else {}) if 200 <= answer[0] < 300
                else _api_exception(*answer[:4]) for call, answer in zip(calls, answers)]

    def _observed(self, target: str, method: str, code: str, started: float, ended: float) -> None:
        """A request's end told to ``requests``: its kind (``kind_of``), code and seconds."""
        assert self.requests is not None
        verb, resource = kind_of(method, target)
        self.requests.observe(verb, resource, code, ended - started)

    def stream(self, path: str, query: Mapping[str, str], seconds: int) -> Stream:
        """A GET whose answer is read as it comes (a watch), on a connection of its own: the server
        ends it after ``seconds``, and a read waits a little longer than that before calling the
        connection dead."""
        target = path + "?" + urlencode(query)
        started = time.monotonic()
        try:
            stream = Stream.open(self.direct.open(seconds + 30.0),
                                 _request("GET", self.base_path.rstrip("/") + target, self.direct.host_header,
                                          self._headers(), None))
        except Exception:
            if self.requests is not None:
                self._observed(target, "GET", ERROR_CODE, started, time.monotonic())
            raise
        if self.requests is not None:  # a watch's time is its answer's head's: the stream then lasts minutes
            self._observed(target, "GET", str(stream.status), started, time.monotonic())
        if not 200 <= stream.status < 300:
            try:
                data = stream.read()
            finally:
                stream.release_conn()
            raise _api_exception(stream.status, stream.reason, data, stream.retry_after)
        return stream

    def _headers(self) -> dict[str, str]:
        until, credentials = self._credentials
        if self._monotonic() >= until:
            credentials = {setting["key"]: setting["value"] for setting in self.configuration.auth_settings().values()}
            self._credentials = (self._monotonic() + CREDENTIALS_SECONDS, credentials)
        return {"Accept": "application/json", "User-Agent": self.user_agent, **credentials}


def _api_exception(status: int, reason: str, answered: bytes, retry_after: str | None = None) -> ApiException:
    """The refusal as the kubernetes client raises it; its Retry-After in its headers, as there."""
    error = ApiException(status=status, reason=reason, body=answered.decode("utf-8", "replace"))
    if retry_after is not None:
        error.headers = {"Retry-After": retry_after}
    return error


def _watch_query(label_selector: str, resource_version: str | None, timeout_seconds: int) -> dict[str, str]:
    query = {"labelSelector": label_selector, "watch": "true", "allowWatchBookmarks": "true",
             "timeoutSeconds": str(timeout_seconds)}
    if resource_version is not None:
        query["resourceVersion"] = resource_version
    return query


def _jobs(namespace: str, name: str | None = None) -> str:
    return f"/apis/batch/v1/namespaces/{quote(namespace)}/jobs" + ("" if name is None else f"/{quote(name)}")


def _events(namespace: str) -> str:
    return f"/api/v1/namespaces/{quote(namespace)}/events"


def _leases(namespace: str, name: str | None = None) -> str:
    return f"/apis/coordination.k8s.io/v1/namespaces/{quote(namespace)}/leases" + ("" if name is None else f"/{quote(name)}")


def _custom(group: str, version: str, namespace: str, plural: str, name: str | None = None) -> str:
    return f"/apis/{group}/{version}/namespaces/{quote(namespace)}/{plural}" + ("" if name is None else f"/{quote(name)}")
