"""One reconcile of one CronSchedule, as data: the effects to carry out, in their order.

``plan`` is pure: the CronSchedule, its owned Jobs and the minute in, a
``Plan`` out. It rebuilds the core's state (``observe``), makes the core's
one call (``core.reconcile``: which runs ended, the tick's decisions applied,
each staged Job's fate, how each launch is carried out, the held runs whose
second has come, the next look) and turns the result into effects: a Job to
create, release, resume or delete, the new status, an Event for what is
news. It decides nothing itself: the rules are the core's, the wording of
the Events ``messages``', the status ``status``'. The order of the effects
is part of the plan (``effects.ordered``): a crash after any prefix of them
leaves a world that the next reconcile finishes exactly as the whole plan
would have. ``apply`` carries them out, in that order, and does nothing else.

Staged launches (``staging``, off by default): the plan creates the Job of the
time the core names during the minute before it, suspended (``StageJob``),
and at its second releases it (``ReleaseJob``: one small write) in place of a
create. The releases lead the effects, and the loop carries them out for
every due schedule before any other write of that second (``Plan.split``).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..core.reconcile import Launched, Reconciled, Seen, StagedSeen, reconcile
from ..core.endings import RunSeen
from ..core.staging import DELETE
from ..core.state import RETRY_PENDING, RUNNING
from ..core.tick import Coalesce, Decision, Enqueue, Launch, Overflow, Replace, Retry, Skip
from ..manifest import SpecError
from . import adopting
from . import backfill as backfills
from . import messages
from . import pause as pauses
from .context import Context
from .effects import (LEFT_OVER, NEVER_STARTED, REPLACED, DROPPED, UNSTAGED, CreateJob, DeleteJob, Effects, LabelJob, Plan,
                      PostEvent, ReleaseJob, ResumeJob, StageJob, fleet_events, ordered)
from .manifests import JobLaunch, OverflowNote, job_manifest, job_name, release_patch
from .observe import Observed, RunView, observe, staged_of_job
from .reading import read_schedule
from .resource import ANCHOR_ANNOTATION, TRIGGER_ANNOTATION, parse_rfc3339
from .shard import shard_of
from .staged import is_current, stage
from .status import Missed, changed, fleet_counted, listed_active, refused_status, status_of, to_write


def plan(schedule: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]], now: int,
         second: float | None = None, staging: bool = False, pool_found: bool = True, fleet: bool = False) -> Plan:
    """``now`` is the minute the core decides at; ``second`` (seconds since 1970, within
    that minute; its start by default) is when a jittered or staged Job may start.
    ``staging``: create scheduled firings' Jobs ahead of their minute (off: as they launch,
    and staged Jobs left by a staging operator are deleted; never for a pooled schedule, whose
    Jobs wait for a worker anyway). ``pool_found``: whether the CronPool its spec.pool names
    exists (its runs are launched all the same, and wait in the pool's queue until it does).
    ``fleet``: fleet mode's status (``status.fleet_status``: no per-launch field)."""
    second = now * 60 if second is None else second
    marked = adopting.hold(schedule, second)
    if marked is not None and marked.held:  # an import is adopting its Jobs: nothing decided, nothing lost
        return Plan(wake_at=marked.wake_at)
    jobs = list(jobs)
    status = schedule.get("status") or {}
    anchor = parse_rfc3339(status.get("anchorTime"))
    anchor = first_anchor(schedule, now) if anchor is None else anchor
    try:
        spec, timeline, read = read_schedule(schedule, anchor)
    except SpecError as error:
        return _refused(schedule, anchor, error, now, jobs)
    observed = observe(status, jobs, schedule["metadata"]["uid"])
    state = observed.state
    counted = fleet_counted(fleet, state.launched, state.scheduled_runs, state.last_schedule)
    pause = pauses.standing(schedule, spec)
    spec = pauses.paused(spec, pause.pause)
    context = Context(schedule, spec, timeline, read, observed, anchor, now, second,
                      Effects(labels=_relabels(schedule, jobs)), pool_missing=spec.pool is not None and not pool_found,
                      deleting=bool(schedule["metadata"].get("deletionTimestamp")))
    trigger = pending_trigger(schedule)
    asked = backfills.asked(schedule, spec, now)
    seen = _seen_of(context, staging, trigger is not None and trigger not in observed.answered, asked)
    result = reconcile(spec.job, observed.state, timeline, seen, now, second,
                       key=lambda launch: job_name(spec.job.name, launch.scheduled_for, reason=launch.reason))
    if result.paused:
        pause = pause._replace(pause=pauses.began(now, observed.state.consecutive_failures))
        context.spec = spec = pauses.paused(spec, pause.pause)
    missed = _carry_out(context, result, trigger, asked)
    new_status = _new_status(context, result, missed, trigger, asked, pause)
    _say_standing(context, result.paused, marked)
    written = to_write(status, new_status, fleet, _on_jobs(context.observed))
    context.out.events = fleet_events(context.out.events, fleet)
    return Plan(effects=ordered(context.out, written, status, counted), wake_at=result.wake_at,
                release_at=result.release_at, lost=list(observed.lost), active=new_status.get("activeCount"))


def _on_jobs(observed: Observed) -> frozenset[str]:
    """The runs their Jobs record (created, released or adopted): all but a jittered launch
    from a staged Job, which only the status records until its second."""
    return frozenset(name for name, run in observed.runs.items() if not run.staged)


def _new_status(context: Context, result: Reconciled, missed: Missed, trigger: str | None,
                asked: backfills.Asked, pause: pauses.Standing) -> dict[str, Any]:
    """The status the reconcile leaves: the core's view (``status_of``) with the trigger answered,
    the backfill's progress and the pause on failures."""
    spec, status = context.spec, context.schedule.get("status") or {}
    new_status = status_of(context, missed, result.upcoming)
    new_status["lastTrigger"] = trigger if trigger is not None else status.get("lastTrigger")
    new_status["backfill"] = (asked.entry if result.backfill is None else
                              backfills.entry(result.backfill, result.backfill_running, result.backfill_finished,
                                              spec.suspend))
    new_status["pausedOnFailures"], new_status["lastResume"] = pause.pause, pause.resume
    return new_status


def _say_standing(context: Context, paused: bool, marked: adopting.Hold | None) -> None:
    """The Events of how the schedule stands: paused on failures (or suspended), its pool missing,
    an import's adopting mark gone stale (said once: at the plan that ends its hold, the first to
    write a status)."""
    if paused:
        context.post(messages.paused_on_failures(context.spec.suspend_reason or ""))
    else:
        _say_suspension(context)
    _say_missing_pool(context)
    if marked is not None and marked.stale is not None and not context.schedule.get("status"):
        context.post(messages.warning(adopting.STALE_REASON, marked.stale))


def _seen_of(context: Context, staging: bool, triggered: bool, asked: backfills.Asked) -> Seen:
    """What the core is told it sees of the schedule besides its state. ``triggered``: a manual run
    is asked for (not answered yet: else the status write that answered it was lost). A schedule
    being deleted (held by a finalizer) launches nothing, as a suspended one, nor its runs' retries,
    and unstages what it staged; its runs under way end as usual."""
    schedule, spec, observed, deleting = context.schedule, context.spec, context.observed, context.deleting
    return Seen(runs=[_seen(observed, name) for name in observed.state.active],
                staged=[StagedSeen(nominal, is_current(schedule, spec, nominal, view.digest))
                        for nominal, view in observed.staged.items()],
                known=frozenset(observed.runs), recorded_overflow=_recorded_overflow(context),
                suspended=spec.suspend or deleting, deleting=deleting, staging=staging and spec.pool is None and not deleting,
                edited=context.old_status.get("observedGeneration") != context.generation,
                trigger=triggered and not deleting, backfill=asked.under_way)


def _carry_out(context: Context, result: Reconciled, trigger: str | None, asked: backfills.Asked) -> Missed:
    """The effects of the core's result, their Events in the order things happened."""
    _end_runs(context, result)
    _finish_replaced(context)
    context.out.deletes.extend(DeleteJob(name, LEFT_OVER) for name in context.observed.leftovers)
    _unstage(context, result)
    missed = _tick(context, result)
    if result.stage is not None:
        context.out.stages.append(StageJob(stage(context.schedule, context.spec, result.stage)))
    if result.manual is not None:
        _create(context, result.manual, trigger=trigger)
    if asked.event is not None:
        context.post(asked.event)
    for item in result.backfilled:
        _create(context, item)
    if result.backfill is not None and result.backfill_finished:
        context.post(messages.backfill_complete(result.backfill))
    _release_held(context, result)
    return missed


def _seen(observed: Observed, name: str) -> RunSeen:
    run = observed.runs[name]
    return RunSeen(name, run.number, run.attempt, run.started, run.ended, name in observed.lost, run.held_until)


def _recorded_overflow(context: Context) -> Overflow | None:
    """The overflow that adopted Jobs were launched past: the status write that recorded it was lost."""
    note = context.observed.overflow
    if note is None:
        return None
    return Overflow(context.spec.job.name, note.missed, note.limit, launches=True, dropped=note.dropped)


def _end_runs(context: Context, result: Reconciled) -> None:
    """An Event for each run that ended, and the Jobs of the runs retention drops. A run waiting
    for its next attempt is said once (the status records it), however often it is rebuilt
    from its failed Job."""
    observed = context.observed
    for end in result.ends:
        run = observed.runs[end.run_id]
        if end.retry is not None:
            run.state = RETRY_PENDING
            if observed.reported.get(end.run_id) != (RETRY_PENDING, run.attempt):
                context.post(messages.attempt_failed(run, end.retry.attempt, end.retry.due))
            continue
        run.state, run.finished = end.outcome, end.at
        if run.queued_in is not None:  # it timed out waiting for a worker: its pool must not start it
            context.out.deletes.append(DeleteJob(run.job, NEVER_STARTED))
        context.out.deletes.extend(DeleteJob(job, DROPPED) for item in end.dropped
                                   for job in observed.runs[item.run_id].jobs())
        context.post(messages.ended(run, end.gone))


def _finish_replaced(context: Context) -> None:
    """Runs a live Job replaces that a crash left shown: the rest of their Replace."""
    for run in context.observed.replaced:
        context.out.deletes.extend(DeleteJob(job, REPLACED) for job in run.jobs())
        if run.name in context.observed.reported:  # the status still calls it active: the Replace was not recorded
            context.post(messages.replaced(run.name))


def _unstage(context: Context, result: Reconciled) -> None:
    """The staged Jobs whose fate is deletion, and a Warning for each whose run was missed."""
    for nominal, fate in result.fates.items():
        if fate.action != DELETE:
            continue
        view = context.observed.staged.pop(nominal)
        context.out.unstaged.append(DeleteJob(view.name, UNSTAGED))
        if fate.missed is not None:
            context.post(messages.missed(nominal, fate.missed))


def _tick(context: Context, result: Reconciled) -> Missed:
    """The effects of the tick's applied decisions, and what they say of missed schedules."""
    report_at = None  # where the overflow's Event goes: before the launches past it
    if result.passed_over is not None:  # before the launch that passed over them
        context.post(messages.passed_over(result.passed_over))
    for decision, news in result.applied:
        if decision is result.overflow:
            report_at = len(context.out.events)
        else:
            _carry_out_decision(context, result, decision, news)
    return _report_overflow(context, result, report_at)


def _carry_out_decision(context: Context, result: Reconciled, decision: Decision, news: bool) -> None:
    """One decision of the tick: a launch's Job (created, or released from staging), a retry's,
    a replaced run's Jobs deleted, and each said by an Event (a skip only when it is news)."""
    observed = context.observed
    if isinstance(decision, Launch):
        item = result.launched(decision)
        (_release if item.staged else _create)(context, item)
    elif isinstance(decision, Retry):
        _retry(context, decision)
    elif isinstance(decision, Replace):
        context.out.deletes.extend(DeleteJob(job, REPLACED) for job in observed.runs[decision.run_id].jobs())
        context.post(messages.replaced(decision.run_id))
    elif isinstance(decision, Skip) and news:
        context.post(messages.skipped(decision.scheduled_for, observed.state.active[0]))
    elif isinstance(decision, Enqueue):
        context.post(messages.queued(decision.scheduled_for, decision.reason))
    elif isinstance(decision, Coalesce):
        context.post(messages.coalesced(decision.scheduled_for))


def _report_overflow(context: Context, result: Reconciled, report_at: int | None) -> Missed:
    """What the tick says of missed schedules: the overflow it went into, its Event put at
    ``report_at`` (before the launches past it) naming every time launched past it; else
    whether a firing was launched on time."""
    if result.overflow is None or report_at is None:
        return Missed(on_time=result.on_time)
    launched = [item.launch.scheduled_for for item in result.launches]
    message = messages.overflow_message(result.overflow, sorted(context.observed.overflow_launches + launched))
    context.out.events.insert(report_at, PostEvent(messages.overflowed(message)))
    return Missed(overflow=message)


def _overflow_note(item: Launched) -> OverflowNote | None:
    overflow = item.overflow
    return None if overflow is None else OverflowNote(overflow.missed, overflow.limit, overflow.dropped)


def _create(context: Context, item: Launched, trigger: str | None = None) -> None:
    """Create the run's first Job; one whose jittered start is after this second is created
    suspended until then."""
    schedule, spec, launch = context.schedule, context.spec, item.launch
    context.observed.runs[item.run_key] = RunView(item.run_key, launch.number, launch.scheduled_for, context.now,
                                                  reason=launch.reason, held_until=item.held_until,
                                                  queued_in=spec.pool)
    options = spec.job.options
    job = JobLaunch(launch.number, launch.scheduled_for, context.now, reason=launch.reason, start_at=item.held_until,
                    overflow=_overflow_note(item), trigger=trigger, pool=spec.pool)
    context.out.creates.append(CreateJob(job_manifest(schedule, spec.job_template, job, options.timeout,
                                                      options.retries)))
    context.post(messages.launched(launch, item.run_key, item.held_until))


def _release(context: Context, item: Launched) -> None:
    """Launch a run from its staged Job: released now if its second has come, else (jitter)
    recorded as a run at once, its Job released at its second by ``_release_held``."""
    launch, observed = item.launch, context.observed
    view = observed.staged.pop(launch.scheduled_for)
    late = None if launch.reason == "scheduled" else (launch.reason, context.now)
    observed.runs[view.name] = RunView(view.name, launch.number, launch.scheduled_for, context.now,
                                       reason=launch.reason, held_until=item.held_until,
                                       staged=item.held_until is not None)
    if item.held_until is None:
        context.out.releases.append(ReleaseJob(view.name, release_patch(launch.number, _overflow_note(item), late),
                                               item.start_at))
    context.post(messages.released(launch, view.name, item.held_until))


def _release_held(context: Context, result: Reconciled) -> None:
    """Resume the held Jobs whose jittered start has come (release them, when still staged). A
    pooled run's Job holds nothing here (``observe``): its pool's look starts it."""
    for name in result.resumed:
        run = context.observed.runs[name]
        if run.staged:
            assert run.held_until is not None
            context.out.releases.append(ReleaseJob(run.job, release_patch(run.number), run.held_until))
        else:
            context.out.resumes.append(ResumeJob(run.job))
        run.held_until, run.staged = None, False


def _retry(context: Context, decision: Retry) -> None:
    run = context.observed.runs[decision.run_id]
    run.state, run.attempt, run.ended, run.queued_in = RUNNING, decision.attempt, None, context.spec.pool
    options = context.spec.job.options
    job = JobLaunch(run.number, run.scheduled, run.started, run.attempt, run.reason, now=context.now,
                    pool=context.spec.pool)
    context.out.creates.append(CreateJob(job_manifest(context.schedule, context.spec.job_template, job,
                                                      options.timeout, options.retries)))
    context.post(messages.retried(run))


def _say_suspension(context: Context) -> None:
    """An Event when the schedule is suspended, its reason changes, or it is resumed (not at
    first sight: a schedule created suspended has said nothing yet)."""
    status, spec = context.old_status, context.spec
    if not status.get("conditions"):
        return
    was = any(c.get("type") == "Ready" and c.get("reason") == "Suspended" for c in status["conditions"])
    if spec.suspend and (not was or status.get("suspendReason") != spec.suspend_reason):
        context.post(messages.suspended(spec.suspend_reason))
    elif was and not spec.suspend:
        context.post(messages.resumed())


def _say_missing_pool(context: Context) -> None:
    """A Warning when the schedule's pool goes missing (not again while it stays missing)."""
    if not context.pool_missing or context.deleting:
        return
    said = any(c.get("type") == "Ready" and c.get("reason") == messages.POOL_NOT_FOUND
               for c in context.old_status.get("conditions") or [])
    if not said:
        context.post(messages.pool_not_found(context.spec.pool or "", context.namespace))


def first_anchor(schedule: Mapping[str, Any], now: int) -> int:
    """Where a new schedule's times start after: the anchor annotation's minute (an import from a
    CronJob: its last schedule time), else the minute it was created in, as CronJob counts from its
    creationTimestamp (a schedule created while no operator ran, or during a rollout or failover,
    loses no time: its starting deadline and catch-up rules say which of the times since still
    run); now when neither is known. A future one (the API server's clock ahead) counts as now."""
    metadata = schedule.get("metadata") or {}
    asked = parse_rfc3339((metadata.get("annotations") or {}).get(ANCHOR_ANNOTATION))
    if asked is None:
        asked = parse_rfc3339(metadata.get("creationTimestamp"))
    return now if asked is None or asked > now else asked


def pending_trigger(schedule: Mapping[str, Any]) -> str | None:
    """The value of the trigger annotation, if the status has not answered it yet."""
    annotations = schedule["metadata"].get("annotations") or {}
    value = annotations.get(TRIGGER_ANNOTATION)
    if value is None or value == (schedule.get("status") or {}).get("lastTrigger"):
        return None
    return str(value)


def _refused(schedule: Mapping[str, Any], anchor: int, error: SpecError, now: int,
             jobs: Iterable[Mapping[str, Any]]) -> Plan:
    """A spec the core cannot read fires nothing: its staged Jobs go (a run's is kept), and
    the reason is said once."""
    status = schedule.get("status") or {}
    already_said = any(c.get("type") == "Ready" and c.get("message") == error.message
                       for c in status.get("conditions") or [])
    out = Effects(labels=_relabels(schedule, jobs))
    uid, runs = schedule["metadata"]["uid"], {entry.get("name") for entry in listed_active(status)}
    out.unstaged.extend(DeleteJob(view.name, UNSTAGED) for job in jobs
                        if (view := staged_of_job(job, uid)) is not None and view.name not in runs)
    if not already_said:
        out.events.append(PostEvent(messages.warning(error.reason, error.message)))
    return Plan(effects=ordered(out, changed(status, refused_status(schedule, anchor, error, now))))


def _relabels(schedule: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]]) -> list[LabelJob]:
    """The schedule's Jobs whose shard label is not the schedule's: made before it moved."""
    shard, uid = shard_of(schedule), schedule["metadata"]["uid"]
    return [LabelJob(job["metadata"]["name"], shard) for job in jobs
            if shard_of(job) != shard and _owned_by(job, uid) and not job["metadata"].get("deletionTimestamp")]


def _owned_by(job: Mapping[str, Any], uid: str) -> bool:
    return any(ref.get("controller") and ref.get("uid") == uid
               for ref in job["metadata"].get("ownerReferences") or [])
