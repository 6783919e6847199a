"""What the plugin prints, built from the objects the API server returned: pure functions
over plain dicts, no API call, so what each command shows is decided here and nowhere else."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..core.times import format_time
from ..core.zones import UTC, AnyZone
from .cluster import event_time

LAST_RUNS = 5  # the finished runs describe shows (history shows them all)


def where(body: Mapping[str, Any]) -> str:
    metadata = body.get("metadata") or {}
    return f"{metadata.get('namespace')}/{metadata.get('name')}"


def zone_of(body: Mapping[str, Any]) -> str:
    return str((body.get("spec") or {}).get("timeZone") or "UTC")


def next_lines(body: Mapping[str, Any]) -> list[str]:
    """``status.nextScheduleTimes``, UTC and the zone's wall clock; or why there are none."""
    times = (body.get("status") or {}).get("nextScheduleTimes") or []
    if not times:
        return [f"{where(body)}: {why_no_next_times(body)}"]
    return table(("TIME (UTC)", f"LOCAL TIME ({zone_of(body)})"),
                 [(str(t.get("time", "")), str(t.get("localTime", ""))) for t in times])


def why_no_next_times(body: Mapping[str, Any]) -> str:
    spec, status = body.get("spec") or {}, body.get("status") or {}
    ended = condition(status, "Ended")
    if ended is not None and ended.get("status") == "True":
        return f"ended ({ended.get('reason')}): {ended.get('message')}; nothing fires"
    if status.get("pausedOnFailures") and not spec.get("suspend"):
        return (f"paused: {status.get('suspendReason') or 'on failures'}; "
                f"kubectl cronctl resume {(body.get('metadata') or {}).get('name')}")
    if spec.get("suspend"):
        reason = spec.get("suspendReason")
        return "suspended" + (f" ({reason})" if reason else "") + ": nothing fires until it is resumed"
    ready = condition(status, "Ready")
    if ready is not None and ready.get("status") == "False":
        return f"not ready, nothing fires: {ready.get('message') or ready.get('reason')}"
    return "no next fire times in its status yet (the operator has not reconciled it: is one running?)"


def history_lines(body: Mapping[str, Any]) -> list[str]:
    runs = (body.get("status") or {}).get("history") or []
    if not runs:
        return [f"{where(body)}: no finished runs in its status yet"]
    return runs_table(runs)


def runs_table(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    return table(("RUN", "STATE", "REASON", "SCHEDULED", "STARTED", "FINISHED", "ATTEMPTS", "FAILURE"),
                 [(str(run.get("run", "")), str(run.get("state", "")), str(run.get("reason") or "scheduled"),
                   str(run.get("scheduledTime") or "-"), str(run.get("startedTime") or "-"),
                   str(run.get("finishedTime") or "-"), str(run.get("attempts") or 1), str(run.get("failure") or ""))
                  for run in runs])


def _pool(spec: Mapping[str, Any], status: Mapping[str, Any]) -> list[str]:
    """describe's line of the CronPool the schedule's runs wait in, and how many wait."""
    if not spec.get("pool"):
        return []
    queued = sum(1 for run in status.get("active") or [] if run.get("state") == "queued")
    return [f"Pool:               {spec['pool']}" + (f" ({queued} queued for a worker)" if queued else "")]


def _window_and_failures(spec: Mapping[str, Any], status: Mapping[str, Any]) -> list[str]:
    """describe's lines of the window, the run limit, the failures and a pause on them."""
    lines = []
    if spec.get("startTime") or spec.get("endTime"):
        lines.append(f"Window:             {spec.get('startTime') or '-'} to {spec.get('endTime') or '-'}")
    if spec.get("maxRuns"):
        lines.append(f"Max Runs:           {spec['maxRuns']} ({status.get('remainingRuns', spec['maxRuns'])} left)")
    ended = condition(status, "Ended")
    if ended is not None and ended.get("status") == "True":
        lines.append(f"Ended:              {ended.get('reason')}: {ended.get('message')}")
    lines.append(f"Last Success:       {status.get('lastSuccessfulTime') or '-'}   "
                 f"Last Failure: {status.get('lastFailureTime') or '-'}   "
                 f"Failures In A Row: {status.get('consecutiveFailures') or 0}")
    if spec.get("pauseOnFailures"):
        pause = status.get("pausedOnFailures")
        lines.append(f"Pause On Failures:  {spec['pauseOnFailures']}"
                     + (f" (paused since {pause.get('since')}: kubectl cronctl resume)" if pause else ""))
    return lines


def describe_lines(body: Mapping[str, Any], events: Sequence[Mapping[str, Any]],
                   unlisted: str | None = None) -> list[str]:
    """Spec, next times, active and last runs, conditions and Events in one view, as kubectl describe;
    ``unlisted`` says why the Events could not be read."""
    spec, status = body.get("spec") or {}, body.get("status") or {}
    return [*_identity(body), *_times(body), *_policies(spec), *_pool(spec, status),
            *_window_and_failures(spec, status), *_counters(status),
            "Next Fire Times:", *_indented(next_lines(body) if status.get("nextScheduleTimes")
                                           else [why_no_next_times(body)]),
            "Active Runs:", *_indented(_active_table(status.get("active") or [])),
            *_last_runs(status.get("history") or []), *_backfill(status.get("backfill")),
            "Conditions:", *_indented(_conditions_table(status.get("conditions") or [])),
            "Events:", *_indented(_events_table(events, unlisted))]


def _identity(body: Mapping[str, Any]) -> list[str]:
    """describe's lines of the schedule's name and namespace."""
    metadata = body.get("metadata") or {}
    return [f"Name:               {metadata.get('name')}", f"Namespace:          {metadata.get('namespace')}"]


def _times(body: Mapping[str, Any]) -> list[str]:
    """describe's lines of when the schedule fires: its expressions, exclusions, zone and daylight-saving rule."""
    spec = body.get("spec") or {}
    lines = [f"Schedules:          {', '.join(spec['schedules'])}" if spec.get("schedules")
             else f"Schedule:           {spec.get('schedule')}"]
    if spec.get("exclude"):
        lines.append(f"Exclude:            {', '.join(spec['exclude'])}")
    lines.append(f"Time Zone:          {zone_of(body)}")
    if spec.get("daylightSaving"):
        lines.append(f"Daylight Saving:    {spec['daylightSaving']}")
    return lines


_LIMITS = (("startingDeadlineSeconds", "Starting Deadline:  ", "s"), ("timeoutMinutes", "Timeout:            ", "m"),
           ("maxRetries", "Max Retries:        ", ""), ("jitterSeconds", "Jitter:             ", "s"))


def _policies(spec: Mapping[str, Any]) -> list[str]:
    """describe's lines of how a run is launched: concurrency, catch-up, the limits set, suspension."""
    lines = [f"Concurrency Policy: {spec.get('concurrencyPolicy') or 'Allow'}",
             f"Catch Up:           {spec.get('catchUp') or 'Latest'}"]
    lines += [f"{label}{spec[key]}{unit}" for key, label, unit in _LIMITS if spec.get(key)]
    reason = spec.get("suspendReason") if spec.get("suspend") else None
    lines.append(f"Suspend:            {'true' if spec.get('suspend') else 'false'}" + (f" ({reason})" if reason else ""))
    return lines


def _counters(status: Mapping[str, Any]) -> list[str]:
    """describe's lines of the last schedule time and what was launched, skipped and overflowed."""
    return [f"Last Schedule:      {status.get('lastScheduleTime') or '-'}",
            f"Launched:           {status.get('launched') or 0}   Skipped: {status.get('skipped') or 0}"
            f"   Overflowed: {status.get('overflowed') or 0}"]


def _active_table(active: Sequence[Mapping[str, Any]]) -> list[str]:
    if not active:
        return ["<none>"]
    return table(("RUN", "JOB", "STATE", "REASON", "SCHEDULED", "STARTED", "ATTEMPT"),
                 [(str(run.get("run", "")), str(run.get("job") or run.get("name", "")), str(run.get("state") or "running"),
                   str(run.get("reason") or "scheduled"), str(run.get("scheduledTime") or "-"),
                   str(run.get("startedTime") or "-"), str(run.get("attempt") or 1))
                  for run in active])


def _last_runs(history: Sequence[Mapping[str, Any]]) -> list[str]:
    """describe's table of the last finished runs (history shows them all)."""
    more = f" (the last {LAST_RUNS} of {len(history)})" if len(history) > LAST_RUNS else ""
    return [f"Last Runs:{more}", *_indented(runs_table(history[-LAST_RUNS:]) if history else ["<none>"])]


def _backfill(backfill: Mapping[str, Any] | None) -> list[str]:
    """describe's line of the backfill request the schedule is answering, or answered last."""
    if not backfill:
        return []
    progress = (f", {backfill.get('launched', 0)}/{backfill.get('total')} launched"
                if backfill.get("total") is not None else "")
    message = f" ({backfill['message']})" if backfill.get("message") else ""
    return [f"Backfill:           {backfill.get('request')}: {backfill.get('state')}{progress}{message}"]


def _conditions_table(conditions: Sequence[Mapping[str, Any]]) -> list[str]:
    if not conditions:
        return ["<none>"]
    return table(("TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"),
                 [(str(c.get("type", "")), str(c.get("status", "")), str(c.get("reason") or ""),
                   str(c.get("lastTransitionTime") or "-"), str(c.get("message") or ""))
                  for c in conditions])


def _events_table(events: Sequence[Mapping[str, Any]], unlisted: str | None) -> list[str]:
    if not events:
        return [f"<not shown: {unlisted}>" if unlisted else "<none>"]
    return table(("TYPE", "REASON", "LAST SEEN", "COUNT", "MESSAGE"),
                 [(str(e.get("type") or ""), str(e.get("reason") or ""), event_time(e) or "-",
                   str(e.get("count") or 1), str(e.get("message") or ""))
                  for e in events])


def condition(status: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def both_times(minute: int, zone: AnyZone) -> str:
    """A minute in UTC and, for another zone, as its wall clock (the runner's preview says the same)."""
    utc = format_time(minute).replace("T", " ") + " UTC"
    if zone == UTC:
        return utc
    return f"{utc} ({format_time(minute + zone.utc_offset(minute)).replace('T', ' ')} {zone.name})"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell, three spaces apart, the last one unpadded (as kubectl get)."""
    widths = [max(len(row[i]) for row in (headers, *rows)) for i in range(len(headers))]
    return ["   ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in (headers, *rows)]


def _indented(lines: Sequence[str]) -> list[str]:
    return ["  " + line for line in lines]
