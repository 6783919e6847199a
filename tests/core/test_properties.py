"""Property tests: the core against obviously-correct references.

The reference matcher re-reads the seed's rules with datetime and sets; the
reference search steps day by day and minute by minute (bounded), which the
core must never do.
"""

from __future__ import annotations

import datetime as dt
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronctl import run
from cronctl.core.controller import Controller
from cronctl.core.schedule import Timeline, next_runs, parse_expression
from cronctl.core.state import ControllerState
from cronctl.core.times import format_time, to_minute
from cronctl.core.zones import FixedOffset

EPOCH = dt.datetime(1970, 1, 1)

# -- a reference matcher --------------------------------------------------------

BOUNDS = {"minute": (0, 59), "hour": (0, 23), "dom": (1, 31), "month": (1, 12), "dow": (0, 7)}


def reference_set(text: str, kind: str) -> set[int]:
    low, high = BOUNDS[kind]
    values: set[int] = set()
    for item in text.split(","):
        base, _, step = item.partition("/")
        if base == "*":
            lo, hi = low, (6 if kind == "dow" else high)
        elif "-" in base:
            lo, hi = (int(part) for part in base.split("-"))
        else:
            lo = hi = int(base)
        values.update(range(lo, hi + 1, int(step) if step else 1))
    return {0 if (kind == "dow" and v == 7) else v for v in values}


class Reference:
    """The seed's matching rules, read literally: sets, datetime, both day-field cases."""

    def __init__(self, expr: str) -> None:
        minute, hour, dom, month, dow = expr.split()
        self.minutes = reference_set(minute, "minute")
        self.hours = reference_set(hour, "hour")
        self.doms = reference_set(dom, "dom")
        self.months = reference_set(month, "month")
        self.dows = reference_set(dow, "dow")
        self.either = not dom.startswith("*") and not dow.startswith("*")

    def day_matches(self, day: dt.date) -> bool:
        if day.month not in self.months:
            return False
        dom_ok, dow_ok = day.day in self.doms, (day.isoweekday() % 7) in self.dows
        return (dom_ok or dow_ok) if self.either else (dom_ok and dow_ok)

    def matches(self, when: dt.datetime) -> bool:
        return when.minute in self.minutes and when.hour in self.hours and self.day_matches(when.date())

    def next_fire(self, after: dt.datetime, offset: int) -> dt.datetime | None:
        """Smallest matching local minute after ``after``, in a local year <= its year + 8.

        Steps day by day, then minute by minute through a matching day.
        """
        local = after + dt.timedelta(minutes=offset)
        day = local.date()
        while day.year <= local.year + 8:
            if self.day_matches(day):
                midnight = dt.datetime(day.year, day.month, day.day)
                for minute_of_day in range(1440):
                    candidate = midnight + dt.timedelta(minutes=minute_of_day)
                    if candidate > local and self.matches(candidate):
                        return candidate - dt.timedelta(minutes=offset)
            if day == dt.date(9999, 12, 31):
                return None
            day += dt.timedelta(days=1)
        return None


def reference_matches(expr: str, when: dt.datetime) -> bool:
    return Reference(expr).matches(when)


# -- strategies -------------------------------------------------------------------


def field_text(low: int, high: int, star_high: int | None = None) -> st.SearchStrategy[str]:
    value = st.integers(low, high)
    single = value.map(str)

    @st.composite
    def ranged(draw: st.DrawFn) -> str:
        a, b = sorted((draw(value), draw(value)))
        step = draw(st.one_of(st.none(), st.integers(1, high - low + 2)))
        return f"{a}-{b}" + ("" if step is None else f"/{step}")

    star = st.one_of(st.just("*"), st.integers(1, high - low + 2).map(lambda s: f"*/{s}"))
    item = st.one_of(single, ranged(), star)
    return st.lists(item, min_size=1, max_size=3).map(",".join)


EXPRESSIONS = st.tuples(
    field_text(0, 59), field_text(0, 23), field_text(1, 31), field_text(1, 12), field_text(0, 7),
).map(" ".join)

# Expressions that fire most days, for checks that enumerate missed times.
FREQUENT = st.tuples(
    field_text(0, 59), field_text(0, 23), field_text(1, 31), st.just("*"), field_text(0, 7),
).map(" ".join)

# Rare days: leap days, 31sts, single weekdays AND-ed with a day of month.
RARE = st.tuples(
    st.sampled_from(["0", "30", "*/30"]), st.sampled_from(["0", "12"]),
    st.sampled_from(["29", "30", "31", "*/31", "*/29", "1", "13", "*/2", "1-7"]),
    st.sampled_from(["2", "4,6", "12", "*/11", "2-3", "*"]),
    st.sampled_from(["*", "*/7", "5", "*/3", "0,6", "7", "*/6"]),
).map(" ".join)

STARTS = st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2199, 10, 1)).map(
    lambda d: d.replace(second=0, microsecond=0))
OFFSETS = st.sampled_from([0, 330, -480, 840, -840, 345, -570])


def minute_of(when: dt.datetime) -> int:
    return to_minute(when.year, when.month, when.day, when.hour, when.minute)


# -- properties -------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRESSIONS, STARTS, OFFSETS)
def test_next_fire_equals_a_stepping_search_within_eight_local_years(expr: str, start: dt.datetime,
                                                                     offset: int) -> None:
    expected = Reference(expr).next_fire(start, offset)
    found = next_runs(parse_expression(expr), minute_of(start), 1, FixedOffset(offset))
    assert found == ([] if expected is None else [minute_of(expected)]), (expr, start, offset)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RARE, STARTS, OFFSETS)
def test_rare_expressions_and_the_end_of_their_chain(expr: str, start: dt.datetime, offset: int) -> None:
    """A job's schedule times are the chain of next fires; it ends at the first empty search."""
    reference = Reference(expr)
    timeline = Timeline(parse_expression(expr), minute_of(start), FixedOffset(offset))
    t, at = start, minute_of(start)
    for _ in range(6):
        expected = reference.next_fire(t, offset)
        assert timeline.next_after(at) == (None if expected is None else minute_of(expected)), (expr, t)
        if expected is None:
            assert timeline.end is None or timeline.end <= at
            break
        if timeline.end is not None and timeline.end == minute_of(expected):
            assert reference.next_fire(expected, offset) is None
        t = expected
        at = minute_of(t)


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS, STARTS)
def test_every_fire_time_matches_and_nothing_between_matches(expr: str, start: dt.datetime) -> None:
    times = next_runs(parse_expression(expr), minute_of(start), 3)
    previous = minute_of(start)
    for t in times:
        when = EPOCH + dt.timedelta(minutes=t)
        assert reference_matches(expr, when), (expr, format_time(t))
        assert t > previous
        previous = t


@settings(max_examples=200, deadline=None)
@given(FREQUENT, STARTS, st.integers(1, 3000), st.integers(0, 3000))
def test_missed_count_and_latest_agree_with_stepping(expr: str, start: dt.datetime, span: int,
                                                     lead: int) -> None:
    """count_in and latest_in against the chain of next fires enumerated one by one."""
    anchor = minute_of(start)
    timeline = Timeline(parse_expression(expr), anchor)
    low, high = anchor + lead, anchor + lead + span
    chain = []
    t = timeline.next_after(low)
    while t is not None and t <= high and len(chain) <= 101:
        chain.append(t)
        t = timeline.next_after(t)
    assert timeline.count_in(low, high, 101) == min(len(chain), 101)
    if len(chain) <= 101:  # the walk reached high: the chain in (low, high] is complete
        assert timeline.latest_in(low, high) == (chain[-1] if chain else None)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 600), STARTS, st.integers(0, 100_000), st.integers(0, 5000))
def test_interval_arithmetic_agrees_with_stepping(every: int, start: dt.datetime, lead: int,
                                                  span: int) -> None:
    anchor = minute_of(start)
    timeline = Timeline(parse_expression(f"@every {every}m"), anchor)
    low, high = anchor + lead, anchor + lead + span
    chain = [anchor + k * every for k in range(1, (high - anchor) // every + 2)
             if low < anchor + k * every <= high]
    assert timeline.count_in(low, high, 101) == min(len(chain), 101)
    assert timeline.latest_in(low, high) == (chain[-1] if chain else None)
    assert timeline.next_after(low) == next(anchor + k * every for k in range(1, 10**6)
                                            if anchor + k * every > low)


# -- state and harness ----------------------------------------------------------------

TIMES = st.integers(0, 6000).map(lambda m: format_time(minute_of(dt.datetime(2024, 3, 1)) + m))
OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("create_job"), TIMES, st.sampled_from(["a", "b", "c"]),
              st.sampled_from(["*/7 * * * *", "0 * * * *", "@every 25m", "*/3 1-2 * * MON"]),
              st.sampled_from(["allow", "forbid", "replace"]),
              st.fixed_dictionaries({}, optional={
                  "timeout": st.integers(1, 90), "starting_deadline": st.integers(1, 200),
                  "keep_succeeded": st.integers(0, 3), "keep_failed": st.integers(0, 2)})),
    st.tuples(st.just("tick"), TIMES),
    st.tuples(st.just("finish"), TIMES, st.sampled_from(["a-1", "a-2", "b-1", "b-3", "c-2"]),
              st.sampled_from(["succeeded", "failed"])),
), max_size=25).map(lambda ops: sorted(ops, key=lambda op: op[1]))


@settings(max_examples=150, deadline=None)
@given(OPERATIONS)
def test_state_round_trips_through_json_and_behaves_the_same(operations: list[tuple]) -> None:
    controller = Controller()
    for operation in operations:
        run_on(controller, operation)
    saved = json.loads(json.dumps(controller.state.to_json()))
    restored = Controller(ControllerState.from_json(saved))
    assert restored.state.to_json() == saved
    probe = ("tick", format_time((controller.state.clock or 0) + 500))
    assert run_on(restored, probe) == run_on(controller, probe)
    assert restored.state.to_json() == controller.state.to_json()


def run_on(controller: Controller, operation: tuple) -> object:
    from cronctl.harness import _result
    return _result(controller, list(operation))


JUNK = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
              st.sampled_from(["2024-03-01T00:00", "* * * * *", "@every 5m", "allow", "counts",
                               "+05:30", "a-1", "٣", "succeeded", 10**40])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner,
                                                                         max_size=3)),
    max_leaves=12,
)
NAMES = st.sampled_from(["next_runs", "create_job", "tick", "finish", "job_status", "run", "history",
                         "bulk_create", "nope"])


@settings(max_examples=400, deadline=None)
@given(st.one_of(JUNK, st.lists(st.one_of(JUNK, st.builds(lambda n, a: [n, *a], NAMES,
                                                           st.lists(JUNK, max_size=6))), max_size=8)))
def test_run_never_raises_and_answers_every_operation(operations: object) -> None:
    results = run(operations)
    assert isinstance(results, list)
    assert len(results) == (len(operations) if isinstance(operations, list) else 0)
    json.dumps(results)
