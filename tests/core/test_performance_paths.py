"""The fast paths of the core against the slow, obvious way of getting the same answer.

Each shortcut (year-type tables, the shared DaySet, the month memo, batched
next_runs, chain ends from the 400-year cycle, the cycle tables of sparse day
sets, reused missed counts, repeated decisions of waiting jobs) must give
exactly what the plain computation gives.
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronctl.core.controller import Controller
from cronctl.core import cycle
from cronctl.core.cron import CHAIN_TABLE_FROM, CronExpression, DaySet, parse_cron
from cronctl.core.schedule import HORIZON_YEARS, Timeline, next_runs, parse_expression
from cronctl.core.spec import JobSpec, Options, Policy
from cronctl.core.state import JobState
from cronctl.core.tick import MAX_MISSED, count_missed, decide
from cronctl.core.times import (MONTH_LENGTHS, MONTH_STARTS, days_from_civil, days_in_month, format_time,
                                is_leap, parse_time, to_minute, weekday, year_start, year_type)
from cronctl.core.zones import FixedOffset

from .test_properties import EXPRESSIONS, FREQUENT, RARE, Reference

START = to_minute(2000, 1, 1)
END = to_minute(2199, 10, 1)
MINUTES = st.integers(START, END)
OFFSETS = st.sampled_from([0, 330, -480, 840, -840, 345, -570])
DENSE = st.sampled_from(["* * * * *", "*/15 * * * *", "30 * * * *", "*/20 9-17 * * 1-5",
                         "5-55/10 */3 * * *", "*/5 0-6 1,15 * *", "0,15,45 8,12,18 * * 1,3,5",
                         "59 23 31 12 *", "* * 29 2 *", "*/7 22-23 28-31 * *"])


# -- calendar tables -----------------------------------------------------------------


def test_year_tables_agree_with_the_civil_calendar() -> None:
    for year in range(1900, 2700):
        first = days_from_civil(year, 1, 1)
        assert year_start(year) == first
        assert year_type(year) == is_leap(year) * 7 + weekday(first)
        for month in range(1, 13):
            assert year_start(year) + MONTH_STARTS[is_leap(year)][month] == days_from_civil(year, month, 1)
            assert MONTH_LENGTHS[is_leap(year)][month] == days_in_month(year, month)


@settings(max_examples=150, deadline=None)
@given(EXPRESSIONS | RARE)
def test_month_masks_by_year_type_match_the_reference_day_by_day(expr: str) -> None:
    """The 14 year types stand for every year: 2000-2027 shows each of them."""
    compiled, reference = parse_cron(expr), Reference(expr)
    counts = [0] * 14
    for year in range(2000, 2028):
        for month in range(1, 13):
            expected = sum(1 << day for day in range(1, days_in_month(year, month) + 1)
                           if reference.day_matches(dt.date(year, month, day)))
            assert compiled.day_mask(year, month) == expected, (expr, year, month)
        counts[year_type(year)] = sum(compiled.day_mask(year, m).bit_count() for m in range(1, 13))
    assert compiled.days_by_year_type() == (tuple(counts[:7]), tuple(counts[7:]))
    assert compiled.days.fires == any(counts)


# -- next fires ----------------------------------------------------------------------


def chain(expr: str, after: int, count: int, offset: int) -> list[int]:
    """next_runs the slow way: one next fire after another."""
    timeline = Timeline(parse_expression(expr), after, FixedOffset(offset))
    times: list[int] = []
    t: int | None = after
    while len(times) < count:
        t = timeline.next_after(t)
        if t is None:
            break
        times.append(t)
    return times


@settings(max_examples=200, deadline=None)
@given(DENSE | EXPRESSIONS, MINUTES, st.integers(1, 300), OFFSETS)
def test_batched_next_runs_is_the_chain_of_next_fires(expr: str, after: int, count: int, offset: int) -> None:
    assert next_runs(parse_expression(expr), after, count, FixedOffset(offset)) == chain(expr, after, count, offset)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DENSE | FREQUENT, st.lists(MINUTES, min_size=2, max_size=6), OFFSETS)
def test_the_month_memo_answers_alike_wherever_the_last_search_was(expr: str, afters: list[int],
                                                                    offset: int) -> None:
    """Searches jump between months (the memo misses) and stay in one (it hits)."""
    compiled = parse_expression(expr)
    zone = FixedOffset(offset)
    for after in afters + [a + 1 for a in afters] + afters:
        expected = Reference(expr).next_fire(dt.datetime(1970, 1, 1) + dt.timedelta(minutes=after), offset)
        found = next_runs(compiled, after, 1, zone)
        assert found == ([] if expected is None else [to_minute(expected.year, expected.month, expected.day,
                                                                expected.hour, expected.minute)])


@pytest.mark.parametrize("expr", ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 31 2 *", "0 0 30 2 */7",
                                  "0 0 31 4 */2", "0 0 30,31 2 */1", "* * 31 2,4 *"])
def test_expressions_without_a_matching_day_in_any_year_type_never_fire(expr: str) -> None:
    compiled = parse_cron(expr)
    assert not compiled.days.fires
    assert next_runs(compiled, START, 5) == []
    assert Timeline(compiled, START).first is None


# -- cycle tables of sparse day sets ----------------------------------------------------

SPARSE = RARE | st.sampled_from(["0 0 1 * *", "15 14 1 */3 *", "0 0 1 1 *", "30 23 31 12 *", "0 0 29 2 *",
                                 "0 18 30,31 3,6,9,12 *", "*/30 1 1 * *", "0 12 29 2 */7", "0 0 */31 12 FRI",
                                 "0 9 1 JAN,JUL *", "45 22 28-31 2 *", "0 0 13 2 5"])


def without_table(expr: str) -> CronExpression:
    """The expression compiled anew with a day set of its own that never builds a cycle table:
    every search walks the months, as before the tables."""
    compiled = parse_cron.__wrapped__(expr)
    days = DaySet(compiled.days_of_month, compiled.months, compiled.days_of_week, compiled.days_or)
    days.walked = lambda: None  # type: ignore[method-assign]
    object.__setattr__(compiled, "days", days)
    return compiled


def with_table(expr: str) -> CronExpression:
    compiled = parse_cron(expr)
    compiled.days.chain_table()
    return compiled


@settings(max_examples=200, deadline=None)
@given(SPARSE, st.lists(MINUTES, min_size=1, max_size=5), st.integers(1, HORIZON_YEARS))
def test_a_next_fire_from_the_cycle_table_is_the_month_walks(expr: str, afters: list[int], years_ahead: int) -> None:
    fast, plain = with_table(expr), without_table(expr)
    assert plain.days.table is None
    for after in afters + [a - 1 for a in afters]:
        assert fast.next_local(after, years_ahead) == plain.next_local(after, years_ahead), (after, years_ahead)


@settings(max_examples=200, deadline=None)
@given(SPARSE, MINUTES, st.integers(CHAIN_TABLE_FROM, 600), OFFSETS)
def test_a_chain_cut_from_the_cycle_table_is_the_chain_of_month_walks(expr: str, after: int, count: int,
                                                                       offset: int) -> None:
    plain = without_table(expr)
    expected: list[int] = []
    local: int | None = after + offset
    while len(expected) < count:
        local = plain.next_local(local, HORIZON_YEARS)  # type: ignore[arg-type]
        if local is None:
            break
        expected.append(local - offset)
    assert next_runs(with_table(expr), after, count, FixedOffset(offset)) == expected


@pytest.mark.parametrize(("expr", "days"), [("0 0 1 1 *", 400), ("0 0 29 2 *", 97), ("0 0 1 * *", 4800),
                                             ("*/30 1 1 * *", 4800), ("0 18 30,31 3,6,9,12 *", 2400)])
def test_a_table_holds_each_matching_day_of_the_cycle_once(expr: str, days: int) -> None:
    table = cycle.build(parse_cron(expr).days)
    assert table is not None and table.size == days
    assert list(table.minutes) == sorted(set(table.minutes))


@pytest.mark.parametrize("expr", ["0 2 * * *", "0 10 * * 7", "0 0 28-31 * *", "0 0 30 2 *"])
def test_dense_day_sets_and_those_that_never_fire_get_no_table(expr: str) -> None:
    assert cycle.build(parse_cron(expr).days) is None


def test_searches_that_keep_walking_months_switch_to_the_table() -> None:
    days = DaySet(frozenset({1}), frozenset(range(1, 13)), frozenset(range(7)), False)
    for _ in range(cycle.WALKS_BEFORE_TABLE - 1):
        days.walked()
    assert days.table is None
    days.walked()
    assert days.table is not None and days.table.size == 4800


# -- where chains end ----------------------------------------------------------------


def walked_chain_end(expr: str, first: int, offset: int) -> int | None:
    """The chain's end by walking firing years, as Timeline did before the cycle tables."""
    compiled = parse_cron(expr)
    year = int(format_time(first + offset)[:4])
    for _ in range(400):
        gap = next((step for step in range(1, HORIZON_YEARS + 1) if compiled.fires_in_year(year + step)), None)
        if gap is None:
            last = compiled.last_match_in_year(year)
            assert last is not None
            return last - offset
        year += gap
    return None


@settings(max_examples=150, deadline=None)
@given(RARE | st.sampled_from(["0 0 */31 12 FRI", "0 12 29 2 */7", "0 0 29 2 *", "0 0 13 * 5"]),
       MINUTES, OFFSETS)
def test_chain_ends_from_the_cycle_tables_match_a_year_by_year_walk(expr: str, anchor: int, offset: int) -> None:
    timeline = Timeline(parse_expression(expr), anchor, FixedOffset(offset))
    if timeline.first is not None:
        assert timeline.end == walked_chain_end(expr, timeline.first, offset)


# -- missed counts and waiting jobs ----------------------------------------------------


# How a window's start or end moves: by some minutes, or onto one of the times counted last.
MOVES = st.one_of(st.integers(0, 400_000), st.sampled_from([0, 1, 2, 59, 60, 61, 1440]),
                  st.sampled_from(["earliest", "latest", "upcoming"]))


def moved(t: int, move: int | str, known: object) -> int:
    if isinstance(move, int):
        return t + move
    target = getattr(known, move, None)
    return t if target is None else max(t, target)


@settings(max_examples=300, deadline=None)
@given(DENSE | FREQUENT | RARE, MINUTES, st.lists(st.tuples(MOVES, MOVES), min_size=1, max_size=8))
def test_counts_carried_from_tick_to_tick_equal_fresh_counts(expr: str, anchor: int,
                                                             steps: list[tuple[object, object]]) -> None:
    """Windows whose start and end both move forward, as a deadline moves them."""
    timeline = Timeline(parse_expression(expr), anchor)
    start, now, known = anchor, anchor, None
    for start_move, now_move in steps:
        now = moved(now, now_move, known)  # type: ignore[arg-type]
        start = min(moved(start, start_move, known), now)  # type: ignore[arg-type]
        carried = count_missed(timeline, start, now, known)
        fresh = count_missed(timeline, start, now)
        assert (carried.total, carried.latest) == (fresh.total, fresh.latest), (expr, start, now)
        if carried.total <= MAX_MISSED:
            assert (carried.upcoming, carried.earliest) == (fresh.upcoming, fresh.earliest)
        known = carried


@settings(max_examples=300, deadline=None)
@given(DENSE | FREQUENT | RARE, MINUTES, st.sampled_from([None, 1, 5, 60, 1440, 40 * 1440]),
       st.lists(st.tuples(st.one_of(st.integers(0, 200_000), st.just("next fire")),
                          st.sampled_from([0, 1, 2, 5, 60, 1440])), min_size=1, max_size=6))
def test_a_waiting_job_gets_the_same_decisions_while_they_hold(expr: str, created: int, deadline: int | None,
                                                               steps: list[tuple[object, int]]) -> None:
    spec = JobSpec("job", expr, Policy.FORBID, Options(starting_deadline=deadline), created, 0)
    state = JobState(active=["job-1"], launched=1)
    timeline = Timeline(parse_expression(expr), created)
    now = created
    for move, extra in steps:
        following = timeline.next_after(now) if move == "next fire" else now + move  # type: ignore[operator]
        if following is None:
            break
        now = following + extra
        result = decide(spec, state, timeline, now)
        if not result.waiting:
            continue
        ends = [] if result.holds_until is None else [result.holds_until - 1, result.holds_until]
        for later in [now, now + 1, now + 59, now + 1440, *ends]:
            if result.holds(later):
                again = decide(spec, state, timeline, later)
                assert again.decisions == result.decisions, (expr, now, later)


class _Forgetful(dict):  # type: ignore[type-arg]
    def __setitem__(self, key: object, value: object) -> None:
        pass


class PlainController(Controller):
    """The controller without its shortcuts: every due or waiting job decided afresh."""

    def _jobs_to_look_at(self, now: int, holding, triggers):  # type: ignore[no-untyped-def]
        return [(index, job, None) for index, job, _ in super()._jobs_to_look_at(now, holding, triggers)]

    def __init__(self) -> None:
        super().__init__()
        self._hints = _Forgetful()  # no tick starts from what the last one counted

    def _replayed(self, now: int) -> None:
        return None


TICK_EXPRS = ["* * * * *", "*/7 * * * *", "0 * * * *", "@every 25m", "0 0 29 2 *", "0 0 1 * *",
              "0 12 29 2 */7", "45 22 28-31 2 *", "0 0 */31 12 FRI", "0 6 15 * *"]
OPTIONS = st.fixed_dictionaries({}, optional={
    "timeout": st.sampled_from([30, 1440, 20 * 1440]), "starting_deadline": st.sampled_from([1, 5, 60, 40 * 1440]),
    "keep_succeeded": st.integers(0, 2), "keep_failed": st.integers(0, 1)})
OPERATION = st.one_of(
    st.tuples(st.just("create"), st.sampled_from(TICK_EXPRS), st.sampled_from(list(Policy)), OPTIONS),
    st.tuples(st.just("tick"), st.sampled_from([0, 1, 60, 1440, 30 * 1440, 400 * 1440])),
    st.tuples(st.just("finish"), st.integers(0, 5), st.integers(1, 4), st.sampled_from(["succeeded", "failed"])),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPERATION, min_size=1, max_size=40), MINUTES)
def test_the_shortcuts_of_the_controller_change_no_decision(operations: list[tuple], start: int) -> None:
    from cronctl.core.errors import CronctlError
    fast, plain = Controller(), PlainController()
    now, jobs = start, 0
    for operation in operations:
        if operation[0] == "create":
            _, expr, policy, options = operation
            for controller in (fast, plain):
                try:
                    controller.create_job(now, f"j{jobs}", expr, policy.value, options)
                except CronctlError:
                    pass
            jobs += 1
        elif operation[0] == "tick":
            now += operation[1]
            assert fast.tick(now) == plain.tick(now)
        else:
            _, job, number, outcome = operation
            results = []
            for controller in (fast, plain):
                try:
                    results.append(controller.finish(now, f"j{job}-{number}", outcome).state)
                except CronctlError as error:
                    results.append(error.code)
            assert results[0] == results[1]
    assert fast.state.to_json() == plain.state.to_json()


@pytest.mark.parametrize("with_deadline", [True, False])
def test_ticks_that_only_replay_waiting_jobs_give_what_deciding_them_gives(with_deadline: bool) -> None:
    """The replays made once (Controller._replayed) are made again whenever a waiting job
    changes: a run that finishes, a promise that runs out (a deadline), a job that joins."""
    fast, plain = Controller(), PlainController()
    day = 1440
    start = to_minute(2024, 1, 1)
    jobs = [("stuck", "0 0 * * *", "forbid", None), ("monthly", "0 0 1 * *", "forbid", None),
            ("flood", "* * * * *", "forbid", None)]
    if with_deadline:
        jobs.append(("late", "0 0 1 * *", "forbid", {"starting_deadline": 3 * day}))
    for controller in (fast, plain):
        for job in jobs:
            controller.create_job(start, *job)
    now = start
    # Jan 2 00:00 stuck-1 and flood overflows; Feb 1 00:02 monthly-1 and late-1; Mar 1 both skip, late's
    # promise ending with its deadline (3 days); the runs finish one by one; a job joins.
    # Each change comes after a tick that made the replays, and is followed by two ticks a minute apart.
    for step in [day, 1, 1, day, 29 * day, 1, day, 28 * day, 1, day, day, 2 * day, 1, "stuck-1", 1, 1, day, 1,
                 "monthly-1", 1, 1, day, day, 1, "late-1", 1, 1, day, 1, "create", 1, 1, day, 1, 31 * day, 1, day]:
        if isinstance(step, str) and step != "create":
            if step.startswith("late") and not with_deadline:
                continue
            for controller in (fast, plain):
                assert controller.finish(now, step, "succeeded").state == "succeeded"
            continue
        if step == "create":
            for controller in (fast, plain):
                controller.create_job(now, "joins", "*/5 * * * *", "replace")
            continue
        assert isinstance(step, int)
        now += step
        assert fast.step(now) == plain.step(now), format_time(now)
    assert fast.state.to_json() == plain.state.to_json()


# -- reading times ---------------------------------------------------------------------


def plain_parse_time(text: str) -> int | None:
    """The wire format read character by character, the calendar checked by datetime."""
    digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15]
    if len(text) != 16 or any(not ("0" <= text[i] <= "9") for i in digits) \
            or (text[4], text[7], text[10], text[13]) != ("-", "-", "T", ":"):
        return None
    try:
        moment = dt.datetime(int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]), int(text[14:16]))
    except ValueError:
        return None
    if not 2000 <= moment.year <= 2199:
        return None
    return int((moment - dt.datetime(1970, 1, 1)).total_seconds()) // 60


TIME_LIKE = st.one_of(
    st.text(alphabet="0123456789-T:t ٣２\n", min_size=14, max_size=18),
    st.builds(lambda y, mo, d, h, mi, sep: f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}",
              st.integers(1990, 2210), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25),
              st.integers(0, 61), st.sampled_from(["T", "T", "t", " "])),
    MINUTES.map(format_time),
)


@settings(max_examples=500, deadline=None)
@given(TIME_LIKE)
def test_a_time_is_read_as_the_plain_reading_of_its_characters_reads_it(text: str) -> None:
    assert parse_time(text) == plain_parse_time(text)
