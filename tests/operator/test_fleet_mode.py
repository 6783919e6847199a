"""Fleet mode (issue 47): the status carries no per-launch field; what a person acts on is still
written when it changes; the Jobs record the launches, so a crash launches nothing twice.

The rule is ``status.fleet_status`` (pure, a table below); the operator's plans in fleet mode run
against the in-memory cluster (``world.py``), and the crash table of
``tests/test_drivers_agree_under_crashes.py`` is driven in fleet mode for some of its rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cronctl.operator.effects import PatchStatus
from cronctl.operator.observe import observe
from cronctl.operator.status import FLEET_UNWRITTEN, RECORDED_ACTIVE, RECORDED_SCHEDULE, fleet_status, to_write

from ..test_drivers_agree import BEYOND_THE_HARNESS, TIMELINES, Counts, Timeline
from ..test_drivers_agree_under_crashes import (Crashed, assert_counts_as_the_harness,
                                                assert_each_event_posted_once_unless_a_crash_cut_it_off,
                                                assert_no_run_launched_twice, crash_through, seeded_crash_points)
from .world import TEMPLATE, World, every_ten_minutes

RUN = {"name": "sync-10", "run": 1, "attempt": 1, "state": "running", "job": "sync-10",
       "scheduledTime": "2026-01-01T00:10:00Z", "startedTime": "2026-01-01T00:10:00Z"}
READY = [{"type": "Ready", "status": "True", "reason": "Scheduled"}]
# A status as fleet mode wrote it (old), and as status_of makes it (new: every field).
BASE = {"version": 3, "launched": 0, "conditions": READY, "skipped": 0, RECORDED_SCHEDULE: "2026-01-01T00:00:00Z"}
NEW = {**BASE, "active": [], "nextFireTime": "2026-01-01T00:10:00Z", "activeCount": 0, RECORDED_SCHEDULE: None}
LAUNCHED = {**NEW, "launched": 1, "active": [RUN], "lastScheduleTime": "2026-01-01T00:10:00Z",
            "nextFireTime": "2026-01-01T00:20:00Z", "activeCount": 1}
RUNNING = {**BASE, "launched": 1, RECORDED_ACTIVE: [RUN], RECORDED_SCHEDULE: "2026-01-01T00:10:00Z"}


@pytest.mark.parametrize("old, new, on_jobs, writes", [
    # a launch whose Job records it: nothing written
    (BASE, LAUNCHED, {"sync-10"}, False),
    # a launch recorded by the status alone (a jittered release from staging waits for its second)
    (BASE, LAUNCHED, set(), True),
    # the run ends: written (history, the active run gone)
    (RUNNING, {**LAUNCHED, "active": [], "activeCount": 0, "lastSuccessfulTime": "2026-01-01T00:12:00Z",
               "history": [{"name": "sync-10"}]}, set(), True),
    # the run's attempt failed and waits for its retry: written (a person acts on failures)
    (RUNNING, {**LAUNCHED, "active": [{**RUN, "state": "retryPending"}]}, {"sync-10"}, True),
    # the run goes on: nothing written
    (RUNNING, LAUNCHED, {"sync-10"}, False),
    # a condition changes (suspended): written
    (BASE, {**NEW, "conditions": [{**READY[0], "reason": "Suspended"}], "suspendReason": "x"}, set(), True),
    # a time skipped: written
    (BASE, {**NEW, "skipped": 1, "lastSkippedTime": "2026-01-01T00:10:00Z"}, set(), True),
    # nothing changes but the next fire time: nothing written
    (BASE, {**NEW, "nextFireTime": "2026-01-01T00:30:00Z", "nextScheduleTimes": [{"time": "x"}]}, set(), False),
    # a status the default mode wrote: its shown per-launch fields are removed once
    ({**NEW, "lastScheduleTime": "2026-01-01T00:00:00Z"}, NEW, set(), True),
])
def test_fleet_mode_writes_what_a_person_acts_on_and_no_launch_alone(old, new, on_jobs, writes) -> None:
    written = fleet_status(old, new, frozenset(on_jobs))
    assert (written is not None) == writes
    if written is not None:
        assert all(written.get(key) is None for key in FLEET_UNWRITTEN)


def test_a_fleet_write_keeps_where_times_count_from_off_the_columns() -> None:
    written = fleet_status(BASE, {**LAUNCHED, "skipped": 1}, frozenset({"sync-10"}))
    assert written is not None and written[RECORDED_SCHEDULE] == "2026-01-01T00:10:00Z"
    assert written["lastScheduleTime"] is None and written["activeCount"] is None  # removed, if there
    assert written["active"] is None and written[RECORDED_ACTIVE] == [RUN]  # no ATTEMPT column reads it
    state = observe(written, [], "uid-1").state
    assert state.last_schedule is not None  # a restart counts missed times from it, not from creation
    assert state.active == ["sync-10"]  # and knows the run under way (its Job gone: lost, not forgotten)


def test_fleet_mode_posts_no_routine_event_and_every_other() -> None:
    from cronctl.operator.effects import PostEvent, fleet_events
    from cronctl.operator.manifests import EventSpec

    events = [PostEvent(EventSpec(kind, reason, "m")) for kind, reason in (
        ("Normal", "Launched"), ("Normal", "Succeeded"), ("Warning", "Failed"), ("Normal", "Skipped"),
        ("Warning", "MissedSchedule"), ("Normal", "Replaced"), ("Normal", "Suspended"), ("Warning", "JobGone"))]
    kept = [post.event.reason for post in fleet_events(events, fleet=True)]
    assert kept == ["Failed", "Skipped", "MissedSchedule", "Replaced", "Suspended", "JobGone"]
    assert fleet_events(events, fleet=False) == events


def test_the_default_mode_writes_every_change() -> None:
    assert to_write(NEW, LAUNCHED) == LAUNCHED
    assert to_write(BASE, LAUNCHED, fleet=True, on_jobs=frozenset({"sync-10"})) is None


@dataclass
class FleetWorld(World):
    fleet: bool = True


def _status_writes(world: World, minutes: range) -> list[int]:
    return [now for now in minutes if any(isinstance(e, PatchStatus) for e in world.reconcile(now).effects)]


def test_a_fleet_schedule_launches_without_a_status_write_and_writes_when_a_run_ends() -> None:
    """*/10 with runs of 3 minutes: each launch creates its Job and writes no status; each end
    (kept in history) writes one; the columns stay empty; nothing is launched or said twice."""
    world = FleetWorld({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                        "metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "generation": 1},
                        "spec": {"schedule": "*/10 * * * *", "concurrencyPolicy": "Forbid", "jobTemplate": TEMPLATE}})
    writes = _status_writes(world, range(0, 1))
    for now in range(1, 61):
        for name, job in world.jobs.items():
            started = int(name.rsplit("-", 1)[1])
            if now == started + 3 and not job.get("status"):
                world.finish(name, "Complete", now)
        writes += _status_writes(world, range(now, now + 1))
    assert sorted(world.jobs) == [f"sync-{m}" for m in (10, 20, 30, 40, 50, 60)][-len(world.jobs):]
    assert writes == [0, 13, 23, 33, 43, 53]  # the first look, the ends; not the launches
    status = world.schedule["status"]
    assert all(status.get(key) is None for key in FLEET_UNWRITTEN)
    assert not [e for e in world.events if e.reason in ("Launched", "Succeeded")]  # routine: not posted
    assert observe(status, world.jobs.values(), "uid-1").state.launched == 6


def test_the_default_mode_writes_at_each_launch_as_before() -> None:
    world = every_ten_minutes(0, concurrencyPolicy="Forbid")
    assert 10 in _status_writes(world, range(1, 12))
    assert world.schedule["status"]["lastScheduleTime"]


class FleetCrashed(Crashed):
    @property
    def said(self) -> Counts:
        """The counts the Events say: fleet mode posts no routine Launched Event (none may be
        posted), so its launches are the counted ones; the rest as in the default mode."""
        assert not [event for event in {*self.posted, *self.cut_off} if event[0] == "Launched"]
        said = super().said
        return said._replace(launched=self.counts.launched)

    @property
    def counts(self) -> Counts:
        """The launches as a user of fleet mode reads them: the status with the Jobs (its
        ``launched`` is as of its last write; the Jobs record those since)."""
        status = self.world.schedule["status"]
        state = observe(status, self.world.jobs.values(), "uid-1").state
        return Counts(state.launched, status["skipped"], len(self.replaces), status["overflowed"])


FLEET_ROWS = TIMELINES  # every row of the crash table


@pytest.mark.parametrize("staging", [False, True], ids=["staging off", "staging on"])
@pytest.mark.parametrize("timeline", FLEET_ROWS, ids=str)
def test_fleet_mode_under_crashes_keeps_the_counts_each_event_once_and_one_launch_a_run(
        timeline: Timeline, staging: bool) -> None:
    """The crash table's rules, fleet mode on: the Jobs carry the launches the status does not."""
    crashed = crash_through(timeline, staging, seeded_crash_points(timeline), FleetWorld)
    crashed.__class__ = FleetCrashed
    # A replaced run the status never listed (its launch was not written) has no record that drops
    # it from ``active`` (the record counts it instead): its Job's delete as replaced, or as left
    # over after a crash between the record and the delete, is its replacement (once: a set).
    # (Other rows delete left over the Jobs retention dropped, after a crash past the status write.)
    crashed.replaces |= crashed.deleted_as_replaced | (crashed.deleted_left_over if timeline.policy == "replace"
                                                       else set())
    assert any(done > 0 for done, _ in crashed.crashes)
    assert_counts_as_the_harness(timeline, crashed)
    assert_each_event_posted_once_unless_a_crash_cut_it_off(crashed)
    assert_no_run_launched_twice(crashed)


@pytest.mark.parametrize("staging", [False, True], ids=["staging off", "staging on"])
@pytest.mark.parametrize("timeline", BEYOND_THE_HARNESS, ids=str)
def test_fleet_mode_under_crashes_keeps_windows_and_run_limits(timeline: Timeline, staging: bool) -> None:
    """Windows and maxRuns (the harness has neither: their expected counts), fleet mode on: a run
    limit counts the launches the Jobs record, never one more, however the crashes fall."""
    crashed = crash_through(timeline, staging, seeded_crash_points(timeline), FleetWorld)
    crashed.__class__ = FleetCrashed
    crashed.replaces |= crashed.deleted_as_replaced | (crashed.deleted_left_over if timeline.policy == "replace"
                                                       else set())
    assert crashed.counts == timeline.expected, crashed.crashes
    assert_each_event_posted_once_unless_a_crash_cut_it_off(crashed)
    assert_no_run_launched_twice(crashed)


@pytest.mark.parametrize("flag, fleet", [("--no-fleet", False), ("--fleet", True), (None, None)])
def test_the_fleet_flag_becomes_the_processs_option(flag: str | None, fleet: bool | None) -> None:
    from cronctl.cli import _parser, operator_options

    options = operator_options(_parser().parse_args(["operator", "--no-leader-election", *([flag] if flag else [])]))
    assert options.fleet == fleet  # None: CRONCTL_FLEET_MODE decides


@pytest.mark.parametrize("environ, expected", [({}, False), ({"CRONCTL_FLEET_MODE": "on"}, True),
                                               ({"CRONCTL_FLEET_MODE": " Off "}, False)])
def test_fleet_mode_is_off_unless_the_environment_turns_it_on(environ: dict[str, str], expected: bool) -> None:
    from cronctl.operator.handlers import fleet_from_environment

    assert fleet_from_environment(environ) is expected
    with pytest.raises(ValueError, match="CRONCTL_FLEET_MODE"):
        fleet_from_environment({"CRONCTL_FLEET_MODE": "half"})


def test_the_loop_launches_in_fleet_mode_without_a_status_write_when_told() -> None:
    """The Scheduler hands its mode to every plan it makes (ahead of the second and at it): the
    hour's Jobs are made and no status shows a launch; without the mode, every status does."""
    import asyncio

    from cronctl.operator.loop import Scheduler

    from .test_staging import A_MINUTE_BEFORE_THE_HOUR, THE_HOUR, StoppedClock, Worlds, seen

    def hour(fleet: bool) -> list[dict]:
        worlds = {}
        for index in range(3):
            world = seen("0 * * * *", schedule=f"s{index}")
            world.fleet = fleet
            world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
            worlds[("team-a", f"s{index}")] = world
        cluster = Worlds(worlds)

        async def run() -> None:
            scheduler = Scheduler(cluster, StoppedClock(THE_HOUR * 60 + 0.1), fleet=fleet)
            for key in worlds:
                scheduler.touch(key)
            task = asyncio.create_task(scheduler.run())
            for _ in range(3000):
                await asyncio.sleep(0.01)
                if all(world.jobs for world in worlds.values()):
                    break
            await asyncio.sleep(0.2)  # the second pass (status, Events)
            task.cancel()
            scheduler._threads.shutdown(wait=True)

        asyncio.run(run())
        assert all(len(world.jobs) == 1 for world in worlds.values())
        return [world.schedule["status"] for world in worlds.values()]

    assert all(status.get("lastScheduleTime") is None and status.get("activeCount") is None
               for status in hour(fleet=True))
    assert all(status.get("lastScheduleTime") and status.get("activeCount") == 1 for status in hour(fleet=False))


def test_the_crd_keeps_what_fleet_mode_writes() -> None:
    """The API server prunes a status field its CRD does not declare: recordedScheduleTime and
    recordedActive are declared, in the operator's CRD and the chart's alike."""
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    for path in ("operator/cronctl/cronschedule-crd.yaml", "charts/cronctl/files/cronschedule-crd.yaml"):
        crd = yaml.safe_load((root / path).read_text())
        status = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
        assert RECORDED_SCHEDULE in status and RECORDED_ACTIVE in status, path
        assert status[RECORDED_ACTIVE]["items"] == status["active"]["items"], path


@pytest.mark.parametrize("fleet", [True, False], ids=["fleet", "default"])
def test_the_active_runs_gauge_counts_the_runs_under_way_in_either_mode(fleet: bool) -> None:
    """cronctl_active_runs read status.activeCount, which fleet mode never writes: it stayed 0 while
    runs ran. It reads the plan's count: 1 from each launch (no status write in fleet mode) to the
    run's end, then 0, as in the default mode."""
    from cronctl.operator.metrics import Metrics

    world = FleetWorld({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                        "metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "generation": 1},
                        "spec": {"schedule": "*/10 * * * *", "jobTemplate": TEMPLATE}}, fleet=fleet)
    metrics, gauged = Metrics(), {}
    for now in range(0, 31):
        for name, job in world.jobs.items():
            if now == int(name.rsplit("-", 1)[1]) + 3 and not job.get("status"):
                world.finish(name, "Complete", now)
        before = world.schedule.get("status")
        metrics.record("team-a", "sync", world.reconcile(now), now * 60.0, before)
        gauged[now] = metrics.per_schedule.active(("team-a", "sync"))
    assert [now for now, active in gauged.items() if active] == [10, 11, 12, 20, 21, 22, 30]
    assert set(gauged.values()) == {0.0, 1.0}
