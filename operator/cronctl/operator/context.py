"""What one reconcile of one CronSchedule works with, shared by the plan's parts.

The schedule as read, its spec and timeline as the core reads them, the
state and runs rebuilt from its status and Jobs, the minute and second it
is planned at, and the effects found so far.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..core.schedule import Timeline
from ..manifest import ScheduleSpec
from .effects import Effects, PostEvent
from .manifests import EventSpec
from .observe import Observed
from .reading import Reading


@dataclass
class Context:
    schedule: Mapping[str, Any]
    spec: ScheduleSpec
    timeline: Timeline
    read: Reading
    observed: Observed
    anchor: int
    now: int  # the minute the core decides at
    second: float  # within it: when a jittered or staged Job may start
    out: Effects
    pool_missing: bool = False  # spec.pool names a CronPool that does not exist
    deleting: bool = False  # the schedule has a deletionTimestamp (a finalizer holds it): nothing launches

    @property
    def old_status(self) -> Mapping[str, Any]:
        return self.schedule.get("status") or {}

    @property
    def namespace(self) -> str:
        return str(self.schedule["metadata"].get("namespace") or "")

    @property
    def generation(self) -> int:
        return int(self.schedule["metadata"].get("generation", 0))

    def post(self, event: EventSpec) -> None:
        self.out.events.append(PostEvent(event))
