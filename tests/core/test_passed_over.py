"""core.passed_over, table-tested: the schedule times a launch passed over, never started.

Each row is a spec, a state and a minute: the tick decides at that minute
(``decide``) and the times its launch passed over are asserted whole (how
many, the earliest, the latest), or that there are none. Rows read as
sentences.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cronctl.core.passed_over import MAX_COUNTED, PassedOver, passed_over
from cronctl.core.schedule import Timeline, parse_expression
from cronctl.core.spec import CATCH_UP_ALL, PAST_LIMIT_LAUNCH, JobSpec, Options, Policy
from cronctl.core.state import JobState
from cronctl.core.tick import decide, manual_launch
from cronctl.core.times import parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")
EVERY_MINUTE, HOURLY = "* * * * *", "0 * * * *"
OPERATOR = Options(past_limit=PAST_LIMIT_LAUNCH)


@dataclass
class Row:
    name: str
    now: int
    expected: PassedOver | None
    expression: str = EVERY_MINUTE
    policy: Policy = Policy.ALLOW
    options: Options = OPERATOR
    last_schedule: int | None = t("2024-03-01T00:59")
    last_skipped: int | None = None
    not_before: int | None = None
    active: tuple[str, ...] = ()


ROWS = [
    Row("a launch on time passes over nothing", t("2024-03-01T01:00"), None),
    Row("an outage of three minutes: the three times before the launched one",
        t("2024-03-01T01:03"), PassedOver(3, t("2024-03-01T01:00"), t("2024-03-01T01:02"))),
    Row("one time: earliest and latest are the same",
        t("2024-03-01T01:01"), PassedOver(1, t("2024-03-01T01:00"), t("2024-03-01T01:00"))),
    Row("hourly, away past two hours: the hours before", t("2024-03-01T03:00"),
        PassedOver(2, t("2024-03-01T01:00"), t("2024-03-01T02:00")), expression=HOURLY,
        last_schedule=t("2024-03-01T00:00")),
    Row("the first launch counts from the schedule's creation", t("2024-03-01T00:03"),
        PassedOver(2, t("2024-03-01T00:01"), t("2024-03-01T00:02")), last_schedule=None),
    Row("times a starting deadline dropped count too", t("2024-03-01T01:05"),
        PassedOver(5, t("2024-03-01T01:00"), t("2024-03-01T01:04")),
        options=Options(past_limit=PAST_LIMIT_LAUNCH, starting_deadline=1)),
    Row("forbid: times reported as skipped are not counted again", t("2024-03-01T01:03"), None,
        policy=Policy.FORBID, last_skipped=t("2024-03-01T01:02")),
    Row("forbid: only the times since the last skip", t("2024-03-01T01:03"),
        PassedOver(1, t("2024-03-01T01:02"), t("2024-03-01T01:02")), policy=Policy.FORBID,
        last_skipped=t("2024-03-01T01:01")),
    Row("forbid with its run still active launches nothing: nothing passed over", t("2024-03-01T01:03"), None,
        policy=Policy.FORBID, active=("job-1",)),
    Row("resumed: the times before the resume were the user's", t("2024-03-01T01:03"),
        PassedOver(1, t("2024-03-01T01:02"), t("2024-03-01T01:02")), not_before=t("2024-03-01T01:01")),
    Row("replace passes over like allow", t("2024-03-01T01:02"),
        PassedOver(2, t("2024-03-01T01:00"), t("2024-03-01T01:01")), policy=Policy.REPLACE, active=("job-1",)),
    Row("catch-up all launches every missed time: nothing passed over", t("2024-03-01T01:03"), None,
        options=Options(past_limit=PAST_LIMIT_LAUNCH, catch_up=CATCH_UP_ALL)),
    Row("wait-for-last queues every missed time: nothing passed over", t("2024-03-01T01:03"), None,
        policy=Policy.WAIT_FOR_LAST),
    Row("an overflow reports itself", t("2024-03-01T04:00"), None),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_passed_over(row: Row) -> None:
    spec = JobSpec("job", row.expression, row.policy, row.options, CREATED, 0)
    timeline = Timeline(parse_expression(row.expression), CREATED)
    state = JobState(last_schedule=row.last_schedule, launched=len(row.active), active=list(row.active),
                     last_skipped=row.last_skipped, not_before=row.not_before)
    decisions = decide(spec, state, timeline, row.now).decisions
    assert passed_over(spec, state, timeline, decisions) == row.expected


def test_a_manual_run_passes_over_nothing() -> None:
    spec = JobSpec("job", EVERY_MINUTE, Policy.ALLOW, OPERATOR, CREATED, 0)
    timeline = Timeline(parse_expression(EVERY_MINUTE), CREATED)
    state = JobState(last_schedule=t("2024-03-01T00:59"))
    manual = manual_launch(spec, state, t("2024-03-01T01:03"))
    assert passed_over(spec, state, timeline, [manual]) is None


def test_an_outage_past_the_count_says_at_least() -> None:
    options = Options(past_limit=PAST_LIMIT_LAUNCH, starting_deadline=1)  # no overflow: the window is a minute
    spec = JobSpec("job", EVERY_MINUTE, Policy.ALLOW, options, CREATED, 0)
    timeline = Timeline(parse_expression(EVERY_MINUTE), CREATED)
    state = JobState(last_schedule=CREATED)
    now = CREATED + 60 * 24 * 30  # a month of minutes
    found = passed_over(spec, state, timeline, decide(spec, state, timeline, now).decisions)
    assert found is not None and found.count == MAX_COUNTED and found.earliest == CREATED + 1
