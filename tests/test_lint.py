"""cronctl lint: manifests checked with the one reader, for CI and pre-commit."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .runner.support import manifest

ROOT = Path(__file__).resolve().parent.parent


def cronctl_lint(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cronctl", "lint", *args], input=stdin, capture_output=True,
                          text=True, timeout=60, cwd=ROOT)


def test_the_examples_are_clean_and_exit_0() -> None:
    files = sorted(str(p) for p in (ROOT / "examples").glob("*/*.yaml") if "harness" not in p.parts)
    result = cronctl_lint(*files)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout
    assert result.stderr.splitlines()[-1] == "0 problems; 9 CronSchedules valid"
    notes = result.stderr.splitlines()[:-1]  # the patches for kubectl patch are no objects
    assert notes == [f"note: {ROOT / 'examples' / 'patches' / name}: document 1: no kind, not a Kubernetes object: "
                     "skipped" for name in ("backfill.yaml", "suspend.yaml")]


def test_every_problem_names_its_file_document_and_field_and_the_exit_is_1(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(manifest("report", "61 * * * *", ["true"]) + "\n---\n"
                                     + yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                                                       "metadata": {"name": "c"}}))
    (tmp_path / "b.yaml").write_text(manifest("nightly", "0 0 30 2 *", ["true"]))
    (tmp_path / "c.yaml").write_text(manifest("nightly", "0 1 * * *", ["true"]))
    (tmp_path / "d.yaml").write_text("kind: [CronSchedule\n")
    result = cronctl_lint(*(str(tmp_path / name) for name in ("a.yaml", "b.yaml", "c.yaml", "d.yaml")))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert f"{tmp_path / 'c.yaml'}: CronSchedule 'nightly': metadata.name: already defined in {tmp_path / 'b.yaml'}" \
        in lines
    assert any(line.startswith(f"{tmp_path / 'd.yaml'}: not valid YAML: line 2") for line in lines), lines
    assert f"{tmp_path / 'a.yaml'}: CronSchedule 'report': spec.schedule: minute: 61 is out of range 0-59" in lines
    assert f"{tmp_path / 'b.yaml'}: CronSchedule 'nightly': spec.schedule: never fires" in lines
    assert not [line for line in lines if "ConfigMap" in line]
    assert result.stderr == "4 problems; 0 CronSchedules valid\n"


def test_standard_input_and_json_output(tmp_path: Path) -> None:
    text = manifest("ok", "*/5 * * * *", ["true"]) + "\n---\n" + manifest("Bad", "*/5 * * * *", ["true"])
    result = cronctl_lint("-", "-o", "json", stdin=text)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["valid"] == ["ok"]
    [problem] = report["problems"]
    assert (problem["file"], problem["field"]) == ("-", "metadata.name")


def test_the_pre_commit_hook_runs_cronctl_lint_on_yaml_files() -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["language"]) == ("cronctl-lint", "cronctl lint", "python")
    assert all(re.search(hook["files"], name) for name in ("a.yaml", "dir/b.yml"))
    assert not re.search(hook["files"], "notes.txt")


def test_a_folder_is_linted_as_the_runner_reads_it_its_own_yaml_files_only(tmp_path: Path) -> None:
    """`cronctl lint DIR`, as `cronctl local DIR` reads DIR: its .yaml and .yml files, not the
    subfolders', not dot files; a folder with none is a problem, not a silent pass."""
    (tmp_path / "a.yaml").write_text(manifest("a", "*/5 * * * *", ["true"]))
    (tmp_path / "b.yml").write_text(manifest("b", "61 * * * *", ["true"]))
    (tmp_path / ".c.yaml").write_text(manifest("c", "61 * * * *", ["true"]))  # an editor's swap file
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.yaml").write_text(manifest("d", "61 * * * *", ["true"]))
    (tmp_path / "empty").mkdir()
    result = cronctl_lint(str(tmp_path), str(tmp_path / "empty"))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{tmp_path / 'empty'}: no .yaml or .yml manifest in this folder (its subfolders are not read)",
        f"{tmp_path / 'b.yml'}: CronSchedule 'b': spec.schedule: minute: 61 is out of range 0-59"]
    assert result.stderr == "2 problems; 1 CronSchedule valid\n"
    clean = cronctl_lint(str(ROOT / "examples" / "local"), str(ROOT / "examples" / "pools"))
    assert (clean.returncode, clean.stdout) == (0, ""), clean.stdout


def test_a_folder_that_cannot_be_listed_is_a_problem_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cronctl.runner import lint as linting

    def refused(folder: Path) -> list[Path]:
        raise PermissionError(13, "Permission denied", str(folder))

    monkeypatch.setattr(linting, "manifest_files", refused)
    [problem] = linting.lint([tmp_path], 0).problems
    assert str(problem) == f"{tmp_path}: cannot read: Permission denied"


def test_a_bare_double_dollar_in_a_command_is_a_warning_naming_its_field_and_the_exit_stays_0(tmp_path: Path) -> None:
    """A crontab habit ($$, the shell's process id) the kubelet turns into '$'; its escapes are not warned on."""
    (tmp_path / "a.yaml").write_text(manifest("pid", "*/5 * * * *", ["sh", "-c", "echo $$ > /tmp/pid"]))
    (tmp_path / "b.yaml").write_text(manifest("escaped", "*/5 * * * *", ["sh", "-c", "echo $$$$ $$(date) $(HOME) $"]))
    result = cronctl_lint(str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"))
    field = "spec.jobTemplate.spec.template.spec.containers[0].command[2]"
    assert (result.returncode, result.stdout.splitlines()) == (0, [
        f"warning: {tmp_path / 'a.yaml'}: CronSchedule 'pid': {field}: '$$' becomes '$' (Kubernetes expands $(VAR) "
        "and takes '$$' as an escaped '$'), so the shell never sees '$$'; write '$$$$' for the shell's process id"])
    assert result.stderr == "0 problems, 1 warning; 2 CronSchedules valid\n"
    report = json.loads(cronctl_lint(str(tmp_path / "a.yaml"), "-o", "json").stdout)
    assert [(w["document"], w["field"]) for w in report["warnings"]] == [("CronSchedule 'pid'", field)]


# The CronJobs of the Kubernetes documentation (kubernetes.io, "CronJob" and "Running Automated Tasks with a
# CronJob"), written out as test data: the `hello` CronJob as the pages show it now, as older pages showed it
# (`*/1`), and the time zone section's CronJob (`timeZone: "Etc/UTC"`).
KUBERNETES_DOCS_CRONJOBS = """
apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: hello
            image: busybox:1.28
            imagePullPolicy: IfNotPresent
            command: [/bin/sh, -c, date; echo Hello from the Kubernetes cluster]
          restartPolicy: OnFailure
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello-every-minute
spec:
  schedule: "*/1 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: hello
            image: busybox
            args: [/bin/sh, -c, date; echo Hello from the Kubernetes cluster]
          restartPolicy: OnFailure
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello-in-a-zone
spec:
  schedule: "0 * * * *"
  timeZone: "Etc/UTC"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: hello
            image: busybox:1.28
            command: [/bin/sh, -c, date]
          restartPolicy: OnFailure
"""


def converted(text: str) -> str:
    result = subprocess.run([sys.executable, "-m", "cronctl", "convert", "-f", "-"], input=text, capture_output=True,
                            text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("source", ["examples/cronjobs/hello.yaml", "examples/cronjobs/nightly-backup.yaml",
                                    "the Kubernetes documentation's CronJobs"])
def test_cronctl_convert_of_every_cronjob_example_passes_lint_as_a_cluster_takes_it(source: str) -> None:
    """An entrypoint image (no command) and a container's args alone are what a cluster runs."""
    text = KUBERNETES_DOCS_CRONJOBS if source.startswith("the ") else (ROOT / source).read_text()
    schedules = converted(text)
    result = cronctl_lint("-", stdin=schedules)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout
    count = schedules.count("kind: CronSchedule")
    assert result.stderr == f"0 problems; {count} CronSchedule{'' if count == 1 else 's'} valid\n"


def test_a_secret_from_value_from_and_the_image_entrypoint_pass_for_a_cluster_not_for_the_runner() -> None:
    schedule = yaml.safe_load(manifest("backup", "0 3 * * *", ["true"]))
    container = schedule["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    del container["command"]
    container["env"] = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "backup", "key": "token"}}},
                        {"name": "MODE", "value": "full"}]
    text = yaml.safe_dump(schedule)
    assert cronctl_lint("-", stdin=text).returncode == 0
    runner = cronctl_lint("--runner", "-", stdin=text)
    where = "-: CronSchedule 'backup': spec.jobTemplate.spec.template.spec.containers[0]"
    assert (runner.returncode, runner.stdout.splitlines()) == (1, [
        f"{where}.command: missing (the local runner has no image entrypoint to fall back on)",
        f"{where}.env[0].valueFrom: not supported by the local runner, which has no cluster to read it from; "
        "give the value literally"])


BAD = """
apiVersion: cronctl.dev/v1
kind: CronSchedule
metadata: {name: bad}
spec:
  schedules: ["61 * * * *", "*/5 * * * *", "0 0 * * MON-"]
  timeZone: Mars/Olympus
  concurrencyPolicy: Sometimes
  timeoutMinutes: -1
  exclude: ["2026-13-01"]
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: Main
            env: [{name: A, value: x, valueFrom: {secretKeyRef: {name: s, key: k}}}]
          - {name: second, image: busybox, command: [sh, 1]}
"""


def test_every_problem_of_a_bad_document_is_reported_at_once_each_with_its_field() -> None:
    """The schema's, the scheduler's (field by field) and the Job template's problems, not the first alone."""
    result = cronctl_lint("-", stdin=BAD)
    container = "spec.jobTemplate.spec.template.spec.containers"
    fields = [line.split(": ")[2] for line in result.stdout.splitlines()]
    assert result.returncode == 1
    assert sorted(fields) == sorted([
        "spec.concurrencyPolicy", "spec.timeZone", "spec.timeoutMinutes", "spec.schedules[0]", "spec.schedules[2]",
        "spec.exclude[0]", "spec.jobTemplate.spec.template.spec.restartPolicy", f"{container}[0].name",
        f"{container}[0].image", f"{container}[0].env[0].valueFrom", f"{container}[1].command[1]"]), result.stdout
    assert "-: CronSchedule 'bad': spec.schedules[0]: minute: 61 is out of range 0-59" in result.stdout.splitlines()
    assert result.stderr == "11 problems; 0 CronSchedules valid\n"


HELM_TEMPLATE = """\
{{- if .Values.enabled }}
apiVersion: cronctl.dev/v1
kind: CronSchedule
metadata:
  name: {{ include "app.fullname" . }}
spec:
  schedule: {{ .Values.schedule | quote }}
{{- end }}
"""
QUOTED_TEMPLATE = 'apiVersion: cronctl.dev/v1\nkind: CronSchedule\nmetadata: {name: "{{ .Release.Name }}-x"}\n'


def test_templates_lists_and_other_yaml_are_skipped_with_a_note_never_a_failure(tmp_path: Path) -> None:
    files = {"helm.yaml": HELM_TEMPLATE, "quoted.yaml": QUOTED_TEMPLATE, "list.yaml": "- a\n- b\n",
             "values.yaml": "replicas: 2\n", "scalar.yaml": "just text\n",
             "deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = cronctl_lint(*sorted(str(tmp_path / name) for name in files))
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr.splitlines() == [
        f"note: {tmp_path / 'helm.yaml'}: a template ({{{{ }}}} actions), not a manifest: skipped (render it first, "
        "e.g. helm template ... | cronctl lint -)",
        f"note: {tmp_path / 'list.yaml'}: document 1: a list, not a Kubernetes object: skipped",
        f"note: {tmp_path / 'quoted.yaml'}: document 1: a template ({{{{ }}}} actions in its values), not a manifest: "
        "skipped (render it first, e.g. helm template ... | cronctl lint -)",
        f"note: {tmp_path / 'scalar.yaml'}: document 1: a single value, not a Kubernetes object: skipped",
        f"note: {tmp_path / 'values.yaml'}: document 1: no kind, not a Kubernetes object: skipped",
        "0 problems; 0 CronSchedules valid"]


def test_a_rendered_chart_is_linted_its_prometheus_rules_templates_left_alone() -> None:
    """helm template ... | cronctl lint -: a PrometheusRule's {{ $labels }} do not make the stream a template."""
    rule = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": {"name": "r"},
            "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "up == 0",
                                                          "annotations": {"summary": "{{ $labels.pod }} is down"}}]}]}}
    text = yaml.safe_dump(rule) + "---\n" + manifest("bad", "61 * * * *", ["true"])
    result = cronctl_lint("-", stdin=text)
    assert result.stdout == "-: CronSchedule 'bad': spec.schedule: minute: 61 is out of range 0-59\n"


def test_a_go_template_in_a_command_is_the_commands_own_and_is_linted() -> None:
    text = manifest("ps", "*/5 * * * *", ["docker", "ps", "--format", "{{.Names}}"])
    result = cronctl_lint("-", stdin=text)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "0 problems; 1 CronSchedule valid\n")


def test_a_name_that_is_no_string_is_a_problem_not_a_pass() -> None:
    schedule = yaml.safe_load(manifest("x", "*/5 * * * *", ["true"]))
    schedule["metadata"]["name"] = 12
    result = cronctl_lint("-", stdin=yaml.safe_dump(schedule))
    assert result.stdout == ("-: document 1: metadata.name: 12 must be lower-case letters, digits, '-' and '.', "
                             "starting and ending with a letter or digit\n")


def test_a_lists_items_are_linted_each_by_its_name_or_place() -> None:
    good, bad = (yaml.safe_load(manifest(name, when, ["true"])) for name, when in (("a", "*/5 * * * *"),
                                                                                    ("b", "61 * * * *")))
    unnamed = {**bad, "metadata": {}}
    result = cronctl_lint("-", stdin=yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                                     "items": [good, bad, unnamed]}))
    assert result.stdout.splitlines() == [
        "-: CronSchedule 'b': spec.schedule: minute: 61 is out of range 0-59",
        "-: document 1 item 3: metadata.name: is required",
        "-: document 1 item 3: spec.schedule: minute: 61 is out of range 0-59"]
    assert result.stderr == "3 problems; 1 CronSchedule valid\n"


def test_a_name_twice_is_a_problem_in_one_namespace_for_a_cluster_and_at_all_for_the_runner() -> None:
    first, second = (yaml.safe_load(manifest("nightly", "0 1 * * *", ["true"])) for _ in range(2))
    first["metadata"]["namespace"], second["metadata"]["namespace"] = "team-a", "team-b"
    text = yaml.safe_dump_all([first, second])
    assert cronctl_lint("-", stdin=text).returncode == 0
    runner = cronctl_lint("--runner", "-", stdin=text)
    assert runner.stdout == "-: CronSchedule 'nightly': metadata.name: already defined in -\n"


def test_the_runner_makes_no_job_so_its_rules_replace_the_job_templates() -> None:
    """No image and no restartPolicy: a cluster's Jobs are refused, the runner runs the command."""
    schedule = yaml.safe_load(manifest("local", "*/5 * * * *", ["df", "-h"]))
    pod = schedule["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    del pod["restartPolicy"], pod["containers"][0]["image"]
    text = yaml.safe_dump(schedule)
    assert cronctl_lint("--runner", "-", stdin=text).returncode == 0
    cluster = cronctl_lint("-", stdin=text)
    assert [line.split(": ")[2] for line in cluster.stdout.splitlines()] == [
        "spec.jobTemplate.spec.template.spec.restartPolicy", "spec.jobTemplate.spec.template.spec.containers[0].image"]


def test_a_file_not_utf8_or_too_large_to_apply_is_a_problem_naming_it(tmp_path: Path) -> None:
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe")
    (tmp_path / "big.yaml").write_text("a" * (3 * 1024 * 1024 + 1))
    result = cronctl_lint(str(tmp_path / "binary.yaml"), str(tmp_path / "big.yaml"))
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'binary.yaml'}: cannot read: 'utf-8' codec can't decode"), lines
    assert lines[1] == f"{tmp_path / 'big.yaml'}: 3.0 MiB: larger than the API server takes in a request (3.0 MiB); not read"
