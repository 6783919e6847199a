"""kubectl cronctl on a fleet-mode status (issue 47): describe, history and next read the
launches off the Jobs, and show what the default mode's status would have said."""

from __future__ import annotations

import copy

from cronctl.plugin.launches import in_fleet_mode, with_launches
from cronctl.plugin.views import describe_lines, history_lines, next_lines

from ..operator.world import TEMPLATE, World

SHOWN = ("lastScheduleTime", "activeCount", "launched", "nextScheduleTimes")


def twins(until: int) -> tuple[World, World]:
    """The same */10 schedule (runs of 13 minutes, Allow: two at once at times; the run of 00:20 fails) in the default mode
    and in fleet mode, reconciled every minute up to ``until``."""
    worlds = []
    for fleet in (False, True):
        world = World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                       "metadata": {"name": "sync", "namespace": "team-a", "uid": "uid-1", "generation": 1,
                                    "creationTimestamp": "1970-01-01T00:00:00Z"},
                       "spec": {"schedule": "*/10 * * * *", "jobTemplate": copy.deepcopy(TEMPLATE)}}, fleet=fleet)
        for now in range(0, until + 1):
            for name, job in world.jobs.items():
                if now == int(name.rsplit("-", 1)[1]) + 13 and not job.get("status"):
                    world.finish(name, "Failed" if now == 33 else "Complete", now)
            world.reconcile(now)
        worlds.append(world)
    return worlds[0], worlds[1]


def test_a_fleet_status_read_with_its_jobs_says_what_the_default_modes_says() -> None:
    default, fleet = twins(44)
    assert not in_fleet_mode(default.schedule) and in_fleet_mode(fleet.schedule)
    assert all(fleet.schedule["status"].get(key) is None for key in ("lastScheduleTime", "activeCount"))
    seen = with_launches(fleet.schedule, fleet.jobs.values(), 44)["status"]
    want = default.schedule["status"]
    assert {key: seen.get(key) for key in SHOWN} == {key: want.get(key) for key in SHOWN}
    assert [run["name"] for run in seen["active"]] == [run["name"] for run in want["active"]]
    assert [(run["name"], run["state"]) for run in seen["history"]] == \
        [(run["name"], run["state"]) for run in want["history"]]


def test_describe_history_and_next_of_a_fleet_schedule_show_its_launches() -> None:
    _, fleet = twins(44)
    seen = with_launches(fleet.schedule, fleet.jobs.values(), 44)
    described = "\n".join(describe_lines(seen, []))
    assert "Last Schedule:      1970-01-01T00:40:00Z" in described and "sync-40" in described
    assert next_lines(seen)[1].startswith("1970-01-01T00:50:00Z")
    assert any(line.startswith("3 ") and "1970-01-01T00:43:00Z" in line for line in history_lines(seen))


def test_a_default_mode_status_is_left_as_it_is() -> None:
    default, _ = twins(44)
    assert not in_fleet_mode(default.schedule)


def test_a_suspended_fleet_schedule_has_no_next_times_and_says_why() -> None:
    _, fleet = twins(44)
    fleet.schedule["spec"]["suspend"] = True
    fleet.reconcile(45)
    seen = with_launches(fleet.schedule, fleet.jobs.values(), 45)
    assert not seen["status"].get("nextScheduleTimes")
    assert "suspended" in next_lines(seen)[0]
