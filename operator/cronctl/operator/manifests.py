"""Pure builders of the API objects the operator writes: Jobs, conditions, Events.

A Job also records what its reconcile decided beyond the run it starts, so
that a crash before the status write loses nothing (see ``effects.ordered``):
the overflow it was launched past, the trigger it answers. ``observe`` reads
them back. (The runs a Replace ends are recorded in the status before their
Jobs are deleted, ahead of the create; a Job an older operator made may
still name them in ``cronctl.dev/replaces``, which ``observe`` reads.)

Every Job carries CronJob's ``batch.kubernetes.io/cronjob-scheduled-timestamp``
(``SCHEDULED_TIMESTAMP_ANNOTATION``), for tooling written for CronJob.

A staged Job (``job_manifest`` of a ``JobLaunch(..., staged=True)``) is the Job of a firing
created ahead of its minute, suspended and labelled ``cronctl.dev/staged``,
with no run number yet (its scheduled timestamp is its nominal time's
already, and part of its digest); ``release_patch`` is the one write that
makes it a run: its number and what its reconcile decided besides, and
``suspend: false``. Its containers read ``CRONCTL_REASON`` from the Pod's own
annotation (the downward API), which a late release (a Forbid overlap let
the time run as a catch-up) rewrites while the Job is still suspended.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

import orjson

from ..core.times import format_time
from ..core.zones import UTC, AnyZone, parse_zone
from ..manifest import API_VERSION, KIND
from .resource import (ATTEMPT_LABEL, OVERFLOW_ANNOTATION, POOL_LABEL, REASON_ANNOTATION, REASON_LABEL, REPLACES_ANNOTATION, RUN_LABEL,
                       SCHEDULE_LABEL, SCHEDULED_ANNOTATION, SHARD_LABEL, STAGED_DIGEST_ANNOTATION, STAGED_LABEL,
                       START_AT_ANNOTATION, STARTED_ANNOTATION, TRIGGER_ANNOTATION, rfc3339, rfc3339_seconds)

# CronJob's annotation of the time a Job was scheduled for (kubernetes pkg/controller/cronjob/utils.go).
SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"


class OverflowNote(NamedTuple):
    """What a Job launched past the missed-schedules limit says of that overflow."""

    missed: int
    limit: int
    dropped: int

    def to_annotation(self) -> str:
        return json.dumps({"missed": self.missed, "limit": self.limit, "dropped": self.dropped},
                          separators=(",", ":"))

    @classmethod
    def from_annotation(cls, text: object) -> OverflowNote | None:
        if not isinstance(text, str):
            return None
        try:
            data = json.loads(text)
            return cls(int(data["missed"]), int(data["limit"]), int(data.get("dropped", 0)))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


def replaced_runs(annotations: Mapping[str, Any]) -> list[str]:
    """The runs a Job made by an older operator says it replaces (this one records them in the status)."""
    return [name for name in str(annotations.get(REPLACES_ANNOTATION) or "").split(",") if name]


def scheduled_timestamp(minute: int, zone: AnyZone) -> str:
    """The time a Job was scheduled for as CronJob writes it: RFC 3339 in the schedule's zone
    (Go's ``time.RFC3339``, which writes a zero offset as ``Z``)."""
    offset = zone.utc_offset(minute)
    if offset == 0:
        return rfc3339(minute)
    hours, minutes = divmod(abs(offset), 60)
    return f"{format_time(minute + offset)}:00{'-' if offset < 0 else '+'}{hours:02d}:{minutes:02d}"


def schedule_zone(schedule: Mapping[str, Any]) -> AnyZone:
    """The zone a CronSchedule's times are read in (UTC unless ``spec.timeZone`` names one; the
    plan read the spec before it builds a Job, so the name is one the reader takes)."""
    name = (schedule.get("spec") or {}).get("timeZone")
    return UTC if name is None else parse_zone(name, "spec.timeZone")


# Runs asked for by hand have names of their own: a manual run at a schedule time's minute, or a
# backfill of a time whose scheduled run still exists, is another run.
_NAME_SUFFIXES = {"manual": "-manual", "backfill": "-backfill"}


def job_name(schedule: str, scheduled: int, attempt: int = 1, reason: str = "scheduled") -> str:
    """The Job of one attempt at one nominal time: <schedule>-<minutes since 1970>, as
    CronJob names them, and -<attempt> for attempts after the first.

    Being a function of the nominal time and the attempt, it is the lock that
    keeps a crash between creating the Job and saving status from starting a
    second one, or from skipping or repeating an attempt.
    """
    base = _fitted(schedule, f"-{scheduled}" + _NAME_SUFFIXES.get(reason, ""))
    return base if attempt == 1 else f"{base}-{attempt}"


# A Job's name is the value of its Pods' job-name label: at most 63 characters. A run's name
# keeps 4 of them for the attempts after the first (-2 ... -101, maxRetries being at most 100).
MAX_RUN_NAME = 63 - 4


def _fitted(schedule: str, suffix: str) -> str:
    """``schedule + suffix``, the schedule's name cut and marked with a digest of it where the
    whole would be too long: deterministic, so that a restart finds the same names."""
    if len(schedule) + len(suffix) <= MAX_RUN_NAME:
        return schedule + suffix
    digest = hashlib.sha256(schedule.encode()).hexdigest()[:6]
    return f"{schedule[:MAX_RUN_NAME - len(suffix) - 7].rstrip('-')}-{digest}{suffix}"


@dataclass(frozen=True)
class JobLaunch:
    """One attempt's Job as its reconcile launches it: the run (its number, nominal time, first
    launch and reason), which attempt, and what the reconcile decided besides it.

    ``started`` is the run's first launch: the timeout counts from it, so a later
    attempt (made at ``now``) gets only the time that is left.

    ``start_at`` (seconds since 1970), when given, is a start the jitter put off:
    the Job is created suspended, so its name holds the firing across a crash,
    and the operator resumes it at that second. ``overflow`` and ``trigger``
    are what the reconcile that launches it decided besides it.

    ``staged``: the Job of a firing created before its minute (``start_at`` is
    then the second it is due), suspended, with no run yet: ``number`` is not
    written, and the digest of what it was staged with is.

    ``pool``: the CronPool whose worker the attempt waits for: the Job is created
    suspended and labelled with it, and the pool's look resumes it."""

    number: int
    scheduled: int
    started: int
    attempt: int = 1
    reason: str = "scheduled"
    now: int | None = None
    start_at: int | None = None
    overflow: OverflowNote | None = None
    trigger: str | None = None
    pool: str | None = None
    staged: bool = False

    @property
    def suspended(self) -> bool:
        """Created suspended: it waits for its jittered second or its pool's worker."""
        return self.start_at is not None or self.pool is not None


def job_manifest(schedule: Mapping[str, Any], template: Mapping[str, Any], launch: JobLaunch,
                 timeout_minutes: int | None = None, retries: int = 0) -> dict[str, Any]:
    """The Job of one attempt (``JobLaunch`` says what each of its facts does to it), with the
    schedule's timeout and retries applied to the template's spec."""
    metadata = schedule["metadata"]
    template_metadata = template.get("metadata") or {}
    spec = _job_spec(template, launch.started, timeout_minutes, launch.now, retries, launch.suspended)
    recorded = _recorded(launch.start_at, launch.overflow, launch.trigger)
    stamp = scheduled_timestamp(launch.scheduled, schedule_zone(schedule))
    facts: dict[str, str | dict[str, Any]] = {
        "CRONCTL_SCHEDULE": metadata["name"], "CRONCTL_NOMINAL_TIME": rfc3339(launch.scheduled),
        "CRONCTL_REASON": launch.reason, "CRONCTL_ATTEMPT": str(launch.attempt)}
    run_labels = _run_labels(launch)
    if launch.staged:
        assert launch.start_at is not None, "a staged Job waits for the second it is due"
        facts["CRONCTL_REASON"] = _reason_from_the_pod(spec, launch.reason)
    _add_run_env(spec, facts)
    if launch.staged:
        recorded[STAGED_DIGEST_ANNOTATION] = _digest(spec, template_metadata, launch.start_at, stamp)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(metadata["name"], launch.scheduled, launch.attempt, launch.reason),
            "namespace": metadata["namespace"],
            "labels": {**(template_metadata.get("labels") or {}), SCHEDULE_LABEL: metadata["name"],
                       **_placement_labels(metadata, launch.pool), **run_labels, ATTEMPT_LABEL: str(launch.attempt)},
            "annotations": {**(template_metadata.get("annotations") or {}),
                            SCHEDULED_ANNOTATION: rfc3339(launch.scheduled), STARTED_ANNOTATION: rfc3339(launch.started),
                            REASON_ANNOTATION: launch.reason, SCHEDULED_TIMESTAMP_ANNOTATION: stamp, **recorded},
            "ownerReferences": [{
                "apiVersion": API_VERSION, "kind": KIND, "name": metadata["name"], "uid": metadata["uid"],
                "controller": True, "blockOwnerDeletion": True,
            }],
        },
        "spec": spec,
    }


def _run_labels(launch: JobLaunch) -> dict[str, str]:
    """The run's number (and a run by hand's reason), or the staged mark of a Job that is no run yet."""
    if launch.staged:
        return {STAGED_LABEL: "true"}
    labels = {RUN_LABEL: str(launch.number)}
    if launch.reason in _NAME_SUFFIXES:  # kubectl get jobs -l cronctl.dev/reason=backfill
        labels[REASON_LABEL] = launch.reason
    return labels


def _placement_labels(metadata: Mapping[str, Any], pool: str | None) -> dict[str, str]:
    """The schedule's shard and the attempt's pool, where it has them."""
    shard = (metadata.get("labels") or {}).get(SHARD_LABEL)
    return {**({} if shard is None else {SHARD_LABEL: shard}), **({} if pool is None else {POOL_LABEL: pool})}


def _reason_from_the_pod(spec: dict[str, Any], reason: str) -> dict[str, Any]:
    """A staged Job's reason, written on its Pod template, and the ``valueFrom`` its containers read it
    by: a late release rewrites it there while the Job is still suspended."""
    pod_metadata = spec.setdefault("template", {}).setdefault("metadata", {})
    pod_metadata["annotations"] = {**(pod_metadata.get("annotations") or {}), REASON_ANNOTATION: reason}
    return {"fieldRef": {"fieldPath": f"metadata.annotations['{REASON_ANNOTATION}']"}}


def _job_spec(template: Mapping[str, Any], started: int, timeout_minutes: int | None, now: int | None,
              retries: int, suspended: bool) -> dict[str, Any]:
    """The template's Job spec with what the launch sets: the deadline its timeout leaves (from
    the run's first launch), no Job-level retries when cronctl retries, suspended when it waits."""
    spec = orjson.loads(orjson.dumps(template.get("spec") or {}))  # a deep copy, 8x faster than deepcopy's
    if timeout_minutes is not None:
        elapsed = 0 if now is None else now - started
        deadline = max(60, (timeout_minutes - elapsed) * 60)
        spec["activeDeadlineSeconds"] = min(deadline, spec.get("activeDeadlineSeconds", deadline))
    if retries:
        spec["backoffLimit"] = 0  # each attempt is its own Job: cronctl retries, not the Job
    if suspended:
        spec["suspend"] = True
    return spec


def _recorded(start_at: int | None, overflow: OverflowNote | None, trigger: str | None) -> dict[str, str]:
    """The annotations that record what a launch's reconcile decided besides the Job."""
    recorded = {} if start_at is None else {START_AT_ANNOTATION: rfc3339_seconds(start_at)}
    if overflow is not None:
        recorded[OVERFLOW_ANNOTATION] = overflow.to_annotation()
    if trigger is not None:
        recorded[TRIGGER_ANNOTATION] = trigger
    return recorded


def release_patch(number: int, overflow: OverflowNote | None = None,
                  late: tuple[str, int] | None = None) -> dict[str, Any]:
    """The one write that makes a staged Job its run (a merge patch): the run's number, the
    staged label gone, what the launch decided besides it (as ``job_manifest`` records it),
    and ``suspend: false``. ``late`` is (reason, minute) of a launch after the minute it was
    staged for: its reason and launch minute replace the staged ones, on the Job and on the
    Pod template (which a suspended Job that never started may still change)."""
    annotations: dict[str, Any] = {}
    if overflow is not None:
        annotations[OVERFLOW_ANNOTATION] = overflow.to_annotation()
    spec: dict[str, Any] = {"suspend": False}
    if late is not None:
        reason, started = late
        annotations.update({REASON_ANNOTATION: reason, STARTED_ANNOTATION: rfc3339(started)})
        spec["template"] = {"metadata": {"annotations": {REASON_ANNOTATION: reason}}}
    metadata: dict[str, Any] = {"labels": {RUN_LABEL: str(number), STAGED_LABEL: None}}
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": spec}


def pool_start_patch(deadline_seconds: int | None) -> dict[str, Any]:
    """The write that gives a pooled attempt its worker (a merge patch): ``suspend: false``, and
    the time its timeout leaves it: the job controller starts ``activeDeadlineSeconds`` afresh
    at a resume, and a run's timeout counts from its launch, its wait in the pool included (as
    the runner counts a wait for a worker slot)."""
    spec: dict[str, Any] = {"suspend": False}
    if deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = deadline_seconds
    return {"spec": spec}


def staged_digest(manifest: Mapping[str, Any]) -> str | None:
    return ((manifest.get("metadata") or {}).get("annotations") or {}).get(STAGED_DIGEST_ANNOTATION)


def _digest(spec: Mapping[str, Any], template_metadata: Mapping[str, Any], start_at: int, stamp: str) -> str:
    """What a staged Job was made of, in 16 hex digits: equal digests, the same Job. (Canonical
    JSON by orjson, a third of the standard library's time; a Job staged by an operator that
    wrote it with json and non-ASCII text reads as another Job once, and is staged again, as
    does one staged before Jobs carried their scheduled timestamp, so that none is released
    without it.)"""
    text = orjson.dumps([spec, template_metadata.get("labels") or {}, template_metadata.get("annotations") or {},
                         start_at, stamp], option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return hashlib.sha256(text).hexdigest()[:16]


def _add_run_env(spec: dict[str, Any], facts: Mapping[str, str | dict[str, Any]]) -> None:
    """Each container learns its run as a local runner's process does (a catch-up run can do the
    work of its own nominal time); a variable the template sets itself is left as it is. A fact
    given as a dict is a ``valueFrom`` source."""
    pod = (spec.get("template") or {}).get("spec") or {}
    for container in pod.get("containers") or []:
        env = list(container.get("env") or [])
        given = {item.get("name") for item in env}
        container["env"] = env + [{"name": name, "value": value} if isinstance(value, str) else
                                  {"name": name, "valueFrom": value}
                                  for name, value in facts.items() if name not in given]


@dataclass(frozen=True)
class EventSpec:
    type: str  # Normal or Warning
    reason: str  # CamelCase
    message: str
    times: int = 1  # what its counter counts: one Event may say several schedule times were missed


def condition(kind: str, ok: bool, reason: str, message: str, generation: int, now: int,
              previous: list[Mapping[str, Any]]) -> dict[str, Any]:
    """A condition that keeps its lastTransitionTime while its status does not change."""
    status = "True" if ok else "False"
    old = next((c for c in previous if c.get("type") == kind), None)
    since = old["lastTransitionTime"] if old and old.get("status") == status and old.get(
        "lastTransitionTime") else rfc3339(now)
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": since, "observedGeneration": generation}
