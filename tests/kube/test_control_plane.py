"""Smoke tests of the local control plane: a real kube-apiserver + etcd."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
import time
import uuid

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.cluster

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def kubectl(cp, *args: str, kubeconfig=None, input: str | None = None, check: bool = True):
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig or cp.kubeconfig), *args],
        input=input, capture_output=True, text=True, timeout=60, check=check,
    )


def api_client(kubeconfig) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(kubeconfig))


@pytest.fixture
def namespace(control_plane):
    """A fresh namespace. Without a controller-manager a deleted namespace
    stays Terminating forever, so it is deleted but not waited for."""
    name = f"smoke-{uuid.uuid4().hex[:8]}"
    kubectl(control_plane, "create", "namespace", name)
    yield name
    kubectl(control_plane, "delete", "namespace", name, "--wait=false", check=False)


def test_kubectl_reports_server_version(control_plane):
    out = kubectl(control_plane, "version", "--output=json").stdout
    info = json.loads(out)
    server = info["serverVersion"]
    assert server["gitVersion"].startswith("v1.")
    assert server["gitVersion"] != "v0.0.0-master+$Format:%H$"
    assert int(server["major"]) == 1 and int(server["minor"]) >= 31
    # The plain output too, as a person would read it.
    assert "Server Version: " + server["gitVersion"] in kubectl(control_plane, "version").stdout


def test_kubeconfig_env_is_set(control_plane):
    assert os.environ["KUBECONFIG"] == str(control_plane.kubeconfig)
    assert control_plane.url.startswith("https://127.0.0.1:")


def test_configmap_roundtrip_with_python_client(control_plane, namespace):
    with api_client(control_plane.kubeconfig) as api:
        core = client.CoreV1Api(api)
        body = client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="smoke", labels={"app": "cronctl-smoke"}),
            data={"schedule": "*/5 * * * *"},
        )
        core.create_namespaced_config_map(namespace, body)
        got = core.read_namespaced_config_map("smoke", namespace)
        assert got.data == {"schedule": "*/5 * * * *"}
        listed = core.list_namespaced_config_map(namespace, label_selector="app=cronctl-smoke")
        assert [cm.metadata.name for cm in listed.items] == ["smoke"]
        core.delete_namespaced_config_map("smoke", namespace)
        with pytest.raises(ApiException) as exc:
            core.read_namespaced_config_map("smoke", namespace)
        assert exc.value.status == 404


CRD = textwrap.dedent(
    """\
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: smokewidgets.smoke.cronctl.example.com
    spec:
      group: smoke.cronctl.example.com
      scope: Namespaced
      names:
        plural: smokewidgets
        singular: smokewidget
        kind: SmokeWidget
      versions:
        - name: v1
          served: true
          storage: true
          schema:
            openAPIV3Schema:
              type: object
              properties:
                spec:
                  type: object
                  properties:
                    size:
                      type: integer
                      minimum: 1
          subresources:
            status: {}
    """
)


def test_crd_is_established_and_served(control_plane, namespace):
    kubectl(control_plane, "apply", "-f", "-", input=CRD)
    kubectl(control_plane, "wait", "--for=condition=Established", "--timeout=60s",
            "crd/smokewidgets.smoke.cronctl.example.com")
    with api_client(control_plane.kubeconfig) as api:
        co = client.CustomObjectsApi(api)
        args = ("smoke.cronctl.example.com", "v1", namespace, "smokewidgets")
        obj = {"apiVersion": "smoke.cronctl.example.com/v1", "kind": "SmokeWidget",
               "metadata": {"name": "w1"}, "spec": {"size": 3}}
        # Discovery of a just-established CRD can lag a moment behind.
        for attempt in range(50):
            try:
                co.create_namespaced_custom_object(*args, obj)
                break
            except ApiException as e:
                if e.status != 404 or attempt == 49:
                    raise
                time.sleep(0.2)
        got = co.get_namespaced_custom_object(*args, "w1")
        assert got["spec"] == {"size": 3}
        # Schema validation is enforced by the real server.
        bad = dict(obj, metadata={"name": "w2"}, spec={"size": 0})
        with pytest.raises(ApiException) as exc:
            co.create_namespaced_custom_object(*args, bad)
        assert exc.value.status == 422
    assert "w1" in kubectl(control_plane, "get", "smokewidgets", "-n", namespace, "-o", "name").stdout


def test_rbac_denies_user_without_bindings(control_plane, namespace):
    nobody = control_plane.user_kubeconfig("nobody", groups=["cronctl:nobodies"])
    with api_client(nobody) as api:
        with pytest.raises(ApiException) as exc:
            client.CoreV1Api(api).list_namespaced_pod(namespace)
        assert exc.value.status == 403
        assert 'User "nobody"' in json.loads(exc.value.body)["message"]
    res = kubectl(control_plane, "get", "pods", "-n", namespace, kubeconfig=nobody, check=False)
    assert res.returncode != 0 and "Forbidden" in res.stderr

    # The admin (system:masters) may.
    with api_client(control_plane.kubeconfig) as api:
        assert client.CoreV1Api(api).list_namespaced_pod(namespace).items == []


def test_rbac_grants_through_group_binding(control_plane, namespace):
    viewer = control_plane.user_kubeconfig("vera", groups=["cronctl:viewers"])
    # An explicit Role: the aggregated ClusterRoles (view/edit/admin) stay
    # empty here, since their aggregation is a kube-controller-manager job.
    kubectl(control_plane, "create", "role", "pod-reader", "-n", namespace,
            "--verb=get,list,watch", "--resource=pods")
    kubectl(control_plane, "create", "rolebinding", "viewers", "-n", namespace,
            "--role=pod-reader", "--group=cronctl:viewers")
    with api_client(viewer) as api:
        core = client.CoreV1Api(api)
        # The RBAC authorizer reads bindings from an informer cache: a new
        # binding takes effect after a short delay, so poll for it.
        deadline = time.monotonic() + 30
        while True:
            try:
                assert core.list_namespaced_pod(namespace).items == []
                break
            except ApiException as e:
                if e.status != 403 or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        with pytest.raises(ApiException) as exc:  # the role is read-only
            core.create_namespaced_config_map(
                namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="x")))
        assert exc.value.status == 403
    ans = kubectl(control_plane, "auth", "can-i", "list", "pods", "-n", namespace,
                  kubeconfig=viewer, check=False)
    assert ans.stdout.strip() == "yes"
