"""One look at a CronPool (``pool_decisions.pool_plan``): the Jobs labelled with it in, the starts and
its status out. Its state is the Jobs: a running one holds a worker, a suspended one waits."""

from __future__ import annotations

from typing import Any

from cronctl.core.times import parse_time
from cronctl.operator.pool_decisions import pool_plan
from cronctl.operator.resource import rfc3339, rfc3339_seconds

MINUTE = parse_time("2024-03-01T00:10")
assert MINUTE is not None
SECOND = MINUTE * 60


def pool(workers: int = 2, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "reports", "namespace": "team-a", "generation": 1},
            "spec": {"workers": workers}, **({"status": status} if status else {})}


def job(schedule: str, nominal: int = MINUTE, attempt: int = 1, suspended: bool = True, ended: bool = False,
        pool_name: str = "reports", start_at: int | None = None) -> dict[str, Any]:
    name = f"{schedule}-{nominal}" + ("" if attempt == 1 else f"-{attempt}")
    annotations = {"cronctl.dev/scheduled-time": rfc3339(nominal)}
    if start_at is not None:
        annotations["cronctl.dev/start-at"] = rfc3339_seconds(start_at)
    conditions = [{"type": "Failed", "status": "True", "lastTransitionTime": rfc3339(nominal)}] if ended else []
    return {"metadata": {"name": name, "namespace": "team-a", "annotations": annotations,
                         "creationTimestamp": rfc3339(nominal),
                         "labels": {"cronctl.dev/schedule": schedule, "cronctl.dev/run": "1",
                                    "cronctl.dev/attempt": str(attempt), "cronctl.dev/pool": pool_name}},
            "spec": {"suspend": suspended}, "status": {"conditions": conditions}}


FIVE_DUE_AT_ONE_MINUTE = [job(name) for name in ("e-report", "c-report", "a-report", "d-report", "b-report")]


def test_two_workers_and_five_due_at_one_minute_start_the_first_two_in_seed_order() -> None:
    result = pool_plan(pool(2), FIVE_DUE_AT_ONE_MINUTE, SECOND + 1)
    assert [start.schedule for start in result.starts] == ["a-report", "b-report"]
    assert (result.busy, result.queued) == (2, 3)
    assert result.status is not None
    assert [entry["schedule"] for entry in result.status["queue"]] == ["c-report", "d-report", "e-report"]
    assert result.status["queue"][0]["waitingSince"] == rfc3339(MINUTE)
    assert result.status["lastStartTime"] == rfc3339_seconds(SECOND + 1)


def test_a_running_job_holds_a_worker_and_an_ended_one_frees_it() -> None:
    jobs = [job("a-report", suspended=False), job("b-report", suspended=False, ended=True), job("c-report")]
    assert [start.schedule for start in pool_plan(pool(2), jobs, SECOND).starts] == ["c-report"]
    assert pool_plan(pool(1), jobs, SECOND).starts == []


def test_a_retry_waits_by_its_nominal_time_then_its_attempt() -> None:
    jobs = [job("b-report", nominal=MINUTE - 10, attempt=2), job("a-report"), job("b-report", nominal=MINUTE - 10,
                                                                                 attempt=1, suspended=False,
                                                                                 ended=True)]
    [first] = pool_plan(pool(1), jobs, SECOND).starts
    assert (first.schedule, first.job) == ("b-report", f"b-report-{MINUTE - 10}-2")
    assert first.patch == {"spec": {"suspend": False}}


def test_a_start_leaves_the_job_the_deadline_its_wait_did_not_use() -> None:
    """The job controller starts activeDeadlineSeconds afresh at a resume; the run's timeout
    counts from its launch, its wait in the pool included."""
    waiting = job("a-report")
    waiting["spec"]["activeDeadlineSeconds"] = 600
    [first] = pool_plan(pool(1), [waiting], SECOND + 150).starts
    assert first.patch == {"spec": {"suspend": False, "activeDeadlineSeconds": 450}}
    assert first.waited == 150


def test_jobs_of_another_pool_neither_wait_nor_hold_a_worker_here() -> None:
    jobs = [job("a-report", suspended=False, pool_name="other"), job("b-report", pool_name="other")]
    result = pool_plan(pool(1), jobs, SECOND)
    assert (result.starts, result.busy, result.queued) == ([], 0, 0)


def test_a_jittered_attempt_waits_for_its_second() -> None:
    result = pool_plan(pool(2), [job("a-report", start_at=SECOND + 30)], SECOND + 5)
    assert result.starts == [] and result.wake_at == SECOND + 30
    assert [start.schedule for start in pool_plan(pool(2), [job("a-report", start_at=SECOND + 30)],
                                                    SECOND + 30).starts] == ["a-report"]


def test_a_job_made_by_an_api_server_whose_clock_is_ahead_waits_no_longer_for_it() -> None:
    """Its creation time is the API server's; when it may start is the operator's clock's to say."""
    ahead = job("a-report")
    ahead["metadata"]["creationTimestamp"] = rfc3339(MINUTE + 90)
    result = pool_plan(pool(1), [ahead], SECOND)
    assert [start.schedule for start in result.starts] == ["a-report"] and result.starts[0].waited == 0


def test_a_missing_pool_starts_nothing() -> None:
    assert pool_plan(None, FIVE_DUE_AT_ONE_MINUTE, SECOND).starts == []


def test_the_status_is_written_only_when_it_changed() -> None:
    first = pool_plan(pool(5), [job("a-report", suspended=False)], SECOND)
    assert first.status == {"observedGeneration": 1, "busy": 1, "queued": 0, "queue": []}
    again = pool_plan(pool(5, status=first.status), [job("a-report", suspended=False)], SECOND + 60)
    assert again.status is None
