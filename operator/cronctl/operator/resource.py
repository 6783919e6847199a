"""The CronSchedule resource: names, labels, times, and reading its spec.

Reading a spec turns the user's object into the core's ``JobSpec``; what only
the core can judge comes back as a ``FieldError`` whose field is the path in
the object (``spec.schedule: day-of-week: 8 is out of range 0-7``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Mapping

from ..core.errors import CronctlError
from ..core.every import check_jitter_allowed
from ..core.schedule import IntervalExpression, parse_expression
from ..core.spec import (CATCH_UP_ALL, CATCH_UP_LATEST, DEFAULT_KEEP_FAILED, DEFAULT_KEEP_SUCCEEDED, JobSpec,
                         Options, Policy)
from ..core.times import format_time, to_minute
from ..core.zones import UTC, parse_zone

GROUP = "cronctl.dev"
VERSION = "v1"
PLURAL = "cronschedules"
KIND = "CronSchedule"
API_VERSION = f"{GROUP}/{VERSION}"

SCHEDULE_LABEL = "cronctl.dev/schedule"
RUN_LABEL = "cronctl.dev/run"
ATTEMPT_LABEL = "cronctl.dev/attempt"
SCHEDULED_ANNOTATION = "cronctl.dev/scheduled-time"
STARTED_ANNOTATION = "cronctl.dev/started-time"
TRIGGER_ANNOTATION = "cronctl.dev/trigger"  # on a CronSchedule: any new value asks for one manual run
REASON_ANNOTATION = "cronctl.dev/reason"  # on a Job: scheduled, catch-up or manual
# On a Job created suspended: the second its jitter lets it start (the operator then resumes it).
START_AT_ANNOTATION = "cronctl.dev/start-at"

STATUS_VERSION = 1
MAX_JITTER_SECONDS = 3600

# WaitForLast and catchUp are read here for the single-node runner, which shares
# this reader; the CRD does not admit them yet, so the operator never sees them.
POLICIES = {"Allow": Policy.ALLOW, "Forbid": Policy.FORBID, "Replace": Policy.REPLACE,
            "WaitForLast": Policy.WAIT_FOR_LAST}
CATCH_UP = {"Latest": CATCH_UP_LATEST, "All": CATCH_UP_ALL}


def rfc3339(minute: int) -> str:
    return format_time(minute) + ":00Z"


def rfc3339_seconds(second: int) -> str:
    return format_time(second // 60) + f":{second % 60:02d}Z"


def parse_rfc3339_seconds(text: object) -> int | None:
    """The second (floored) of a Kubernetes timestamp, or None if it is not one."""
    minute = parse_rfc3339(text)
    if minute is None:
        return None
    return minute * 60 + dt.datetime.fromisoformat(str(text).replace("Z", "+00:00")).second


def parse_rfc3339(text: object) -> int | None:
    """The minute (floored) of a Kubernetes timestamp, or None if it is not one."""
    if not isinstance(text, str):
        return None
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc)
    return to_minute(when.year, when.month, when.day, when.hour, when.minute)


class SpecError(CronctlError):
    """A spec the core refuses; ``reason`` is a CamelCase Event/condition reason."""

    def __init__(self, field: str, message: str, reason: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class ScheduleSpec:
    job: JobSpec
    suspend: bool
    job_template: Mapping[str, Any]


def read_spec(body: Mapping[str, Any], anchor: int) -> ScheduleSpec:
    """The core's view of a CronSchedule's spec; raises SpecError naming the field."""
    metadata, spec = body.get("metadata", {}), body.get("spec", {})
    schedule = spec.get("schedule")
    try:
        expression = parse_expression(schedule)
    except CronctlError as error:
        raise SpecError("spec.schedule", error.message, "InvalidSchedule") from None
    zone = UTC
    if spec.get("timeZone") is not None:
        if isinstance(expression, IntervalExpression):
            raise SpecError("spec.timeZone", "an @every interval counts real time and takes no time zone",
                            "InvalidTimeZone")
        try:
            zone = parse_zone(spec["timeZone"], "spec.timeZone")
        except CronctlError as error:
            raise SpecError("spec.timeZone", error.message.partition(": ")[2], "UnknownTimeZone") from None
    policy = POLICIES.get(spec.get("concurrencyPolicy", "Allow"))
    if policy is None:
        raise SpecError("spec.concurrencyPolicy", "must be Allow, Forbid, Replace or WaitForLast", "InvalidPolicy")
    catch_up = CATCH_UP.get(spec.get("catchUp", "Latest"))
    if catch_up is None:
        raise SpecError("spec.catchUp", "must be Latest or All", "InvalidCatchUp")
    jitter = spec.get("jitterSeconds", 0)
    if not isinstance(jitter, int) or isinstance(jitter, bool) or not 0 <= jitter <= MAX_JITTER_SECONDS:
        raise SpecError("spec.jitterSeconds", f"{jitter!r} is out of range 0-{MAX_JITTER_SECONDS}", "InvalidJitter")
    try:
        check_jitter_allowed(expression, jitter)
    except CronctlError as error:
        raise SpecError("spec.schedule", error.message, "InvalidJitter") from None
    deadline_seconds = spec.get("startingDeadlineSeconds")
    options = Options(
        # Schedule times are whole minutes: t >= now - s seconds is t >= now - floor(s / 60) minutes.
        starting_deadline=None if deadline_seconds is None else int(deadline_seconds) // 60,
        timeout=spec.get("timeoutMinutes"),
        keep_succeeded=spec.get("successfulJobsHistoryLimit", DEFAULT_KEEP_SUCCEEDED),
        keep_failed=spec.get("failedJobsHistoryLimit", DEFAULT_KEEP_FAILED),
        tz=zone,
        retries=spec.get("maxRetries", 0),
        retry_delay=spec.get("retryDelayMinutes", 0),
        catch_up=catch_up,
        jitter=jitter,
    )
    job = JobSpec(name=metadata["name"], expression=expression.text, policy=policy, options=options,
                  created_at=anchor, index=0)
    return ScheduleSpec(job=job, suspend=bool(spec.get("suspend", False)),
                        job_template=spec.get("jobTemplate", {}))
