"""``spec.pauseOnFailures`` in the operator: the pause its status records, and the resume that ends it.

The core says when failures pause a schedule (``core.failures``,
``Reconciled.paused``). The pause lives in the status, not in the spec: the
operator never writes a user's spec (its Role cannot), and a GitOps tool
that owns the spec does not undo it. ``status.pausedOnFailures`` holds it
(since when, after how many failures); while it stands the schedule reads
as suspended, with the pause as its reason (``kubectl get``'s SUSPEND REASON,
the Ready condition). A new value of the ``cronctl.dev/resume`` annotation
(``kubectl cronctl resume``) ends it; ``status.lastResume`` records the value
answered, so that an old one never ends a later pause.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, NamedTuple

from ..core.failures import pause_message
from ..manifest import ScheduleSpec
from .resource import RESUME_ANNOTATION, rfc3339


class Standing(NamedTuple):
    pause: dict[str, Any] | None  # status.pausedOnFailures as it stands after this reconcile's resume, if any
    resume: str | None  # status.lastResume: the resume annotation's value, answered


def standing(schedule: Mapping[str, Any], spec: ScheduleSpec) -> Standing:
    """The pause the status records, unless a resume not answered yet ends it (or the spec no
    longer has a pauseOnFailures: the pause goes with it)."""
    status = schedule.get("status") or {}
    pause = status.get("pausedOnFailures") or None
    if spec.job.options.pause_on_failures is None:
        pause = None
    asked = ((schedule.get("metadata") or {}).get("annotations") or {}).get(RESUME_ANNOTATION)
    answered = status.get("lastResume")
    if asked is None or asked == answered:
        return Standing(pause, answered)
    return Standing(None, str(asked))


def pending_resume(schedule: Mapping[str, Any]) -> bool:
    """Whether the schedule asks for a resume its status has not answered (worth a reconcile now)."""
    asked = ((schedule.get("metadata") or {}).get("annotations") or {}).get(RESUME_ANNOTATION)
    return asked is not None and asked != (schedule.get("status") or {}).get("lastResume")


def began(now: int, failures: int) -> dict[str, Any]:
    return {"since": rfc3339(now), "failures": failures}


def paused(spec: ScheduleSpec, pause: Mapping[str, Any] | None) -> ScheduleSpec:
    """The spec as the core reads it while the pause stands: suspended, with the pause as its reason."""
    if pause is None:
        return spec
    limit = spec.job.options.pause_on_failures or 1
    reason = pause_message(limit, int(pause.get("failures") or limit))
    return dataclasses.replace(spec, suspend=True, suspend_reason=reason)


__all__ = ["Standing", "began", "paused", "pending_resume", "standing"]
