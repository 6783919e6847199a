"""What the watches have shown: the CronSchedules, their Jobs and the CronPools, kept in memory.

A reconcile reads from here instead of asking the API server (a GET of the
schedule and a LIST of its Jobs each time would cost two requests per
schedule per firing, and a label-selected LIST scans every Job of the
namespace). Watch events fill it; the operator's own writes go through it at
once (the API's answer to a create or a patch), so a reconcile right after a
write does not act on the state before it.

An entry only moves forward: an object older than the one kept (by
``resourceVersion``, which etcd makes increasing) is ignored, so a late watch
event cannot undo a write.

What it keeps is what the operator decides on, not whole objects (issue 47:
memory per 1,000 schedules; ``benchmarks/bench_operator_memory.py``):

- a CronSchedule without ``metadata.managedFields`` and kubectl's
  last-applied annotation, which no decision reads (``slim_schedule``); a Job
  as the few fields ``observe`` reads (``slim_job``);
- each as its compact JSON (``Kept``: bytes, with its ``resourceVersion`` and
  a schedule's pool beside them), parsed again at each read. A parsed
  schedule is five times its JSON in Python objects (8.5 KiB against 1.8 for
  a fleet's schedule with its status); a read costs 6 us, a few per launch.
  Each read is a fresh object: a caller may change it without changing the
  cache. CronPools, a few per cluster, stay parsed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import orjson

from ...api import SCHEDULE_LABEL

Key = tuple[str, str]  # (namespace, name)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"  # a copy of the spec kubectl apply leaves


@dataclass(frozen=True, slots=True)
class Kept:
    """One object as the cache keeps it: its slim JSON, and what is read of it without a parse."""

    json: bytes
    version: str | None  # metadata.resourceVersion
    pool: str | None = None  # a schedule's spec.pool

    @classmethod
    def of(cls, slim: Mapping[str, Any]) -> Kept:
        pool = (slim.get("spec") or {}).get("pool")
        # Copied to its own size: orjson's answer keeps the buffer it grew (4 KiB, or 16, for 2 of JSON).
        compact = memoryview(orjson.dumps(slim, option=orjson.OPT_NON_STR_KEYS)).tobytes()
        return cls(compact, (slim.get("metadata") or {}).get("resourceVersion"), pool if isinstance(pool, str) else None)

    def body(self) -> dict[str, Any]:
        return orjson.loads(self.json)  # type: ignore[no-any-return]


class Cache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._schedules: dict[Key, Kept] = {}
        self._jobs: dict[Key, dict[str, Kept]] = {}  # by owning schedule, then Job name
        self._pools: dict[Key, dict[str, Any]] = {}

    # -- schedules ----------------------------------------------------------------

    def schedule(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            kept = self._schedules.get((namespace, name))
        return None if kept is None else kept.body()

    def put_schedule(self, body: Mapping[str, Any]) -> None:
        key, kept = _key(body), Kept.of(slim_schedule(body))
        with self._lock:
            if _newer(self._schedules.get(key), kept):
                self._schedules[key] = kept

    def replace_all_schedules(self, namespace: str | None, bodies: Iterable[Mapping[str, Any]]) -> set[Key]:
        """What a fresh LIST of a namespace's CronSchedules (None: every namespace's) says,
        whatever the cache held; the schedules it no longer has (their Jobs are forgotten too)."""
        listed = {_key(body): Kept.of(slim_schedule(body)) for body in bodies}
        with self._lock:
            gone = {key for key in self._schedules if namespace in (None, key[0]) and key not in listed}
            for key in gone:
                del self._schedules[key]
                self._jobs.pop(key, None)
            self._schedules.update(listed)
        return gone

    def drop_schedule(self, namespace: str, name: str) -> None:
        with self._lock:
            self._schedules.pop((namespace, name), None)
            self._jobs.pop((namespace, name), None)

    # -- pools --------------------------------------------------------------------

    def pool(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._pools.get((namespace, name))

    def pools(self) -> list[Key]:
        with self._lock:
            return sorted(self._pools)

    def put_pool(self, body: Mapping[str, Any]) -> None:
        key = _key(body)
        with self._lock:
            held = self._pools.get(key)
            if held is None or _later(body["metadata"].get("resourceVersion"), held["metadata"].get("resourceVersion")):
                self._pools[key] = slim_schedule(body)

    def drop_pool(self, namespace: str, name: str) -> None:
        with self._lock:
            self._pools.pop((namespace, name), None)

    def replace_all_pools(self, namespace: str | None, bodies: Iterable[Mapping[str, Any]]) -> set[Key]:
        """What a fresh LIST of a namespace's CronPools (None: every namespace's) says; the pools
        that came, went or changed."""
        listed = {_key(body): slim_schedule(body) for body in bodies}
        with self._lock:
            held = {key: pool for key, pool in self._pools.items() if namespace in (None, key[0])}
            changed = {key for key in held.keys() | listed.keys()
                       if (held.get(key) or {}).get("metadata", {}).get("resourceVersion")
                       != (listed.get(key) or {}).get("metadata", {}).get("resourceVersion")}
            for key in held.keys() - listed.keys():
                del self._pools[key]
            self._pools.update(listed)
        return changed

    def schedules_in_pool(self, namespace: str, pool: str) -> list[Key]:
        """The cached schedules whose spec.pool names this pool."""
        with self._lock:
            return sorted(key for key, kept in self._schedules.items() if key[0] == namespace and kept.pool == pool)

    # -- jobs ---------------------------------------------------------------------

    def jobs(self, namespace: str, schedule: str) -> list[dict[str, Any]]:
        with self._lock:
            kept = list(self._jobs.get((namespace, schedule), {}).values())
        return [each.body() for each in kept]

    def job(self, namespace: str, schedule: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            kept = self._jobs.get((namespace, schedule), {}).get(name)
        return None if kept is None else kept.body()

    def put_job(self, body: Mapping[str, Any]) -> None:
        owner = owner_of(body)
        if owner is None:
            return
        name, kept = body["metadata"]["name"], Kept.of(slim_job(body))
        with self._lock:
            jobs = self._jobs.setdefault(owner, {})
            if _newer(jobs.get(name), kept):
                jobs[name] = kept

    def put_jobs(self, bodies: Iterable[Mapping[str, Any]]) -> None:
        for body in bodies:
            self.put_job(body)

    def drop_job(self, namespace: str, schedule: str, name: str) -> None:
        with self._lock:
            self._jobs.get((namespace, schedule), {}).pop(name, None)

    def replace_all_jobs(self, namespace: str | None, bodies: Iterable[Mapping[str, Any]]) -> set[Key]:
        """What a fresh LIST of a namespace's Jobs (None: every namespace's) says, whatever the
        cache held; the schedules whose Jobs it changed (a Job gone, come, or of another version)."""
        listed: dict[Key, dict[str, Kept]] = {}
        for body in bodies:
            owner = owner_of(body)
            if owner is not None:
                listed.setdefault(owner, {})[body["metadata"]["name"]] = Kept.of(slim_job(body))
        with self._lock:
            held = {key: jobs for key, jobs in self._jobs.items() if namespace in (None, key[0])}
            changed = {key for key in held.keys() | listed.keys()
                       if _versions(held.get(key, {})) != _versions(listed.get(key, {}))}
            for key in held.keys() - listed.keys():
                del self._jobs[key]
            self._jobs.update(listed)
        return changed

    def replace_jobs(self, namespace: str, schedule: str, bodies: Iterable[Mapping[str, Any]]) -> None:
        """What a fresh LIST of the API says, whatever the cache held."""
        with self._lock:
            self._jobs[(namespace, schedule)] = {body["metadata"]["name"]: Kept.of(slim_job(body)) for body in bodies}


def slim_schedule(body: Mapping[str, Any]) -> dict[str, Any]:
    """A CronSchedule without ``metadata.managedFields``, which the operator never reads (a third
    of the object's JSON: 1.8 of 5 KB for a fleet's schedule), nor kubectl apply's copy of the
    spec in its last-applied annotation."""
    metadata = body.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    if "managedFields" not in metadata and LAST_APPLIED not in annotations:
        return dict(body)
    slim = {key: value for key, value in metadata.items() if key != "managedFields"}
    if LAST_APPLIED in annotations:
        slim["annotations"] = {key: value for key, value in annotations.items() if key != LAST_APPLIED}
    return {**body, "metadata": slim}


ENDING_CONDITIONS = ("Complete", "Failed")  # the conditions of a Job that ``observe`` reads
CONDITION_FIELDS = ("type", "status", "reason", "message", "lastTransitionTime")


def slim_job(body: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a Job the operator reads (``observe.run_of_job``, ``jobwatch.has_ended``),
    nothing more: of its conditions, Complete and Failed (not SuccessCriteriaMet or
    FailureTarget, which come before them), without their lastProbeTime."""
    metadata = body.get("metadata") or {}
    return {
        "metadata": {field: metadata[field] for field in (
            "name", "namespace", "labels", "annotations", "ownerReferences", "deletionTimestamp",
            "resourceVersion") if field in metadata},
        "spec": {"suspend": (body.get("spec") or {}).get("suspend")},
        "status": {"conditions": [{field: condition[field] for field in CONDITION_FIELDS if field in condition}
                                  for condition in (body.get("status") or {}).get("conditions") or []
                                  if condition.get("type") in ENDING_CONDITIONS]},
    }


def _key(body: Mapping[str, Any]) -> Key:
    metadata = body["metadata"]
    return metadata.get("namespace") or "", metadata["name"]


def owner_of(body: Mapping[str, Any]) -> Key | None:
    metadata = body.get("metadata") or {}
    schedule = (metadata.get("labels") or {}).get(SCHEDULE_LABEL)
    return None if schedule is None else (metadata.get("namespace") or "", schedule)


def _versions(jobs: Mapping[str, Kept]) -> dict[str, Any]:
    return {name: job.version for name, job in jobs.items()}


def _newer(old: Kept | None, new: Kept) -> bool:
    return old is None or _later(new.version, old.version)


def _later(new: Any, old: Any) -> bool:
    """Whether resourceVersion ``new`` is not older than ``old``."""
    try:
        return int(new) >= int(old)
    except (TypeError, ValueError):
        return True  # not comparable: the newest word wins
