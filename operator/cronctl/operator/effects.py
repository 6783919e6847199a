"""The effects of one reconcile, as data, and the order that makes every crash point safe.

A plan (``plan.plan``) is a list of these effects; ``apply`` carries them out
in that order and does nothing else. ``ordered`` says why the order is what it
is: a crash after any prefix of them leaves a world that the next reconcile
finishes exactly as the whole plan would have.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Union

from .manifests import EventSpec

@dataclass(frozen=True)
class CreateJob:
    manifest: dict[str, Any]  # AlreadyExists and ours: adopted
    # The manifest as JSON, the request's body, in a plan as a reconcile keeps it (``kept``): its
    # ``manifest`` is then only what the launch's record and an adoption read (``kept.as_recorded``).
    body: bytes | None = None


@dataclass(frozen=True)
class ResumeJob:
    name: str  # a Job held (suspended) for its jitter, whose second has come


@dataclass(frozen=True)
class StageJob:
    manifest: dict[str, Any]  # a staged Job: suspended, no run yet; AlreadyExists and ours: adopted
    body: bytes | None = None  # as CreateJob's


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


@dataclass(frozen=True)
class RecordReplaced(PatchStatus):
    """The status as it was, less the active runs a Replace ends: written before their Jobs are
    deleted (``ordered``), it changes ``active`` only."""


@dataclass(frozen=True)
class StatusChanges:
    """A status patch already made the change from the status its plan read (``kept``): what the
    loop carries out in place of a ``PatchStatus``, so that a reconcile need not keep the old status
    or the whole new one until it is carried out."""

    changes: dict[str, Any]
    runs: dict[str, Any] = field(default_factory=dict)  # the new status's RUN_FIELDS (``Plan.runs``)


@dataclass(frozen=True)
class RecordReplacedChanges(StatusChanges):
    """A Replace's record (``RecordReplaced``) made the change: as urgent, and not the new status."""


RECORDED_ACTIVE = "recordedActive"  # fleet mode's active runs, under a name no column shows (``status``)
# The fields of a status that say its runs: what the record of a carried-out plan reads of the new
# status and of the old (the log's fields of an Event about a run, the active gauge).
RUN_FIELDS = ("active", "history", "activeCount", RECORDED_ACTIVE)


def runs_of(status: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``status`` that say its runs (``RUN_FIELDS``)."""
    return {key: status[key] for key in RUN_FIELDS if key in status}

REPLACED, DROPPED, LEFT_OVER, UNSTAGED = "replaced", "dropped", "left-over", "unstaged"
NEVER_STARTED = "never-started"  # the waiting Job of a run that ended before its pool gave it a worker


@dataclass(frozen=True)
class DeleteJob:
    name: str  # NotFound: already done
    # REPLACED (Replace), DROPPED (retention), LEFT_OVER (by a crash after the status write) or
    # UNSTAGED (a staged Job that must not run: the core's staged_fate) or NEVER_STARTED (a pooled
    # Job whose run ended, timed out, while it waited: its pool must not start it)
    why: str


@dataclass(frozen=True)
class PostEvent:
    event: EventSpec


Effect = Union[ReleaseJob, ResumeJob, LabelJob, CreateJob, StageJob, PatchStatus, StatusChanges, DeleteJob, PostEvent]
# The writes that start runs at their second, when they lead a plan: the loop's first pass. A
# launch's create is one of them (with staging off, or a firing that could not be staged), so
# its status and Event follow once every launch of the second is out, as a release's do. So
# are the writes that must come before a launch: a Replace's record and its deletes.
URGENT = (RecordReplaced, RecordReplacedChanges, ReleaseJob, ResumeJob, CreateJob)
CLEARING = (REPLACED, LEFT_OVER)  # the deletes that go before a plan's launches (``ordered``)


def is_urgent(effect: Effect) -> bool:
    return isinstance(effect, URGENT) or isinstance(effect, DeleteJob) and effect.why in CLEARING


@dataclass
class Plan:
    effects: list[Effect] = field(default_factory=list)  # carried out in this order (see ``ordered``)
    wake_at: int | None = None  # the minute to look again (besides watch events)
    release_at: int | None = None  # the second the next held Job may start
    lost: list[str] = field(default_factory=list)  # runs active in status whose Job is not among the Jobs
    # The runs under way once it is carried out, as the core counts them (the status's activeCount,
    # which fleet mode does not write: metrics' cronctl_active_runs reads this). None: not counted.
    active: int | None = None

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
        while count < len(self.effects) and is_urgent(self.effects[count]):
            count += 1
        return Plan(effects=self.effects[:count]), replace(self, effects=self.effects[count:])

    @property
    def status(self) -> dict[str, Any] | None:
        """The new status, when it differs from the old (not a Replace's record before it)."""
        return next((e.status for e in reversed(self.effects)
                     if isinstance(e, PatchStatus) and not isinstance(e, RecordReplaced)), None)

    @property
    def runs(self) -> dict[str, Any] | None:
        """The new status's runs (``RUN_FIELDS``), when the plan writes a new status, whole or as
        its changes (``StatusChanges``); None: it writes none."""
        for effect in reversed(self.effects):
            if isinstance(effect, StatusChanges) and not isinstance(effect, RecordReplacedChanges):
                return effect.runs
            if isinstance(effect, PatchStatus) and not isinstance(effect, RecordReplaced):
                return runs_of(effect.status)
        return None

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
class Effects:
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


# The Events of a run that went as it should: fleet mode posts none (the Jobs, and the job
# controller's own Events, say as much), one write less per launch and per end.
ROUTINE = ("Launched", "Succeeded")


def fleet_events(events: list[PostEvent], fleet: bool) -> list[PostEvent]:
    """The Events a plan posts: in fleet mode, all but the routine Normal ones (``ROUTINE``);
    every Warning, and every other Normal (a suspension, a skip, a replace, a retry), stays."""
    if not fleet:
        return events
    return [post for post in events if not (post.event.type == "Normal" and post.event.reason in ROUTINE)]


def ordered(effects: Effects, status: dict[str, Any] | None,
            old: dict[str, Any] | None = None, counted: dict[str, Any] | None = None) -> list[Effect]:
    """The effects of one reconcile in the order that makes every crash point restart-safe.
    ``status`` is the new status (None: unchanged), ``old`` the status the plan read.
    ``counted`` (fleet mode): the counters of the runs launched so far, Jobs included, which
    a Replace's record carries (below).

    0. Clear the way, as CronJob does before it creates a Job, so that a
       replaced run and its successor never run at once: write ``old`` less
       the active runs a Replace ends (``RecordReplaced``: one status write
       more, for Replace only), then delete their Jobs (background
       propagation), then the Jobs of runs the status forgot already (left
       over by a crash). In fleet mode a launch writes no status, so the
       replaced run may be one the status never listed: the record then
       counts it (``counted``), else a crash after its Job's delete would give
       its number to the next run. A crash after the record leaves Jobs of runs no
       status names: the next reconcile deletes them as left over, never
       adopts them or counts them failed, and launches the minute (the
       record moved no schedule time); a crash after a delete, the same with
       fewer Jobs. Only the Replaced Event is lost, as an Event after a
       status write may be (7).
    1. Release staged Jobs, then resume held ones: the writes that start runs
       at their second go first after 0, so that the loop carries them out for
       every due schedule before anything else (``Plan.split``). A release
       records its launch as a create does (step 3): in one write it gives the
       staged Job its run number and what the launch decided besides it (the
       overflow it was launched past; a late launch's reason and minute). A
       crash after it leaves a launch the next reconcile adopts; before it, no
       launch at all. A resume changes no status, and is idempotent.
    1b. Relabel the Jobs another shard made (a schedule moved between
       shards): idempotent, and no status depends on it.
    2. Delete the staged Jobs that must not run. No status names them, so a
       crash on either side changes nothing; and a Job of the same name may be
       created in step 3 (a schedule edited at its very minute).
    3. Create Jobs. A Job records its launch where no crash can lose it:
       ``observe`` adopts a Job whose run the status does not know yet (its
       number and nominal time are on it), so a crash before the status write
       neither doubles a launch nor a retry's attempt. It also records what
       the same reconcile decided besides it: the overflow it was launched
       past, the trigger a manual run answers.
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
       status write posts none (the next reconcile decides again those the
       status does not record; a launch it adopts from its Job is not said again); after
       it, some may be lost, none is posted twice.

    Deleting a replaced run's Jobs with no record first (CronJob's order) is
    not safe here: a crash before the status write left a run the status calls
    active with its Job gone, which a restart can only count as failed
    (JobGone), pushing a real failure out of a short history and deleting its
    Job. Recording it in the new Job instead (``cronctl.dev/replaces``, as
    this operator did) saved the write but needed the new Job to exist
    first, so for a moment the old and the new ran at once.
    """
    clearing = [e for e in effects.deletes if e.why in CLEARING]
    deletes = [e for e in effects.deletes if e.why not in CLEARING]
    record = _record_replaced(old or {}, {e.name for e in clearing if e.why == REPLACED}, counted or {})
    patch: list[Effect] = [] if status is None else [PatchStatus(status)]
    return [*record, *clearing, *effects.releases, *effects.resumes, *effects.labels, *effects.unstaged,
            *effects.creates, *patch, *deletes, *effects.stages, *effects.events]


def _record_replaced(old: dict[str, Any], jobs: set[str], counted: dict[str, Any]) -> list[Effect]:
    """The write that ends, in the status, the active runs whose Jobs a Replace deletes; none
    when the status names none of them (a Job an older operator made names them replaced) and
    counts them already (``counted``: fleet mode's launches since its last write)."""
    key = RECORDED_ACTIVE if RECORDED_ACTIVE in old else "active"  # fleet mode's name, or the default's
    active = old.get(key) or []
    kept = [entry for entry in active if not (isinstance(entry, dict) and entry.get("name") in jobs)]
    uncounted = bool(jobs) and any(old.get(name) != value for name, value in counted.items())
    return [RecordReplaced({**old, **counted, key: kept})] if len(kept) < len(active) or uncounted else []
