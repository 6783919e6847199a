"""Parsing and matching of five-field expressions (seed 000, 'Cron expressions')."""

from __future__ import annotations

import pytest

from cronctl.core.cron import Field, parse_cron, parse_field
from cronctl.core.errors import Code, ExpressionError


@pytest.mark.parametrize("text, field, expected", [
    ("*/15", Field.MINUTE, {0, 15, 30, 45}),
    ("*/10", Field.DAY_OF_MONTH, {1, 11, 21, 31}),
    ("*/2", Field.MONTH, {1, 3, 5, 7, 9, 11}),
    ("1-30/7", Field.DAY_OF_MONTH, {1, 8, 15, 22, 29}),
    ("MON-FRI/2", Field.DAY_OF_WEEK, {1, 3, 5}),
    ("*", Field.DAY_OF_WEEK, {0, 1, 2, 3, 4, 5, 6}),
    ("7", Field.DAY_OF_WEEK, {0}),
    ("5-7", Field.DAY_OF_WEEK, {5, 6, 0}),
    ("1-fri", Field.DAY_OF_WEEK, {1, 2, 3, 4, 5}),
    ("jan,Dec", Field.MONTH, {1, 12}),
    ("*/100", Field.MINUTE, {0}),
    ("0005", Field.MINUTE, {5}),
    ("*/0002", Field.HOUR, set(range(0, 24, 2))),
    ("*/" + "9" * 5000, Field.MINUTE, {0}),
])
def test_field_values(text: str, field: Field, expected: set[int]) -> None:
    assert parse_field(text, field) == expected


@pytest.mark.parametrize("expression, message", [
    ("0 9 * * 8", "day-of-week: 8 is out of range 0-7"),
    ("*/0 * * * *", "minute: step must be >= 1"),
    ("60 * * * *", "minute: 60 is out of range 0-59"),
    ("0 24 * * *", "hour: 24 is out of range 0-23"),
    ("0 0 0 * *", "day-of-month: 0 is out of range 1-31"),
    ("0 0 * 13 *", "month: 13 is out of range 1-12"),
    ("5/15 * * * *", "minute: 5/15: a step may follow only * or a range"),
    ("0 0 * * FRI-SUN", "day-of-week: range FRI-SUN runs backwards"),
    ("1,,2 * * * *", "minute: empty item in list"),
    ("0 0 * JAN-FOO *", "month: 'FOO' is not a number or a name"),
    ("0 MON * * *", "hour: 'MON' is not a number"),
    ("-5 * * * *", "minute: a value is missing"),
    ("? * * * *", "minute: '?' is not a number"),
    ("0 0 L * *", "day-of-month: 'L' is not a number"),
    ("0 0 * * 1#2", "day-of-week: '1#2' is not a number or a name"),
    ("0 0 * * ſun", "day-of-week: 'ſun' is not a number or a name"),
    ("0 ٣ * * *", "hour: '٣' is not a number"),
    ("* * * *", "expression: has 4 fields, a cron expression has 5 "
                "(minute hour day-of-month month day-of-week)"),
])
def test_refusals_name_the_field_and_the_reason(expression: str, message: str) -> None:
    with pytest.raises(ExpressionError) as refused:
        parse_cron(expression)
    assert refused.value.message == message
    assert refused.value.code is Code.INVALID_EXPRESSION


@pytest.mark.parametrize("expression, dom_restricted, dow_restricted", [
    ("0 0 * * *", False, False),
    ("0 0 */1 * */2", False, False),
    ("0 0 5 * MON", True, True),
    ("0 0 1-31 * *", True, False),
    ("0 0 *,5 * 5,*", False, True),
])
def test_a_day_field_is_restricted_when_its_text_does_not_begin_with_star(
        expression: str, dom_restricted: bool, dow_restricted: bool) -> None:
    compiled = parse_cron(expression)
    assert (compiled.day_of_month_restricted, compiled.day_of_week_restricted) == (dom_restricted,
                                                                                     dow_restricted)


def test_whitespace_around_and_between_fields_is_ignored() -> None:
    assert parse_cron("  0\t9  * *\n MON ").text == "0 9 * * MON"
