"""Bounded history (seed 000 Part 3 rule 2)."""

from cronctl.core.retention import Finished, history_order, keep_newest, retention_class


def test_each_class_keeps_its_newest_runs() -> None:
    kept: list[Finished] = []
    assert keep_newest(kept, Finished(10, 1, "j-1"), 2) == []
    assert keep_newest(kept, Finished(20, 2, "j-2"), 2) == []
    assert keep_newest(kept, Finished(30, 3, "j-3"), 2) == [Finished(10, 1, "j-1")]
    assert kept == [Finished(20, 2, "j-2"), Finished(30, 3, "j-3")]


def test_a_tie_on_finish_time_keeps_the_higher_launch_number() -> None:
    kept: list[Finished] = []
    keep_newest(kept, Finished(10, 2, "j-2"), 1)
    assert keep_newest(kept, Finished(10, 1, "j-1"), 1) == [Finished(10, 1, "j-1")]
    assert kept == [Finished(10, 2, "j-2")]


def test_keep_zero_drops_at_once() -> None:
    kept: list[Finished] = []
    assert keep_newest(kept, Finished(10, 1, "j-1"), 0) == [Finished(10, 1, "j-1")]
    assert kept == []


def test_timed_out_runs_count_as_failed() -> None:
    assert [retention_class(s) for s in ("succeeded", "failed", "timed_out")] == [
        "succeeded", "failed", "failed"]


def test_history_is_oldest_first_by_finish_then_launch_number() -> None:
    succeeded = [Finished(10, 3, "j-3")]
    failed = [Finished(5, 4, "j-4"), Finished(10, 1, "j-1")]
    assert [run.run_id for run in history_order(succeeded, failed)] == ["j-4", "j-1", "j-3"]
