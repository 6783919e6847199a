"""Which shard holds which CronSchedules, and which ones nobody holds (``cronctl shards``).

A schedule is held when the Lease of its shard (``Shard.lease_name``) has a
holder that renewed it within its duration. A schedule whose shard has no
such Lease is unassigned: no operator acts on it (its label names a shard
that is not installed, or whose replicas are all down). One that the Lease
of its shard holds but whose ``status.shard`` names another is moving: the
new shard has not reconciled it yet.

``assignment`` is pure (the schedules, the Leases and the clock in, rows
out); the ``cronctl shards`` command reads them with the user's credentials,
not the operator's (which need no list of Leases).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..api import DEFAULT_LEASE_NAME
from .shard import Shard, recorded_shard, shard_of, shard_of_lease


@dataclass(frozen=True)
class LeaseView:
    name: str
    holder: str | None
    renewed: float | None  # seconds since 1970
    duration: int | None  # seconds

    def held(self, now: float) -> bool:
        return bool(self.holder) and self.renewed is not None and self.duration is not None \
            and now <= self.renewed + self.duration


@dataclass
class ShardRow:
    shard: str | None
    lease: str
    holder: str | None = None
    held: bool = False
    renewed_ago: float | None = None
    schedules: list[str] = field(default_factory=list)  # namespace/name
    moving: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return Shard(self.shard).title

    def as_json(self) -> dict[str, Any]:
        return {"shard": self.shard, "lease": self.lease, "holder": self.holder, "held": self.held,
                "renewedSecondsAgo": None if self.renewed_ago is None else round(self.renewed_ago, 1),
                "schedules": len(self.schedules), "moving": self.moving,
                "unassigned": [] if self.held else self.schedules}


def assignment(schedules: Iterable[Mapping[str, Any]], leases: Iterable[LeaseView], now: float,
               base: str = DEFAULT_LEASE_NAME) -> list[ShardRow]:
    """One row per shard that has schedules or a Lease: the default shard first, then by name."""
    by_lease = {lease.name: lease for lease in leases}
    rows: dict[str | None, ShardRow] = {}

    def row(shard: str | None) -> ShardRow:
        if shard not in rows:
            name = Shard(shard).lease_name(base)
            lease = by_lease.get(name)
            rows[shard] = ShardRow(shard, name)
            if lease is not None:
                rows[shard].holder, rows[shard].held = lease.holder, lease.held(now)
                rows[shard].renewed_ago = None if lease.renewed is None else max(0.0, now - lease.renewed)
        return rows[shard]

    for lease_name in by_lease:
        shard = shard_of_lease(lease_name, base)
        if shard is not None:
            row(shard.name)
    for schedule in schedules:
        metadata = schedule.get("metadata") or {}
        key = f"{metadata.get('namespace', '')}/{metadata.get('name', '')}"
        shard = shard_of(schedule)
        row(shard).schedules.append(key)
        if (schedule.get("status") or {}) and recorded_shard(schedule) != shard:
            row(shard).moving.append(key)
    return sorted(rows.values(), key=lambda r: (r.shard is not None, r.shard or ""))


def unassigned(rows: Iterable[ShardRow]) -> list[ShardRow]:
    return [r for r in rows if r.schedules and not r.held]


def render(rows: list[ShardRow]) -> str:
    table = [("SHARD", "SCHEDULES", "MOVING", "LEASE", "HOLDER", "RENEWED")]
    for r in rows:
        renewed = "-" if r.renewed_ago is None else f"{r.renewed_ago:.0f}s ago"
        holder = (r.holder or "-") if r.held else ("none (expired)" if r.holder else "none")
        table.append(("(default)" if r.shard is None else r.shard, str(len(r.schedules)), str(len(r.moving)),
                      r.lease, holder, renewed))
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    for r in unassigned(rows):
        shown = ", ".join(r.schedules[:5]) + (f" and {len(r.schedules) - 5} more" if len(r.schedules) > 5 else "")
        lines.append(f"unassigned: {len(r.schedules)} CronSchedule(s) of {r.title}, whose Lease {r.lease} "
                     f"{'has expired' if r.holder else 'is not held'}: no operator acts on {shown}")
    return "\n".join(lines)


def lease_view(name: str, holder: str | None, renewed: dt.datetime | None, duration: int | None) -> LeaseView:
    """A Lease as read by the kubernetes client (its renewTime a datetime)."""
    if renewed is not None and renewed.tzinfo is None:
        renewed = renewed.replace(tzinfo=dt.timezone.utc)
    return LeaseView(name, holder, None if renewed is None else renewed.timestamp(), duration)
