"""kopf registrations: the schedules' watch events mark schedules for the loop; nothing else.

Each handler is a few lines: the decisions are the core's, the API work is
``apply``'s, the timing is ``loop``'s. The Jobs' watch is ``jobwatch``'s,
started and stopped here.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any, Mapping

import kopf

from .apply import Cluster, load_client
from .cache import Cache
from .jobwatch import JobWatch, watches
from ..clock import clock_from_environment
from .leader import Election, Leadership
from .events import POSTERS
from .loop import CONCURRENCY, Scheduler
from .metrics import METRICS
from .plan import pending_backfill, pending_trigger
from ..manifest import GROUP, PLURAL, VERSION
from .shard import Shard

_scheduler: Scheduler | None = None
_task: asyncio.Task[None] | None = None
_job_watches: list[JobWatch] = []
election = Election(enabled=False)  # set by ``cronctl operator`` from its flags before kopf starts
namespaces: list[str] = []  # likewise: the watched namespaces, none for all
shard = Shard()  # likewise (``--shard``): the CronSchedules this operator owns
_cache = Cache()  # what the watches showed; reconciles read it instead of the API
CONNECTIONS = CONCURRENCY + POSTERS + 1  # the reconciles, the Event posters, a spare; and one per Jobs' watch
STAGING_VARIABLE = "CRONCTL_STAGING"  # on (the default) or off, where ``cronctl operator --[no-]staging`` is not given
staging: bool | None = None  # set by ``cronctl operator --[no-]staging``; None: STAGING_VARIABLE decides


def staging_from_environment(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether to stage launches (create scheduled firings' Jobs ahead of their minute, suspended).
    Off where something else owns ``spec.suspend`` of Jobs (Kueue)."""
    value = environ.get(STAGING_VARIABLE, "on").strip().lower()
    if value not in ("on", "off"):
        raise ValueError(f"{STAGING_VARIABLE}: {value!r} must be on or off")
    return value == "on"


class NoDiffBase(kopf.DiffBaseStorage):
    """No diff base: the operator has only ``on.event`` handlers, which kopf never diffs, yet it
    builds (deep-copies) a diff base of every object on every watch event unless told otherwise."""

    def build(self, *, body: kopf.Body, extra_fields: Any = None) -> Any:
        return {}

    def fetch(self, *, body: kopf.Body) -> Any:
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: Any) -> None:
        pass


@kopf.on.startup()
async def start(settings: kopf.OperatorSettings, logger: logging.Logger, **_: Any) -> None:
    global _scheduler, _task
    settings.posting.enabled = False  # the operator posts its own Events, with reasons
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
    settings.persistence.diffbase_storage = NoDiffBase()
    settings.watching.server_timeout = 60
    # No cluster-scoped discovery of namespaces and CRDs: the resources and namespaces are
    # known, and a namespaced install grants nothing cluster-wide.
    settings.scanning.disabled = True
    # Only this shard's schedules, filtered by the API server (its Jobs' watch: shard.job_selector).
    settings.watching.label_selectors[GROUP, PLURAL] = shard.schedule_selector
    try:
        staged = staging_from_environment() if staging is None else staging
    except ValueError as error:
        raise kopf.PermanentError(str(error)) from None  # the operator stops: a setting, not a hiccup
    cluster = Cluster(load_client(CONNECTIONS + len(namespaces or [None])), _cache, record_events_later=True,
                      shard=shard)
    leadership = Leadership(election)
    leadership.start()
    _scheduler = Scheduler(cluster, clock_from_environment(), leading=leadership.leading, staging=staged)
    # Every Job a schedule owns is in the cache before the first reconcile (the schedules' watch
    # may deliver an owner before the Jobs' watch would deliver its Jobs).
    _job_watches[:] = watches(cluster.rest, _cache, namespaces, shard.job_selector, _scheduler.touch)
    known = sum([await asyncio.to_thread(watch.list) for watch in _job_watches])
    logger.info("cronctl: %s (label selector %s): %d Jobs of its CronSchedules known", shard.title,
                shard.schedule_selector, known)
    for watch in _job_watches:
        watch.start()
    _task = asyncio.create_task(_scheduler.run(), name="cronctl-scheduler")
    logger.info("cronctl scheduler started; staged launches %s", "on" if staged else "off")


@kopf.on.cleanup()
async def stop(**_: Any) -> None:
    if _task is not None:
        _task.cancel()
    for watch in _job_watches:
        watch.stop()


# A coroutine, run on the event loop: kopf would hand a plain function to a thread per event.
@kopf.on.event(GROUP, VERSION, PLURAL)
async def schedule_changed(type: str | None, event: kopf.RawEvent, **_: Any) -> None:
    body = event["object"]  # the raw dict: kopf's Body views cost a lookup chain per field
    key = (body["metadata"].get("namespace") or "", body["metadata"].get("name") or "")
    if type == "DELETED":
        _cache.drop_schedule(*key)
        METRICS.forget(*key)  # its gauges go with it (it is reconciled no more)
    else:
        _cache.put_schedule(body)
    if _scheduler is None:
        return
    if type == "DELETED":
        _scheduler.forget(key)
    elif key not in _scheduler.known or _spec_changed(body) or pending_trigger(body) is not None \
            or pending_backfill(body) is not None:
        _scheduler.touch(key)


def _spec_changed(body: Mapping[str, Any]) -> bool:
    return body["metadata"].get("generation") != (body.get("status") or {}).get("observedGeneration")

