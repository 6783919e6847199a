"""What the operator takes from the kubernetes client besides its public calls, checked against
the version installed: a client upgrade that moves any of it fails here, not in a cluster.

``rest`` builds its own requests from the client's ``Configuration`` (the server, TLS files and
switches, proxy settings, the credentials' refresh hook ``auth_settings``); ``proxy`` decides
whether the API server's host bypasses the proxy by the client's own rule
(``should_bypass_proxies``); ``apply`` sizes the client's urllib3 pool
(``connection_pool_maxsize``), which the client's own calls use."""

from __future__ import annotations

import urllib3
from kubernetes import client
from kubernetes.client.rest import should_bypass_proxies

CONFIGURATION_FIELDS = ("host", "proxy", "no_proxy", "proxy_headers", "tls_server_name", "assert_hostname",
                        "ssl_ca_cert", "cert_file", "key_file", "verify_ssl", "connection_pool_maxsize")


def test_the_configuration_has_every_field_the_operator_reads() -> None:
    configuration = client.Configuration()
    for name in CONFIGURATION_FIELDS:
        assert hasattr(configuration, name), name
    assert configuration.verify_ssl is True and configuration.proxy is None


def test_auth_settings_gives_the_credentials_as_header_key_and_value() -> None:
    configuration = client.Configuration()
    configuration.api_key = {"authorization": "secret-token"}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    settings = configuration.auth_settings()
    assert {(s["in"], s["key"], s["value"]) for s in settings.values()} == {
        ("header", "authorization", "Bearer secret-token")}


def test_the_api_client_has_a_urllib3_pool_and_a_user_agent() -> None:
    api = client.ApiClient(client.Configuration())
    assert isinstance(api.rest_client.pool_manager, urllib3.PoolManager)
    assert isinstance(api.user_agent, str) and api.user_agent


def test_the_pool_is_made_with_the_configurations_size() -> None:
    configuration = client.Configuration()
    configuration.connection_pool_maxsize = 40
    api = client.ApiClient(configuration)
    assert api.rest_client.pool_manager.connection_pool_kw["maxsize"] == 40


def test_the_client_says_which_hosts_bypass_the_proxy() -> None:
    assert should_bypass_proxies("https://10.0.0.1:6443", "10.0.0.0/8,.cluster.local") is True
    assert should_bypass_proxies("https://api.example.com", "10.0.0.0/8") is False
