"""The operator chart (charts/cronctl): lint, what it renders, what its schema refuses,
and the RBAC it grants, compared with the API calls the operator's code makes.

tests/kube/test_rbac.py applies the rendered RBAC to the test API server and runs
the operator under it; these tests need only helm.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from .operator_chart import (CHART, CRD_SCANNING_GRANTS, NAMESPACED_GRANTS, RELEASE_NAMESPACE, REPO_ROOT, grants,
                             helm_test_objects, lease_grants, notes, of_kind, render, template)

OPERATOR_CODE = REPO_ROOT / "operator" / "cronctl" / "operator"
NAMESPACED = {"watchNamespaces": ["team-a", "team-b"]}


def deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = of_kind(docs, "Deployment")
    return found


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = deployment(docs)["spec"]["template"]["spec"]["containers"]
    return found


def args_of(docs: list[dict[str, Any]]) -> list[str]:
    return container(docs)["args"]


# -- lint and the chart's metadata ----------------------------------------------------------


@pytest.mark.parametrize("values", [{}, NAMESPACED, {"leaderElection": {"enabled": False}, "replicas": 1,
                                                     "metrics": {"enabled": False, "port": 9090},
                                                     "podDisruptionBudget": {"enabled": True}}],
                         ids=["defaults", "namespaced", "single-replica-no-metrics-pdb"])
def test_helm_lint_strict_passes(helm: Path, values: dict[str, Any], tmp_path: Path) -> None:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values))
    result = subprocess.run([str(helm), "lint", "--strict", str(CHART), "--namespace", RELEASE_NAMESPACE,
                             "--values", str(values_file)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


def test_chart_metadata_matches_the_package() -> None:
    """The package's version comes from git (setup.py); the chart's appVersion names the last
    release in CHANGELOG.md, and scripts/release sets the released one (tests/test_release.py)."""
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["apiVersion"] == "v2"
    assert chart["name"] == "cronctl"
    released = re.findall(r"^## \[(\d[^\]]*)\]", (REPO_ROOT / "CHANGELOG.md").read_text(), re.M)
    assert chart["appVersion"] == released[0]


def test_the_default_image_is_the_charts_app_version(helm: Path) -> None:
    docs = render(helm)
    assert container(docs)["image"] == "cronctl:0.1.0"
    assert container(docs)["imagePullPolicy"] == "IfNotPresent"
    assert container(render(helm, {"image": {"repository": "registry.example/cronctl", "tag": "9.9.9",
                                             "pullPolicy": "Always"}}))["image"] == "registry.example/cronctl:9.9.9"


# -- the Deployment ------------------------------------------------------------------------------


def test_the_pod_runs_non_root_read_only_without_capabilities(helm: Path) -> None:
    docs = render(helm)
    pod = deployment(docs)["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is True
    assert pod["serviceAccountName"] == "cronctl"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    security = container(docs)["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["privileged"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    # a read-only root needs a writable /tmp, and nothing else is mounted
    assert container(docs)["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert pod["volumes"] == [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}]


PINNED_IDS = ("runAsUser", "runAsGroup", "fsGroup", "supplementalGroups")


def pinned_ids(pod: dict[str, Any]) -> dict[str, Any]:
    """The user and group ids a Pod spec fixes, at the Pod's level and its containers'."""
    contexts = {"pod": pod.get("securityContext") or {}, **{
        c["name"]: c.get("securityContext") or {} for c in pod.get("containers", []) + pod.get("initContainers", [])}}
    return {f"{where}.{key}": context[key] for where, context in contexts.items() for key in PINNED_IDS
            if key in context}


def test_no_uid_is_pinned_by_default_so_openshift_can_assign_one(helm: Path) -> None:
    """OpenShift's restricted SCCs refuse a runAsUser outside the namespace's range and assign one
    themselves: the chart fixes none, in the operator's Pods or helm test's, unless told to."""
    values = {"shards": ["a"]}
    pods = [d["spec"]["template"]["spec"] for d in of_kind(render(helm, values), "Deployment")]
    pods += [p["spec"] for p in of_kind(helm_test_objects(helm, values), "Pod")]
    assert len(pods) == 3
    for pod in pods:
        assert pinned_ids(pod) == {}
        assert pod["securityContext"]["runAsNonRoot"] is True  # the image's USER is numeric: checkable
    pinned = {"podSecurityContext": {"runAsNonRoot": True, "runAsUser": 2000, "fsGroup": 2000}}
    assert pinned_ids(deployment(render(helm, pinned))["spec"]["template"]["spec"]) == {
        "pod.runAsUser": 2000, "pod.fsGroup": 2000}


def test_probes_resources_ports_and_the_downward_api(helm: Path) -> None:
    main = container(render(helm))
    for probe in ("livenessProbe", "readinessProbe"):
        assert main[probe]["periodSeconds"] > 0 and main[probe]["failureThreshold"] > 0
    assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}  # ready once synced
    no_metrics = container(render(helm, {"metrics": {"enabled": False}}))
    assert no_metrics["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert {p["name"]: p["containerPort"] for p in main["ports"]} == {"health": 8080, "metrics": 9090}
    # No CPU limit: the busy second of a minute's launches is CPU-bound, and a CFS quota makes it late.
    assert main["resources"] == {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}}
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in main["env"]}
    assert env == {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"}


def test_args_carry_the_health_metrics_log_and_lease_settings(helm: Path) -> None:
    docs = render(helm)
    assert "command" not in container(docs)  # the image's entrypoint is `cronctl operator`
    assert args_of(docs) == ["--liveness=http://0.0.0.0:8080/healthz", "--log-format=json",
                             "--metrics-address=0.0.0.0:9090", "--leader-election",
                             f"--leader-election-namespace={RELEASE_NAMESPACE}",
                             "--leader-election-id=cronctl-operator", "--lease-seconds=15", "--clock=node",
                             "--clock-skew-threshold=2"]
    assert deployment(docs)["spec"]["replicas"] == 2
    annotations = deployment(docs)["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
                           "prometheus.io/path": "/metrics"}

    docs = render(helm, {"replicas": 1, "logFormat": "text", "healthPort": 8081, "args": ["--verbose"],
                         "metrics": {"enabled": False, "port": 9090},
                         "leaderElection": {"enabled": False, "leaseName": "x", "leaseSeconds": 15},
                         "watchNamespaces": ["a", "b"]})
    assert args_of(docs) == ["--liveness=http://0.0.0.0:8081/healthz", "--log-format=text",
                             "--no-leader-election", "--namespace=a", "--namespace=b", "--clock=node",
                             "--clock-skew-threshold=2", "--verbose"]
    assert [p["name"] for p in container(docs)["ports"]] == ["health"]
    assert "annotations" not in deployment(docs)["spec"]["template"]["metadata"]
    assert [r["metadata"]["name"] for r in of_kind(docs, "Role")] == ["cronctl", "cronctl"]  # no lease Role


def test_every_flag_the_chart_passes_is_one_the_operator_takes(helm: Path) -> None:
    """The chart and the CLI stay in step: each rendered flag appears in `cronctl operator --help`."""
    help_text = subprocess.run([sys.executable, "-m", "cronctl", "operator", "--help"], capture_output=True,
                               text=True, check=True, cwd=REPO_ROOT,
                               env={"PYTHONPATH": str(REPO_ROOT / "operator"), "PATH": "/usr/bin:/bin"}).stdout
    known = set(re.findall(r"--[a-z][a-z-]*", help_text))
    rendered = set()
    for values in ({}, {"replicas": 1, "leaderElection": {"enabled": False, "leaseName": "x", "leaseSeconds": 3},
                        "watchNamespaces": ["a"]}):
        rendered |= {arg.split("=", 1)[0] for arg in args_of(render(helm, values))}
    assert rendered - known == set(), f"the chart passes flags `cronctl operator` lacks: {rendered - known}"


def test_optional_metrics_service(helm: Path) -> None:
    assert not of_kind(render(helm), "Service", "ServiceMonitor")
    docs = render(helm, {"metrics": {"enabled": True, "port": 9100, "service": {"enabled": True, "port": 80}}})
    (service,) = of_kind(docs, "Service")
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 80, "targetPort": "metrics", "protocol": "TCP"}]
    assert service["spec"]["selector"] == deployment(docs)["spec"]["selector"]["matchLabels"]


# -- replicas: spread over nodes, and a disruption budget, only when there are several ---------------

ONE_NODE_PREFERRED = {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}


def spread(docs: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    return deployment(docs)["spec"]["template"]["spec"].get("topologySpreadConstraints")


def test_two_replicas_are_spread_over_nodes_and_a_budget_evicts_them_one_at_a_time(helm: Path) -> None:
    docs = render(helm)
    assert deployment(docs)["spec"]["replicas"] == 2
    (constraint,) = spread(docs) or []
    selector = {"matchLabels": deployment(docs)["spec"]["selector"]["matchLabels"],
                "matchExpressions": [{"key": "cronctl.dev/shard", "operator": "DoesNotExist"}]}
    assert constraint == {**ONE_NODE_PREFERRED, "labelSelector": selector}
    (budget,) = of_kind(docs, "PodDisruptionBudget")
    assert budget["spec"] == {"maxUnavailable": 1, "selector": selector}
    (budget,) = of_kind(render(helm, {"podDisruptionBudget": {"enabled": True, "minAvailable": 1}}),
                        "PodDisruptionBudget")
    assert budget["spec"] == {"minAvailable": 1, "selector": selector}


def test_one_replica_gets_neither_spread_nor_budget(helm: Path) -> None:
    docs = render(helm, {"replicas": 1})
    assert spread(docs) is None
    assert not of_kind(docs, "PodDisruptionBudget")
    docs = render(helm, {"replicas": 1, "podDisruptionBudget": {"enabled": True, "minAvailable": 1}})
    assert not of_kind(docs, "PodDisruptionBudget"), "minAvailable 1 of 1 Pod would block every drain"


def test_the_spread_and_the_budget_can_be_turned_off_or_replaced(helm: Path) -> None:
    docs = render(helm, {"spreadReplicas": False, "podDisruptionBudget": {"enabled": False}})
    assert spread(docs) is None and not of_kind(docs, "PodDisruptionBudget")
    zones = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}
    own = {**zones, "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"team": "x"}}}
    (by_zone, by_node) = spread(render(helm, {"topologySpreadConstraints": [zones, own]})) or []
    assert by_zone == {**zones, "labelSelector": {
        "matchLabels": {"app.kubernetes.io/name": "cronctl", "app.kubernetes.io/instance": "cronctl"},
        "matchExpressions": [{"key": "cronctl.dev/shard", "operator": "DoesNotExist"}]}}
    assert by_node == own  # a labelSelector of the values' own is kept


def test_each_shard_spreads_its_own_pods(helm: Path) -> None:
    deployments = of_kind(render(helm, {"shards": ["a"]}), "Deployment")
    selectors = [d["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["labelSelector"] for d in deployments]
    assert selectors[1] == {"matchLabels": deployments[1]["spec"]["selector"]["matchLabels"]}
    assert selectors[1]["matchLabels"]["cronctl.dev/shard"] == "a"
    assert selectors[0]["matchExpressions"] == [{"key": "cronctl.dev/shard", "operator": "DoesNotExist"}]


def test_standard_labels_on_every_object(helm: Path) -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    kinds = set()
    for doc in render(helm, {}) + render(helm, NAMESPACED):
        kinds.add(doc["kind"])
        labels = doc["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == "cronctl", doc["kind"]
        assert labels["app.kubernetes.io/instance"] == "cronctl"
        assert labels["app.kubernetes.io/version"] == "0.1.0"
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        assert labels["app.kubernetes.io/part-of"] == "cronctl"
        assert labels["helm.sh/chart"] == f"cronctl-{chart['version']}"
    assert {"CustomResourceDefinition", "ClusterRole", "Deployment", "PodDisruptionBudget"} <= kinds


# -- RBAC ------------------------------------------------------------------------------------------


def operator_cluster_role(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = [role for role in of_kind(docs, "ClusterRole") if role["metadata"]["name"] == "cronctl"]
    return found


def test_cluster_wide_rbac_is_exactly_the_operators_calls(helm: Path) -> None:
    docs = render(helm)
    cluster_role = operator_cluster_role(docs)
    assert grants(cluster_role["rules"]) == set(NAMESPACED_GRANTS)
    (binding,) = of_kind(docs, "ClusterRoleBinding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": cluster_role["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "cronctl", "namespace": RELEASE_NAMESPACE}]
    (lease_role,) = of_kind(docs, "Role")
    assert lease_role["metadata"]["namespace"] == RELEASE_NAMESPACE
    assert grants(lease_role["rules"]) == set(lease_grants("cronctl-operator"))


def test_namespaced_rbac_has_no_cluster_wide_grant(helm: Path) -> None:
    docs = render(helm, NAMESPACED)
    # The only ClusterRoles are the users' aggregated ones, bound to nobody by the chart.
    assert not of_kind(docs, "ClusterRoleBinding")
    assert [r["metadata"]["name"] for r in of_kind(docs, "ClusterRole")] == ["cronctl-view", "cronctl-edit"]
    roles = {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in of_kind(docs, "Role")}
    assert set(roles) == {("team-a", "cronctl"), ("team-b", "cronctl"),
                          (RELEASE_NAMESPACE, "cronctl-leader-election")}
    for namespace in ("team-a", "team-b"):
        assert grants(roles[(namespace, "cronctl")]["rules"]) == set(NAMESPACED_GRANTS)
    assert grants(roles[(RELEASE_NAMESPACE, "cronctl-leader-election")]["rules"]) == set(lease_grants())
    bindings = {(b["metadata"]["namespace"], b["metadata"]["name"]): b for b in of_kind(docs, "RoleBinding")}
    assert set(bindings) == set(roles)
    for key, binding in bindings.items():
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": key[1]}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "cronctl",
                                        "namespace": RELEASE_NAMESPACE}]
    assert [a for a in args_of(docs) if a.startswith("--namespace")] == ["--namespace=team-a", "--namespace=team-b"]


def test_an_extra_verb_is_caught_by_the_rule_comparison() -> None:
    """The comparison itself: one more verb, or one more resource name, is a difference."""
    rules = [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "update"]}]
    assert grants(rules) != {("batch", "jobs", "get", None), ("batch", "jobs", "list", None)}
    with pytest.raises(AssertionError, match="wildcard"):
        grants([{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["*"]}])


def test_no_rbac_and_an_existing_service_account(helm: Path) -> None:
    docs = render(helm, {"rbac": {"create": False}, "serviceAccount": {"create": False, "name": "ops"}})
    assert of_kind(docs, "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ServiceAccount") == []
    assert deployment(docs)["spec"]["template"]["spec"]["serviceAccountName"] == "ops"
    result = template(helm, {"serviceAccount": {"create": False}}, check=False)
    assert result.returncode != 0 and "serviceAccount.name is required" in result.stderr


AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"


def test_aggregated_roles_let_view_read_and_edit_write_cronschedules_but_never_their_status(helm: Path) -> None:
    for values in ({}, NAMESPACED):
        roles = {r["metadata"]["name"]: r for r in of_kind(render(helm, values), "ClusterRole")}
        view, edit = roles["cronctl-view"], roles["cronctl-edit"]
        assert {k: v for k, v in view["metadata"]["labels"].items() if k.startswith(AGGREGATE)} == {
            AGGREGATE + "view": "true", AGGREGATE + "edit": "true", AGGREGATE + "admin": "true"}
        assert {k: v for k, v in edit["metadata"]["labels"].items() if k.startswith(AGGREGATE)} == {
            AGGREGATE + "edit": "true", AGGREGATE + "admin": "true"}
        reads = {("cronctl.dev", kind, verb, None) for kind in ("cronschedules", "cronpools")
                 for verb in ("get", "list", "watch")}
        writes = {("cronctl.dev", kind, verb, None) for kind in ("cronschedules", "cronpools")
                  for verb in ("create", "update", "patch", "delete")}
        # the import's adoption of a CronJob's Jobs (blockOwnerDeletion on the CronSchedule)
        adopt = {("cronctl.dev", "cronschedules/finalizers", "update", None)}
        assert grants(view["rules"]) == reads
        assert grants(edit["rules"]) == reads | writes | adopt  # patch: triggers and backfills are annotations
        assert "aggregationRule" not in view and "aggregationRule" not in edit


def test_the_aggregated_roles_can_be_left_out(helm: Path) -> None:
    for values in ({"rbac": {"create": True, "aggregateClusterRoles": False}},
                   {"rbac": {"create": False, "aggregateClusterRoles": True}}):
        names = [r["metadata"]["name"] for r in of_kind(render(helm, values), "ClusterRole")]
        assert not [name for name in names if name.endswith(("-view", "-edit"))], values


_VERBS = {"read": "get", "get": "get", "list": "list", "watch": "watch", "create": "create", "delete": "delete",
          "patch": "patch", "replace": "update"}
_KINDS = {"job": ("batch", "jobs"), "job_status": ("batch", "jobs/status"), "event": ("", "events"),
          "lease": ("coordination.k8s.io", "leases"), "custom_object": ("cronctl.dev", "cronschedules"),
          "custom_object_status": ("cronctl.dev", "cronschedules/status"),
          "cron_pool": ("cronctl.dev", "cronpools"), "cron_pool_status": ("cronctl.dev", "cronpools/status")}
# `list_job_for_all_namespaces` is the cluster-wide install's form of `list_namespaced_job` (the
# ClusterRole's grant covers both; with --namespace flags the operator lists each namespace).
_CLIENT_CALL = re.compile(r"^(read|get|list|watch|create|delete|patch|replace)_(?:namespaced_([a-z_]+)|([a-z_]+?)"
                          r"_for_all_namespaces)$")


def _operator_api_use() -> tuple[set[tuple[str, str, str, None]], bool, bool]:
    """What the operator's code asks of the API server: the kubernetes-client calls in
    cronctl/operator/**/*.py (and ``kube.rest``'s, named as the client's), the kopf watches (list + watch),
    an ownerReference that blocks its owner's deletion, whether it elects a leader with a LeaseLock, and
    whether it leaves kopf's CRD scanning on."""
    from cronctl import manifest as resource  # GROUP, VERSION, PLURAL: what the resource is

    used: set[tuple[str, str, str, None]] = set()
    lease_lock = scanning_off = False
    for path in sorted(OPERATOR_CODE.rglob("*.py")):  # kube/ included
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and re.search(r"_cluster_custom_object", node.attr):
                pytest.fail(f"{path.name}: {node.attr} needs a cluster-wide grant the namespaced install lacks")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                match = _CLIENT_CALL.match(node.func.attr)
                if match:
                    verb, kind = match.group(1), match.group(2) or match.group(3)
                    assert kind in _KINDS, f"{path.name}: {node.func.attr}: map {kind!r} to its resource here"
                    used.add((*_KINDS[kind], _VERBS[verb], None))
            if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "blockOwnerDeletion"
                                                  for k in node.keys):
                # An owner whose deletion a Job blocks: OwnerReferencesPermissionEnforcement asks for
                # update of the owner's finalizers (the owner is the CronSchedule, manifests.py).
                used.add(("cronctl.dev", "cronschedules/finalizers", "update", None))
            if isinstance(node, ast.Name) and node.id == "LeaseLock":
                lease_lock = True
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is True
                    and any(ast.unparse(t).endswith("scanning.disabled") for t in node.targets)):
                scanning_off = True
            if isinstance(node, ast.Call) and ast.unparse(node.func).startswith("kopf.") and \
                    ast.unparse(node.func).split(".")[1] in ("on", "daemon", "timer", "index"):
                what = ast.unparse(node.func)
                assert what in ("kopf.on.event", "kopf.on.startup", "kopf.on.cleanup", "kopf.on.probe",
                                "kopf.on.login"), \
                    f"{path.name}: {what} may patch the object (progress, finalizers): grant it and list it here"
                if what == "kopf.on.event":
                    group, _version, plural = (getattr(resource, a.id) if isinstance(a, ast.Name) else a.value
                                               for a in node.args[:3])
                    used |= {(group, plural, "list", None), (group, plural, "watch", None)}
    return used, lease_lock, scanning_off


def test_the_granted_verbs_are_the_calls_in_the_operators_code(helm: Path) -> None:
    """A call added to the operator without its grant fails here, and so does a grant
    left behind after its call went away."""
    used, lease_lock, scanning_off = _operator_api_use()
    assert {g for g in used if g[1] != "leases"} == set(NAMESPACED_GRANTS)
    docs = render(helm)
    cluster_role = operator_cluster_role(docs)
    expected = set(NAMESPACED_GRANTS) | (set() if scanning_off else set(CRD_SCANNING_GRANTS))
    assert grants(cluster_role["rules"]) == expected, (
        "kopf's CRD scanning and the ClusterRole's customresourcedefinitions rule go together")
    assert lease_lock, "the operator no longer elects with a LeaseLock: drop the lease Role"


# -- values.schema.json ------------------------------------------------------------------------------


@pytest.mark.parametrize(("values", "says"), [
    ({"logFormat": "xml"}, ["/logFormat", "'json', 'text'"]),
    ({"replicas": "two"}, ["/replicas", "got string, want integer"]),
    ({"replicas": 0}, ["/replicas", "minimum"]),
    ({"image": {"repository": "cronctl", "pullPolicy": "Sometimes"}}, ["/image/pullPolicy", "IfNotPresent"]),
    ({"image": {"repository": "cronctl", "pullPolicy": "Always", "digest": "x"}}, ["/image", "'digest' not allowed"]),
    ({"replica": 3}, ["additional properties 'replica' not allowed"]),
    ({"metrics": {"enabled": True, "port": 70000}}, ["/metrics/port", "maximum"]),
    ({"leaderElection": {"enabled": True, "leaseName": "cronctl-operator", "leaseSeconds": 1}},
     ["/leaderElection/leaseSeconds", "minimum"]),
    ({"watchNamespaces": ["Team_A"]}, ["/watchNamespaces/0", "does not match pattern"]),
    ({"rbac": {"create": "yes"}}, ["/rbac/create", "got string, want boolean"]),
], ids=["logFormat", "replicas-string", "replicas-zero", "pullPolicy", "image-extra", "top-extra", "port",
        "leaseSeconds", "namespace-name", "rbac-create"])
def test_the_schema_refuses_bad_values_with_a_clear_message(helm: Path, values: dict[str, Any],
                                                            says: list[str]) -> None:
    result = template(helm, values, check=False)
    assert result.returncode != 0
    assert "values don't meet the specifications of the schema" in result.stderr
    for text in says:
        assert text in result.stderr, result.stderr


def test_the_templates_refuse_what_the_schema_cannot(helm: Path) -> None:
    result = template(helm, {"replicas": 2, "leaderElection": {"enabled": False, "leaseName": "x",
                                                                "leaseSeconds": 15}}, check=False)
    assert result.returncode != 0 and "replicas: 2 needs leaderElection.enabled: true" in result.stderr
    result = template(helm, {"healthPort": 9090}, check=False)
    assert result.returncode != 0 and "metrics.port and healthPort are both 9090" in result.stderr


def test_the_schema_is_strict_and_covers_every_value() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert schema["additionalProperties"] is False
    assert set(values) <= set(schema["properties"])
    for key in ("crds", "image", "serviceAccount", "rbac", "metrics", "leaderElection", "podDisruptionBudget",
                "livenessProbe", "readinessProbe", "resources"):
        assert schema["properties"][key]["additionalProperties"] is False, key
        assert set(values[key]) <= set(schema["properties"][key]["properties"]), key
    assert schema["properties"]["logFormat"]["enum"] == ["json", "text"]
    assert schema["properties"]["image"]["properties"]["pullPolicy"]["enum"] == ["Always", "IfNotPresent", "Never"]


# Values shaped like Kubernetes objects: their own keys are Kubernetes' fields, documented there;
# the value itself carries the comment.
_KUBERNETES_SHAPED = {"livenessProbe", "readinessProbe", "resources", "podSecurityContext", "securityContext"}


def test_every_value_is_documented() -> None:
    lines = (CHART / "values.yaml").read_text().splitlines()
    parents: list[tuple[int, str]] = []
    for number, line in enumerate(lines):
        match = re.match(r"^( *)([A-Za-z][A-Za-z0-9]*):", line)
        if not match:
            continue
        indent, key = len(match.group(1)), match.group(2)
        parents = [(i, k) for i, k in parents if i < indent]
        if not any(k in _KUBERNETES_SHAPED for _, k in parents):
            above = lines[number - 1].strip() if number else ""
            assert above.startswith("#"), f"values.yaml line {number + 1}: {key} has no comment above it"
        parents.append((indent, key))


# -- the CRD ---------------------------------------------------------------------------------------------

CRD_SOURCE = REPO_ROOT / "crds" / "cronschedule.yaml"
CRD_COPY = CHART / "files" / "cronschedule-crd.yaml"


def test_the_charts_crd_copy_is_the_repositorys_crd_byte_for_byte() -> None:
    assert CRD_COPY.is_file() and not CRD_COPY.is_symlink()
    assert CRD_COPY.read_bytes() == CRD_SOURCE.read_bytes(), (
        f"{CRD_COPY.relative_to(REPO_ROOT)} differs from crds/cronschedule.yaml: run scripts/sync-chart-crd.py")


def test_the_chart_holds_no_symbolic_link_and_no_crds_folder() -> None:
    """A link makes helm lint warn and a package carry a copy anyway; crds/ would never be upgraded."""
    assert [path for path in CHART.rglob("*") if path.is_symlink()] == []
    assert not (CHART / "crds").exists()


def crd_of(docs: list[dict[str, Any]], name: str = "cronschedules.cronctl.dev") -> dict[str, Any]:
    (found,) = [crd for crd in of_kind(docs, "CustomResourceDefinition") if crd["metadata"]["name"] == name]
    return found


def test_the_pool_crd_is_rendered_as_the_repositorys_too(helm: Path) -> None:
    source = yaml.safe_load((REPO_ROOT / "crds" / "cronpool.yaml").read_text())
    rendered = crd_of(render(helm), "cronpools.cronctl.dev")
    metadata = rendered.pop("metadata")
    assert metadata["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert rendered == {key: value for key, value in source.items() if key != "metadata"}


def test_the_crd_is_a_template_with_the_keep_policy_and_otherwise_the_repositorys_crd(helm: Path,
                                                                                      tmp_path: Path) -> None:
    source = yaml.safe_load(CRD_SOURCE.read_text())
    rendered = crd_of(render(helm))
    metadata = rendered.pop("metadata")
    assert metadata["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert metadata["name"] == source["metadata"]["name"] == "cronschedules.cronctl.dev"
    assert metadata["labels"]["app.kubernetes.io/managed-by"] == "Helm"
    assert rendered == {key: value for key, value in source.items() if key != "metadata"}
    # What a packaged chart renders: the same CRD, from a real file.
    subprocess.run([str(helm), "package", str(CHART), "--destination", str(tmp_path)], check=True,
                   capture_output=True, timeout=60)
    (package,) = tmp_path.glob("cronctl-*.tgz")
    with tarfile.open(package) as archive:
        names = archive.getnames()
        assert archive.getmember("cronctl/files/cronschedule-crd.yaml").isfile()
    assert not [name for name in names if "/crds/" in name or name.endswith("README.md.gotmpl")]
    shown = subprocess.run([str(helm), "template", "cronctl", str(package), "--show-only", "templates/crd.yaml"],
                           capture_output=True, text=True, check=True, timeout=60).stdout
    assert yaml.safe_load_all(shown).__next__() == {**rendered, "metadata": metadata}


POLICY_SOURCE = REPO_ROOT / "crds" / "cronschedule-policy.yaml"
POLICY_COPY = CHART / "files" / "cronschedule-policy.yaml"
POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")


def test_the_charts_policy_copy_is_the_repositorys_policy_byte_for_byte() -> None:
    assert POLICY_COPY.is_file() and not POLICY_COPY.is_symlink()
    assert POLICY_COPY.read_bytes() == POLICY_SOURCE.read_bytes(), (
        f"{POLICY_COPY.relative_to(REPO_ROOT)} differs from crds/cronschedule-policy.yaml: "
        "run scripts/sync-chart-crd.py")


def test_the_chart_installs_the_cronschedule_policy_and_its_binding_with_the_crds(helm: Path) -> None:
    """Issue 47: the CRD's rules moved to a ValidatingAdmissionPolicy; a chart that installed the
    CRD without it would take specs the API server refused before."""
    source = list(yaml.safe_load_all(POLICY_SOURCE.read_text()))
    rendered = of_kind(render(helm), *POLICY_KINDS)
    assert [each["kind"] for each in rendered] == list(POLICY_KINDS)
    for object_, original in zip(rendered, source):
        metadata = object_.pop("metadata")
        assert metadata["name"] == original["metadata"]["name"] == "cronschedules.cronctl.dev"
        assert metadata["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        assert object_ == {key: value for key, value in original.items() if key != "metadata"}
    assert rendered[1]["spec"] == {"policyName": "cronschedules.cronctl.dev", "validationActions": ["Deny"]}
    assert not of_kind(render(helm, {"crds": {"enabled": False, "keep": True}}), *POLICY_KINDS)


def test_the_policy_matches_the_main_resource_only_never_its_status() -> None:
    """A status write is never judged by the policy: the operator's writes of a schedule that the
    rules would refuse (created before the policy) go through, and cost no CEL."""
    policy, binding = yaml.safe_load_all(POLICY_SOURCE.read_text())
    [rule] = policy["spec"]["matchConstraints"]["resourceRules"]
    assert rule == {"apiGroups": ["cronctl.dev"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                    "resources": ["cronschedules"]}
    assert "excludeResourceRules" not in policy["spec"]["matchConstraints"]
    assert binding["spec"]["validationActions"] == ["Deny"] and "matchResources" not in binding["spec"]
    [condition] = policy["spec"]["matchConditions"]
    assert "object.spec != oldObject.spec" in condition["expression"]


def test_crds_keep_false_drops_the_annotation_and_crds_enabled_false_renders_no_crd(helm: Path) -> None:
    assert "annotations" not in crd_of(render(helm, {"crds": {"enabled": True, "keep": False}}))["metadata"]
    assert not of_kind(render(helm, {"crds": {"enabled": False, "keep": True}}), "CustomResourceDefinition")


# -- NOTES.txt --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("values", [{}, NAMESPACED, {"shards": ["a"], "crds": {"enabled": False, "keep": True}},
                                    {"replicas": 1, "leaderElection": {"enabled": False, "leaseName": "x",
                                                                       "leaseSeconds": 3}}],
                         ids=["defaults", "namespaced", "shards-no-crd", "no-leader-election"])
def test_notes_work_from_the_packaged_chart_and_say_how_to_check_the_leader_and_start(
        helm: Path, values: dict[str, Any]) -> None:
    text = notes(helm, values=values)
    # Nothing that needs a source checkout: no repository path, no file to apply from disk.
    for source_path in ("examples/", "charts/", "crds/", "operator/", "-f examples", ".yaml"):
        assert source_path not in text, source_path
    if values.get("leaderElection", {}).get("enabled", True):
        assert "kubectl -n cronctl-system get lease cronctl-operator -o jsonpath='{.spec.holderIdentity}" in text
        assert "grep 'holding the Lease'" in text
    else:
        assert "leader election is off" in text
    # An inline first CronSchedule that applies as written (a quoted heredoc, its end at column 0).
    start = text.index("-f - <<'EOF'\n")
    manifest = text[start:].split("\n", 1)[1].split("\nEOF\n", 1)[0]
    schedule = yaml.safe_load(manifest)
    assert schedule["apiVersion"] == "cronctl.dev/v1" and schedule["kind"] == "CronSchedule"
    assert schedule["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert "kubectl get cronschedules" in text
    assert "helm show readme cronctl" in text and "kubectl explain cronschedule.spec" in text


# -- the Dockerfile -----------------------------------------------------------------------------------------


def test_the_dockerfile_is_slim_pinned_non_root_and_matches_the_chart(helm: Path) -> None:
    text = (REPO_ROOT / "Dockerfile").read_text()
    arguments = dict(re.findall(r"^ARG (\w+)=(\S+)$", text, re.M))
    stages = re.split(r"^FROM ", text, flags=re.M)[1:]
    assert len(stages) >= 2, "a build stage and a runtime stage"
    # One pinned Debian base; every other stage builds on an earlier one, the runtime on scratch
    # (scripts/image/make-rootfs.py copies its root file system: tests/kube/test_image.py).
    names = []
    for stage in stages[:-1]:
        base = re.sub(r"\$\{(\w+)\}", lambda m: arguments[m.group(1)], stage.split()[0])
        if base not in names:
            name, _, tag = base.partition(":")
            assert tag and tag != "latest" and re.search(r"\d+\.\d+", tag), f"unpinned base image {base}"
            assert name in ("debian", "docker.io/library/debian") and "slim" in tag, base
        names.append(stage.split()[2])
    runtime = stages[-1]
    assert runtime.split()[0] == "scratch"
    assert not re.search(r"^RUN ", runtime, re.M), "the runtime stage runs nothing: it has no shell"
    (user,) = re.findall(r"^USER (\S+)$", runtime, re.M)
    # Numeric, so that the chart's runAsNonRoot can be checked without a runAsUser of its own.
    assert re.fullmatch(r"\d+(:\d+)?", user), f"USER {user}: runAsNonRoot needs a numeric user"
    assert int(user.split(":")[0]) != 0
    assert pinned_ids(deployment(render(helm))["spec"]["template"]["spec"]) == {}
    assert re.search(r'^ENTRYPOINT \["cronctl", "operator"\]$', runtime, re.M)
    (cmd,) = re.findall(r"^CMD (\[.*\])$", runtime, re.M)
    assert json.loads(cmd) == ["--liveness", "http://0.0.0.0:8080/healthz"]


# -- shards -------------------------------------------------------------------------------------


def test_each_shard_is_a_deployment_with_its_flag_its_lease_and_its_own_pods(helm: Path) -> None:
    docs = render(helm, {"shards": ["a", "b"]})
    deployments = {d["metadata"]["name"]: d for d in of_kind(docs, "Deployment")}
    assert list(deployments) == ["cronctl", "cronctl-shard-a", "cronctl-shard-b"]
    for name, shard in (("cronctl", None), ("cronctl-shard-a", "a"), ("cronctl-shard-b", "b")):
        spec = deployments[name]["spec"]
        (operator,) = spec["template"]["spec"]["containers"]
        lease = "cronctl-operator" if shard is None else f"cronctl-operator-{shard}"
        assert f"--leader-election-id={lease}" in operator["args"]
        assert [a for a in operator["args"] if a.startswith("--shard")] == ([] if shard is None else [f"--shard={shard}"])
        assert spec["selector"]["matchLabels"].get("cronctl.dev/shard") == shard
        assert spec["template"]["metadata"]["labels"].get("cronctl.dev/shard") == shard
        assert spec["replicas"] == 2
    (lease_role,) = of_kind(docs, "Role")
    assert grants(lease_role["rules"]) == set(lease_grants("cronctl-operator") | lease_grants("cronctl-operator-a")
                                              | lease_grants("cronctl-operator-b"))


def test_without_the_default_shard_only_the_named_shards_run(helm: Path) -> None:
    docs = render(helm, {"shards": ["a"], "defaultShard": False, "podDisruptionBudget": {"enabled": True}})
    assert [d["metadata"]["name"] for d in of_kind(docs, "Deployment")] == ["cronctl-shard-a"]
    (budget,) = of_kind(docs, "PodDisruptionBudget")
    assert budget["spec"]["selector"]["matchLabels"]["cronctl.dev/shard"] == "a"


def test_the_default_shards_disruption_budget_leaves_the_shards_pods_out(helm: Path) -> None:
    budgets = of_kind(render(helm, {"shards": ["a"], "podDisruptionBudget": {"enabled": True}}),
                      "PodDisruptionBudget")
    assert budgets[0]["spec"]["selector"]["matchExpressions"] == [
        {"key": "cronctl.dev/shard", "operator": "DoesNotExist"}]


def test_a_chart_with_no_operator_at_all_is_refused(helm: Path) -> None:
    failed = template(helm, {"defaultShard": False}, check=False)
    assert failed.returncode != 0 and "no operator would run" in failed.stderr


def test_notes_warn_that_the_placeholder_image_cannot_be_pulled(helm: Path) -> None:
    assert "WARNING: image.repository is the placeholder" in notes(helm)
    assert "WARNING" not in notes(helm, values={"image": {"repository": "registry.example/cronctl"}})


def test_helm_test_runs_the_charts_check_in_the_operators_image_with_only_a_dry_run_grant(helm: Path) -> None:
    hooks = helm_test_objects(helm, {"image": {"repository": "registry.example/cronctl", "tag": "1.2.3"}})
    assert {doc["kind"] for doc in hooks} == {"ServiceAccount", "Role", "RoleBinding", "Service", "Pod"}
    for doc in hooks:
        assert doc["metadata"]["annotations"]["helm.sh/hook"] == "test"
        assert doc["metadata"]["namespace"] == RELEASE_NAMESPACE
    (pod,) = of_kind(hooks, "Pod")
    (container,) = pod["spec"]["containers"]
    assert container["image"] == "registry.example/cronctl:1.2.3"
    assert container["args"] == [(CHART / "files" / "helm-test.py").read_text()]
    operator_pod = of_kind(render(helm), "Deployment")[0]["spec"]["template"]
    assert pod["spec"]["securityContext"] == operator_pod["spec"]["securityContext"]
    assert container["securityContext"] == operator_pod["spec"]["containers"][0]["securityContext"]
    (role,) = of_kind(hooks, "Role")
    assert grants(role["rules"]) == {("cronctl.dev", "cronschedules", "create", None)}
    (service,) = of_kind(hooks, "Service")
    selector = service["spec"]["selector"]
    assert selector.items() <= operator_pod["metadata"]["labels"].items(), "the health Service misses the operator"
    assert not selector.items() <= pod["metadata"]["labels"].items(), "the health Service selects the test Pod"
