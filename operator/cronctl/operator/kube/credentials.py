"""The operator's credentials: in-cluster in a Pod, else the kubeconfig, as the client loads them."""

from __future__ import annotations

from kubernetes import client, config

from ...about import package_version

# The operator's name to the API server: managedFields name their manager by the User-Agent up to
# its first "/" ("cronctl", not the generated client's "OpenAPI-Generator"), and audit logs and
# apiserver_request_total's client breakdowns say who sent a request by it.
USER_AGENT = f"cronctl/{package_version().split()[0]} (operator)"


def load_configuration() -> client.Configuration:
    """The client's configuration: in-cluster when running in a Pod, else the kubeconfig."""
    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    return client.Configuration.get_default_copy()


def load_client(connections: int | None = None) -> client.ApiClient:
    """In-cluster credentials when running in a Pod, else the kubeconfig (KUBECONFIG).
    ``connections``: the HTTP connections kept open to the API server, at least one per thread
    that writes at once (the client's default, 5 per CPU, makes the threads past it open a new
    TLS connection for each request and drop it after, at the cost of a handshake each time)."""
    configuration = load_configuration()
    if connections is not None:
        configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize, connections)
    api = client.ApiClient(configuration)
    api.user_agent = USER_AGENT
    return api
