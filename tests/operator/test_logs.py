"""What the operator logs: JSON lines that parse, with the schedule, nominal time and run;
kopf's records in the same shape; and never a Job template's env values."""

from __future__ import annotations

import io
import json
import logging
from typing import Any, Iterator

import pytest

from cronctl.operator.logs import (REDACTED, JsonFormatter, TextFormatter, configure, event_fields, make_formatter,
                                   redact)

from . import scenarios
from .scenarios import NAME, NAMESPACE, SECRET
from .world import one_by_one


@pytest.fixture
def json_log() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A logger of its own writing JSON lines into a buffer (the root logger is left alone)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("cronctl.test-logs")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_json_line_has_time_level_logger_message_and_the_fields_given(json_log) -> None:
    logger, stream = json_log
    logger.info("%s/%s: %s", NAMESPACE, NAME, "Launched",
                extra={"namespace": NAMESPACE, "schedule": NAME, "nominal": "2024-03-01T00:10:00Z", "run": 1,
                       "attempt": 1, "reason": "Launched"})
    [line] = lines(stream)
    assert list(line)[:4] == ["time", "level", "logger", "message"]
    assert line["level"] == "info" and line["logger"] == "cronctl.test-logs"
    assert line["message"] == f"{NAMESPACE}/{NAME}: Launched"
    assert line["time"].endswith("Z") and line["time"][10] == "T"
    assert {k: line[k] for k in ("namespace", "schedule", "nominal", "run", "attempt", "reason")} == {
        "namespace": NAMESPACE, "schedule": NAME, "nominal": "2024-03-01T00:10:00Z", "run": 1, "attempt": 1,
        "reason": "Launched"}


def test_an_exception_is_one_field_of_one_line(json_log) -> None:
    logger, stream = json_log
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logger.exception("reconciling %s/%s failed", NAMESPACE, NAME)
    [line] = lines(stream)
    assert line["level"] == "error" and "RuntimeError: boom" in line["exception"]


def test_kopf_records_carry_the_object_and_never_kopfs_settings(json_log) -> None:
    logger, stream = json_log
    ref = {"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "name": NAME, "uid": "u", "namespace": NAMESPACE}
    logger.info("Handler 'schedule_changed' succeeded.", extra={"k8s_ref": ref, "k8s_skip": True,
                                                                 "settings": object()})
    [line] = lines(stream)
    assert line["object"] == ref
    assert (line["namespace"], line["schedule"]) == (NAMESPACE, NAME)
    assert not {"k8s_ref", "k8s_skip", "settings"} & set(line)


def test_kopfs_own_loggers_come_out_as_json_through_configure() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure("json", stream=stream)
        configure("json", stream=stream)  # twice replaces, never doubles
        logging.getLogger("kopf.activities.startup").info("Activity 'start' succeeded.")
        logging.getLogger("cronctl.operator").debug("not at INFO")
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    [line] = lines(stream)
    assert (line["logger"], line["message"]) == ("kopf.activities.startup", "Activity 'start' succeeded.")


def test_the_text_format_stays_the_classic_line() -> None:
    record = logging.LogRecord("cronctl.operator", logging.INFO, __file__, 1, "%s/%s: hello", (NAMESPACE, NAME), None)
    line = make_formatter("text").format(record)
    assert line.endswith(f" INFO cronctl.operator {NAMESPACE}/{NAME}: hello")
    with pytest.raises(ValueError, match="text, json"):
        make_formatter("xml")


# -- the fields of a plan's Events --------------------------------------------------------


def fields_of(scenario: scenarios.Scenario) -> list[dict[str, Any]]:
    before, result = scenario
    return event_fields(NAMESPACE, NAME, result, before.get("status"))


def test_a_launch_names_its_nominal_time_run_attempt_and_job() -> None:
    assert fields_of(scenarios.launch()) == [{
        "namespace": NAMESPACE, "schedule": NAME, "reason": "Launched", "event_type": "Normal",
        "job": "sync-28487530", "nominal": "2024-03-01T00:10:00Z", "run": 1, "attempt": 1, "firing": "scheduled"}]


def test_a_retry_names_its_attempt_and_an_ended_run_is_found_in_the_status() -> None:
    waiting, retried = scenarios.retry()
    [failed] = fields_of(waiting)
    assert (failed["reason"], failed["run"], failed["nominal"], failed["attempt"]) == (
        "AttemptFailed", 1, "2024-03-01T01:00:00Z", 1)
    assert [(f["reason"], f["run"], f["attempt"], f["job"]) for f in fields_of(retried)] == [
        ("Retried", 1, 2, "sync-28487580-2")]  # the waiting retry was announced once, above
    [timed_out] = fields_of(scenarios.timeout())
    assert (timed_out["reason"], timed_out["run"], timed_out["nominal"], timed_out["event_type"]) == (
        "TimedOut", 1, "2024-03-01T01:00:00Z", "Warning")


def test_skips_and_replaces_say_what_they_know() -> None:
    skipped, relaunched = scenarios.skip_then_success_and_launch()
    [skip] = fields_of(skipped)
    assert (skip["reason"], skip["nominal"]) == ("Skipped", "2024-03-01T00:20:00Z") and "run" not in skip
    assert [(f["reason"], f["run"], f["nominal"]) for f in fields_of(relaunched)] == [
        ("Succeeded", 1, "2024-03-01T00:10:00Z"), ("Launched", 2, "2024-03-01T00:20:00Z")]
    replaced, launched = fields_of(scenarios.replace())
    assert replaced == {"namespace": NAMESPACE, "schedule": NAME, "reason": "Replaced", "event_type": "Normal"}
    assert (launched["run"], launched["nominal"]) == (2, "2024-03-01T00:20:00Z")
    assert fields_of(scenarios.overflow())[0]["reason"] == "TooManyMissedSchedules"


# -- env values never reach the logs -------------------------------------------------------


@pytest.mark.parametrize("text", [
    f"{{'name': 'PASSWORD', 'value': '{SECRET}'}}",
    json.dumps({"env": [{"name": "PASSWORD", "value": SECRET}]}),
    json.dumps(json.dumps({"name": "PASSWORD", "value": SECRET})),  # JSON inside a JSON string
    f"{{'name': 'PASSWORD', 'value': '{SECRET} it\\'s \"quoted\"', 'value_from': None}}",
    f"env:\n- name: PASSWORD\n  value: {SECRET}\n",
    f"env:\n  - value: {SECRET}\n    name: PASSWORD\n",
])
def test_redact_blanks_every_value_key(text: str) -> None:
    redacted = redact(text)
    assert SECRET not in redacted and REDACTED in redacted
    assert "PASSWORD" in redacted  # the name stays: it says which variable, not what it holds


def test_redact_leaves_ordinary_messages_alone() -> None:
    text = "team-a/sync: Launched: launched run 1 (sync-28487530) for 2024-03-01T00:10:00Z"
    assert redact(text) == text


@pytest.mark.parametrize("formatter", [JsonFormatter(), TextFormatter()])
def test_a_logged_manifest_or_exception_shows_no_env_value(formatter: logging.Formatter) -> None:
    _, result = scenarios.launch()
    manifest = result.create[0]
    try:
        raise ValueError(f"HTTP response body: {json.dumps(manifest)}")
    except ValueError as error:
        record = logging.LogRecord("cronctl.operator", logging.ERROR, __file__, 1, "creating %s: %r",
                                   (manifest["metadata"]["name"], manifest), (type(error), error,
                                                                              error.__traceback__))
    out = formatter.format(record)
    assert SECRET not in out
    assert manifest["metadata"]["name"] in out


# -- one reconcile, as the loop runs it ------------------------------------------------------


class FakeCluster:
    """The reads and writes reconcile makes, against one schedule held in memory."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body, self.applied = body, []

    def schedule(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.body if (namespace, name) == (NAMESPACE, NAME) else None

    def plan_jobs(self, schedule: dict[str, Any]) -> list[dict[str, Any]]:
        return []

    def apply(self, schedule: dict[str, Any], plan: Any) -> None:
        self.applied.append(plan)

    def apply_all(self, work: list[tuple[Any, Any]]) -> list[Any]:
        return one_by_one(self.apply, work)


def test_reconcile_logs_each_event_with_its_fields_counts_it_and_logs_no_env_value(json_log) -> None:
    from cronctl.operator.loop import reconcile
    from cronctl.operator.metrics import Metrics

    logger, stream = json_log
    operator_log = logging.getLogger("cronctl.operator")
    handler = logger.handlers[0]
    operator_log.addHandler(handler)
    level = operator_log.level
    operator_log.setLevel(logging.DEBUG)
    try:
        body, _ = scenarios.launch()
        cluster = FakeCluster(body)
        nominal = scenarios.t("2024-03-01T00:10") * 60
        metrics = Metrics(clock=lambda: nominal + 0.4)
        reconcile(cluster, (NAMESPACE, NAME), nominal + 0.2, metrics)  # type: ignore[arg-type]
        assert reconcile(cluster, (NAMESPACE, "gone"), nominal, metrics) is None  # type: ignore[arg-type]
    finally:
        operator_log.removeHandler(handler)
        operator_log.setLevel(level)
    [launched] = [line for line in lines(stream) if line.get("reason") == "Launched"]
    assert {k: launched[k] for k in ("logger", "namespace", "schedule", "nominal", "run", "attempt")} == {
        "logger": "cronctl.operator", "namespace": NAMESPACE, "schedule": NAME, "nominal": "2024-03-01T00:10:00Z",
        "run": 1, "attempt": 1}
    [created] = cluster.applied[0].effects  # the launch's create, its body sent as made (``kept``)
    assert SECRET.encode() in created.body  # the Job does carry it ...
    assert SECRET not in stream.getvalue()  # ... the logs never do
    exposition = metrics.exposition().decode()
    assert f'cronctl_launches_total{{namespace="{NAMESPACE}",schedule="{NAME}"}} 1.0' in exposition
    assert f'cronctl_launch_delay_seconds_sum{{namespace="{NAMESPACE}"}} 0.4' in exposition
