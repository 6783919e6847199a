"""What ``cronctl status``, ``history``, ``next`` and ``trigger`` show or do for a runner's folder.

They read the book without the lock (it is rewritten whole and atomically,
so a reader sees a complete book) and never write it; a manual trigger is a
file the running runner consumes once.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ..core.schedule import Timeline
from ..core.state import ControllerState
from ..core.times import format_time
from ..core.zones import AnyZone
from .book import Book, Status
from .firing import TRIGGERS_DIR, Firing, Overflowed, both_times
from .lock import RunnerLock, describe_holder


def _book(folder: Path) -> dict[str, Any]:
    loaded = Book(folder).load(move_broken=False)
    if loaded.status is not Status.OK:
        raise SystemExit(f"cronctl: {loaded.message or 'no book in ' + str(folder)}")
    return loaded.data


def status_lines(folder: Path) -> list[str]:
    data = _book(folder)
    state = ControllerState.from_json(data["controller"])
    holder = RunnerLock(folder).holder()
    lines = [f"runner: {describe_holder(holder) if holder is not None else 'none running'}"]
    firings = [Firing(**f) for f in data.get("firings", [])]
    busy, size = len({f.slot for f in firings if f.slot is not None}), data.get("workers", 1)
    overflows = data.get("overflows", {})  # a book written before they were kept has none
    for job in state.jobs.values():
        spec = job.spec
        timeline = Timeline(spec.compiled, spec.created_at, spec.options.tz)
        zone = spec.options.tz
        mine = [f for f in firings if f.schedule == spec.name]
        attempts = spec.options.retries + 1
        running = [f"{f.run_id} on {f.slot}{_attempt_of(f, attempts)}" for f in mine if f.slot is not None]
        queued = [f"{f.run_id}{_attempt_of(f, attempts)}" for f in mine if f.startable]
        lines.append(f"{spec.name}: {spec.expression} ({spec.options.tz.name}, {spec.policy.value})")
        lines.append(f"  last:  {both_times(job.state.last_schedule, zone)}")
        lines.append(f"  next:  {both_times(timeline.next_after(state.clock or spec.created_at), zone)}")
        if spec.name in overflows:
            lines.append(f"  {Overflowed(**overflows[spec.name]).describe(zone)}")
        if running:
            lines.append(f"  running: {', '.join(running)}")
        if queued:
            noun = "worker" if size == 1 else "workers"
            lines.append(f"  {', '.join(queued)} queued: {busy}/{size} {noun} busy")
        lines.extend(f"  {_retry_line(f, attempts, zone)}" for f in mine if f.retry_due is not None)
    return lines


def _attempt_of(firing: Firing, attempts: int) -> str:
    """`` (attempt 2/3)`` for a schedule that retries; nothing for one that does not."""
    if attempts == 1 and firing.attempt == 1:
        return ""
    return f" (attempt {firing.attempt}/{max(attempts, firing.attempt)})"


def _retry_line(firing: Firing, attempts: int, zone: AnyZone) -> str:
    """A run waiting for its next attempt, e.g. ``tick-1: attempt 1/3 failed, retry 2/3 at ...``."""
    total = max(attempts, firing.attempt + 1)  # the manifest may have been edited since
    return (f"{firing.run_id}: attempt {firing.attempt}/{total} failed, "
            f"retry {firing.attempt + 1}/{total} at {both_times(firing.retry_due, zone)}")


def history_lines(folder: Path, name: str) -> list[str]:
    data = _book(folder)
    entries = data.get("journal", {}).get(name)
    if entries is None:
        raise SystemExit(f"cronctl: no schedule named {name!r} in {folder}")
    return [f"{entry['run'] or '-':<24} {entry['reason']:<9} nominal {format_time(entry['nominal'])}  "
            f"actual {entry['actual'] or '-':<22} attempts {entry['attempts']}  {entry['outcome']}"
            for entry in entries]


def next_lines(folder: Path, name: str, count: int = 5) -> list[str]:
    data = _book(folder)
    state = ControllerState.from_json(data["controller"])
    job = state.jobs.get(name)
    if job is None:
        raise SystemExit(f"cronctl: no schedule named {name!r} in {folder}")
    spec = job.spec
    timeline = Timeline(spec.compiled, spec.created_at, spec.options.tz)
    lines, t = [], state.clock or spec.created_at
    for _ in range(count):
        nxt = timeline.next_after(t)
        if nxt is None:
            break
        lines.append(both_times(nxt, spec.options.tz))
        t = nxt
    return lines


def trigger(folder: Path, name: str) -> Path:
    """Ask the running runner for a manual firing of ``name``."""
    data = _book(folder)
    if name not in {job["name"] for job in data["controller"]["jobs"]}:
        raise SystemExit(f"cronctl: no schedule named {name!r} in {folder}")
    triggers = folder / TRIGGERS_DIR
    triggers.mkdir(exist_ok=True)
    path = triggers / f"{name}.{time.time_ns()}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"schedule": name}))
    os.replace(tmp, path)
    return path
