"""The operator chart's ServiceAccount and RBAC on the real API server.

The chart is rendered with helm; its ServiceAccount, (Cluster)Roles and bindings
(not the Deployment: nothing here runs Pods) are applied to namespace
cronctl-system. A token minted for the ServiceAccount (TokenRequest, as
`kubectl create token` does) makes a kubeconfig, and the operator runs under
that identity with the Deployment's own arguments and downward-API environment
(POD_NAME, POD_NAMESPACE), its listen addresses moved to free loopback ports.
A permission the operator lacks shows as a 403 in its log, which fails the test;
a permission it has but should not is refused by `kubectl auth can-i`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from kubernetes import client

from ..charts.operator_chart import RELEASE_NAMESPACE, helm_test_objects, of_kind, render
from .helpers import ROOT, Cluster, Operator, job_of, kubectl, minutes, ready, schedule_manifest, wait_for

pytestmark = pytest.mark.cluster

SYSTEM = RELEASE_NAMESPACE
# A 403 as kopf, the kubernetes client and the API server word it; not a ",403" of a timestamp.
FORBIDDEN = re.compile(r"[^\d,.:]403\b|Forbidden|forbidden")
# What kopf's resource scanning asks at the cluster scope (namespaces: only with --namespace).
KOPF_SCANNING = re.compile(r"/api/v1/namespaces\b(?!/)|customresourcedefinitions")


@dataclass
class Install:
    """The rendered chart applied without its Deployment, and how to run the operator as it."""

    release: str
    docs: list[dict[str, Any]]
    service_account: str
    kubeconfig: Path
    args: list[str]
    health_port: int
    metrics_port: int

    @property
    def user(self) -> str:
        return f"system:serviceaccount:{SYSTEM}:{self.service_account}"

    def operator(self, cp: Any, namespace: str, workdir: Path, pod: str) -> Operator:
        return Operator(cp, namespace, workdir, extra_args=self.args, name=pod, kubeconfig=self.kubeconfig,
                        namespaces=[], extra_env={"POD_NAME": pod, "POD_NAMESPACE": SYSTEM})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def without_deployment(docs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all([doc for doc in docs if doc["kind"] != "Deployment"])


def token_kubeconfig(cp: Any, account: str, path: Path) -> Path:
    """A kubeconfig for ServiceAccount ``account`` of the release's namespace: a token minted for
    it (TokenRequest, as `kubectl create token` does), readable by its owner only."""
    token = kubectl(cp, "create", "token", account, "-n", SYSTEM, "--duration=2h").stdout.strip()
    admin = yaml.safe_load(Path(cp.kubeconfig).read_text())
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "clusters": admin["clusters"],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": account, "context": {"cluster": admin["clusters"][0]["name"], "user": account}}],
        "current-context": account}))
    path.chmod(0o600)
    return path


def install(cp: Any, helm: Path, release: str, values: dict[str, Any], workdir: Path) -> Install:
    health, metrics = free_port(), free_port()
    # The session's CRD is the test's (conftest): the chart's would be deleted by uninstall().
    docs = render(helm, {"crds": {"enabled": False, "keep": True}, **values, "healthPort": health,
                         "metrics": {"enabled": True, "port": metrics}}, release=release)
    kubectl(cp, "apply", "-f", "-", input=without_deployment(docs))
    (account,) = of_kind(docs, "ServiceAccount")
    name = account["metadata"]["name"]
    kubeconfig = token_kubeconfig(cp, name, workdir / f"{release}.kubeconfig")
    (deployment,) = of_kind(docs, "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = [arg.replace("0.0.0.0:", "127.0.0.1:") for arg in container["args"]]
    return Install(release, docs, name, kubeconfig, args, health, metrics)


def uninstall(cp: Any, installed: Install) -> None:
    kubectl(cp, "delete", "-f", "-", "--ignore-not-found", "--wait=false", check=False,
            input=without_deployment(installed.docs))


def can_i(cp: Any, installed: Install, *request: str) -> bool:
    result = kubectl(cp, "auth", "can-i", *request, f"--as={installed.user}", check=False)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode == 0


def forbidden_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if FORBIDDEN.search(line)]


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode(errors="replace")


def no_namespace_terminating(cp: Any) -> bool:
    """Other tests delete their namespaces without waiting. A cluster-wide operator that
    reconciled a schedule there would be refused (403) by the namespace lifecycle."""
    items = json.loads(kubectl(cp, "get", "namespaces", "-o", "json").stdout)["items"]
    return not [ns["metadata"]["name"] for ns in items if ns["status"].get("phase") == "Terminating"]


# -- fixtures: one cluster-wide and one namespaced install per module ----------------------------------------


@pytest.fixture(scope="module")
def system_namespace(control_plane: Any, crd: None) -> Iterator[str]:
    kubectl(control_plane, "create", "namespace", SYSTEM)
    yield SYSTEM
    kubectl(control_plane, "delete", "namespace", SYSTEM, "--wait=false", check=False)


@pytest.fixture(scope="module")
def cluster_wide(control_plane: Any, helm: Path, system_namespace: str,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[Install]:
    installed = install(control_plane, helm, "cronctl", {}, tmp_path_factory.mktemp("cluster-wide"))
    yield installed
    uninstall(control_plane, installed)


@pytest.fixture(scope="module")
def teams(control_plane: Any, crd: None) -> Iterator[dict[str, str]]:
    """Two watched namespaces and one that is not."""
    suffix = uuid.uuid4().hex[:6]
    names = {role: f"{role}-{suffix}" for role in ("team-a", "team-b", "elsewhere")}
    for name in names.values():
        kubectl(control_plane, "create", "namespace", name)
    yield names
    for name in names.values():
        kubectl(control_plane, "delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture(scope="module")
def namespaced(control_plane: Any, helm: Path, system_namespace: str, teams: dict[str, str],
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Install]:
    values = {"watchNamespaces": [teams["team-a"], teams["team-b"]],
              "leaderElection": {"enabled": True, "leaseName": "cronctl-teams", "leaseSeconds": 15}}
    installed = install(control_plane, helm, "cronctl-teams", values, tmp_path_factory.mktemp("namespaced"))
    yield installed
    uninstall(control_plane, installed)


# -- the cluster-wide install ------------------------------------------------------------------------------------


def test_the_token_is_the_service_accounts_and_it_is_refused_what_it_lacks(control_plane: Any,
                                                                           cluster_wide: Install) -> None:
    who = json.loads(kubectl(control_plane, "--kubeconfig", str(cluster_wide.kubeconfig), "auth", "whoami",
                             "-o", "json").stdout)
    assert who["status"]["userInfo"]["username"] == cluster_wide.user
    result = kubectl(control_plane, "--kubeconfig", str(cluster_wide.kubeconfig), "get", "secrets", "-n", SYSTEM,
                     check=False)
    assert result.returncode != 0 and "Forbidden" in result.stderr


def test_the_operator_runs_its_scenarios_under_the_cluster_wide_rbac(control_plane: Any, cluster_wide: Install,
                                                                    namespace: str, tmp_path: Path) -> None:
    from cronctl.core.every import actual_time
    from cronctl.operator.resource import rfc3339_seconds

    cluster = Cluster(control_plane, namespace)
    wait_for("other tests' namespaces to be gone", lambda: no_namespace_terminating(control_plane), timeout=120)
    # A Job that is not the schedule's holds the name of its 00:10 run: the operator reads it
    # (jobs get) after its create conflicts, and posts a Warning instead of adopting it.
    taken = job_of("taken", "2024-03-01T00:10")
    cluster.batch.create_namespaced_job(namespace, {
        "metadata": {"name": taken}, "spec": {"suspend": True, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}})
    operator = cluster_wide.operator(control_plane, namespace, tmp_path, "cronctl-7d9f-abcde")
    operator.set_clock("2024-03-01T00:00")
    operator.start()
    try:
        cluster.apply(schedule_manifest("rep", "*/10 * * * *", "Replace"))
        cluster.apply(schedule_manifest("keep", "0 * * * *", successfulJobsHistoryLimit=1))
        cluster.apply(schedule_manifest("taken", "10 0 * * *"))
        cluster.apply(schedule_manifest("spread", "0 * * * *", jitterSeconds=900))
        for name in ("rep", "keep", "taken", "spread"):
            wait_for(f"{name}'s status", ready(cluster, name))  # cronschedules get + status patch

        operator.set_clock("2024-03-01T00:10")  # jobs create; the name conflict: jobs get + an Event
        wait_for("rep's first Job", lambda: cluster.job_names("rep") == [job_of("rep", "2024-03-01T00:10")])
        wait_for("JobNameTaken", lambda: "JobNameTaken" in [reason for reason, _ in cluster.events("taken")])
        assert cluster.batch.read_namespaced_job(taken, namespace).metadata.owner_references is None  # not adopted

        operator.set_clock("2024-03-01T00:20")  # Replace: jobs delete
        wait_for("replaced", lambda: cluster.job_names("rep") == [job_of("rep", "2024-03-01T00:20")])
        wait_for("Replaced", lambda: "Replaced" in [reason for reason, _ in cluster.events("rep")])

        operator.set_clock("2024-03-01T01:00:00")  # a launch, and a jittered one held suspended
        wait_for("keep's first Job", lambda: cluster.job_names("keep") == [job_of("keep", "2024-03-01T01:00")])
        held = wait_for("the held Job", lambda: (jobs := cluster.jobs("spread")) and jobs[0])
        assert held.spec.suspend is True
        start = actual_time(900, "spread", minutes("2024-03-01T01:00"))
        operator.set_clock(rfc3339_seconds(start).replace("Z", ""))  # its second: jobs patch
        wait_for("resumed", lambda: cluster.jobs("spread")[0].spec.suspend is False)

        cluster.finish_job(job_of("keep", "2024-03-01T01:00"), "Complete", "2024-03-01T01:30")
        operator.set_clock("2024-03-01T01:30")
        wait_for("the first run recorded", lambda: [h["state"] for h in cluster.status("keep").get("history", [])]
                 == ["succeeded"])
        operator.set_clock("2024-03-01T02:00")
        wait_for("keep's second Job", lambda: job_of("keep", "2024-03-01T02:00") in cluster.job_names("keep"))
        cluster.finish_job(job_of("keep", "2024-03-01T02:00"), "Complete", "2024-03-01T02:05")
        operator.set_clock("2024-03-01T02:05")  # retention (successfulJobsHistoryLimit: 1): jobs delete
        wait_for("the old run's Job deleted",
                 lambda: cluster.job_names("keep") == [job_of("keep", "2024-03-01T02:00")])
        status = cluster.status("keep")
        assert [h["name"] for h in status["history"]] == [job_of("keep", "2024-03-01T02:00")]
        wait_for("two Launched events",  # events create
                 lambda: [reason for reason, _ in cluster.events("keep")].count("Launched") == 2)

        # Leader election in the release namespace, as the downward API names it.
        lease = client.CoordinationV1Api(cluster.batch.api_client).read_namespaced_lease("cronctl-operator", SYSTEM)
        assert lease.spec.holder_identity == "cronctl-7d9f-abcde"
        # What the probes and a scraper would reach in the Pod.
        assert get(f"http://127.0.0.1:{cluster_wide.health_port}/healthz")[0] == 200
        status_code, metrics = get(f"http://127.0.0.1:{cluster_wide.metrics_port}/metrics")
        assert status_code == 200 and "cronctl" in metrics
    finally:
        operator.stop()
        print(operator.log()[-6000:])
    assert forbidden_lines(operator.log()) == [], "the operator was refused something the chart should grant"


AS_OPERATOR_ALLOWED = [
    ("list", "cronschedules.cronctl.dev", "--all-namespaces"),
    ("watch", "cronschedules.cronctl.dev", "--all-namespaces"),
    ("get", "cronschedules.cronctl.dev", "-n", "default"),
    ("patch", "cronschedules.cronctl.dev", "--subresource=status", "-n", "default"),
    ("update", "cronschedules.cronctl.dev", "--subresource=finalizers", "-n", "default"),  # blockOwnerDeletion
    ("create", "jobs.batch", "-n", "default"),
    ("delete", "jobs.batch", "-n", "default"),
    ("patch", "jobs.batch", "-n", "default"),
    ("get", "jobs.batch", "-n", "default"),
    ("watch", "jobs.batch", "--all-namespaces"),
    ("create", "events", "-n", "default"),
    ("patch", "events", "-n", "default"),
    ("create", "leases.coordination.k8s.io", "-n", SYSTEM),
    ("get", "leases.coordination.k8s.io/cronctl-operator", "-n", SYSTEM),
    ("update", "leases.coordination.k8s.io/cronctl-operator", "-n", SYSTEM),
]
AS_OPERATOR_REFUSED = [
    ("create", "pods", "-n", "default"),
    ("create", "pods", "-n", SYSTEM),
    ("get", "secrets", "-n", SYSTEM),
    ("list", "secrets", "--all-namespaces"),
    ("get", "configmaps", "-n", "default"),
    ("create", "cronschedules.cronctl.dev", "-n", "default"),
    ("update", "cronschedules.cronctl.dev", "-n", "default"),
    ("patch", "cronschedules.cronctl.dev", "-n", "default"),
    ("delete", "cronschedules.cronctl.dev", "-n", "default"),
    ("update", "cronschedules.cronctl.dev", "--subresource=status", "-n", "default"),
    ("update", "jobs.batch", "-n", "default"),
    ("patch", "jobs.batch", "--subresource=status", "-n", "default"),
    ("deletecollection", "jobs.batch", "-n", "default"),
    ("create", "cronjobs.batch", "-n", "default"),
    ("delete", "events", "-n", "default"),
    ("list", "events", "-n", "default"),
    ("get", "leases.coordination.k8s.io/kube-controller-manager", "-n", SYSTEM),
    ("update", "leases.coordination.k8s.io/someone-else", "-n", SYSTEM),
    ("delete", "leases.coordination.k8s.io/cronctl-operator", "-n", SYSTEM),
    ("create", "leases.coordination.k8s.io", "-n", "default"),
    ("create", "customresourcedefinitions.apiextensions.k8s.io"),
    ("delete", "customresourcedefinitions.apiextensions.k8s.io"),
    ("list", "namespaces"),
    ("get", "nodes"),
    ("create", "roles.rbac.authorization.k8s.io", "-n", SYSTEM),
    ("create", "clusterrolebindings.rbac.authorization.k8s.io"),
    ("create", "serviceaccounts/token", "-n", SYSTEM),
    ("impersonate", "users"),
]


@pytest.mark.parametrize("request_", AS_OPERATOR_ALLOWED, ids=" ".join)
def test_the_service_account_can(control_plane: Any, cluster_wide: Install, request_: tuple[str, ...]) -> None:
    assert can_i(control_plane, cluster_wide, *request_)


@pytest.mark.parametrize("request_", AS_OPERATOR_REFUSED, ids=" ".join)
def test_the_service_account_cannot(control_plane: Any, cluster_wide: Install, request_: tuple[str, ...]) -> None:
    assert not can_i(control_plane, cluster_wide, *request_)


def test_the_rendered_chart_passes_server_side_validation_and_prints_its_notes(control_plane: Any, helm: Path,
                                                                             system_namespace: str,
                                                                             teams: dict[str, str]) -> None:
    """`helm install --dry-run=server`: every object, the Deployment too, as the API server validates it."""
    from ..charts.operator_chart import CHART

    for release, extra in (("dry-cluster", []), ("dry-teams", ["--set", f"watchNamespaces={{{teams['team-a']}}}"])):
        result = kubectl_helm(helm, control_plane, "install", release, str(CHART), "--namespace", SYSTEM,
                              "--dry-run=server", "--set", "crds.enabled=false", *extra)
        assert result.returncode == 0, result.stderr
        notes = result.stdout.split("NOTES:", 1)[1]
        for text in ("rollout status deployment/", "kubectl get cronschedules", "/metrics",
                     "get lease cronctl-operator"):
            assert text in notes, notes
    assert f"only these namespaces (a Role in each, nothing cluster-wide): {teams['team-a']}" in notes


def kubectl_helm(helm: Path, cp: Any, *args: str) -> Any:
    import subprocess

    return subprocess.run([str(helm), "--kubeconfig", str(cp.kubeconfig), *args], capture_output=True, text=True,
                          timeout=120)


# -- the namespaced install ----------------------------------------------------------------------------------------


def test_a_namespaced_install_grants_nothing_cluster_wide(control_plane: Any, namespaced: Install,
                                                          teams: dict[str, str]) -> None:
    for watched in (teams["team-a"], teams["team-b"]):
        for verb, resource in (("list", "cronschedules.cronctl.dev"), ("create", "jobs.batch"),
                               ("delete", "jobs.batch"), ("create", "events")):
            assert can_i(control_plane, namespaced, verb, resource, "-n", watched), (verb, resource, watched)
    for verb, resource in (("list", "cronschedules.cronctl.dev"), ("get", "cronschedules.cronctl.dev"),
                           ("create", "jobs.batch"), ("list", "jobs.batch"), ("delete", "jobs.batch"),
                           ("create", "events")):
        assert not can_i(control_plane, namespaced, verb, resource, "-n", teams["elsewhere"]), (verb, resource)
        if (verb, resource) != ("create", "events"):  # in its own namespace: the ClockSkew Warning on its Lease
            assert not can_i(control_plane, namespaced, verb, resource, "-n", SYSTEM), (verb, resource)
    assert not can_i(control_plane, namespaced, "patch", "events", "-n", SYSTEM)
    assert not can_i(control_plane, namespaced, "list", "cronschedules.cronctl.dev", "--all-namespaces")
    assert not can_i(control_plane, namespaced, "delete", "cronschedules.cronctl.dev", "-n", teams["team-a"])
    assert not can_i(control_plane, namespaced, "create", "pods", "-n", teams["team-a"])
    assert not can_i(control_plane, namespaced, "get", "secrets", "-n", teams["team-a"])
    assert not can_i(control_plane, namespaced, "list", "customresourcedefinitions.apiextensions.k8s.io")
    assert can_i(control_plane, namespaced, "update", "leases.coordination.k8s.io/cronctl-teams", "-n", SYSTEM)
    assert not can_i(control_plane, namespaced, "update", "leases.coordination.k8s.io/cronctl-operator", "-n", SYSTEM)
    bindings = json.loads(kubectl(control_plane, "get", "clusterrolebindings", "-o", "json").stdout)["items"]
    assert not [b["metadata"]["name"] for b in bindings for s in b.get("subjects") or []
                if s.get("kind") == "ServiceAccount" and s.get("name") == namespaced.service_account]


def test_the_operator_runs_in_its_namespaces_under_the_namespaced_rbac(control_plane: Any, namespaced: Install,
                                                                       teams: dict[str, str],
                                                                       tmp_path: Path) -> None:
    watched, outside = Cluster(control_plane, teams["team-a"]), Cluster(control_plane, teams["elsewhere"])
    operator = namespaced.operator(control_plane, teams["team-a"], tmp_path, "cronctl-teams-5c6d-fghij")
    operator.set_clock("2024-03-01T00:00")
    operator.start()
    try:
        watched.apply(schedule_manifest("mine", "*/10 * * * *"))
        outside.apply(schedule_manifest("theirs", "*/10 * * * *"))
        wait_for("mine's status or a refusal",
                 lambda: forbidden_lines(operator.log()) or watched.status("mine").get("nextFireTime"))
        refused = forbidden_lines(operator.log())
        if refused and all(KOPF_SCANNING.search(line) for line in refused):
            pytest.xfail("kopf's resource scanning lists namespaces and CRDs at the cluster scope, which a "
                         "namespaced install does not grant: 403s, then a ~54 s stall before kopf falls back. "
                         "The operator must set settings.scanning.disabled = True in its startup handler.")
        operator.set_clock("2024-03-01T00:10")
        wait_for("a launch in the watched namespace",
                 lambda: watched.job_names("mine") == [job_of("mine", "2024-03-01T00:10")])
        assert outside.status("theirs") == {} and outside.job_names("theirs") == []
    finally:
        operator.stop()
        print(operator.log()[-6000:])
    assert forbidden_lines(operator.log()) == [], "the operator was refused something the chart should grant"


# -- helm test ---------------------------------------------------------------------------------------------------


def answers(url: str) -> bool:
    try:
        return get(url)[0] == 200
    except OSError:
        return False


def test_helm_test_passes_against_the_operator_with_only_its_own_grants(control_plane: Any, helm: Path,
                                                                       cluster_wide: Install, namespace: str,
                                                                       tmp_path: Path) -> None:
    """kwok runs no containers, so the test Pod's own script runs here, as the test's
    ServiceAccount (its Role applied from the chart), with the Pod's environment and the health
    Service's address moved to the operator's loopback port."""
    import subprocess
    import sys

    hooks = helm_test_objects(helm, {"crds": {"enabled": False, "keep": True}, "healthPort": cluster_wide.health_port})
    grants_of_test = [doc for doc in hooks if doc["kind"] in ("ServiceAccount", "Role", "RoleBinding")]
    kubectl(control_plane, "apply", "-f", "-", input=yaml.safe_dump_all(grants_of_test))
    (pod,) = of_kind(hooks, "Pod")
    (container,) = pod["spec"]["containers"]
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["CRONCTL_HEALTH_URL"].endswith(f":{cluster_wide.health_port}/healthz")
    account = token_kubeconfig(control_plane, pod["spec"]["serviceAccountName"], tmp_path / "test.kubeconfig")
    operator = cluster_wide.operator(control_plane, namespace, tmp_path, "cronctl-7d9f-tests")
    operator.start()

    def helm_test(health_url: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *container["command"][1:], container["args"][0]], text=True,
                              capture_output=True, timeout=60,
                              env={**control_plane.env(), "KUBECONFIG": str(account),
                                   "CRONCTL_HEALTH_URL": health_url, "CRONCTL_NAMESPACE": SYSTEM})
    try:
        health = f"http://127.0.0.1:{cluster_wide.health_port}/healthz"
        wait_for("the operator's health endpoint", lambda: answers(health), timeout=60)
        passed = helm_test(health)
        assert passed.returncode == 0, passed.stdout + passed.stderr
        assert f"a CronSchedule is accepted in {SYSTEM}" in passed.stdout
        stored = kubectl(control_plane, "get", "cronschedules", "-n", SYSTEM, "-o", "name").stdout
        assert "helm-test-accepted" not in stored, "the dry run stored the CronSchedule"

        failed = helm_test(f"http://127.0.0.1:{free_port()}/healthz")
        assert failed.returncode == 1 and "FAIL: the operator's health endpoint" in failed.stdout
    finally:
        operator.stop()
        kubectl(control_plane, "delete", "-f", "-", "--ignore-not-found", check=False,
                input=yaml.safe_dump_all(grants_of_test))


# -- OwnerReferencesPermissionEnforcement (on in the test API server, as on OpenShift) ------------------------------

FINALIZERS = "cronschedules/finalizers"
REFUSED_OWNER = "cannot set blockOwnerDeletion"  # how the admission plugin words its refusal


def less_finalizers(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rules`` without the cronschedules/finalizers grant: the chart as it was before it."""
    trimmed = [{**rule, "resources": [r for r in rule["resources"] if r != FINALIZERS]} for rule in rules]
    assert trimmed != rules, "the chart's rules grant no cronschedules/finalizers"
    return [rule for rule in trimmed if rule["resources"]]


def bind_in(cp: Any, namespace: str, name: str, subject: dict[str, str], role: dict[str, Any] | None = None,
            cluster_role: str | None = None) -> None:
    """A RoleBinding in ``namespace`` of ``subject`` to a Role made of ``role``'s rules, or to ``cluster_role``."""
    docs: list[dict[str, Any]] = []
    if role is not None:
        docs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                     "metadata": {"name": name, "namespace": namespace}, "rules": role["rules"]})
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role" if role is not None else "ClusterRole",
           "name": name if role is not None else cluster_role}
    docs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                 "metadata": {"name": name, "namespace": namespace}, "roleRef": ref, "subjects": [subject]})
    kubectl(cp, "apply", "-f", "-", input=yaml.safe_dump_all(docs))


def the_chart_role(installed: Install, name: str) -> dict[str, Any]:
    (role,) = [doc for doc in of_kind(installed.docs, "ClusterRole") if doc["metadata"]["name"] == name]
    return role


def test_a_job_blocking_its_schedules_deletion_needs_the_finalizers_rule(control_plane: Any, cluster_wide: Install,
                                                                        namespace: str, tmp_path: Path) -> None:
    """The operator under the chart's RBAC launches a Job owned by its CronSchedule with
    blockOwnerDeletion; the same Job, asked by an identity with the chart's rules less
    cronschedules/finalizers, is refused 403 in the admission plugin's words (and is created
    once it does not block the deletion: the refusal is about the finalizers, nothing else)."""
    from kubernetes.client.exceptions import ApiException

    cluster = Cluster(control_plane, namespace)
    wait_for("other tests' namespaces to be gone", lambda: no_namespace_terminating(control_plane), timeout=120)
    operator = cluster_wide.operator(control_plane, namespace, tmp_path, "cronctl-7d9f-owner")
    operator.set_clock("2024-03-01T00:00")
    operator.start()
    try:
        cluster.apply(schedule_manifest("owned", "*/10 * * * *"))
        wait_for("owned's status", ready(cluster, "owned"))
        operator.set_clock("2024-03-01T00:10")
        launched = job_of("owned", "2024-03-01T00:10")
        wait_for("the Job of 00:10", lambda: cluster.job_names("owned") == [launched])
    finally:
        operator.stop()
        print(operator.log()[-6000:])
    assert forbidden_lines(operator.log()) == [], "the operator was refused something the chart should grant"
    (owner,) = cluster.batch.read_namespaced_job(launched, namespace).metadata.owner_references
    assert (owner.kind, owner.name, owner.block_owner_deletion) == ("CronSchedule", "owned", True)

    account = f"before-finalizers-{uuid.uuid4().hex[:6]}"
    kubectl(control_plane, "create", "serviceaccount", account, "-n", SYSTEM)
    trimmed = {"rules": less_finalizers(the_chart_role(cluster_wide, "cronctl")["rules"])}
    bind_in(control_plane, namespace, account, {"kind": "ServiceAccount", "name": account, "namespace": SYSTEM},
            role=trimmed)
    before = client.BatchV1Api(config_client(token_kubeconfig(control_plane, account, tmp_path / "before.kubeconfig")))
    reference = {"apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name, "uid": owner.uid,
                 "controller": True, "blockOwnerDeletion": True}
    wait_for("the trimmed Role in force", lambda: can_i_as(control_plane, f"system:serviceaccount:{SYSTEM}:{account}",
                                                           "create", "jobs.batch", "-n", namespace))
    with pytest.raises(ApiException) as refused:
        before.create_namespaced_job(namespace, a_job("owned-copy", reference))
    assert refused.value.status == 403, refused.value.body
    message = json.loads(refused.value.body)["message"]
    assert REFUSED_OWNER in message and "finalizers" in message, message
    made = before.create_namespaced_job(namespace, a_job("owned-copy", {**reference, "blockOwnerDeletion": False}))
    assert made.metadata.owner_references[0].uid == owner.uid
    kubectl(control_plane, "delete", "serviceaccount", account, "-n", SYSTEM, check=False)


def test_the_import_adopts_a_cronjobs_job_with_the_edit_roles_and_the_finalizers_rule(
        control_plane: Any, cluster_wide: Install, namespace: str, tmp_path: Path) -> None:
    """`kubectl cronctl import` as a person with Kubernetes' edit rules and the chart's
    cronctl-edit: the CronJob's active Job is adopted by the CronSchedule (an ownerReference
    with blockOwnerDeletion). With cronctl-edit less cronschedules/finalizers the adoption is
    refused in the admission plugin's words; run again with the chart's role, it is done."""
    cluster = Cluster(control_plane, namespace)
    cronjob = cluster.batch.create_namespaced_cron_job(namespace, {
        "metadata": {"name": "nightly"}, "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}}})
    scheduled = "2024-03-01T03:00:00Z"
    active = a_job(f"nightly-{minutes('2024-03-01T03:00')}", {
        "apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly", "uid": cronjob.metadata.uid,
        "controller": True, "blockOwnerDeletion": True})
    active["metadata"]["annotations"] = {"batch.kubernetes.io/cronjob-scheduled-timestamp": scheduled}
    cluster.batch.create_namespaced_job(namespace, active)

    def person(name: str, cronctl_edit: dict[str, Any] | None) -> Path:
        """A user with the built-in view and edit roles' own rules (no aggregation runs here) and
        the chart's cronctl-view, and cronctl-edit or the Role ``cronctl_edit`` in its place."""
        user = f"{name}-{namespace}"
        subject = {"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}
        for role in ("system:aggregate-to-view", "system:aggregate-to-edit", "cronctl-view"):
            bind_in(control_plane, namespace, f"{name}-{role.replace(':', '-')}", subject, cluster_role=role)
        if cronctl_edit is None:
            bind_in(control_plane, namespace, f"{name}-cronctl-edit", subject, cluster_role="cronctl-edit")
        else:
            bind_in(control_plane, namespace, f"{name}-cronctl-edit", subject, role=cronctl_edit)
        wait_for(f"{user}'s roles in force", lambda: can_i_as(control_plane, user, "create",
                                                              "cronschedules.cronctl.dev", "-n", namespace))
        return control_plane.user_kubeconfig(user)

    edit = the_chart_role(cluster_wide, "cronctl-edit")
    before = person("before", {"rules": less_finalizers(edit["rules"])})
    now = person("importer", None)

    refused = import_as(control_plane, before, namespace, "cronjob/nightly")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert REFUSED_OWNER in refused.stderr and "finalizers" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    done = import_as(control_plane, now, namespace, "cronjob/nightly")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 active Job adopted" in done.stdout, done.stdout
    schedule = cluster.schedule("nightly")
    adopted = cluster.batch.read_namespaced_job(active["metadata"]["name"], namespace).metadata
    assert [(o.kind, o.uid, o.block_owner_deletion) for o in adopted.owner_references] == [
        ("CronSchedule", schedule["metadata"]["uid"], True)]
    assert adopted.labels["cronctl.dev/run"] == "1"


def a_job(name: str, owner: dict[str, Any]) -> dict[str, Any]:
    """A suspended Job owned by ``owner`` (nothing runs it: no job controller on this control plane)."""
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "ownerReferences": [owner]},
            "spec": {"suspend": True, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}


def config_client(kubeconfig: Path) -> client.ApiClient:
    from kubernetes import config

    return config.new_client_from_config(config_file=str(kubeconfig))


def can_i_as(cp: Any, user: str, *request: str) -> bool:
    return kubectl(cp, "auth", "can-i", *request, f"--as={user}", check=False).returncode == 0


def import_as(cp: Any, kubeconfig: Path, namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**cp.env(), "KUBECONFIG": str(kubeconfig),
           "PYTHONPATH": str(ROOT / "operator") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "cronctl.plugin", "import", *args, "-n", namespace], env=env,
                          capture_output=True, text=True, timeout=60)
