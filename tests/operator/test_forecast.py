"""A staged release's plan made ahead: used at its second only if nothing it was made from changed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cronctl.operator import loop
from cronctl.operator.forecast import forecast, inputs_of
from cronctl.operator.plan import Plan, ReleaseJob, plan

from .test_staging import A_MINUTE_BEFORE_THE_HOUR, THE_HOUR, seen
from .world import World

HOUR_SECOND = THE_HOUR * 60


class Versioned:
    """The loop's cluster over in-memory schedules, with a cache's resourceVersions: every write
    gives the object a new one, as the API server does."""

    def __init__(self, worlds: dict[tuple[str, str], World]) -> None:
        self.worlds, self.version = worlds, 0
        self.cache = object()  # the operator's cluster has one: plans ahead are made from it
        for world in worlds.values():
            self._stamp(world.schedule)
            for job in world.jobs.values():
                self._stamp(job)

    def _stamp(self, obj: dict[str, Any]) -> None:
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)

    def schedule(self, namespace: str, name: str) -> dict[str, Any] | None:
        world = self.worlds.get((namespace, name))
        return None if world is None else copy.deepcopy(world.schedule)

    def jobs(self, namespace: str, name: str) -> list[dict[str, Any]]:
        return [copy.deepcopy(job) for job in self.worlds[(namespace, name)].jobs.values()]

    live_jobs = jobs

    def plan_jobs(self, schedule: dict[str, Any]) -> list[dict[str, Any]]:
        return self.jobs(schedule["metadata"]["namespace"], schedule["metadata"]["name"])

    def apply(self, schedule: dict[str, Any], result: Plan) -> bool:
        world = self.worlds[(schedule["metadata"]["namespace"], schedule["metadata"]["name"])]
        before = {name: copy.deepcopy(job) for name, job in world.jobs.items()}
        status = copy.deepcopy(world.schedule.get("status"))
        world.carry_out(result.effects)
        if world.schedule.get("status") != status:
            self._stamp(world.schedule)
        for name, job in world.jobs.items():
            if before.get(name) != job:
                self._stamp(job)
        return True

    def touch_job(self, key: tuple[str, str]) -> None:
        """Someone else changed a Job (its run ended, say): a new version."""
        self._stamp(next(iter(self.worlds[key].jobs.values())))


def staged(expression: str = "0 * * * *", **spec: Any) -> tuple[Versioned, tuple[str, str]]:
    world = seen(expression, **spec)
    key = ("team-a", "sync")
    return Versioned({key: world}), key


def counting_plans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Plan:
        calls.append(1)
        return plan(*args, **kwargs)

    monkeypatch.setattr(loop, "plan", counted)
    return calls


def test_the_staging_reconcile_plans_the_release_ahead_and_the_second_takes_it_unplanned(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, key = staged()
    forecasts: dict[Any, Any] = {}
    # The reconcile at 00:59 stages 01:00's Job, and plans 01:00 from the cache it leaves.
    wake = loop.reconcile(cluster, key, A_MINUTE_BEFORE_THE_HOUR * 60, forecasts=forecasts)  # type: ignore[arg-type]
    assert wake == HOUR_SECOND and forecasts[key].second == HOUR_SECOND
    calls = counting_plans(monkeypatch)
    started = loop.start(cluster, key, HOUR_SECOND + 0.004, forecasts=forecasts)  # type: ignore[arg-type]
    assert calls == [] and started is not None
    assert [type(e) for e in started.plan.effects][:1] == [ReleaseJob]
    loop.finish(cluster, started, forecasts)  # type: ignore[arg-type]
    assert cluster.worlds[key].schedule["status"]["launched"] == 1


def test_anything_changed_since_and_the_second_plans_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, key = staged()
    forecasts: dict[Any, Any] = {}
    loop.reconcile(cluster, key, A_MINUTE_BEFORE_THE_HOUR * 60, forecasts=forecasts)  # type: ignore[arg-type]
    cluster.touch_job(key)
    calls = counting_plans(monkeypatch)
    started = loop.start(cluster, key, HOUR_SECOND + 0.004, forecasts=forecasts)  # type: ignore[arg-type]
    assert calls == [1] and started is not None


def test_a_plan_made_for_one_second_is_not_used_at_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, key = staged()
    forecasts: dict[Any, Any] = {}
    loop.reconcile(cluster, key, A_MINUTE_BEFORE_THE_HOUR * 60, forecasts=forecasts)  # type: ignore[arg-type]
    calls = counting_plans(monkeypatch)
    loop.start(cluster, key, HOUR_SECOND + 1.0, forecasts=forecasts)  # type: ignore[arg-type]
    assert calls == [1]


@pytest.mark.parametrize("spec", [{}, {"jitterSeconds": 30}, {"concurrencyPolicy": "Replace"},
                                  {"concurrencyPolicy": "Forbid"}, {"timeoutMinutes": 5}],
                         ids=["plain", "jitter", "replace", "forbid", "timeout"])
@pytest.mark.parametrize("fraction", [0.0, 0.001, 0.5, 0.999])
def test_the_plan_made_ahead_is_the_plan_of_any_moment_of_its_second(spec: dict[str, Any], fraction: float) -> None:
    world = seen("0 * * * *", **spec)
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    jobs = [copy.deepcopy(job) for job in world.jobs.values()]
    for index, job in enumerate(jobs):
        job["metadata"]["resourceVersion"] = str(index + 10)
    body = copy.deepcopy(world.schedule)
    body["metadata"]["resourceVersion"] = "1"
    ahead = forecast(body, jobs, HOUR_SECOND, staging=True)
    assert ahead is not None
    assert ahead.plan == plan(body, jobs, THE_HOUR, second=HOUR_SECOND + fraction, staging=True)


def test_no_plan_ahead_without_a_staged_job_a_whole_second_or_every_version() -> None:
    world = seen("0 * * * *")
    body = copy.deepcopy(world.schedule)
    body["metadata"]["resourceVersion"] = "1"
    assert forecast(body, [], HOUR_SECOND, staging=True) is None  # nothing staged yet
    world.reconcile(A_MINUTE_BEFORE_THE_HOUR)
    jobs = [copy.deepcopy(job) for job in world.jobs.values()]
    assert inputs_of(body, jobs) is None  # a Job without a version
    for job in jobs:
        job["metadata"]["resourceVersion"] = "7"
    assert forecast(body, jobs, HOUR_SECOND + 0.5, staging=True) is None
    assert forecast(body, jobs, HOUR_SECOND, staging=False) is None
    assert forecast(body, jobs, HOUR_SECOND, staging=True) is not None
