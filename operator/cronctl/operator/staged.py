"""Staged Jobs: the Job a firing is staged as, and whether a staged one is still that Job.

With staging on (off by default), the plan creates the Job of the core's next
schedule time during the minute before it, suspended (``StageJob``), and at
its second releases it in place of a create. Whether a staged Job is still
what the schedule would stage (its spec may have changed since) is a
comparison of digests: the staged Job carries the one it was made with.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..core.tick import Launch, start_time
from ..manifest import ScheduleSpec
from .manifests import JobLaunch, job_manifest, staged_digest
from .reading import Memo, spec_key


def staged_manifest(schedule: Mapping[str, Any], spec: ScheduleSpec, nominal: int) -> dict[str, Any]:
    """The Job that the firing at ``nominal`` is staged as: suspended until the second it is due."""
    options = spec.job.options
    start = start_time(spec.job, Launch(spec.job.name, "", 0, nominal))
    return job_manifest(schedule, spec.job_template, JobLaunch(0, nominal, nominal, start_at=start, staged=True),
                        options.timeout, options.retries)


_UNKNOWN = object()


class Digests:
    """The digests of staged Jobs, remembered by what they are a function of: the schedule's name,
    its spec (as canonical JSON, hashed) and the nominal time. So the plan at the busy second
    compares a staged Job with the digest its staging computed (8 us) instead of building the
    manifest again (a deep copy, the environment and a hash: 50 us, a tenth of the operator's
    time in the release window, profiled)."""

    def __init__(self, capacity: int) -> None:
        self._memo = Memo(capacity)

    def of(self, schedule: Mapping[str, Any], spec: ScheduleSpec, nominal: int) -> str | None:
        digest = self._memo.get(_digest_key(schedule, nominal), _UNKNOWN)
        if digest is _UNKNOWN:
            digest = staged_digest(staged_manifest(schedule, spec, nominal))
            self.remember(schedule, nominal, digest)
        return digest

    def remember(self, schedule: Mapping[str, Any], nominal: int, digest: str | None) -> None:
        self._memo.put(_digest_key(schedule, nominal), digest)


def _digest_key(schedule: Mapping[str, Any], nominal: int) -> tuple[str, bytes, int]:
    return (*spec_key(schedule), nominal)


staged_digests = Digests(capacity=100_000)  # this minute's and the next's, for 50,000 schedules


def is_current(schedule: Mapping[str, Any], spec: ScheduleSpec, nominal: int, digest: str | None) -> bool:
    """Whether a staged Job made with ``digest`` is what the schedule would stage for ``nominal`` now."""
    return digest is not None and digest == staged_digests.of(schedule, spec, nominal)


def stage(schedule: Mapping[str, Any], spec: ScheduleSpec, nominal: int) -> dict[str, Any]:
    """The staged Job of ``nominal``, its digest remembered for the plans that compare it."""
    manifest = staged_manifest(schedule, spec, nominal)
    staged_digests.remember(schedule, nominal, staged_digest(manifest))
    return manifest
