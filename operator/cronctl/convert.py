"""CronJob manifests into CronSchedule manifests and back: ``cronctl convert`` (and, later, ``import``).

``to_cronschedule`` maps every field of a batch/v1 CronJob (``schedule``,
``timeZone``, ``concurrencyPolicy``, ``startingDeadlineSeconds``, the two
history limits, ``suspend``, ``jobTemplate`` with its labels and
annotations) and keeps the CronJob's meaning:

- the schedule forms the CronJob controller's parser (robfig/cron) takes
  and cronctl's does not are rewritten to the same times: the descriptors
  (``@daily`` is ``0 0 * * *``), ``?`` in a day field (``*``), an ``@every``
  of hours and minutes (``@every 1h30m`` is ``@every 90m``), the old
  ``TZ=``/``CRON_TZ=`` prefix (``spec.timeZone``); the text as the CronJob
  had it is kept in the annotation ``cronctl.dev/cronjob-schedule``, so
  that ``to_cronjob`` gives it back;
- with a ``timeZone``, daylight saving as CronJob treats it
  (``daylightSaving: Literal``: a skipped time does not run, a repeated one
  runs twice); a user who wants Vixie cron's rule changes it afterwards.

Server-set metadata (uid, resourceVersion, managedFields, the last-applied
annotation...) and the status are left out. What has no meaning for cronctl
(an ``@every`` in seconds, an unknown field) is refused with the field
named, and nothing is converted for that object. ``to_cronjob`` is the way
back, for the CronSchedules that say nothing a CronJob cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import yaml

from .core.errors import CronctlError
from .core.schedule import parse_expression
from .manifest import API_VERSION as CRONSCHEDULE_API_VERSION, KIND as CRONSCHEDULE_KIND, yaml_problem

CRONJOB_API_VERSION, CRONJOB_KIND = "batch/v1", "CronJob"
ORIGINAL_SCHEDULE = "cronctl.dev/cronjob-schedule"  # the schedule as the CronJob wrote it, where rewritten
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
               "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
SAME_FIELDS = ("schedule", "timeZone", "concurrencyPolicy", "startingDeadlineSeconds",
               "successfulJobsHistoryLimit", "failedJobsHistoryLimit", "suspend", "jobTemplate")
KEPT_METADATA = ("name", "namespace", "labels", "annotations")
DISPLAY_ONLY = ("upcomingTimes",)  # CronSchedule fields that change what is shown, never what runs
_TZ_PREFIX = re.compile(r"^(?:CRON_)?TZ=(\S+)\s+(.*)$")
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


class ConvertError(CronctlError):
    """What cannot be mapped: ``field`` is its path in the object."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def to_cronschedule(cronjob: Mapping[str, Any]) -> dict[str, Any]:
    """The CronSchedule of a batch/v1 CronJob; raises ConvertError naming the field."""
    spec = _mapping(cronjob.get("spec"), "spec")
    unknown = sorted(key for key in spec if key not in SAME_FIELDS)
    if unknown:
        raise ConvertError(f"spec.{unknown[0]}", "is not a field of a batch/v1 CronJob that cronctl knows")
    if "schedule" not in spec:
        raise ConvertError("spec.schedule", "is required")
    out = {key: spec[key] for key in SAME_FIELDS if key in spec and spec[key] is not None}
    metadata = _metadata(cronjob)
    schedule, zone = _schedule(spec["schedule"], spec.get("timeZone"))
    if schedule != spec["schedule"]:
        metadata.setdefault("annotations", {})[ORIGINAL_SCHEDULE] = spec["schedule"]
    out["schedule"] = schedule
    if zone is not None:
        out["timeZone"] = zone
        out["daylightSaving"] = "Literal"  # CronJob's rule
    return {"apiVersion": CRONSCHEDULE_API_VERSION, "kind": CRONSCHEDULE_KIND, "metadata": metadata,
            "spec": _ordered(out)}


def to_cronjob(cronschedule: Mapping[str, Any]) -> dict[str, Any]:
    """The batch/v1 CronJob of a CronSchedule that says nothing a CronJob cannot; raises ConvertError."""
    spec = _mapping(cronschedule.get("spec"), "spec")
    _refuse_what_only_cronctl_says(spec)
    metadata = _metadata(cronschedule)
    original = _take_original_schedule(metadata)
    return {"apiVersion": CRONJOB_API_VERSION, "kind": CRONJOB_KIND, "metadata": metadata,
            "spec": _ordered(_cronjob_spec(spec, original))}


def _refuse_what_only_cronctl_says(spec: Mapping[str, Any]) -> None:
    """A CronSchedule's spec that a CronJob cannot say, refused with its field named: a field a
    CronJob has not (but those that change only what is shown), WaitForLast, and in a time zone
    a daylight-saving rule other than CronJob's (Literal)."""
    for key in spec:
        if key not in SAME_FIELDS and key not in DISPLAY_ONLY and key != "daylightSaving":
            raise ConvertError(f"spec.{key}", "a CronJob has no such field: take it out to go back")
    if spec.get("concurrencyPolicy") == "WaitForLast":
        raise ConvertError("spec.concurrencyPolicy", "WaitForLast is cronctl's: a CronJob takes Allow, Forbid "
                                                     "or Replace")
    rule = spec.get("daylightSaving", "Vixie")
    if spec.get("timeZone") is not None and rule != "Literal":
        raise ConvertError("spec.daylightSaving", f"{rule} is cronctl's rule: a CronJob in a time zone follows "
                                                  "Literal")


def _take_original_schedule(metadata: dict[str, Any]) -> Any:
    """The schedule as the CronJob wrote it (the annotation ``to_cronschedule`` left, if any),
    taken off the metadata, and the annotations with it when it was the only one."""
    original = (metadata.get("annotations") or {}).pop(ORIGINAL_SCHEDULE, None)
    if metadata.get("annotations") == {}:
        del metadata["annotations"]
    return original


def _cronjob_spec(spec: Mapping[str, Any], original: Any) -> dict[str, Any]:
    """The CronJob's spec: the fields both kinds have, with the schedule text the CronJob had
    when it still names the spec's times (a zone it names by a TZ= prefix is then not repeated)."""
    out = {key: spec[key] for key in SAME_FIELDS if key in spec and spec[key] is not None}
    if original is not None and _same_times(original, spec):
        out["schedule"] = original
        if _TZ_PREFIX.match(original.strip()):
            del out["timeZone"]
    return out


def _same_times(original: Any, spec: Mapping[str, Any]) -> bool:
    """Whether the CronJob's own schedule text (the annotation) still says what the spec says."""
    if not isinstance(original, str):
        return False
    zone = None if _TZ_PREFIX.match(original.strip()) else spec.get("timeZone")
    try:
        return _schedule(original, zone) == (spec.get("schedule"), spec.get("timeZone"))
    except ConvertError:
        return False


def _schedule(text: Any, zone: Any) -> tuple[str, Any]:
    """The schedule and time zone as cronctl reads them, for a CronJob's schedule and timeZone."""
    if not isinstance(text, str):
        raise ConvertError("spec.schedule", "must be a string")
    schedule = text.strip()
    prefixed = _TZ_PREFIX.match(schedule)
    if prefixed:
        if zone is not None:
            raise ConvertError("spec.schedule", "names a zone (TZ=) and spec.timeZone another: keep one")
        zone, schedule = prefixed.group(1), prefixed.group(2).strip()
    schedule = DESCRIPTORS.get(schedule.lower(), schedule)
    if schedule.lower().startswith("@every "):
        schedule = _every(schedule)
    elif not schedule.startswith("@"):
        fields = schedule.split()
        if len(fields) == 5:
            fields[2], fields[4] = (f.replace("?", "*") for f in (fields[2], fields[4]))
            schedule = " ".join(fields)
    try:
        parse_expression(schedule)
    except CronctlError as error:
        raise ConvertError("spec.schedule", f"{text!r}: {error.message}") from None
    return schedule, zone


def _every(text: str) -> str:
    """``@every`` with a Go duration of whole minutes, as cronctl writes it (``@every 90m``)."""
    duration = text.split(None, 1)[1].strip()
    match = _DURATION.match(duration)
    if not duration or match is None:
        raise ConvertError("spec.schedule", f"{text!r}: cronctl reads @every in hours and minutes (1h30m)")
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    if seconds % 60:
        raise ConvertError("spec.schedule", f"{text!r}: cronctl fires at whole minutes, not every {duration}")
    total = hours * 60 + minutes + seconds // 60
    if total % 60 == 0:
        return f"@every {total // 60}h"
    return f"@every {total}m"


def _metadata(body: Mapping[str, Any]) -> dict[str, Any]:
    metadata = _mapping(body.get("metadata"), "metadata")
    if not isinstance(metadata.get("name"), str):
        raise ConvertError("metadata.name", "is required")
    kept = {key: metadata[key] for key in KEPT_METADATA if metadata.get(key)}
    annotations = {key: value for key, value in (kept.get("annotations") or {}).items() if key != LAST_APPLIED}
    if annotations:
        kept["annotations"] = annotations
    else:
        kept.pop("annotations", None)
    return kept


def _mapping(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConvertError(field, "must be a mapping")
    return dict(value)


def _ordered(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec's fields in a reading order: the times first, the Job template last."""
    first = ("schedule", "timeZone", "daylightSaving", "concurrencyPolicy", "startingDeadlineSeconds", "suspend",
             "successfulJobsHistoryLimit", "failedJobsHistoryLimit")
    return {**{key: spec[key] for key in first if key in spec},
            **{key: value for key, value in spec.items() if key not in first}}


@dataclass
class Converted:
    documents: list[Any]  # every document, the converted ones in place
    problems: list[str]  # "FILE: document N (CronJob 'x'): field: reason"
    count: int = 0  # how many were converted


def convert_text(text: str, source: str, to: str = CRONSCHEDULE_KIND) -> Converted:
    """Every document of a YAML stream, CronJobs turned into CronSchedules (``to`` CronJob: the
    other way); other objects (and lists' other items) unchanged. Never raises on bad input:
    a problem names the source, the document and the field."""
    result = Converted([], [])
    try:
        documents = [document for document in yaml.safe_load_all(text) if document is not None]
    except yaml.YAMLError as error:
        result.problems.append(f"{source}: {yaml_problem(error)}")
        return result
    for index, document in enumerate(documents, start=1):
        result.documents.append(_converted(document, f"{source}: document {index}", to, result))
    return result


def _converted(document: Any, where: str, to: str, result: Converted) -> Any:
    if not isinstance(document, dict):
        return document
    if document.get("kind") == "List" and isinstance(document.get("items"), list):
        items = [_converted(item, f"{where} item {i}", to, result) for i, item in enumerate(document["items"])]
        return {**document, "items": items}
    source_kind = CRONJOB_KIND if to == CRONSCHEDULE_KIND else CRONSCHEDULE_KIND
    if document.get("kind") != source_kind:
        return document
    name = (document.get("metadata") or {}).get("name") if isinstance(document.get("metadata"), dict) else None
    try:
        converted = to_cronschedule(document) if to == CRONSCHEDULE_KIND else to_cronjob(document)
    except ConvertError as error:
        result.problems.append(f"{where} ({source_kind} {name!r}): {error}")
        return document
    result.count += 1
    return converted


def dump(documents: Iterable[Any]) -> str:
    return yaml.safe_dump_all(list(documents), sort_keys=False, default_flow_style=False, allow_unicode=True)


__all__ = ["ConvertError", "Converted", "ORIGINAL_SCHEDULE", "convert_text", "dump", "to_cronjob",
           "to_cronschedule"]
