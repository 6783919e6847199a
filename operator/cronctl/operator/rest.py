"""JSON requests to the API server on the kubernetes client's own connections and credentials.

The generated client (kubernetes 37) validates every call's arguments with
pydantic, serializes models, and parses headers it does not need: profiled
over a herd of 2,000 launches, that was most of the operator's CPU per
launch. The writes of a launch are small JSON documents the operator
already holds as dicts, so they go out here as bytes, through the same
urllib3 pool (TLS settings, client certificates, proxy; without a proxy the
API server's own connection pool, taken once) and with the same
credentials (``Configuration.auth_settings``, which refreshes an expiring
service-account token), and their answers come back as dicts.

Errors are the client's ``ApiException`` with the status and reason, so
callers tell NotFound from Conflict as they would with the client. The
calls are named as the client's are (``create_namespaced_job``...), which is
also how the chart's tests match each call to its RBAC grant.
"""

from __future__ import annotations

import json
from typing import Any, Mapping
from urllib.parse import quote, urlencode

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

MERGE_PATCH = "application/merge-patch+json"
TIMEOUT = urllib3.Timeout(connect=10.0, read=60.0)
# What urllib3 makes of retries=False on every call (Retry.from_int), made once: 2% of the
# operator's CPU over a herd of launches went into building it anew.
NO_RETRIES = urllib3.Retry(total=False, redirect=None)


class Rest:
    def __init__(self, api_client: client.ApiClient) -> None:
        self.configuration = api_client.configuration
        self.pool = api_client.rest_client.pool_manager
        # The API server's own pool, where no proxy stands between: a request goes straight to it,
        # past the PoolManager's URL parsing and pool lookup on every call.
        self.host_pool = None if isinstance(self.pool, urllib3.ProxyManager) else \
            self.pool.connection_from_url(self.configuration.host)
        self.base_path = urllib3.util.parse_url(self.configuration.host).path or ""
        self.user_agent = api_client.user_agent

    # -- Jobs -------------------------------------------------------------------------

    def list_namespaced_job(self, namespace: str, label_selector: str) -> dict[str, Any]:
        """The JobList: its ``items``, and the ``metadata.resourceVersion`` to watch from."""
        return self.request("GET", _jobs(namespace), query={"labelSelector": label_selector})

    def list_job_for_all_namespaces(self, label_selector: str) -> dict[str, Any]:
        return self.request("GET", "/apis/batch/v1/jobs", query={"labelSelector": label_selector})

    def watch_namespaced_job(self, namespace: str, label_selector: str, resource_version: str | None,
                             timeout_seconds: int) -> urllib3.BaseHTTPResponse:
        """The open stream of watch events, one JSON document a line (``jobwatch`` reads it)."""
        return self.stream(_jobs(namespace), _watch_query(label_selector, resource_version, timeout_seconds),
                           timeout_seconds)

    def watch_job_for_all_namespaces(self, label_selector: str, resource_version: str | None,
                                     timeout_seconds: int) -> urllib3.BaseHTTPResponse:
        return self.stream("/apis/batch/v1/jobs", _watch_query(label_selector, resource_version, timeout_seconds),
                           timeout_seconds)

    def read_namespaced_job(self, namespace: str, name: str) -> dict[str, Any]:
        return self.request("GET", _jobs(namespace, name))

    def create_namespaced_job(self, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.request("POST", _jobs(namespace), body)

    def patch_namespaced_job(self, namespace: str, name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        """A JSON merge patch (RFC 7386): a null removes a field, a label for one."""
        return self.request("PATCH", _jobs(namespace, name), patch, MERGE_PATCH)

    def delete_namespaced_job(self, namespace: str, name: str, propagation_policy: str) -> None:
        self.request("DELETE", _jobs(namespace, name),
                     {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation_policy})

    # -- CronSchedules and Events -----------------------------------------------------------

    def get_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                     name: str) -> dict[str, Any]:
        return self.request("GET", _custom(group, version, namespace, plural, name))

    def patch_namespaced_custom_object_status(self, group: str, version: str, namespace: str, plural: str,
                                              name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        return self.request("PATCH", _custom(group, version, namespace, plural, name) + "/status", patch,
                            MERGE_PATCH)

    def create_namespaced_event(self, namespace: str, body: Mapping[str, Any]) -> None:
        self.request("POST", f"/api/v1/namespaces/{quote(namespace)}/events", body, answer=False)

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                query: Mapping[str, str] | None = None, answer: bool = True) -> Any:
        """The answer as a dict (None when ``answer`` is False: nobody reads it)."""
        headers = self._headers()
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = content_type
        target = path + ("?" + urlencode(query) if query else "")
        if self.host_pool is not None:
            response = self.host_pool.urlopen(method, self.base_path.rstrip("/") + target, body=data, headers=headers,
                                              timeout=TIMEOUT, retries=NO_RETRIES, redirect=False,
                                              assert_same_host=False)
        else:
            response = self.pool.request(method, self.configuration.host + target, body=data, headers=headers,
                                         timeout=TIMEOUT, retries=NO_RETRIES)
        if not 200 <= response.status < 300:
            raise ApiException(status=response.status, reason=response.reason,
                               body=response.data.decode("utf-8", "replace"))
        return json.loads(response.data) if answer else None

    def stream(self, path: str, query: Mapping[str, str], seconds: int) -> urllib3.BaseHTTPResponse:
        """A GET whose answer is read as it comes (a watch): the server ends it after ``seconds``,
        and a read waits a little longer than that before calling the connection dead."""
        response = self.pool.request("GET", self.configuration.host + path + "?" + urlencode(query),
                                     headers=self._headers(), preload_content=False, retries=NO_RETRIES,
                                     timeout=urllib3.Timeout(connect=10.0, read=seconds + 30.0))
        if not 200 <= response.status < 300:
            data = response.read()
            response.release_conn()
            raise ApiException(status=response.status, reason=response.reason,
                               body=data.decode("utf-8", "replace"))
        return response

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": self.user_agent}
        for setting in self.configuration.auth_settings().values():
            headers[setting["key"]] = setting["value"]
        return headers


def _watch_query(label_selector: str, resource_version: str | None, timeout_seconds: int) -> dict[str, str]:
    query = {"labelSelector": label_selector, "watch": "true", "allowWatchBookmarks": "true",
             "timeoutSeconds": str(timeout_seconds)}
    if resource_version is not None:
        query["resourceVersion"] = resource_version
    return query


def _jobs(namespace: str, name: str | None = None) -> str:
    return f"/apis/batch/v1/namespaces/{quote(namespace)}/jobs" + ("" if name is None else f"/{quote(name)}")


def _custom(group: str, version: str, namespace: str, plural: str, name: str) -> str:
    return f"/apis/{group}/{version}/namespaces/{quote(namespace)}/{plural}/{quote(name)}"
