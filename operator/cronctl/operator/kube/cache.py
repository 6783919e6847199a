"""What the watches have shown: the CronSchedules, their Jobs and the CronPools, kept in memory.

A reconcile reads from here instead of asking the API server (a GET of the
schedule and a LIST of its Jobs each time would cost two requests per
schedule per firing, and a label-selected LIST scans every Job of the
namespace). Watch events fill it; the operator's own writes go through it at
once (the API's answer to a create or a patch), so a reconcile right after a
write does not act on the state before it.

An entry only moves forward: an object older than the one kept (by
``resourceVersion``, which etcd makes increasing) is ignored, so a late watch
event cannot undo a write. Jobs are kept slim: the fields the operator reads.
"""

from __future__ import annotations

import threading
from typing import Any, Iterable, Mapping

from ...api import SCHEDULE_LABEL

Key = tuple[str, str]  # (namespace, name)


class Cache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._schedules: dict[Key, dict[str, Any]] = {}
        self._jobs: dict[Key, dict[str, dict[str, Any]]] = {}  # by owning schedule, then Job name
        self._pools: dict[Key, dict[str, Any]] = {}

    # -- schedules ----------------------------------------------------------------

    def schedule(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._schedules.get((namespace, name))

    def put_schedule(self, body: Mapping[str, Any]) -> None:
        key = _key(body)
        with self._lock:
            if _newer(self._schedules.get(key), body):
                self._schedules[key] = slim_schedule(body)

    def replace_all_schedules(self, namespace: str | None, bodies: Iterable[Mapping[str, Any]]) -> set[Key]:
        """What a fresh LIST of a namespace's CronSchedules (None: every namespace's) says,
        whatever the cache held; the schedules it no longer has (their Jobs are forgotten too)."""
        listed = {_key(body): slim_schedule(body) for body in bodies}
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
            if _newer(self._pools.get(key), body):
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
            return sorted(key for key, body in self._schedules.items()
                          if key[0] == namespace and (body.get("spec") or {}).get("pool") == pool)

    # -- jobs ---------------------------------------------------------------------

    def jobs(self, namespace: str, schedule: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._jobs.get((namespace, schedule), {}).values())

    def job(self, namespace: str, schedule: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._jobs.get((namespace, schedule), {}).get(name)

    def put_job(self, body: Mapping[str, Any]) -> None:
        owner = owner_of(body)
        if owner is None:
            return
        name = body["metadata"]["name"]
        with self._lock:
            jobs = self._jobs.setdefault(owner, {})
            if _newer(jobs.get(name), body):
                jobs[name] = slim_job(body)

    def put_jobs(self, bodies: Iterable[Mapping[str, Any]]) -> None:
        for body in bodies:
            self.put_job(body)

    def drop_job(self, namespace: str, schedule: str, name: str) -> None:
        with self._lock:
            self._jobs.get((namespace, schedule), {}).pop(name, None)

    def replace_all_jobs(self, namespace: str | None, bodies: Iterable[Mapping[str, Any]]) -> set[Key]:
        """What a fresh LIST of a namespace's Jobs (None: every namespace's) says, whatever the
        cache held; the schedules whose Jobs it changed (a Job gone, come, or of another version)."""
        listed: dict[Key, dict[str, dict[str, Any]]] = {}
        for body in bodies:
            owner = owner_of(body)
            if owner is not None:
                listed.setdefault(owner, {})[body["metadata"]["name"]] = slim_job(body)
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
            self._jobs[(namespace, schedule)] = {body["metadata"]["name"]: slim_job(body) for body in bodies}


def slim_schedule(body: Mapping[str, Any]) -> dict[str, Any]:
    """A CronSchedule without ``metadata.managedFields``, which the operator never reads: a third
    of the object's JSON (1.8 of 5 KB for a fleet's schedule), and of what the collector walks."""
    metadata = body.get("metadata") or {}
    if "managedFields" not in metadata:
        return dict(body)
    return {**body, "metadata": {key: value for key, value in metadata.items() if key != "managedFields"}}


def slim_job(body: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a Job the operator reads (observe.run_of_job), nothing more."""
    metadata = body.get("metadata") or {}
    return {
        "metadata": {field: metadata[field] for field in (
            "name", "namespace", "labels", "annotations", "ownerReferences", "deletionTimestamp",
            "resourceVersion") if field in metadata},
        "spec": {"suspend": (body.get("spec") or {}).get("suspend")},
        "status": {"conditions": (body.get("status") or {}).get("conditions") or []},
    }


def _key(body: Mapping[str, Any]) -> Key:
    metadata = body["metadata"]
    return metadata.get("namespace") or "", metadata["name"]


def owner_of(body: Mapping[str, Any]) -> Key | None:
    metadata = body.get("metadata") or {}
    schedule = (metadata.get("labels") or {}).get(SCHEDULE_LABEL)
    return None if schedule is None else (metadata.get("namespace") or "", schedule)


def _versions(jobs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return {name: job["metadata"].get("resourceVersion") for name, job in jobs.items()}


def _newer(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    if old is None:
        return True
    try:
        return int(new["metadata"]["resourceVersion"]) >= int(old["metadata"]["resourceVersion"])
    except (KeyError, TypeError, ValueError):
        return True  # not comparable: the newest word wins
