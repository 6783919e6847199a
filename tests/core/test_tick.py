"""tick.decide, table-tested: spec, state, now -> decisions and wake-up.

Rows read as sentences; times are anchored on named constants.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from cronctl.core.schedule import Timeline, parse_expression
from cronctl.core.spec import CATCH_UP_ALL, PAST_LIMIT_LAUNCH, JobSpec, Options, Policy
from cronctl.core.state import JobState, Queued
from cronctl.core.tick import Coalesce, Enqueue, Launch, Overflow, Replace, Skip, decide, run_end
from cronctl.core.times import parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")
TOP_OF_THE_HOUR = t("2024-03-01T01:00")
JUST_AFTER_THE_HOUR = t("2024-03-01T01:05")
TWO_HOURS_LATER = t("2024-03-01T02:00")
HOURLY = "0 * * * *"
LAUNCH_PAST_LIMIT = Options(past_limit=PAST_LIMIT_LAUNCH)


@dataclass
class Row:
    name: str
    expression: str = HOURLY
    policy: Policy = Policy.ALLOW
    options: Options = field(default_factory=Options)
    last_schedule: int | None = None
    not_before: int | None = None
    active: tuple[str, ...] = ()
    launched: int = 0
    queue: tuple[Queued, ...] = ()
    now: int = TOP_OF_THE_HOUR
    decisions: tuple = ()
    wake_at: int | None = None


ROWS = [
    Row("never ran, not yet time: nothing, wake at the first schedule time",
        now=t("2024-03-01T00:30"), wake_at=TOP_OF_THE_HOUR),
    Row("never ran, is time: launch for the schedule time",
        decisions=(Launch("job", "job-1", 1, TOP_OF_THE_HOUR),), wake_at=TWO_HOURS_LATER),
    Row("never ran, several missed: launch only the most recent",
        now=t("2024-03-01T03:30"),
        decisions=(Launch("job", "job-1", 1, t("2024-03-01T03:00"), "catch-up"),), wake_at=t("2024-03-01T04:00")),
    Row("launched before, is time again: launch with the next number",
        last_schedule=TOP_OF_THE_HOUR, launched=1, now=TWO_HOURS_LATER,
        decisions=(Launch("job", "job-2", 2, TWO_HOURS_LATER),), wake_at=t("2024-03-01T03:00")),
    Row("allow, still active: launch beside the active run",
        last_schedule=TOP_OF_THE_HOUR, launched=1, active=("job-1",), now=TWO_HOURS_LATER,
        decisions=(Launch("job", "job-2", 2, TWO_HOURS_LATER),), wake_at=t("2024-03-01T03:00")),
    Row("forbid, still active: skip and stay due, last schedule unchanged",
        policy=Policy.FORBID, last_schedule=TOP_OF_THE_HOUR, launched=1, active=("job-1",),
        now=TWO_HOURS_LATER, decisions=(Skip("job", TWO_HOURS_LATER),), wake_at=TWO_HOURS_LATER),
    Row("forbid, nothing active: launch",
        policy=Policy.FORBID, last_schedule=TOP_OF_THE_HOUR, launched=1, now=TWO_HOURS_LATER,
        decisions=(Launch("job", "job-2", 2, TWO_HOURS_LATER),), wake_at=t("2024-03-01T03:00")),
    Row("replace, two active: replace both in launch order, then launch",
        policy=Policy.REPLACE, last_schedule=TOP_OF_THE_HOUR, launched=2, active=("job-1", "job-2"),
        now=TWO_HOURS_LATER,
        decisions=(Replace("job", "job-1"), Replace("job", "job-2"), Launch("job", "job-3", 3, TWO_HOURS_LATER)),
        wake_at=t("2024-03-01T03:00")),
    Row("exactly 100 missed: launch",
        expression="* * * * *", now=CREATED + 100,
        decisions=(Launch("job", "job-1", 1, CREATED + 100),), wake_at=CREATED + 101),
    Row("101 missed: overflow, nothing launched, still due",
        expression="* * * * *", now=CREATED + 101,
        decisions=(Overflow("job", 101),), wake_at=CREATED + 101),
    Row("a launch for this very minute is scheduled; one for a time already past, catch-up",
        now=t("2024-03-01T01:01"),
        decisions=(Launch("job", "job-1", 1, TOP_OF_THE_HOUR, "catch-up"),), wake_at=TWO_HOURS_LATER),
    Row("101 missed but a deadline keeps 11: launch the latest",
        expression="* * * * *", options=Options(starting_deadline=10), now=CREATED + 101,
        decisions=(Launch("job", "job-1", 1, CREATED + 101),), wake_at=CREATED + 102),
    Row("deadline window is inclusive: a time exactly deadline minutes ago still runs",
        options=Options(starting_deadline=5), now=t("2024-03-01T01:05"),
        decisions=(Launch("job", "job-1", 1, TOP_OF_THE_HOUR, "catch-up"),), wake_at=TWO_HOURS_LATER),
    Row("deadline passed by one minute: nothing, wake at the next schedule time",
        options=Options(starting_deadline=5), now=t("2024-03-01T01:06"), wake_at=TWO_HOURS_LATER),
    Row("suspended through 02:30: the 01:00 and 02:00 times are not missed",
        now=t("2024-03-01T02:45"), not_before=t("2024-03-01T02:30"), wake_at=t("2024-03-01T03:00")),
    Row("interval job: launch for anchor + k * interval",
        expression="@every 45m", now=t("2024-03-01T01:40"),
        decisions=(Launch("job", "job-1", 1, t("2024-03-01T01:30"), "catch-up"),), wake_at=t("2024-03-01T02:15")),
    # The missed-schedules limit: the seed's rule holds (the harness), CronJob's launches the latest.
    Row("a limit of 10, 11 missed: overflow at 10 already",
        expression="* * * * *", options=Options(missed_limit=10), now=CREATED + 11,
        decisions=(Overflow("job", 11, 10),), wake_at=CREATED + 11),
    Row("past the limit under CronJob's rule: the overflow is said and the most recent time launched",
        expression="* * * * *", options=LAUNCH_PAST_LIMIT, now=CREATED + 180,
        decisions=(Overflow("job", 101, 100, launches=True), Launch("job", "job-1", 1, CREATED + 180)),
        wake_at=CREATED + 181),
    Row("past the limit under CronJob's rule, forbid while active: overflow, then skip the most recent",
        expression="* * * * *", policy=Policy.FORBID, options=LAUNCH_PAST_LIMIT, active=("job-1",), launched=1,
        last_schedule=CREATED, now=CREATED + 180,
        decisions=(Overflow("job", 101, 100, launches=True), Skip("job", CREATED + 180)), wake_at=CREATED + 180),
    Row("past the limit under CronJob's rule, replace: overflow, replace the active run, launch",
        expression="* * * * *", policy=Policy.REPLACE, options=LAUNCH_PAST_LIMIT, active=("job-1",), launched=1,
        last_schedule=CREATED, now=CREATED + 180,
        decisions=(Overflow("job", 101, 100, launches=True), Replace("job", "job-1"),
                   Launch("job", "job-2", 2, CREATED + 180)), wake_at=CREATED + 181),
    Row("catch-up all past the limit: the newest 3 in order, 177 older ones dropped",
        expression="* * * * *", options=dataclasses.replace(LAUNCH_PAST_LIMIT, missed_limit=3, catch_up=CATCH_UP_ALL),
        now=CREATED + 180,
        decisions=(Overflow("job", 4, 3, launches=True, dropped=177),
                   Launch("job", "job-1", 1, CREATED + 178, "catch-up"),
                   Launch("job", "job-2", 2, CREATED + 179, "catch-up"),
                   Launch("job", "job-3", 3, CREATED + 180)), wake_at=CREATED + 181),
    Row("catch-up all under the seed's rule past the limit: overflow only",
        expression="* * * * *", options=Options(missed_limit=3, catch_up=CATCH_UP_ALL), now=CREATED + 180,
        decisions=(Overflow("job", 4, 3),), wake_at=CREATED + 180),
    Row("catch-up all: every missed time in order, the older ones catch-up, the current one scheduled",
        options=Options(catch_up=CATCH_UP_ALL), now=TWO_HOURS_LATER,
        decisions=(Launch("job", "job-1", 1, TOP_OF_THE_HOUR, "catch-up"),
                   Launch("job", "job-2", 2, TWO_HOURS_LATER)), wake_at=t("2024-03-01T03:00")),
    Row("catch-up all, forbid, nothing active: the oldest only, and stay due",
        policy=Policy.FORBID, options=Options(catch_up=CATCH_UP_ALL), now=TWO_HOURS_LATER,
        decisions=(Launch("job", "job-1", 1, TOP_OF_THE_HOUR, "catch-up"),), wake_at=TWO_HOURS_LATER),
    Row("catch-up all, replace: only the newest",
        policy=Policy.REPLACE, options=Options(catch_up=CATCH_UP_ALL), now=TWO_HOURS_LATER,
        decisions=(Launch("job", "job-1", 1, TWO_HOURS_LATER),), wake_at=t("2024-03-01T03:00")),
    Row("wait-for-last, nothing active: the time is queued and launched at once",
        policy=Policy.WAIT_FOR_LAST, decisions=(Enqueue("job", TOP_OF_THE_HOUR, "scheduled"),
                                                Launch("job", "job-1", 1, TOP_OF_THE_HOUR)),
        wake_at=TWO_HOURS_LATER),
    Row("wait-for-last, active: the time waits",
        policy=Policy.WAIT_FOR_LAST, active=("job-1",), launched=1, last_schedule=TOP_OF_THE_HOUR,
        now=TWO_HOURS_LATER, decisions=(Enqueue("job", TWO_HOURS_LATER, "scheduled"),),
        wake_at=t("2024-03-01T03:00")),
    Row("wait-for-last, active, a scheduled time waiting: it is coalesced into the newer one",
        policy=Policy.WAIT_FOR_LAST, active=("job-1",), launched=1, last_schedule=TWO_HOURS_LATER,
        queue=(Queued(TWO_HOURS_LATER, "scheduled"),), now=t("2024-03-01T03:00"),
        decisions=(Coalesce("job", TWO_HOURS_LATER), Enqueue("job", t("2024-03-01T03:00"), "scheduled")),
        wake_at=t("2024-03-01T04:00")),
    Row("wait-for-last, a catch-up time waiting keeps its place",
        policy=Policy.WAIT_FOR_LAST, active=("job-1",), launched=1, last_schedule=TWO_HOURS_LATER,
        queue=(Queued(TWO_HOURS_LATER, "catch-up"),), now=t("2024-03-01T03:00"),
        decisions=(Enqueue("job", t("2024-03-01T03:00"), "scheduled"),), wake_at=t("2024-03-01T04:00")),
    Row("wait-for-last, the run ended: the oldest waiting firing is launched with its own reason",
        policy=Policy.WAIT_FOR_LAST, launched=1, last_schedule=TWO_HOURS_LATER,
        queue=(Queued(TWO_HOURS_LATER, "catch-up"),), now=t("2024-03-01T02:30"),
        decisions=(Launch("job", "job-2", 2, TWO_HOURS_LATER, "catch-up"),), wake_at=t("2024-03-01T03:00")),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_decide(row: Row) -> None:
    spec = JobSpec("job", row.expression, row.policy, row.options, CREATED, 0)
    state = JobState(last_schedule=row.last_schedule, launched=row.launched, active=list(row.active),
                     not_before=row.not_before, queue=list(row.queue))
    result = decide(spec, state, Timeline(parse_expression(row.expression), CREATED), row.now)
    assert result.decisions == row.decisions
    assert result.wake_at == row.wake_at


def test_decide_is_pure() -> None:
    spec = JobSpec("job", HOURLY, Policy.REPLACE, Options(), CREATED, 0)
    state = JobState(last_schedule=TOP_OF_THE_HOUR, launched=1, active=["job-1"])
    before = state.to_json()
    decide(spec, state, Timeline(parse_expression(HOURLY), CREATED), TWO_HOURS_LATER)
    assert state.to_json() == before


@pytest.mark.parametrize("reported, timeout, now, ended", [
    (None, None, TWO_HOURS_LATER, None),  # running, no timeout: not over
    (("succeeded", TOP_OF_THE_HOUR + 10), None, TOP_OF_THE_HOUR + 10, ("succeeded", TOP_OF_THE_HOUR + 10)),
    (("failed", TOP_OF_THE_HOUR + 10), None, TOP_OF_THE_HOUR + 9, None),  # reported for a minute still to come
    (None, 45, TOP_OF_THE_HOUR + 44, None),
    (None, 45, TOP_OF_THE_HOUR + 45, ("timed_out", TOP_OF_THE_HOUR + 45)),  # at launch + timeout exactly
    (None, 45, TWO_HOURS_LATER, ("timed_out", TOP_OF_THE_HOUR + 45)),  # noticed later, expired then
    (("succeeded", TOP_OF_THE_HOUR + 44), 45, TWO_HOURS_LATER, ("succeeded", TOP_OF_THE_HOUR + 44)),
    (("succeeded", TOP_OF_THE_HOUR + 45), 45, TWO_HOURS_LATER, ("timed_out", TOP_OF_THE_HOUR + 45)),  # too late
], ids=["running", "reported", "reported for later", "before the expiry", "at the expiry", "noticed late",
        "reported just in time", "reported at the expiry: too late"])
def test_run_end(reported: tuple[str, int] | None, timeout: int | None, now: int,
                 ended: tuple[str, int] | None) -> None:
    assert run_end(TOP_OF_THE_HOUR, timeout, reported, now) == ended
