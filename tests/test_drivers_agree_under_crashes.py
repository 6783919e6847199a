"""Parity with the harness holds with crashes mid-reconcile.

``test_drivers_agree`` drives one table of timelines through the run()
harness and through the operator's plan against the in-memory cluster
(``tests/operator/world.py``), and both count the same runs launched, times
skipped, runs replaced and overflows. Here the operator crashes in every
reconcile of every timeline of that table: it is killed after a prefix of
its plan's effects (none of them, all but the last, or some in between,
drawn from ``random.Random(<the row's name>)``, or by hypothesis), then
restarted, and reconciles again at the same minute, carrying out its whole
plan. As in ``tests/operator/test_crash_consistency.py``, what the prefix
did stays done (its Events posted) and the rest is not done: an Event the
crash cut off is lost, as in reality, unless the restart decides it again.

For every row, with staging off (as ``test_drivers_agree`` drives the
operator) and on (the operator's default), it proves:

- the counts a user sees are the harness's (``test_drivers_agree``'s
  comparison, its exception for the overflow row included): the status
  counters, which are the record, for runs launched, times skipped and
  overflows; for runs replaced, the runs a Replace's first status write
  dropped from ``active``, whose Jobs are deleted as replaced (or, after a
  crash between that write and the delete, as left over);
- the Events add up to those counts as in ``test_drivers_agree`` once the
  ones a crash cut off are added back: each counted thing was said by an
  Event posted or cut off, and no Event is posted twice;
- no run is launched twice: across the whole timeline, crashed prefixes
  included, one Job is created (or released from staging) per nominal time
  and attempt, and each is a launch the status counts.

The seeded crashes are shown to be crashes (they cut plans at every kind of
point, leave launches unrecorded and Events lost), and the one-launch check
to catch an operator that launches a run again after a crash.
"""
from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronctl.operator.effects import (LEFT_OVER, REPLACED, CreateJob, DeleteJob, Effect, PatchStatus, Plan, PostEvent,
                                      RecordReplaced, ReleaseJob)
from cronctl.operator.resource import ATTEMPT_LABEL, RUN_LABEL, SCHEDULED_ANNOTATION
from cronctl.operator.status import listed_active  # fleet mode's recordedActive too (tests/operator/test_fleet_mode.py)

from .operator.world import World
from .test_drivers_agree import TIMELINES, Counts, Timeline, cronschedule_spec, harness_counts, t

TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "main", "image": "busybox"}]}}}}

# The Events test_drivers_agree counts, in the order of Counts' fields.
REASONS = ("Launched", "Skipped", "Replaced", "TooManyMissedSchedules")

# How many of a plan's effects are carried out before the crash, given how many it has.
CrashPoint = Callable[[int], int]

STAGING = pytest.mark.parametrize("staging", [False, True], ids=["unstaged", "staged"])
EVERY_ROW = pytest.mark.parametrize("timeline", TIMELINES, ids=str)


@dataclass
class Crashed:
    """A timeline the operator crashed through: the world it left, and what the test saw happen."""

    world: World
    launches: list[tuple[str, str]] = field(default_factory=list)  # (nominal time, attempt) of each Job
    # created, or released from staging, as a run: crashed prefixes included
    replaces: set[str] = field(default_factory=set)  # the runs a Replace's status write dropped from active
    deleted_as_replaced: set[str] = field(default_factory=set)  # the Jobs deleted as replaced
    deleted_left_over: set[str] = field(default_factory=set)  # the Jobs deleted as left over
    posted: list[tuple[str, str]] = field(default_factory=list)  # the Events carried out: (reason, message)
    cut_off: list[tuple[str, str]] = field(default_factory=list)  # the Events of a plan after its crash point
    crashes: list[tuple[int, int]] = field(default_factory=list)  # (effects carried out, effects planned)
    unrecorded: int = 0  # crashes after a launch and before the status write that records it

    @property
    def counts(self) -> Counts:
        """What a user sees: the status counters, and the runs replaced."""
        status = self.world.schedule["status"]
        return Counts(status["launched"], status["skipped"], len(self.replaces), status["overflowed"])

    @property
    def lost(self) -> set[tuple[str, str]]:
        """The Events a crash cut off that no restart posted."""
        return set(self.cut_off) - set(self.posted)

    @property
    def said(self) -> Counts:
        """The counts as test_drivers_agree reads them from the Events: those posted, and those a
        crash cut off (an Event decided again by the restart is one Event)."""
        decided = Counter(reason for reason, _ in {*self.posted, *self.cut_off})
        return Counts(*(decided[reason] for reason in REASONS))

    def carry_out(self, effects: list[Effect]) -> tuple[int, list[str]]:
        """Carry out ``effects`` in order, as ``apply`` does (it stops at a staged Job that is gone):
        how many were carried out, and the Jobs that started a run."""
        started: list[str] = []
        for done, effect in enumerate(effects):
            if isinstance(effect, ReleaseJob) and effect.name not in self.world.jobs:
                return done, started
            if isinstance(effect, (CreateJob, ReleaseJob)):
                job = effect.manifest if isinstance(effect, CreateJob) else self.world.jobs[effect.name]
                metadata = job["metadata"]
                nominal, attempt = metadata["annotations"][SCHEDULED_ANNOTATION], metadata["labels"][ATTEMPT_LABEL]
                self.launches.append((nominal, attempt))
                started.append(metadata["name"])
            elif isinstance(effect, RecordReplaced):
                active = {entry["name"] for entry in listed_active(self.world.schedule["status"])}
                self.replaces.update(active - {entry["name"] for entry in listed_active(effect.status)})
            elif isinstance(effect, DeleteJob) and effect.why in (REPLACED, LEFT_OVER):
                (self.deleted_as_replaced if effect.why == REPLACED else self.deleted_left_over).add(effect.name)
            elif isinstance(effect, PostEvent):
                self.posted.append((effect.event.reason, effect.event.message))
            self.world.carry_out([effect])
        return len(effects), started


def crash_through(timeline: Timeline, staging: bool, crash_point: CrashPoint,
                  world_type: type[World] = World) -> Crashed:
    """test_drivers_agree's operator driver, the operator crashing at ``crash_point`` in each
    minute's reconcile (the first one included) and restarted to reconcile again at once."""
    world = world_type({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                        "metadata": {"name": "job", "namespace": "team-a", "uid": "uid-1", "generation": 1},
                        "spec": {**cronschedule_spec(timeline), "jobTemplate": TEMPLATE}}, staging=staging)
    crashed = Crashed(world)
    ends: dict[int, list[str]] = {}
    for now in range(t(timeline.start), t(timeline.end) + 1):
        for name in ends.pop(now, []):  # the Job completes just before the minute's reconcile
            if name in world.jobs and not world.jobs[name].get("status"):
                world.finish(name, "Complete", now)
        effects = world.plan(now).effects
        cut = crash_point(len(effects))
        assert 0 <= cut < len(effects) or cut == len(effects) == 0
        done, started = crashed.carry_out(effects[:cut])  # then the process dies
        crashed.crashes.append((done, len(effects)))
        crashed.cut_off += [(e.event.reason, e.event.message) for e in effects[done:] if isinstance(e, PostEvent)]
        if started and not any(isinstance(effect, PatchStatus) for effect in effects[:done]):
            crashed.unrecorded += 1
        _, more = crashed.carry_out(world.plan(now).effects)  # the restarted operator, its whole plan
        for name in started + more:
            ends.setdefault(now + timeline.run_minutes, []).append(name)
    return crashed


def seeded_crash_points(timeline: Timeline) -> CrashPoint:
    """A crash in each reconcile, drawn from the row's name: before the first effect (as if the
    restart alone had reconciled), after all but the last, or anywhere in between."""
    rng = random.Random(timeline.name)

    def crash_point(planned: int) -> int:
        kind = rng.choice(("none done", "all but the last", "in between"))
        if planned == 0 or kind == "none done":
            return 0
        if kind == "all but the last" or planned < 3:
            return planned - 1
        return rng.randint(1, planned - 2)

    return crash_point


_HARNESS: dict[str, Counts] = {}
_SEEDED: dict[tuple[str, bool], Crashed] = {}


def harness_of(timeline: Timeline) -> Counts:
    if timeline.name not in _HARNESS:
        _HARNESS[timeline.name] = harness_counts(timeline)
    return _HARNESS[timeline.name]


def seeded(timeline: Timeline, staging: bool) -> Crashed:
    """The row under its seeded crashes (once a session: the tests below read it)."""
    if (timeline.name, staging) not in _SEEDED:
        _SEEDED[timeline.name, staging] = crash_through(timeline, staging, seeded_crash_points(timeline))
    return _SEEDED[timeline.name, staging]


# -- the rules ------------------------------------------------------------------------------------


def assert_counts_as_the_harness(timeline: Timeline, crashed: Crashed) -> None:
    """test_drivers_agree's comparison of the operator with the harness, with its overflow-rule
    exception (the harness keeps the seed's rule: that row is compared with its expected counts)."""
    assert crashed.deleted_as_replaced <= crashed.replaces <= crashed.deleted_as_replaced | crashed.deleted_left_over, \
        "a run replaced is one whose Job was deleted as replaced (or as left over, by a crash after the record)"
    counts = crashed.counts
    if timeline.harness_expected is None:
        assert counts == harness_of(timeline), f"crashes (carried out, planned): {crashed.crashes}"
    if timeline.expected is not None:
        assert counts == timeline.expected, f"crashes (carried out, planned): {crashed.crashes}"


def assert_each_event_posted_once_unless_a_crash_cut_it_off(crashed: Crashed) -> None:
    """Every Event the operator decided reports one thing the counts count (the status counters
    as test_drivers_agree checks them against the Events); none is posted twice."""
    twice = sorted(event for event, times in Counter(crashed.posted).items() if times > 1)
    assert twice == [], "Events posted twice"
    assert crashed.said == crashed.counts, f"Events lost to crashes: {sorted(crashed.lost)}"


def assert_no_run_launched_twice(crashed: Crashed) -> None:
    twice = sorted(key for key, times in Counter(crashed.launches).items() if times > 1)
    assert twice == [], "Jobs created (or released) twice for these (nominal time, attempt)"
    assert len(crashed.launches) == crashed.counts.launched, "a Job created (or released) is a launch counted"


@STAGING
@EVERY_ROW
def test_the_counts_a_user_sees_are_the_harnesss_though_the_operator_crashes_mid_reconcile(
        timeline: Timeline, staging: bool) -> None:
    assert_counts_as_the_harness(timeline, seeded(timeline, staging))


@STAGING
@EVERY_ROW
def test_each_thing_counted_was_said_by_an_event_and_none_is_posted_twice_though_crashes_cut_some_off(
        timeline: Timeline, staging: bool) -> None:
    assert_each_event_posted_once_unless_a_crash_cut_it_off(seeded(timeline, staging))


@STAGING
@EVERY_ROW
def test_no_run_is_launched_twice_though_the_operator_crashes_mid_reconcile(timeline: Timeline,
                                                                          staging: bool) -> None:
    assert_no_run_launched_twice(seeded(timeline, staging))


@STAGING
def test_the_seeded_crashes_are_crashes_that_cut_plans_anywhere(staging: bool) -> None:
    """The tests above would pass without crashes otherwise: every reconcile with effects is cut
    short, each row's after part of a plan somewhere; across the table at the very start, before
    the last effect and in between; launches are left unrecorded (the restart must adopt them,
    not launch them again), and Events of each kind counted are cut off and lost."""
    rows = {timeline.name: seeded(timeline, staging) for timeline in TIMELINES}
    for name, crashed in rows.items():
        assert all(done < planned for done, planned in crashed.crashes if planned), name
        assert any(done > 0 for done, _ in crashed.crashes), name
    crashes = [(done, planned) for crashed in rows.values() for done, planned in crashed.crashes if planned]
    assert any(done == 0 for done, _ in crashes)
    assert any(done == planned - 1 > 0 for done, planned in crashes)
    assert any(0 < done < planned - 1 for done, planned in crashes)
    assert sum(crashed.unrecorded for crashed in rows.values()) > 0
    assert {"Launched", "Skipped", "Replaced"} <= {reason for crashed in rows.values() for reason, _ in crashed.lost}


# The rows with counts of their own that last at most two hours: hypothesis crashes them anywhere.
FEW = [timeline for timeline in TIMELINES
       if timeline.expected is not None and t(timeline.end) - t(timeline.start) <= 120]


@settings(max_examples=20, deadline=None, database=None)
@given(timeline=st.sampled_from(FEW), staging=st.booleans(),
       fractions=st.lists(st.floats(min_value=0.0, max_value=1.0, exclude_max=True), min_size=1, max_size=24))
def test_any_crash_points_keep_the_harnesss_counts_each_event_once_and_one_launch_a_run(
        timeline: Timeline, staging: bool, fractions: list[float]) -> None:
    """Each reconcile crashes after the fraction of its plan that comes next (cyclically) in ``fractions``."""
    cycle = itertools.cycle(fractions)
    crashed = crash_through(timeline, staging, lambda planned: int(next(cycle) * planned))
    assert_counts_as_the_harness(timeline, crashed)
    assert_each_event_posted_once_unless_a_crash_cut_it_off(crashed)
    assert_no_run_launched_twice(crashed)


class Forgetful(World):
    """An operator that, restarted, does not adopt the Job of a launch its crash left unrecorded
    (it ignores the run Jobs numbered past the status's ``launched``): it launches the run again."""

    def plan(self, now: int, second: float | None = None) -> Plan:
        launched = (self.schedule.get("status") or {}).get("launched", 0)
        hidden = {name: job for name, job in self.jobs.items()
                  if int((job["metadata"].get("labels") or {}).get(RUN_LABEL, 0)) > launched}
        for name in hidden:
            del self.jobs[name]
        try:
            return super().plan(now, second)
        finally:
            self.jobs.update(hidden)


@STAGING
def test_a_restart_that_launched_again_what_its_crash_had_launched_fails_the_one_launch_check(
        staging: bool) -> None:
    """Killed right after the first effect (a launch's create or release, in a minute that
    launches), a Forgetful operator creates that run's Job again."""
    timeline = TIMELINES[0]
    crashed = crash_through(timeline, staging, lambda planned: min(planned - 1, 1) if planned else 0, Forgetful)
    assert crashed.unrecorded > 0
    with pytest.raises(AssertionError, match="twice"):
        assert_no_run_launched_twice(crashed)
