"""What a request to the API server is, as its metrics name it, and who is told of each one.

``kind_of(method, target)`` turns a request's method and path into the verb
and resource the API server's RBAC and audit name it by (``get``, ``list``,
``watch``, ``create``, ``update``, ``patch``, ``delete``; ``jobs``,
``cronschedules/status``, ``leases``...), as ``cronctl_refusals_total``
does: a GET alone cannot tell a read from a list from a watch. Namespaces
and names are left out, so that the number of series stays bounded by the
operator's own code paths, whatever the fleet's size.

``Rest`` tells a ``RequestObserver`` (the operator's ``metrics.ApiRequests``,
named by its shape so that this layer never imports the metrics) each
request's end: its verb, resource, the answer's status code, or ``ERROR_CODE``
when no answer came (a connection refused, reset or timed out), as client-go
counts them in ``rest_client_requests_total``, and its seconds.
"""

from __future__ import annotations

from typing import Protocol

ERROR_CODE = "<error>"  # no answer: client-go's code for a request that met a connection's error

_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


class RequestObserver(Protocol):
    """What is told of each request's end (``metrics.ApiRequests``)."""

    def observe(self, verb: str, resource: str, code: str, seconds: float) -> None: ...


def kind_of(method: str, target: str) -> tuple[str, str]:
    """(verb, resource) of a request to ``target`` (below the API's base path), as RBAC names them:
    a GET of a collection is a ``list``, with ``watch=true`` a ``watch``; a subresource is named
    after its resource (``cronschedules/status``). A path outside ``/api`` and ``/apis`` has
    resource ``""``."""
    path, _, query = target.partition("?")
    parts = path.split("/")  # "", "apis", group, version, "namespaces", namespace, resource, name, subresource
    if len(parts) < 3 or parts[1] not in ("api", "apis"):
        return _VERBS.get(method, method.lower()), ""
    start = 3 if parts[1] == "api" else 4
    if len(parts) > start + 2 and parts[start] == "namespaces":
        start += 2  # a namespaced resource: past the namespace's name
    resource = parts[start] if len(parts) > start else ""
    named = len(parts) > start + 1
    if len(parts) > start + 2:
        resource = f"{resource}/{parts[start + 2]}"
    if method == "GET":
        return ("get" if named else "watch" if "watch=true" in query else "list"), resource
    if method == "DELETE" and not named:
        return "deletecollection", resource
    return _VERBS.get(method, method.lower()), resource
