"""No schedule is stranded: past missedSchedulesLimit the overflow is said once per entry into it
(a Warning Event, the MissedSchedules condition, status ``overflowed``, the overflow counter) and
the most recent missed time still runs through the policy. Catch-up firings carry their reason.
Skips are counted once per schedule time. Pure: plans in, plans out."""

from __future__ import annotations

from typing import Any

from cronctl.operator.resource import OVERFLOW_ANNOTATION
from cronctl.operator.metrics import counts
from cronctl.operator.effects import Plan
from cronctl.operator.plan import plan
from cronctl.operator.resource import REASON_ANNOTATION

from .scenarios import CREATED, after, finished, seen, t

THREE_HOURS_LATER = CREATED + 180  # 2024-03-01T03:00, an outage of 180 every-minute times


def conditions(result: Plan) -> dict[str, dict[str, Any]]:
    assert result.status is not None
    return {c["type"]: c for c in result.status["conditions"]}


def reasons(result: Plan) -> list[tuple[str, str]]:
    return [(e.type, e.reason) for e in result.events]


def test_after_three_hours_away_the_latest_minute_runs_and_the_overflow_is_visible() -> None:
    body = seen("* * * * *")
    result = plan(body, [], THREE_HOURS_LATER)
    assert reasons(result) == [("Warning", "TooManyMissedSchedules"), ("Normal", "Launched")]
    message = "more than 100 schedule times were missed (missedSchedulesLimit); launched 2024-03-01T03:00:00Z"
    assert result.events[0].message == message
    [job] = result.create
    assert job["metadata"]["name"] == f"sync-{THREE_HOURS_LATER}"
    assert job["metadata"]["annotations"][OVERFLOW_ANNOTATION] == '{"missed":101,"limit":100,"dropped":0}'
    assert result.status is not None
    # The latest time launched: the outage is over (the next one is reported again), though the
    # condition stays until a firing is on time.
    assert (result.status["overflowed"], result.status["overflowing"], result.status["launched"]) == (1, None, 1)
    ready, missed = conditions(result)["Ready"], conditions(result)["MissedSchedules"]
    assert ready["status"] == "True"  # the schedule works
    assert (missed["status"], missed["reason"], missed["message"], missed["lastTransitionTime"]) == (
        "True", "TooManyMissedSchedules", message, "2024-03-01T03:00:00Z")
    assert counts(result) == {"overflows": 1, "launches": 1}

    on_time = plan(after(body, result.status), result.create, THREE_HOURS_LATER + 1)
    assert reasons(on_time) == [("Normal", "Launched")]
    missed = conditions(on_time)["MissedSchedules"]
    assert (missed["status"], missed["reason"], missed["lastTransitionTime"]) == (
        "False", "OnTime", "2024-03-01T03:01:00Z")
    assert on_time.status is not None and on_time.status["overflowed"] == 1
    assert on_time.status["overflowing"] is None  # written as absent


def test_the_condition_stays_true_until_a_firing_is_on_time() -> None:
    body = seen("* * * * *")
    overflowed = plan(body, [], THREE_HOURS_LATER)
    body = after(body, overflowed.status)
    done = [finished(overflowed.create[0], "Complete", THREE_HOURS_LATER)]
    between = plan(body, done, THREE_HOURS_LATER)  # its run ends within the minute: a reconcile, no firing
    assert reasons(between) == [("Normal", "Succeeded")]
    assert conditions(between)["MissedSchedules"]["status"] == "True"
    assert between.status is not None and between.status["overflowing"] is None  # the core's: the tick ended it


def test_an_overflow_that_goes_on_is_said_once() -> None:
    body = seen("* * * * *", concurrencyPolicy="Forbid")
    first = plan(body, [], CREATED + 1)
    body, jobs = after(body, first.status), first.create  # a run that never ends
    stuck = plan(body, jobs, THREE_HOURS_LATER)
    assert reasons(stuck) == [("Warning", "TooManyMissedSchedules"), ("Normal", "Skipped")]
    assert stuck.events[0].message.endswith("; nothing launched yet: a run is still active")
    body, jobs = after(body, stuck.status), jobs + stuck.stage  # the next minute's Job, staged
    assert plan(body, jobs, THREE_HOURS_LATER).effects == []
    later = plan(body, jobs, THREE_HOURS_LATER + 1)
    assert reasons(later) == [("Normal", "Skipped")]  # a newer time skipped; the overflow goes on
    assert later.status is not None and (later.status["overflowed"], later.status["skipped"]) == (1, 2)


def test_each_entry_into_an_overflow_counts_once() -> None:
    body, jobs = seen("* * * * *"), []
    for outage, expected in ((THREE_HOURS_LATER, 1), (THREE_HOURS_LATER + 181, 2)):
        overflowed = plan(body, jobs, outage)
        assert reasons(overflowed)[0] == ("Warning", "TooManyMissedSchedules")
        body, jobs = after(body, overflowed.status), jobs + overflowed.create
        on_time = plan(body, jobs, outage + 1)
        body, jobs = after(body, on_time.status), jobs + on_time.create
        assert body["status"]["overflowed"] == expected
        assert conditions(on_time)["MissedSchedules"]["status"] == "False"


def test_a_second_outage_with_no_reconcile_in_between_is_reported_again() -> None:
    body, jobs = seen("* * * * *"), []
    first = plan(body, jobs, THREE_HOURS_LATER)
    body, jobs = after(body, first.status), jobs + first.create
    second = plan(body, jobs, THREE_HOURS_LATER + 181)  # the next reconcile is after another outage
    assert reasons(second)[0] == ("Warning", "TooManyMissedSchedules")
    assert second.status is not None and second.status["overflowed"] == 2
    assert counts(second)["overflows"] == 1


def test_an_outage_blocked_by_a_forbid_run_is_reported_once_and_the_next_outage_again() -> None:
    body = seen("* * * * *", concurrencyPolicy="Forbid")
    first = plan(body, [], CREATED + 1)
    body, jobs = after(body, first.status), first.create
    stuck = plan(body, jobs, THREE_HOURS_LATER)
    body = after(body, stuck.status)
    jobs = [finished(jobs[0], "Complete", THREE_HOURS_LATER + 2)]
    recovered = plan(body, jobs, THREE_HOURS_LATER + 2)  # the run ended: the latest time launches
    assert ("Warning", "TooManyMissedSchedules") not in reasons(recovered)  # the same outage
    assert recovered.status is not None and recovered.status["overflowing"] is None
    body, jobs = after(body, recovered.status), jobs + recovered.create
    jobs = [finished(job, "Complete", THREE_HOURS_LATER + 3) for job in jobs]
    again = plan(body, jobs, THREE_HOURS_LATER + 400)
    assert ("Warning", "TooManyMissedSchedules") in reasons(again)
    assert again.status is not None and again.status["overflowed"] == 2


def test_catch_up_all_past_the_limit_runs_the_newest_in_order_and_says_how_many_it_dropped() -> None:
    result = plan(seen("* * * * *", catchUp="All", missedSchedulesLimit=3), [], THREE_HOURS_LATER)
    assert [(j["metadata"]["name"], j["metadata"]["annotations"][REASON_ANNOTATION]) for j in result.create] == [
        (f"sync-{CREATED + 178}", "catch-up"), (f"sync-{CREATED + 179}", "catch-up"),
        (f"sync-{CREATED + 180}", "scheduled")]
    assert reasons(result)[0] == ("Warning", "TooManyMissedSchedules")
    assert result.events[0].message == (
        "180 schedule times were missed, more than missedSchedulesLimit 3; launched 2024-03-01T02:58:00Z, "
        "2024-03-01T02:59:00Z, 2024-03-01T03:00:00Z; dropped the 177 older ones (catchUp All)")
    assert result.status is not None and result.status["launched"] == 3
    assert conditions(result)["MissedSchedules"]["message"] == result.events[0].message


def test_the_limit_is_the_schedules_own() -> None:
    body = seen("* * * * *", missedSchedulesLimit=10)
    # Ten missed times: the latest launches and the nine before it are said to be passed over.
    assert reasons(plan(body, [], CREATED + 10)) == [("Warning", "MissedSchedule"), ("Normal", "Launched")]
    assert reasons(plan(body, [], CREATED + 11)) == [("Warning", "TooManyMissedSchedules"), ("Normal", "Launched")]


def test_a_catch_up_firings_job_carries_the_reason_and_history_shows_it() -> None:
    body = seen()  # */10
    late = plan(body, [], t("2024-03-01T00:45"))
    [job] = late.create
    assert job["metadata"]["annotations"][REASON_ANNOTATION] == "catch-up"
    [container] = job["spec"]["template"]["spec"]["containers"]
    assert {"name": "CRONCTL_REASON", "value": "catch-up"} in container["env"]
    assert {"name": "CRONCTL_NOMINAL_TIME", "value": "2024-03-01T00:40:00Z"} in container["env"]
    assert reasons(late) == [("Warning", "MissedSchedule"), ("Normal", "Launched")]  # 00:10 to 00:30 passed over
    assert late.events[1].message.endswith("for 2024-03-01T00:40:00Z (catch-up)")
    assert late.status is not None and [r["reason"] for r in late.status["active"]] == ["catch-up"]
    body = after(body, late.status)
    done = plan(body, [finished(job, "Complete", t("2024-03-01T00:47"))], t("2024-03-01T00:47"))
    assert done.status is not None
    assert [(h["name"], h["reason"]) for h in done.status["history"]] == [(f"sync-{t('2024-03-01T00:40')}",
                                                                           "catch-up")]
    on_time = plan(after(body, done.status), [], t("2024-03-01T00:50"))
    assert on_time.create[0]["metadata"]["annotations"][REASON_ANNOTATION] == "scheduled"


def test_a_forbid_overlap_counts_each_skipped_time_once_however_often_it_reconciles() -> None:
    """The issue's new user: every minute, Forbid, a run of three minutes, reconciled every second."""
    body = seen("* * * * *", concurrencyPolicy="Forbid")
    first = plan(body, [], CREATED + 1)
    body, job = after(body, first.status), first.create[0]
    skipped_events = 0
    for minute in (CREATED + 2, CREATED + 3):
        for second in range(0, 60, 5):
            result = plan(body, [job], minute, second=minute * 60 + second)
            skipped_events += [e.reason for e in result.events].count("Skipped")
            body = after(body, result.status)
    assert body["status"]["skipped"] == skipped_events == 2
    assert body["status"]["lastSkippedTime"] == "2024-03-01T00:03:00Z"
    relaunch = plan(body, [finished(job, "Complete", CREATED + 4)], CREATED + 4)
    assert reasons(relaunch) == [("Normal", "Succeeded"), ("Normal", "Launched")]
    assert relaunch.status is not None and relaunch.status["skipped"] == 2


def test_a_launch_after_an_outage_says_once_which_times_it_passed_over() -> None:
    """Staging off (the default): the older times a launch passed over are one Warning, counted each."""
    body = seen("* * * * *")
    result = plan(body, [], CREATED + 4)  # 00:01 to 00:03 passed while the operator was away
    assert reasons(result) == [("Warning", "MissedSchedule"), ("Normal", "Launched")]
    assert result.events[0].message == (
        "3 schedule times from 2024-03-01T00:01:00Z to 2024-03-01T00:03:00Z were not started: a newer time was "
        "launched in their place (catchUp: Latest runs only the latest missed time)")
    assert counts(result) == {"missed": 3, "launches": 1}
    again = plan(after(body, result.status), result.create, CREATED + 4)
    assert reasons(again) == []  # said once: the launch's status write records it


def test_a_schedule_edited_since_its_last_reconcile_passes_over_nothing() -> None:
    """The new expression's times before the edit were never due."""
    body = seen("0 * * * *")
    body["spec"]["schedule"] = "* * * * *"
    body["metadata"]["generation"] = body["metadata"].get("generation", 1) + 1
    assert reasons(plan(body, [], CREATED + 30)) == [("Normal", "Launched")]
