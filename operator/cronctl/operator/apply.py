"""Carrying out a Plan on the cluster: the applier.

``Cluster`` is the operator's one Kubernetes facade (``kube.facade``: the
reads a plan needs, the pools' I/O, Events) with the applier on it, the only
code of the operator that writes a plan's effects. It carries them out one
by one in the plan's order (which the plan chose so that a crash between any
two is safe: ``effects.ordered``), says what each answer means (a Job that
exists already is adopted if ours; a refusal is named: ``refusals``), and
decides nothing. Every call is namespaced to the CronSchedule's own
namespace, so a schedule can never touch another namespace's objects.

Several plans are carried out together (``apply_all``), as the loop does a
share of a busy second's launches on each thread: every plan's next write
goes out in one round, pipelined on the thread's connection, and a plan's
write still waits for the answer to its previous one. A round's answers
are read in a few wake-ups instead of one per write, which halved the CPU a
write costs the operator (``rest``). A round goes out in parts of as many
writes as a connection pipelines, each part's answers taken in (parsed, kept
slim by the cache) before the next is sent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Union

from kubernetes.client.exceptions import ApiException

from ..api import GROUP, PLURAL, SHARD_LABEL, VERSION
from .effects import (CreateJob, DeleteJob, Effect, LabelJob, PatchStatus, Plan, PostEvent, ReleaseJob, ResumeJob,
                      StageJob, StatusChanges)
from .kube.facade import CONFLICT, NOT_FOUND, KubeFacade
from .kube.rest import PIPELINE, Call, Calls
from .manifests import EventSpec
from .refusals import Refusal, event as refusal_event, refused_conditions, refusal_of
from .shard import shard_of

log = logging.getLogger("cronctl.operator")
ROUND_PART = PIPELINE  # writes of a round sent, answered and taken in before the next ones: what the
# connection has in flight at once anyway (``rest.pipelined``), so the parts cost no round trip


def status_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The merge patch that turns status ``old`` into ``new``: the top-level fields that changed,
    and None for those gone. A launch changes a few fields of a status that may hold a long
    history; the API server merges the patch into what it has, as it would the whole status."""
    changes = {key: value for key, value in new.items() if old.get(key) != value}
    changes.update({key: None for key in old if key not in new and old[key] is not None})
    return changes


class Cluster(KubeFacade):
    """The operator's cluster: the Kubernetes facade (``kube.facade``: reads, pools, Events), and
    the applier that carries a plan out on it."""

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
            for start in range(0, len(round_), ROUND_PART):
                self._send_part(round_[start:start + ROUND_PART], outcomes, positions)

    def _send_part(self, part: list[tuple[int, _Write]], outcomes: list[bool | Exception | None],
                   positions: list[int]) -> None:
        """A part of a round sent pipelined, and each answer's meaning taken before the next part
        is sent: a herd's round is hundreds of writes a thread, whose answers (a created Job, a
        schedule's new status) held parsed at once were the operator's peak memory (issue 47)."""
        try:
            answers = self.rest.send([write.call for _, write in part])
        except Exception as error:  # the connection failed: every write of the part is in doubt
            for index, _ in part:
                outcomes[index] = error
            return
        for (index, write), answer in zip(part, answers):
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
            manifest = effect.manifest  # a kept plan's: what an adoption reads, its body sent (``kept``)
            return _Write(Calls.create_namespaced_job(namespace, manifest if effect.body is None else effect.body),
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
        if isinstance(effect, (PatchStatus, StatusChanges)):
            changes = (effect.changes if isinstance(effect, StatusChanges)
                       else status_changes(schedule.get("status") or {}, effect.status))
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
        self.remember_job(answer)  # type: ignore[arg-type]
        return True

    def _created(self, schedule: Mapping[str, Any], manifest: dict[str, Any], answer: Answer) -> None:
        """The Job of a launch created; if it existed already and is ours, adopted."""
        if isinstance(answer, ApiException) and answer.status == CONFLICT:
            problem = self._adopt(schedule, manifest)
            if problem is not None:
                self.record_event(schedule, problem)
            return
        self.remember_job(_answered(answer))

    def _adopt(self, schedule: Mapping[str, Any], manifest: dict[str, Any]) -> EventSpec | None:
        namespace, name = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
        existing = self.rest.read_namespaced_job(namespace, name)
        self.remember_job(existing)
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
            self.remember_job(answer)  # type: ignore[arg-type]
        log.info("%s/%s: its jittered start has come: resumed", namespace, name)

    def _labelled(self, answer: Answer) -> None:
        """A Job given its schedule's shard label (or its label removed), so that shard's watch sees it."""
        if _unless_missing(answer):
            self.remember_job(answer)  # type: ignore[arg-type]

    def _status_patched(self, answer: Answer) -> None:
        if self.cache is not None:
            self.cache.put_schedule(_answered(answer))

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


Answer = Union[dict, ApiException]  # a write's answer, or the API's refusal of it


class WriteRefused(ApiException):
    """A plan stopped at a write the API server refused (``refusals``): the API's answer, named."""

    def __init__(self, refusal: Refusal, error: ApiException) -> None:
        super().__init__(status=error.status, reason=error.reason)
        self.body, self.headers, self.refusal = error.body, error.headers, refusal

    def __str__(self) -> str:
        return self.refusal.said()


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
