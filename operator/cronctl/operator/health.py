"""The operator's health as its probe says it: verdicts on the times the loop and the watches record.

kopf serves the probe (``cronctl operator --liveness URL``) and calls
``handlers``' probe handler; the handler reads the times (seconds of the
monotonic clock: the process's own time, never the schedules') and this
module says what they mean. Pure: every time is given.

- Alive: the scheduler's task runs and has passed (the loop records each
  pass and each wake from its sleep, of at most ``loop.MAX_IDLE_SECONDS``)
  within ``PASS_LATE_SECONDS``. Else the probe fails and Kubernetes restarts
  the process. A task that died ends the process at once (``handlers``); a
  loop that stopped passing is one stuck, which only a restart mends.
- Ready: every watch has listed its objects once (the cache holds them). Said
  in the probe's answer, not failed: kopf serves one endpoint, and a restart
  would not make a watch sync sooner (it lists again until the API server
  answers). The readiness endpoint (``/readyz``, served beside ``/metrics``:
  :func:`readiness`) answers 503 until then, so that a rollout waits for a new
  replica to have read the cluster. Whether this replica holds the Lease is
  said in both, and fails neither: a follower is healthy and ready, standing by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

# A pass may take tens of seconds (a batch of thousands against a slow API server, each write
# waiting up to 10 s for its answer): six of the loop's longest sleeps, so that only a stuck
# loop, not a busy one, is restarted.
PASS_LATE_SECONDS = 180.0

RUNNING, FAILED, ENDED = "running", "failed", "ended"  # the scheduler's task


@dataclass(frozen=True)
class SchedulerSeen:
    """The scheduler as the probe sees it: its task's state and its last pass (monotonic)."""

    task: str  # RUNNING, FAILED (an exception escaped it) or ENDED (it returned, or was cancelled)
    passed_at: float


@dataclass(frozen=True)
class WatchSeen:
    """A watch as the probe sees it (monotonic times; None: not yet)."""

    name: str  # "Jobs", "CronSchedules of team-a"
    listed_at: Optional[float]  # its last successful list
    heard_at: Optional[float]  # its last event or bookmark, or the last watch the API server began


def not_alive(scheduler: SchedulerSeen, now: float) -> Optional[str]:
    """Why the process is not alive (the probe fails); None: it is."""
    if scheduler.task == FAILED:
        return "the scheduler's task failed"
    if scheduler.task == ENDED:
        return "the scheduler's task ended"
    late = now - scheduler.passed_at
    if late > PASS_LATE_SECONDS:
        return f"the scheduler has not passed for {late:.0f} s (it passes every 30 s at least)"
    return None


def synced(watches: Sequence[WatchSeen]) -> bool:
    """Whether every watch has listed its objects once."""
    return all(watch.listed_at is not None for watch in watches)


def freshness(watch: WatchSeen, now: float) -> dict[str, Any]:
    """A watch's line in the probe's answer: whether it listed, and how long ago it last heard anything."""
    times = [at for at in (watch.listed_at, watch.heard_at) if at is not None]
    return {"synced": watch.listed_at is not None,
            "lastHeardSecondsAgo": round(now - max(times), 1) if times else None}


def report(scheduler: SchedulerSeen, watches: Sequence[WatchSeen], leading: bool, now: float) -> dict[str, Any]:
    """The probe's answer (kopf writes it as JSON): the scheduler's last pass, each watch's
    freshness, whether the watches synced and whether this replica leads."""
    return {"scheduler": {"task": scheduler.task, "lastPassSecondsAgo": round(now - scheduler.passed_at, 1)},
            "watches": {watch.name: freshness(watch, now) for watch in watches},
            "ready": synced(watches), "leading": leading}


def readiness(watches: Sequence[WatchSeen], leading: bool) -> tuple[bool, dict[str, Any]]:
    """(ready, the readiness endpoint's answer): ready once every watch has listed its objects;
    the answer says whether this replica leads and which watches it still waits for."""
    waiting = [watch.name for watch in watches if watch.listed_at is None]
    return not waiting, {"ready": not waiting, "synced": not waiting, "leading": leading, "waitingFor": waiting}
