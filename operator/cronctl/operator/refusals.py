"""The API server's refusals of the operator's writes: what each says, and where it is said. Pure.

A write the API server refuses (an admission policy, an exhausted quota,
RBAC, OwnerReferencesPermissionEnforcement, an invalid object) is not a
fault of the network: trying it again changes nothing until a person or the
cluster changes something. So it is said where people look, in the API
server's own words, as the CronJob controller says ``FailedCreate``:

- a Warning Event on the schedule (``FailedCreate``, ``FailedUpdate``,
  ``FailedDelete``), one series however often the write is tried again;
- the schedule's Ready condition False with the same reason and message,
  from the first refusal until a write of that kind goes through
  (``carried``);
- a metric by verb, resource and reason, and one log line per failing streak.

A create refused because the namespace is being terminated says nothing on
the schedule (its Events and Jobs are refused too, and the namespace's
controller deletes it next): one log line, and the retries go on until the
schedule is gone.

``refusal_of`` reads the answer; the rest words it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import orjson

from .manifests import EventSpec, condition

# The status codes a write can be refused with that trying again does not heal: transient
# ones (408, 409, 429, 5xx, and 0 for a connection that failed) are kube.retry's.
REFUSED_CODES = frozenset({400, 401, 403, 404, 405, 406, 410, 413, 415, 422})
NAMESPACE_TERMINATING = "NamespaceTerminating"  # the cause the API server names (v1.NamespaceTerminatingCause)
FAILED = {"create": "FailedCreate", "patch": "FailedUpdate", "delete": "FailedDelete"}  # CronJob's reasons
READY = "Ready"


@dataclass(frozen=True)
class Refusal:
    """A write the API server refused, and why in its words."""

    verb: str  # create, patch or delete
    resource: str  # the kind written, as the API names it: jobs, cronschedules/status, ...
    name: str  # the object's name
    code: int  # the HTTP status: 403, 422, ...
    reason: str  # the Status's reason: Forbidden, Invalid, ...
    message: str  # the Status's message: what the API server said
    terminating: bool = False  # the namespace is being terminated

    @property
    def event_reason(self) -> str:
        return FAILED.get(self.verb, "FailedUpdate")

    def said(self) -> str:
        """The refusal in one phrase: what was refused, and the API server's words."""
        kind = {"jobs": "Job", "cronschedules/status": "status of", "events": "Event"}.get(self.resource,
                                                                                        self.resource)
        return f"cannot {self.verb} {kind} {self.name}: {self.message}"


def refusal_of(verb: str, resource: str, name: str, code: int | None, reason: str | None,
               body: str | bytes | None) -> Refusal | None:
    """The refusal in an answer with ``code``: None if the answer is no refusal (a success, or a
    failure that passes: kube.retry tries those again)."""
    if code not in REFUSED_CODES:
        return None
    status = _status(body)
    message = str(status.get("message") or reason or f"{code}")
    causes = ((status.get("details") or {}).get("causes") or []) if isinstance(status.get("details"), dict) else []
    # A StatusCause's type is "reason" on the wire (metav1.StatusCause's JSON tag).
    terminating = any(isinstance(cause, dict) and NAMESPACE_TERMINATING in (cause.get("reason"), cause.get("type"))
                      for cause in causes)
    return Refusal(verb, resource, name, int(code), str(status.get("reason") or reason or ""), message,
                   terminating)


def _status(body: str | bytes | None) -> dict[str, Any]:
    """The Status object an answer carries (empty if it carries none)."""
    if not body:
        return {}
    try:
        status = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {"message": body.decode("utf-8", "replace") if isinstance(body, bytes) else body}
    return status if isinstance(status, dict) else {}


def event(refusal: Refusal) -> EventSpec:
    """The Warning Event on the schedule, in the API server's words."""
    return EventSpec("Warning", refusal.event_reason, refusal.said())


def refused_conditions(conditions: list[Mapping[str, Any]], refusal: Refusal, generation: int,
                       now: int) -> list[dict[str, Any]] | None:
    """The schedule's conditions with Ready False for the refusal; None if they say so already
    (a write per refusal that is news, not per try)."""
    ready = condition(READY, False, refusal.event_reason, refusal.said(), generation, now, list(conditions))
    old = next((c for c in conditions if c.get("type") == READY), None)
    if old is not None and all(old.get(key) == ready[key] for key in ("status", "reason", "message")):
        return None
    return [ready if c.get("type") == READY else dict(c) for c in conditions] if old is not None else [
        ready, *map(dict, conditions)]


def standing(conditions: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The Ready condition a refusal set, if it stands."""
    ready = next((c for c in conditions if c.get("type") == READY), None)
    if ready is None or ready.get("status") != "False" or ready.get("reason") not in FAILED.values():
        return None
    return ready


def carried(conditions: list[Mapping[str, Any]], creates: bool, patches: bool,
            deletes_after: bool) -> Mapping[str, Any] | None:
    """The refusal's Ready condition to keep in the status a plan writes, if it stands and the plan
    does not end it. A plan's status is written after its creates and patches and before its
    deletes of runs' Jobs (``effects.ordered``), so a status written by a plan that ``creates``
    (or ``patches``) says those went through: a FailedCreate (FailedUpdate) ends there, and stands
    through plans that make no such write. A FailedDelete stands while the plan still deletes
    (``deletes_after``: the same delete, tried again after the status) and ends once a plan has
    nothing left to delete."""
    ready = standing(conditions)
    if ready is None:
        return None
    if ready.get("reason") == FAILED["create"]:
        return None if creates else ready
    if ready.get("reason") == FAILED["patch"]:
        return None if patches else ready
    return ready if deletes_after else None
