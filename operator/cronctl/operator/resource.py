"""The CronSchedule resource on a cluster: the labels and annotations of its Jobs (named in
``cronctl.api``), and times as Kubernetes writes them. What the resource is and how its spec
reads: ``cronctl.manifest``."""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

from ..api import (ANCHOR_ANNOTATION, ATTEMPT_LABEL, BACKFILL_ANNOTATION, OVERFLOW_ANNOTATION, POOL_LABEL,  # noqa: F401
                   REASON_ANNOTATION, REASON_LABEL, REPLACES_ANNOTATION, RESUME_ANNOTATION, RUN_LABEL,
                   SCHEDULE_LABEL, SCHEDULED_ANNOTATION, SHARD_LABEL, STAGED_DIGEST_ANNOTATION, STAGED_LABEL,
                   START_AT_ANNOTATION, STARTED_ANNOTATION, TRIGGER_ANNOTATION)
from ..core.times import format_time, to_minute

STATUS_VERSION = 1


@lru_cache(maxsize=4096)
def rfc3339(minute: int) -> str:
    """A minute as a Kubernetes timestamp. Remembered, so that the schedules' statuses and plans
    share one string per minute (a herd's are all of one minute: issue 47, memory per schedule)."""
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
    return _parse_rfc3339(text) if isinstance(text, str) else None


@lru_cache(maxsize=16_384)  # a plan reads a dozen timestamps of its status and Jobs, mostly the same ones
def _parse_rfc3339(text: str) -> int | None:
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc)
    return to_minute(when.year, when.month, when.day, when.hour, when.minute)


