"""Carrying out a Plan against the API server, and reading what a plan needs.

The only module of the operator that talks to Kubernetes for writes. It
carries out a plan's effects one by one in the plan's order (which the plan
chose so that a crash between any two is safe: ``plan.ordered``) and decides
nothing. Every call is namespaced to the CronSchedule's own namespace, so a
schedule can never touch another namespace's objects.
"""

from __future__ import annotations

import datetime as dt
import logging
import socket
from typing import Any, Mapping

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from .cache import Cache
from .events import EventRecorder
from .manifests import EventSpec
from .plan import CreateJob, DeleteJob, LabelJob, PatchStatus, Plan, PostEvent, ReleaseJob, ResumeJob, StageJob
from ..manifest import API_VERSION, GROUP, KIND, PLURAL, VERSION
from .resource import SCHEDULE_LABEL, SHARD_LABEL
from .rest import Rest
from .shard import Shard, shard_of

log = logging.getLogger("cronctl.operator")

NOT_FOUND = 404
CONFLICT = 409


def status_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The merge patch that turns status ``old`` into ``new``: the top-level fields that changed,
    and None for those gone. A launch changes a few fields of a status that may hold a long
    history; the API server merges the patch into what it has, as it would the whole status."""
    changes = {key: value for key, value in new.items() if old.get(key) != value}
    changes.update({key: None for key in old if key not in new and old[key] is not None})
    return changes


def load_client(connections: int | None = None) -> client.ApiClient:
    """In-cluster credentials when running in a Pod, else the kubeconfig (KUBECONFIG).
    ``connections``: the HTTP connections kept open to the API server, at least one per thread
    that writes at once (the client's default, 5 per CPU, makes the threads past it open a new
    TLS connection for each request and drop it after, at the cost of a handshake each time)."""
    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    configuration = client.Configuration.get_default_copy()
    if connections is not None:
        configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize, connections)
    return client.ApiClient(configuration)


class Cluster:
    """The operator's reads and writes, with plain dicts in and out.

    With a ``Cache`` (the operator's), reads come from what the watches showed
    and every write goes through it; without one, every read asks the API.
    It reads the CronSchedules of its ``shard`` only (the default shard's, by
    default): another shard's schedule is as good as gone."""

    def __init__(self, api_client: client.ApiClient, cache: Cache | None = None,
                 record_events_later: bool = False, shard: Shard = Shard()) -> None:
        """``record_events_later``: queue Events for background posting (the operator's
        choice) instead of posting them before ``apply`` returns."""
        self.cache = cache
        self.shard = shard
        self.events = EventRecorder(self.post_events) if record_events_later else None
        self.rest = Rest(api_client)
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

    # -- writes ---------------------------------------------------------------

    def apply(self, schedule: Mapping[str, Any], plan: Plan) -> bool:
        """Carry out the plan's effects in its order; an error stops at the effect that failed.
        False: a staged Job to release was gone, and the rest was left undone (the plan's
        status would record a launch that did not happen); the next plan creates its Job."""
        namespace, owner = schedule["metadata"]["namespace"], schedule["metadata"]["name"]
        for effect in plan.effects:
            if isinstance(effect, ReleaseJob):
                if not self.release_job(namespace, owner, effect.name, effect.patch):
                    return False
            elif isinstance(effect, (CreateJob, StageJob)):
                problem = self.create_job(schedule, effect.manifest)
                if problem is not None:
                    self.record_event(schedule, problem)
            elif isinstance(effect, DeleteJob):
                self.delete_job(namespace, owner, effect.name)
            elif isinstance(effect, ResumeJob):
                self.resume_job(namespace, effect.name)
            elif isinstance(effect, LabelJob):
                self.label_job(namespace, effect.name, effect.shard)
            elif isinstance(effect, PatchStatus):
                self.patch_status(namespace, owner, status_changes(schedule.get("status") or {}, effect.status))
            elif isinstance(effect, PostEvent):
                self.record_event(schedule, effect.event)
        return True

    def patch_status(self, namespace: str, name: str, status: dict[str, Any]) -> None:
        patched = self.rest.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL, name,
                                                                  {"status": status})
        if self.cache is not None:
            self.cache.put_schedule(patched)

    def record_event(self, schedule: Mapping[str, Any], event: EventSpec) -> None:
        """Queue the Event for the background posters, or post it now without them."""
        if self.events is not None:
            self.events.record(schedule, event)
        else:
            self.post_events([(schedule, event)])

    def create_job(self, schedule: Mapping[str, Any], manifest: dict[str, Any]) -> EventSpec | None:
        """Create the Job of a launch; if it exists already and is ours, adopt it."""
        namespace, name = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
        try:
            self._remember_job(self.rest.create_namespaced_job(namespace, manifest))
            return None
        except ApiException as error:
            if error.status != CONFLICT:
                raise
        existing = self.rest.read_namespaced_job(namespace, name)
        self._remember_job(existing)
        owners = existing["metadata"].get("ownerReferences") or []
        if any(ref.get("controller") and ref.get("uid") == schedule["metadata"]["uid"] for ref in owners):
            log.info("adopted the existing Job %s/%s", namespace, name)
            if shard_of(existing) != shard_of(manifest):  # made by the shard the schedule moved from
                self.label_job(namespace, name, shard_of(manifest))
            return None
        return EventSpec("Warning", "JobNameTaken",
                         f"cannot launch: a Job named {name} exists and belongs to someone else")

    def resume_job(self, namespace: str, name: str) -> None:
        """Let a Job held for its jitter start (it was created with spec.suspend)."""
        try:
            self._remember_job(self.rest.patch_namespaced_job(namespace, name, {"spec": {"suspend": False}}))
        except ApiException as error:
            if error.status != NOT_FOUND:
                raise
        log.info("%s/%s: its jittered start has come: resumed", namespace, name)

    def label_job(self, namespace: str, name: str, shard: str | None) -> None:
        """Give a Job its schedule's shard label (None: remove it), so that shard's watch sees it."""
        try:
            labelled = self.rest.patch_namespaced_job(namespace, name, {"metadata": {"labels": {SHARD_LABEL: shard}}})
        except ApiException as error:
            if error.status != NOT_FOUND:
                raise
            return
        self._remember_job(labelled)

    def release_job(self, namespace: str, schedule: str, name: str, patch: dict[str, Any]) -> bool:
        """Make a staged Job its run and let it start (one merge patch); False if it is gone."""
        try:
            released = self.rest.patch_namespaced_job(namespace, name, patch)
        except ApiException as error:
            if error.status != NOT_FOUND:
                raise
            if self.cache is not None:
                self.cache.drop_job(namespace, schedule, name)
            log.warning("%s/%s: the staged Job %s is gone: launching afresh", namespace, schedule, name)
            return False
        self._remember_job(released)
        return True

    def delete_job(self, namespace: str, schedule: str, name: str) -> None:
        if self.cache is not None:
            self.cache.drop_job(namespace, schedule, name)
        try:
            self.rest.delete_namespaced_job(namespace, name, propagation_policy="Background")
        except ApiException as error:
            if error.status != NOT_FOUND:
                raise

    def _remember_job(self, body: dict[str, Any]) -> None:
        if self.cache is not None:
            self.cache.put_job(body)

    def post_events(self, events: list[tuple[Mapping[str, Any], EventSpec]]) -> None:
        """Post each Event about its schedule (which needs its name, namespace and uid)."""
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        refused = self.rest.create_namespaced_events([self._event(schedule, event, now) for schedule, event in events])
        for (schedule, event), error in zip(events, refused):
            if error is not None:  # an Event is a courtesy: never fail a reconcile for it
                log.warning("could not post event %s on %s: %s", event.reason, schedule["metadata"]["name"],
                            error.reason)

    def _event(self, schedule: Mapping[str, Any], event: EventSpec, now: str) -> dict[str, Any]:
        metadata = schedule["metadata"]
        return {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{metadata['name']}.", "namespace": metadata["namespace"]},
            "involvedObject": {"apiVersion": API_VERSION, "kind": KIND, "name": metadata["name"],
                               "namespace": metadata["namespace"], "uid": metadata["uid"]},
            "reason": event.reason, "message": event.message, "type": event.type,
            "source": {"component": "cronctl"}, "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "reportingComponent": "cronctl.dev/operator", "reportingInstance": self.instance,
        }
