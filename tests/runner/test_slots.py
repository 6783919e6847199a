"""Worker slots and the order of due firings."""

from __future__ import annotations


import pytest

from cronctl.runner.slots import SlotPool, default_workers, pool_missing, slot_names, workers_busy


@pytest.mark.parametrize("size, first, last", [
    (1, "worker-1", "worker-1"),
    (9, "worker-1", "worker-9"),
    (10, "worker-01", "worker-10"),
    (12, "worker-01", "worker-12"),
    (100, "worker-001", "worker-100"),
])
def test_slot_names_sort_as_numbers(size, first, last):
    names = slot_names(size)
    assert names[0] == first and names[-1] == last and len(names) == size
    assert names == sorted(names)


def test_a_firing_takes_the_free_slot_with_the_smallest_name():
    pool = SlotPool(12)
    assert [pool.acquire() for _ in range(3)] == ["worker-01", "worker-02", "worker-03"]
    pool.release("worker-02")
    assert pool.acquire() == "worker-02"
    pool.release("worker-01")
    pool.release("worker-03")
    assert pool.busy() == ["worker-02"] and pool.busy_count == 1 and pool.free_count == 11
    assert pool.acquire() == "worker-01"


def test_a_full_pool_says_why_a_firing_waits():
    pool = SlotPool(4)
    assert [pool.acquire() for _ in range(4)] == ["worker-1", "worker-2", "worker-3", "worker-4"]
    assert pool.acquire() is None
    assert pool.describe_wait() == "queued: 4/4 workers busy"
    single = SlotPool(1)
    single.acquire()
    assert single.describe_wait() == "queued: 1/1 worker busy"


def test_misuse_is_refused():
    pool = SlotPool(2)
    with pytest.raises(ValueError):
        pool.release("worker-1")  # not busy
    with pytest.raises(ValueError):
        pool.release("worker-3")  # not a slot
    pool.take("worker-2")  # an adopted run keeps its slot
    with pytest.raises(ValueError):
        pool.take("worker-2")
    assert pool.acquire() == "worker-1"
    for size in (0, -1, True, 2.0):
        with pytest.raises(ValueError):
            SlotPool(size)
    assert default_workers() >= 1


@pytest.mark.parametrize("busy, workers, pool, said", [
    (4, 4, None, "4/4 workers busy"),
    (1, 1, None, "1/1 worker busy"),
    (2, 2, "reports", "2/2 workers of CronPool 'reports' busy"),
    (1, 1, "reports", "1/1 worker of CronPool 'reports' busy"),
])
def test_why_a_firing_waits_is_worded_once_for_the_node_and_for_a_pool(busy: int, workers: int, pool: str | None,
                                                                        said: str) -> None:
    assert workers_busy(busy, workers, pool) == said


def test_a_missing_pool_is_named() -> None:
    assert pool_missing("reports") == "CronPool 'reports' is not in the folder"
