"""The backfill annotation in one reconcile (issue 14): ``cronctl.dev/backfill: <from>/<to>``.

The schedule ("0 * * * *", Allow unless named) is first seen at 2024-03-01T00:00 and
asked at 00:05 for 2024-02-29T22:00 to 2024-02-29T23:00: two times, both ends included.
"""

from __future__ import annotations

import copy
from typing import Any

from cronctl.operator.plan import plan

from .test_plan import CREATED, after, finished, schedule, t

ASKED = CREATED + 5
RANGE = "2024-02-29T22:00:00Z/2024-02-29T23:00:00Z"
FIRST, SECOND = t("2024-02-29T22:00"), t("2024-02-29T23:00")


def asked(value: str = RANGE, **spec: Any) -> dict[str, Any]:
    body = schedule("0 * * * *", **spec)
    body = after(body, plan(body, [], CREATED).status)
    body["metadata"]["annotations"] = {"cronctl.dev/backfill": value}
    return body


def names(result: Any) -> list[str]:
    return [job["metadata"]["name"] for job in result.create]


def test_the_annotation_starts_a_backfill_with_its_oldest_time_as_a_run_of_its_own() -> None:
    result = plan(asked(), [], ASKED)
    assert names(result) == [f"sync-{FIRST}-backfill"]
    job = result.create[0]
    assert job["metadata"]["annotations"]["cronctl.dev/reason"] == job["metadata"]["labels"]["cronctl.dev/reason"] == "backfill"
    assert job["metadata"]["annotations"]["cronctl.dev/scheduled-time"] == "2024-02-29T22:00:00Z"
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert (env["CRONCTL_REASON"], env["CRONCTL_NOMINAL_TIME"]) == ("backfill", "2024-02-29T22:00:00Z")
    assert result.status is not None and result.status["backfill"] == {
        "request": RANGE, "state": "Running", "from": "2024-02-29T22:00:00Z", "to": "2024-02-29T23:00:00Z",
        "total": 2, "launched": 1, "nextScheduledTime": "2024-02-29T23:00:00Z",
        "running": f"sync-{FIRST}-backfill", "message": None}
    assert result.status["lastScheduleTime"] is None  # a backfill deals with no schedule time
    assert [e.reason for e in result.events] == ["BackfillStarted", "Launched"]


def test_the_next_time_waits_for_the_run_before_it_then_the_backfill_completes() -> None:
    body = asked()
    first = plan(body, [], ASKED)
    body = after(body, first.status)
    assert plan(body, first.create, ASKED + 1).create == []  # one at a time
    done = finished(first.create[0], "Complete", ASKED + 2)
    second = plan(body, [done], ASKED + 2)
    assert names(second) == [f"sync-{SECOND}-backfill"]
    body = after(body, second.status)
    last = finished(second.create[0], "Complete", ASKED + 3)
    complete = plan(body, [done, last], ASKED + 3)
    assert complete.status is not None and complete.status["backfill"]["state"] == "Complete"
    assert complete.status["backfill"]["launched"] == 2
    assert [e.reason for e in complete.events if e.reason.startswith("Backfill")] == ["BackfillComplete"]
    body = after(body, complete.status)
    assert plan(body, [done, last], ASKED + 4).events == []  # answered once


def test_a_backfill_job_created_before_a_crash_is_that_launch_not_a_second_one() -> None:
    body = asked()
    first = plan(body, [], ASKED)  # its status write is lost
    job = copy.deepcopy(first.create[0])
    again = plan(body, [job], ASKED + 1)
    assert again.create == []
    assert again.status is not None and again.status["backfill"]["running"] == f"sync-{FIRST}-backfill"
    assert again.status["launched"] == 1


def test_under_forbid_a_backfill_run_waits_for_the_active_run() -> None:
    body = asked(concurrencyPolicy="Forbid")
    scheduled = plan(body, [], t("2024-03-01T01:00"))  # the 01:00 run launches first, the backfill waits
    assert [n for n in names(scheduled) if n.endswith("-backfill")] == []
    assert scheduled.status is not None and scheduled.status["backfill"]["launched"] == 0


def test_a_suspended_schedule_answers_the_request_and_launches_no_backfill_run() -> None:
    result = plan(asked(suspend=True), [], ASKED)
    assert result.create == []
    assert result.status is not None and result.status["backfill"]["message"] == "suspended: the backfill waits"


def test_a_range_reaching_past_now_is_refused_with_an_event() -> None:
    result = plan(asked("2024-02-29T22:00:00Z/2024-03-02T00:00:00Z"), [], ASKED)
    assert result.create == []
    assert result.status is not None and result.status["backfill"]["state"] == "Refused"
    assert "after now" in result.status["backfill"]["message"]
    assert [e.reason for e in result.events] == ["BackfillRefused"]


def test_a_value_that_is_no_range_is_refused_naming_the_form() -> None:
    result = plan(asked("last week"), [], ASKED)
    assert result.status is not None and result.status["backfill"]["message"] == (
        "'last week' is not a range <from>/<to> of UTC times, such as 2024-03-01T00:00:00Z/2024-03-07T23:59:00Z")


def test_a_range_of_more_than_1000_times_is_refused_whole() -> None:
    result = plan(asked("2023-01-01T00:00:00Z/2024-02-29T00:00:00Z"), [], ASKED)
    assert result.create == []
    assert result.status is not None and "more than the 1000 one backfill may run" in \
        result.status["backfill"]["message"]
