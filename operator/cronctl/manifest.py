"""A CronSchedule manifest: what the resource is, and reading its spec into the core's.

The operator, the single-node runner and ``cronctl fleet preview`` read the
same manifests with this one reader. Reading turns the user's object into the
core's ``JobSpec``; what only the core can judge comes back as a ``SpecError``
whose field is the path in the object (``spec.schedule: day-of-week: 8 is out
of range 0-7``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .core.errors import CronctlError
from .core.every import check_jitter_allowed
from .core.schedule import IntervalExpression, parse_expression
from .core.spec import (CATCH_UP_ALL, CATCH_UP_LATEST, DEFAULT_KEEP_FAILED, DEFAULT_KEEP_SUCCEEDED, MAX_MISSED,
                        PAST_LIMIT_LAUNCH, JobSpec, Options, Policy)
from .core.zones import UTC, AnyZone, parse_zone

GROUP = "cronctl.dev"
VERSION = "v1"
PLURAL = "cronschedules"
KIND = "CronSchedule"
API_VERSION = f"{GROUP}/{VERSION}"

MAX_JITTER_SECONDS = 3600
MAX_MISSED_LIMIT = 10000  # the CRD's maximum of missedSchedulesLimit

POLICIES = {"Allow": Policy.ALLOW, "Forbid": Policy.FORBID, "Replace": Policy.REPLACE,
            "WaitForLast": Policy.WAIT_FOR_LAST}
CATCH_UP = {"Latest": CATCH_UP_LATEST, "All": CATCH_UP_ALL}


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
    zone: AnyZone = UTC
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
    missed_limit = spec.get("missedSchedulesLimit", MAX_MISSED)
    if not isinstance(missed_limit, int) or isinstance(missed_limit, bool) \
            or not 1 <= missed_limit <= MAX_MISSED_LIMIT:
        raise SpecError("spec.missedSchedulesLimit", f"{missed_limit!r} is out of range 1-{MAX_MISSED_LIMIT}",
                        "InvalidMissedSchedulesLimit")
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
        missed_limit=missed_limit,
        past_limit=PAST_LIMIT_LAUNCH,  # as CronJob: an outage never strands a schedule
    )
    job = JobSpec(name=metadata["name"], expression=expression.text, policy=policy, options=options,
                  created_at=anchor, index=0)
    return ScheduleSpec(job=job, suspend=bool(spec.get("suspend", False)),
                        job_template=spec.get("jobTemplate", {}))
