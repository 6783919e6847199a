"""A CronSchedule's spec as the core reads it, remembered by what the reading is a function of.

A schedule is planned twice or more per launch (staged, then released, each
planned ahead), and reading its spec was a quarter of a plan's time, so the
reading (the core's ``JobSpec`` and its ``Timeline``) and the upcoming times
the status lists are remembered by the schedule's name, its spec (as
canonical JSON, hashed) and the anchor. The memos are bounded and shared by
the reconcile threads, as the core's compiled expressions already are (their
entries are written whole). What they keep is one entry per schedule (issue
47: memory per schedule): the upcoming times of its latest first time only,
and a job template shared by the schedules that have the same one.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import replace
from typing import Any, Mapping

import orjson

from ..core.schedule import Timeline
from ..core.zones import local_rfc3339
from ..manifest import ScheduleSpec, SpecError, read_spec
from .resource import rfc3339

Reading = tuple[str, bytes, int]  # what a reading is a function of: the name, the spec's hash, the anchor


class Memo:
    """A bounded memo shared by the reconcile threads: the oldest entries go first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._values: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Any, default: Any = None) -> Any:
        with self._lock:
            return self._values.get(key, default)

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.capacity:
                del self._values[next(iter(self._values))]


def spec_key(schedule: Mapping[str, Any]) -> tuple[str, bytes]:
    """The schedule's name and its spec as canonical JSON, hashed: what its reading is a function of."""
    spec = orjson.dumps(schedule.get("spec"), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    return schedule["metadata"]["name"], hashlib.sha1(spec, usedforsecurity=False).digest()


def read_schedule(schedule: Mapping[str, Any], anchor: int) -> tuple[ScheduleSpec, Timeline, Reading]:
    """The spec as the core reads it, its timeline, and the key they are remembered by. Raises
    SpecError (a refusal is not remembered), also for an expression that never fires."""
    key = (*spec_key(schedule), anchor)
    read = _readings.get(key)
    if read is None:
        spec = _sharing_its_template(read_spec(schedule, anchor))
        timeline = spec.job.timeline(anchor)
        if not timeline.fires and not spec.job.fires_from(anchor):
            field = "spec.schedules" if "schedules" in schedule.get("spec", {}) else "spec.schedule"
            raise SpecError(field, f"{spec.job.compiled.text!r} never fires within 8 years "
                            f"of {rfc3339(anchor)}", "NeverFires")
        read = spec, timeline
        _readings.put(key, read)
    return (*read, key)


_readings = Memo(capacity=50_000)


def _sharing_its_template(spec: ScheduleSpec) -> ScheduleSpec:
    """The spec with the job template of any other schedule read with the same one (by its
    digest): a fleet's schedules made from one chart share theirs (issue 47: 1.5 KiB each, the
    most of a reading). A template is read, never changed (a Job's manifest is built anew)."""
    digest = hashlib.blake2b(orjson.dumps(spec.job_template, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
                                          default=str), digest_size=16).digest()
    shared = _templates.get(digest)
    if shared is None:
        _templates.put(digest, spec.job_template)
        return spec
    return replace(spec, job_template=shared)


_templates = Memo(capacity=50_000)


def next_schedule_times(spec: ScheduleSpec, timeline: Timeline, read: Reading,
                        next_fire: int | None) -> list[dict[str, str]]:
    """status.nextScheduleTimes: the next ``spec.upcoming`` times from ``next_fire`` on, in UTC and
    the schedule's zone. Remembered by the schedule's name and spec, one entry each: the times
    of its latest reading and first time (they change when it does), and the very list is
    handed out again (read, never changed: a plan's status and the status written share it).
    Keyed by the first time too, the memo kept every schedule's past times until 50,000
    entries (issue 47: 1.2 KiB each, five per schedule of a fleet of 10,000)."""
    if next_fire is None:
        return []
    key = read[:2]
    remembered = _upcoming.get(key)
    if remembered is None or remembered[0] != (read, next_fire):
        times = [{"time": rfc3339(minute), "localTime": local_rfc3339(minute, spec.job.options.tz)}
                 for minute in timeline.upcoming(next_fire - 1, spec.upcoming)]
        remembered = ((read, next_fire), times)
        _upcoming.put(key, remembered)
    return remembered[1]  # type: ignore[no-any-return]


_upcoming = Memo(capacity=50_000)
