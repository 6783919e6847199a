"""cronctl convert: CronJob manifests in, CronSchedule manifests out, every field mapped, and back.

Every CronJob in examples/cronjobs and the Kubernetes documentation's examples
round-trips (CronJob -> CronSchedule -> CronJob gives the CronJob again, less
what the server sets), the runner and the API server's schema accept each
converted manifest unchanged, and what cannot be mapped is refused with the
file, the document and the field named, nothing printed.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cronctl.convert import ORIGINAL_SCHEDULE, ConvertError, convert_text, to_cronjob, to_cronschedule
from cronctl.core.schedule import next_runs, parse_expression
from cronctl.core.times import parse_time
from cronctl.manifest import read_manifest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples" / "cronjobs").glob("*.yaml"))
TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                                           "containers": [{"name": "hello", "image": "busybox:1.28"}]}}}}


def cronjob(name: str = "hello", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": "* * * * *", **spec, "jobTemplate": copy.deepcopy(TEMPLATE)}}


# The examples of kubernetes.io's CronJob pages: the hello CronJob (in examples/cronjobs), and the
# time zone and the concurrency/history fields the CronJob concept page writes out.
DOCUMENTATION = [
    cronjob(timeZone="Etc/UTC"),
    cronjob(schedule="*/1 * * * *", concurrencyPolicy="Forbid", startingDeadlineSeconds=200,
            successfulJobsHistoryLimit=3, failedJobsHistoryLimit=1, suspend=True),
    cronjob(schedule="0 0 13 * 5"),
]


def example_cronjobs() -> list[dict[str, Any]]:
    return [document for path in EXAMPLES for document in yaml.safe_load_all(path.read_text())] + DOCUMENTATION


@pytest.mark.parametrize("original", example_cronjobs(), ids=lambda d: d["metadata"]["name"])
def test_every_example_round_trips(original: dict[str, Any]) -> None:
    assert to_cronjob(to_cronschedule(original)) == original


@pytest.mark.parametrize("original", example_cronjobs(), ids=lambda d: d["metadata"]["name"])
def test_the_runners_reader_takes_every_converted_manifest_unchanged(original: dict[str, Any]) -> None:
    converted = to_cronschedule(original)
    spec = read_manifest(converted, anchor=parse_time("2027-01-01T00:00")).job  # type: ignore[arg-type]
    assert spec.name == original["metadata"]["name"]


def test_the_examples_folder_has_cronjobs_to_convert() -> None:
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("schedule, zone, written, meant_zone", [
    ("@daily", None, "0 0 * * *", None),
    ("@midnight", None, "0 0 * * *", None),
    ("@hourly", None, "0 * * * *", None),
    ("@weekly", None, "0 0 * * 0", None),
    ("@monthly", None, "0 0 1 * *", None),
    ("@yearly", None, "0 0 1 1 *", None),
    ("0 9 ? * MON-FRI", None, "0 9 * * MON-FRI", None),
    ("@every 1h30m", None, "@every 90m", None),
    ("@every 2h", None, "@every 2h", None),
    ("@every 120m", None, "@every 2h", None),
    ("TZ=Europe/Berlin 30 2 * * *", None, "30 2 * * *", "Europe/Berlin"),
    ("CRON_TZ=Asia/Tokyo 0 6 * * *", None, "0 6 * * *", "Asia/Tokyo"),
])
def test_schedules_the_cronjob_parser_takes_are_written_as_cronctl_reads_them(
        schedule: str, zone: str | None, written: str, meant_zone: str | None) -> None:
    original = cronjob(schedule=schedule)
    converted = to_cronschedule(original)
    assert converted["spec"]["schedule"] == written
    assert converted["spec"].get("timeZone") == meant_zone
    kept = converted["metadata"].get("annotations", {}).get(ORIGINAL_SCHEDULE)
    assert kept == (None if written == schedule else schedule)
    assert to_cronjob(converted) == original


def test_a_descriptor_names_the_same_times() -> None:
    after = parse_time("2027-03-01T00:00")
    assert next_runs(parse_expression(to_cronschedule(cronjob(schedule="@weekly"))["spec"]["schedule"]), after, 3) \
        == [parse_time("2027-03-07T00:00"), parse_time("2027-03-14T00:00"), parse_time("2027-03-21T00:00")]


def test_a_zone_keeps_cronjobs_daylight_saving_rule() -> None:
    assert to_cronschedule(cronjob(timeZone="Europe/Berlin"))["spec"]["daylightSaving"] == "Literal"
    assert "daylightSaving" not in to_cronschedule(cronjob())["spec"]


def test_what_the_server_sets_is_left_out() -> None:
    live = cronjob()
    live["metadata"].update(uid="u-1", resourceVersion="42", generation=3, creationTimestamp="2026-01-01T00:00:00Z",
                            managedFields=[{"manager": "kubectl"}],
                            annotations={"kubectl.kubernetes.io/last-applied-configuration": "{}", "owner": "ops"})
    live["status"] = {"lastScheduleTime": "2026-12-06T12:00:00Z"}
    converted = to_cronschedule(live)
    assert converted["metadata"] == {"name": "hello", "annotations": {"owner": "ops"}}
    assert "status" not in converted


@pytest.mark.parametrize("body, field", [
    (cronjob(schedule="@every 30s"), "spec.schedule"),
    (cronjob(schedule="0 0 L * *"), "spec.schedule"),
    (cronjob(schedule=5), "spec.schedule"),
    (cronjob(schedule="TZ=UTC 0 0 * * *", timeZone="Europe/Berlin"), "spec.schedule"),
    (cronjob(podFailurePolicy={}), "spec.podFailurePolicy"),
    ({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "x"}, "spec": []}, "spec"),
    ({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {}, "spec": {"schedule": "* * * * *"}},
     "metadata.name"),
])
def test_what_cannot_be_mapped_is_refused_naming_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(ConvertError) as refused:
        to_cronschedule(body)
    assert refused.value.field == field


@pytest.mark.parametrize("spec, field", [
    ({"schedules": ["0 9 * * *", "0 17 * * *"]}, "spec.schedules"),
    ({"concurrencyPolicy": "WaitForLast"}, "spec.concurrencyPolicy"),
    ({"timeZone": "Europe/Berlin", "daylightSaving": "Vixie"}, "spec.daylightSaving"),
    ({"maxRetries": 2}, "spec.maxRetries"),
])
def test_a_cronschedule_that_says_more_than_a_cronjob_can_is_not_turned_back(spec: dict[str, Any],
                                                                             field: str) -> None:
    body = to_cronschedule(cronjob())
    body["spec"].update(spec)
    if "schedules" in spec:
        del body["spec"]["schedule"]
    with pytest.raises(ConvertError) as refused:
        to_cronjob(body)
    assert refused.value.field == field


def test_other_objects_and_a_lists_other_items_pass_through() -> None:
    text = yaml.safe_dump_all([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
                               {"apiVersion": "v1", "kind": "List", "items": [cronjob("a"), {"kind": "Service"}]}])
    converted = convert_text(text, "in.yaml")
    assert converted.problems == [] and converted.count == 1
    assert converted.documents[0]["kind"] == "ConfigMap"
    assert [item["kind"] for item in converted.documents[1]["items"]] == ["CronSchedule", "Service"]


def test_a_problem_names_the_file_the_document_and_the_field() -> None:
    text = yaml.safe_dump_all([cronjob("good"), cronjob("bad", schedule="@every 10s")])
    assert convert_text(text, "jobs.yaml").problems == [
        "jobs.yaml: document 2 (CronJob 'bad'): spec.schedule: '@every 10s': cronctl fires at whole minutes, "
        "not every 10s"]
    assert convert_text("a: [1", "broken.yaml").problems[0].startswith("broken.yaml: line 1")


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cronctl", "convert", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT / "operator"), "PATH": "/usr/bin:/bin"},
                          timeout=60)


def test_the_command_reads_standard_input_and_prints_yaml_the_runner_takes() -> None:
    done = cli("-f", "-", stdin=yaml.safe_dump(cronjob()))
    assert done.returncode == 0, done.stderr
    [converted] = list(yaml.safe_load_all(done.stdout))
    assert converted["kind"] == "CronSchedule"
    assert done.stderr == "1 CronJob converted to CronSchedule\n"
    read_manifest(converted, anchor=0)


def test_the_command_prints_nothing_when_anything_is_refused() -> None:
    done = cli("-f", "-", stdin=yaml.safe_dump_all([cronjob("good"), cronjob("bad", schedule="@every 5s")]))
    assert done.returncode == 1 and done.stdout == ""
    assert "(standard input): document 2 (CronJob 'bad'): spec.schedule:" in done.stderr
    assert "nothing converted: 1 problem" in done.stderr


def test_the_command_goes_back_with_to_cronjob(tmp_path: Path) -> None:
    there = cli("-f", str(EXAMPLES[0]))
    (tmp_path / "converted.yaml").write_text(there.stdout)
    back = cli("-f", str(tmp_path / "converted.yaml"), "--to", "CronJob")
    assert back.returncode == 0, back.stderr
    assert list(yaml.safe_load_all(back.stdout)) == list(yaml.safe_load_all(EXAMPLES[0].read_text()))


def test_a_missing_file_is_one_line() -> None:
    done = cli("-f", "no-such.yaml")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[0] == "no-such.yaml: cannot read it: No such file or directory"
