"""A schedule's launches read off its Jobs, for a status in fleet mode (issue 47), which writes no
per-launch field: pure functions over the objects the API server returned.

A fleet-mode status has no ``lastScheduleTime``, ``nextFireTime``, ``nextScheduleTimes``,
``activeCount`` or up-to-date ``active``: the operator writes a launch on its Job alone (its
deterministic name, its run label, its scheduled-time annotation). ``with_launches`` gives
describe, history and next the status they would read in the default mode: the last schedule
time, the runs under way, the count launched and the finished runs the status has not recorded
yet from the Jobs, and the next fire times from the spec.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterable, Mapping

from ..api import (ATTEMPT_LABEL, REASON_ANNOTATION, RUN_LABEL, SCHEDULED_ANNOTATION, STAGED_LABEL,
                   STARTED_ANNOTATION)
from ..core.zones import local_rfc3339
from ..manifest import SpecError, read_spec

ENDS = {"Complete": "succeeded", "Failed": "failed"}  # a Job's condition, as the status names the run's end


def in_fleet_mode(body: Mapping[str, Any]) -> bool:
    """Whether the operator wrote this status in fleet mode (its launches are on the Jobs): it has
    reconciled it (anchorTime) and wrote no nextScheduleTimes, which the default mode always
    writes (empty while nothing fires)."""
    status = body.get("status") or {}
    return "anchorTime" in status and "nextScheduleTimes" not in status


def with_launches(body: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]], now_minute: int) -> dict[str, Any]:
    """``body`` with its status completed from its Jobs (and its spec, for the next fire times)
    where fleet mode leaves it: what the status says of its own is kept."""
    status = dict(body.get("status") or {})
    runs = _runs(jobs)
    active = [run for run in runs if run["state"] == "running"]
    last = _last_schedule(status, runs)
    status.update(lastScheduleTime=last, active=active, activeCount=len(active),
                  launched=_launched(status, runs), history=_history(status, runs))
    if not status.get("nextScheduleTimes") and fires(body):
        status["nextScheduleTimes"] = next_times(body, last, now_minute)
    return {**body, "status": status}


def _last_schedule(status: Mapping[str, Any], runs: list[dict[str, Any]]) -> str | None:
    """The last schedule time: the latest launch the schedule made itself (scheduled or caught
    up; a manual or backfill run is none), or the one the status recorded, whose Job may be gone."""
    scheduled = [run["scheduledTime"] for run in runs if run["reason"] in ("scheduled", "catch-up")]
    recorded = status.get("recordedScheduleTime")
    return max([*scheduled, *([recorded] if recorded else [])], default=None)


def _launched(status: Mapping[str, Any], runs: list[dict[str, Any]]) -> int:
    """The count of runs launched: the highest run number on a Job, or the status's own count."""
    return max([int(status.get("launched") or 0), *(run["run"] for run in runs)])


def _history(status: Mapping[str, Any], runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The status's history, then the finished runs it has not recorded yet, as it would record them."""
    history = list(status.get("history") or [])
    recorded = {entry.get("name") for entry in history}
    return [*history, *(_finished(run) for run in runs if run["state"] != "running" and run["name"] not in recorded)]


def fires(body: Mapping[str, Any]) -> bool:
    """Whether the schedule fires at all now: not suspended or paused, not ended, Ready (else
    describe and next say why no time is next, as for the default mode's empty list)."""
    spec, status = body.get("spec") or {}, body.get("status") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return (not spec.get("suspend") and not status.get("pausedOnFailures") and conditions.get("Ended") != "True"
            and conditions.get("Ready") == "True")


def next_times(body: Mapping[str, Any], last: str | None, now_minute: int) -> list[dict[str, str]]:
    """The spec's next fire times after now (and after the last launched), UTC and the zone's wall
    clock, as the default mode's status lists them; none when the spec cannot be read. Suspension,
    a pause, a window's end and a run limit are said by describe and next before these."""
    status = body.get("status") or {}
    anchor = _minute(status.get("anchorTime"))
    if anchor is None:
        return []
    try:
        spec = read_spec(body, anchor)
    except SpecError:
        return []
    after = max(now_minute - 1, anchor, _minute(last) or anchor)
    times = spec.job.timeline(anchor).upcoming(after, spec.upcoming)
    return [{"time": _rfc3339(minute), "localTime": local_rfc3339(minute, spec.job.options.tz)} for minute in times]


def _runs(jobs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each run's latest attempt, by run number: what its Job says of it."""
    latest: dict[int, dict[str, Any]] = {}
    for job in jobs:
        run = _run_of(job)
        if run is not None and run["attempt"] >= latest.get(run["run"], {}).get("attempt", 0):
            latest[run["run"]] = run
    return [latest[number] for number in sorted(latest)]


def _run_of(job: Mapping[str, Any]) -> dict[str, Any] | None:
    metadata = job.get("metadata") or {}
    labels, annotations = metadata.get("labels") or {}, metadata.get("annotations") or {}
    if metadata.get("deletionTimestamp") or RUN_LABEL not in labels or labels.get(STAGED_LABEL) == "true":
        return None
    try:
        number, attempt = int(labels[RUN_LABEL]), int(labels.get(ATTEMPT_LABEL, 1))
    except ValueError:
        return None
    name = str(metadata.get("name"))
    ended = _ended(job)
    return {"name": name if attempt == 1 else name.rsplit("-", 1)[0], "run": number, "attempt": attempt,
            "state": ended[0] if ended else "running", "reason": str(annotations.get(REASON_ANNOTATION, "scheduled")),
            "job": name, "scheduledTime": annotations.get(SCHEDULED_ANNOTATION),
            "startedTime": annotations.get(STARTED_ANNOTATION), "finishedTime": ended[1] if ended else None}


def _ended(job: Mapping[str, Any]) -> tuple[str, str] | None:
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") == "True" and condition.get("type") in ENDS:
            return ENDS[condition["type"]], str(condition.get("lastTransitionTime") or "")
    return None


def _finished(run: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": run["name"], "run": run["run"], "state": run["state"], "attempts": run["attempt"],
            "reason": run["reason"], "scheduledTime": run["scheduledTime"], "startedTime": run["startedTime"],
            "finishedTime": run["finishedTime"]}


def _minute(text: object) -> int | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()) // 60
    except ValueError:
        return None


def _rfc3339(minute: int) -> str:
    return dt.datetime.fromtimestamp(minute * 60, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
