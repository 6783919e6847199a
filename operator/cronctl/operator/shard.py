"""Shards: a fleet of CronSchedules split over several operator Deployments.

A CronSchedule belongs to the shard its ``cronctl.dev/shard`` label names;
one without the label belongs to the default shard, the operator started
without ``--shard`` (so an install that never heard of shards is one).
Each operator watches only its own shard's CronSchedules and Jobs, filtered
by the API server (label selectors, as Flux's ``--watch-label-selector``),
so its cache and its CPU hold 1/N of the fleet; each shard has its own Lease,
so its replicas elect their own leader.

A Job carries the shard label of its CronSchedule when it was made. Moving a
schedule is relabelling it: the old shard's watch sees it leave (the API
server sends DELETED when an object stops matching a selector) and forgets
it; the new shard sees it arrive, and because ``status.shard`` names another
shard it reads the schedule's Jobs from the API once, relabels them to
itself (``plan``'s ``LabelJob``) and plans from them. A launch is never
doubled across the handoff, whoever acts first: Job names are a function of
the schedule and the nominal time, so the second create meets AlreadyExists
and adopts the Job (relabelling it too). Nothing is lost: the new shard
decides the minutes since the last launch as a restart does.

Pure: names, selectors and ownership; the operator's handlers and ``apply``
carry them out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from ..api import SCHEDULE_LABEL, SHARD_LABEL

# A label value: at most 63 characters, alphanumerics with - _ . inside.
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")


def shard_of(obj: Mapping[str, Any]) -> str | None:
    """The shard an object's label names (None: no label, the default shard's)."""
    value = ((obj.get("metadata") or {}).get("labels") or {}).get(SHARD_LABEL)
    return None if value is None else str(value)


def recorded_shard(schedule: Mapping[str, Any]) -> str | None:
    """The shard that last wrote the schedule's status (``status.shard``)."""
    value = (schedule.get("status") or {}).get("shard")
    return None if value is None else str(value)


def parse_shard_name(text: str) -> str:
    """A ``--shard`` value: a label value, not empty (the default shard is the one without)."""
    if not _LABEL_VALUE.match(text):
        raise ValueError(f"--shard: {text!r} is not a label value (1-63 letters, digits, '-', '_' or '.', "
                         "beginning and ending with a letter or digit)")
    return text


@dataclass(frozen=True)
class Shard:
    name: str | None = None  # None: the default shard, the CronSchedules without a shard label

    @property
    def title(self) -> str:
        return "the default shard" if self.name is None else f"shard {self.name}"

    def owns(self, schedule: Mapping[str, Any]) -> bool:
        return shard_of(schedule) == self.name

    def moved_in(self, schedule: Mapping[str, Any]) -> bool:
        """Whether the schedule's status was last written by another shard (or by none, for a
        schedule that had a status before it had shards): its Jobs may carry another shard's label,
        which this shard's watch does not see, so they must be read from the API."""
        status = schedule.get("status") or {}
        return bool(status) and recorded_shard(schedule) != self.name

    @property
    def schedule_selector(self) -> str:
        """The label selector of this shard's CronSchedules, applied by the API server."""
        return f"!{SHARD_LABEL}" if self.name is None else f"{SHARD_LABEL}={self.name}"

    @property
    def job_selector(self) -> str:
        """The label selector of this shard's Jobs: those of CronSchedules, in this shard."""
        return f"{SCHEDULE_LABEL},{self.schedule_selector}"

    def lease_name(self, base: str) -> str:
        """Each shard elects its own leader: the default shard keeps the base name."""
        return base if self.name is None else f"{base}-{self.name}"


def shard_of_lease(lease: str, base: str) -> Shard | None:
    """The shard whose Lease this is (``Shard.lease_name`` read back); None: not an operator's."""
    if lease == base:
        return Shard()
    if lease.startswith(base + "-") and len(lease) > len(base) + 1:
        return Shard(lease[len(base) + 1:])
    return None
