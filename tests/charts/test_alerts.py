"""The chart's alerting rules, checked by Prometheus' own tool.

``promtool`` is built from the Go module proxy by ``scripts/build-control-plane.sh
--with-promtool`` (``scripts/test`` asks for it), into the control plane's
cache. ``promtool check rules`` validates charts/cronctl/files/alerts.yaml
(PromQL, templates, durations) and ``promtool test rules`` runs
tests/charts/alerts_test.yaml: for every alert, series that fire it and series
that do not. The other tests keep the file, the tests, the runbook and the
chart's PrometheusRule in step.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from .conftest import BUILD_SCRIPT, CHARTS, REPO_ROOT
from .operator_chart import of_kind, render, template

ALERTS = CHARTS / "cronctl" / "files" / "alerts.yaml"
ALERT_TESTS = Path(__file__).parent / "alerts_test.yaml"
RUNBOOK = REPO_ROOT / "docs" / "runbook.md"


@pytest.fixture(scope="session")
def promtool() -> Path:
    """The path of the promtool binary; builds it (minutes, once) when the cache lacks it."""
    bin_dir = Path(subprocess.run(["bash", str(BUILD_SCRIPT), "--print-bin-dir"], check=True,
                                  capture_output=True, text=True).stdout.strip().splitlines()[-1])
    if subprocess.run(["bash", str(BUILD_SCRIPT), "--with-promtool", "--check"], capture_output=True).returncode:
        subprocess.run(["bash", str(BUILD_SCRIPT), "--with-promtool"], check=True)
    binary = bin_dir / "promtool"
    assert binary.is_file(), f"{binary}: the build script did not produce promtool"
    return binary


def alerting_rules() -> list[dict]:
    return [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]


def run(promtool: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(promtool), *args], cwd=ALERT_TESTS.parent, capture_output=True, text=True)


def test_promtool_check_rules(promtool: Path) -> None:
    result = run(promtool, "check", "rules", "--lint=all", "--lint-fatal", str(ALERTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alerting_rules())} rules found" in result.stdout


def test_promtool_test_rules(promtool: Path) -> None:
    result = run(promtool, "test", "rules", ALERT_TESTS.name)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_is_tested_firing_and_not_firing() -> None:
    tests = yaml.safe_load(ALERT_TESTS.read_text())
    assert tests["rule_files"] == [str(Path("..") / ".." / ALERTS.relative_to(REPO_ROOT))]
    fired: set[str] = set()
    quiet: set[str] = set()
    for case in tests["tests"]:
        for check in case["alert_rule_test"]:
            (fired if check["exp_alerts"] else quiet).add(check["alertname"])
    names = {rule["alert"] for rule in alerting_rules()}
    assert names - fired == set(), "alerts with no test that fires them"
    assert names - quiet == set(), "alerts with no test where they stay quiet"


def test_every_alert_says_what_and_where_its_runbook_is() -> None:
    anchors = {heading_anchor(line) for line in RUNBOOK.read_text().splitlines() if line.startswith("## ")}
    for rule in alerting_rules():
        annotations = rule["annotations"]
        assert set(annotations) == {"summary", "description", "runbook_url"}, rule["alert"]
        assert rule["labels"]["severity"] in ("warning", "critical"), rule["alert"]
        assert annotations["runbook_url"] == f"{published_runbook()}#{rule['alert'].lower()}"
        assert rule["alert"].lower() in anchors, f"docs/runbook.md has no section ## {rule['alert']}"


def published_runbook() -> str:
    """Where the project publishes docs/runbook.md: under Chart.yaml's home, as mkdocs writes it."""
    home = yaml.safe_load((CHARTS / "cronctl" / "Chart.yaml").read_text())["home"]
    assert urlparse(home).scheme == "https" and home.endswith("/")
    return f"{home}runbook/"


def test_every_alert_in_the_file_is_in_the_observability_page_with_its_runbook() -> None:
    page = (REPO_ROOT / "docs" / "observability.md").read_text()
    listed = re.findall(r"^\| \[`(Cronctl\w+)`\]\(runbook\.md#(\w+)\)", page, re.MULTILINE)
    assert sorted(listed) == sorted((rule["alert"], rule["alert"].lower()) for rule in alerting_rules())


def test_the_prometheus_rule_links_the_published_runbook_by_default_absolute(helm: Path) -> None:
    """An alert's runbook_url is an absolute link that works from Alertmanager or PagerDuty."""
    values = yaml.safe_load((CHARTS / "cronctl" / "values.yaml").read_text())
    assert values["metrics"]["prometheusRule"]["runbookBaseURL"] == published_runbook()
    [rule] = of_kind(render(helm, MONITORING), "PrometheusRule")
    links = [r["annotations"]["runbook_url"] for group in rule["spec"]["groups"] for r in group["rules"]]
    assert links and all(urlparse(link).scheme == "https" and urlparse(link).fragment for link in links)


def test_a_runbook_base_that_is_no_absolute_url_is_refused(helm: Path) -> None:
    values = {"metrics": {"prometheusRule": {"enabled": True, "runbookBaseURL": "docs/runbook.md"}}}
    result = template(helm, values, check=False)
    assert result.returncode != 0 and "runbookBaseURL" in result.stderr


def heading_anchor(line: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")


MONITORING = {"metrics": {"service": {"enabled": True}, "serviceMonitor": {"enabled": True},
                          "prometheusRule": {"enabled": True}, "dashboard": {"enabled": True}}}


def test_monitoring_is_opt_in(helm: Path) -> None:
    kinds = {doc["kind"] for doc in render(helm)}
    assert not kinds & {"ServiceMonitor", "PrometheusRule"}
    assert not [doc for doc in of_kind(render(helm), "ConfigMap") if doc["metadata"]["name"].endswith("-dashboard")]


def test_the_prometheus_rule_is_the_checked_file(helm: Path) -> None:
    [rule] = of_kind(render(helm, MONITORING), "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["namespace"] == "cronctl-system"
    assert rule["spec"]["groups"] == yaml.safe_load(ALERTS.read_text())["groups"]


def test_the_prometheus_rule_takes_labels_drops_alerts_and_links_the_published_runbook(helm: Path) -> None:
    values = {"metrics": {"prometheusRule": {
        "enabled": True, "labels": {"release": "kube-prometheus-stack"},
        "additionalAlertLabels": {"team": "platform", "severity": "page"},
        "disabledAlerts": ["CronctlNoLeader"], "runbookBaseURL": "https://docs.example.org/cronctl/runbook.md"}}}
    [rule] = of_kind(render(helm, values), "PrometheusRule")
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    alerts = [r for group in rule["spec"]["groups"] for r in group["rules"]]
    assert {r["alert"] for r in alerts} == {r["alert"] for r in alerting_rules()} - {"CronctlNoLeader"}
    late = next(r for r in alerts if r["alert"] == "CronctlLaunchLate")
    assert late["labels"] == {"severity": "warning", "team": "platform"}  # an alert's own severity is kept
    assert late["annotations"]["runbook_url"] == "https://docs.example.org/cronctl/runbook.md#cronctllaunchlate"
    assert late["annotations"]["summary"] == next(r for r in alerting_rules()
                                                  if r["alert"] == "CronctlLaunchLate")["annotations"]["summary"]


def test_the_service_monitor_scrapes_the_metrics_service(helm: Path) -> None:
    docs = render(helm, MONITORING)
    [monitor] = of_kind(docs, "ServiceMonitor")
    [service] = [doc for doc in of_kind(docs, "Service") if doc["metadata"]["name"].endswith("-metrics")]
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["cronctl-system"]}
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint == {"port": "metrics", "path": "/metrics"}
    assert endpoint["port"] in [port["name"] for port in service["spec"]["ports"]]


def test_a_service_monitor_without_the_service_is_refused(helm: Path) -> None:
    result = template(helm, {"metrics": {"serviceMonitor": {"enabled": True}}}, check=False)
    assert result.returncode != 0
    assert "metrics.serviceMonitor.enabled needs metrics.enabled and metrics.service.enabled" in result.stderr


def test_the_dashboard_config_map_holds_the_dashboard_for_grafanas_sidecar(helm: Path) -> None:
    [config_map] = [doc for doc in of_kind(render(helm, MONITORING), "ConfigMap")
                    if doc["metadata"]["name"].endswith("-dashboard")]
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    dashboard = (CHARTS / "cronctl" / "files" / "dashboard.json").read_text()
    assert json.loads(config_map["data"]["cronctl.json"]) == json.loads(dashboard)


def test_the_dashboard_drills_down_by_namespace_and_schedule_and_has_a_delay_heat_map() -> None:
    dashboard = json.loads((CHARTS / "cronctl" / "files" / "dashboard.json").read_text())
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert {"datasource", "namespace", "schedule"} <= variables
    panels = dashboard["panels"]
    assert [p["title"] for p in panels if p["type"] == "row"] == ["Fleet", "Operator and pools", "API server requests",
                                                                  "Schedule: $schedule"]
    [heatmap] = [p for p in panels if p["type"] == "heatmap"]
    assert "cronctl_launch_delay_seconds_bucket" in heatmap["targets"][0]["expr"]
    assert heatmap["targets"][0]["format"] == "heatmap"
    assert len({p["id"] for p in panels}) == len(panels)
    drill_down = [t["expr"] for p in panels for t in p.get("targets", []) if "$schedule" in p["title"]]
    assert drill_down and all('schedule=~"$schedule"' in expr for expr in drill_down)


def test_the_dashboard_shows_the_leader_version_reconcile_errors_skew_misses_and_pools() -> None:
    """A panel reads each (the issue's missing ones); no two panels overlap."""
    panels = json.loads((CHARTS / "cronctl" / "files" / "dashboard.json").read_text())["panels"]
    exprs = " ".join(t["expr"] for p in panels for t in p.get("targets", []))
    for metric in ("cronctl_leader", "cronctl_build_info", "cronctl_reconcile_errors_total", "cronctl_reconciles_failing",
                   "cronctl_clock_skew_seconds", "cronctl_missed_total", "cronctl_pool_queued", "cronctl_pool_busy",
                   "cronctl_pool_oldest_wait_seconds"):
        assert re.search(rf"\b{metric}\b", exprs), f"no panel reads {metric}"
    cells = [(x, y) for p in panels for x in range(p["gridPos"]["x"], p["gridPos"]["x"] + p["gridPos"]["w"])
             for y in range(p["gridPos"]["y"], p["gridPos"]["y"] + p["gridPos"]["h"])]
    assert len(cells) == len(set(cells)), "panels overlap"


def test_the_dashboard_shows_api_requests_by_code_and_their_latency_by_verb() -> None:
    """The operator's requests to the API server (issue 46): their rate by code, p50 and p99 latency by verb."""
    panels = json.loads((CHARTS / "cronctl" / "files" / "dashboard.json").read_text())["panels"]
    exprs = {target["expr"] for panel in panels for target in panel.get("targets", [])}
    assert "sum by (code) (rate(cronctl_api_requests_total[$__rate_interval]))" in exprs
    for quantile in ("0.5", "0.99"):
        assert (f"histogram_quantile({quantile}, sum by (verb, le) (rate(cronctl_api_request_duration_seconds_bucket"
                "[$__rate_interval])))") in exprs
