"""Attempts and retries in the core (issue: workers, attempts and retries).

The run() harness has no retries option, so these drive the controller
directly, as the operator and the runner do.
"""

from __future__ import annotations

import json

import pytest

from cronctl import run
from cronctl.core.controller import Controller
from cronctl.core.errors import Code, CronctlError
from cronctl.core.spec import JobSpec, Options, Policy
from cronctl.core.state import ControllerState
from cronctl.core.tick import Launch, Retry, Skip
from cronctl.core.times import parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")
HOURLY = "0 * * * *"


def controller(retries: int = 2, delay: int = 0, policy: Policy = Policy.ALLOW, **options: int) -> Controller:
    c = Controller()
    c.advance(CREATED)
    c.add_job(JobSpec("etl", HOURLY, policy, Options(retries=retries, retry_delay=delay, **options), CREATED, 0))
    return c


def test_a_failed_attempt_with_retries_left_puts_the_run_back_in_line() -> None:
    c = controller(retries=2)
    assert c.tick(t("2024-03-01T01:00")) == [Launch("etl", "etl-1", 1, t("2024-03-01T01:00"))]
    c.finish(t("2024-03-01T01:05"), "etl-1", "failed")
    assert c.find_run("etl-1").state == "retry_pending"
    assert c.tick(t("2024-03-01T01:05")) == [Retry("etl", "etl-1", 2)]
    assert (c.find_run("etl-1").state, c.find_run("etl-1").attempt) == ("running", 2)


def test_the_third_attempt_succeeds_after_two_failures() -> None:
    c = controller(retries=2)
    c.tick(t("2024-03-01T01:00"))
    for minute, attempt in (("01:05", 2), ("01:10", 3)):
        c.finish(t(f"2024-03-01T{minute}"), "etl-1", "failed")
        assert c.tick(t(f"2024-03-01T{minute}")) == [Retry("etl", "etl-1", attempt)]
    c.finish(t("2024-03-01T01:15"), "etl-1", "succeeded")
    finished = c.find_run("etl-1")
    assert (finished.state, finished.attempt, finished.finished_at) == ("succeeded", 3, t("2024-03-01T01:15"))
    assert c.job_status("etl").active == []


def test_a_run_that_exhausts_its_retries_fails() -> None:
    c = controller(retries=1)
    c.tick(t("2024-03-01T01:00"))
    c.finish(t("2024-03-01T01:05"), "etl-1", "failed")
    c.tick(t("2024-03-01T01:05"))
    c.finish(t("2024-03-01T01:06"), "etl-1", "failed")
    assert (c.find_run("etl-1").state, c.find_run("etl-1").attempt) == ("failed", 2)
    assert c.tick(t("2024-03-01T01:30")) == []


def test_the_next_attempt_waits_for_the_retry_delay() -> None:
    c = controller(retries=1, delay=10)
    c.tick(t("2024-03-01T01:00"))
    c.finish(t("2024-03-01T01:05"), "etl-1", "failed")
    assert c.tick(t("2024-03-01T01:14")) == []
    assert c.tick(t("2024-03-01T01:15")) == [Retry("etl", "etl-1", 2)]


def test_a_report_for_any_attempt_but_the_running_one_changes_nothing() -> None:
    c = controller(retries=2)
    c.tick(t("2024-03-01T01:00"))
    c.finish(t("2024-03-01T01:05"), "etl-1", "failed", attempt=1)
    c.tick(t("2024-03-01T01:05"))
    before = json.dumps(c.state.to_json())
    with pytest.raises(CronctlError) as refused:
        c.finish(t("2024-03-01T01:06"), "etl-1", "succeeded", attempt=1)
    assert refused.value.code is Code.RUN_NOT_ACTIVE
    after = c.state.to_json()
    after["clock"] = json.loads(before)["clock"]
    assert json.dumps(after) == before


def test_a_waiting_retry_is_not_running_so_a_report_for_it_is_refused() -> None:
    c = controller(retries=1, delay=10)
    c.tick(t("2024-03-01T01:00"))
    c.finish(t("2024-03-01T01:05"), "etl-1", "failed")
    with pytest.raises(CronctlError):
        c.finish(t("2024-03-01T01:06"), "etl-1", "succeeded")


def test_attempt_numbers_are_never_reused_across_runs_or_restarts() -> None:
    c = controller(retries=3)
    c.tick(t("2024-03-01T01:00"))
    c.finish(t("2024-03-01T01:05"), "etl-1", "failed")
    restored = Controller(ControllerState.from_json(json.loads(json.dumps(c.state.to_json()))))
    assert restored.tick(t("2024-03-01T01:05")) == [Retry("etl", "etl-1", 2)]
    restored.finish(t("2024-03-01T01:06"), "etl-1", "failed")
    assert restored.tick(t("2024-03-01T01:06")) == [Retry("etl", "etl-1", 3)]


def test_a_waiting_retry_keeps_a_forbid_job_busy() -> None:
    c = controller(retries=1, delay=120, policy=Policy.FORBID)
    c.tick(t("2024-03-01T01:00"))
    c.finish(t("2024-03-01T01:05"), "etl-1", "failed")
    assert c.tick(t("2024-03-01T02:00")) == [Skip("etl", t("2024-03-01T02:00"))]


def test_a_timed_out_run_is_not_retried() -> None:
    c = controller(retries=2, delay=60, timeout=45)
    c.tick(t("2024-03-01T01:00"))
    c.finish(t("2024-03-01T01:10"), "etl-1", "failed")
    c.advance(t("2024-03-01T01:45"))
    assert (c.find_run("etl-1").state, c.find_run("etl-1").finished_at) == ("timed_out", t("2024-03-01T01:45"))
    assert c.tick(t("2024-03-01T02:10")) == [Launch("etl", "etl-2", 2, t("2024-03-01T02:00"), "catch-up")]


def test_replace_deletes_a_run_waiting_for_a_retry_instead_of_retrying_it() -> None:
    c = controller(retries=1, delay=60, policy=Policy.REPLACE)
    c.tick(t("2024-03-01T01:00"))
    c.finish(t("2024-03-01T01:05"), "etl-1", "failed")
    decisions = c.tick(t("2024-03-01T02:05"))
    assert [type(d).__name__ for d in decisions] == ["Replace", "Launch"]


def test_without_retries_the_harness_results_are_unchanged() -> None:
    assert run([["create_job", "2024-03-01T00:00", "etl", HOURLY, "allow", {"retries": 1}]]) == [
        "error: invalid options"]
    assert run([["create_job", "2024-03-01T00:00", "etl", HOURLY, "allow"], ["tick", "2024-03-01T01:00"],
                ["finish", "2024-03-01T01:05", "etl-1", "failed"], ["run", "etl-1"]])[-1] == {
        "id": "etl-1", "job": "etl", "state": "failed", "scheduled_for": "2024-03-01T01:00",
        "launched_at": "2024-03-01T01:00", "finished_at": "2024-03-01T01:05"}
