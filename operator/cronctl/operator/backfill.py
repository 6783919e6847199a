"""A backfill asked for with the CronSchedule's backfill annotation, and how status.backfill shows it.

The annotation's value is a range ``<from>/<to>``; a new value begins a
backfill (the core's ``backfill.begin``) or is refused with its reason. The
core's reconcile launches its runs one at a time; this module reads the
request and the status entry, and writes the entry back.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from ..core import backfill as backfills
from ..core.backfill import BackfillError
from ..core.state import Backfill
from ..manifest import ScheduleSpec
from . import messages
from .manifests import EventSpec
from .resource import BACKFILL_ANNOTATION, parse_rfc3339, rfc3339

RUNNING, COMPLETE, REFUSED = "Running", "Complete", "Refused"


def pending_backfill(schedule: Mapping[str, Any]) -> str | None:
    """The value of the backfill annotation, if the status has not answered it yet."""
    value = (schedule["metadata"].get("annotations") or {}).get(BACKFILL_ANNOTATION)
    known = ((schedule.get("status") or {}).get("backfill") or {}).get("request")
    return None if value is None or value == known else str(value)


class Asked(NamedTuple):
    """The backfill as this reconcile finds it: under way (begun now or before), or not."""

    under_way: Backfill | None  # for the core's reconcile to carry on
    entry: dict[str, Any] | None  # status.backfill when none is under way: unchanged, or refused
    event: EventSpec | None  # BackfillStarted or BackfillRefused, for a new request


def asked(schedule: Mapping[str, Any], spec: ScheduleSpec, now: int) -> Asked:
    known = (schedule.get("status") or {}).get("backfill") or None
    request = pending_backfill(schedule)
    if request is not None:
        try:
            start, end = parse_backfill_range(request)
            current = backfills.begin(spec.job, request, start, end, now)
        except BackfillError as error:
            return Asked(None, {"request": request, "state": REFUSED, "message": error.message},
                         messages.backfill_refused(request, error.message))
        return Asked(current, None, messages.backfill_started(current))
    if known is not None and known.get("state") == RUNNING:
        return Asked(_backfill_of(known), None, None)
    return Asked(None, known, None)


def entry(current: Backfill, running: str | None, finished: bool, suspended: bool) -> dict[str, Any]:
    """status.backfill for a backfill under way or just finished."""
    return {"request": current.request, "state": COMPLETE if finished else RUNNING,
            "from": rfc3339(current.start), "to": rfc3339(current.end), "total": current.total,
            "launched": current.launched, "nextScheduledTime": None if current.next is None else rfc3339(current.next),
            "running": running,
            "message": "suspended: the backfill waits" if suspended and not finished else None}


def _backfill_of(entry: Mapping[str, Any]) -> Backfill:
    start, end = parse_rfc3339(entry.get("from")), parse_rfc3339(entry.get("to"))
    assert start is not None and end is not None  # written by ``entry``
    running = entry.get("running")
    return Backfill(str(entry["request"]), start, end, int(entry.get("total", 0)),
                    parse_rfc3339(entry.get("nextScheduledTime")), int(entry.get("launched", 0)),
                    None if running is None else str(running))


def parse_backfill_range(text: str) -> tuple[int, int]:
    """``<from>/<to>``, each an RFC 3339 time or YYYY-MM-DDTHH:MM (UTC); BackfillError if not."""
    first, slash, last = text.partition("/")
    start, end = parse_rfc3339(first.strip()), parse_rfc3339(last.strip())
    if not slash or start is None or end is None:
        raise BackfillError(f"{text!r} is not a range <from>/<to> of UTC times, such as "
                            "2024-03-01T00:00:00Z/2024-03-07T23:59:00Z")
    return start, end
