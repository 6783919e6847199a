"""A plan as a reconcile keeps it until it is carried out: compact, sending the same writes.

The loop holds every plan of a busy second at once twice: made ahead of the
second (``loop.Prepared``, seconds before it) and between its two passes
(``loop.Started``, as long as the API server takes the launches). A plan as
``plan.plan`` makes it is parsed objects, and most of its bytes were what
its writes send (issue 47: at herd 10,000 the plans made ahead were the
operator's largest holder, 8 KiB each by ``benchmarks/bench_operator_memory.py``).
``kept`` turns them into what is sent and what is read later:

- a Job's manifest (a create, a staging) becomes the request's body, JSON
  made once (``CreateJob.body``: the busy second serializes nothing), and of
  the manifest only what the launch's record and an adoption read
  (``as_recorded``);
- a status patch becomes the change from the status the plan read
  (``StatusChanges``), as ``apply`` would make it, and of the new status the
  runs the record reads (``RUN_FIELDS``). A plan is carried out against the
  status it was planned from (``loop.Prepared`` holds only while the
  schedule is the very one), so the change is the one ``apply`` would send.

Kept or not, a plan sends the same requests and its record (``loop._recorded``:
counters, launch delays, the log's fields, the active gauge) reads the same.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

import orjson

from ..api import ATTEMPT_LABEL, REASON_ANNOTATION, RUN_LABEL, SCHEDULED_ANNOTATION, SHARD_LABEL
from .apply import status_changes
from .effects import (CreateJob, Effect, PatchStatus, Plan, RecordReplaced, RecordReplacedChanges, StageJob,
                      StatusChanges, runs_of)

RECORDED_LABELS = (RUN_LABEL, ATTEMPT_LABEL, SHARD_LABEL)  # the run's, and the shard an adoption relabels to
RECORDED_ANNOTATIONS = (SCHEDULED_ANNOTATION, REASON_ANNOTATION)


def kept(plan: Plan, old: Mapping[str, Any]) -> Plan:
    """The plan as a reconcile keeps it (above); ``old`` is the status it was planned from. A plan
    kept already is returned as it is."""
    return replace(plan, effects=[_kept(effect, old) for effect in plan.effects])


def _kept(effect: Effect, old: Mapping[str, Any]) -> Effect:
    if isinstance(effect, (CreateJob, StageJob)) and effect.body is None:
        return type(effect)(as_recorded(effect.manifest), as_body(effect.manifest))
    if isinstance(effect, RecordReplaced):
        return RecordReplacedChanges(status_changes(old, effect.status))
    if isinstance(effect, PatchStatus):
        return StatusChanges(status_changes(old, effect.status), runs_of(effect.status))
    return effect


def as_body(manifest: Mapping[str, Any]) -> bytes:
    """The manifest as a request's body, in bytes of its own length: orjson's own keeps the buffer
    it wrote into (8 KiB for a Job of 1 KiB, by tracemalloc), which a plan holds for seconds."""
    return bytes(memoryview(orjson.dumps(manifest, option=orjson.OPT_NON_STR_KEYS)))


def as_recorded(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """What is read of a Job's manifest once its request's body is made: the launch's record (the
    metrics' launch delays, the log's fields: its name, run, attempt, nominal time and reason), and
    an adoption (its namespace and name, and the shard it is labelled to)."""
    metadata = manifest.get("metadata") or {}
    labels, annotations = metadata.get("labels") or {}, metadata.get("annotations") or {}
    return {"metadata": {"name": metadata.get("name"), "namespace": metadata.get("namespace"),
                         "labels": {key: labels[key] for key in RECORDED_LABELS if key in labels},
                         "annotations": {key: annotations[key] for key in RECORDED_ANNOTATIONS if key in annotations}}}


def carried_out(plan: Plan, done: int) -> Plan:
    """The plan once its first ``done`` effects were carried out: each Job created there keeps an
    empty body (the cache holds the Job; its record reads the manifest kept)."""
    return replace(plan, effects=[replace(effect, body=b"") if index < done and isinstance(effect, CreateJob)
                                  else effect for index, effect in enumerate(plan.effects)])
