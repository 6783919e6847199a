"""Controller state as plain data, with an exact JSON round trip.

``ControllerState`` is everything the in-memory controller knows: the clock,
the jobs in creation order (spec plus the state their decisions change) and
the runs that still exist. Derived indexes (who is due when, which run
expires when) are not stored; drivers rebuild them from this data.
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .dst import DaylightSaving
from .retention import SUCCEEDED_CLASS, Finished, keep_newest, retention_class
from .spec import JobSpec, Options, Policy
from .times import format_time, parse_stored_time
from .window import Window
from .zones import parse_zone

STATE_VERSION = 1

RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"
TIMED_OUT = "timed_out"
RETRY_PENDING = "retry_pending"  # an attempt failed and the next one waits for its time
OUTCOMES = (SUCCEEDED, FAILED)


@dataclass
class Run:
    id: str
    job: str
    number: int
    state: str
    scheduled_for: int
    launched_at: int
    finished_at: int | None = None
    attempt: int = 1  # the running (or last) attempt; numbers are never reused

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "job": self.job, "number": self.number, "state": self.state,
                "attempt": self.attempt, "scheduled_for": format_time(self.scheduled_for),
                "launched_at": format_time(self.launched_at),
                "finished_at": _time_or_none(self.finished_at)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Run:
        return cls(id=data["id"], job=data["job"], number=data["number"], state=data["state"],
                   scheduled_for=parse_stored_time(data["scheduled_for"]),
                   launched_at=parse_stored_time(data["launched_at"]),
                   finished_at=_parse_or_none(data["finished_at"]), attempt=data.get("attempt", 1))


class PendingRetry(NamedTuple):
    """A run whose attempt failed, waiting until ``due`` for attempt number ``attempt``."""

    due: int
    number: int
    run_id: str
    attempt: int


class Queued(NamedTuple):
    """A firing waiting for the active run to end (wait-for-last)."""

    nominal: int
    reason: str  # scheduled or catch-up: only a scheduled one is ever coalesced


@dataclass(frozen=True)
class Backfill:
    """A backfill under way (``core/backfill.py``): what was asked, what is next, how far it got."""

    request: str  # what asked for it, answered once
    start: int  # the range, UTC minutes, both ends included
    end: int
    total: int  # the schedule times in the range when it was asked
    next: int | None  # the next time to launch; None once every one has been launched
    launched: int = 0
    running: str | None = None  # the run key of its run in progress, if any

    @property
    def done(self) -> bool:
        return self.next is None

    def to_json(self) -> dict[str, Any]:
        return {"request": self.request, "start": format_time(self.start), "end": format_time(self.end),
                "total": self.total, "next": _time_or_none(self.next), "launched": self.launched,
                "running": self.running}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Backfill:
        return cls(data["request"], parse_stored_time(data["start"]), parse_stored_time(data["end"]),
                   data["total"], _parse_or_none(data["next"]), data["launched"], data["running"])


@dataclass
class JobState:
    """What a job's decisions change. ``active`` holds the ids of runs not finished
    (running or waiting for a retry), oldest launch first."""

    last_schedule: int | None = None
    launched: int = 0
    active: list[str] = field(default_factory=list)
    kept_succeeded: list[Finished] = field(default_factory=list)
    kept_failed: list[Finished] = field(default_factory=list)
    skipped: int = 0  # schedule times skipped (forbid), each counted once however often it was skipped
    last_skipped: int | None = None  # the newest of them
    overflowed: int = 0  # overflows, each counted once when the job went into it
    overflowing: bool = False  # its last tick was an overflow
    # Missed times at or before this minute are not missed (a suspension ran
    # through it): the window of missed times starts after it.
    not_before: int | None = None
    pending_retries: list[PendingRetry] = field(default_factory=list)  # by due time
    queue: list[Queued] = field(default_factory=list)  # oldest first
    backfill: Backfill | None = None  # the last backfill asked for, under way or done
    scheduled_runs: int = 0  # runs launched for schedule times (not by hand, not backfills): maxRuns counts them
    last_success: int | None = None  # when the newest succeeded run ended
    last_failure: int | None = None  # when the newest failed or timed-out run ended
    consecutive_failures: int = 0  # runs that failed or timed out in a row, newest last (failures.py)

    def fail_attempt(self, run_id: str, number: int, attempt: int, at: int, retries: int,
                     delay: int) -> PendingRetry | None:
        """A failed attempt: the run waits for its next attempt if it has one left (None if not)."""
        if attempt > retries:
            return None
        pending = PendingRetry(at + delay, number, run_id, attempt + 1)
        insort(self.pending_retries, pending)
        return pending

    def forget_retry(self, run_id: str) -> None:
        self.pending_retries = [p for p in self.pending_retries if p.run_id != run_id]

    def record_finish(self, run_id: str, number: int, outcome: str, at: int,
                      keep_succeeded: int, keep_failed: int) -> list[Finished]:
        """A run left ``active`` with this outcome; returns the finished runs retention drops."""
        self.active.remove(run_id)
        if self.pending_retries:
            self.forget_retry(run_id)
        if outcome == SUCCEEDED:
            self.consecutive_failures = 0
            self.last_success = at if self.last_success is None else max(at, self.last_success)
        elif outcome in (FAILED, TIMED_OUT):
            self.consecutive_failures += 1
            self.last_failure = at if self.last_failure is None else max(at, self.last_failure)
        if retention_class(outcome) == SUCCEEDED_CLASS:
            return keep_newest(self.kept_succeeded, Finished(at, number, run_id), keep_succeeded)
        return keep_newest(self.kept_failed, Finished(at, number, run_id), keep_failed)

    def to_json(self) -> dict[str, Any]:
        return {"last_schedule": _time_or_none(self.last_schedule), "launched": self.launched,
                "not_before": _time_or_none(self.not_before),
                "pending_retries": [[format_time(p.due), p.number, p.run_id, p.attempt]
                                    for p in self.pending_retries],
                "queue": [[format_time(q.nominal), q.reason] for q in self.queue],
                "active": list(self.active),
                "kept_succeeded": [_finished_json(run) for run in self.kept_succeeded],
                "kept_failed": [_finished_json(run) for run in self.kept_failed],
                "skipped": self.skipped, "last_skipped": _time_or_none(self.last_skipped),
                "overflowed": self.overflowed, "overflowing": self.overflowing,
                **({} if self.backfill is None else {"backfill": self.backfill.to_json()}),
                **({"scheduled_runs": self.scheduled_runs} if self.scheduled_runs else {}),
                **({"failures": [_time_or_none(self.last_success), _time_or_none(self.last_failure),
                                 self.consecutive_failures]}
                   if self.last_success is not None or self.last_failure is not None else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JobState:
        return cls(last_schedule=_parse_or_none(data["last_schedule"]), launched=data["launched"],
                   active=list(data["active"]),
                   kept_succeeded=[_finished(item) for item in data["kept_succeeded"]],
                   kept_failed=[_finished(item) for item in data["kept_failed"]],
                   skipped=data["skipped"], overflowed=data["overflowed"],
                   last_skipped=_parse_or_none(data.get("last_skipped")),
                   overflowing=data.get("overflowing", False),
                   not_before=_parse_or_none(data.get("not_before")),
                   pending_retries=[PendingRetry(parse_stored_time(due), number, run_id, attempt)
                                    for due, number, run_id, attempt in data.get("pending_retries", [])],
                   queue=[Queued(parse_stored_time(nominal), reason) for nominal, reason in data.get("queue", [])],
                   backfill=Backfill.from_json(data["backfill"]) if data.get("backfill") else None,
                   scheduled_runs=data.get("scheduled_runs", 0),
                   **_failures(data.get("failures")))


@dataclass
class Job:
    spec: JobSpec
    state: JobState = field(default_factory=JobState)

    def to_json(self) -> dict[str, Any]:
        spec = self.spec
        return {"name": spec.name, "expression": spec.expression, "policy": spec.policy.value,
                "options": spec.options.to_json(), "created_at": format_time(spec.created_at),
                "index": spec.index, "state": self.state.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Job:
        options = dict(data["options"])
        options["tz"] = parse_zone(options["tz"])
        for key in ("more_schedules", "exclude"):
            if key in options:
                options[key] = tuple(options[key])
        if "daylight_saving" in options:
            options["daylight_saving"] = DaylightSaving(options["daylight_saving"])
        if "window" in options:
            options["window"] = Window(*options["window"])
        spec = JobSpec(name=data["name"], expression=data["expression"], policy=Policy(data["policy"]),
                       options=Options(**options), created_at=parse_stored_time(data["created_at"]),
                       index=data["index"])
        return cls(spec=spec, state=JobState.from_json(data["state"]))


@dataclass
class ControllerState:
    clock: int | None = None
    jobs: dict[str, Job] = field(default_factory=dict)  # creation order
    runs: dict[str, Run] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "clock": _time_or_none(self.clock),
                "jobs": [job.to_json() for job in self.jobs.values()],
                "runs": [run.to_json() for run in self.runs.values()]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ControllerState:
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"state version {data.get('version')!r} is not {STATE_VERSION}")
        jobs = (Job.from_json(item) for item in data["jobs"])
        runs = (Run.from_json(item) for item in data["runs"])
        return cls(clock=_parse_or_none(data["clock"]),
                   jobs={job.spec.name: job for job in jobs},
                   runs={run.id: run for run in runs})


def _time_or_none(minute: int | None) -> str | None:
    return None if minute is None else format_time(minute)


def _parse_or_none(text: str | None) -> int | None:
    return None if text is None else parse_stored_time(text)


def _failures(saved: list[Any] | None) -> dict[str, Any]:
    if not saved:
        return {}
    return {"last_success": _parse_or_none(saved[0]), "last_failure": _parse_or_none(saved[1]),
            "consecutive_failures": saved[2]}


def _finished_json(run: Finished) -> list[Any]:
    return [format_time(run.finished_at), run.number, run.run_id]


def _finished(item: list[Any]) -> Finished:
    return Finished(parse_stored_time(item[0]), item[1], item[2])
