"""The operator's logs: plain text or one JSON object per line, and what they say.

``configure`` installs one handler on the root logger, so kopf's records and
cronctl's share it and its format (kopf.run leaves logging to its caller; its
own CLI would call ``kopf.configure``). In JSON each line is an object with
``time`` (RFC 3339, UTC), ``level``, ``logger``, ``message`` and, when the
record knows them, ``namespace``, ``schedule``, ``nominal``, ``run``,
``attempt``, ``job``, ``reason`` (the Event reason) and ``exception``. kopf's
per-object records carry ``object`` (kind, name, ...), as kopf's own JSON
format names it.

``event_fields`` is the pure part: the structured fields of one Event of a
Plan. Nothing here logs a Job manifest; and as a second guard, both formats
blank the ``value`` of any ``"value": ...`` pair (how an env var of a Job
template reads in a dict, JSON or YAML dump) in messages and tracebacks, so
a template's env values never reach the logs.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import sys
from typing import Any, Iterable, Mapping, TextIO

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

from .effects import Plan
from .resource import ATTEMPT_LABEL, REASON_ANNOTATION, RUN_LABEL, SCHEDULED_ANNOTATION

FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
REDACTED = "<redacted>"

# "value": "x" / 'value': 'x' / \"value\": \"x\" (a dict or JSON dump, also inside a JSON string),
# and a YAML line `value: x` or `- value: x`.
_QUOTED_VALUE = re.compile(r"""(?P<key>(\\?["'])value\2\s*:\s*)(?P<q>\\?["'])(?P<v>(?:\\.|(?!(?P=q)).)*)(?P=q)""")
_YAML_VALUE = re.compile(r"(?m)^(?P<key>\s*(?:-\s+)?value:[ \t]+)(?P<v>\S.*)$")
_RUN = re.compile(r"\brun (\d+)\b")
_TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b")
_JOB = re.compile(r"\(([a-z0-9][a-z0-9.-]*)\)")  # "launched run 3 (sync-28487530) for ..."
_CREATES = ("Launched", "Retried")  # the Events whose Job is in Plan.create (unless released from staging)
_NOMINAL_FIRST = ("Skipped", "Queued", "Coalesced")  # the Events whose first time is a nominal time


def redact(text: str) -> str:
    """``text`` with the value of every ``value`` key blanked."""
    text = _QUOTED_VALUE.sub(lambda m: f"{m['key']}{m['q']}{REDACTED}{m['q']}", text)
    return _YAML_VALUE.sub(lambda m: f"{m['key']}{REDACTED}", text)


def event_fields(namespace: str, schedule: str, plan: Plan,
                      status: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The structured fields of each of ``plan.events``, in order (``status``: the old one).

    A Launched or Retried Event takes its run's nominal time, number and
    attempt from the Job it created (the Job its message names); other Events
    about a run, and a launch that released a staged Job, find the run by its
    number in the status (the new one, else the old); Skipped, Queued and
    Coalesced name their nominal time first.
    """
    manifests = {manifest["metadata"]["name"]: manifest for manifest in plan.create}
    runs = _runs(plan.runs, status)
    result = []
    for event in plan.events:
        fields: dict[str, Any] = {"namespace": namespace, "schedule": schedule, "reason": event.reason,
                                  "event_type": event.type}
        named = _JOB.search(event.message) if event.reason in _CREATES else None
        manifest = None if named is None else manifests.get(named.group(1))
        if manifest is not None:
            fields.update(_manifest_fields(manifest))
        elif event.reason in _NOMINAL_FIRST:
            found = _TIME.search(event.message)
            if found:
                fields["nominal"] = found.group()
        elif (found := _RUN.search(event.message)) is not None:
            number = int(found.group(1))
            fields["run"] = number
            entry = runs.get(number)
            if entry is not None:
                fields.update(_entry_fields(entry))
        result.append(fields)
    return result


def _manifest_fields(manifest: Mapping[str, Any]) -> dict[str, Any]:
    metadata = manifest.get("metadata") or {}
    labels, annotations = metadata.get("labels") or {}, metadata.get("annotations") or {}
    fields: dict[str, Any] = {"job": metadata.get("name")}
    if annotations.get(SCHEDULED_ANNOTATION):
        fields["nominal"] = annotations[SCHEDULED_ANNOTATION]
    for key, label in (("run", RUN_LABEL), ("attempt", ATTEMPT_LABEL)):
        if str(labels.get(label, "")).isdigit():
            fields[key] = int(labels[label])
    if annotations.get(REASON_ANNOTATION):
        fields["firing"] = annotations[REASON_ANNOTATION]
    return fields


def _entry_fields(entry: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if entry.get("scheduledTime"):
        fields["nominal"] = entry["scheduledTime"]
    attempt = entry.get("attempt", entry.get("attempts"))
    if isinstance(attempt, int):
        fields["attempt"] = attempt
    job = entry.get("job") or entry.get("name")
    if job:
        fields["job"] = job
    if entry.get("reason"):
        fields["firing"] = entry["reason"]
    return fields


def _runs(*statuses: Mapping[str, Any] | None) -> dict[int, Mapping[str, Any]]:
    """Run number -> its status entry (active or history); earlier statuses win."""
    runs: dict[int, Mapping[str, Any]] = {}
    for status in statuses:
        for entry in _entries(status or {}):
            if isinstance(entry.get("run"), int):
                runs.setdefault(entry["run"], entry)
    return runs


def _entries(status: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    yield from status.get("active") or []
    yield from status.get("history") or []


# -- formats -------------------------------------------------------------------------


class TextFormatter(logging.Formatter):
    """The classic line, with env values blanked."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class JsonFormatter(_JsonFormatter):
    """One JSON object per line (python-json-logger), with env values blanked."""

    def __init__(self) -> None:
        super().__init__(
            "%(levelname)s %(name)s %(message)s",
            rename_fields={"levelname": "level", "name": "logger", "exc_info": "exception"},
            # kopf's per-object records carry these: k8s_ref becomes `object`, the others are internal
            reserved_attrs=[*RESERVED_ATTRS, "taskName", "k8s_skip", "k8s_ref", "settings"],
        )

    def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord,
                   message_dict: dict[str, Any]) -> None:
        log_data["time"] = _rfc3339(record.created)
        super().add_fields(log_data, record, message_dict)
        log_data["level"] = record.levelname.lower()
        ref = getattr(record, "k8s_ref", None)
        if isinstance(ref, Mapping):
            log_data["object"] = {key: value for key, value in ref.items() if value is not None}
            if ref.get("namespace"):
                log_data.setdefault("namespace", ref["namespace"])
            if ref.get("kind") == "CronSchedule" and ref.get("name"):
                log_data.setdefault("schedule", ref["name"])

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        for key in ("message", "exception", "stack_info"):
            if isinstance(log_data.get(key), str):
                log_data[key] = redact(log_data[key])
        return log_data


def _rfc3339(created: float) -> str:
    when = dt.datetime.fromtimestamp(created, tz=dt.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """Ours, so that configuring twice replaces rather than doubles."""


def make_formatter(log_format: str) -> logging.Formatter:
    if log_format == "json":
        return JsonFormatter()
    if log_format == "text":
        return TextFormatter(TEXT_FORMAT)
    raise ValueError(f"log format {log_format!r}: must be one of {', '.join(FORMATS)}")


def configure(log_format: str = "text", verbose: bool = False, stream: TextIO | None = None) -> logging.Handler:
    """One handler on the root logger in ``log_format``; kopf's loggers propagate to it."""
    handler = _Handler(stream if stream is not None else sys.stderr)
    handler.setFormatter(make_formatter(log_format))
    root = logging.getLogger()
    root.handlers[:] = [h for h in root.handlers if not isinstance(h, _Handler)] + [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    # kopf says "Handler '...' succeeded." at INFO for every watch event of every object: thousands
    # of lines a minute in a busy fleet, and CPU. Its warnings and errors still show.
    logging.getLogger("kopf.objects").setLevel(logging.DEBUG if verbose else logging.WARNING)
    return handler
