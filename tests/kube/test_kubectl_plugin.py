"""``kubectl cronctl`` against the test API server: each command run as users run it (a
subprocess, ``python -m cronctl.plugin``, the console script's module) with KUBECONFIG at the
test cluster, and checked against what the operator and the API server then hold."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import tomllib
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
import yaml

from .helpers import ROOT, Cluster, Operator, job_of, kubectl, minutes, ready, schedule_manifest, wait_for

pytestmark = pytest.mark.cluster


def plugin(cluster: Cluster, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = cluster.cp.env(PYTHONPATH=str(ROOT / "operator") + os.pathsep + os.environ.get("PYTHONPATH", ""),
                                 **env)
    return subprocess.run([sys.executable, "-m", "cronctl.plugin", *args], env=environment, capture_output=True,
                          text=True, timeout=60)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str], code: int = 1) -> str:
    assert result.returncode == code, result.stdout + result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kubectl-cronctl: "), result.stderr
    return lines[0]


def nightly(cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("nightly", "30 2 * * *", timeZone="+05:30", upcomingTimes=3))


def a_finished_run(operator: Operator, cluster: Cluster) -> dict[str, Any]:
    """``every10`` with its first run (00:10) succeeded at 00:12; its status then."""
    cluster.apply(schedule_manifest("every10", "*/10 * * * *"))
    wait_for("seen", ready(cluster, "every10"))
    operator.set_clock("2024-03-01T00:10")
    wait_for("the run", lambda: cluster.job_names("every10") == [job_of("every10", "2024-03-01T00:10")])
    cluster.finish_job(job_of("every10", "2024-03-01T00:10"), "Complete", "2024-03-01T00:12")
    operator.set_clock("2024-03-01T00:12")
    return wait_for("its history", lambda: (s := cluster.status("every10")).get("history") and s)


def test_trigger_makes_the_operator_launch_one_manual_job(operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("adhoc", "0 0 1 1 *"))
    wait_for("seen", ready(cluster, "adhoc"))
    operator.set_clock("2024-03-01T00:30")
    out = ok(plugin(cluster, "trigger", "adhoc", "-n", cluster.namespace))
    triggered = cluster.schedule("adhoc")["metadata"]
    value = triggered["annotations"]["cronctl.dev/trigger"]
    # who wrote the trigger, as kubectl names its own writes "kubectl-...", not "OpenAPI-Generator"
    assert "kubectl-cronctl" in {entry["manager"] for entry in triggered["managedFields"]}
    assert out.startswith(f"cronschedule {cluster.namespace}/adhoc triggered (cronctl.dev/trigger={value})")
    name = f"adhoc-{minutes('2024-03-01T00:30')}-manual"
    wait_for("the manual Job", lambda: cluster.job_names("adhoc") == [name])
    status = wait_for("answered", lambda: (s := cluster.status("adhoc")).get("lastTrigger") == value and s)
    assert [(run["name"], run["reason"]) for run in status["active"]] == [(name, "manual")]
    time.sleep(1)
    assert cluster.job_names("adhoc") == [name]  # answered once


def test_next_prints_the_status_times_in_utc_and_the_schedules_zone(operator: Operator, cluster: Cluster) -> None:
    nightly(cluster)
    wait_for("the next times", lambda: len(cluster.status("nightly").get("nextScheduleTimes") or []) == 3)
    out = ok(plugin(cluster, "-n", cluster.namespace, "next", "nightly"))
    assert out.splitlines() == [
        "TIME (UTC)             LOCAL TIME (+05:30)",
        "2024-03-01T21:00:00Z   2024-03-02T02:30:00+05:30",
        "2024-03-02T21:00:00Z   2024-03-03T02:30:00+05:30",
        "2024-03-03T21:00:00Z   2024-03-04T02:30:00+05:30",
    ]


def test_next_says_so_when_the_status_has_no_times_yet(cluster: Cluster) -> None:
    nightly(cluster)  # no operator: no status
    out = ok(plugin(cluster, "next", "nightly", "-n", cluster.namespace))
    assert out == (f"{cluster.namespace}/nightly: no next fire times in its status yet (the operator has not "
                   "reconciled it: is one running?)\n")


def test_history_after_a_finished_run_is_a_table(operator: Operator, cluster: Cluster) -> None:
    a_finished_run(operator, cluster)
    out = ok(plugin(cluster, "history", "every10", "-n", cluster.namespace))
    header, row = out.splitlines()
    assert header.split() == ["RUN", "STATE", "REASON", "SCHEDULED", "STARTED", "FINISHED", "ATTEMPTS", "FAILURE"]
    assert row.split() == ["1", "succeeded", "scheduled", "2024-03-01T00:10:00Z", "2024-03-01T00:10:00Z",
                           "2024-03-01T00:12:00Z", "1"]


def test_suspend_with_a_reason_shows_in_kubectl_get_and_resume_removes_it(operator: Operator,
                                                                          cluster: Cluster) -> None:
    nightly(cluster)
    wait_for("seen", ready(cluster, "nightly"))
    out = ok(plugin(cluster, "suspend", "nightly", "--reason", "db migration, ask #ops", "-n", cluster.namespace))
    assert out == (f"cronschedule {cluster.namespace}/nightly suspended (db migration, ask #ops): no scheduled "
                   "firing until kubectl cronctl resume\n")
    spec = cluster.schedule("nightly")["spec"]
    assert (spec["suspend"], spec["suspendReason"]) == (True, "db migration, ask #ops")

    def columns() -> str:
        return kubectl(cluster.cp, "get", "cronschedule", "nightly", "-n", cluster.namespace, "--no-headers",
                       "-o", "custom-columns=SUSPEND:.spec.suspend,REASON:.status.suspendReason").stdout.strip()

    wait_for("the reason in kubectl get", lambda: columns().split(None, 1) == ["true", "db migration, ask #ops"])
    printed = kubectl(cluster.cp, "get", "cronschedule", "nightly", "-o", "wide", "-n", cluster.namespace).stdout
    assert "SUSPEND REASON" in printed and "db migration, ask #ops" in printed

    out = ok(plugin(cluster, "resume", "nightly", "-n", cluster.namespace))
    assert out.startswith(f"cronschedule {cluster.namespace}/nightly resumed")
    spec = cluster.schedule("nightly")["spec"]
    assert spec["suspend"] is False and "suspendReason" not in spec
    assert "cronctl.dev/resume" in cluster.schedule("nightly")["metadata"]["annotations"]  # ends a pause too
    wait_for("no reason in kubectl get", lambda: columns().split() == ["false", "<none>"])


def test_describe_shows_spec_next_times_runs_conditions_and_events(operator: Operator, cluster: Cluster) -> None:
    a_finished_run(operator, cluster)
    wait_for("the Succeeded event", lambda: "Succeeded" in [reason for reason, _ in cluster.events("every10")])
    out = ok(plugin(cluster, "describe", "every10", "-n", cluster.namespace))
    lines = out.splitlines()
    assert lines[:2] == ["Name:               every10", f"Namespace:          {cluster.namespace}"]
    for expected in ("Schedule:           */10 * * * *", "Time Zone:          UTC",
                     "Concurrency Policy: Allow", "Suspend:            false",
                     "Last Schedule:      2024-03-01T00:10:00Z",
                     "Last Success:       2024-03-01T00:12:00Z   Last Failure: -   Failures In A Row: 0"):
        assert expected in lines
    section = {title: lines.index(title) for title in ("Next Fire Times:", "Active Runs:", "Last Runs:",
                                                       "Conditions:", "Events:")}
    assert list(section.values()) == sorted(section.values())
    assert lines[section["Next Fire Times:"] + 2].split() == ["2024-03-01T00:20:00Z", "2024-03-01T00:20:00+00:00"]
    assert lines[section["Active Runs:"] + 1] == "  <none>"
    assert lines[section["Last Runs:"] + 2].split()[:2] == ["1", "succeeded"]
    assert lines[section["Conditions:"] + 2].split()[:3] == ["Ready", "True", "Scheduled"]
    events = lines[section["Events:"] + 1:]
    assert events[0].split() == ["TYPE", "REASON", "LAST", "SEEN", "COUNT", "MESSAGE"]
    assert any(line.split()[:2] == ["Normal", "Launched"] for line in events[1:])
    assert any(line.split()[:2] == ["Normal", "Succeeded"] for line in events[1:])


def test_output_json_and_yaml_print_the_underlying_status(operator: Operator, cluster: Cluster) -> None:
    status = a_finished_run(operator, cluster)
    assert json.loads(ok(plugin(cluster, "history", "every10", "-n", cluster.namespace, "-o", "json"))) \
        == status["history"]
    times = cluster.status("every10")["nextScheduleTimes"]
    assert yaml.safe_load(ok(plugin(cluster, "next", "every10", "-n", cluster.namespace, "-o", "yaml"))) == times
    described = yaml.safe_load(ok(plugin(cluster, "describe", "every10", "-n", cluster.namespace, "-o", "yaml")))
    assert described["cronSchedule"]["metadata"]["name"] == "every10"
    assert described["cronSchedule"]["status"]["history"] == status["history"]
    assert "Launched" in [event["reason"] for event in described["events"]]
    assert all(event["involvedObject"]["name"] == "every10" for event in described["events"])


def test_not_found_and_a_bad_namespace_are_one_line_and_exit_1(cluster: Cluster) -> None:
    line = one_line_error(plugin(cluster, "describe", "nope", "-n", cluster.namespace))
    assert line == f"kubectl-cronctl: cronschedule 'nope' not found in namespace {cluster.namespace!r}"
    line = one_line_error(plugin(cluster, "trigger", "nope", "-n", "no-such-namespace"))
    assert line == "kubectl-cronctl: cronschedule 'nope' not found in namespace 'no-such-namespace' (no such namespace)"


def test_forbidden_says_which_verb_on_which_resource(cluster: Cluster) -> None:
    nightly(cluster)
    ns = cluster.namespace
    reader = cluster.cp.user_kubeconfig(f"reader-{ns}")  # may get CronSchedules, nothing else
    kubectl(cluster.cp, "create", "role", "reader", "-n", ns, "--verb=get", "--resource=cronschedules.cronctl.dev")
    kubectl(cluster.cp, "create", "rolebinding", "reader", "-n", ns, "--role=reader", f"--user=reader-{ns}")
    as_reader = ("-n", ns, "--kubeconfig", str(reader))
    line = one_line_error(plugin(cluster, "trigger", "nightly", *as_reader))
    assert line.startswith(f"kubectl-cronctl: forbidden: may not patch cronschedules.cronctl.dev in namespace {ns!r} (")
    line = one_line_error(plugin(cluster, "suspend", "nightly", "--reason", "x", *as_reader))
    assert line.startswith(f"kubectl-cronctl: forbidden: may not patch cronschedules.cronctl.dev in namespace {ns!r} (")
    line = one_line_error(plugin(cluster, "next", "nightly", "-n", ns, "--kubeconfig",
                                 str(cluster.cp.user_kubeconfig("nobody"))))
    assert line.startswith(f"kubectl-cronctl: forbidden: may not get cronschedules.cronctl.dev in namespace {ns!r} (")
    lines = wait_for("the role in force", lambda: (r := plugin(cluster, "describe", "nightly", *as_reader))
                     .returncode == 0 and r.stdout.splitlines())
    assert lines[lines.index("Events:") + 1] == (f"  <not shown: forbidden: may not list events in namespace {ns!r} "
                                                 f"(events is forbidden: User \"reader-{ns}\" cannot list resource "
                                                 f"\"events\" in API group \"\" in the namespace \"{ns}\")>")


def test_no_cluster_reachable_is_one_line(cluster: Cluster, tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = yaml.safe_load(Path(cluster.cp.kubeconfig).read_text())
    config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{port}"
    (tmp_path / "gone").write_text(yaml.safe_dump(config))
    line = one_line_error(plugin(cluster, "next", "nightly", KUBECONFIG=str(tmp_path / "gone")))
    assert line.startswith(f"kubectl-cronctl: no cluster reachable at https://127.0.0.1:{port}: ")
    line = one_line_error(plugin(cluster, "next", "nightly", "--kubeconfig", str(tmp_path / "missing")))
    assert line.startswith(f"kubectl-cronctl: no usable kubeconfig ({tmp_path / 'missing'}): ")


def test_the_namespace_defaults_to_the_contexts_and_context_picks_one(cluster: Cluster, tmp_path: Path) -> None:
    nightly(cluster)
    config = yaml.safe_load(Path(cluster.cp.kubeconfig).read_text())
    admin = config["contexts"][0]
    config["contexts"].append({"name": "team", "context": {**admin["context"], "namespace": cluster.namespace}})
    (tmp_path / "two").write_text(yaml.safe_dump(config))
    kubeconfig = str(tmp_path / "two")
    line = one_line_error(plugin(cluster, "next", "nightly", KUBECONFIG=kubeconfig))  # the current context: default
    assert line == "kubectl-cronctl: cronschedule 'nightly' not found in namespace 'default'"
    assert "no next fire times" in ok(plugin(cluster, "--context", "team", "next", "nightly", KUBECONFIG=kubeconfig))
    config["current-context"] = "team"
    (tmp_path / "two").write_text(yaml.safe_dump(config))
    assert "no next fire times" in ok(plugin(cluster, "next", "nightly", KUBECONFIG=kubeconfig))
    line = one_line_error(plugin(cluster, "next", "nightly", "--context", "prod", KUBECONFIG=kubeconfig))
    assert line == f"kubectl-cronctl: context 'prod' is not in the kubeconfig ({kubeconfig})"


def test_backfill_annotates_the_range_and_dry_run_lists_its_times(cluster: Cluster, tmp_path: Path) -> None:
    cluster.apply(schedule_manifest("hourly", "0 * * * *", timeZone="Europe/Berlin"))
    clock = tmp_path / "clock"
    clock.write_text("2024-03-01T00:00")
    out = ok(plugin(cluster, "backfill", "hourly", "-n", cluster.namespace, "--from", "2024-02-20T00:00:00Z",
                    "--to", "2024-02-20T02:00", "--dry-run", CRONCTL_CLOCK_FILE=str(clock)))
    assert out.splitlines()[:3] == ["2024-02-20 00:00 UTC (2024-02-20 01:00 Europe/Berlin)",
                                    "2024-02-20 01:00 UTC (2024-02-20 02:00 Europe/Berlin)",
                                    "2024-02-20 02:00 UTC (2024-02-20 03:00 Europe/Berlin)"]
    assert out.splitlines()[3].startswith(f"3 schedule times of {cluster.namespace}/hourly from ")
    assert "cronctl.dev/backfill" not in (cluster.schedule("hourly")["metadata"].get("annotations") or {})
    line = one_line_error(plugin(cluster, "backfill", "hourly", "-n", cluster.namespace, "--from", "2024-02-20T00:00",
                                 "--to", "2024-03-02T00:00", "--dry-run", CRONCTL_CLOCK_FILE=str(clock)))
    assert "after now" in line

    out = ok(plugin(cluster, "backfill", "hourly", "-n", cluster.namespace, "--from", "2024-02-20T01:00:00+01:00",
                    "--to", "2024-02-20T02:00"))
    value = "2024-02-20T00:00:00Z/2024-02-20T02:00:00Z"
    assert out.startswith(f"cronschedule {cluster.namespace}/hourly: backfill asked (cronctl.dev/backfill={value})")
    assert cluster.schedule("hourly")["metadata"]["annotations"]["cronctl.dev/backfill"] == value


def test_a_bad_command_line_is_one_line_and_exit_2(cluster: Cluster) -> None:
    line = one_line_error(plugin(cluster, "backfill", "hourly", "--from", "yesterday", "--to", "2024-02-20T02:00"),
                          code=2)
    assert line == ("kubectl-cronctl: --from: 'yesterday' is not a UTC time such as 2024-02-20T00:00:00Z or "
                    "2024-02-20T00:00")
    line = one_line_error(plugin(cluster, "next", "x", "-o", "wide"), code=2)
    assert line.startswith("kubectl-cronctl: argument -o/--output: invalid choice: 'wide'")


def test_pip_installs_the_console_script_kubectl_runs() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["kubectl-cronctl"].partition(":")
    assert getattr(import_module(module), function) is import_module("cronctl.plugin.cli").main
