"""The one composition of a turn of a job, for every driver, and one reconcile of one job: pure.

``ends`` and ``turn`` write the order of a turn once (the runs that ended; the
hold; the tick; the driver's staging; the backfill's next runs; the manual
runs asked for): the in-memory ``Controller`` (the harness, the fleet preview,
the runner's step) calls them for each due job, and ``reconcile`` below for
the operator. No other module calls these steps itself (a test in
tests/test_drivers_agree.py fails if one does).

The operator knows a job only from outside (a CronSchedule's status and its
Jobs): at every reconcile it rebuilds the job's ``JobState`` and sees its
active runs (``RunSeen``: when each started, how its worker says it ended,
whether its worker is gone, whether it waits for its jittered second) and its
staged firings (``StagedSeen``). ``reconcile`` is the one call that says what
becomes of all of it at ``now`` (a minute) and ``second`` (a second within
it): the turn, and what the operator makes of each of its steps, each applied
to the state:

1. the runs that ended (``ends``);
2. a suspended job holds (``turn``): no time until now is missed, and only
   its runs' retries go on; a job being deleted launches nothing, retries
   included;
3. the tick's decisions (``tick.decide``), after the overflow that runs the
   driver adopted were launched past (a record of a decision whose state was
   lost: carried out again as it was decided, so the launches after it carry
   it on), applied (``transitions.apply_tick``);
4. each staged firing's fate (``staging.staged_fate``), and each launch's way:
   from its staged firing when the fate releases that very launch, else
   created; held until its jittered second when that is after ``second``;
   the runs it replaces and the overflow it was launched past;
5. the firing to stage now (``staging.to_stage``), unless staged or run already;
6. the backfill's next runs (``backfill.next_launch``), a run that exists
   being that launch made already, and whether it is finished;
7. a manual run asked for, unless its run exists (asked twice in a minute),
   whatever the policy and even while suspended. It comes after everything
   the schedule decides by itself: the due times were due at the minute's
   start and the request came within it, so a Forbid time due in the turn a
   run is asked for launches too, and a Replace time does not replace it
   (docs/concepts/policies.md). Every driver takes its triggers in this place;
8. the held runs whose second has come, and the second the next one's comes;
9. the minute worth the next look: the tick's wake-up, the next staging, a
   run's timeout, a retry's due time, or the end of a run its worker stamped
   later than our clock (skew), never sooner than the next minute;
10. what the job says of missed schedules: the overflow to report (once per
    outage, ``apply_tick``), whether a firing was launched on time, and, for a
    driver that does not stage, the times a launch passed over
    (``passed_over``; a staging driver reports each staged firing it gives up);
11. what it fires next (``upcoming``): its next time, whether it ended, and
    that time unless it is held or ended, so the driver shows it without
    asking again.

The driver turns the result into its effects (Jobs, Events, a status) and
decides nothing itself.
"""

from __future__ import annotations

from copy import copy
from dataclasses import dataclass, field, replace
from typing import Callable, NamedTuple, Sequence

from . import backfill as backfills
from .endings import RunEnd, RunSeen, end_runs
from .failures import pauses
from .passed_over import PassedOver, passed_over
from .schedule import Timeline
from .spec import JobSpec
from .staging import DELETE, RELEASE, Fate, next_staging, staged_fate, to_stage
from .state import RETRY_PENDING, Backfill, JobState
from .tick import Decision, JobTick, Launch, Missed, Overflow, Replace, decide, manual_launch, start_time, while_held
from .transitions import Applied, apply, apply_tick, hold
from .upcoming import Upcoming, upcoming


class StagedSeen(NamedTuple):
    """A firing the driver prepared ahead of its minute, and whether it is still what the job's
    spec would prepare (the driver compares what it prepared with what it would now)."""

    nominal: int
    current: bool = True


@dataclass
class Seen:
    """What the driver observes of the job besides its state."""

    runs: Sequence[RunSeen] = ()  # the active runs, as ``state.active`` orders them
    staged: Sequence[StagedSeen] = ()
    known: frozenset[str] = frozenset()  # the keys of every run the driver knows, active or finished
    recorded_overflow: Overflow | None = None  # an overflow adopted runs were launched past
    suspended: bool = False
    deleting: bool = False  # being deleted (a finalizer holds it): held, its runs' retries wait too
    staging: bool = False  # whether the driver prepares firings ahead of their minute (off by default)
    edited: bool = False  # the spec changed since the state was recorded: its past times were never due
    trigger: bool = False  # a manual run is asked for
    backfill: Backfill | None = None  # the backfill under way, if any


class Launched(NamedTuple):
    """A launch of this reconcile and how the driver carries it out."""

    launch: Launch
    run_key: str
    start_at: int  # the second (since 1970) from which its run may start: its jitter's
    held_until: int | None  # ``start_at`` when it is after this reconcile's second: the run waits
    staged: bool = False  # carried out by releasing its staged firing
    replaces: tuple[str, ...] = ()  # the runs replaced for it (Replace)
    overflow: Overflow | None = None  # the overflow it was launched past


@dataclass
class Reconciled:
    state: JobState  # the job's state after all of it (the one given, changed)
    ends: list[RunEnd] = field(default_factory=list)
    applied: list[Applied] = field(default_factory=list)  # the tick's decisions, in order, and if each is news
    launches: list[Launched] = field(default_factory=list)  # the tick's
    manual: Launched | None = None  # the run asked for by hand
    backfilled: list[Launched] = field(default_factory=list)  # the backfill's runs
    fates: dict[int, Fate] = field(default_factory=dict)  # each staged firing's, by nominal time
    stage: int | None = None  # the schedule time to prepare now
    resumed: list[str] = field(default_factory=list)  # held runs whose second has come
    release_at: int | None = None  # the second the next held run's comes
    wake_at: int | None = None  # the minute worth the next look
    overflow: Overflow | None = None  # the overflow to report: the job went into one at this tick
    on_time: bool = False  # a firing launched for its own minute, past no overflow
    passed_over: PassedOver | None = None  # older times the tick's launch never started (staging off)
    backfill: Backfill | None = None  # the backfill, as far as it got
    backfill_running: str | None = None  # the key of its run in progress
    backfill_finished: bool = False  # every run of it launched and ended
    paused: bool = False  # a run's failure made pauseOnFailures pause the job (failures.py)
    upcoming: Upcoming = Upcoming(None, None, None)  # what the job fires next, as every driver shows it
    turn: Turn | None = None  # the turn's own answer (``turn``), which the fields above translate

    def launched(self, decision: Launch) -> Launched:
        """How the tick's ``decision`` is carried out."""
        return next(item for item in self.launches if item.launch is decision)

    def every_launch(self) -> list[Launched]:
        return [*self.launches, *([] if self.manual is None else [self.manual]), *self.backfilled]


RunKey = Callable[[Launch], str]


class Asked(NamedTuple):
    """What one turn of a job is told besides its state: what holds it, what was asked of it,
    and how the driver names runs."""

    held: bool = False  # suspended, paused, switched off, invalid: no scheduled firing, no time missed
    triggers: int = 0  # manual runs asked for in this turn
    backfill: Backfill | None = None  # the backfill under way, if any
    recorded_overflow: Overflow | None = None  # an overflow adopted runs were launched past
    key: RunKey | None = None  # names the run a launch makes (None: ``Launch.run_id``)
    known: set[str] | None = None  # keys of the runs that exist, which the turn's launches join (None: none exists)
    deleting: bool = False  # held because it is being deleted: neither its runs' retries nor manual runs launch


NOTHING_ASKED = Asked()


class Hint(NamedTuple):
    """What a driver that keeps the job in memory knows of its last tick: it only saves work."""

    missed: Missed | None = None  # what the last tick counted (``tick.decide``'s ``known``)
    replay: tuple[Applied, ...] | None = None  # the last tick's decisions, which repeat (``JobTick.holds``)


class Turn(NamedTuple):
    """What one turn decided for the job, each part applied to its state."""

    tick: JobTick | None  # the tick's answer (None: replayed)
    applied: list[Applied]  # the tick's decisions, in order, and whether each is news
    backfilled: list[tuple[Launch, str]]  # the backfill's runs, each with its run's key
    manual: list[tuple[Launch, str]]  # the manual runs, each with its run's key
    backfill: Backfill | None  # the backfill, as far as it got
    held: bool  # the hold changed the job's state (its window of missed times starts later)


class Ends(NamedTuple):
    ends: list[RunEnd]  # the runs that ended (or wait for their next attempt), oldest end first
    paused: bool  # a failure among them paused the job (``pauseOnFailures``): it is held from this turn on


def ends(spec: JobSpec, state: JobState, runs: list[RunSeen], now: int) -> Ends:
    """The first step of a turn: the job's active runs that ended by ``now`` (``endings.end_runs``,
    the timeout's one rule), each applied to its state, oldest end first, and whether their
    failures paused the job (``failures.pauses``). ``reconcile`` calls it at its start with the
    runs the operator sees; ``Controller`` as each run finishes or expires (its clock's rule:
    timeouts apply before anything else an operation does)."""
    streak = state.consecutive_failures
    ended = end_runs(state, runs, spec.options, now)
    return Ends(ended, pauses(spec.options.pause_on_failures, streak, state.consecutive_failures))


def turn(spec: JobSpec, state: JobState, timeline: Timeline, now: int, asked: Asked = NOTHING_ASKED,
         hint: Hint | None = None, between: Callable[[list[Applied]], None] | None = None) -> Turn:
    """The order of a turn of one job, after its runs' ends, written once for every driver:

    1. a held job holds (``transitions.hold``): no time until now is missed, and
       only its runs' retries go on (``tick.while_held``), unless it is being
       deleted: then nothing launches, retries and manual runs included;
    2. otherwise the tick's decisions (``tick.decide``, or the replay of the last
       ones when they repeat), after an adopted overflow, applied;
    3. ``between``: the driver's look at the tick's decisions (the operator's staging);
    4. the backfill's next runs, while the policy lets them start, unless held;
    5. the manual runs asked for, whatever the policy, held or not.

    ``reconcile`` (the operator) and ``Controller`` (the harness, the fleet
    preview, the runner) call it; no driver composes these steps itself.
    """
    changed = False
    if asked.held:
        changed = hold(state, now)
        retries = JobTick((), None) if asked.deleting else while_held(spec, state, now)
        tick: JobTick | None = retries
        applied = [apply(state, decision) for decision in retries.decisions]
    elif hint is not None and hint.replay is not None:
        tick, applied = None, list(hint.replay)
    else:
        tick = decide(spec, state, timeline, now, None if hint is None else hint.missed)
        applied = apply_tick(state, _after_recorded(asked.recorded_overflow, tick.decisions), key=asked.key)
    if between is not None:
        between(applied)
    if asked is NOTHING_ASKED:  # the most frequent by far: a due job's tick alone
        return Turn(tick, applied, [], [], None, changed)
    backfilled: list[tuple[Launch, str]] = []
    current = asked.backfill
    if current is not None and not asked.held:
        current = _backfill(spec, state, current, asked, backfilled)
    manual = [_manual(spec, state, now, asked) for _ in range(0 if asked.deleting else asked.triggers)]
    return Turn(tick, applied, backfilled, [run for run in manual if run is not None], current, changed)


def reconcile(spec: JobSpec, state: JobState, timeline: Timeline, seen: Seen, now: int, second: float,
              key: RunKey) -> Reconciled:
    """The whole of one reconcile of the job at ``now`` (``second`` within it), ``key`` naming
    the run a launch makes. ``state`` is changed to the state it leaves."""
    ended = ends(spec, state, list(seen.runs), now)
    result = Reconciled(state, ends=ended.ends)
    result.paused = not seen.suspended and ended.paused
    seen = _holding(seen, result.paused)
    known = set(seen.known)
    before = copy(state) if _counts_passed_over(seen) else None
    asked = Asked(seen.suspended, int(seen.trigger), seen.backfill, seen.recorded_overflow, key, known,
                  deleting=seen.deleting)

    def look(applied: list[Applied]) -> None:
        """The tick's launches, each staged firing's fate and the firing to stage (step 3)."""
        result.applied = applied
        decisions = [item.decision for item in applied]
        result.fates = {staged.nominal: staged_fate(spec, state, timeline, now, staged.nominal, decisions,
                                                    suspended=seen.suspended, current=staged.current,
                                                    enabled=seen.staging)
                        for staged in sorted(seen.staged, key=lambda s: s.nominal)}
        _tick_launches(spec, result, second, key, known)
        if seen.staging:
            result.stage = _to_stage(spec, state, timeline, now, seen, result.fates, key, known)

    turned = result.turn = turn(spec, state, timeline, now, asked, between=look)
    if before is not None:
        result.passed_over = passed_over(spec, before, timeline, [item.decision for item in turned.applied])
    _record_asked(spec, result, turned, seen.backfill is not None, second)
    _held(seen, result, second)
    result.wake_at = _wake_at(spec, state, seen, result, _scheduled_wake_at(spec, timeline, seen, turned, now), now)
    result.upcoming = upcoming(spec, state, timeline, now, held=seen.suspended)
    return result


def _holding(seen: Seen, paused: bool) -> Seen:
    """What the reconcile holds the job as: a job its failures paused in this reconcile is held
    as a suspended one (from that failure on, nothing scheduled fires); a job being deleted is
    held as a suspended job, and more: nothing is asked of it, nothing is staged."""
    if paused:
        seen = replace(seen, suspended=True)
    if seen.deleting:
        seen = replace(seen, suspended=True, trigger=False, staging=False)
    return seen


def _counts_passed_over(seen: Seen) -> bool:
    """Whether the reconcile reports the times a launch passed over (``passed_over``): not for a
    held job (nothing of it was due), nor a staging driver's (it reports each staged firing it
    gives up), nor an edited spec's (its past times were never due)."""
    return not (seen.suspended or seen.staging or seen.edited)


def _record_asked(spec: JobSpec, result: Reconciled, turned: Turn, backfilling: bool, second: float) -> None:
    """The runs the turn launched because they were asked for (the backfill's and the manual
    one), each as the driver carries it out, and how far the backfill under way got."""
    result.backfilled = [_launched(spec, launch, run_key, second) for launch, run_key in turned.backfilled]
    result.manual = next((_launched(spec, launch, run_key, second) for launch, run_key in turned.manual), None)
    if backfilling:
        result.backfill = turned.backfill
        assert turned.backfill is not None
        result.backfill_running = backfills.running_run(turned.backfill, result.state.active)
        result.backfill_finished = backfills.finished(turned.backfill, result.state.active)


def _scheduled_wake_at(spec: JobSpec, timeline: Timeline, seen: Seen, turned: Turn, now: int) -> int | None:
    """The minute the schedule itself is worth a look again: the tick's wake-up, or the next
    staging when that is sooner; none for a held job (only its runs wake it)."""
    if seen.suspended or turned.tick is None:
        return None
    return _earliest(turned.tick.wake_at, next_staging(spec, timeline, now) if seen.staging else None)


def _after_recorded(recorded: Overflow | None, decisions: Sequence[Decision]) -> tuple[Decision, ...]:
    """The tick's decisions after the overflow adopted runs were launched past: once they are
    adopted, the missed times they dealt with are no longer missed, so the tick cannot see it."""
    if recorded is None or any(isinstance(d, Overflow) for d in decisions):
        return tuple(decisions)
    return (recorded, *decisions)


def _tick_launches(spec: JobSpec, result: Reconciled, second: float, key: RunKey, known: set[str]) -> None:
    """How each launch of the tick is carried out, and what the tick says of missed schedules."""
    replaced: list[str] = []
    overflow: Overflow | None = None
    for decision, news in result.applied:
        if isinstance(decision, Launch):
            fate = result.fates.get(decision.scheduled_for)
            staged = fate is not None and fate.action == RELEASE and fate.launch == decision
            run_key = key(decision)
            result.launches.append(_launched(spec, decision, run_key, second, staged, tuple(replaced), overflow))
            known.add(run_key)
            replaced = []
            result.on_time = result.on_time or (overflow is None and decision.reason == "scheduled")
        elif isinstance(decision, Replace):
            replaced.append(decision.run_id)
        elif isinstance(decision, Overflow):
            overflow = decision
            if news:
                result.overflow = decision


def _launched(spec: JobSpec, launch: Launch, run_key: str, second: float, staged: bool = False,
              replaces: tuple[str, ...] = (), overflow: Overflow | None = None) -> Launched:
    start = start_time(spec, launch)
    return Launched(launch, run_key, start, start if start > second else None, staged, replaces, overflow)


def _to_stage(spec: JobSpec, state: JobState, timeline: Timeline, now: int, seen: Seen, fates: dict[int, Fate],
              key: RunKey, known: set[str]) -> int | None:
    nominal = to_stage(spec, state, timeline, now, suspended=seen.suspended)
    if nominal is None or fates.get(nominal, Fate(DELETE)).action != DELETE:
        return None  # nothing to stage, or staged already
    if key(Launch(spec.name, "", 0, nominal)) in known:
        return None  # its run exists
    return nominal


def _manual(spec: JobSpec, state: JobState, now: int, asked: Asked) -> tuple[Launch, str] | None:
    """A manual run, unless its run exists (asked twice in a minute: the first answers it)."""
    launch = manual_launch(spec, state, now)
    run_key = launch.run_id if asked.key is None else asked.key(launch)
    if asked.known is not None:
        if run_key in asked.known:
            return None
        asked.known.add(run_key)
    apply(state, launch, run_key=run_key)
    return launch, run_key


def _backfill(spec: JobSpec, state: JobState, current: Backfill, asked: Asked,
              backfilled: list[tuple[Launch, str]]) -> Backfill:
    """The backfill's next runs while the policy lets them start; a run that exists (its
    launch's record was lost) is that launch, made already."""
    while (launch := backfills.next_launch(spec, state, current)) is not None:
        run_key = launch.run_id if asked.key is None else asked.key(launch)
        if asked.known is None or run_key not in asked.known:
            if asked.known is not None:
                asked.known.add(run_key)
            apply(state, launch, run_key=run_key)
            backfilled.append((launch, run_key))
        current = backfills.launched(current, spec, run_key)
    return current


def _held(seen: Seen, result: Reconciled, second: float) -> None:
    """The held runs whose jittered second has come; the second the next one's comes."""
    waiting = _retry_pending(result)
    held = [(run.run_id, run.held_until) for run in seen.runs
            if run.held_until is not None and run.run_id in result.state.active and run.run_id not in waiting]
    held += [(item.run_key, item.held_until) for item in result.every_launch() if item.held_until is not None]
    result.resumed = [run_id for run_id, until in held if until <= second]
    result.release_at = min((until for _, until in held if until > second), default=None)


def _retry_pending(result: Reconciled) -> set[str]:
    return {end.run_id for end in result.ends if end.outcome == RETRY_PENDING}


def _wake_at(spec: JobSpec, state: JobState, seen: Seen, result: Reconciled, decided: int | None,
             now: int) -> int | None:
    candidates = [] if decided is None else [decided]
    timeout = spec.options.timeout
    waiting = _retry_pending(result)
    started = {run.run_id: run for run in seen.runs}
    for item in result.every_launch():
        started[item.run_key] = RunSeen(item.run_key, item.launch.number, 1, now)
    for run_id in state.active:
        run = started.get(run_id)
        if run is None:
            continue
        if timeout is not None:
            candidates.append(run.started + timeout)
        if run.reported is not None and run_id not in waiting:
            candidates.append(run.reported[1])  # an end stamped after our clock: its minute comes
    if not seen.deleting:  # a deleting job's retries wait for nothing
        candidates.extend(pending.due for pending in state.pending_retries)
    if not candidates:
        return None
    return max(min(candidates), now + 1)


def _earliest(*minutes: int | None) -> int | None:
    return min((m for m in minutes if m is not None), default=None)
