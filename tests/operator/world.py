"""An in-memory cluster for one CronSchedule: what the API server does with a plan's effects.

A create adds the Job as written (an existing one is adopted), a delete
removes it (a missing one is already deleted), a resume clears
``spec.suspend``, a status patch is a JSON merge patch of ``status``. Events
are kept apart: they are not the record. Tests drive the operator's pure
``plan`` against it minute by minute.

A staged Job is created as a create is; a release is a merge patch of the
Job, and when the Job is missing the rest of the plan is not carried out
(as ``apply`` stops there). ``staging`` is off unless a test asks for it:
the table of timelines (tests/test_drivers_agree.py) counts the Jobs a plan
creates as its runs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import orjson

from cronctl.operator.manifests import EventSpec
from cronctl.operator.effects import (CreateJob, DeleteJob, Effect, LabelJob, PatchStatus, Plan, PostEvent,
                                      ReleaseJob, ResumeJob, StageJob, StatusChanges)
from cronctl.operator.plan import plan
from cronctl.operator.resource import SHARD_LABEL, rfc3339


def one_by_one(apply: Callable[[Any, Plan], Any], work: list[tuple[Any, Plan]]) -> list[Any]:
    """``Cluster.apply_all`` over a stand-in's ``apply``: each plan's outcome, or its error."""
    outcomes = []
    for schedule, result in work:
        try:
            outcomes.append(apply(schedule, result))
        except Exception as error:
            outcomes.append(error)
    return outcomes


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386, as the API server applies a merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


STAGING_DEFAULT = False  # a World's ``staging`` unless given (a fixture may turn it on for a whole suite)


@dataclass
class World:
    schedule: dict[str, Any]
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)  # by name, in creation order
    events: list[EventSpec] = field(default_factory=list)
    staging: bool = field(default_factory=lambda: STAGING_DEFAULT)
    pool_found: bool = True  # whether the CronPool its spec.pool names exists
    fleet: bool = False  # fleet mode's status (no per-launch field)

    def plan(self, now: int, second: float | None = None) -> Plan:
        return plan(copy.deepcopy(self.schedule), [copy.deepcopy(job) for job in self.jobs.values()], now, second,
                    staging=self.staging, pool_found=self.pool_found, fleet=self.fleet)

    def carry_out(self, effects: Iterable[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, (CreateJob, StageJob)):
                manifest = copy.deepcopy(effect.manifest) if effect.body is None else orjson.loads(effect.body)
                self.jobs.setdefault(manifest["metadata"]["name"], manifest)
            elif isinstance(effect, ReleaseJob):
                if effect.name not in self.jobs:
                    return
                self.jobs[effect.name] = merge_patch(self.jobs[effect.name], effect.patch)
            elif isinstance(effect, DeleteJob):
                self.jobs.pop(effect.name, None)
            elif isinstance(effect, ResumeJob):
                if effect.name in self.jobs:
                    self.jobs[effect.name]["spec"]["suspend"] = False
            elif isinstance(effect, LabelJob):
                if effect.name in self.jobs:
                    self.jobs[effect.name] = merge_patch(self.jobs[effect.name],
                                                         {"metadata": {"labels": {SHARD_LABEL: effect.shard}}})
            elif isinstance(effect, PatchStatus):
                self.schedule["status"] = merge_patch(self.schedule.get("status") or {}, effect.status)
            elif isinstance(effect, StatusChanges):  # the loop's second pass: the merge patch as sent
                self.schedule["status"] = merge_patch(self.schedule.get("status") or {}, effect.changes)
            elif isinstance(effect, PostEvent):
                self.events.append(effect.event)
            else:
                raise AssertionError(f"not an effect: {effect!r}")

    def reconcile(self, now: int, second: float | None = None) -> Plan:
        result = self.plan(now, second)
        self.carry_out(result.effects)
        return result

    def finish(self, name: str, kind: str, at: int) -> None:
        self.jobs[name]["status"] = {"conditions": [{"type": kind, "status": "True",
                                                      "lastTransitionTime": rfc3339(at)}]}

    def annotate(self, key: str, value: str) -> None:
        self.schedule["metadata"].setdefault("annotations", {})[key] = value

    def job_named(self, minute: int, attempt: int = 1) -> str:
        name = f"sync-{minute}"
        return name if attempt == 1 else f"{name}-{attempt}"

    def snapshot(self, leaving_out: tuple[str, ...] = ()) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        status = {key: value for key, value in self.schedule["status"].items() if key not in leaving_out}
        return copy.deepcopy(status), copy.deepcopy(self.jobs)

    def copy(self) -> World:
        return copy.deepcopy(self)


TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main",
                                                                                      "image": "busybox"}]}}}}


def every_ten_minutes(created: int, **spec: Any) -> World:
    """A World of CronSchedule team-a/sync, ``*/10 * * * *`` with ``spec`` besides, first seen at ``created``."""
    made = World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                  "metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "generation": 1},
                  "spec": {"schedule": "*/10 * * * *", **spec, "jobTemplate": TEMPLATE}})
    made.reconcile(created)
    return made
