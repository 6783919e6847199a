"""tick.decide, table-tested: spec, state, now -> decisions and wake-up.

Rows read as sentences; times are anchored on named constants.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from cronctl.core.schedule import Timeline, parse_expression
from cronctl.core.spec import JobSpec, Options, Policy
from cronctl.core.state import JobState, Run
from cronctl.core.tick import Launch, Overflow, Replace, Skip, Timeout, decide, expired
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
        decisions=(Launch("job", "job-1", 1, t("2024-03-01T03:00")),), wake_at=t("2024-03-01T04:00")),
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
    Row("101 missed but a deadline keeps 11: launch the latest",
        expression="* * * * *", options=Options(starting_deadline=10), now=CREATED + 101,
        decisions=(Launch("job", "job-1", 1, CREATED + 101),), wake_at=CREATED + 102),
    Row("deadline window is inclusive: a time exactly deadline minutes ago still runs",
        options=Options(starting_deadline=5), now=t("2024-03-01T01:05"),
        decisions=(Launch("job", "job-1", 1, TOP_OF_THE_HOUR),), wake_at=TWO_HOURS_LATER),
    Row("deadline passed by one minute: nothing, wake at the next schedule time",
        options=Options(starting_deadline=5), now=t("2024-03-01T01:06"), wake_at=TWO_HOURS_LATER),
    Row("suspended through 02:30: the 01:00 and 02:00 times are not missed",
        now=t("2024-03-01T02:45"), not_before=t("2024-03-01T02:30"), wake_at=t("2024-03-01T03:00")),
    Row("interval job: launch for anchor + k * interval",
        expression="@every 45m", now=t("2024-03-01T01:40"),
        decisions=(Launch("job", "job-1", 1, t("2024-03-01T01:30")),), wake_at=t("2024-03-01T02:15")),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_decide(row: Row) -> None:
    spec = JobSpec("job", row.expression, row.policy, row.options, CREATED, 0)
    state = JobState(last_schedule=row.last_schedule, launched=row.launched, active=list(row.active),
                     not_before=row.not_before)
    result = decide(spec, state, Timeline(parse_expression(row.expression), CREATED), row.now)
    assert result.decisions == row.decisions
    assert result.wake_at == row.wake_at


def test_decide_is_pure() -> None:
    spec = JobSpec("job", HOURLY, Policy.REPLACE, Options(), CREATED, 0)
    state = JobState(last_schedule=TOP_OF_THE_HOUR, launched=1, active=["job-1"])
    before = state.to_json()
    decide(spec, state, Timeline(parse_expression(HOURLY), CREATED), TWO_HOURS_LATER)
    assert state.to_json() == before


def test_a_run_times_out_at_exactly_launch_plus_timeout() -> None:
    runs = [Run("job-1", "job", 1, "running", TOP_OF_THE_HOUR, TOP_OF_THE_HOUR),
            Run("job-2", "job", 2, "running", TWO_HOURS_LATER, TWO_HOURS_LATER)]
    assert expired(runs, 45, TOP_OF_THE_HOUR + 44) == []
    assert expired(runs, 45, TOP_OF_THE_HOUR + 45) == [Timeout("job-1", TOP_OF_THE_HOUR + 45)]
    assert expired(runs, None, TWO_HOURS_LATER + 10**6) == []
