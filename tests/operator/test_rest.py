"""The operator's HTTP side: one kept connection per writing thread, and its requests' form."""

from __future__ import annotations

from pathlib import Path

import pytest

from cronctl.operator.apply import load_client
from cronctl.operator.handlers import CONNECTIONS
from cronctl.operator.loop import CONCURRENCY
from cronctl.operator.rest import Rest

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
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, bytes | None, dict[str, str]]] = []

    def request(self, method: str, url: str, body: bytes | None, headers: dict[str, str], **_: object):
        self.calls.append((method, url, body, headers))
        return type("Response", (), {"status": 200, "reason": "OK", "data": b'{"ok": true}'})()

    urlopen = request


def test_a_release_is_a_merge_patch_with_the_credentials_and_compact_json(kubeconfig: Path) -> None:
    rest = Rest(load_client())
    rest.host_pool = Recording()  # type: ignore[assignment]
    assert rest.patch_namespaced_job("team-a", "sync-1", {"spec": {"suspend": False}}) == {"ok": True}
    [(method, url, body, headers)] = rest.host_pool.calls  # type: ignore[attr-defined]
    assert (method, url) == ("PATCH", "/apis/batch/v1/namespaces/team-a/jobs/sync-1")
    assert body == b'{"spec":{"suspend":false}}'
    assert headers["Content-Type"] == "application/merge-patch+json"
    assert headers["authorization"] == "Bearer secret-token"


def test_an_error_answer_is_the_clients_api_exception_with_its_status(kubeconfig: Path) -> None:
    from kubernetes.client.exceptions import ApiException

    rest = Rest(load_client())

    class NotFound(Recording):
        def urlopen(self, *args: object, **kwargs: object):
            return type("Response", (), {"status": 404, "reason": "Not Found", "data": b"{}"})()

    rest.host_pool = NotFound()  # type: ignore[assignment]
    with pytest.raises(ApiException) as raised:
        rest.read_namespaced_job("team-a", "gone")
    assert raised.value.status == 404


def test_behind_a_proxy_requests_go_through_the_clients_pool_manager_with_the_whole_url(kubeconfig: Path) -> None:
    rest = Rest(load_client())
    rest.host_pool, rest.pool = None, Recording()  # type: ignore[assignment]
    rest.create_namespaced_event("team-a", {"kind": "Event"})
    [(method, url, _, _)] = rest.pool.calls  # type: ignore[attr-defined]
    assert (method, url) == ("POST", "https://127.0.0.1:1/api/v1/namespaces/team-a/events")
