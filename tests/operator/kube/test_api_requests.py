"""cronctl_api_requests_total and cronctl_api_request_duration_seconds: what the transport counts.

The kinds (``kind_of``) are table-tested on every path the operator's ``Rest``
builds; the counting is tested through ``Rest`` against a real HTTP server on
loopback (test_rest.py's, and a small one that answers GETs and watches), the
metrics read back from the registry's exposition as a scrape would.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
from typing import Iterator

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cronctl.api import GROUP, PLURAL, POOL_PLURAL, VERSION
from cronctl.operator.kube.request_kinds import ERROR_CODE, kind_of
from cronctl.operator.kube.rest import Call, Calls, Rest, Unreachable
from cronctl.operator.metrics import API_BUCKETS, Metrics

from .test_rest import Server, events, server  # noqa: F401 (the fixture)

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(metrics: Metrics) -> Samples:
    from prometheus_client.parser import text_string_to_metric_families

    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(metrics.exposition().decode()) for sample in family.samples}


def counted(found: Samples) -> dict[tuple[str, str, str], float]:
    """cronctl_api_requests_total by (verb, resource, code)."""
    return {(labels["verb"], labels["resource"], labels["code"]): value for (name, pairs), value in found.items()
            if name == "cronctl_api_requests_total" for labels in [dict(pairs)]}


def timed(found: Samples) -> dict[tuple[str, str], float]:
    """cronctl_api_request_duration_seconds' observations by (verb, resource)."""
    return {(labels["verb"], labels["resource"]): value for (name, pairs), value in found.items()
            if name == "cronctl_api_request_duration_seconds_count" for labels in [dict(pairs)]}


# -- the kinds, from what the operator's Rest sends ------------------------------------------------------


class Recording:
    """Stands for the kept connections: what the Rest would send, answered nothing."""

    def __init__(self) -> None:
        self.targets: list[tuple[str, str]] = []

    def send(self, requests: list, seconds: float = 0.0, deadline: float | None = None) -> list:
        self.targets.extend((method, target) for method, target, _, _ in requests)
        return [(200, "OK", b"{}") for _ in requests]


def sent(call: object) -> tuple[str, str]:
    """(method, target) of what ``call(rest)`` sends."""
    rest = Rest(client.ApiClient(client.Configuration(host="http://127.0.0.1:1")))
    rest.direct = Recording()  # type: ignore[assignment]
    call(rest)  # type: ignore[operator]
    [target] = rest.direct.targets  # type: ignore[attr-defined]
    return target


KINDS = [
    # (what the operator does, the call, (verb, resource))
    ("creates a Job", lambda r: r.create_namespaced_job("team-a", {}), ("create", "jobs")),
    ("reads a Job", lambda r: r.read_namespaced_job("team-a", "sync-1"), ("get", "jobs")),
    ("patches a Job (a release)", lambda r: r.patch_namespaced_job("team-a", "sync-1", {}), ("patch", "jobs")),
    ("deletes a Job", lambda r: r.delete_namespaced_job("team-a", "sync-1", "Background"), ("delete", "jobs")),
    ("lists a namespace's Jobs", lambda r: r.list_namespaced_job("team-a", "a=b"), ("list", "jobs")),
    ("lists every namespace's Jobs", lambda r: r.list_job_for_all_namespaces("a=b"), ("list", "jobs")),
    ("reads a CronSchedule", lambda r: r.get_namespaced_custom_object(GROUP, VERSION, "team-a", PLURAL, "sync"),
     ("get", "cronschedules")),
    ("lists CronSchedules", lambda r: r.list_custom_object_for_all_namespaces(GROUP, VERSION, PLURAL, ""),
     ("list", "cronschedules")),
    ("patches a CronSchedule's status",
     lambda r: r.patch_namespaced_custom_object_status(GROUP, VERSION, "team-a", PLURAL, "sync", {}),
     ("patch", "cronschedules/status")),
    ("reads a CronPool", lambda r: r.get_namespaced_cron_pool("team-a", "reports"), ("get", POOL_PLURAL)),
    ("lists CronPools", lambda r: r.list_namespaced_cron_pool("team-a"), ("list", POOL_PLURAL)),
    ("patches a CronPool's status", lambda r: r.patch_namespaced_cron_pool_status("team-a", "reports", {}),
     ("patch", f"{POOL_PLURAL}/status")),
    ("posts an Event", lambda r: r.send([Calls.create_namespaced_event("team-a", {})]), ("create", "events")),
    ("patches an Event (a series)", lambda r: r.send([Calls.patch_namespaced_event("team-a", "sync.1", {})]),
     ("patch", "events")),
    ("reads its Lease", lambda r: r.read_namespaced_lease("cronctl-system", "cronctl"), ("get", "leases")),
    ("creates its Lease", lambda r: r.create_namespaced_lease("cronctl-system", {}), ("create", "leases")),
    ("renews its Lease", lambda r: r.replace_namespaced_lease("cronctl-system", "cronctl", {}),
     ("update", "leases")),
]


@pytest.mark.parametrize("call, kind", [(call, kind) for _, call, kind in KINDS], ids=[row[0] for row in KINDS])
def test_each_request_the_operator_makes_has_the_verb_and_resource_rbac_names(call: object,
                                                                               kind: tuple[str, str]) -> None:
    assert kind_of(*sent(call)) == kind


@pytest.mark.parametrize("method, target, kind", [
    ("GET", "/apis/batch/v1/namespaces/team-a/jobs?labelSelector=a&watch=true&resourceVersion=7", ("watch", "jobs")),
    ("GET", "/apis/cronctl.dev/v1/cronschedules?watch=true", ("watch", "cronschedules")),
    ("GET", "/api/v1/namespaces/team-a", ("get", "namespaces")),
    ("GET", "/api/v1/namespaces", ("list", "namespaces")),
    ("DELETE", "/apis/batch/v1/namespaces/team-a/jobs?labelSelector=a", ("deletecollection", "jobs")),
    ("GET", "/version", ("get", "")),
    ("GET", "/", ("get", "")),
])
def test_watches_cluster_objects_and_paths_outside_the_api(method: str, target: str, kind: tuple[str, str]) -> None:
    assert kind_of(method, target) == kind


def test_no_namespace_or_name_reaches_a_label() -> None:
    """The series are bounded by the operator's code paths, not by the fleet."""
    kinds = {kind_of(*sent(call)) for _, call, _ in KINDS}
    assert not {part for kind in kinds for part in kind} & {"team-a", "sync-1", "sync", "reports", "cronctl",
                                                           "cronctl-system", "sync.1"}


# -- counted through the transport, against a real server ------------------------------------------------


def _rest(port: int, metrics: Metrics) -> Rest:
    return Rest(client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{port}")),
                requests=metrics.api_requests)


def test_every_pipelined_write_counts_with_its_own_code(server: Server) -> None:  # noqa: F811
    metrics = Metrics()
    answers = _rest(server.server_address[1], metrics).send(events("Launched", "Refuse", "Shed", "Skipped"))
    assert [getattr(answer, "status", 201) for answer in answers] == [201, 403, 429, 201]
    found = samples(metrics)
    assert counted(found) == {("create", "events", "201"): 2, ("create", "events", "403"): 1,
                              ("create", "events", "429"): 1}
    assert timed(found) == {("create", "events"): 4}


def test_a_pipelined_requests_time_is_to_its_own_answer() -> None:
    """Answers read in order: each request's seconds end at its own answer, not at the batch's last."""
    told: list[float] = []

    class Told:
        def observe(self, verb: str, resource: str, code: str, seconds: float) -> None:
            told.append(seconds)

    with Slow() as port:  # answers each request 20 ms after the one before
        rest = Rest(client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{port}")), requests=Told())
        rest.send([Call("GET", f"/apis/batch/v1/namespaces/team-a/jobs/sync-{n}") for n in range(3)])
    assert told == sorted(told) and told[2] - told[0] >= 0.03, told


def test_a_connection_refused_counts_each_request_as_error() -> None:
    metrics = Metrics()
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))  # bound, not listening: a connect is refused
        rest = _rest(held.getsockname()[1], metrics)
        with pytest.raises(Unreachable):
            rest.send([Calls.patch_namespaced_job("team-a", f"sync-{n}", {}) for n in range(2)])
        with pytest.raises(ConnectionRefusedError):  # a watch's own connection (the watch says it)
            rest.watch_namespaced_job("team-a", "a=b", None, 60)
    found = samples(metrics)
    assert counted(found) == {("patch", "jobs", ERROR_CODE): 2, ("watch", "jobs", ERROR_CODE): 1}
    assert timed(found) == {("patch", "jobs"): 2, ("watch", "jobs"): 1}


def test_a_read_a_missing_object_and_a_watch_count_by_verb() -> None:
    metrics = Metrics()
    with Slow(pause=0.0) as port:
        rest = _rest(port, metrics)
        rest.read_namespaced_job("team-a", "sync-1")
        with pytest.raises(ApiException):
            rest.read_namespaced_job("team-a", "missing")
        rest.list_namespaced_job("team-a", "a=b")
        stream = rest.watch_namespaced_job("team-a", "a=b", None, 60)
        assert list(stream) == [b'{"type":"BOOKMARK"}']
        stream.release_conn()
    found = samples(metrics)
    assert counted(found) == {("get", "jobs", "200"): 1, ("get", "jobs", "404"): 1, ("list", "jobs", "200"): 1,
                              ("watch", "jobs", "200"): 1}
    assert timed(found) == {("get", "jobs"): 2, ("list", "jobs"): 1, ("watch", "jobs"): 1}


def test_without_an_observer_nothing_is_timed_or_counted(server: Server) -> None:  # noqa: F811
    metrics = Metrics()
    Rest(client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{server.server_address[1]}"))).send(
        events("Launched"))
    assert counted(samples(metrics)) == {}


def test_the_buckets_tell_a_healthy_api_server_from_a_slow_one() -> None:
    """A healthy answer (1-25 ms) falls in buckets of its own, below a slow one (100 ms-1 s), and a
    write's 10-second timeout has its own bucket, below a read's 60."""
    assert API_BUCKETS == tuple(sorted(API_BUCKETS))
    healthy = [bound for bound in API_BUCKETS if bound <= 0.025]
    slow = [bound for bound in API_BUCKETS if 0.1 <= bound <= 1.0]
    assert len(healthy) >= 4 and len(slow) >= 3 and {10.0, 60.0} <= set(API_BUCKETS)
    metrics = Metrics()
    metrics.api_requests.observe("patch", "jobs", "200", 0.003)
    metrics.api_requests.observe("patch", "jobs", "200", 0.4)
    found = samples(metrics)

    def below(bound: str) -> float:
        return found[("cronctl_api_request_duration_seconds_bucket",
                      (("le", bound), ("resource", "jobs"), ("verb", "patch")))]
    assert (below("0.0025"), below("0.005"), below("0.25"), below("0.5")) == (0, 1, 1, 2)


# -- a server that answers GETs one at a time, slowly ---------------------------------------------------


class Slow(http.server.ThreadingHTTPServer):
    """Answers a GET of ``.../missing`` with 404, a watch with one bookmark, any other GET with an
    empty object, each ``pause`` seconds after the request came."""

    daemon_threads = True

    def __init__(self, pause: float = 0.02) -> None:
        super().__init__(("127.0.0.1", 0), _SlowHandler)
        self.pause = pause

    def __enter__(self) -> int:  # type: ignore[override]
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self.server_address[1]

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _SlowHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Slow

    def do_GET(self) -> None:
        threading.Event().wait(self.server.pause)
        if "watch=true" in self.path:
            body = b'{"type":"BOOKMARK"}\n'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        status = 404 if self.path.endswith("/missing") else 200
        body = json.dumps({"kind": "Status", "code": 404} if status == 404 else {"items": []}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass
