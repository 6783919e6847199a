"""CronSchedule manifests from a folder: records, and errors that name file, object and field."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import yaml

from cronctl.core.dst import DaylightSaving
from cronctl.core.schedule import Timeline
from cronctl.core.times import format_time
from cronctl.runner.definitions import load_definitions, load_file
from cronctl.runner.folder import ManifestFolder
from cronctl.runner.views import read_manifests

from .support import t

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "manifests"
CONTAINER = "spec.jobTemplate.spec.template.spec.containers[0]"


def manifest(name: str = "nightly", container: str = 'command: ["echo", "hi"]', head: str = "") -> str:
    body = "\n".join("              " + line for line in container.splitlines())
    return f"""{head}apiVersion: cronctl.dev/v1
kind: CronSchedule
metadata:
  name: {name}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - name: main
{body}
"""


def test_the_fixture_folder_loads_every_schedule():
    loaded = load_definitions(FIXTURES)
    assert loaded.errors == []
    assert [d.name for d in loaded.definitions] == ["cleanup", "nightly-report", "heartbeat"]
    cleanup, report, heartbeat = loaded.definitions
    assert report.command == ["sh", "-c"] and report.args == ["echo building the report for $REPORT_DAY"]
    assert report.env == {"REPORT_DAY": "yesterday", "EMPTY": ""}
    assert report.image == "busybox:1.36" and report.file == FIXTURES / "schedules.yaml"
    assert report.spec["schedule"] == "30 2 * * *" and report.spec["timeoutMinutes"] == 45  # as written
    assert heartbeat.command == ["echo", "alive"] and heartbeat.args == [] and heartbeat.env == {}
    assert heartbeat.image is None
    assert cleanup.command == ["sh", "-c", "echo cleaning"]


def test_notices_say_once_what_the_runner_ignores():
    notices = load_definitions(FIXTURES).notices
    assert f"{FIXTURES / 'mixed.yml'}: ConfigMap 'settings': skipped, kind 'ConfigMap' is not CronSchedule or CronPool" \
        in notices
    assert any("'cleanup': only the first container runs locally, 1 more ignored" in n for n in notices)
    [images] = [n for n in notices if "images" in n]
    assert images == ("the local runner ignores container images and runs each command on this machine: "
                      "cleanup (alpine:3.19), nightly-report (busybox:1.36)")


@pytest.mark.parametrize("text, where, reason", [
    (manifest(container="image: busybox"), f"CronSchedule 'nightly': {CONTAINER}.command", "missing"),
    (manifest(container='command: "echo hi"'), f"CronSchedule 'nightly': {CONTAINER}.command",
     "not a list of strings but str"),
    (manifest(container="command: [echo]\nargs: [1]"), f"CronSchedule 'nightly': {CONTAINER}.args[0]",
     "1 is not a string (quote it)"),
    (manifest(container="command: [echo]\nenv:\n  - name: TOKEN\n    valueFrom:\n      secretKeyRef: {name: s}"),
     f"CronSchedule 'nightly': {CONTAINER}.env[0].valueFrom", "not supported by the local runner"),
    (manifest(container="command: [echo]\nenv:\n  - name: N\n    value: 3"),
     f"CronSchedule 'nightly': {CONTAINER}.env[0].value", "3 is not a string (quote it)"),
    (manifest().replace("cronctl.dev/v1", "cronctl.dev/v2"), "CronSchedule 'nightly': apiVersion",
     "'cronctl.dev/v2' is not cronctl.dev/v1"),
    (manifest(name="Nightly_Job"), "CronSchedule 'Nightly_Job': metadata.name", "lower-case"),
    (manifest().replace("  name: nightly\n", "  labels: {}\n"), "document 1: metadata.name", "missing"),
    (manifest().replace("          containers:\n            - name: main\n              command: [\"echo\", \"hi\"]\n",
                        "          containers: []\n"),
     "CronSchedule 'nightly': spec.jobTemplate.spec.template.spec.containers", "empty"),
    ("- just\n- a list\n", "document 1", "not a mapping"),
    ("apiVersion: cronctl.dev/v1\nkind: CronSchedule\nmetadata: {name: x\n", None, "not valid YAML: line"),
])
def test_an_error_names_the_file_the_object_and_the_field(tmp_path, text, where, reason):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    loaded = load_file(path)
    assert loaded.definitions == []
    [error] = loaded.errors
    message = str(error)
    expected = f"{path}: {where}: " if where else f"{path}: "
    assert message.startswith(expected) and reason in message, message


def test_what_the_crds_schema_judges_is_left_to_the_manifest_reader(tmp_path):
    """No jobTemplate: the loader does not say it again; read_manifest refuses it, by the CRD."""
    from cronctl.manifest import SpecError
    from cronctl.runner.engine import job_spec

    path = tmp_path / "bad.yaml"
    path.write_text(manifest().split("  jobTemplate:")[0])
    loaded = load_file(path)
    assert loaded.errors == []
    [definition] = loaded.definitions
    assert definition.command == []
    with pytest.raises(SpecError) as refused:
        job_spec(definition, 0, 0)
    assert str(refused.value) == "spec.jobTemplate: is required"


def test_one_bad_file_or_object_does_not_stop_the_others(tmp_path):
    folder = tmp_path / "local"
    shutil.copytree(FIXTURES, folder)
    (folder / "a-broken.yaml").write_text("key: [unclosed\n")
    (folder / "b-half.yaml").write_text(manifest("good-one") + "---\n" + manifest("bad-one", "image: x"))
    (folder / "c-duplicate.yaml").write_text(manifest("heartbeat"))
    (folder / ".#editor-lock.yaml").write_text("not: read")
    loaded = load_definitions(folder)
    assert [d.name for d in loaded.definitions] == ["good-one", "heartbeat", "cleanup", "nightly-report"]
    assert loaded.definitions[1].file == folder / "c-duplicate.yaml"
    messages = [str(e) for e in loaded.errors]
    assert len(messages) == 3, messages
    assert messages[0].startswith(f"{folder / 'a-broken.yaml'}: not valid YAML")
    assert messages[1] == f"{folder / 'b-half.yaml'}: CronSchedule 'bad-one': {CONTAINER}.command: " \
                          "missing (the local runner has no image entrypoint to fall back on)"
    # the first definition in file name order wins
    assert messages[2] == f"{folder / 'schedules.yaml'}: CronSchedule 'heartbeat': metadata.name: " \
                          f"already defined in {folder / 'c-duplicate.yaml'}"


def test_a_relative_folder_is_named_as_given(tmp_path, monkeypatch):
    (tmp_path / "examples" / "local").mkdir(parents=True)
    (tmp_path / "examples" / "local" / "x.yaml").write_text(manifest(container="args: [a]"))
    monkeypatch.chdir(tmp_path)
    [error] = load_definitions("examples/local").errors
    assert str(error).startswith(f"examples/local/x.yaml: CronSchedule 'nightly': {CONTAINER}.command: missing")


def test_a_missing_folder_is_an_error_of_the_caller(tmp_path):
    with pytest.raises(NotADirectoryError):
        load_definitions(tmp_path / "nowhere")


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("folder", ["cronschedules", "local"])
def test_every_example_manifest_is_valid_for_the_runner(folder):
    read = read_manifests(EXAMPLES / folder, 0)
    assert read.invalid == []
    assert sorted(read.specs) == sorted(path.stem for path in (EXAMPLES / folder).glob("*.yaml"))


def test_the_office_hours_example_merges_its_schedules_with_exclusions_in_berlin_and_skips_dst_gaps():
    spec = read_manifests(EXAMPLES / "cronschedules", t("2026-12-22T00:00")).specs["office-hours"]
    options = spec.options
    assert (len(options.more_schedules) + 1, options.tz.name, options.daylight_saving) == (
        3, "Europe/Berlin", DaylightSaving.SKIP)
    assert any("/" in entry for entry in options.exclude) and any(" " in entry for entry in options.exclude)
    assert any(entry.startswith("2026-") for entry in options.exclude)
    assert any(entry.startswith("2027-") for entry in options.exclude)
    upcoming = Timeline(spec.compiled, spec.created_at, options.tz).upcoming(t("2026-12-23T17:00"), 1)
    assert [format_time(minute) for minute in upcoming] == ["2027-01-04T08:00"]  # after the year-end break


# -- what a scan of the folder passes over is named, with the reason ------------------------------------


def scanned_notices(folder: Path) -> list[str]:
    loaded, _ = ManifestFolder(folder).scan()
    return loaded.notices


def test_an_empty_folder_says_so(tmp_path):
    assert scanned_notices(tmp_path) == [
        f"{tmp_path}: no .yaml or .yml manifest here: nothing fires until one is added"]


def test_an_empty_manifest_file_is_named(tmp_path):
    (tmp_path / "blank.yaml").write_text("\n# nothing yet\n")
    assert scanned_notices(tmp_path) == [f"{tmp_path / 'blank.yaml'}: empty: no CronSchedule in it"]


def test_symlinks_that_lead_nowhere_are_named(tmp_path):
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "gone.yaml")
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    notices = scanned_notices(tmp_path)
    assert notices[0].startswith(f"{tmp_path / 'dangling.yaml'}: skipped: a symlink that leads nowhere")
    assert notices[1].startswith(f"{tmp_path / 'loop.yaml'}: skipped: a symlink that leads nowhere")
    assert len(notices) == 2


def test_a_json_manifest_is_named_as_not_read_and_the_runners_own_book_is_not(tmp_path):
    (tmp_path / "report.json").write_text("{}")
    (tmp_path / "cronctl.json").write_text("{}")
    (tmp_path / "nightly.yaml").write_text(manifest())
    assert scanned_notices(tmp_path) == [f"{tmp_path / 'report.json'}: skipped: the runner reads .yaml and .yml files"]


def test_a_folder_named_like_a_manifest_is_named(tmp_path):
    (tmp_path / "old.yaml").mkdir()
    (tmp_path / "nightly.yaml").write_text(manifest())
    assert scanned_notices(tmp_path) == [f"{tmp_path / 'old.yaml'}: skipped: not a file"]


def test_every_field_of_the_job_template_the_runner_does_not_carry_out_is_named_once(tmp_path):
    body = yaml.safe_load(manifest())
    template = body["spec"]["jobTemplate"]
    template["spec"]["backoffLimit"] = 2  # honoured: not named
    template["spec"]["parallelism"] = 2
    template["spec"]["template"]["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    container = template["spec"]["template"]["spec"]["containers"][0]
    container.update(envFrom=[{"configMapRef": {"name": "settings"}}], resources={"limits": {"cpu": "1"}},
                     workingDir="/tmp", imagePullPolicy="Always")
    (tmp_path / "nightly.yaml").write_text(yaml.safe_dump(body))
    loaded = load_definitions(tmp_path)
    assert [d.name for d in loaded.definitions] == ["nightly"]
    [notice] = [n for n in loaded.notices if "not honoured" in n]
    assert notice.endswith(
        "not honoured by the local runner (it runs the command on this machine): spec.jobTemplate.spec.parallelism, "
        "spec.jobTemplate.spec.template.spec.volumes, spec.jobTemplate.spec.template.spec.containers[0].envFrom, "
        "spec.jobTemplate.spec.template.spec.containers[0].resources")


def test_a_manifest_larger_than_the_api_server_takes_is_refused_unread_with_its_size(tmp_path):
    (tmp_path / "huge.yaml").write_text(manifest() + "# " + "x" * (10 * 1024 * 1024) + "\n")
    (tmp_path / "small.yaml").write_text(manifest("small"))
    began = time.perf_counter()
    loaded = load_definitions(tmp_path)
    assert time.perf_counter() - began < 0.5  # PyYAML took 3.4 s on 10 MB
    assert [d.name for d in loaded.definitions] == ["small"]
    assert [str(e) for e in loaded.errors] == [
        f"{tmp_path / 'huge.yaml'}: 10.0 MiB: larger than the API server takes in a request (3.0 MiB); not read"]


def test_an_object_larger_than_the_api_server_stores_is_refused_with_its_size(tmp_path):
    body = yaml.safe_load(manifest())
    body["metadata"]["annotations"] = {"blob": "x" * (2 * 1024 * 1024)}
    (tmp_path / "big.yaml").write_text(yaml.safe_dump(body))
    loaded = load_definitions(tmp_path)
    assert loaded.definitions == []
    assert [str(e) for e in loaded.errors] == [
        f"{tmp_path / 'big.yaml'}: CronSchedule 'nightly': 2.0 MiB as JSON: larger than an object the API "
        "server stores (1.5 MiB)"]


@pytest.mark.parametrize("value, read", [(3, 3), (0, 0), (None, None)])
def test_the_jobs_backoff_limit_is_read(tmp_path, value, read):
    body = yaml.safe_load(manifest())
    if value is not None:
        body["spec"]["jobTemplate"]["spec"]["backoffLimit"] = value
    (tmp_path / "nightly.yaml").write_text(yaml.safe_dump(body))
    [definition] = load_definitions(tmp_path).definitions
    assert definition.backoff_limit == read


def test_a_manifest_near_the_api_servers_limit_is_read_without_holding_up_the_others(tmp_path):
    """1.4 MiB of manifest (libyaml's loader: PyYAML's own took 0.34 s of every change to it)."""
    body = yaml.safe_load(manifest())
    body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": f"V{i}", "value": "x" * 1000} for i in range(1400)]
    text = json.dumps(body)
    (tmp_path / "big.yaml").write_text(text)
    began = time.perf_counter()
    loaded = load_definitions(tmp_path)
    took = time.perf_counter() - began
    began = time.perf_counter()
    yaml.load(text, Loader=yaml.SafeLoader)  # PyYAML's own loader, on the same text, on the same machine now
    pure = time.perf_counter() - began
    assert took < pure / 2, (took, pure)  # a ratio: wall-clock limits fail on a busy machine
    assert [d.name for d in loaded.definitions] == ["nightly"] and len(loaded.definitions[0].env) == 1400
