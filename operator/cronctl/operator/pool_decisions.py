"""One look at a CronPool, as data: which of its waiting Jobs start now, and its status.

A pooled schedule's runs are launched at their times as always, but their
Jobs are created suspended and labelled ``cronctl.dev/pool`` (``plan``). A
pool's state is nothing but those Jobs: one running (not suspended, not
ended, not being deleted) holds a worker; one suspended waits. ``pool_plan``
reads the Jobs as the API has them (a fresh LIST: the last leader's resumes
included, so a restart or a failover in the middle of a queue recomputes the
same pool and never starts more than ``workers``), asks the core which
waiting attempts start (``core.pool.pool_step``: seed 001's order, a jittered
attempt not before its second) and turns that into resumes and the pool's
status. A resume is idempotent, and a Job's name is its run's, so nothing a
pool does can launch a run twice.

Pure: the CronPool (None: it does not exist, and nothing starts), its Jobs
and the second in; a ``PoolPlan`` out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..core.pool import PoolRun, pool_step
from .manifests import pool_start_patch
from .observe import job_outcome
from .resource import (ATTEMPT_LABEL, POOL_LABEL, RUN_LABEL, SCHEDULE_LABEL, SCHEDULED_ANNOTATION, STAGED_LABEL,
                       START_AT_ANNOTATION, parse_rfc3339, parse_rfc3339_seconds, rfc3339, rfc3339_seconds)

QUEUE_SHOWN = 10  # waiting attempts listed in the pool's status, first first


@dataclass(frozen=True)
class PoolStart:
    """A waiting attempt the pool gives a worker: its Job, the write, how long it waited."""

    job: str
    schedule: str
    patch: dict[str, Any]
    waited: float  # seconds


@dataclass(frozen=True)
class PoolPlan:
    starts: list[PoolStart] = field(default_factory=list)
    status: dict[str, Any] | None = None  # the new status, if it changed
    busy: int = 0  # after the starts
    queued: int = 0
    oldest_wait: float = 0.0  # seconds the first waiting attempt has waited (0: none waits)
    wake_at: float | None = None  # the second a jittered waiting attempt may start


def pool_plan(pool: Mapping[str, Any] | None, jobs: Iterable[Mapping[str, Any]], second: float) -> PoolPlan:
    """What the pool does at ``second``. A missing pool starts nothing (its queue waits for it)."""
    if pool is None:
        return PoolPlan()
    name = str(pool["metadata"]["name"])
    mine = [job for job in jobs if _labels(job).get(POOL_LABEL) == name and not _gone(job)]
    busy = sum(1 for job in mine if not _suspended(job))
    waiting = [run for job in mine if (run := waiting_run(job)) is not None]
    step = pool_step(_workers(pool), busy, waiting, second)
    by_name = {str(job["metadata"]["name"]): job for job in mine}
    starts = [PoolStart(run.key, run.schedule, pool_start_patch(deadline_left(by_name[run.key], second)),
                        max(0.0, second - run.since))
              for run in step.start]
    status = _status(pool, busy + len(starts), step.queue, starts, second)
    old = pool.get("status") or {}
    changed = {key: value for key, value in status.items() if old.get(key) != value}
    return PoolPlan(starts, changed or None, busy + len(starts), len(step.queue),
                    max((max(0.0, second - run.since) for run in step.queue), default=0.0),
                    step.wake_at)


def waiting_run(job: Mapping[str, Any]) -> PoolRun | None:
    """The attempt a suspended pooled Job holds, if it waits for a worker (a staged Job, an
    ended one or one not of a run waits for nothing)."""
    labels, annotations = _labels(job), (job.get("metadata") or {}).get("annotations") or {}
    if not _suspended(job) or labels.get(STAGED_LABEL) or RUN_LABEL not in labels:
        return None
    nominal = parse_rfc3339(annotations.get(SCHEDULED_ANNOTATION))
    try:
        attempt = int(labels.get(ATTEMPT_LABEL, 1))
    except ValueError:
        return None
    if nominal is None:
        return None
    # Its creation by the API server's clock (the operator's may differ: only the record reads it);
    # its jitter's second by the operator's, which says when it may start.
    created = parse_rfc3339_seconds((job.get("metadata") or {}).get("creationTimestamp"))
    start_at = parse_rfc3339_seconds(annotations.get(START_AT_ANNOTATION))
    return PoolRun(str(job["metadata"]["name"]), str(labels.get(SCHEDULE_LABEL, "")), nominal, attempt,
                   nominal * 60 if created is None else created, start_at or 0)


def deadline_left(job: Mapping[str, Any], second: float) -> int | None:
    """The seconds of its ``activeDeadlineSeconds`` a waiting Job has left (at least 1): it was set
    at its creation, and the wait since counts (the run's timeout counts from its launch)."""
    deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
    created = parse_rfc3339_seconds((job.get("metadata") or {}).get("creationTimestamp"))
    if not isinstance(deadline, int) or created is None:
        return None
    return max(1, deadline - max(0, int(second) - created))


def _status(pool: Mapping[str, Any], busy: int, queue: list[PoolRun], starts: list[PoolStart],
            second: float) -> dict[str, Any]:
    old = pool.get("status") or {}
    return {
        "observedGeneration": (pool.get("metadata") or {}).get("generation"),
        "busy": busy,
        "queued": len(queue),
        "queue": [{"schedule": run.schedule, "job": run.key, "scheduledTime": rfc3339(run.nominal),
                   "attempt": run.attempt, "waitingSince": rfc3339_seconds(int(run.since))}
                  for run in queue[:QUEUE_SHOWN]],
        "lastStartTime": rfc3339_seconds(int(second)) if starts else old.get("lastStartTime"),
    }


def _workers(pool: Mapping[str, Any]) -> int:
    try:
        return max(0, int((pool.get("spec") or {}).get("workers", 0)))
    except (TypeError, ValueError):
        return 0


def _labels(job: Mapping[str, Any]) -> Mapping[str, Any]:
    return (job.get("metadata") or {}).get("labels") or {}


def _suspended(job: Mapping[str, Any]) -> bool:
    return (job.get("spec") or {}).get("suspend") is True


def _gone(job: Mapping[str, Any]) -> bool:
    """Ended, or being deleted: it holds no worker and waits for none."""
    return bool((job.get("metadata") or {}).get("deletionTimestamp")) or job_outcome(job) is not None


__all__ = ["PoolPlan", "PoolStart", "pool_plan", "waiting_run"]
