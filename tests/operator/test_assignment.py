"""``cronctl shards``: which shard holds which schedules, and the ones nobody holds."""

from __future__ import annotations

from typing import Any

from cronctl.operator.assignment import LeaseView, assignment, render, unassigned

NOW = 1_700_000_000.0


def schedule(name: str, shard: str | None = None, written_by: str | None = "same") -> dict[str, Any]:
    labels = {} if shard is None else {"cronctl.dev/shard": shard}
    body: dict[str, Any] = {"metadata": {"name": name, "namespace": "team-a", "labels": labels}}
    if written_by is not None:
        recorded = shard if written_by == "same" else written_by
        body["status"] = {"launched": 1, **({} if recorded is None else {"shard": recorded})}
    return body


def lease(name: str, holder: str | None = "pod-1", ago: float = 2.0, duration: int = 15) -> LeaseView:
    return LeaseView(name, holder, NOW - ago, duration)


def test_each_shard_is_a_row_with_its_schedules_and_its_leases_holder() -> None:
    rows = assignment([schedule("x"), schedule("y", "a"), schedule("z", "a")],
                      [lease("cronctl-operator"), lease("cronctl-operator-a", "pod-a")], NOW)
    assert [(r.shard, r.lease, r.holder, r.held, len(r.schedules)) for r in rows] == [
        (None, "cronctl-operator", "pod-1", True, 1), ("a", "cronctl-operator-a", "pod-a", True, 2)]
    assert unassigned(rows) == []


def test_a_schedule_whose_shard_has_no_lease_is_unassigned() -> None:
    rows = assignment([schedule("x", "b")], [lease("cronctl-operator")], NOW)
    assert [(r.shard, r.schedules) for r in unassigned(rows)] == [("b", ["team-a/x"])]
    assert "unassigned: 1 CronSchedule(s) of shard b, whose Lease cronctl-operator-b is not held" in render(rows)


def test_a_schedule_whose_shards_lease_expired_is_unassigned() -> None:
    rows = assignment([schedule("x", "a")], [lease("cronctl-operator-a", ago=16)], NOW)
    assert [r.shard for r in unassigned(rows)] == ["a"]
    assert "has expired" in render(rows)


def test_an_unlabelled_schedule_without_a_default_shard_is_unassigned() -> None:
    rows = assignment([schedule("x")], [lease("cronctl-operator-a")], NOW)
    assert [(r.shard, r.schedules) for r in unassigned(rows)] == [(None, ["team-a/x"])]
    assert "(default)" in render(rows)


def test_a_shard_with_a_lease_and_no_schedules_is_shown_and_is_not_a_problem() -> None:
    rows = assignment([], [lease("cronctl-operator-a"), lease("other-lease")], NOW)
    assert [(r.shard, r.schedules) for r in rows] == [("a", [])] and unassigned(rows) == []


def test_a_schedule_the_new_shard_has_not_reconciled_yet_is_moving() -> None:
    rows = assignment([schedule("x", "b", written_by="a"), schedule("new", "b", written_by=None)],
                      [lease("cronctl-operator-b")], NOW)
    assert [(r.shard, r.moving) for r in rows] == [("b", ["team-a/x"])]
    assert rows[0].as_json()["moving"] == ["team-a/x"]
