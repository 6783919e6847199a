"""What the runner's book keeps beside the core's state, written by the engine and read by the views.

A ``Firing`` is a launch the core decided, kept until its run is over; an
``Overflowed`` is an overflow the runner carried out (more missed schedule
times than ``missedSchedulesLimit``), kept for ``cronctl status`` until the
schedule fires on time again.

:func:`read_book` reads a book back item by item: a job, a run, a firing, a
history row or any other entry that does not have the shape the runner wrote
(a field mistyped by hand, say) is left out with a line that names it, and
the rest is read as usual; references to what was left out (a job's active
run, a kept run) are dropped with it, so the core's state is whole. Only a
controller state that is unreadable as a whole raises :class:`Unreadable`
(the engine then moves the book aside, as a book that does not parse).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jsonschema

from ..core.dst import DaylightSaving
from ..core.errors import CronctlError
from ..core.spec import Policy
from ..core.state import (FAILED, RETRY_PENDING, RUNNING, STATE_VERSION, SUCCEEDED, TIMED_OUT, ControllerState,
                          Job, JobState, Run)
from ..core.tick import MAX_COUNTED_DROPPED, Decision, Enqueue, Launch, Overflow, Skip
from ..core.times import format_time, parse_stored_time
from ..core.zones import UTC, AnyZone
from .values import RunKey

TRIGGERS_DIR = "triggers"  # manual firings asked for by ``cronctl trigger``: one file each
SWITCH_OFF_FILE = "cronctl.disabled"  # the node switch: while it exists nothing fires
MANUAL_DIR = "manual"  # the runs of manual firings: one executor folder per trigger (see engine)
BACKFILL_DIR = "backfill"  # the runs of backfills: one executor folder per request (see backfills)


@dataclass
class Firing:
    """A launch the core decided: waiting for a worker slot, running in one, or
    waiting for its next attempt (``retry_due`` set) after a failed one."""

    run_id: str
    schedule: str
    nominal: int
    reason: str
    command: list[str]
    args: list[str]
    env: dict[str, str]
    slot: str | None = None
    stopping: str | None = None  # why we asked its process to stop (timed_out, stopped)
    start_at: float = 0.0  # seconds since 1970: not before its nominal time plus its jitter
    attempt: int = 1  # the attempt it runs, or runs once it has a slot
    # An attempt failed: the minute the core retries it; no slot meanwhile. Not only a copy of the
    # core's pending retry: once the core drops that (timeout, replace) it still says this attempt ran.
    retry_due: int | None = None
    actual: str | None = None  # when its first attempt started (history's actual time)
    manual: str | None = None  # a manual firing: the id of the trigger that asked for it
    note: str | None = None  # why the runner ended it, for history (its schedule was retired, ...)
    backfill: str | None = None  # a backfill's run: the id of the request that asked for it
    cwd: str | None = None  # where its command runs (the container's workingDir); None: the runner's folder
    active_deadline_seconds: int | None = None  # the Job's activeDeadlineSeconds: its attempts stop then
    backoff_limit: int = 0  # the Job's backoffLimit: failed tries the wrapper runs again within an attempt

    @property
    def key(self) -> RunKey:
        return RunKey(self.schedule, self.nominal, self.attempt)

    @property
    def home(self) -> str | None:
        """The executor folder of its runs, under the runner's folder (see :func:`home_of`)."""
        return home_of(self.manual, self.backfill)

    @property
    def startable(self) -> bool:
        """Waiting for a slot: not running, and not waiting for the core to retry it."""
        return self.slot is None and self.retry_due is None

    @property
    def attempts_made(self) -> int:
        """The attempts that started: the current one only once it had a slot."""
        return self.attempt - 1 if self.startable else self.attempt

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Overflowed:
    """An overflow and what its tick did instead of launching every missed time."""

    at: int  # the minute the overflow was decided at
    limit: int
    dropped: int = 0  # catchUp All: the older missed times given up
    launched: list[list[Any]] = field(default_factory=list)  # [nominal, reason] of each launch
    queued: list[int] = field(default_factory=list)  # WaitForLast: times left waiting for the active run
    skipped: int | None = None  # Forbid: the time held back, a run being active (it waits for that run)

    @classmethod
    def of(cls, at: int, overflow: Overflow, decisions: list[Decision]) -> Overflowed:
        """The overflow of a tick of one schedule, with the tick's other decisions."""
        launched = [[d.scheduled_for, d.reason] for d in decisions if isinstance(d, Launch)]
        queued = [d.scheduled_for for d in decisions if isinstance(d, Enqueue)
                  and [d.scheduled_for, d.reason] not in launched]
        skipped = next((d.scheduled_for for d in decisions if isinstance(d, Skip)), None)
        return cls(at, overflow.limit, overflow.dropped, launched, queued, skipped)

    def describe(self, zone: AnyZone) -> str:
        """E.g. ``overflow at 2024-03-01 03:01 UTC: more than 100 missed; launched ... (scheduled)``."""
        def show(minute: int) -> str:
            return both_times(minute, zone)

        if self.dropped:
            at_least = "at least " if self.dropped >= MAX_COUNTED_DROPPED else ""
            missed = f"{at_least}{self.limit + self.dropped} missed, more than {self.limit}"
        else:
            missed = f"more than {self.limit} missed"
        parts = [f"overflow at {show(self.at)}: {missed}"]
        if self.launched:
            parts.append("launched " + ", ".join(f"{show(nominal)} ({reason})" for nominal, reason in self.launched))
        if self.queued:
            parts.append("queued " + ", ".join(show(nominal) for nominal in self.queued))
        if self.skipped is not None:
            parts.append(f"{show(self.skipped)} waits for the active run (Forbid)")
        if not (self.launched or self.queued or self.skipped is not None):
            parts.append("launched nothing")
        if self.dropped:
            parts.append(f"dropped the {self.dropped} older ones")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def skipped_count(state: JobState, record: dict[str, Any] | None) -> int:
    """The times the schedule skipped for good: those the core held back, less the ones that
    started after all and the one still waiting."""
    if record is None:  # a book written before waits were kept: the core's count
        return state.skipped
    waiting = record.get("nominal") is not None
    return max(0, state.skipped - int(record.get("ran", 0)) - waiting)


def home_of(manual: str | None, backfill: str | None) -> str | None:
    """Where a firing's runs live: None for the scheduled runs' executor (the runner's folder
    itself), ``manual/<trigger id>`` for a manual firing's, ``backfill/<request id>`` for a
    backfill's, so that none of them shares a key with a run of the same minute."""
    if manual is not None:
        return f"{MANUAL_DIR}/{manual}"
    if backfill is not None:
        return f"{BACKFILL_DIR}/{backfill}"
    return None


def origin_of(home: str | None) -> tuple[str | None, str | None]:
    """The Firing fields ``manual`` and ``backfill`` of runs that live in ``home``."""
    if home is None:
        return None, None
    kind, _, name = home.partition("/")
    return (name, None) if kind == MANUAL_DIR else (None, name)


def both_times(minute: int | None, zone: AnyZone) -> str:
    """A time in UTC and in the schedule's zone; a named zone's wall clock with its offset, so that
    the two times of a repeated daylight-saving hour read apart (01:30 -04:00, then 01:30 -05:00)."""
    if minute is None:
        return "-"
    utc = format_time(minute).replace("T", " ")
    offset = zone.utc_offset(minute)
    if zone == UTC:
        return utc + " UTC"
    local = format_time(minute + offset).replace("T", " ")
    if zone.name.startswith(("+", "-")):  # a fixed offset: its name is the offset
        return f"{utc} UTC ({local} {zone.name})"
    sign, size = ("-" if offset < 0 else "+"), abs(offset)
    return f"{utc} UTC ({local} {sign}{size // 60:02d}:{size % 60:02d} {zone.name})"


# -- reading a book back ------------------------------------------------------------------

class Unreadable(ValueError):
    """The controller's state in a book cannot be read at all."""


@dataclass
class BookContents:
    state: ControllerState = field(default_factory=ControllerState)
    firings: dict[str, Firing] = field(default_factory=dict)
    journal: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)
    overflows: dict[str, dict[str, Any]] = field(default_factory=dict)
    waits: dict[str, dict[str, Any]] = field(default_factory=dict)  # Forbid times waiting (forbid_waits)
    invalid: list[dict[str, Any]] = field(default_factory=list)
    retired: list[dict[str, Any]] = field(default_factory=list)
    suspended: list[dict[str, Any]] = field(default_factory=list)  # manifests saying spec.suspend: true
    sources: dict[str, str] = field(default_factory=dict)  # schedule -> the name of its manifest file


def read_book(data: dict[str, Any]) -> tuple[BookContents, list[str]]:
    """The book's contents, and a line for each item left out. Raises Unreadable."""
    problems: list[str] = []
    if "controller" not in data:  # every book a runner writes has it: this one was written otherwise
        raise Unreadable("it has no controller state: not a book a runner wrote")
    contents = BookContents(state=_read_state(data.get("controller"), problems))

    def items(key: str, kind: str, default: Any) -> Any:
        value = data.get(key, default)
        if type(value) is not type(default):
            problems.append(f"{key}: not a {kind}, left out")
            return default
        return value

    for index, item in enumerate(items("firings", "list", [])):
        if _fits(FIRING, item, f"firings[{index}]", problems):
            contents.firings[item["run_id"]] = Firing(**item)
    for name, entries in items("journal", "mapping", {}).items():
        if not isinstance(entries, list):
            problems.append(f"journal.{name}: not a list, left out")
            continue
        contents.journal[name] = [entry for i, entry in enumerate(entries)
                                  if _fits(ENTRY, entry, f"journal.{name}[{i}]", problems)]
    contents.snapshots = {key: value for key, value in items("snapshots", "mapping", {}).items()
                          if _fits(COMMAND, value, f"snapshots.{key}", problems)}
    contents.overflows = {key: value for key, value in items("overflows", "mapping", {}).items()
                          if _fits(OVERFLOW, value, f"overflows.{key}", problems)}
    contents.waits = {key: value for key, value in items("waits", "mapping", {}).items()
                      if _fits(WAIT, value, f"waits.{key}", problems)}
    manifests = items("manifests", "mapping", {})
    for key, shape in (("invalid", INVALID), ("retired", RETIRED), ("suspended", SUSPENDED)):
        value = manifests.get(key, [])
        if not isinstance(value, list):
            problems.append(f"manifests.{key}: not a list, left out")
            continue
        setattr(contents, key, [item for i, item in enumerate(value)
                                if _fits(shape, item, f"manifests.{key}[{i}]", problems)])
    contents.sources = {name: file for name, file in items("sources", "mapping", {}).items()
                        if _fits(STRING, file, f"sources.{name}", problems)}
    return contents, problems


def _read_state(data: Any, problems: list[str]) -> ControllerState:
    if data is None:
        return ControllerState()
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION \
            or not isinstance(data.get("jobs"), list) or not isinstance(data.get("runs"), list):
        raise Unreadable(f"controller: not a controller state of version {STATE_VERSION}")
    try:
        clock = None if data.get("clock") is None else parse_stored_time(data["clock"])
    except (TypeError, ValueError, CronctlError) as error:
        raise Unreadable(f"controller.clock: {data.get('clock')!r} is not a time ({error})") from None
    state = ControllerState(clock=clock)
    _read_jobs(data["jobs"], state, problems)
    _read_runs(data["runs"], state, problems)
    for job in state.jobs.values():  # what refers to a run left out goes with it
        js, runs = job.state, state.runs
        js.active = [run_id for run_id in js.active if run_id in runs]
        js.pending_retries = [p for p in js.pending_retries if p.run_id in runs]
        js.kept_succeeded = [f for f in js.kept_succeeded if f.run_id in runs]
        js.kept_failed = [f for f in js.kept_failed if f.run_id in runs]
    return state


def _read_jobs(items: list[Any], state: ControllerState, problems: list[str]) -> None:
    """The stored jobs into ``state``: each one whose spec still compiles, once by name; what is
    left out is said in ``problems``."""
    for index, item in enumerate(items):
        where = f"controller.jobs[{index}]"
        if not _fits(JOB, item, where, problems):
            continue
        try:
            job = Job.from_json(item)
            job.spec.timeline()
        except (TypeError, ValueError, KeyError, CronctlError) as error:
            problems.append(f"{where} ({item.get('name')}): {error}; left out")
            continue
        if job.spec.name in state.jobs:
            problems.append(f"{where}: a second job named {job.spec.name!r}; left out")
            continue
        state.jobs[job.spec.name] = job


def _read_runs(items: list[Any], state: ControllerState, problems: list[str]) -> None:
    """The stored runs of the jobs read into ``state``; what is left out is said in ``problems``."""
    for index, item in enumerate(items):
        where = f"controller.runs[{index}]"
        if not _fits(RUN, item, where, problems):
            continue
        try:
            run = Run.from_json(item)
        except (TypeError, ValueError, KeyError, CronctlError) as error:
            problems.append(f"{where} ({item.get('id')}): {error}; left out")
            continue
        if run.job in state.jobs:
            state.runs[run.id] = run


def _fits(schema: dict[str, Any], item: Any, where: str, problems: list[str]) -> bool:
    error = jsonschema.exceptions.best_match(_VALIDATORS[id(schema)].iter_errors(item))
    if error is None:
        return True
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
    problems.append(f"{where}{path}: {error.message}; left out")
    return False


STRING: dict[str, Any] = {"type": "string"}
_INT: dict[str, Any] = {"type": "integer"}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}
_TIME: dict[str, Any] = {"type": "string"}  # a stored minute, e.g. 2024-03-01T02:00 (parsed after)
_MAYBE_TIME: dict[str, Any] = {"type": ["string", "null"]}
_MAYBE_INT: dict[str, Any] = {"type": ["integer", "null"]}
_MAYBE_STRING: dict[str, Any] = {"type": ["string", "null"]}
_STRINGS: dict[str, Any] = {"type": "array", "items": STRING}


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None,
            closed: bool = True) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "required": list(required),
                              "properties": {**required, **(optional or {})}}
    if closed:
        schema["additionalProperties"] = False
    return schema


_OPTIONS = _object({"starting_deadline": _MAYBE_INT, "timeout": _MAYBE_INT, "keep_succeeded": _COUNT,
                    "keep_failed": _COUNT, "tz": STRING},
                   {"retries": _COUNT, "retry_delay": _COUNT, "catch_up": STRING, "jitter": _COUNT,
                    "missed_limit": _COUNT, "past_limit": STRING, "more_schedules": _STRINGS, "exclude": _STRINGS,
                    "daylight_saving": {"enum": [rule.value for rule in DaylightSaving]},
                    "window": {"type": "array", "prefixItems": [_MAYBE_INT, _MAYBE_INT], "minItems": 2,
                               "maxItems": 2},
                    "max_runs": _MAYBE_INT, "pause_on_failures": _MAYBE_INT})
_FINISHED = {"type": "array", "prefixItems": [_TIME, _INT, STRING], "minItems": 3, "maxItems": 3}
_JOB_STATE = _object(
    {"last_schedule": _MAYBE_TIME, "launched": _COUNT, "active": _STRINGS,
     "kept_succeeded": {"type": "array", "items": _FINISHED}, "kept_failed": {"type": "array", "items": _FINISHED},
     "skipped": _COUNT, "overflowed": _COUNT},
    {"not_before": _MAYBE_TIME, "last_skipped": _MAYBE_TIME, "overflowing": {"type": "boolean"},
     "scheduled_runs": _COUNT,
     "failures": {"type": "array", "prefixItems": [_MAYBE_TIME, _MAYBE_TIME, _COUNT], "minItems": 3,
                  "maxItems": 3},
     "pending_retries": {"type": "array", "items": {"type": "array", "prefixItems": [_TIME, _INT, STRING, _INT],
                                                    "minItems": 4, "maxItems": 4}},
     "queue": {"type": "array", "items": {"type": "array", "prefixItems": [_TIME, STRING],
                                          "minItems": 2, "maxItems": 2}},
     "backfill": _object({"request": STRING, "start": _TIME, "end": _TIME, "total": _COUNT, "next": _MAYBE_TIME,
                          "launched": _COUNT, "running": _MAYBE_STRING})})
JOB = _object({"name": STRING, "expression": STRING, "policy": {"enum": [p.value for p in Policy]},
               "options": _OPTIONS, "created_at": _TIME, "index": _INT, "state": _JOB_STATE})
RUN = _object({"id": STRING, "job": STRING, "number": _INT,
               "state": {"enum": [RUNNING, SUCCEEDED, FAILED, TIMED_OUT, RETRY_PENDING]},
               "scheduled_for": _TIME, "launched_at": _TIME, "finished_at": _MAYBE_TIME},
              {"attempt": {"type": "integer", "minimum": 1}})
COMMAND = _object({"command": {**_STRINGS, "minItems": 1}, "args": _STRINGS,
                   "env": {"type": "object", "additionalProperties": STRING}},
                  {"cwd": _MAYBE_STRING, "active_deadline_seconds": _MAYBE_INT, "backoff_limit": _COUNT})
FIRING = _object({"run_id": STRING, "schedule": STRING, "nominal": _INT, "reason": STRING,
                  **{key: COMMAND["properties"][key] for key in COMMAND["required"]}},
                 {"cwd": _MAYBE_STRING, "active_deadline_seconds": _MAYBE_INT, "backoff_limit": _COUNT,
                  "slot": _MAYBE_STRING, "stopping": _MAYBE_STRING, "start_at": {"type": "number"},
                  "attempt": {"type": "integer", "minimum": 1}, "retry_due": _MAYBE_INT, "actual": _MAYBE_STRING,
                  "manual": _MAYBE_STRING, "note": _MAYBE_STRING, "backfill": _MAYBE_STRING})
ENTRY = _object({"run": _MAYBE_STRING, "reason": STRING, "nominal": _INT, "actual": _MAYBE_STRING,
                 "attempts": _COUNT, "outcome": STRING, "finished": _INT}, closed=False)
OVERFLOW = _object({"at": _INT, "limit": _INT},
                   {"dropped": _COUNT, "launched": {"type": "array", "items": {
                       "type": "array", "prefixItems": [_INT, STRING], "minItems": 2, "maxItems": 2}},
                    "queued": {"type": "array", "items": _INT}, "skipped": _MAYBE_INT})
WAIT = _object({"nominal": _MAYBE_INT, "behind": _MAYBE_STRING, "ran": _COUNT})
INVALID = _object({"file": STRING, "schedule": _MAYBE_STRING, "message": STRING})
RETIRED = _object({"schedule": STRING, "at": _INT}, closed=False)
SUSPENDED = _object({"schedule": STRING}, {"since": _MAYBE_INT, "reason": _MAYBE_STRING}, closed=False)

# JSON's integers, not Python's: neither True nor 2.0 is one (jsonschema would take both).
_Checker = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda checker, value: isinstance(value, int) and not isinstance(value, bool)))
_VALIDATORS = {id(schema): _Checker(schema) for schema in
               (STRING, JOB, RUN, COMMAND, FIRING, ENTRY, OVERFLOW, WAIT, INVALID, RETIRED, SUSPENDED)}
