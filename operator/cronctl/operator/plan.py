"""One reconcile of one CronSchedule, as data: the effects to carry out, in their order.

``plan`` is pure: the CronSchedule, its owned Jobs and the minute in, a
``Plan`` out. It rebuilds the core's state (``observe``), ends the runs whose
Jobs ended or whose timeout passed, asks ``core.tick.decide`` what to do and
has ``core.transitions`` apply the decisions to the state; then it adds the
effects of each applied decision: a Job to create or delete, an Event when
the decision is news. It decides and counts nothing itself. The order of the
effects is part of the plan (``ordered``): a crash after any prefix of them
leaves a world that the next reconcile finishes exactly as the whole plan
would have. ``apply`` carries them out, in that order, and does nothing else.

Staged launches (``staging``, on by default): the core names the next
schedule time to prepare (``core.staging.to_stage``) and the fate of each
prepared one (``staged_fate``); the plan creates the Job of that time
during the minute before, suspended (``StageJob``), and at its second
releases it (``ReleaseJob``: one small write) in place of a create. The
releases lead the effects, and the loop carries them out for every due
schedule before any other write of that second (``Plan.split``).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence, Union

import orjson

from ..core import backfill as backfills
from ..core.backfill import BackfillError
from ..core.endings import RunSeen, end_runs
from ..core.schedule import Timeline
from ..core.zones import local_rfc3339
from ..core.staging import DEADLINE, DELETE, RELEASE, SUPERSEDED, Fate, next_staging, staged_fate, to_stage
from ..core.state import FAILED, RETRY_PENDING, RUNNING, SUCCEEDED, TIMED_OUT, Backfill
from ..core.tick import (MAX_COUNTED_DROPPED, Coalesce, Decision, Enqueue, Launch, Overflow, Replace, Retry, Skip,
                         decide, manual_launch, start_time)
from ..core.transitions import BACKFILL, MANUAL, Applied, apply, apply_tick, hold
from ..manifest import ScheduleSpec, SpecError, read_spec
from .manifests import EventSpec, OverflowNote, condition, job_manifest, job_name, release_patch, staged_digest
from .observe import Observed, RunView, observe, staged_of_job
from .shard import shard_of
from .resource import BACKFILL_ANNOTATION, STATUS_VERSION, TRIGGER_ANNOTATION, parse_rfc3339, rfc3339, rfc3339_seconds

MISSED_SCHEDULES = "MissedSchedules"  # the condition an overflow sets

# -- effects -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateJob:
    manifest: dict[str, Any]  # AlreadyExists and ours: adopted


@dataclass(frozen=True)
class ResumeJob:
    name: str  # a Job held (suspended) for its jitter, whose second has come


@dataclass(frozen=True)
class StageJob:
    manifest: dict[str, Any]  # a staged Job: suspended, no run yet; AlreadyExists and ours: adopted


@dataclass(frozen=True)
class ReleaseJob:
    """The one write that makes a staged Job its run (``manifests.release_patch``)."""

    name: str  # NotFound: the staged Job is gone, and the plan stops there (the next one creates it)
    patch: dict[str, Any]
    due: int  # the second the run was due to start (nominal, or nominal + jitter): its delay counts from it


@dataclass(frozen=True)
class LabelJob:
    """A Job of the schedule made under another shard, relabelled to the schedule's (``shard``)."""

    name: str  # NotFound: nothing to do
    shard: str | None  # None: remove the label (the default shard)


@dataclass(frozen=True)
class PatchStatus:
    status: dict[str, Any]  # the whole new status


REPLACED, DROPPED, LEFT_OVER, UNSTAGED = "replaced", "dropped", "left-over", "unstaged"


@dataclass(frozen=True)
class DeleteJob:
    name: str  # NotFound: already done
    # REPLACED (Replace), DROPPED (retention), LEFT_OVER (by a crash after the status write) or
    # UNSTAGED (a staged Job that must not run: the core's staged_fate)
    why: str


@dataclass(frozen=True)
class PostEvent:
    event: EventSpec


Effect = Union[ReleaseJob, ResumeJob, LabelJob, CreateJob, StageJob, PatchStatus, DeleteJob, PostEvent]
# The writes that start runs at their second, when they lead a plan: the loop's first pass. A
# launch's create is one of them (with staging off, or a firing that could not be staged), so
# its status and Event follow once every launch of the second is out, as a release's do.
URGENT = (ReleaseJob, ResumeJob, CreateJob)


@dataclass
class Plan:
    effects: list[Effect] = field(default_factory=list)  # carried out in this order (see ``ordered``)
    wake_at: int | None = None  # the minute to look again (besides watch events)
    release_at: int | None = None  # the second the next held Job may start
    lost: list[str] = field(default_factory=list)  # runs active in status whose Job is not among the Jobs

    @property
    def create(self) -> list[dict[str, Any]]:
        return [e.manifest for e in self.effects if isinstance(e, CreateJob)]

    @property
    def release(self) -> list[str]:
        """The held Jobs resumed (jitter) and the staged Jobs released."""
        return [e.name for e in self.effects if isinstance(e, (ReleaseJob, ResumeJob))]

    @property
    def releases(self) -> list[ReleaseJob]:
        return [e for e in self.effects if isinstance(e, ReleaseJob)]

    @property
    def stage(self) -> list[dict[str, Any]]:
        return [e.manifest for e in self.effects if isinstance(e, StageJob)]

    def split(self) -> tuple[Plan, Plan]:
        """(the leading writes that start runs, the rest): the loop carries out the first part
        of every schedule due at a second before the rest of any (``ordered`` puts them first)."""
        count = 0
        while count < len(self.effects) and isinstance(self.effects[count], URGENT):
            count += 1
        return Plan(effects=self.effects[:count]), replace(self, effects=self.effects[count:])

    @property
    def status(self) -> dict[str, Any] | None:
        """The new status, when it differs from the old."""
        return next((e.status for e in self.effects if isinstance(e, PatchStatus)), None)

    @property
    def events(self) -> list[EventSpec]:
        return [e.event for e in self.effects if isinstance(e, PostEvent)]

    def deletes(self, why: str | None = None) -> list[str]:
        """The Jobs deleted (for ``why`` only, if given)."""
        return [e.name for e in self.effects if isinstance(e, DeleteJob) and why in (None, e.why)]

    @property
    def wake_second(self) -> float | None:
        """When to look again, in seconds since 1970: the next decision or the next release."""
        candidates = [t for t in (None if self.wake_at is None else self.wake_at * 60, self.release_at)
                      if t is not None]
        return min(candidates) if candidates else None


@dataclass
class _Effects:
    """The effects of one reconcile, by kind, as the plan finds them."""

    releases: list[ReleaseJob] = field(default_factory=list)
    resumes: list[ResumeJob] = field(default_factory=list)
    labels: list[LabelJob] = field(default_factory=list)
    unstaged: list[DeleteJob] = field(default_factory=list)
    creates: list[CreateJob] = field(default_factory=list)
    deletes: list[DeleteJob] = field(default_factory=list)
    stages: list[StageJob] = field(default_factory=list)
    events: list[PostEvent] = field(default_factory=list)

    def event(self, kind: str, reason: str, message: str) -> None:
        self.events.append(PostEvent(EventSpec(kind, reason, message)))


def ordered(effects: _Effects, status: dict[str, Any] | None) -> list[Effect]:
    """The effects of one reconcile in the order that makes every crash point restart-safe.

    1. Release staged Jobs, then resume held ones: the writes that start runs
       at their second go first, so that the loop carries them out for every
       due schedule before anything else (``Plan.split``). A release records
       its launch as a create does (step 3): in one write it gives the staged
       Job its run number and what the launch decided besides it (the runs it
       replaces, the overflow it was launched past; a late launch's reason
       and minute). A crash after it leaves a launch the next reconcile
       adopts; before it, no launch at all. A resume changes no status, and
       is idempotent.
    1b. Relabel the Jobs another shard made (a schedule moved between
       shards): idempotent, and no status depends on it.
    2. Delete the staged Jobs that must not run. No status names them, so a
       crash on either side changes nothing; and a Job of the same name may be
       created in step 3 (a schedule edited at its very minute).
    3. Create Jobs. A Job records its launch where no crash can lose it:
       ``observe`` adopts a Job whose run the status does not know yet (its
       number and nominal time are on it), so a crash before the status write
       neither doubles a launch nor a retry's attempt. It also records what
       the same reconcile decided besides it: the runs it replaces
       (``cronctl.dev/replaces``), the overflow it was launched past, the
       trigger a manual run answers.
    4. Write the status, once: it records what the creates and releases made
       and forgets what the deletes will remove. (A jittered firing released
       from staging is recorded here first, at its minute, and released at its
       second: before this write no launch happened.)
    5. Delete Jobs. The status no longer names their runs and has counted
       them (their numbers are at most ``launched``), so a Job a crash left
       behind here is deleted by the next reconcile, never adopted; and the
       status never calls a run active whose Job is deleted, so a Job gone
       under an active run (JobGone, failed) always means someone else.
    6. Stage the next firing's Job: no status names it, and a crash before it
       leaves it to the next reconcile; it comes after every write of this
       minute's runs.
    7. Post Events: they report what the status recorded. A crash before the
       status write posts none (the next reconcile decides them again); after
       it, some may be lost, none is posted twice.

    Replace deletes the old Jobs in step 5, after the new Job exists (created,
    or released with their names), not first as CronJob does: deleted first, a
    crash before the status write left a run the status calls active with its
    Job gone, which a restart can only count as failed (JobGone), pushing a
    real failure out of a short history and deleting its Job. Created first,
    the new Job names the runs it replaces, so a restart at any point knows
    them replaced, and it costs no write more (marking the runs in the status
    before deleting them would cost one status write more per Replace). The
    old pods run one status write longer; with background propagation old and
    new pods overlap briefly in either order, as CronJob's do.
    """
    patch: list[Effect] = [] if status is None else [PatchStatus(status)]
    return [*effects.releases, *effects.resumes, *effects.labels, *effects.unstaged, *effects.creates, *patch, *effects.deletes,
            *effects.stages, *effects.events]


# -- the plan --------------------------------------------------------------------------------


def plan(schedule: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]], now: int,
         second: float | None = None, staging: bool = True) -> Plan:
    """``now`` is the minute the core decides at; ``second`` (seconds since 1970, within
    that minute; its start by default) is when a jittered or staged Job may start.
    ``staging``: create scheduled firings' Jobs ahead of their minute (off: as they launch,
    and staged Jobs left by a staging operator are deleted)."""
    second = now * 60 if second is None else second
    jobs = list(jobs)
    metadata = schedule["metadata"]
    status = schedule.get("status") or {}
    anchor = parse_rfc3339(status.get("anchorTime"))
    anchor = now if anchor is None else anchor
    try:
        spec, timeline, read = _read(schedule, anchor)
    except SpecError as error:
        return _refused(schedule, status, anchor, error, now, jobs)
    observed = observe(status, jobs, metadata["uid"])
    result, out = Plan(lost=list(observed.lost)), _Effects(labels=_relabels(schedule, jobs))
    _end_runs(spec, observed, now, out)
    _finish_replaced(observed, out)
    out.deletes.extend(DeleteJob(name, LEFT_OVER) for name in observed.leftovers)
    state = observed.state  # its not_before: the status's suspendedThrough
    if spec.suspend:
        hold(state, now)  # the core's rule: no time until now is missed
    suspended_through = state.not_before
    missed = _MissedCondition()
    decisions: tuple[Decision, ...] = ()
    if not spec.suspend:
        tick = decide(spec.job, state, timeline, now)
        decisions = _with_recorded_overflow(spec, observed, tick.decisions)
        applied = apply_tick(state, decisions, key=lambda launch: job_name(spec.job.name, launch.scheduled_for))
        fates = _staged_fates(schedule, spec, observed, timeline, now, decisions, staging, out)
        missed = _carry_out(schedule, spec, observed, applied, now, second, out, fates)
        staging_wake = next_staging(spec.job, timeline, now) if staging else None
        result.wake_at = _wake_at(spec, observed, _earliest(tick.wake_at, staging_wake), now)
    else:
        _staged_fates(schedule, spec, observed, timeline, now, decisions, staging, out)
    if staging:
        _stage(schedule, spec, observed, timeline, now, out)
    trigger = pending_trigger(schedule)
    if trigger is not None and trigger not in observed.answered:  # else its Job exists: the status write was lost
        _trigger(schedule, spec, observed, trigger, now, second, out)
    backfill = _backfill(schedule, spec, observed, now, second, out)
    result.release_at = _release_held(observed, second, out)
    new_status = _status(schedule, spec, observed, timeline, read, anchor, now, suspended_through, missed)
    new_status["lastTrigger"] = trigger if trigger is not None else status.get("lastTrigger")
    new_status["backfill"] = backfill
    _say_suspension(status, spec, out)
    result.effects = ordered(out, _changed(status, new_status))
    return result


def _say_suspension(status: Mapping[str, Any], spec: ScheduleSpec, out: _Effects) -> None:
    """An Event when the schedule is suspended, its reason changes, or it is resumed (not at
    first sight: a schedule created suspended has said nothing yet)."""
    if not status.get("conditions"):
        return
    was = any(c.get("type") == "Ready" and c.get("reason") == "Suspended" for c in status["conditions"])
    if spec.suspend and (not was or status.get("suspendReason") != spec.suspend_reason):
        out.event("Normal", "Suspended", "suspended" + (f": {spec.suspend_reason}" if spec.suspend_reason else
                                                        ": nothing fires until spec.suspend is false"))
    elif was and not spec.suspend:
        out.event("Normal", "Resumed", "resumed: the next fire times count from now (missed ones are not caught up)")


def pending_trigger(schedule: Mapping[str, Any]) -> str | None:
    """The value of the trigger annotation, if the status has not answered it yet."""
    annotations = schedule["metadata"].get("annotations") or {}
    value = annotations.get(TRIGGER_ANNOTATION)
    if value is None or value == (schedule.get("status") or {}).get("lastTrigger"):
        return None
    return str(value)


# -- backfill (core.backfill) ------------------------------------------------------------------

BACKFILL_RUNNING, BACKFILL_COMPLETE, BACKFILL_REFUSED = "Running", "Complete", "Refused"


def pending_backfill(schedule: Mapping[str, Any]) -> str | None:
    """The value of the backfill annotation, if the status has not answered it yet."""
    value = (schedule["metadata"].get("annotations") or {}).get(BACKFILL_ANNOTATION)
    known = ((schedule.get("status") or {}).get("backfill") or {}).get("request")
    return None if value is None or value == known else str(value)


def _backfill(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, now: int, second: float,
              out: _Effects) -> dict[str, Any] | None:
    """status.backfill: the annotation's backfill begun (or refused), its next runs launched
    one at a time while the schedule is not suspended, and how far it got."""
    known = (schedule.get("status") or {}).get("backfill") or None
    asked = pending_backfill(schedule)
    if asked is not None:
        try:
            start, end = parse_backfill_range(asked)
            current = backfills.begin(spec.job, asked, start, end, now)
        except BackfillError as error:
            out.event("Warning", "BackfillRefused", f"backfill {asked!r} refused: {error.message}")
            return {"request": asked, "state": BACKFILL_REFUSED, "message": error.message}
        out.event("Normal", "BackfillStarted", f"backfill of {current.total} schedule time"
                  f"{'' if current.total == 1 else 's'} from {rfc3339(start)} to {rfc3339(end)}, oldest first")
    elif known is not None and known.get("state") == BACKFILL_RUNNING:
        current = _backfill_of(known)
    else:
        return known
    if not spec.suspend:
        current = _backfill_launches(schedule, spec, observed, current, now, second, out)
    running = backfills.running_run(current, observed.state.active)
    finished = backfills.finished(current, observed.state.active)
    if finished:
        out.event("Normal", "BackfillComplete", f"backfill of {current.total} schedule time"
                  f"{'' if current.total == 1 else 's'} from {rfc3339(current.start)} to {rfc3339(current.end)} "
                  f"complete: {current.launched} run{'' if current.launched == 1 else 's'} launched")
    return {"request": current.request, "state": BACKFILL_COMPLETE if finished else BACKFILL_RUNNING,
            "from": rfc3339(current.start), "to": rfc3339(current.end), "total": current.total,
            "launched": current.launched, "nextScheduledTime": None if current.next is None else rfc3339(current.next),
            "running": running,
            "message": "suspended: the backfill waits" if spec.suspend and not finished else None}


def _backfill_launches(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, current: Backfill,
                       now: int, second: float, out: _Effects) -> Backfill:
    """The backfill's next run, if the policy lets it start; a run whose Job exists (a crash
    before the status write) is that launch, made already."""
    while (launch := backfills.next_launch(spec.job, observed.state, current)) is not None:
        name = job_name(spec.job.name, launch.scheduled_for, reason=BACKFILL)
        if name not in observed.runs:
            apply(observed.state, launch, run_key=name)
            _launch(schedule, spec, observed, launch, now, second, out)
        current = backfills.launched(current, spec.job, name)
    return current


def _backfill_of(entry: Mapping[str, Any]) -> Backfill:
    start, end = parse_rfc3339(entry.get("from")), parse_rfc3339(entry.get("to"))
    assert start is not None and end is not None  # written by _backfill
    running = entry.get("running")
    return Backfill(str(entry["request"]), start, end, int(entry.get("total", 0)),
                    parse_rfc3339(entry.get("nextScheduledTime")), int(entry.get("launched", 0)),
                    None if running is None else str(running))


def parse_backfill_range(text: str) -> tuple[int, int]:
    """``<from>/<to>``, each an RFC 3339 time or YYYY-MM-DDTHH:MM (UTC); BackfillError if not."""
    first, slash, last = text.partition("/")
    start, end = parse_rfc3339(first.strip()), parse_rfc3339(last.strip())
    if not slash or start is None or end is None:
        raise BackfillError(f"{text!r} is not a range <from>/<to> of UTC times, such as "
                            "2024-03-01T00:00:00Z/2024-03-07T23:59:00Z")
    return start, end


@dataclass
class _MissedCondition:
    """What this reconcile says of the MissedSchedules condition."""

    overflow: str | None = None  # the message of an overflow the job went into
    on_time: bool = False  # a firing launched for its own minute, past no overflow


def _with_recorded_overflow(spec: ScheduleSpec, observed: Observed,
                            decisions: Sequence[Decision]) -> tuple[Decision, ...]:
    """The tick's decisions, after the overflow that adopted Jobs were launched past.

    Those Jobs were created by a reconcile whose status write was lost; once
    they are adopted, the missed times they dealt with are no longer missed,
    so this tick cannot see the overflow again. It is carried out here as
    that reconcile decided it, and the launches after it carry it on.
    """
    note = observed.overflow
    if note is None or any(isinstance(d, Overflow) for d in decisions):
        return tuple(decisions)
    return (Overflow(spec.job.name, note.missed, note.limit, launches=True, dropped=note.dropped), *decisions)


def _earliest(*minutes: int | None) -> int | None:
    return min((m for m in minutes if m is not None), default=None)


def _staged_fates(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, timeline: Timeline,
                  now: int, decisions: Sequence[Decision], staging: bool, out: _Effects) -> dict[int, Fate]:
    """The core's word on each staged Job (after the tick's decisions were applied): those
    to release, by nominal time; those to delete are deleted (``UNSTAGED``) and forgotten."""
    fates = {}
    for nominal, view in sorted(observed.staged.items()):
        current = view.digest is not None and view.digest == _staged_digests.of(schedule, spec, nominal)
        fate = staged_fate(spec.job, observed.state, timeline, now, nominal, decisions, suspended=spec.suspend,
                           current=current, enabled=staging)
        if fate.action == DELETE:
            out.unstaged.append(DeleteJob(view.name, UNSTAGED))
            del observed.staged[nominal]
            if fate.missed is not None:
                out.event("Warning", "MissedSchedule", f"{rfc3339(nominal)} was not started: {_MISSED[fate.missed]}")
        elif fate.action == RELEASE:
            fates[nominal] = fate
    return fates


_MISSED = {SUPERSEDED: "a newer schedule time came before its Job could be released",
           DEADLINE: "its startingDeadlineSeconds passed before its Job could be released"}


def _staged_manifest(schedule: Mapping[str, Any], spec: ScheduleSpec, nominal: int) -> dict[str, Any]:
    """The Job that the firing at ``nominal`` is staged as: suspended until the second it is due."""
    options = spec.job.options
    start = start_time(spec.job, Launch(spec.job.name, "", 0, nominal))
    return job_manifest(schedule, spec.job_template, 0, nominal, nominal, options.timeout, retries=options.retries,
                        start_at=start, staged=True)


class _Memo:
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


_UNKNOWN = object()


class _Digests:
    """The digests of staged Jobs, remembered by what they are a function of: the schedule's name,
    its spec (as canonical JSON, hashed) and the nominal time. So the plan at the busy second
    compares a staged Job with the digest its staging computed (8 us) instead of building the
    manifest again (a deep copy, the environment and a hash: 50 us, a tenth of the operator's
    time in the release window, profiled)."""

    def __init__(self, capacity: int) -> None:
        self._memo = _Memo(capacity)

    def of(self, schedule: Mapping[str, Any], spec: ScheduleSpec, nominal: int) -> str | None:
        digest = self._memo.get(_digest_key(schedule, nominal), _UNKNOWN)
        if digest is _UNKNOWN:
            digest = staged_digest(_staged_manifest(schedule, spec, nominal))
            self.remember(schedule, nominal, digest)
        return digest

    def remember(self, schedule: Mapping[str, Any], nominal: int, digest: str | None) -> None:
        self._memo.put(_digest_key(schedule, nominal), digest)


def _spec_key(schedule: Mapping[str, Any]) -> tuple[str, bytes]:
    """The schedule's name and its spec as canonical JSON, hashed: what its reading is a function of."""
    spec = orjson.dumps(schedule.get("spec"), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    return schedule["metadata"]["name"], hashlib.sha1(spec, usedforsecurity=False).digest()


def _digest_key(schedule: Mapping[str, Any], nominal: int) -> tuple[str, bytes, int]:
    return (*_spec_key(schedule), nominal)


_staged_digests = _Digests(capacity=100_000)  # this minute's and the next's, for 50,000 schedules


def _read(schedule: Mapping[str, Any], anchor: int) -> tuple[ScheduleSpec, Timeline, tuple[str, bytes, int]]:
    """The spec as the core reads it and its timeline, remembered by the spec and the anchor they
    are a function of: a schedule is planned twice or more per launch (staged, then released,
    each planned ahead), and reading it was a quarter of a plan's time. Raises SpecError (a
    refusal is not remembered). The timeline is shared by the reconcile threads, as the core's
    compiled expressions already are (their memos are written whole)."""
    key = (*_spec_key(schedule), anchor)
    read = _readings.get(key)
    if read is None:
        spec = read_spec(schedule, anchor)
        timeline = Timeline(spec.job.compiled, anchor, spec.job.options.tz)
        if not timeline.fires:
            field = "spec.schedules" if "schedules" in schedule.get("spec", {}) else "spec.schedule"
            raise SpecError(field, f"{spec.job.compiled.text!r} never fires within 8 years "
                            f"of {rfc3339(anchor)}", "NeverFires")
        read = spec, timeline
        _readings.put(key, read)
    return (*read, key)


_readings = _Memo(capacity=50_000)


def _next_schedule_times(spec: ScheduleSpec, timeline: Timeline, read: tuple[str, bytes, int],
                         next_fire: int | None) -> list[dict[str, str]]:
    """status.nextScheduleTimes: the next ``spec.upcoming`` times from ``next_fire`` on, in UTC and
    the schedule's zone, remembered by the reading and the first of them (they change when it does)."""
    if next_fire is None:
        return []
    key = (read, next_fire)
    times = _upcoming.get(key)
    if times is None:
        times = tuple((rfc3339(minute), local_rfc3339(minute, spec.job.options.tz))
                      for minute in timeline.upcoming(next_fire - 1, spec.upcoming))
        _upcoming.put(key, times)
    return [{"time": utc, "localTime": local} for utc, local in times]


_upcoming = _Memo(capacity=50_000)


def _stage(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, timeline: Timeline, now: int,
           out: _Effects) -> None:
    """Create the Job of the time the core names to stage, unless it exists (staged, or a run)."""
    nominal = to_stage(spec.job, observed.state, timeline, now, suspended=spec.suspend)
    if nominal is None or nominal in observed.staged or job_name(spec.job.name, nominal) in observed.runs:
        return
    manifest = _staged_manifest(schedule, spec, nominal)
    _staged_digests.remember(schedule, nominal, staged_digest(manifest))
    out.stages.append(StageJob(manifest))


def _carry_out(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, applied: list[Applied],
               now: int, second: float, out: _Effects, fates: Mapping[int, Fate]) -> _MissedCondition:
    """The effects of one tick's applied decisions."""
    replaced: list[str] = []  # the runs replaced for the next launch
    overflow: Overflow | None = None
    report: tuple[int, Overflow] | None = None  # an overflow to report, and where its Event goes
    launched: list[int] = []  # the nominal times launched past the overflow
    on_time = False
    for decision, news in applied:
        if isinstance(decision, Launch):
            note = None if overflow is None else OverflowNote(overflow.missed, overflow.limit, overflow.dropped)
            fate = fates.get(decision.scheduled_for)
            if fate is not None and fate.launch == decision:
                _release(observed, decision, fate, now, second, out, replaced, note)
            else:
                _launch(schedule, spec, observed, decision, now, second, out, replaced, note)
            replaced = []
            launched.append(decision.scheduled_for)
            on_time = on_time or (overflow is None and decision.reason == "scheduled")
        elif isinstance(decision, Retry):
            _retry(schedule, spec, observed, decision, now, out)
        elif isinstance(decision, Replace):
            replaced.append(decision.run_id)
            out.deletes.extend(DeleteJob(job, REPLACED) for job in observed.runs[decision.run_id].jobs())
            out.event("Normal", "Replaced", f"deleted the active run {decision.run_id}")
        elif isinstance(decision, Skip):
            if news:
                out.event("Normal", "Skipped", f"skipped {rfc3339(decision.scheduled_for)}: "
                          f"{observed.state.active[0]} is still active (Forbid)")
        elif isinstance(decision, Enqueue):
            out.event("Normal", "Queued", f"{rfc3339(decision.scheduled_for)} ({decision.reason}) waits for "
                      "the active run (WaitForLast)")
        elif isinstance(decision, Coalesce):
            out.event("Normal", "Coalesced", f"{rfc3339(decision.scheduled_for)} gave its place to a newer "
                      "scheduled time (WaitForLast)")
        elif isinstance(decision, Overflow):
            overflow = decision
            if news:
                report = (len(out.events), decision)
    if report is None:
        return _MissedCondition(on_time=on_time)
    at, decision = report
    message = _overflow_message(decision, sorted(observed.overflow_launches + launched))
    out.events.insert(at, PostEvent(EventSpec("Warning", "TooManyMissedSchedules", message)))
    return _MissedCondition(overflow=message)


def _overflow_message(overflow: Overflow, launched: list[int]) -> str:
    """How many times were missed, the limit, what was launched, how many were dropped."""
    limit = overflow.limit
    least = "at least " if overflow.dropped >= MAX_COUNTED_DROPPED else ""
    if overflow.dropped:
        missed = f"{least}{limit + overflow.dropped} schedule times were missed, more than missedSchedulesLimit {limit}"
    else:
        missed = f"more than {limit} schedule times were missed (missedSchedulesLimit)"
    what = ("launched " + ", ".join(rfc3339(t) for t in launched) if launched
            else "nothing launched yet: a run is still active")
    dropped = f"; dropped the {least}{overflow.dropped} older ones (catchUp All)" if overflow.dropped else ""
    return f"{missed}; {what}{dropped}"


def _finish_replaced(observed: Observed, out: _Effects) -> None:
    """Runs a live Job replaces that a crash left shown: the rest of their Replace."""
    for run in observed.replaced:
        out.deletes.extend(DeleteJob(job, REPLACED) for job in run.jobs())
        if run.name in observed.reported:  # the status still calls it active: the Replace was not recorded
            out.event("Normal", "Replaced", f"deleted the active run {run.name}")


def _end_runs(spec: ScheduleSpec, observed: Observed, now: int, out: _Effects) -> None:
    """The core's word on the active runs (``core.endings``): an Event for each end, and the
    Jobs of the runs retention drops. A run waiting for its next attempt is said once (the
    status records it), however often it is rebuilt from its failed Job."""
    seen = [RunSeen(name, run.number, run.attempt, run.started, run.ended, name in observed.lost)
            for name in observed.state.active for run in (observed.runs[name],)]
    for end in end_runs(observed.state, seen, spec.job.options, now):
        run = observed.runs[end.run_id]
        if end.retry is not None:
            run.state = RETRY_PENDING
            if observed.reported.get(end.run_id) != (RETRY_PENDING, run.attempt):
                out.event("Warning", "AttemptFailed", f"attempt {run.attempt} of run {run.number} ({run.job}) "
                          f"failed; attempt {end.retry.attempt} at {rfc3339(end.retry.due)}")
            continue
        run.state, run.finished = end.outcome, end.at
        out.deletes.extend(DeleteJob(job, DROPPED) for item in end.dropped for job in observed.runs[item.run_id].jobs())
        out.events.append(PostEvent(_end_event(run, end.gone)))


def _end_event(run: RunView, lost: bool) -> EventSpec:
    if lost:
        return EventSpec("Warning", "JobGone", f"run {run.number}: its Job {run.name} was deleted; counted as failed")
    reason = {SUCCEEDED: "Succeeded", FAILED: "Failed", TIMED_OUT: "TimedOut"}[run.state]
    why = f": {run.failure}" if run.failure is not None and run.state != SUCCEEDED else ""
    return EventSpec("Normal" if run.state == SUCCEEDED else "Warning", reason,
                     f"run {run.number} ({run.name}) {run.state.replace('_', ' ')} at {rfc3339(run.finished or 0)}{why}")


def _trigger(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, trigger: str, now: int,
             second: float, out: _Effects) -> None:
    """A manual run for the trigger annotation's new value (a second one within the same
    minute finds its Job name taken, and is answered by the first)."""
    launch = manual_launch(spec.job, observed.state, now)
    name = job_name(spec.job.name, now, reason=MANUAL)
    if name in observed.runs:
        return
    apply(observed.state, launch, run_key=name)
    _launch(schedule, spec, observed, launch, now, second, out, trigger=trigger)


def _launch(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, decision: Launch, now: int,
            second: float, out: _Effects, replaces: Sequence[str] = (), overflow: OverflowNote | None = None,
            trigger: str | None = None) -> None:
    """Create the run's first Job. A scheduled firing whose jitter puts its start after
    ``second`` gets a Job created suspended until then; catch-up and manual ones start now."""
    start = start_time(spec.job, decision)
    hold = start if start > second else None
    name = job_name(spec.job.name, decision.scheduled_for, reason=decision.reason)
    observed.runs[name] = RunView(name, decision.number, decision.scheduled_for, now, reason=decision.reason,
                                  held_until=hold)
    options = spec.job.options
    out.creates.append(CreateJob(job_manifest(
        schedule, spec.job_template, decision.number, decision.scheduled_for, now, options.timeout,
        retries=options.retries, reason=decision.reason, start_at=hold, replaces=replaces, overflow=overflow,
        trigger=trigger)))
    note = {"manual": " (manual)", "catch-up": " (catch-up)", "backfill": " (backfill)"}.get(decision.reason, "")
    if hold is not None:
        note += f"; it starts at {rfc3339_seconds(hold)} (jitter)"
    out.event("Normal", "Launched", f"launched run {decision.number} ({name}) for "
              f"{rfc3339(decision.scheduled_for)}{note}")


def _release(observed: Observed, decision: Launch, fate: Fate, now: int, second: float, out: _Effects,
             replaces: Sequence[str], overflow: OverflowNote | None) -> None:
    """Launch a run from its staged Job: released now if its second has come, else (jitter)
    recorded as a run at once, its Job released at its second by ``_release_held``."""
    view = observed.staged.pop(decision.scheduled_for)
    assert fate.start_at is not None
    late = None if decision.reason == "scheduled" else (decision.reason, now)
    hold = fate.start_at if fate.start_at > second else None
    observed.runs[view.name] = RunView(view.name, decision.number, decision.scheduled_for, now,
                                       reason=decision.reason, held_until=hold, staged=hold is not None)
    if hold is None:
        out.releases.append(ReleaseJob(view.name, release_patch(decision.number, replaces, overflow, late),
                                       fate.start_at))
        note = "released its staged Job"
    else:
        note = f"its staged Job starts at {rfc3339_seconds(hold)} (jitter)"
    reason = " (catch-up)" if decision.reason == "catch-up" else ""
    out.event("Normal", "Launched", f"launched run {decision.number} ({view.name}) for "
              f"{rfc3339(decision.scheduled_for)}{reason}; {note}")


def _release_held(observed: Observed, second: float, out: _Effects) -> int | None:
    """Resume the held Jobs whose jittered start has come (release them, when still staged);
    the second the next one's comes."""
    release_at = None
    for name in observed.state.active:
        run = observed.runs[name]
        if run.held_until is None or run.state != RUNNING:
            continue
        if run.held_until <= second:
            if run.staged:
                out.releases.append(ReleaseJob(run.job, release_patch(run.number), run.held_until))
            else:
                out.resumes.append(ResumeJob(run.job))
            run.held_until, run.staged = None, False
        elif release_at is None or run.held_until < release_at:
            release_at = run.held_until
    return release_at


def _retry(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, decision: Retry, now: int,
           out: _Effects) -> None:
    run = observed.runs[decision.run_id]
    run.state, run.attempt, run.ended = RUNNING, decision.attempt, None
    options = spec.job.options
    out.creates.append(CreateJob(job_manifest(schedule, spec.job_template, run.number, run.scheduled, run.started,
                                              options.timeout, run.attempt, now, options.retries, run.reason)))
    out.event("Normal", "Retried", f"started attempt {run.attempt} of run {run.number} ({run.job}) for "
              f"{rfc3339(run.scheduled)}")


def _wake_at(spec: ScheduleSpec, observed: Observed, decided: int | None, now: int) -> int | None:
    """The next minute worth a look, never sooner than the next minute: the core's
    wake-up, a run's expiry, or the end of a Job stamped later than our clock (skew)."""
    candidates = [] if decided is None else [decided]
    timeout = spec.job.options.timeout
    for name in observed.state.active:
        run = observed.runs[name]
        if timeout is not None:
            candidates.append(run.started + timeout)
        if run.ended is not None and run.state == RUNNING:
            candidates.append(run.ended[1])
    candidates.extend(pending.due for pending in observed.state.pending_retries)
    if not candidates:
        return None
    return max(min(candidates), now + 1)


def _missed_schedules(spec: ScheduleSpec, missed: _MissedCondition, generation: int, now: int,
                      previous: list[Mapping[str, Any]]) -> dict[str, Any]:
    """True from the reconcile an overflow began in, with its message; False again once a
    firing is on time. Ready stays True meanwhile: the schedule works."""
    if missed.overflow is not None:
        return condition(MISSED_SCHEDULES, True, "TooManyMissedSchedules", missed.overflow, generation, now,
                         previous)
    old = next((c for c in previous if c.get("type") == MISSED_SCHEDULES), None)
    if old is not None and old.get("status") == "True" and not missed.on_time:
        return condition(MISSED_SCHEDULES, True, str(old.get("reason")), str(old.get("message")), generation, now,
                         previous)
    return condition(MISSED_SCHEDULES, False, "OnTime", f"no more than {spec.job.options.missed_limit} "
                     "schedule times were missed (missedSchedulesLimit)", generation, now, previous)


def _status(schedule: Mapping[str, Any], spec: ScheduleSpec, observed: Observed, timeline: Timeline,
            read: tuple[str, bytes, int], anchor: int, now: int, suspended_through: int | None,
            missed: _MissedCondition) -> dict[str, Any]:
    state = observed.state
    generation = schedule["metadata"].get("generation", 0)
    previous = (schedule.get("status") or {}).get("conditions") or []
    if spec.suspend:
        message = "suspended: nothing fires" + (f" ({spec.suspend_reason})" if spec.suspend_reason else "")
        ready = condition("Ready", True, "Suspended", message, generation, now, previous)
    else:
        ready = condition("Ready", True, "Scheduled", "the schedule is valid", generation, now, previous)
    next_fire = None if spec.suspend else timeline.next_after(now)
    history = sorted((observed.runs[item.run_id] for item in state.kept_succeeded + state.kept_failed),
                     key=lambda run: (run.finished, run.number))
    status: dict[str, Any] = {
        "version": STATUS_VERSION,
        "observedGeneration": generation,
        "anchorTime": rfc3339(anchor),
        "lastScheduleTime": None if state.last_schedule is None else rfc3339(state.last_schedule),
        "nextFireTime": None if next_fire is None else rfc3339(next_fire),
        # Changes only when nextFireTime does (the first of them passes): no write of its own.
        "nextScheduleTimes": _next_schedule_times(spec, timeline, read, next_fire),
        "launched": state.launched,
        "skipped": state.skipped,
        "overflowed": state.overflowed,
        "overflowing": True if state.overflowing else None,
        "lastSkippedTime": None if state.last_skipped is None else rfc3339(state.last_skipped),
        "suspendedThrough": None if suspended_through is None else rfc3339(suspended_through),
        "suspendReason": spec.suspend_reason if spec.suspend else None,
        "activeCount": len(state.active),
        "queue": [{"scheduledTime": rfc3339(q.nominal), "reason": q.reason} for q in state.queue],
        "active": [observed.runs[name].active_entry() for name in state.active],
        "history": [run.history_entry() for run in history],
        "conditions": [ready, _missed_schedules(spec, missed, generation, now, previous)],
        "shard": shard_of(schedule),
    }
    return status


def _refused(schedule: Mapping[str, Any], status: Mapping[str, Any], anchor: int, error: SpecError,
             now: int, jobs: Iterable[Mapping[str, Any]]) -> Plan:
    generation = schedule["metadata"].get("generation", 0)
    previous = status.get("conditions") or []
    ready = condition("Ready", False, error.reason, error.message, generation, now, previous)
    new = {**status, "version": STATUS_VERSION, "observedGeneration": generation, "anchorTime": rfc3339(anchor),
           "nextFireTime": None, "nextScheduleTimes": [], "conditions": [ready], "shard": shard_of(schedule)}
    already_said = any(c.get("type") == "Ready" and c.get("message") == error.message for c in previous)
    out = _Effects(labels=_relabels(schedule, jobs))
    # A spec the core cannot read fires nothing: no staged Job of it is released (a run's is kept).
    uid, runs = schedule["metadata"]["uid"], {entry.get("name") for entry in status.get("active") or []}
    out.unstaged.extend(DeleteJob(view.name, UNSTAGED) for job in jobs
                        if (view := staged_of_job(job, uid)) is not None and view.name not in runs)
    if not already_said:
        out.event("Warning", error.reason, error.message)
    return Plan(effects=ordered(out, _changed(status, new)))


def _relabels(schedule: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]]) -> list[LabelJob]:
    """The schedule's Jobs whose shard label is not the schedule's: made before it moved."""
    shard, uid = shard_of(schedule), schedule["metadata"]["uid"]
    return [LabelJob(job["metadata"]["name"], shard) for job in jobs
            if shard_of(job) != shard and _owned_by(job, uid) and not job["metadata"].get("deletionTimestamp")]


def _owned_by(job: Mapping[str, Any], uid: str) -> bool:
    return any(ref.get("controller") and ref.get("uid") == uid
               for ref in job["metadata"].get("ownerReferences") or [])


def _changed(old: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """The new status if it differs from the old (fields set to None count as absent)."""
    def meaningful(status: Mapping[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in status.items() if value is not None}
    return None if meaningful(old) == meaningful(new) else new
