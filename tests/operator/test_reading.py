"""The spec as the core reads it, remembered by what the reading is a function of."""

from __future__ import annotations

import copy
from typing import Any

from cronctl.core.schedule import Timeline
from cronctl.core.zones import local_rfc3339
from cronctl.operator import reading
from cronctl.operator.plan import plan
from cronctl.operator.resource import rfc3339

from .test_plan import CREATED, after, schedule


def test_a_schedule_is_read_once_per_spec_and_anchor_and_afresh_when_either_changes(monkeypatch) -> None:
    reads: list[dict[str, Any]] = []
    read_spec = reading.read_spec
    monkeypatch.setattr(reading, "read_spec", lambda body, anchor: reads.append(body) or read_spec(body, anchor))
    body = schedule("17 */3 * * *", timeZone="Asia/Kolkata", upcomingTimes=4)
    first = plan(body, [], CREATED)
    again = after(body, first.status)
    assert [plan(again, [], CREATED + minutes).status for minutes in (0, 1)] == [None, None]
    assert len(reads) == 1  # the spec and the anchor were the same: read once
    edited = copy.deepcopy(again)
    edited["spec"]["upcomingTimes"] = 2
    assert [entry["time"] for entry in plan(edited, [], CREATED + 1).status["nextScheduleTimes"]] == [  # type: ignore[index]
        "2024-03-01T00:47:00Z", "2024-03-01T03:47:00Z"]
    assert len(reads) == 2
    moved = after(body, {**first.status, "anchorTime": rfc3339(CREATED + 600)})  # type: ignore[dict-item]
    plan(moved, [], CREATED + 601)
    assert len(reads) == 3


def test_the_next_fire_times_remembered_are_those_computed_afresh() -> None:
    body = schedule("*/7 9-17 * * 1-5", timeZone="America/New_York", upcomingTimes=6)
    read = reading.read_spec(body, CREATED)
    timeline = Timeline(read.job.compiled, CREATED, read.job.options.tz)
    for now in range(CREATED, CREATED + 3 * 24 * 60, 97):
        body = after(body, plan(body, [], now).status)  # as the operator keeps it, minute after minute
        assert [entry["time"] for entry in body["status"]["nextScheduleTimes"]] == [
            rfc3339(minute) for minute in timeline.upcoming(now, 6)]
        assert [entry["localTime"] for entry in body["status"]["nextScheduleTimes"]] == [
            local_rfc3339(minute, read.job.options.tz) for minute in timeline.upcoming(now, 6)]


def test_the_upcoming_times_are_remembered_once_per_schedule_however_often_it_fires() -> None:
    """Issue 47: keyed by the first time as well, the memo kept every past first time's list (up
    to 50,000 entries); one list a schedule and spec now, handed out again while it holds."""
    reading._upcoming._values.clear()
    body = schedule("*/7 * * * *", upcomingTimes=3)
    for now in range(CREATED, CREATED + 120):
        body = after(body, plan(body, [], now).status)
    assert len(reading._upcoming._values) == 1
    spec, timeline, read = reading.read_schedule(body, CREATED)
    first = reading.next_schedule_times(spec, timeline, read, CREATED + 140)
    assert reading.next_schedule_times(spec, timeline, read, CREATED + 140) is first
    assert [entry["time"] for entry in first] == [rfc3339(minute) for minute in timeline.upcoming(CREATED + 139, 3)]


def test_schedules_with_one_job_template_share_it_in_their_readings() -> None:
    """Issue 47: a fleet's schedules made from one chart hold one template between them."""
    first, second = schedule("*/7 * * * *"), schedule("*/9 * * * *")
    second["metadata"]["name"] = "other"
    second["spec"]["jobTemplate"] = copy.deepcopy(first["spec"]["jobTemplate"])
    one, _, _ = reading.read_schedule(first, CREATED)
    two, _, _ = reading.read_schedule(second, CREATED)
    assert two.job_template is one.job_template
    second["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    three, _, _ = reading.read_schedule(second, CREATED)
    assert three.job_template is not one.job_template
    assert three.job_template["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_one_string_a_minute_is_shared_by_every_status_and_plan() -> None:
    """Issue 47: a herd's schedules all write the same minutes; each kept its own strings of them."""
    minute = CREATED + 12_345
    assert rfc3339(minute) is rfc3339(int(str(minute)))
