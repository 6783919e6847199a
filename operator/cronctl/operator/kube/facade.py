"""The operator's one Kubernetes facade: its reads, its pools' I/O and its Events, with plain dicts
in and out.

Reads come from the ``Cache`` the watches fill, when there is one (the
operator's), and from the API otherwise; every answer a write gets is put in
the cache, so the next plan sees it. It reads the CronSchedules of its
``shard`` only. Events are queued for the background posters
(``events``) or posted at once. It decides nothing: what to write comes from
the plans, and ``operator.apply`` carries a plan out through it. The
credentials it connects with: ``credentials``.
"""

from __future__ import annotations

import datetime as dt
import logging
import socket
from dataclasses import replace
from typing import Any, Mapping, Protocol

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from ...api import API_VERSION, GROUP, KIND, PLURAL, POOL_LABEL, SCHEDULE_LABEL, VERSION
from ..shard import Shard
from .cache import Cache
from .event_series import Written
from .events import EventRecorder, about_of, event_name
from .request_kinds import RequestObserver
from .rest import Call, Calls, Rest, SkewSampler

log = logging.getLogger("cronctl.operator")

NOT_FOUND = 404
CONFLICT = 409


class EventText(Protocol):
    """What an Event says (the operator's ``manifests.EventSpec``)."""

    type: str  # Normal or Warning
    reason: str
    message: str


class KubeFacade:
    """The operator's reads, its pools' I/O and its Events, with plain dicts in and out.

    With a ``Cache`` (the operator's), reads come from what the watches showed
    and every write goes through it; without one, every read asks the API.
    It reads the CronSchedules of its ``shard`` only (the default shard's, by
    default): another shard's schedule is as good as gone."""

    def __init__(self, api_client: client.ApiClient, cache: Cache | None = None,
                 record_events_later: bool = False, shard: Shard = Shard(),
                 skew: SkewSampler | None = None, requests: RequestObserver | None = None) -> None:
        """``record_events_later``: queue Events for background posting (the operator's
        choice) instead of posting them before a plan's ``apply`` returns; ``requests`` is told
        each request's end (the operator's metrics)."""
        self.cache = cache
        self.shard = shard
        self.events = EventRecorder(self.post_events) if record_events_later else None
        self.rest = Rest(api_client, skew=skew, requests=requests)
        self.instance = socket.gethostname()

    # -- reads ----------------------------------------------------------------

    def schedule(self, namespace: str, name: str) -> dict[str, Any] | None:
        cached = None if self.cache is None else self.cache.schedule(namespace, name)
        if cached is not None:
            return cached
        try:
            body = self.rest.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
        except ApiException as error:
            if error.status == NOT_FOUND:
                return None
            raise
        if not self.shard.owns(body):
            return None  # moved to another shard (its watch event may still be on its way here)
        if self.cache is not None:
            self.cache.put_schedule(body)
        return body

    def plan_jobs(self, schedule: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The Jobs to plan a schedule from: the cache's, or the API's for a schedule that
        moved in from another shard (its Jobs still carry that shard's label)."""
        metadata = schedule["metadata"]
        if self.shard.moved_in(schedule):
            log.info("%s/%s: moved to %s: reading its Jobs", metadata["namespace"], metadata["name"],
                     self.shard.title)
            return self.live_jobs(metadata["namespace"], metadata["name"])
        return self.jobs(metadata["namespace"], metadata["name"])

    def jobs(self, namespace: str, schedule: str) -> list[dict[str, Any]]:
        if self.cache is not None:
            return self.cache.jobs(namespace, schedule)
        return self.live_jobs(namespace, schedule)

    def live_jobs(self, namespace: str, schedule: str) -> list[dict[str, Any]]:
        """The schedule's Jobs as the API has them now (and so the cache, from now on)."""
        items = self.rest.list_namespaced_job(namespace, label_selector=f"{SCHEDULE_LABEL}={schedule}")["items"]
        if self.cache is not None:
            self.cache.replace_jobs(namespace, schedule, items)
        return items

    def remember_job(self, body: dict[str, Any]) -> None:
        """A Job as a write's answer has it, put in the cache (the watch may tell it later)."""
        if self.cache is not None:
            self.cache.put_job(body)

    # -- pools ----------------------------------------------------------------

    def pool(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The CronPool as the watch showed it (as the API has it, without a cache); None: none."""
        if self.cache is not None:
            return self.cache.pool(namespace, name)
        try:
            return self.rest.get_namespaced_cron_pool(namespace, name)
        except ApiException as error:
            if error.status == NOT_FOUND:
                return None
            raise

    def pool_jobs(self, namespace: str, pool: str) -> list[dict[str, Any]]:
        """The Jobs labelled with the pool, as the API has them now (whatever shard made them)."""
        return self.rest.list_namespaced_job(namespace, label_selector=f"{POOL_LABEL}={pool}")["items"]

    def start_pooled(self, namespace: str, starts: list[tuple[str, dict[str, Any]]]) -> list[bool | Exception]:
        """Resume the Jobs a pool gives workers, pipelined: for each, True, False if it is gone, or
        the error (not raised: the next look at the pool starts it)."""
        if not starts:
            return []
        answers = self.rest.send([Calls.patch_namespaced_job(namespace, name, patch) for name, patch in starts])
        outcomes: list[bool | Exception] = []
        for answer in answers:
            if isinstance(answer, ApiException) and answer.status != NOT_FOUND:
                outcomes.append(answer)
            elif isinstance(answer, ApiException):
                outcomes.append(False)
            else:
                self.remember_job(answer)
                outcomes.append(True)
        return outcomes

    def patch_pool_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        answer = self.rest.patch_namespaced_cron_pool_status(namespace, name, {"status": dict(status)})
        if self.cache is not None:
            self.cache.put_pool(answer)

    # -- Events ---------------------------------------------------------------

    def record_event(self, schedule: Mapping[str, Any], event: EventText) -> None:
        """Queue the Event for the background posters (in series), or post it now without them."""
        if self.events is not None:
            self.events.record(schedule, event)
        else:
            now = dt.datetime.now(dt.timezone.utc).timestamp()
            self.post_events([Written(about_of(schedule), event, now, now, 1, new=True)])

    def post_event_on(self, involved: Mapping[str, str], event: EventText) -> None:
        """One Event about an object that is no CronSchedule (the operator's Lease), posted now; a
        refusal is logged, never raised (an Event is a courtesy)."""
        now = _event_time(dt.datetime.now(dt.timezone.utc).timestamp())
        body = {"apiVersion": "v1", "kind": "Event",
                "metadata": {"generateName": f"{involved['name']}.", "namespace": involved["namespace"]},
                "involvedObject": dict(involved), "reason": event.reason, "message": event.message,
                "type": event.type, "source": {"component": "cronctl"}, "firstTimestamp": now, "lastTimestamp": now,
                "count": 1, "reportingComponent": "cronctl.dev/operator", "reportingInstance": self.instance}
        [answer] = self.rest.send([Calls.create_namespaced_event(involved["namespace"], body)])
        if isinstance(answer, ApiException):
            log.warning("could not post event %s on %s %s: %s", event.reason, involved.get("kind"), involved["name"],
                        answer.reason)

    def post_events(self, events: list[Written]) -> None:
        """Post each new Event and write each series' count (``kube.event_series``), pipelined.
        A count whose Event is gone (expired, deleted, or its create still on the way) creates
        it under its name; a create tried again after its answer was lost is refused, and done."""
        outcome = list(zip(events, self.rest.send([self._event_call(written) for written in events])))
        gone = [replace(written, new=True) for written, answer in outcome if _event_gone(written, answer)]
        if gone:
            outcome = [(written, answer) for written, answer in outcome if not _event_gone(written, answer)]
            outcome += zip(gone, self.rest.send([self._event_call(written) for written in gone]))
        for written, error in outcome:
            if isinstance(error, ApiException) and error.status != CONFLICT:  # a courtesy: never fails a reconcile
                log.warning("could not post event %s on %s: %s", written.event.reason,
                            written.about["metadata"]["name"], error.reason)

    def _event_call(self, written: Written) -> Call:
        metadata = written.about["metadata"]
        namespace, name = metadata["namespace"], written.about.get("event") or event_name(metadata["name"])
        last = _event_time(written.last)
        if not written.new:
            return Calls.patch_namespaced_event(namespace, name, {"count": written.count, "lastTimestamp": last,
                                                                  "message": written.event.message})
        event = written.event
        return Calls.create_namespaced_event(namespace, {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {"apiVersion": API_VERSION, "kind": KIND, "name": metadata["name"],
                               "namespace": namespace, "uid": metadata["uid"]},
            "reason": event.reason, "message": event.message, "type": event.type,
            "source": {"component": "cronctl"}, "firstTimestamp": _event_time(written.first),
            "lastTimestamp": last, "count": written.count,
            "reportingComponent": "cronctl.dev/operator", "reportingInstance": self.instance,
        })


def _event_gone(written: Written, answer: Any) -> bool:
    """A series' count written for an Event the API server does not have."""
    return not written.new and isinstance(answer, ApiException) and answer.status == NOT_FOUND


def _event_time(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
