"""The in-memory controller: carries out the core's decisions on ControllerState.

This is the driver the offline harness, the fleet preview and the single-node
runner use. It owns the clock rule and the records of runs, picks which jobs
are due, and gives each its turn through the one composition
(``core.reconcile.turn``: the hold, the tick, the backfill's next runs, the
manual runs asked for; the runs' ends through ``core.reconcile.ends``): it
orders none of these steps itself. Its work follows what is due rather than
how many jobs exist, through two derived indexes, each in its own module:
its ``Agenda`` (core/agenda.py: the jobs' wake-up times, and the jobs left
waiting, whose last decisions are replayed without deciding again) and its
``Expiries`` (core/expiries.py: when each active run times out). What it
keeps besides is the state (``ControllerState``: the jobs and the records of
their runs), each job's timeline, and what each job's last tick counted
(its ``Hint``, so that the next one counts only the minutes since).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Mapping, NamedTuple, Sequence

from . import backfill as backfills
from .agenda import Agenda, Looked, Replays
from .errors import Code, CronctlError
from .retention import history_order
from .schedule import Timeline, never_fires
from .spec import JobSpec, read_bulk, read_job
from .upcoming import upcoming
from .state import OUTCOMES, RETRY_PENDING, RUNNING, TIMED_OUT, Backfill, ControllerState, Job, Run
from .endings import RunEnd, RunSeen
from .expiries import Expiries
from .reconcile import NOTHING_ASKED, Asked, Hint, ends, turn
from .tick import Decision, JobTick, Launch, Replace, Retry
from .tick import run_id as numbered_run_id
from .transitions import Applied, adopt, apply

_KEEPS_RUNS = (Launch, Retry, Replace)  # the decisions that change the controller's records of runs
_NONE_ASKED: Mapping[str, int] = {}  # no manual run asked for
WORKER_OUTCOMES = frozenset({*OUTCOMES, TIMED_OUT})  # a worker that times its run reports timed_out too


class WorkerEnd(NamedTuple):
    """An attempt's end as its worker reported it, for the step to apply before any turn."""

    run_id: str
    attempt: int
    outcome: str  # succeeded, failed, or timed_out: a worker that times its run (the runner's wrapper)


@dataclass(frozen=True)
class JobStatus:
    last_schedule: int | None
    next_fire: int | None
    active: list[str]
    launched: int


class Controller:
    """The driver's one door to the core: its clock, its jobs and their runs, and the step that
    gives the due jobs their turns (the harness's, the fleet preview's and the runner's)."""

    def __init__(self, state: ControllerState | None = None) -> None:
        self.state = state if state is not None else ControllerState()
        self._timelines: dict[str, Timeline] = {}
        self._hints: dict[str, Hint] = {}  # what a job's last tick counted (its missed times), when it did
        self._agenda = Agenda()  # when each job is worth a look, and the waiting jobs' replays
        self._expiries = Expiries()  # when each active run times out
        # The runs the clock's last move timed out: a driver learns the core's verdict here even when
        # the history limits drop the run at once (failedJobsHistoryLimit 0).
        self.expired: list[str] = []
        self.held: list[str] = []  # the jobs whose hold changed their state at the last step
        # The jobs a run's failure paused (pauseOnFailures) by the last step or since the one before:
        # that step held them, and a driver holds them from then on.
        self.paused: list[str] = []
        self._pausing: list[str] = []  # the same, since the last step
        self.ended: list[RunEnd] = []  # what became of the ends the last step was handed, in order
        self._rebuild_indexes()

    # -- the clock ----------------------------------------------------------

    def advance(self, now: int) -> None:
        """Part 2 rule 1 and Part 3 rule 1: refuse a backwards clock, move it, expire runs."""
        clock = self.state.clock
        if clock is not None and now < clock:
            raise CronctlError("the time is earlier than the controller's clock", Code.CLOCK_WENT_BACKWARDS)
        if clock is None or now > clock:
            self.expired = []
        self.state.clock = now
        for at, run_id in self._expiries.due(now):
            run = self.state.runs.get(run_id)
            if run is not None and run.state in (RUNNING, RETRY_PENDING):  # a timed-out run is not retried
                self._end(run, None, at)
                self.expired.append(run.id)

    # -- creating jobs ------------------------------------------------------

    def create_job(self, now: int, name: object, expression: object, policy: object,
                   options: object = None) -> JobSpec:
        self.advance(now)
        return self.add_job(read_job(now, name, expression, policy, options, len(self.state.jobs)))

    def add_job(self, spec: JobSpec, launched: int = 0) -> JobSpec:
        """Add a validated job (drivers build their own specs, with options the harness lacks).
        ``launched``: the run numbers a driver used for the name before (a job of that name
        deleted), so that the new job's run ids follow them and none is reused."""
        if spec.name in self.state.jobs:
            raise CronctlError(f"name: a job named {spec.name!r} exists", Code.JOB_EXISTS)
        timeline = self._timeline_for(spec)
        if not timeline.fires and not spec.fires_from(spec.created_at):
            raise never_fires()
        self._add(spec, timeline)
        self.state.jobs[spec.name].state.launched = launched
        return spec

    def bulk_create(self, now: int, prefix: object, count: object, expressions: object,
                    policy: object, options: object = None) -> list[JobSpec]:
        """Jobs <prefix>-0 .. <prefix>-<count-1>, job i using expressions[i % len]: all or nothing
        (``spec.read_bulk`` says what ``options`` may be)."""
        self.advance(now)
        specs, used = read_bulk(now, prefix, count, expressions, policy, options, len(self.state.jobs))
        taken = next((spec.name for spec in specs if spec.name in self.state.jobs), None)
        if taken is not None:
            raise CronctlError(f"name: a job named {taken!r} exists", Code.JOB_EXISTS)
        # Jobs that share an expression share a timeline: same anchor, same zone.
        timelines = [self._timeline_for(spec) for spec in specs[:used]]
        if not all(timeline.fires for timeline in timelines):
            raise never_fires()
        for i, spec in enumerate(specs):
            self._add(spec, timelines[i % len(timelines)])
        return specs

    def _add(self, spec: JobSpec, timeline: Timeline) -> None:
        self.state.jobs[spec.name] = Job(spec)
        self._timelines[spec.name] = timeline
        self._agenda.wake(spec, timeline.first)

    # -- ticking --------------------------------------------------------------

    def tick(self, now: int) -> list[Decision]:
        self.advance(now)
        self.paused, self._pausing = [], []
        replays = self._replayed(now)
        if replays is not None:
            return list(replays.decisions)
        return [applied.decision for applied in self._look(now, (), _NONE_ASKED)]

    def step(self, now: int, holding: Collection[str] = (), triggers: Mapping[str, int] | None = None,
             ends: Sequence[WorkerEnd] = ()) -> list[Applied]:
        """A tick: first the attempts that ended (``ends``, as their workers report them, after
        the timeouts of the clock's move: ``core.reconcile.ends``), then each due job's turn
        (``core.reconcile.turn``): its decisions, applied, each saying whether it is news, its
        backfill's next runs, then the manual runs ``triggers`` asks for (schedule -> how many).
        The jobs named in ``holding`` are held (a driver's suspension, a node switched off): none
        of their times fires or is missed, their backfills wait, their runs' retries and manual
        runs go on; ``held`` names those whose hold changed their state. ``ended`` says what
        became of each end (its ``RunEnd``; none for an attempt not running), and ``paused`` the
        jobs that failures paused since the last step, which this step holds too."""
        self.advance(now)
        self.held, self.ended = [], [self._end(run, (end.outcome, now), now)
                                     for end in ends if (run := self._running(end)) is not None]
        self.paused, self._pausing = list(dict.fromkeys(self._pausing)), []
        if self.paused:  # from the failure that pauses it on, nothing the job schedules fires
            holding = {*holding, *self.paused}
        if not holding and not triggers:
            replays = self._replayed(now)
            if replays is not None:
                return list(replays.applied)
        return self._look(now, holding, triggers or _NONE_ASKED)

    def _look(self, now: int, holding: Collection[str], triggers: Mapping[str, int]) -> list[Applied]:
        """The due, waiting, held and triggered jobs' turns at ``now`` (the clock has moved)."""
        applied: list[Applied] = []
        for _, job, waiting in self._jobs_to_look_at(now, holding, triggers):
            if waiting is not None and job.state.backfill is None and not (holding or triggers):
                applied += self._agenda.repeats(job.spec.name)  # its turn, replayed: nothing else is asked of it
            else:
                applied += self._turn(job, now, waiting is not None, holding, triggers)
        return applied

    def _turn(self, job: Job, now: int, waiting: bool, holding: Collection[str],
              triggers: Mapping[str, int]) -> list[Applied]:
        """The job's turn, and the controller's records and indexes as it changes them."""
        name, state = job.spec.name, job.state
        asked = NOTHING_ASKED
        if state.backfill is not None or name in holding or name in triggers:
            asked = Asked(name in holding, triggers.get(name, 0), state.backfill)
        # A waiting job's decisions repeat (JobTick.holds): replayed without deciding again.
        hint = Hint(replay=self._agenda.repeats(name)) if waiting and not asked.held else self._hints.get(name)
        turned = turn(job.spec, state, self._timelines[name], now, asked, hint)
        if turned.held:
            self.held.append(name)
        if turned.tick is not None:
            for item in turned.applied:
                if type(item.decision) in _KEEPS_RUNS:  # skips and overflows, the most frequent, keep none
                    self._keep_runs(job, item.decision, now)
            self._record(job, turned.tick)
        if not (turned.backfilled or turned.manual):
            state.backfill = turned.backfill
            return turned.applied
        self._agenda.decide_again(job)  # a new active run: a replayed decision may no longer hold
        state.backfill = turned.backfill
        launched = [launch for launch, _ in (*turned.backfilled, *turned.manual)]
        for launch in launched:
            self._keep_runs(job, launch, now)
        return [*turned.applied, *map(Applied, launched)]

    def backfill(self, now: int, name: object, start: int, end: int, request: str) -> Backfill:
        """Ask for a backfill of the job's times in [start, end] (``core.backfill``); its first
        run starts at the next tick if the policy lets it. BackfillError if refused."""
        self.advance(now)
        job = self.find_job(name)
        job.state.backfill = backfills.begin(job.spec, request, start, end, now)
        self._agenda.decide_again(job)
        self._agenda.wake(job.spec, now)
        return job.state.backfill

    def wake(self, now: int, name: object) -> None:
        """Look at the job at the next tick: a driver's hold on it ended (its backfill goes on)."""
        job = self.find_job(name)
        self._agenda.decide_again(job)
        self._agenda.wake(job.spec, now)

    def backfill_preview(self, now: int, name: object, start: int, end: int) -> list[int]:
        """The times a backfill of [start, end] would run, oldest first; BackfillError if refused."""
        return backfills.preview(self.find_job(name).spec, start, end, now)

    def _jobs_to_look_at(self, now: int, holding: Collection[str],
                         triggers: Mapping[str, int]) -> list[Looked]:
        """The jobs whose turn comes at ``now``, in creation order (``Agenda.jobs_to_look_at``)."""
        return self._agenda.jobs_to_look_at(self.state.jobs, now, holding, triggers)

    def _replayed(self, now: int) -> Replays | None:
        """The tick's whole answer when it is the waiting jobs' replays (``Agenda.replayed``);
        None: the tick looks at the jobs."""
        return self._agenda.replayed(now)

    def _record(self, job: Job, result: JobTick) -> None:
        """Keep what the next tick of this job needs: what was counted, and whether it waits."""
        if result.missed is not None:
            self._hints[job.spec.name] = Hint(result.missed)
        else:
            self._hints.pop(job.spec.name, None)
        self._agenda.record(job, result)

    def _keep_runs(self, job: Job, decision: Decision, now: int) -> None:
        """The controller's records of runs, as a decision changes them."""
        if isinstance(decision, Launch):
            run = Run(decision.run_id, job.spec.name, decision.number, RUNNING, decision.scheduled_for, now)
            self.state.runs[run.id] = run
            self._expiries.expire_at(run, job.spec)
        elif isinstance(decision, Retry):
            run = self.state.runs[decision.run_id]
            run.state, run.attempt = RUNNING, decision.attempt
        elif isinstance(decision, Replace):
            del self.state.runs[decision.run_id]

    # -- a driver's changes to its jobs ------------------------------------------

    def edit(self, spec: JobSpec) -> bool:
        """A job's spec changed (its manifest was edited): later firings follow the new one,
        its active runs the new timeout; its name, anchor and index stay. Whether it changed."""
        job = self.find_job(spec.name)
        if spec == job.spec:
            return False
        if not self._timeline_for(spec).fires and not spec.fires_from(spec.created_at):
            raise never_fires()
        job.spec = spec
        self._look_again(job)
        self._timelines[spec.name] = self._timeline_for(spec)
        self._wake_first(job)
        for run_id in job.state.active:
            self._expiries.expire_at(self.state.runs[run_id], spec)
        return True

    def retire(self, name: object) -> Job:
        """The job leaves, with its runs (a driver's object was deleted); the job, as it was."""
        job = self.find_job(name)
        del self.state.jobs[job.spec.name]
        for run_id in [run.id for run in self.state.runs.values() if run.job == job.spec.name]:
            del self.state.runs[run_id]
            self._expiries.forget(run_id)
        self._look_again(job)
        self._timelines.pop(job.spec.name, None)
        self._agenda.remove(job.spec.name)
        return job

    def adopt_run(self, now: int, name: object, nominal: int, reason: str, attempt: int = 1) -> Run:
        """A run its driver finds going with no record of it (the runner's book lost): active again
        under the job's next number, its time dealt with, as a CronJob controller rebuilds
        ``status.active`` from its Jobs; its timeout counts from ``now``."""
        self.advance(now)
        job = self.find_job(name)
        number = job.state.launched + 1
        adopt(job.state, number, nominal, reason)
        run = Run(numbered_run_id(job.spec.name, number), job.spec.name, number, RUNNING, nominal, now,
                  attempt=attempt)
        job.state.active.append(run.id)
        self.state.runs[run.id] = run
        self._expiries.expire_at(run, job.spec)
        self._look_again(job)
        self._wake_first(job)
        return run

    def drop(self, run_id: object) -> None:
        """A run the driver cannot carry out leaves, as a replaced one does."""
        run = self.find_run(run_id)
        job = self.state.jobs[run.job]
        apply(job.state, Replace(run.job, run.id))
        del self.state.runs[run.id]
        self._expiries.forget(run.id)
        self._look_again(job)
        self._wake_first(job)

    def _look_again(self, job: Job) -> None:
        """Forget what the job's last tick decided: it is decided afresh when next looked at."""
        self._agenda.forget(job.spec.name)
        self._hints.pop(job.spec.name, None)

    # -- finishing runs ---------------------------------------------------------

    def finish(self, now: int, run_id: object, outcome: object, attempt: int | None = None,
               timed_by_worker: bool = False) -> Run:
        """The outcome of a run's running attempt (``attempt``, if given, must be that one).

        A failed attempt with retries left puts the run back in line
        (retry_pending); any other outcome finishes the run. ``timed_by_worker``:
        the run's worker enforces its timeout itself (the runner's wrapper, on
        its own clock), so ``timed_out`` is an outcome it may report.
        """
        self.advance(now)
        outcomes = WORKER_OUTCOMES if timed_by_worker else OUTCOMES
        if not isinstance(outcome, str) or outcome not in outcomes:
            raise CronctlError(f"outcome: {outcome!r} is not succeeded or failed", Code.INVALID_OUTCOME)
        run = self.find_run(run_id)
        if run.state != RUNNING or (attempt is not None and attempt != run.attempt):
            raise CronctlError(f"run {run.id} has no running attempt {attempt or ''}".rstrip(),
                               Code.RUN_NOT_ACTIVE)
        self._end(run, (outcome, now), now)
        return run

    def _running(self, end: WorkerEnd) -> Run | None:
        """The run of an end its worker reported, if the core has that attempt running (else the
        core ended it already: timed out, replaced) and the outcome is one a worker reports."""
        run = self.state.runs.get(end.run_id)
        if run is None or run.state != RUNNING or run.attempt != end.attempt:
            return None
        if end.outcome not in WORKER_OUTCOMES:
            raise CronctlError(f"outcome: {end.outcome!r} is not succeeded, failed or timed_out", Code.INVALID_OUTCOME)
        return run

    def _end(self, run: Run, reported: tuple[str, int] | None, at: int) -> RunEnd:
        """The run's end at ``at`` as the core rules it (``core.reconcile.ends``): the outcome
        reported, or its timeout's (None reported: its expiry); a failed attempt with retries
        left puts the run back in line (retry_pending). The controller's records follow."""
        job = self.state.jobs[run.job]
        self._agenda.decide_again(job)  # its decisions may have rested on this run being active
        [end], paused = ends(job.spec, job.state, [RunSeen(run.id, run.number, run.attempt, run.launched_at,
                                                           reported)], at)
        if paused:
            self._pausing.append(job.spec.name)
        if end.retry is not None:
            run.state = RETRY_PENDING
            self._agenda.wake_by(job.spec, end.retry.due)
            return end
        if job.state.queue or (job.state.backfill is not None and not job.state.backfill.done):
            self._agenda.wake(job.spec, at)  # a firing or a backfill waits for this run: at the next tick
        run.state, run.finished_at = end.outcome, end.at
        for dropped in end.dropped:
            del self.state.runs[dropped.run_id]
        return end

    # -- reads --------------------------------------------------------------------

    def find_job(self, name: object) -> Job:
        job = self.state.jobs.get(name) if isinstance(name, str) else None
        if job is None:
            raise CronctlError(f"no job named {name!r}", Code.JOB_NOT_FOUND)
        return job

    def find_run(self, run_id: object) -> Run:
        run = self.state.runs.get(run_id) if isinstance(run_id, str) else None
        if run is None:
            raise CronctlError(f"no run {run_id!r}", Code.RUN_NOT_FOUND)
        return run

    def job_status(self, name: object) -> JobStatus:
        job = self.find_job(name)
        clock = self.state.clock
        assert clock is not None
        next_fire = upcoming(job.spec, job.state, self._timelines[job.spec.name], clock).fires
        return JobStatus(job.state.last_schedule, next_fire, list(job.state.active), job.state.launched)

    def history(self, name: object) -> list[Run]:
        job = self.find_job(name)
        return [self.state.runs[item.run_id]
                for item in history_order(job.state.kept_succeeded, job.state.kept_failed)]

    # -- indexes ------------------------------------------------------------------

    def _timeline_for(self, spec: JobSpec) -> Timeline:
        return spec.timeline()

    def _rebuild_indexes(self) -> None:
        for job in self.state.jobs.values():
            self._timelines[job.spec.name] = self._timeline_for(job.spec)
            self._wake_first(job)
            for run_id in job.state.active:
                self._expiries.expire_at(self.state.runs[run_id], job.spec)

    def _wake_first(self, job: Job) -> None:
        self._agenda.wake_first(job, self._timelines[job.spec.name])
