"""A schedule's next plan, made ahead of its second, so that the busy second need not plan.

``plan`` is pure: the same schedule, Jobs, minute and second give the same
plan. After a reconcile stages the next firing's Job, the loop plans that
firing's second right away, from the cache as it stands (the writes just
made are in it), and keeps the plan with the resourceVersions it was made
from. At the second, if the cache holds the very same versions, that plan
is the one a fresh plan would make, and the release goes out without
planning; anything that changed in between (a run ended, the schedule was
edited, another replica wrote) changes a version, and the loop plans afresh.

A plan made for a whole second ``W`` holds for the clock anywhere in
``[W, W + 1)``: the plan compares the clock only with whole seconds (a
jitter's start, a minute), so no comparison can come out otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .plan import Plan, plan
from .resource import STAGED_LABEL

Inputs = tuple[str, tuple[tuple[str, str], ...]]


def inputs_of(schedule: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]]) -> Inputs | None:
    """The versions a plan was made from; None if any is unknown (nothing to compare then)."""
    version = (schedule.get("metadata") or {}).get("resourceVersion")
    if version is None:
        return None
    versions = []
    for job in jobs:
        metadata = job.get("metadata") or {}
        if metadata.get("resourceVersion") is None:
            return None
        versions.append((str(metadata.get("name")), str(metadata["resourceVersion"])))
    return str(version), tuple(sorted(versions))


@dataclass(frozen=True)
class Forecast:
    second: int  # the whole second it was planned for
    inputs: Inputs
    plan: Plan

    def holds(self, schedule: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]], now: float) -> bool:
        return int(now) == self.second and inputs_of(schedule, jobs) == self.inputs


def forecast(schedule: Mapping[str, Any], jobs: list[dict[str, Any]], second: float | None,
             staging: bool) -> Forecast | None:
    """The plan of ``second``, when it is a whole second and a staged Job waits for it."""
    if second is None or second != int(second) or not staging:
        return None
    if not any(((job.get("metadata") or {}).get("labels") or {}).get(STAGED_LABEL) == "true" for job in jobs):
        return None
    inputs = inputs_of(schedule, jobs)
    if inputs is None:
        return None
    return Forecast(int(second), inputs, plan(schedule, jobs, int(second) // 60, second=second, staging=staging))
