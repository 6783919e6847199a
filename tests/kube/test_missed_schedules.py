"""No schedule is stranded, on the real API server: after an outage past missedSchedulesLimit the
operator says so once (a Warning Event, the MissedSchedules condition, ``overflowed``) and
launches the most recent missed time at once; the next minute fires as usual. The outage is
the operator stopped while its clock file moves on: no wall-clock wait."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import Cluster, Operator, job_of, ready, schedule_manifest, wait_for

pytestmark = pytest.mark.cluster


def warnings(cluster: Cluster, name: str, reason: str) -> list[str]:
    items = cluster.core.list_namespaced_event(cluster.namespace, field_selector=f"involvedObject.name={name}").items
    return [event.message for event in items if event.type == "Warning" and event.reason == reason]


def condition(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions", []) if c["type"] == kind), None)


def runs(cluster: Cluster, name: str) -> list[str]:
    """The schedule's Jobs that are runs: not a next firing's staged ahead of its minute (staging on)."""
    return [job.metadata.name for job in cluster.jobs(name) if "cronctl.dev/staged" not in (job.metadata.labels or {})]


def outage(operator: Operator, until: str) -> None:
    operator.stop()
    operator.set_clock(until)
    operator.start()


def test_after_a_three_hour_outage_an_every_minute_schedule_fires_again_at_once(operator: Operator,
                                                                                cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("minutely", "* * * * *"))
    wait_for("seen", ready(cluster, "minutely"))
    operator.set_clock("2024-03-01T00:01")
    # The run is there once created and recorded.
    wait_for("the first run", lambda: runs(cluster, "minutely") == [job_of("minutely", "2024-03-01T00:01")]
             and cluster.status("minutely").get("launched") == 1)

    outage(operator, "2024-03-01T03:01")  # 180 missed minutes, more than the default limit of 100
    latest = job_of("minutely", "2024-03-01T03:01")
    wait_for("the latest minute's Job, without the clock moving", lambda: latest in cluster.job_names("minutely"))
    status = wait_for("the overflow in status", lambda: (s := cluster.status("minutely")).get("overflowed") == 1
                      and s)
    job = next(job for job in cluster.jobs("minutely") if job.metadata.name == latest)
    # The most recent missed time of an every-minute schedule is the restart's own minute, which
    # the core names "scheduled" (a time already past would be "catch-up"); status agrees with the Job.
    reason = job.metadata.annotations["cronctl.dev/reason"]
    assert reason == "scheduled"
    assert job.metadata.annotations["cronctl.dev/overflow"] == '{"missed":101,"limit":100,"dropped":0}'
    assert [(run["name"], run["reason"]) for run in status["active"]][-1] == (latest, reason)
    assert status["lastScheduleTime"] == "2024-03-01T03:01:00Z" and status["launched"] == 2
    missed = condition(status, "MissedSchedules")
    assert missed is not None and (missed["status"], missed["reason"], missed["lastTransitionTime"]) == (
        "True", "TooManyMissedSchedules", "2024-03-01T03:01:00Z")
    assert condition(status, "Ready")["status"] == "True"  # type: ignore[index]
    [message] = wait_for("one Warning Event", lambda: warnings(cluster, "minutely", "TooManyMissedSchedules"))
    assert message == missed["message"] == ("more than 100 schedule times were missed (missedSchedulesLimit); "
                                            "launched 2024-03-01T03:01:00Z")

    operator.set_clock("2024-03-01T03:02")
    following = job_of("minutely", "2024-03-01T03:02")
    wait_for("the next minute, as usual", lambda: following in runs(cluster, "minutely"))
    status = wait_for("on time again", lambda: (s := cluster.status("minutely"))
                      and condition(s, "MissedSchedules")["status"] == "False" and s)  # type: ignore[index]
    assert status["overflowed"] == 1 and "overflowing" not in status
    assert len(runs(cluster, "minutely")) == 3
    assert len(warnings(cluster, "minutely", "TooManyMissedSchedules")) == 1


def test_catch_up_all_past_its_limit_runs_the_newest_times_in_order_and_says_how_many_it_dropped(
        operator: Operator, cluster: Cluster) -> None:
    cluster.apply(schedule_manifest("backlog", "* * * * *", catchUp="All", missedSchedulesLimit=3))
    wait_for("seen", ready(cluster, "backlog"))

    outage(operator, "2024-03-01T03:00")  # 180 missed minutes: the newest 3 run, 177 are dropped
    newest = [job_of("backlog", f"2024-03-01T{minute}") for minute in ("02:58", "02:59", "03:00")]
    wait_for("the newest three", lambda: runs(cluster, "backlog") == newest)
    status = wait_for("recorded", lambda: (s := cluster.status("backlog")).get("launched") == 3 and s)
    assert [(run["run"], run["name"], run["reason"]) for run in status["active"]] == [
        (1, newest[0], "catch-up"), (2, newest[1], "catch-up"), (3, newest[2], "scheduled")]
    assert status["overflowed"] == 1 and condition(status, "MissedSchedules")["status"] == "True"  # type: ignore[index]
    [message] = wait_for("the Warning Event", lambda: warnings(cluster, "backlog", "TooManyMissedSchedules"))
    assert message == ("180 schedule times were missed, more than missedSchedulesLimit 3; launched "
                       "2024-03-01T02:58:00Z, 2024-03-01T02:59:00Z, 2024-03-01T03:00:00Z; "
                       "dropped the 177 older ones (catchUp All)")
