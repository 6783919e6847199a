"""What a CronSchedule's status says of its window (startTime, endTime) and its run limit (maxRuns).

After the end or the last run the schedule is Ready=True with a condition
Ended and a reason (EndTimeReached, MaxRunsReached), its next fire time is
null, and status.remainingRuns counts down; a restart loses none of it.
"""

from __future__ import annotations

from typing import Any

from cronctl.core.times import parse_time
from cronctl.operator.effects import CreateJob
from cronctl.operator.resource import rfc3339

from .world import World, every_ten_minutes


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")


def world(**spec: Any) -> World:
    return every_ten_minutes(CREATED, **spec)


def condition(world: World, kind: str) -> dict[str, Any] | None:
    return next((c for c in world.schedule["status"]["conditions"] if c["type"] == kind), None)


def launches(world: World, through: str) -> list[str]:
    made = []
    for now in range(CREATED + 1, t(through) + 1):
        made += [e.manifest["metadata"]["name"] for e in world.reconcile(now).effects if isinstance(e, CreateJob)]
    return made


def test_remaining_runs_count_down_and_the_upcoming_times_stop_at_the_last() -> None:
    schedule = world(maxRuns=3)
    assert schedule.schedule["status"]["remainingRuns"] == 3
    launches(schedule, "2024-03-01T00:10")
    status = schedule.schedule["status"]
    assert (status["scheduledRuns"], status["remainingRuns"]) == (1, 2)
    assert [entry["time"] for entry in status["nextScheduleTimes"]] == [rfc3339(t("2024-03-01T00:20")),
                                                                         rfc3339(t("2024-03-01T00:30"))]
    assert condition(schedule, "Ended")["status"] == "False"  # type: ignore[index]


def test_after_the_last_run_the_schedule_has_ended_and_stays_ready() -> None:
    schedule = world(maxRuns=2)
    assert len(launches(schedule, "2024-03-01T01:00")) == 2
    status = schedule.schedule["status"]
    ended = condition(schedule, "Ended")
    assert ended is not None and (ended["status"], ended["reason"]) == ("True", "MaxRunsReached")
    assert condition(schedule, "Ready")["status"] == "True"  # type: ignore[index]
    assert status["remainingRuns"] == 0 and status.get("nextFireTime") is None
    assert not status.get("nextScheduleTimes")


def test_a_manual_run_does_not_count_towards_max_runs() -> None:
    schedule = world(maxRuns=1)
    schedule.annotate("cronctl.dev/trigger", "by-hand")
    schedule.reconcile(CREATED + 5)
    assert schedule.schedule["status"]["launched"] == 1
    assert schedule.schedule["status"]["remainingRuns"] == 1
    assert len(launches(schedule, "2024-03-01T00:30")) == 1


def test_the_count_survives_a_restart_the_status_write_of_which_was_lost() -> None:
    """The Job of run 2 exists, the status saying run 1 was lost: the Job is adopted and counted once."""
    schedule = world(maxRuns=2)
    launches(schedule, "2024-03-01T00:10")
    before = dict(schedule.schedule["status"])
    schedule.reconcile(t("2024-03-01T00:20"))
    schedule.schedule["status"] = before  # the second launch's status write was lost
    assert launches_from(schedule, "2024-03-01T00:20", "2024-03-01T01:00") == []
    assert schedule.schedule["status"]["scheduledRuns"] == 2


def launches_from(world: World, after: str, through: str) -> list[str]:
    made = []
    for now in range(t(after), t(through) + 1):
        made += [e.manifest["metadata"]["name"] for e in world.reconcile(now).effects if isinstance(e, CreateJob)]
    return made


def test_past_its_end_time_a_schedule_has_ended_with_no_next_fire() -> None:
    schedule = world(endTime="2024-03-01T00:25:00Z")
    assert len(launches(schedule, "2024-03-01T01:00")) == 2
    status = schedule.schedule["status"]
    ended = condition(schedule, "Ended")
    assert ended is not None and (ended["status"], ended["reason"]) == ("True", "EndTimeReached")
    assert status.get("nextFireTime") is None


def test_a_schedule_made_after_its_end_time_has_ended_and_is_not_invalid() -> None:
    schedule = world(endTime="2023-12-31T23:59:00Z")
    assert condition(schedule, "Ready")["status"] == "True"  # type: ignore[index]
    assert condition(schedule, "Ended")["reason"] == "EndTimeReached"  # type: ignore[index]


def test_before_its_start_time_the_next_fire_is_the_first_time_inside_the_window() -> None:
    schedule = world(startTime="2024-03-01T05:05:00+01:00")  # 04:05 UTC
    assert schedule.schedule["status"]["nextFireTime"] == rfc3339(t("2024-03-01T04:10"))
    assert condition(schedule, "Ended")["status"] == "False"  # type: ignore[index]


def test_a_schedule_without_a_window_or_a_limit_has_no_ended_condition_and_no_count_to_show() -> None:
    schedule = world()
    assert condition(schedule, "Ended") is None
    assert "remainingRuns" not in schedule.schedule["status"] or schedule.schedule["status"]["remainingRuns"] is None
