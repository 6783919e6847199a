"""Seed 001's order of waiting work and a pool's admissions: one rule for the dispatcher, the
runner's slots and a CronPool."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from cronctl.core.pool import PoolRun, admitted, admitted_across, java_order, pool_step, seed_order


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


# -- one look at a pool (pool_step) --------------------------------------------------

def run(key: str, nominal: int = 10, attempt: int = 1, not_before: float = 0.0) -> PoolRun:
    return PoolRun(key, key.split("/")[0], nominal, attempt, 600.0, not_before)


@pytest.mark.parametrize("workers, busy, waiting, second, start, queue, wake_at", [
    (2, 0, [run("e"), run("c"), run("a"), run("d"), run("b")], 600, ["a", "b"], ["c", "d", "e"], None),
    (2, 2, [run("a"), run("b")], 600, [], ["a", "b"], None),
    (2, 1, [run("b"), run("a")], 600, ["a"], ["b"], None),
    (3, 0, [run("late", not_before=615), run("a")], 600, ["a"], ["late"], 615),
    (3, 0, [run("late", not_before=615), run("a")], 615, ["a", "late"], [], None),
    (1, 0, [run("a/2", attempt=2), run("a/1", nominal=11), run("b")], 600, ["a/2"], ["b", "a/1"], None),
    (1, 5, [run("a")], 600, [], ["a"], None),
], ids=["five due at one minute, two workers: a and b start", "every worker busy: nothing starts",
        "one worker free: the first in order", "a jittered attempt waits for its second",
        "at its second it starts", "a retry's earlier nominal time goes first; then schedule, then attempt",
        "more busy than workers (the pool shrank): nothing starts"])
def test_a_pool_starts_the_first_waiting_attempts_while_it_has_free_workers(
        workers: int, busy: int, waiting: list[PoolRun], second: float, start: list[str], queue: list[str],
        wake_at: float | None) -> None:
    step = pool_step(workers, busy, waiting, second)
    assert [each.key for each in step.start] == start
    assert [each.key for each in step.queue] == queue
    assert step.wake_at == wake_at


# -- a node's workers across pools (admitted_across) --------------------------------------

class InPool(NamedTuple):
    nominal: int
    schedule: str
    pool: str | None


def in_place(run: InPool) -> tuple[int, bytes, int]:
    return seed_order(run.nominal, run.schedule)


@pytest.mark.parametrize("free, room, waiting, starts", [
    (4, {"p": 2}, [InPool(1, name, "p") for name in "edcba"], "ab"),
    (1, {"p": 2}, [InPool(1, name, "p") for name in "edcba"], "a"),
    (4, {"p": 1}, [InPool(1, "a", "p"), InPool(1, "b", "p"), InPool(1, "c", None)], "ac"),
    (4, {}, [InPool(1, "a", "missing"), InPool(2, "b", None)], "b"),
    (4, {"p": 0, "q": 1}, [InPool(1, "a", "p"), InPool(1, "b", "q"), InPool(1, "c", "q")], "b"),
], ids=["a pool of 2 on a node of 4: the first two in order", "the node's one free worker: the first",
        "a full pool's run waits, a run of no pool behind it starts", "a missing pool's run waits",
        "each pool by its own room"])
def test_a_nodes_workers_admit_in_order_within_each_pools_room(free: int, room: dict[str, int],
                                                                waiting: list[InPool], starts: str) -> None:
    assert "".join(run.schedule for run in admitted_across(free, room, waiting, in_place,
                                                           lambda run: run.pool)) == starts
