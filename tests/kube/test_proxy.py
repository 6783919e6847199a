"""The operator behind an HTTP proxy, with a TLS server name, on the real API server.

Its kubeconfig names a proxy (``proxy-url``) and the name the API server's
certificate is checked against (``tls-server-name: kubernetes.default``,
one of the certificate's names, not the address connected to): the
operator's own connections go through the proxy's CONNECT tunnel and check
that name, with the same code as without a proxy. It launches a
minute's runs, once each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .connectproxy import ConnectProxy
from .helpers import Cluster, Operator, wait_for
from .test_faults import RUNNABLE, a_fleet_due_at_0001, assert_every_minute_ran_once, released


def test_behind_a_proxy_with_a_tls_server_name_the_minute_runs_once(control_plane: Any, namespace: str,
                                                                     tmp_path: Path, cluster: Cluster) -> None:
    with ConnectProxy() as proxy:
        config = yaml.safe_load(control_plane.kubeconfig.read_text())
        for entry in config["clusters"]:
            entry["cluster"]["proxy-url"] = proxy.url
            entry["cluster"]["tls-server-name"] = "kubernetes.default"
        kubeconfig = tmp_path / "behind-a-proxy.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(config))
        operator = Operator(control_plane, namespace, tmp_path, kubeconfig=kubeconfig, name="proxied")
        operator.set_clock("2024-03-01T00:00")
        operator.start()
        try:
            a_fleet_due_at_0001(cluster)
            operator.set_clock("2024-03-01T00:01:00")
            wait_for("every run of 00:01 released through the proxy",
                     lambda: all(released(cluster, name, "2024-03-01T00:01") for name in RUNNABLE))
            assert_every_minute_ran_once(operator, cluster, ["2024-03-01T00:01"])
        finally:
            operator.stop()
            print(operator.log()[-6000:])
        server = control_plane.url.removeprefix("https://")
        assert [target for target, _ in proxy.requests].count(server) >= 2  # its requests and its watches
