"""Carrying out a Plan against the API server, and reading what a plan needs.

The only module of the operator that talks to Kubernetes for writes. It
carries out a plan's effects one by one in the plan's order (which the plan
chose so that a crash between any two is safe: ``effects.ordered``) and decides
nothing. Every call is namespaced to the CronSchedule's own namespace, so a
schedule can never touch another namespace's objects.

Several plans are carried out together (``apply_all``), as the loop does a
share of a busy second's launches on each thread: every plan's next write
goes out in one round, pipelined on the thread's connection, and a plan's
write still waits for the answer to its previous one. A round's answers
are read in a few wake-ups instead of one per write, which halved the CPU a
write costs the operator (``rest``).
"""

from __future__ import annotations

import datetime as dt
import logging
import socket
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Union

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from .kube.cache import Cache
from .kube.event_series import Written
from .kube.events import EventRecorder, about_of, event_name
from .manifests import EventSpec
from .refusals import Refusal, event as refusal_event, refused_conditions, refusal_of
from ..clock import SkewEstimate
from .effects import (CreateJob, DeleteJob, Effect, LabelJob, PatchStatus, Plan, PostEvent, ReleaseJob, ResumeJob,
                      StageJob)
from ..manifest import API_VERSION, GROUP, KIND, PLURAL, VERSION
from .resource import POOL_LABEL, SCHEDULE_LABEL, SHARD_LABEL
from .kube.rest import Call, Calls, Rest
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


def load_configuration() -> client.Configuration:
    """The client's configuration: in-cluster when running in a Pod, else the kubeconfig."""
    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    return client.Configuration.get_default_copy()


def load_client(connections: int | None = None) -> client.ApiClient:
    """In-cluster credentials when running in a Pod, else the kubeconfig (KUBECONFIG).
    ``connections``: the HTTP connections kept open to the API server, at least one per thread
    that writes at once (the client's default, 5 per CPU, makes the threads past it open a new
    TLS connection for each request and drop it after, at the cost of a handshake each time)."""
    configuration = load_configuration()
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
                 record_events_later: bool = False, shard: Shard = Shard(),
                 skew: SkewEstimate | None = None) -> None:
        """``record_events_later``: queue Events for background posting (the operator's
        choice) instead of posting them before ``apply`` returns."""
        self.cache = cache
        self.shard = shard
        self.events = EventRecorder(self.post_events) if record_events_later else None
        self.rest = Rest(api_client, skew=skew)
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
                self._remember_job(answer)
                outcomes.append(True)
        return outcomes

    def patch_pool_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        answer = self.rest.patch_namespaced_cron_pool_status(namespace, name, {"status": dict(status)})
        if self.cache is not None:
            self.cache.put_pool(answer)

    # -- writes ---------------------------------------------------------------

    def apply(self, schedule: Mapping[str, Any], plan: Plan) -> bool:
        """Carry out the plan's effects in its order; an error stops at the effect that failed.
        False: a staged Job to release was gone, and the rest was left undone (the plan's
        status would record a launch that did not happen); the next plan creates its Job."""
        [outcome] = self.apply_all([(schedule, plan)])
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def apply_all(self, work: list[tuple[Mapping[str, Any], Plan]]) -> list[bool | Exception]:
        """Carry out several schedules' plans, each in its order, as ``apply`` does one: for
        each, True, False, or the error that stopped it. Their writes go out a round at a time
        (every plan's next write at once, pipelined on this thread's connection), so a thread
        carrying out a batch of launches wakes for a read of several answers, not one each;
        a plan's write still goes out only once its previous one was answered."""
        outcomes: list[bool | Exception | None] = [None] * len(work)
        positions = [0] * len(work)
        while True:
            round_: list[tuple[int, _Write]] = []
            for index, (schedule, plan) in enumerate(work):
                if outcomes[index] is not None:
                    continue
                try:
                    write = self._next_write(schedule, plan, positions, index)
                except Exception as error:  # one schedule's trouble stops its plan only
                    outcomes[index] = error
                    continue
                if write is None:
                    outcomes[index] = True
                else:
                    round_.append((index, write))
            if not round_:
                return outcomes  # type: ignore[return-value]
            try:
                answers = self.rest.send([write.call for _, write in round_])
            except Exception as error:  # the connection failed: every write of the round is in doubt
                for index, _ in round_:
                    outcomes[index] = error
                continue
            for (index, write), answer in zip(round_, answers):
                try:
                    if write.answered(answer) is False:
                        outcomes[index] = False
                    positions[index] += 1
                except ApiException as error:
                    outcomes[index] = write.refused(error)
                except Exception as error:
                    outcomes[index] = error

    def _next_write(self, schedule: Mapping[str, Any], plan: Plan, positions: list[int], index: int) -> _Write | None:
        """The plan's next effect that writes, carrying out on the way those that do not (Events,
        queued). None: the plan is done."""
        while positions[index] < len(plan.effects):
            write = self._write(schedule, plan.effects[positions[index]])
            if write is not None:
                return write
            positions[index] += 1
        return None

    def _write(self, schedule: Mapping[str, Any], effect: Effect) -> _Write | None:
        namespace, owner = schedule["metadata"]["namespace"], schedule["metadata"]["name"]
        if isinstance(effect, ReleaseJob):
            return _Write(Calls.patch_namespaced_job(namespace, effect.name, effect.patch),
                          lambda answer: self._released(namespace, owner, effect.name, answer),
                          "patch", "jobs", effect.name)
        if isinstance(effect, (CreateJob, StageJob)):
            manifest = effect.manifest
            return _Write(Calls.create_namespaced_job(namespace, manifest),
                          lambda answer: self._created(schedule, manifest, answer),
                          "create", "jobs", manifest["metadata"]["name"])
        if isinstance(effect, DeleteJob):
            if self.cache is not None:
                self.cache.drop_job(namespace, owner, effect.name)
            return _Write(Calls.delete_namespaced_job(namespace, effect.name, propagation_policy="Background"),
                          _deleted, "delete", "jobs", effect.name)
        if isinstance(effect, ResumeJob):
            return _Write(Calls.patch_namespaced_job(namespace, effect.name, {"spec": {"suspend": False}}),
                          lambda answer: self._resumed(namespace, effect.name, answer), "patch", "jobs", effect.name)
        if isinstance(effect, LabelJob):
            return _Write(Calls.patch_namespaced_job(namespace, effect.name,
                                                     {"metadata": {"labels": {SHARD_LABEL: effect.shard}}}),
                          lambda answer: self._labelled(answer), "patch", "jobs", effect.name)
        if isinstance(effect, PatchStatus):
            changes = status_changes(schedule.get("status") or {}, effect.status)
            return _Write(Calls.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL, owner,
                                                                      {"status": changes}),
                          lambda answer: self._status_patched(answer), "patch", f"{PLURAL}/status", owner)
        if isinstance(effect, PostEvent):
            self.record_event(schedule, effect.event)
        return None

    # -- what each write's answer means ----------------------------------------------------

    def _released(self, namespace: str, schedule: str, name: str, answer: Answer) -> bool:
        """A staged Job made its run and let start; False if it is gone."""
        if not _unless_missing(answer):
            if self.cache is not None:
                self.cache.drop_job(namespace, schedule, name)
            log.warning("%s/%s: the staged Job %s is gone: launching afresh", namespace, schedule, name)
            return False
        self._remember_job(answer)  # type: ignore[arg-type]
        return True

    def _created(self, schedule: Mapping[str, Any], manifest: dict[str, Any], answer: Answer) -> None:
        """The Job of a launch created; if it existed already and is ours, adopted."""
        if isinstance(answer, ApiException) and answer.status == CONFLICT:
            problem = self._adopt(schedule, manifest)
            if problem is not None:
                self.record_event(schedule, problem)
            return
        self._remember_job(_answered(answer))

    def _adopt(self, schedule: Mapping[str, Any], manifest: dict[str, Any]) -> EventSpec | None:
        namespace, name = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
        existing = self.rest.read_namespaced_job(namespace, name)
        self._remember_job(existing)
        owners = existing["metadata"].get("ownerReferences") or []
        if any(ref.get("controller") and ref.get("uid") == schedule["metadata"]["uid"] for ref in owners):
            log.info("adopted the existing Job %s/%s", namespace, name)
            if shard_of(existing) != shard_of(manifest):  # made by the shard the schedule moved from
                [labelled] = self.rest.send([Calls.patch_namespaced_job(
                    namespace, name, {"metadata": {"labels": {SHARD_LABEL: shard_of(manifest)}}})])
                self._labelled(labelled)
            return None
        return EventSpec("Warning", "JobNameTaken",
                         f"cannot launch: a Job named {name} exists and belongs to someone else")

    def _resumed(self, namespace: str, name: str, answer: Answer) -> None:
        """A Job held for its jitter let start (it was created with spec.suspend)."""
        if _unless_missing(answer):
            self._remember_job(answer)  # type: ignore[arg-type]
        log.info("%s/%s: its jittered start has come: resumed", namespace, name)

    def _labelled(self, answer: Answer) -> None:
        """A Job given its schedule's shard label (or its label removed), so that shard's watch sees it."""
        if _unless_missing(answer):
            self._remember_job(answer)  # type: ignore[arg-type]

    def _status_patched(self, answer: Answer) -> None:
        if self.cache is not None:
            self.cache.put_schedule(_answered(answer))

    def record_event(self, schedule: Mapping[str, Any], event: EventSpec) -> None:
        """Queue the Event for the background posters (in series), or post it now without them."""
        if self.events is not None:
            self.events.record(schedule, event)
        else:
            now = dt.datetime.now(dt.timezone.utc).timestamp()
            self.post_events([Written(about_of(schedule), event, now, now, 1, new=True)])

    def say_refusal(self, schedule: Mapping[str, Any], refusal: Refusal, minute: int) -> None:
        """A refused write said on its schedule (``refusals``): its Warning Event (a series, however
        often the write is tried) and, when that is news, its Ready condition. The condition's own
        write is a courtesy: refused too, it is left to the Event."""
        self.record_event(schedule, refusal_event(refusal))
        status = schedule.get("status") or {}
        conditions = refused_conditions(status.get("conditions") or [], refusal,
                                        schedule["metadata"].get("generation", 0), minute)
        if conditions is None:
            return
        metadata = schedule["metadata"]
        [answer] = self.rest.send([Calls.patch_namespaced_custom_object_status(
            GROUP, VERSION, metadata["namespace"], PLURAL, metadata["name"], {"status": {"conditions": conditions}})])
        if isinstance(answer, ApiException):
            log.debug("%s/%s: could not write the refusal's condition: %s", metadata["namespace"], metadata["name"],
                      answer.reason)
        else:
            self._status_patched(answer)

    def post_event_on(self, involved: Mapping[str, str], event: EventSpec) -> None:
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

    def _remember_job(self, body: dict[str, Any]) -> None:
        if self.cache is not None:
            self.cache.put_job(body)

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


Answer = Union[dict, ApiException]  # a write's answer, or the API's refusal of it


class WriteRefused(ApiException):
    """A plan stopped at a write the API server refused (``refusals``): the API's answer, named."""

    def __init__(self, refusal: Refusal, error: ApiException) -> None:
        super().__init__(status=error.status, reason=error.reason)
        self.body, self.headers, self.refusal = error.body, error.headers, refusal

    def __str__(self) -> str:
        return self.refusal.said()


def _event_gone(written: Written, answer: Any) -> bool:
    """A series' count written for an Event the API server does not have."""
    return not written.new and isinstance(answer, ApiException) and answer.status == NOT_FOUND


def _event_time(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class _Write:
    """One effect's request, and what its answer means: ``answered`` raises the refusals that
    stop the plan, and returns False for a release whose Job is gone; what it writes, to name a
    refusal."""

    call: Call
    answered: Callable[[Answer], bool | None]
    verb: str
    resource: str
    name: str

    def refused(self, error: ApiException) -> Exception:
        """The error that stopped the plan: a refusal (``refusals``) named, a passing failure as it is."""
        refusal = refusal_of(self.verb, self.resource, self.name, error.status, error.reason, error.body)
        return error if refusal is None else WriteRefused(refusal, error)


def _answered(answer: Answer) -> dict[str, Any]:
    """The answer; a refusal raised."""
    if isinstance(answer, ApiException):
        raise answer
    return answer


def _unless_missing(answer: Answer) -> bool:
    """False for NotFound (the object is gone: nothing to do, the plan goes on); other refusals
    raised."""
    if isinstance(answer, ApiException) and answer.status == NOT_FOUND:
        return False
    _answered(answer)
    return True


def _deleted(answer: Answer) -> None:
    _unless_missing(answer)  # NotFound: deleted already
