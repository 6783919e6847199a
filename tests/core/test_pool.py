"""Seed 001's order of waiting work and a pool's admissions: one rule for the dispatcher, the
runner's slots and a CronPool."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from cronctl.core.pool import admitted, java_order, seed_order


class Waiting(NamedTuple):
    nominal: int
    schedule: str
    attempt: int = 1


def place(run: Waiting) -> tuple[int, bytes, int]:
    return seed_order(run.nominal, run.schedule, run.attempt)


def test_names_compare_as_java_strings_do() -> None:
    # U+FF21 sorts after a supplementary character in Java (UTF-16 surrogates start at
    # 0xD800), but before it by code point, as Python's own comparison would have it.
    wide, emoji = "\uff21", "\U0001f600"
    assert wide < emoji
    assert java_order(emoji) < java_order(wide)
    assert java_order("ab") < java_order("abc") < java_order("abd")


def test_the_order_is_nominal_time_then_schedule_then_attempt() -> None:
    runs = [Waiting(2, "a"), Waiting(1, "b", 2), Waiting(1, "b"), Waiting(1, "a")]
    assert sorted(runs, key=place) == [Waiting(1, "a"), Waiting(1, "b"), Waiting(1, "b", 2), Waiting(2, "a")]


FIVE_AT_ONE_MINUTE = [Waiting(10, name) for name in ("e", "c", "a", "d", "b")]


@pytest.mark.parametrize("workers, busy, starts", [
    (2, 0, ["a", "b"]),  # a pool of two, five due at one minute: two start, in name order
    (2, 1, ["a"]),
    (2, 2, []),
    (2, 3, []),  # more running than workers (the pool was made smaller): none until below
    (10, 0, ["a", "b", "c", "d", "e"]),
])
def test_a_pool_starts_as_many_waiting_runs_as_it_has_free_workers(workers: int, busy: int,
                                                                   starts: list[str]) -> None:
    assert [run.schedule for run in admitted(workers, busy, FIVE_AT_ONE_MINUTE, place)] == starts


def test_a_retry_waits_behind_older_times_and_before_newer_ones() -> None:
    waiting = [Waiting(11, "a"), Waiting(10, "z", attempt=2), Waiting(10, "z")]
    assert admitted(1, 0, waiting, place) == [Waiting(10, "z")]
    assert admitted(2, 0, waiting, place) == [Waiting(10, "z"), Waiting(10, "z", attempt=2)]
