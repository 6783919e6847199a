"""Seed 001 (CronJobScheduler), verbatim examples first, then one test per rule.

Tests are named after the seed's sentence they check, in the seed's order
(constructor, methods, time rules, scheduling rules), followed by the points
the harness contract (spec/dispatch-harness.md) fixes for Python: order,
blank, identity, pairing, argument checking, ``run_calls`` and ``main``.
"""

from __future__ import annotations

import io
import json
import sys

import pytest

from cronctl.dispatch import CronJobScheduler, main, run_calls

MAX_TIME = 1_000_000_000_000
MAX_INTERVAL = 1_000_000_000
LATER = 100  # a time after everything a test has scheduled


def scheduler_with_workers(*worker_ids: str) -> CronJobScheduler:
    s = CronJobScheduler()
    for w in worker_ids:
        assert s.register_worker(w) is True
    return s


# --- the seed's examples, verbatim -------------------------------------------


def test_example_1_recurring_job_and_worker_ordering() -> None:
    scheduler = CronJobScheduler()
    assert scheduler.register_worker("worker-b") is True
    assert scheduler.register_worker("worker-a") is True
    assert scheduler.schedule_job("inventory-sync", 10, 5, 1, 0) is True
    assert scheduler.dispatch_jobs(9) == []
    assert scheduler.get_job_status("inventory-sync", 10, 9) == "SCHEDULED"
    assert scheduler.dispatch_jobs(10) == ["inventory-sync,10,1,worker-a"]
    assert scheduler.complete_job("inventory-sync", 10, 1, True, 11) is True
    assert scheduler.get_job_status("inventory-sync", 10, 11) == "SUCCEEDED"
    assert scheduler.dispatch_jobs(15) == ["inventory-sync,15,1,worker-a"]


def test_example_2_retry_and_attempt_identification() -> None:
    scheduler = CronJobScheduler()
    assert scheduler.register_worker("worker-7") is True
    assert scheduler.schedule_job("daily-report", 20, 0, 1, 0) is True
    assert scheduler.dispatch_jobs(20) == ["daily-report,20,1,worker-7"]
    assert scheduler.complete_job("daily-report", 20, 1, False, 21) is True
    assert scheduler.get_job_status("daily-report", 20, 21) == "RETRY_PENDING"
    assert scheduler.dispatch_jobs(21) == ["daily-report,20,2,worker-7"]
    assert scheduler.complete_job("daily-report", 20, 1, True, 22) is False
    assert scheduler.get_job_status("daily-report", 20, 22) == "RUNNING"
    assert scheduler.complete_job("daily-report", 20, 2, False, 23) is True
    assert scheduler.get_job_status("daily-report", 20, 23) == "FAILED"


def test_example_3_deterministic_dispatch_and_duplicate_prevention() -> None:
    scheduler = CronJobScheduler()
    assert scheduler.register_worker("worker-z") is True
    assert scheduler.register_worker("worker-a") is True
    assert scheduler.schedule_job("beta", 30, 0, 0, 0) is True
    assert scheduler.schedule_job("alpha", 30, 0, 0, 0) is True
    assert scheduler.dispatch_jobs(30) == ["alpha,30,1,worker-a", "beta,30,1,worker-z"]
    assert scheduler.dispatch_jobs(30) == []


SEED_EXAMPLES_AS_CALLS = [
    (
        [
            ["registerWorker", "worker-b"],
            ["registerWorker", "worker-a"],
            ["scheduleJob", "inventory-sync", 10, 5, 1, 0],
            ["dispatchJobs", 9],
            ["getJobStatus", "inventory-sync", 10, 9],
            ["dispatchJobs", 10],
            ["completeJob", "inventory-sync", 10, 1, True, 11],
            ["getJobStatus", "inventory-sync", 10, 11],
            ["dispatchJobs", 15],
        ],
        [True, True, True, [], "SCHEDULED", ["inventory-sync,10,1,worker-a"], True,
         "SUCCEEDED", ["inventory-sync,15,1,worker-a"]],
    ),
    (
        [
            ["registerWorker", "worker-7"],
            ["scheduleJob", "daily-report", 20, 0, 1, 0],
            ["dispatchJobs", 20],
            ["completeJob", "daily-report", 20, 1, False, 21],
            ["getJobStatus", "daily-report", 20, 21],
            ["dispatchJobs", 21],
            ["completeJob", "daily-report", 20, 1, True, 22],
            ["getJobStatus", "daily-report", 20, 22],
            ["completeJob", "daily-report", 20, 2, False, 23],
            ["getJobStatus", "daily-report", 20, 23],
        ],
        [True, True, ["daily-report,20,1,worker-7"], True, "RETRY_PENDING",
         ["daily-report,20,2,worker-7"], False, "RUNNING", True, "FAILED"],
    ),
    (
        [
            ["registerWorker", "worker-z"],
            ["registerWorker", "worker-a"],
            ["scheduleJob", "beta", 30, 0, 0, 0],
            ["scheduleJob", "alpha", 30, 0, 0, 0],
            ["dispatchJobs", 30],
            ["dispatchJobs", 30],
        ],
        [True, True, True, True, ["alpha,30,1,worker-a", "beta,30,1,worker-z"], []],
    ),
]


@pytest.mark.parametrize("calls, expected", SEED_EXAMPLES_AS_CALLS, ids=["example-1", "example-2", "example-3"])
def test_the_seed_examples_replayed_through_run_calls_give_the_seed_results(calls, expected) -> None:
    assert run_calls(calls) == expected


# --- constructor ---------------------------------------------------------------


def test_a_new_scheduler_has_no_jobs_or_workers() -> None:
    s = CronJobScheduler()
    assert s.get_job_status("job", 0, 0) == ""
    assert s.schedule_job("job", 0, 0, 0, 0) is True
    assert s.dispatch_jobs(0) == []  # no worker to take it
    assert s.get_job_status("job", 0, 0) == "QUEUED"


def test_the_initial_current_time_is_zero() -> None:
    s = CronJobScheduler()
    assert s.current_time == 0
    assert s.schedule_job("at-zero", 0, 0, 0, 0) is True


# --- registerWorker ------------------------------------------------------------


def test_register_worker_returns_true_when_the_worker_is_registered() -> None:
    assert CronJobScheduler().register_worker("w") is True


def test_a_newly_registered_worker_is_initially_available() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 5, 0, 0, 0)
    assert s.dispatch_jobs(5) == ["j,5,1,w"]


@pytest.mark.parametrize("blank", ["", " ", "\t\n", "\u000b\u000c\r", "\u001c\u001d\u001e\u001f", "\u2028\u3000 "])
def test_register_worker_returns_false_when_the_worker_id_is_blank(blank: str) -> None:
    assert CronJobScheduler().register_worker(blank) is False


def test_register_worker_returns_false_when_the_worker_is_already_registered() -> None:
    s = scheduler_with_workers("w")
    assert s.register_worker("w") is False


def test_a_rejected_register_worker_does_not_change_the_registered_workers() -> None:
    s = scheduler_with_workers("w")
    assert s.register_worker("w") is False
    assert s.register_worker("  ") is False
    for job in ("a", "b", "c"):
        s.schedule_job(job, 1, 0, 0, 0)
    assert s.dispatch_jobs(1) == ["a,1,1,w"]  # still exactly one worker


def test_register_worker_does_not_receive_or_change_the_current_time() -> None:
    s = CronJobScheduler()
    s.dispatch_jobs(42)
    s.register_worker("w")
    assert s.current_time == 42


# --- scheduleJob ---------------------------------------------------------------


def test_schedule_job_creates_a_job_whose_first_occurrence_is_at_the_first_run_time() -> None:
    s = CronJobScheduler()
    assert s.schedule_job("j", 7, 3, 0, 0) is True
    assert s.get_job_status("j", 7, 0) == "SCHEDULED"
    assert s.get_job_status("j", 4, 0) == ""


def test_a_job_with_interval_zero_has_exactly_one_occurrence() -> None:
    s = scheduler_with_workers("w1", "w2")
    s.schedule_job("once", 10, 0, 0, 0)
    assert s.dispatch_jobs(LATER) == ["once,10,1,w1"]
    assert s.get_job_status("once", 10, LATER) == "RUNNING"
    assert s.get_job_status("once", 20, LATER) == ""
    assert s.dispatch_jobs(LATER * 10) == []


def test_a_job_with_a_positive_interval_recurs_every_interval_seconds() -> None:
    s = scheduler_with_workers("w1", "w2", "w3", "w4")
    s.schedule_job("j", 10, 5, 0, 0)
    assert s.dispatch_jobs(24) == ["j,10,1,w1", "j,15,1,w2", "j,20,1,w3"]
    assert s.get_job_status("j", 25, 24) == "SCHEDULED"
    assert s.get_job_status("j", 12, 24) == ""


def test_max_retries_is_the_number_of_additional_attempts_after_the_first_fails() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 2, 0)
    t = 0
    for attempt in (1, 2, 3):
        assert s.dispatch_jobs(t) == [f"j,0,{attempt},w"]
        assert s.complete_job("j", 0, attempt, False, t) is True
    assert s.get_job_status("j", 0, t) == "FAILED"
    assert s.dispatch_jobs(t) == []


def test_schedule_job_returns_true_when_the_job_is_scheduled() -> None:
    assert CronJobScheduler().schedule_job("j", 5, 1, 0, 5) is True


@pytest.mark.parametrize("blank", ["", " ", "\t", "\u2003\u001f"])
def test_schedule_job_returns_false_when_the_job_id_is_blank(blank: str) -> None:
    s = CronJobScheduler()
    assert s.schedule_job(blank, 5, 0, 0, 0) is False
    assert s.get_job_status(blank, 5, 0) == ""


def test_schedule_job_returns_false_when_the_job_id_already_exists() -> None:
    s = CronJobScheduler()
    assert s.schedule_job("j", 5, 0, 0, 0) is True
    assert s.schedule_job("j", 6, 0, 0, 0) is False


def test_schedule_job_returns_false_when_the_first_run_is_earlier_than_the_current_time() -> None:
    s = CronJobScheduler()
    assert s.schedule_job("j", 9, 0, 0, 10) is False
    assert s.get_job_status("j", 9, 10) == ""
    assert s.schedule_job("j", 10, 0, 0, 10) is True  # equal is not earlier


def test_a_rejected_schedule_job_does_not_create_or_modify_a_job() -> None:
    s = scheduler_with_workers("w1", "w2")
    s.schedule_job("j", 10, 0, 0, 0)
    assert s.schedule_job("j", 10, 5, 3, 0) is False  # would make it recurring
    assert s.get_job_status("j", 15, 0) == ""
    assert s.dispatch_jobs(20) == ["j,10,1,w1"]
    assert s.complete_job("j", 10, 1, False, 20) is True
    assert s.get_job_status("j", 10, 20) == "FAILED"  # still max_retries 0


# --- dispatchJobs --------------------------------------------------------------


def test_dispatch_processes_occurrences_scheduled_at_or_before_the_current_time() -> None:
    s = scheduler_with_workers("w1", "w2")
    s.schedule_job("at", 10, 0, 0, 0)
    s.schedule_job("after", 11, 0, 0, 0)
    assert s.dispatch_jobs(10) == ["at,10,1,w1"]
    assert s.get_job_status("after", 11, 10) == "SCHEDULED"


def test_dispatch_creates_every_due_occurrence_not_created_yet() -> None:
    s = CronJobScheduler()  # no workers: creation only
    s.schedule_job("j", 0, 3, 0, 0)
    assert s.dispatch_jobs(9) == []
    assert [s.get_job_status("j", t, 9) for t in (0, 3, 6, 9, 12)] == [
        "QUEUED", "QUEUED", "QUEUED", "QUEUED", "SCHEDULED"]


def test_dispatch_assigns_pending_occurrences_to_available_workers() -> None:
    s = CronJobScheduler()
    s.schedule_job("j", 0, 0, 0, 0)
    assert s.dispatch_jobs(0) == []
    s.register_worker("w")
    assert s.dispatch_jobs(0) == ["j,0,1,w"]
    assert s.get_job_status("j", 0, 0) == "RUNNING"


def test_each_assignment_is_reported_as_job_time_attempt_worker() -> None:
    s = scheduler_with_workers("worker 1")
    s.schedule_job("job-x", MAX_TIME, 0, 0, 0)
    assert s.dispatch_jobs(MAX_TIME) == [f"job-x,{MAX_TIME},1,worker 1"]


def test_attempt_numbers_begin_at_1_and_increase_after_each_failed_retryable_attempt() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 10, 0)
    for attempt in range(1, 5):
        assert s.dispatch_jobs(attempt) == [f"j,0,{attempt},w"]
        s.complete_job("j", 0, attempt, False, attempt)
    assert s.get_job_status("j", 0, 4) == "RETRY_PENDING"


def test_the_maximum_attempt_number_is_max_retries_plus_one() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 10, 0)
    for attempt in range(1, 12):
        assert s.dispatch_jobs(0) == [f"j,0,{attempt},w"]
        assert s.complete_job("j", 0, attempt, False, 0) is True
    assert s.get_job_status("j", 0, 0) == "FAILED"
    assert s.dispatch_jobs(0) == []


def test_pending_occurrences_go_by_scheduled_time_then_by_job_id() -> None:
    s = CronJobScheduler()
    s.schedule_job("b", 2, 0, 0, 0)
    s.schedule_job("c", 1, 0, 0, 0)
    s.schedule_job("a", 2, 0, 0, 0)
    s.schedule_job("d", 3, 0, 0, 0)
    s.dispatch_jobs(3)
    for w in ("w1", "w2", "w3", "w4"):
        s.register_worker(w)
    assert s.dispatch_jobs(3) == ["c,1,1,w1", "a,2,1,w2", "b,2,1,w3", "d,3,1,w4"]


def test_available_workers_are_assigned_in_ascending_worker_id_order() -> None:
    s = scheduler_with_workers("w3", "w1", "w2")
    for job in ("a", "b", "c"):
        s.schedule_job(job, 0, 0, 0, 0)
    assert s.dispatch_jobs(0) == ["a,0,1,w1", "b,0,1,w2", "c,0,1,w3"]


def test_returned_assignments_follow_the_order_they_are_made() -> None:
    s = scheduler_with_workers("x", "y")
    s.schedule_job("late", 5, 0, 0, 0)
    s.schedule_job("early", 4, 0, 0, 0)
    assert s.dispatch_jobs(5) == ["early,4,1,x", "late,5,1,y"]


def test_with_no_worker_available_queued_stays_queued_and_retry_pending_stays_retry_pending() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("a", 0, 0, 1, 0)
    assert s.dispatch_jobs(0) == ["a,0,1,w"]
    s.schedule_job("0", 0, 0, 0, 0)  # "0" < "a": will take the worker "a" frees
    s.schedule_job("b", 0, 0, 0, 0)
    assert s.complete_job("a", 0, 1, False, 0) is True
    assert s.dispatch_jobs(0) == ["0,0,1,w"]
    assert s.dispatch_jobs(0) == []
    assert s.get_job_status("a", 0, 0) == "RETRY_PENDING"
    assert s.get_job_status("b", 0, 0) == "QUEUED"


def test_a_dispatched_worker_stays_busy_until_its_attempt_is_completed() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("a", 0, 0, 0, 0)
    s.schedule_job("b", 0, 0, 0, 0)
    assert s.dispatch_jobs(0) == ["a,0,1,w"]
    assert s.dispatch_jobs(LATER) == []
    assert s.complete_job("a", 0, 1, True, LATER) is True
    assert s.dispatch_jobs(LATER) == ["b,0,1,w"]


def test_repeated_dispatch_at_the_same_time_creates_and_dispatches_no_duplicate() -> None:
    s = scheduler_with_workers("w1", "w2", "w3")
    s.schedule_job("j", 0, 10, 0, 0)
    assert s.dispatch_jobs(10) == ["j,0,1,w1", "j,10,1,w2"]
    assert s.dispatch_jobs(10) == []
    assert s.dispatch_jobs(10) == []


def test_dispatch_returns_an_empty_list_when_no_pending_occurrence_can_be_assigned() -> None:
    s = scheduler_with_workers("w")
    assert s.dispatch_jobs(0) == []  # nothing pending
    s2 = CronJobScheduler()
    s2.schedule_job("j", 0, 0, 0, 0)
    assert s2.dispatch_jobs(0) == []  # nobody to run it


# --- completeJob ---------------------------------------------------------------


def test_an_accepted_completion_makes_the_worker_available() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("a", 0, 0, 0, 0)
    s.schedule_job("b", 1, 0, 0, 0)
    s.dispatch_jobs(1)
    assert s.complete_job("a", 0, 1, True, 2) is True
    assert s.dispatch_jobs(2) == ["b,1,1,w"]


def test_a_successful_completion_makes_the_occurrence_succeeded_and_never_dispatched_again() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 5, 0)
    s.dispatch_jobs(0)
    assert s.complete_job("j", 0, 1, True, 0) is True
    assert s.get_job_status("j", 0, 0) == "SUCCEEDED"
    assert s.dispatch_jobs(0) == []
    assert s.dispatch_jobs(LATER) == []
    assert s.complete_job("j", 0, 1, False, LATER) is False
    assert s.get_job_status("j", 0, LATER) == "SUCCEEDED"


def test_a_failed_completion_with_a_retry_left_makes_the_occurrence_retry_pending() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 1, 0)
    s.dispatch_jobs(0)
    assert s.complete_job("j", 0, 1, False, 1) is True
    assert s.get_job_status("j", 0, 1) == "RETRY_PENDING"


def test_a_retry_can_be_dispatched_by_the_next_dispatch_even_at_the_same_time() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 5, 0, 1, 0)
    assert s.dispatch_jobs(5) == ["j,5,1,w"]
    s.complete_job("j", 5, 1, False, 5)
    assert s.dispatch_jobs(5) == ["j,5,2,w"]


def test_a_failed_completion_with_no_retry_left_makes_the_occurrence_failed() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 0, 0)
    s.dispatch_jobs(0)
    assert s.complete_job("j", 0, 1, False, 0) is True
    assert s.get_job_status("j", 0, 0) == "FAILED"
    assert s.dispatch_jobs(LATER) == []


def test_complete_job_returns_true_when_the_specified_attempt_is_running() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 0, 0)
    s.dispatch_jobs(0)
    assert s.complete_job("j", 0, 1, True, 0) is True


def test_the_returned_boolean_says_the_report_was_accepted_not_that_the_attempt_succeeded() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 0, 0)
    s.dispatch_jobs(0)
    assert s.complete_job("j", 0, 1, False, 0) is True
    assert s.get_job_status("j", 0, 0) == "FAILED"


def test_complete_job_returns_false_when_the_occurrence_has_no_running_attempt() -> None:
    s = CronJobScheduler()
    s.schedule_job("j", 0, 1, 0, 0)
    assert s.complete_job("j", 0, 1, True, 0) is False  # SCHEDULED
    s.dispatch_jobs(0)
    assert s.complete_job("j", 0, 1, True, 0) is False  # QUEUED
    assert s.complete_job("j", 1, 1, True, 0) is False  # not created
    assert s.complete_job("j", 7, 1, True, 0) is False  # ... nor created later
    assert s.complete_job("nope", 0, 1, True, 0) is False  # no such job
    assert s.get_job_status("j", 0, 0) == "QUEUED"


def test_complete_job_returns_false_when_the_attempt_number_is_not_the_running_one() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 3, 0)
    s.dispatch_jobs(0)
    for wrong in (0, 2, 11, -1):
        assert s.complete_job("j", 0, wrong, True, 0) is False
    assert s.get_job_status("j", 0, 0) == "RUNNING"


def test_a_late_or_duplicate_report_for_an_earlier_attempt_cannot_touch_a_later_attempt() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 2, 0)
    s.dispatch_jobs(0)
    assert s.complete_job("j", 0, 1, False, 1) is True
    assert s.complete_job("j", 0, 1, False, 1) is False  # duplicate, nothing running
    assert s.dispatch_jobs(1) == ["j,0,2,w"]
    assert s.complete_job("j", 0, 1, False, 2) is False  # delayed
    assert s.complete_job("j", 0, 1, True, 2) is False
    assert s.get_job_status("j", 0, 2) == "RUNNING"
    assert s.complete_job("j", 0, 2, True, 3) is True
    assert s.get_job_status("j", 0, 3) == "SUCCEEDED"


def test_an_unsuccessful_completion_changes_nothing_but_still_sets_the_current_time() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("a", 0, 0, 0, 0)
    s.schedule_job("b", 0, 0, 0, 0)
    s.dispatch_jobs(0)
    assert s.complete_job("a", 0, 2, True, 50) is False
    assert s.current_time == 50
    assert s.get_job_status("a", 0, 50) == "RUNNING"
    assert s.dispatch_jobs(50) == []  # the worker stayed busy
    assert s.get_job_status("b", 0, 50) == "QUEUED"


# --- getJobStatus --------------------------------------------------------------


def test_status_is_scheduled_for_a_schedule_time_whose_occurrence_is_not_created_yet() -> None:
    s = CronJobScheduler()
    s.schedule_job("j", 10, 10, 0, 0)
    assert s.get_job_status("j", 10, 0) == "SCHEDULED"
    assert s.get_job_status("j", MAX_TIME, 0) == "SCHEDULED"


def test_status_is_queued_while_the_occurrence_waits_for_its_first_attempt() -> None:
    s = CronJobScheduler()
    s.schedule_job("j", 0, 0, 0, 0)
    s.dispatch_jobs(0)
    assert s.get_job_status("j", 0, 0) == "QUEUED"


def test_status_is_retry_pending_while_a_failed_occurrence_waits_for_another_attempt() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 1, 0)
    s.dispatch_jobs(0)
    s.complete_job("j", 0, 1, False, 0)
    assert s.get_job_status("j", 0, 0) == "RETRY_PENDING"


def test_status_is_running_succeeded_or_failed_in_those_states() -> None:
    s = scheduler_with_workers("w1", "w2", "w3")
    for job in ("ok", "bad", "busy"):
        s.schedule_job(job, 0, 0, 0, 0)
    s.dispatch_jobs(0)
    s.complete_job("ok", 0, 1, True, 1)
    s.complete_job("bad", 0, 1, False, 1)
    assert [s.get_job_status(j, 0, 1) for j in ("busy", "ok", "bad")] == ["RUNNING", "SUCCEEDED", "FAILED"]


def test_status_is_empty_for_an_unknown_job_or_a_time_not_in_its_schedule() -> None:
    s = CronJobScheduler()
    s.schedule_job("every-5", 10, 5, 0, 0)
    s.schedule_job("once", 10, 0, 0, 0)
    assert s.get_job_status("missing", 10, 0) == ""
    assert s.get_job_status("every-5", 5, 0) == ""  # before the first run
    assert s.get_job_status("every-5", 12, 0) == ""  # between runs
    assert s.get_job_status("every-5", -5, 0) == ""
    assert s.get_job_status("once", 15, 0) == ""
    assert s.get_job_status("Once", 10, 0) == ""  # case-sensitive


def test_requesting_a_status_does_not_create_or_dispatch_a_due_occurrence() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 10, 0, 0, 0)
    assert s.get_job_status("j", 10, LATER) == "SCHEDULED"
    assert s.get_job_status("j", 10, LATER) == "SCHEDULED"
    assert s.dispatch_jobs(LATER) == ["j,10,1,w"]


# --- time rules ----------------------------------------------------------------


def test_every_method_given_a_current_time_first_advances_the_clock_to_it() -> None:
    s = CronJobScheduler()
    s.schedule_job("j", 10, 0, 0, 1)
    assert s.current_time == 1
    s.dispatch_jobs(2)
    assert s.current_time == 2
    s.complete_job("j", 10, 1, True, 3)
    assert s.current_time == 3
    s.get_job_status("j", 10, 4)
    assert s.current_time == 4


def test_multiple_calls_may_use_the_same_current_time() -> None:
    s = scheduler_with_workers("w")
    assert s.schedule_job("j", 5, 0, 1, 5) is True
    assert s.dispatch_jobs(5) == ["j,5,1,w"]
    assert s.complete_job("j", 5, 1, False, 5) is True
    assert s.dispatch_jobs(5) == ["j,5,2,w"]
    assert s.get_job_status("j", 5, 5) == "RUNNING"


def test_a_rejected_or_empty_call_still_updates_the_current_time() -> None:
    s = CronJobScheduler()
    assert s.schedule_job("", 10, 0, 0, 7) is False
    assert s.current_time == 7
    assert s.dispatch_jobs(8) == []
    assert s.current_time == 8
    assert s.get_job_status("nope", 0, 9) == ""
    assert s.current_time == 9
    assert s.schedule_job("j", 9, 0, 0, 10) is False  # and the new time is what it checks against
    assert s.current_time == 10


def test_only_dispatch_creates_due_occurrences_and_assigns_them() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 5, 0, 1, 5)
    assert s.get_job_status("j", 5, 5) == "SCHEDULED"
    s.dispatch_jobs(5)
    s.complete_job("j", 5, 1, False, 6)
    s.register_worker("v")
    assert s.get_job_status("j", 5, 6) == "RETRY_PENDING"  # nothing picked it up by itself
    assert s.dispatch_jobs(6) == ["j,5,2,v"]


def test_register_worker_has_no_time_dependent_behaviour() -> None:
    s = CronJobScheduler()
    s.get_job_status("x", 0, 1_000)
    assert s.register_worker("w") is True
    assert s.current_time == 1_000
    s.schedule_job("j", 1_000, 0, 0, 1_000)
    assert s.dispatch_jobs(1_000) == ["j,1000,1,w"]


# --- scheduling rules ----------------------------------------------------------


def test_a_one_time_job_has_exactly_one_occurrence_at_its_first_run_time() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 3, 0, 0, 0)
    assert s.dispatch_jobs(MAX_TIME) == ["j,3,1,w"]
    s.complete_job("j", 3, 1, True, MAX_TIME)
    assert s.dispatch_jobs(MAX_TIME) == []
    assert s.get_job_status("j", 3, MAX_TIME) == "SUCCEEDED"


def test_a_recurring_job_runs_at_first_plus_k_intervals_for_every_k() -> None:
    s = CronJobScheduler()
    s.schedule_job("j", 7, MAX_INTERVAL, 0, 0)
    k = (MAX_TIME - 7) // MAX_INTERVAL
    assert s.get_job_status("j", 7 + k * MAX_INTERVAL, 0) == "SCHEDULED"
    assert s.get_job_status("j", 7 + k * MAX_INTERVAL + 1, 0) == ""
    s.dispatch_jobs(MAX_TIME)
    assert s.get_job_status("j", 7 + k * MAX_INTERVAL, 0) == "QUEUED"
    assert s.get_job_status("j", 7 + (k + 1) * MAX_INTERVAL, 0) == "SCHEDULED"


def test_an_occurrence_is_identified_by_its_job_id_and_scheduled_time() -> None:
    s = scheduler_with_workers("w1", "w2")
    s.schedule_job("a", 0, 1, 0, 0)
    s.schedule_job("b", 0, 0, 0, 0)
    s.dispatch_jobs(1)  # a@0 and b@0 run; a@1 waits
    s.complete_job("a", 0, 1, True, 1)
    assert [s.get_job_status("a", 0, 1), s.get_job_status("b", 0, 1), s.get_job_status("a", 1, 1)] == [
        "SUCCEEDED", "RUNNING", "QUEUED"]


def test_attempt_numbers_are_unique_within_an_occurrence_start_at_1_and_are_never_reused() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 3, 0)
    seen = []
    for _ in range(4):
        [assignment] = s.dispatch_jobs(0)
        attempt = int(assignment.split(",")[2])
        seen.append(attempt)
        s.complete_job("j", 0, attempt, False, 0)
    assert seen == [1, 2, 3, 4]
    assert s.complete_job("j", 0, 4, False, 0) is False  # attempt 4 is over, not reusable


def test_different_occurrences_of_one_recurring_job_may_run_at_once_on_different_workers() -> None:
    s = scheduler_with_workers("w1", "w2")
    s.schedule_job("j", 0, 1, 0, 0)
    assert s.dispatch_jobs(1) == ["j,0,1,w1", "j,1,1,w2"]
    assert s.get_job_status("j", 0, 1) == s.get_job_status("j", 1, 1) == "RUNNING"


def test_a_worker_runs_at_most_one_attempt_at_a_time() -> None:
    s = scheduler_with_workers("w")
    for job in ("a", "b", "c"):
        s.schedule_job(job, 0, 0, 0, 0)
    assert s.dispatch_jobs(0) == ["a,0,1,w"]
    assert s.dispatch_jobs(0) == []


def test_an_occurrence_has_at_most_one_running_attempt_at_a_time() -> None:
    s = scheduler_with_workers("w1", "w2", "w3")
    s.schedule_job("j", 0, 0, 5, 0)
    assert s.dispatch_jobs(0) == ["j,0,1,w1"]
    assert s.dispatch_jobs(0) == []  # idle workers, but the occurrence is already running


def test_queued_first_attempts_and_pending_retries_share_one_dispatch_order() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("m", 5, 0, 1, 0)
    s.schedule_job("z", 5, 0, 0, 0)
    s.schedule_job("a", 5, 0, 0, 0)
    s.schedule_job("early", 4, 0, 0, 0)
    assert s.dispatch_jobs(4) == ["early,4,1,w"]
    s.complete_job("early", 4, 1, True, 4)
    assert s.dispatch_jobs(5) == ["a,5,1,w"]
    s.complete_job("a", 5, 1, True, 5)
    assert s.dispatch_jobs(5) == ["m,5,1,w"]
    s.complete_job("m", 5, 1, False, 5)  # m's retry now competes with z's first attempt
    assert s.dispatch_jobs(5) == ["m,5,2,w"]
    s.complete_job("m", 5, 2, True, 5)
    assert s.dispatch_jobs(5) == ["z,5,1,w"]


def test_an_earlier_retry_goes_before_a_later_first_attempt_and_vice_versa() -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("z", 1, 0, 1, 0)
    s.schedule_job("a", 2, 0, 1, 0)
    assert s.dispatch_jobs(2) == ["z,1,1,w"]
    s.complete_job("z", 1, 1, False, 2)
    assert s.dispatch_jobs(2) == ["z,1,2,w"]  # retry at 1 beats "a" at 2 despite "a" < "z"


def test_at_the_same_scheduled_time_the_smaller_job_id_is_dispatched_first() -> None:
    s = scheduler_with_workers("w1", "w2", "w3")
    for job in ("job-10", "job-9", "job-1"):
        s.schedule_job(job, 0, 0, 0, 0)
    assert s.dispatch_jobs(0) == ["job-1,0,1,w1", "job-10,0,1,w2", "job-9,0,1,w3"]


def test_comparisons_are_java_compare_to_case_sensitive_and_by_utf16_code_units() -> None:
    # Upper case sorts before lower case; a prefix sorts first; an astral
    # character (surrogates D83D DE00) sorts before U+FFFF, unlike code points.
    jobs = ["b", "B", "a", "ab", "\uffff", "\U0001F600"]
    workers = ["w-\uffff", "w-\U0001F600", "W", "w", "w-a", "w-B"]
    s = scheduler_with_workers(*workers)
    for job in jobs:
        s.schedule_job(job, 0, 0, 0, 0)
    assert s.dispatch_jobs(0) == [
        "B,0,1,W",
        "a,0,1,w",
        "ab,0,1,w-B",
        "b,0,1,w-a",
        "\U0001F600,0,1,w-\U0001F600",
        "\uffff,0,1,w-\uffff",
    ]


def test_ids_are_stored_exactly_as_supplied_and_not_trimmed() -> None:
    s = scheduler_with_workers(" w ", "w")
    assert s.schedule_job(" j", 0, 0, 0, 0) is True
    assert s.schedule_job("j", 0, 0, 0, 0) is True
    assert s.schedule_job("j ", 0, 0, 0, 0) is True
    assert s.dispatch_jobs(0) == [" j,0,1, w ", "j,0,1,w"]
    assert s.get_job_status("j ", 0, 0) == "QUEUED"
    assert s.get_job_status(" j", 0, 0) == "RUNNING"


@pytest.mark.parametrize(
    "ident, blank",
    [
        ("", True),
        (" \t\n\u000b\u000c\r", True),
        ("\u001c\u001d\u001e\u001f", True),
        ("\u1680\u2000\u2006\u2008\u200a\u2028\u2029\u205f\u3000", True),
        ("\u00a0", False),  # no-break space
        ("\u2007", False),  # figure space (no-break)
        ("\u202f", False),  # narrow no-break space
        ("\u0085", False),  # NEL is not Java whitespace
        ("\u180e", False),  # Mongolian vowel separator: not whitespace since Unicode 6.3
        ("\u200b", False),  # zero-width space
        (" \u00a0 ", False),
        ("\ud800", False),  # a lone surrogate is a non-whitespace code point
    ],
)
def test_a_string_is_blank_when_empty_or_only_java_whitespace(ident: str, blank: bool) -> None:
    assert CronJobScheduler().register_worker(ident) is (not blank)
    assert CronJobScheduler().schedule_job(ident, 0, 0, 0, 0) is (not blank)


# --- contract: Python surface, identity and arguments ---------------------------


def test_ids_are_the_same_id_when_their_utf16_code_units_are_equal() -> None:
    pair_as_two = "\ud83d\ude00"  # the surrogates of U+1F600 as two Python code points
    s = scheduler_with_workers("\U0001F600")
    assert s.register_worker(pair_as_two) is False
    assert s.schedule_job("\U0001F600", 0, 0, 0, 0) is True
    assert s.schedule_job(pair_as_two, 0, 0, 0, 0) is False
    assert s.get_job_status(pair_as_two, 0, 0) == "SCHEDULED"
    assert s.dispatch_jobs(0) == ["\U0001F600,0,1,\U0001F600"]  # as first supplied


def test_pairing_gives_each_pending_occurrence_the_smallest_idle_worker_until_either_runs_out() -> None:
    s = scheduler_with_workers("w1", "w2", "w3")
    for job in ("a", "b", "c", "d"):
        s.schedule_job(job, 0, 0, 0, 0)
    assert s.dispatch_jobs(0) == ["a,0,1,w1", "b,0,1,w2", "c,0,1,w3"]
    s.complete_job("b", 0, 1, True, 1)
    assert s.dispatch_jobs(1) == ["d,0,1,w2"]


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.register_worker(None),
        lambda s: s.register_worker(5),
        lambda s: s.schedule_job("j", 1.0, 0, 0, 0),
        lambda s: s.schedule_job("j", True, 0, 0, 0),
        lambda s: s.schedule_job("j", -1, 0, 0, 0),
        lambda s: s.schedule_job("j", 0, -1, 0, 0),
        lambda s: s.schedule_job("j", 0, 0, -1, 0),
        lambda s: s.schedule_job("j", 2**63, 0, 0, 0),
        lambda s: s.schedule_job("j", 0, 0, 2**31, 0),
        lambda s: s.dispatch_jobs(-1),
        lambda s: s.dispatch_jobs("5"),
        lambda s: s.complete_job("j", 0, 1, 1, 5),
        lambda s: s.complete_job("j", 0, 2**31, True, 5),
        lambda s: s.get_job_status("j", 2**63, 5),
        lambda s: s.get_job_status(b"j", 0, 5),
    ],
)
def test_arguments_outside_the_java_signature_raise_and_change_nothing(call) -> None:
    s = scheduler_with_workers("w")
    s.schedule_job("j", 0, 0, 0, 0)
    s.dispatch_jobs(0)
    with pytest.raises((TypeError, ValueError)):
        call(s)
    assert s.current_time == 0
    assert s.get_job_status("j", 0, 0) == "RUNNING"


def test_beyond_the_seeds_upper_bounds_values_keep_their_meaning() -> None:
    s = scheduler_with_workers("w")
    assert s.schedule_job("j", 2**63 - 1, 0, 2**31 - 1, 0) is True
    assert s.dispatch_jobs(2**63 - 1) == [f"j,{2**63 - 1},1,w"]


# --- contract: run_calls and main -------------------------------------------------


def test_run_calls_answers_malformed_calls_with_error_strings_and_goes_on() -> None:
    calls = [
        ["registerWorker", "w"],
        "dispatchJobs",
        [],
        [7, 1],
        ["nope", 1],
        ["registerWorker"],
        ["registerWorker", "w", "extra"],
        ["scheduleJob", "j", 0, 0, 0, 1.5],
        ["completeJob", "j", 0, 1, "yes", 0],
        ["getJobStatus", "j", None, 0],
        ["scheduleJob", "j", 0, 0, 0, 0],
        ["dispatchJobs", 0],
    ]
    assert run_calls(calls) == [
        True,
        "error: invalid call",
        "error: invalid call",
        "error: invalid call",
        "error: unknown method",
        "error: invalid arguments",
        "error: invalid arguments",
        "error: invalid arguments",
        "error: invalid arguments",
        "error: invalid arguments",
        True,
        ["j,0,1,w"],
    ]


def test_run_calls_treats_the_constructor_as_a_fresh_scheduler() -> None:
    assert run_calls([
        ["CronJobScheduler"],
        ["registerWorker", "w"],
        ["CronJobScheduler"],
        ["registerWorker", "w"],
        ["CronJobScheduler", 1],
    ]) == [None, True, None, True, "error: invalid arguments"]


@pytest.mark.parametrize("calls", [None, 5, "calls", {"a": 1}, b"[]"])
def test_run_calls_given_no_list_of_calls_returns_no_results(calls) -> None:
    assert run_calls(calls) == []


def test_main_reads_a_file_and_prints_the_results_on_one_line(tmp_path, capsys) -> None:
    calls, expected = SEED_EXAMPLES_AS_CALLS[2]
    path = tmp_path / "calls.json"
    path.write_text(json.dumps(calls))
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert json.loads(out) == expected


def test_main_reads_stdin_for_a_dash_or_no_argument(monkeypatch, capsys) -> None:
    for argv in (["-"], []):
        stdin = io.TextIOWrapper(io.BytesIO('[["registerWorker", "\\ud83d\\ude00"], ["registerWorker", " "]]'.encode()))
        monkeypatch.setattr(sys, "stdin", stdin)
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out) == [True, False]


@pytest.mark.parametrize("content", ["not json", '{"a": 1}', "[" * 100_000, "\udcff"])
def test_main_rejects_input_that_is_not_a_json_array(tmp_path, capsys, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    assert main([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cronctl dispatch" in captured.err


def test_main_rejects_a_missing_file_no_stdin_and_extra_arguments(tmp_path, monkeypatch, capsys) -> None:
    assert main([str(tmp_path / "missing.json")]) == 2
    assert main(["a", "b"]) == 2
    assert "usage" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", None)
    assert main(["-"]) == 2
    assert "no standard input" in capsys.readouterr().err
