"""While ``kubectl cronctl import`` adopts a CronJob's active Jobs, the operator decides nothing for the new
CronSchedule (``cronctl.dev/adopting``): else it sees no run under way, launches a due time beside the one
being adopted (Forbid twice) and then deletes the adopted Job as a leftover. The times that came due are
decided once the mark is gone, by the missed-schedule rules; a mark left by an import that stopped
half-way holds the schedule ``ADOPTING_SECONDS`` at most, and a Warning says so. Pure: no server."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from cronctl.core.times import parse_time
from cronctl.operator.adopting import STALE_REASON
from cronctl.operator.plan import plan
from cronctl.plugin.importing import adoption

TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "x"}]}}}}
LAST_FIRED = "2024-03-01T00:10:00Z"  # the CronJob's last schedule time: the anchor
IMPORT_BEGAN = "2024-03-01T00:10:50Z"  # the import across 00:11: the mark's time
DUE = "2024-03-01T00:11:00Z"


def second(text: str) -> int:
    minute = parse_time(text[:16])
    assert minute is not None
    return minute * 60 + int(text[17:19])


def minute(text: str) -> int:
    return second(text) // 60


def imported(policy: str, mark: str | None) -> dict[str, Any]:
    annotations = {"cronctl.dev/anchor": LAST_FIRED}
    if mark is not None:
        annotations["cronctl.dev/adopting"] = mark
    return {"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
            "metadata": {"name": "long", "namespace": "team-a", "uid": "uid-9", "generation": 1,
                         "annotations": annotations, "creationTimestamp": IMPORT_BEGAN},
            "spec": {"schedule": "* * * * *", "concurrencyPolicy": policy, "jobTemplate": TEMPLATE}}


def adopted(schedule: dict[str, Any]) -> dict[str, Any]:
    """The CronJob's run of 00:10, still running, once the import made it the schedule's run 1."""
    job: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job", "status": {"active": 1},
                           "metadata": {"name": f"long-{minute(LAST_FIRED)}", "namespace": "team-a", "uid": "job-1",
                                        "creationTimestamp": "2024-03-01T00:10:01Z"}}
    patch = adoption(job, schedule, 1)
    assert patch is not None
    for key, value in patch["metadata"].items():
        job["metadata"][key] = value
    return job


class Row(NamedTuple):
    name: str
    mark: str | None  # the adopting annotation
    now: str  # the second the operator plans at
    held: bool
    wake_at: str | None = None  # while held
    warned: bool = False


ROWS = [
    Row("no mark: planned as usual, the due time launched", None, "2024-03-01T00:11:05Z", held=False),
    Row("marked 15 s ago: nothing decided, a look once the mark is stale", IMPORT_BEGAN, "2024-03-01T00:11:05Z",
        held=True, wake_at="2024-03-01T00:12"),
    Row("marked 59 s ago: still held", IMPORT_BEGAN, "2024-03-01T00:11:49Z", held=True, wake_at="2024-03-01T00:12"),
    Row("marked 30 s ahead (the importer's clock): held", "2024-03-01T00:11:35Z", "2024-03-01T00:11:05Z",
        held=True, wake_at="2024-03-01T00:13"),
    Row("marked 60 s ago (an import stopped half-way): planned as usual, a Warning", IMPORT_BEGAN,
        "2024-03-01T00:11:50Z", held=False, warned=True),
    Row("marked 2 min ahead: no hold on a clock that far off, a Warning", "2024-03-01T00:13:10Z",
        "2024-03-01T00:11:05Z", held=False, warned=True),
    Row("a mark that is not a time: planned as usual, a Warning", "3", "2024-03-01T00:11:05Z", held=False,
        warned=True),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_the_adopting_mark_holds_a_fresh_import_and_nothing_else(row: Row) -> None:
    now = second(row.now)
    result = plan(imported("Forbid", row.mark), [], now // 60, second=now)
    if row.held:
        assert (result.effects, result.wake_at) == ([], minute(row.wake_at + ":00Z"))  # type: ignore[operator]
        return
    assert [job["metadata"]["annotations"]["cronctl.dev/scheduled-time"] for job in result.create] == [DUE]
    assert result.status is not None and result.status["lastScheduleTime"] == DUE
    warnings = [e for e in result.events if e.reason == STALE_REASON]
    assert [e.type for e in warnings] == (["Warning"] if row.warned else [])
    if row.warned:
        assert "cronctl.dev/adopting" in warnings[0].message and "run the import again" in warnings[0].message


def test_a_stale_mark_is_said_once_at_the_plan_that_ends_its_hold() -> None:
    """The first plan past the bound writes the schedule's first status; the next ones say nothing more."""
    schedule = imported("Forbid", "3")
    first = plan(schedule, [], minute(DUE), second=second("2024-03-01T00:11:05Z"))
    assert [e.reason for e in first.events].count(STALE_REASON) == 1
    schedule["status"] = first.status
    later = plan(schedule, first.create, minute(DUE) + 1, second=second("2024-03-01T00:12:05Z"))
    assert STALE_REASON not in [e.reason for e in later.events]


def test_a_marked_schedule_being_deleted_is_not_held_from_its_cleanup() -> None:
    schedule = imported("Forbid", IMPORT_BEGAN)
    schedule["metadata"]["deletionTimestamp"] = "2024-03-01T00:11:02Z"
    result = plan(schedule, [], minute(DUE), second=second("2024-03-01T00:11:05Z"))
    assert result.create == [] and result.status is not None  # planned: nothing launched, its status written


def test_once_the_mark_is_gone_forbid_skips_the_due_time_beside_the_adopted_run() -> None:
    schedule = imported("Forbid", IMPORT_BEGAN)
    job = adopted(schedule)
    during = plan(schedule, [job], minute(DUE), second=second("2024-03-01T00:11:10Z"))
    assert during.effects == []
    del schedule["metadata"]["annotations"]["cronctl.dev/adopting"]
    after = plan(schedule, [job], minute(DUE), second=second("2024-03-01T00:11:20Z"))
    assert after.create == [] and after.deletes() == []  # the adopted Job is the run, not a leftover
    assert [e.reason for e in after.events] == ["Skipped"]
    assert after.status is not None and after.status["skipped"] == 1
    assert [run["name"] for run in after.status["active"]] == [job["metadata"]["name"]]


def test_once_the_mark_is_gone_allow_runs_the_due_time_once_beside_the_adopted_run() -> None:
    schedule = imported("Allow", IMPORT_BEGAN)
    job = adopted(schedule)
    assert plan(schedule, [job], minute(DUE), second=second("2024-03-01T00:11:10Z")).effects == []
    del schedule["metadata"]["annotations"]["cronctl.dev/adopting"]
    after = plan(schedule, [job], minute(DUE), second=second("2024-03-01T00:11:20Z"))
    assert [made["metadata"]["annotations"]["cronctl.dev/scheduled-time"] for made in after.create] == [DUE]
    assert [made["metadata"]["labels"]["cronctl.dev/run"] for made in after.create] == ["2"]
    assert after.deletes() == []


def test_without_the_mark_the_race_launches_beside_the_run_then_deletes_the_adopted_job() -> None:
    """What the mark prevents, as the flaky import test saw it: the schedule reconciled between its
    create and the adoption launches the due time as run 1; the adopted Job, labelled run 1 too and
    not in the status, is then a leftover."""
    schedule = imported("Forbid", None)
    raced = plan(schedule, [], minute(DUE), second=second("2024-03-01T00:11:10Z"))
    assert len(raced.create) == 1
    schedule["status"] = raced.status
    launched = raced.create[0]
    launched["metadata"]["uid"] = "job-2"
    later = plan(schedule, [adopted(schedule), launched], minute(DUE), second=second("2024-03-01T00:11:20Z"))
    assert later.deletes() == [adopted(schedule)["metadata"]["name"]]
