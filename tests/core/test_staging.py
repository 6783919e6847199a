"""core.staging, table-tested: which time to stage, and what becomes of a staged one.

Each row of the fates is a spec, a state and a minute: the tick decides at
that minute (``decide``), its decisions are applied (``apply_tick``), and the
staged time's fate is asserted whole (action, the launch a release carries
out, the second its run may start). Rows read as sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from cronctl.core.every import actual_time
from cronctl.core.schedule import Timeline, parse_expression
from cronctl.core.spec import CATCH_UP_ALL, PAST_LIMIT_LAUNCH, JobSpec, Options, Policy
from cronctl.core.staging import DEADLINE, DELETE, KEEP, RELEASE, SUPERSEDED, Fate, next_staging, staged_fate, to_stage
from cronctl.core.state import JobState
from cronctl.core.tick import Launch, decide, manual_launch
from cronctl.core.times import parse_time
from cronctl.core.transitions import apply_tick


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")
A_MINUTE_BEFORE_THE_HOUR = t("2024-03-01T00:59")
TOP_OF_THE_HOUR = t("2024-03-01T01:00")
A_MINUTE_PAST_THE_HOUR = t("2024-03-01T01:01")
HOURLY, EVERY_MINUTE, EVERY_TEN = "0 * * * *", "* * * * *", "*/10 * * * *"
OPERATOR = Options(past_limit=PAST_LIMIT_LAUNCH)  # the operator's overflow rule (CronJob's)
JITTERED = Options(past_limit=PAST_LIMIT_LAUNCH, jitter=900)


def spec_of(expression: str, policy: Policy, options: Options) -> JobSpec:
    return JobSpec("job", expression, policy, options, CREATED, 0)


def timeline_of(expression: str) -> Timeline:
    return Timeline(parse_expression(expression), CREATED)


# -- what to stage, and when ----------------------------------------------------------------


@dataclass
class StageRow:
    name: str
    expression: str = HOURLY
    policy: Policy = Policy.ALLOW
    options: Options = OPERATOR
    now: int = A_MINUTE_BEFORE_THE_HOUR
    active: tuple[str, ...] = ()
    last_schedule: int | None = None
    suspended: bool = False
    stage: int | None = TOP_OF_THE_HOUR  # what to_stage names
    next_look: int | None = None  # next_staging


STAGE_ROWS = [
    StageRow("hourly, the minute before the hour: the hour is staged", next_look=t("2024-03-01T01:59")),
    StageRow("hourly, earlier in the hour: nothing yet, look again the minute before",
             now=t("2024-03-01T00:30"), stage=None, next_look=A_MINUTE_BEFORE_THE_HOUR),
    StageRow("every minute: the next minute, at every minute",
             expression=EVERY_MINUTE, now=TOP_OF_THE_HOUR, stage=A_MINUTE_PAST_THE_HOUR,
             next_look=A_MINUTE_PAST_THE_HOUR),
    StageRow("forbid, a run still active: staged anyway (it may end before the minute)",
             policy=Policy.FORBID, active=("job-1",), next_look=t("2024-03-01T01:59")),
    StageRow("replace, a run active: staged", policy=Policy.REPLACE, active=("job-1",),
             next_look=t("2024-03-01T01:59")),
    StageRow("jittered: the nominal time is staged", options=JITTERED, next_look=t("2024-03-01T01:59")),
    StageRow("catch-up all: its on-time firings are staged", options=Options(past_limit=PAST_LIMIT_LAUNCH,
                                                                               catch_up=CATCH_UP_ALL),
             next_look=t("2024-03-01T01:59")),
    StageRow("wait-for-last: never staged (its firings queue)", policy=Policy.WAIT_FOR_LAST, stage=None),
    StageRow("suspended: never staged", suspended=True, stage=None),
    StageRow("a yearly time a year ahead: not yet", expression="0 0 1 1 *", stage=None,
             next_look=t("2024-12-31T23:59")),
    StageRow("its time dealt with already by a clock ahead of ours: not staged again",
             last_schedule=TOP_OF_THE_HOUR, stage=None, next_look=t("2024-03-01T01:59")),
]


@pytest.mark.parametrize("row", STAGE_ROWS, ids=[row.name for row in STAGE_ROWS])
def test_to_stage_and_next_staging(row: StageRow) -> None:
    spec, timeline = spec_of(row.expression, row.policy, row.options), timeline_of(row.expression)
    state = JobState(last_schedule=row.last_schedule, launched=len(row.active), active=list(row.active))
    assert to_stage(spec, state, timeline, row.now, suspended=row.suspended) == row.stage
    assert next_staging(spec, timeline, row.now, suspended=row.suspended) == row.next_look


def test_a_schedule_that_ends_stages_nothing_after_its_last_time() -> None:
    expression = "0 0 29 2 *"  # 2024-02-29 is past for CREATED; the next is 2028
    spec, timeline = spec_of(expression, Policy.ALLOW, OPERATOR), timeline_of(expression)
    assert to_stage(spec, JobState(), timeline, t("2028-02-28T23:59")) == t("2028-02-29T00:00")
    assert to_stage(spec, JobState(), timeline, t("2028-02-28T23:58")) is None


# -- what becomes of a staged time ----------------------------------------------------------


@dataclass
class FateRow:
    name: str
    staged: int = TOP_OF_THE_HOUR
    expression: str = HOURLY
    policy: Policy = Policy.ALLOW
    options: Options = OPERATOR
    now: int = TOP_OF_THE_HOUR
    last_schedule: int | None = CREATED  # the job was created at CREATED and has run since
    active: tuple[str, ...] = ()
    suspended: bool = False
    current: bool = True
    enabled: bool = True
    fate: Fate = field(default_factory=lambda: Fate(DELETE))


def launch(number: int, nominal: int, reason: str = "scheduled") -> Launch:
    return Launch("job", f"job-{number}", number, nominal, reason)


FATE_ROWS = [
    # -- its minute comes
    FateRow("allow, its minute: released at its second",
            fate=Fate(RELEASE, launch(1, TOP_OF_THE_HOUR), TOP_OF_THE_HOUR * 60)),
    FateRow("allow, jittered: released at nominal + jitter", options=JITTERED,
            fate=Fate(RELEASE, launch(1, TOP_OF_THE_HOUR), actual_time(900, "job", TOP_OF_THE_HOUR))),
    FateRow("forbid, nothing active: released", policy=Policy.FORBID,
            fate=Fate(RELEASE, launch(1, TOP_OF_THE_HOUR), TOP_OF_THE_HOUR * 60)),
    FateRow("forbid, the previous run still active at the minute: kept", policy=Policy.FORBID,
            active=("job-1",), fate=Fate(KEEP)),
    FateRow("forbid, still active minutes later, the time still the latest missed: kept", policy=Policy.FORBID,
            active=("job-1",), now=t("2024-03-01T01:35"), fate=Fate(KEEP)),
    FateRow("forbid, the run ended: released late, as a catch-up, with no jitter", policy=Policy.FORBID,
            options=JITTERED, now=t("2024-03-01T01:35"),
            fate=Fate(RELEASE, launch(1, TOP_OF_THE_HOUR, "catch-up"), TOP_OF_THE_HOUR * 60)),
    FateRow("forbid, still active when a newer time comes: deleted, no miss (its skip was reported)",
            policy=Policy.FORBID, expression=EVERY_TEN, active=("job-1",), now=t("2024-03-01T01:10")),
    FateRow("replace, a run active: released, the launch replacing it", policy=Policy.REPLACE,
            active=("job-1",), fate=Fate(RELEASE, launch(2, TOP_OF_THE_HOUR), TOP_OF_THE_HOUR * 60)),
    FateRow("allow, a run active: released beside it", active=("job-1",),
            fate=Fate(RELEASE, launch(2, TOP_OF_THE_HOUR), TOP_OF_THE_HOUR * 60)),
    # -- before its minute
    FateRow("replace, before its minute, a run active: kept", policy=Policy.REPLACE, active=("job-1",),
            now=A_MINUTE_BEFORE_THE_HOUR, fate=Fate(KEEP)),
    FateRow("replace, suspended before its minute: deleted", policy=Policy.REPLACE, active=("job-1",),
            now=A_MINUTE_BEFORE_THE_HOUR, suspended=True),
    FateRow("before its minute: kept", now=A_MINUTE_BEFORE_THE_HOUR, fate=Fate(KEEP)),
    FateRow("forbid, before its minute, a run active: kept", policy=Policy.FORBID, active=("job-1",),
            now=A_MINUTE_BEFORE_THE_HOUR, fate=Fate(KEEP)),
    FateRow("suspended before its minute: deleted", now=A_MINUTE_BEFORE_THE_HOUR, suspended=True),
    FateRow("suspended at its minute: deleted", suspended=True),
    FateRow("staging turned off: deleted (the launch creates its Job as without staging)",
            now=A_MINUTE_BEFORE_THE_HOUR, enabled=False),
    FateRow("staging turned off, its minute come: released (one write, not a delete and a create of its name)",
            enabled=False, fate=Fate(RELEASE, launch(1, TOP_OF_THE_HOUR), TOP_OF_THE_HOUR * 60)),
    FateRow("staging turned off, suspended at its minute: deleted", enabled=False, suspended=True),
    FateRow("its template edited before its minute: deleted (and staged again)", now=A_MINUTE_BEFORE_THE_HOUR,
            current=False),
    FateRow("its template edited at its very minute: deleted, the launch creates a fresh Job", current=False),
    FateRow("its time edited away: no longer a schedule time, deleted", expression="30 * * * *",
            now=A_MINUTE_BEFORE_THE_HOUR),
    FateRow("an earlier time edited in: no longer the next time, deleted", expression="*/30 * * * *",
            now=t("2024-03-01T00:20")),
    FateRow("changed to wait-for-last before its minute: deleted", policy=Policy.WAIT_FOR_LAST,
            now=A_MINUTE_BEFORE_THE_HOUR),
    FateRow("changed to wait-for-last, a run active at its minute: deleted, its firing queued",
            policy=Policy.WAIT_FOR_LAST, active=("job-1",)),
    FateRow("changed to wait-for-last, nothing active: released, the queue's launch is the same firing",
            policy=Policy.WAIT_FOR_LAST, fate=Fate(RELEASE, launch(1, TOP_OF_THE_HOUR), TOP_OF_THE_HOUR * 60)),
    # -- after its minute, not launched
    FateRow("dealt with otherwise (another Job for it adopted): deleted", last_schedule=TOP_OF_THE_HOUR,
            now=A_MINUTE_PAST_THE_HOUR),
    FateRow("a starting deadline passed while the operator was away: deleted, missed", policy=Policy.FORBID,
            options=Options(past_limit=PAST_LIMIT_LAUNCH, starting_deadline=5), active=("job-1",),
            now=t("2024-03-01T01:06"), fate=Fate(DELETE, missed=DEADLINE)),
    FateRow("the starting deadline not passed yet: kept", policy=Policy.FORBID,
            options=Options(past_limit=PAST_LIMIT_LAUNCH, starting_deadline=5), active=("job-1",),
            now=t("2024-03-01T01:05"), fate=Fate(KEEP)),
    FateRow("the operator away past newer times: the latest launches, the staged one is deleted, missed",
            expression=EVERY_MINUTE, staged=A_MINUTE_PAST_THE_HOUR, last_schedule=TOP_OF_THE_HOUR,
            now=t("2024-03-01T01:05"), fate=Fate(DELETE, missed=SUPERSEDED)),
    FateRow("an overflow: the latest missed time launches, an older staged one is deleted, missed",
            expression=EVERY_MINUTE, staged=A_MINUTE_PAST_THE_HOUR, last_schedule=TOP_OF_THE_HOUR,
            now=t("2024-03-01T04:00"), fate=Fate(DELETE, missed=SUPERSEDED)),
    FateRow("the API server unreachable past the next time: the newer time wins, the staged one is missed",
            expression=EVERY_MINUTE, staged=TOP_OF_THE_HOUR, last_schedule=t("2024-03-01T00:59"),
            now=A_MINUTE_PAST_THE_HOUR, fate=Fate(DELETE, missed=SUPERSEDED)),
    FateRow("catch-up all, forbid, a run active: an older missed time goes first, the staged one is kept",
            policy=Policy.FORBID, options=Options(past_limit=PAST_LIMIT_LAUNCH, catch_up=CATCH_UP_ALL),
            expression=EVERY_TEN, staged=t("2024-03-01T01:10"), last_schedule=t("2024-03-01T00:50"),
            active=("job-1",), now=t("2024-03-01T01:10"), fate=Fate(KEEP)),
    FateRow("catch-up all, forbid, the run ended: the oldest launches first, the staged one is kept",
            policy=Policy.FORBID, options=Options(past_limit=PAST_LIMIT_LAUNCH, catch_up=CATCH_UP_ALL),
            expression=EVERY_TEN, staged=t("2024-03-01T01:10"), last_schedule=t("2024-03-01T00:50"),
            now=t("2024-03-01T01:10"), fate=Fate(KEEP)),
    FateRow("catch-up all, allow: every missed time launches, the staged one released with them",
            options=Options(past_limit=PAST_LIMIT_LAUNCH, catch_up=CATCH_UP_ALL),
            expression=EVERY_TEN, staged=t("2024-03-01T01:10"), last_schedule=t("2024-03-01T00:50"),
            now=t("2024-03-01T01:10"), fate=Fate(RELEASE, launch(2, t("2024-03-01T01:10")),
                                                   t("2024-03-01T01:10") * 60)),
]


@pytest.mark.parametrize("row", FATE_ROWS, ids=[row.name for row in FATE_ROWS])
def test_staged_fate(row: FateRow) -> None:
    spec, timeline = spec_of(row.expression, row.policy, row.options), timeline_of(row.expression)
    state = JobState(last_schedule=row.last_schedule, launched=len(row.active), active=list(row.active),
                     not_before=row.now if row.suspended else None)
    decisions = () if row.suspended else decide(spec, state, timeline, row.now).decisions
    apply_tick(state, decisions)
    fate = staged_fate(spec, state, timeline, row.now, row.staged, decisions, suspended=row.suspended,
                       current=row.current, enabled=row.enabled)
    assert fate == row.fate


def test_a_manual_launch_at_the_staged_minute_releases_nothing() -> None:
    spec, timeline = spec_of(HOURLY, Policy.FORBID, OPERATOR), timeline_of(HOURLY)
    state = JobState(last_schedule=CREATED, launched=1, active=["job-1"])
    decisions = decide(spec, state, timeline, TOP_OF_THE_HOUR).decisions
    apply_tick(state, decisions)
    manual = manual_launch(spec, state, TOP_OF_THE_HOUR)
    assert staged_fate(spec, state, timeline, TOP_OF_THE_HOUR, TOP_OF_THE_HOUR,
                       (*decisions, manual)) == Fate(KEEP)


def test_every_policy_has_a_release_row_and_a_row_that_does_not_release() -> None:
    for policy in Policy:
        fates = {row.fate.action for row in FATE_ROWS if row.policy is policy}
        assert RELEASE in fates and fates - {RELEASE}, policy
