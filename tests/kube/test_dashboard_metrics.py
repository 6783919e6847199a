"""The dashboard and the alerts query only what the operator really exports.

The operator runs as in test_metrics.py (``--metrics-address`` on a loopback
port, an injected clock) and is made to count every kind of series the
dashboard (charts/cronctl/files/dashboard.json) and the alerts
(charts/cronctl/files/alerts.yaml) use: launches, a success, a failure, a
Forbid skip, a timeout, an overflow, launch delays, the gauges. Then one
scrape of its /metrics must hold every metric name of every query, each
with the label names its matchers use, and the labels each query groups by.

Metric names are read from PromQL conservatively: an identifier followed by
``{`` or ``[`` or standing alone, not a function (followed by ``(``), not a
keyword, not inside a grouping clause (``by (...)``), a string or a range;
histogram suffixes (``_bucket``, ``_sum``, ``_count``) are names of their own
in the exposition. Grafana's ``label_values(SELECTOR, LABEL)`` variables
count too.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from .helpers import Cluster, Operator, job_of, ready, schedule_manifest, wait_for
from .test_metrics import free_port, scrape

pytestmark = pytest.mark.cluster

CHART_FILES = Path(__file__).resolve().parents[2] / "charts" / "cronctl" / "files"
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "offset",
            "bool", "inf", "nan", "atan2",
            # aggregation operators, whose clause may stand before their parenthesis
            "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk",
            "quantile", "limitk", "limit_ratio"}
GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
SELECTOR = re.compile(r"(?<![\w$.:])([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?")
MATCHER_LABEL = re.compile(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)")
LABEL_VALUES = re.compile(r"^\s*label_values\((.*),\s*([a-zA-Z_]\w*)\s*\)\s*$")


def selectors(expr: str) -> list[tuple[str, set[str]]]:
    """(metric name, label names of its matchers) for each metric an expression reads."""
    text = STRING.sub('""', expr)
    text = GROUPING.sub(" ", text)  # "sum by (x) (" reads as the function call "sum ("
    text = re.sub(r"\[[^\]]*\]", "[]", text)  # ranges and subqueries, Grafana's $__range included
    found = []
    for match in SELECTOR.finditer(text):
        name, matchers = match.group(1), match.group(2) or ""
        if name.lower() in KEYWORDS or text[match.end():].lstrip().startswith("("):
            continue
        found.append((name, set(MATCHER_LABEL.findall(matchers))))
    return found


def grouping_labels(expr: str) -> set[str]:
    """The label names of an expression's by/without/on/ignoring/group_* clauses."""
    return {label.strip() for _, labels in GROUPING.findall(STRING.sub('""', expr))
            for label in labels.split(",") if label.strip()}


def dashboard_queries() -> list[tuple[str, str]]:
    """(where, PromQL) for every panel target and query variable of the dashboard."""
    dashboard = json.loads((CHART_FILES / "dashboard.json").read_text())
    queries = [(f"panel {panel['title']!r}", target["expr"]) for panel in dashboard["panels"]
               for target in panel.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
            queries.append((f"variable ${variable['name']}", query))
    return queries


def alert_queries() -> list[tuple[str, str]]:
    groups = yaml.safe_load((CHART_FILES / "alerts.yaml").read_text())["groups"]
    return [(f"alert {rule['alert']}", rule["expr"]) for group in groups for rule in group["rules"]]


def test_the_parser_reads_names_and_matchers_only() -> None:
    expr = ('histogram_quantile(0.99, sum by (namespace, le) (rate(cronctl_launch_delay_seconds_bucket'
            '{namespace=~"$namespace", le!="x{y}"}[$__rate_interval]))) > 10 and on (namespace) '
            'cronctl_schedules offset 15m unless absent(cronctl_active_runs)')
    assert selectors(expr) == [("cronctl_launch_delay_seconds_bucket", {"namespace", "le"}),
                               ("cronctl_schedules", set()), ("cronctl_active_runs", set())]
    assert grouping_labels(expr) == {"namespace", "le"}


@pytest.fixture
def counting_operator(control_plane: Any, namespace: str, tmp_path: Path) -> Iterator[tuple[Operator, str]]:
    port = free_port()
    op = Operator(control_plane, namespace, tmp_path, extra_args=["--metrics-address", f"127.0.0.1:{port}"])
    op.set_clock("2024-03-01T00:00")
    op.start()
    yield op, f"http://127.0.0.1:{port}/metrics"
    op.stop()
    print(op.log()[-6000:])


def labels_by_metric(url: str) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = defaultdict(set)
    for name, labels in scrape(url):
        seen[name] |= {label for label, _ in labels}
    return dict(seen)


def test_every_dashboard_and_alert_query_reads_exported_metrics(counting_operator: tuple[Operator, str],
                                                                cluster: Cluster, namespace: str) -> None:
    operator, url = counting_operator
    cluster.apply(schedule_manifest("ok", "*/10 * * * *"))
    cluster.apply(schedule_manifest("bad", "*/10 * * * *"))
    cluster.apply(schedule_manifest("slow", "*/10 * * * *", "Forbid", timeoutMinutes=15))
    cluster.apply(schedule_manifest("minutely", "* * * * *", missedSchedulesLimit=3))
    cluster.apply(json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronPool", "metadata": {"name": "reports"},
                              "spec": {"workers": 1}}))
    cluster.apply(schedule_manifest("pooled", "*/10 * * * *", pool="reports"))
    cluster.apply(schedule_manifest("behind", "*/5 * * * *"))  # at 00:10, 00:05 is passed over: a missed time
    for name in ("ok", "bad", "slow", "minutely", "pooled", "behind"):
        wait_for(f"{name} seen", ready(cluster, name))

    def counted(metric: str, schedule: str) -> Any:
        return lambda: scrape(url).get((metric, (("namespace", namespace), ("schedule", schedule))))

    operator.set_clock("2024-03-01T00:10")  # 10 missed minutes: minutely overflows its limit of 3
    for name in ("ok", "bad", "slow"):
        wait_for(f"{name}'s Job", lambda: job_of(name, "2024-03-01T00:10") in cluster.job_names(name))
    wait_for("the overflow counted", counted("cronctl_overflows_total", "minutely"))
    wait_for("the missed time counted", counted("cronctl_missed_total", "behind"))
    wait_for("the pool's run started", lambda: scrape(url).get(
        ("cronctl_pool_wait_seconds_count", (("namespace", namespace), ("pool", "reports")))))
    cluster.finish_job(job_of("ok", "2024-03-01T00:10"), "Complete", "2024-03-01T00:10")
    cluster.finish_job(job_of("bad", "2024-03-01T00:10"), "Failed", "2024-03-01T00:10")
    wait_for("the success counted", counted("cronctl_successes_total", "ok"))
    wait_for("the failure counted", counted("cronctl_failures_total", "bad"))

    operator.set_clock("2024-03-01T00:20")  # slow's run is still active: Forbid skips 00:20
    wait_for("the skip counted", counted("cronctl_skips_total", "slow"))
    operator.set_clock("2024-03-01T00:26")  # slow's run reached its 15 minutes at 00:25
    wait_for("the timeout counted", counted("cronctl_timeouts_total", "slow"))

    exported = labels_by_metric(url)
    queries = dashboard_queries() + alert_queries()
    problems = []
    for where, expr in queries:
        read = selectors(expr)
        if (values := LABEL_VALUES.match(expr)) is not None:
            read = [(name, labels | {values.group(2)}) for name, labels in selectors(values.group(1))]
        if not read:
            problems.append(f"{where}: no metric found in {expr!r}")
        for name, labels in read:
            if name not in exported:
                problems.append(f"{where}: {name} is not in the operator's /metrics")
            elif missing := labels - exported[name]:
                problems.append(f"{where}: {name} has no label {sorted(missing)}")
        union = set().union(*(exported.get(name, set()) for name, _ in read))
        if missing := grouping_labels(expr) - union:
            problems.append(f"{where}: groups by {sorted(missing)}, which none of its metrics has")
    assert problems == [], "\n".join(problems)
    used = {name for _, expr in queries for name, _ in selectors(expr)}
    assert {"cronctl_launches_total", "cronctl_launch_delay_seconds_bucket", "cronctl_schedules",
            "cronctl_api_requests_total", "cronctl_api_request_duration_seconds_bucket"} <= used
