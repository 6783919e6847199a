"""Failure times and counts in a CronSchedule's status, and pauseOnFailures, as the plan writes them.

status.lastSuccessfulTime and lastFailureTime follow the runs' outcomes,
consecutiveFailures counts failed runs in a row. With pauseOnFailures N the
Nth failure in a row pauses the schedule: status.pausedOnFailures, its
reason in status.suspendReason and the Ready condition, a Warning Event
PausedOnFailures, nothing scheduled fires. A new cronctl.dev/resume value
(kubectl cronctl resume) ends the pause; an old one never ends a later one.
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


def runs(world: World, outcomes: str, start: int = CREATED) -> list[str]:
    """Reconcile every minute, each run ending 5 minutes after its launch as ``outcomes`` says
    (S succeeded, F failed), one letter per run; the Jobs launched."""
    launched: list[str] = []
    ends: dict[str, tuple[int, str]] = {}
    now = start
    while len(launched) < len(outcomes) or ends:
        now += 1
        for name, (at, outcome) in list(ends.items()):
            if at == now:
                world.finish(name, "Complete" if outcome == "S" else "Failed", now)
                del ends[name]
        for effect in world.reconcile(now).effects:
            if isinstance(effect, CreateJob) and len(launched) < len(outcomes):
                name = effect.manifest["metadata"]["name"]
                ends[name] = (now + 5, outcomes[len(launched)])
                launched.append(name)
        assert now < start + 600, "the runs never ended"
    world.reconcile(now + 1)
    return launched


def status(world: World) -> dict[str, Any]:
    return world.schedule["status"]


def test_the_newest_success_and_failure_and_the_failures_in_a_row() -> None:
    schedule = world()
    runs(schedule, "SFF")
    assert (status(schedule)["lastSuccessfulTime"], status(schedule)["lastFailureTime"]) == (
        rfc3339(t("2024-03-01T00:15")), rfc3339(t("2024-03-01T00:35")))
    assert status(schedule)["consecutiveFailures"] == 2
    runs(schedule, "S", start=t("2024-03-01T00:36"))
    assert not status(schedule).get("consecutiveFailures")


def test_the_third_failure_in_a_row_pauses_the_schedule_and_says_so() -> None:
    schedule = world(pauseOnFailures=3)
    runs(schedule, "FFF")
    pause = status(schedule)["pausedOnFailures"]
    assert pause == {"since": rfc3339(t("2024-03-01T00:35")), "failures": 3}
    assert status(schedule)["suspendReason"] == ("paused after 3 failed runs in a row (pauseOnFailures: 3); "
                                                 "resume it to fire again")
    ready = next(c for c in status(schedule)["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "Suspended")
    warnings = [(e.type, e.reason) for e in schedule.events if e.reason in ("PausedOnFailures", "Suspended")]
    assert warnings == [("Warning", "PausedOnFailures")]
    assert status(schedule).get("nextFireTime") is None


def test_nothing_scheduled_fires_while_paused() -> None:
    schedule = world(pauseOnFailures=1)
    runs(schedule, "F")
    made = [e for now in range(t("2024-03-01T00:17"), t("2024-03-01T02:00"))
            for e in schedule.reconcile(now).effects if isinstance(e, CreateJob)]
    assert made == []


def test_a_resume_ends_the_pause_and_the_schedule_fires_again() -> None:
    schedule = world(pauseOnFailures=1)
    runs(schedule, "F")
    schedule.annotate("cronctl.dev/resume", "2024-03-01T01:02:03.000000Z")
    schedule.reconcile(t("2024-03-01T01:03"))
    assert status(schedule).get("pausedOnFailures") is None
    assert status(schedule)["lastResume"] == "2024-03-01T01:02:03.000000Z"
    assert "Resumed" in [e.reason for e in schedule.events]
    made = schedule.reconcile(t("2024-03-01T01:10")).effects
    assert any(isinstance(e, CreateJob) for e in made)


def test_an_old_resume_never_ends_a_later_pause() -> None:
    schedule = world(pauseOnFailures=1)
    schedule.annotate("cronctl.dev/resume", "before any pause")
    runs(schedule, "F")
    assert status(schedule)["pausedOnFailures"]["failures"] == 1
    assert status(schedule)["lastResume"] == "before any pause"


def test_after_a_resume_it_takes_n_more_failures_to_pause_again() -> None:
    schedule = world(pauseOnFailures=2)
    runs(schedule, "FF")
    schedule.annotate("cronctl.dev/resume", "once")
    schedule.reconcile(t("2024-03-01T00:26"))
    runs(schedule, "F", start=t("2024-03-01T00:26"))
    assert status(schedule).get("pausedOnFailures") is None and status(schedule)["consecutiveFailures"] == 3
    runs(schedule, "F", start=t("2024-03-01T00:46"))
    assert status(schedule)["pausedOnFailures"]["failures"] == 4


def test_taking_pause_on_failures_out_of_the_spec_ends_the_pause() -> None:
    schedule = world(pauseOnFailures=1)
    runs(schedule, "F")
    del schedule.schedule["spec"]["pauseOnFailures"]
    schedule.schedule["metadata"]["generation"] = 2
    schedule.reconcile(t("2024-03-01T00:30"))
    assert status(schedule).get("pausedOnFailures") is None


def test_a_resume_not_answered_yet_is_worth_a_reconcile_and_an_answered_one_is_not() -> None:
    from cronctl.operator.loop import needs_a_look

    schedule = world(pauseOnFailures=1)
    runs(schedule, "F")
    assert not needs_a_look(schedule.schedule, known=True)
    schedule.annotate("cronctl.dev/resume", "now")
    assert needs_a_look(schedule.schedule, known=True)
    schedule.reconcile(t("2024-03-01T00:30"))
    assert not needs_a_look(schedule.schedule, known=True)
