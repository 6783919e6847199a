"""The plugin's API calls, with every failure said in one line.

``connect`` reads the kubeconfig as kubectl does (``--kubeconfig``, else
``$KUBECONFIG``, else ``~/.kube/config``; ``--context``, else the current
one) and picks the namespace (``-n``, else the context's, else ``default``).
Each call of ``NamespaceClient`` turns what can go wrong into a ``PluginError`` whose
message names what was asked: the schedule and namespace of a NotFound (and
whether the namespace exists at all), the verb and resource of a Forbidden,
the address of an API server that does not answer. Requests have a timeout
and one retry, so an unreachable cluster is said within seconds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypeVar

from ..about import package_version
from ..manifest import GROUP, KIND, PLURAL, VERSION

# The plugin's writes (a trigger, a pause, an import) are named "kubectl-cronctl" in managedFields
# and audit logs, as kubectl's own are "kubectl-...": the manager is the User-Agent up to its "/".
USER_AGENT = f"kubectl-cronctl/{package_version().split()[0]}"

RESOURCE = f"{PLURAL}.{GROUP}"
CONNECT_SECONDS, READ_SECONDS = 10, 30
EVENT_LIMIT = 20  # the most recent Events describe shows

T = TypeVar("T")


class PluginError(Exception):
    """A problem said in one line; ``exit_code`` 1 for what the cluster answered, 2 for usage."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


@dataclass(frozen=True)
class Target:
    kubeconfig: str | None
    context: str | None
    namespace: str | None


def connect(target: Target) -> NamespaceClient:
    import yaml
    from kubernetes import client, config
    from kubernetes.config import ConfigException

    where = target.kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    configuration = client.Configuration()
    try:
        listed = config.list_kube_config_contexts  # untyped: the calls below say so
        contexts, current = listed(config_file=target.kubeconfig)  # type: ignore[no-untyped-call]
        chosen = current
        if target.context is not None:
            chosen = next((c for c in contexts or [] if c.get("name") == target.context), None)
            if chosen is None:
                raise PluginError(f"context {target.context!r} is not in the kubeconfig ({where})")
        config.load_kube_config(config_file=target.kubeconfig, context=target.context,  # type: ignore[no-untyped-call]
                                client_configuration=configuration)
    except (ConfigException, OSError, ValueError, yaml.YAMLError) as error:
        reason = " ".join(str(error).split())  # one line: the client's messages may span several
        raise PluginError(f"no usable kubeconfig ({where}): {reason}") from None
    configuration.retries = 1  # urllib3 would try 4 times: an unreachable cluster is said in seconds
    namespace = target.namespace or (chosen or {}).get("context", {}).get("namespace") or "default"
    api = client.ApiClient(configuration)
    api.user_agent = USER_AGENT
    return NamespaceClient(api, namespace, configuration.host)


class NamespaceClient:
    """The plugin's client of one namespace: its CronSchedules and their Events (and, for the
    import, its CronJobs and Jobs), every failure said in one line. (The operator's own facade
    is ``operator.kube.facade``.)"""

    def __init__(self, api: Any, namespace: str, host: str) -> None:
        from kubernetes import client

        self.api, self.namespace, self.host = api, namespace, host
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)

    def get(self, name: str) -> dict[str, Any]:
        return _object(self._call("get", RESOURCE, name, lambda: self.custom.get_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, name, _request_timeout=(CONNECT_SECONDS, READ_SECONDS))))

    def patch(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """A JSON merge patch (``null`` removes a field)."""
        return _object(self._call("patch", RESOURCE, name, lambda: self.custom.patch_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, name, body, _content_type="application/merge-patch+json",
            _request_timeout=(CONNECT_SECONDS, READ_SECONDS))))

    def events(self, name: str) -> list[dict[str, Any]]:
        """The schedule's Events, oldest first, at most the last ``EVENT_LIMIT``."""
        listed = self._call("list", "events", None, lambda: self.core.list_namespaced_event(
            self.namespace, field_selector=f"involvedObject.name={name},involvedObject.kind={KIND}",
            _request_timeout=(CONNECT_SECONDS, READ_SECONDS)))
        items = self.api.sanitize_for_serialization(listed).get("items") or []
        return sorted(items, key=event_time)[-EVENT_LIMIT:]

    def jobs(self, name: str) -> list[dict[str, Any]]:
        """The Jobs of schedule ``name`` (its label): in fleet mode they record its launches."""
        from kubernetes import client

        from ..api import SCHEDULE_LABEL

        listed = self._call("list", "jobs.batch", None, lambda: client.BatchV1Api(self.api).list_namespaced_job(
            self.namespace, label_selector=f"{SCHEDULE_LABEL}={name}", _request_timeout=(CONNECT_SECONDS, READ_SECONDS)))
        return list(self.api.sanitize_for_serialization(listed).get("items") or [])

    def _call(self, verb: str, resource: str, name: str | None, request: Callable[[], T]) -> T:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            return request()
        except ApiException as error:
            raise PluginError(self._refusal(error, verb, resource, name)) from None
        except (HTTPError, OSError) as error:
            cause = getattr(error, "reason", None) or error
            raise PluginError(f"no cluster reachable at {self.host}: {_one_line(cause)}") from None

    def _refusal(self, error: Any, verb: str, resource: str, name: str | None) -> str:
        message = _status_message(error)
        if error.status == 404 and name is not None:
            details = _status_details(error)
            if details.get("kind") != PLURAL:  # the resource itself is unknown, not the object
                return (f"the API server at {self.host} serves no {RESOURCE}/{VERSION}: is the CronSchedule "
                        "CRD installed (kubectl apply -f crds/cronschedule.yaml)?")
            return f"cronschedule {name!r} not found in namespace {self.namespace!r}{self._namespace_note()}"
        if error.status == 403:
            return (f"forbidden: may not {verb} {resource} in namespace {self.namespace!r}"
                    + (f" ({message})" if message else ""))
        if error.status == 401:
            return f"unauthorized: the API server at {self.host} refused the kubeconfig's credentials"
        if error.status == 422:
            what = "cronschedule" if resource == RESOURCE else resource
            return f"the API server refused the change to {what} {name!r}: {message}"
        return f"{verb} {resource}{f' {name!r}' if name else ''}: {error.status} {error.reason}: {message}"

    def _namespace_note(self) -> str:
        """Whether the namespace itself is missing, when the caller may ask."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            self.core.read_namespace(self.namespace, _request_timeout=(CONNECT_SECONDS, READ_SECONDS))
        except ApiException as error:  # 403 is common (few may read namespaces): then the NotFound says it all
            return " (no such namespace)" if error.status == 404 else ""
        except (HTTPError, OSError):
            return ""
        return ""


def event_time(event: Mapping[str, Any]) -> str:
    """When an Event was last seen (lastTimestamp, else eventTime, else its creation), in UTC as kubectl
    prints it: the client's models give ``+00:00`` where the API server said ``Z``."""
    seen = str(event.get("lastTimestamp") or event.get("eventTime")
               or (event.get("metadata") or {}).get("creationTimestamp") or "")
    return seen[:-6] + "Z" if seen.endswith("+00:00") else seen


def _object(answer: object) -> dict[str, Any]:
    """A custom object as the API server answered it (a JSON object; anything else is a broken answer)."""
    if not isinstance(answer, dict):
        raise PluginError(f"the API server answered {type(answer).__name__}, not a CronSchedule object")
    return answer


def _status_body(error: Any) -> dict[str, Any]:
    import json

    try:
        body = json.loads(error.body or "")
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _status_message(error: Any) -> str:
    return _one_line(_status_body(error).get("message") or "")


def _status_details(error: Any) -> dict[str, Any]:
    details = _status_body(error).get("details")
    return details if isinstance(details, dict) else {}


def _one_line(value: object) -> str:
    return " ".join(str(value).split())
