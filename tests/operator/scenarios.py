"""Real plans of one schedule, for the tests of what the operator counts and logs.

Each scenario drives ``plan`` the way the loop does (the status each plan
writes is the next reconcile's input) and returns the plan of interest with
the status it was planned from. The Job template carries an env var whose
value is a secret, so that the log tests can look for it.
"""

from __future__ import annotations

import copy
from typing import Any

from cronctl.core.times import parse_time
from cronctl.operator.effects import Plan
from cronctl.operator.plan import plan
from cronctl.operator.resource import rfc3339

SECRET = "hunter2-do-not-log"
NAMESPACE, NAME = "team-a", "sync"
TEMPLATE = {"spec": {"template": {"spec": {
    "restartPolicy": "Never",
    "containers": [{"name": "main", "image": "busybox", "env": [{"name": "PASSWORD", "value": SECRET}]}]}}}}


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


CREATED = t("2024-03-01T00:00")


def schedule(expression: str = "*/10 * * * *", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "uid": "uid-1", "generation": 1},
            "spec": {"schedule": expression, "jobTemplate": copy.deepcopy(TEMPLATE), **spec}}


def after(body: dict[str, Any], status: dict[str, Any] | None) -> dict[str, Any]:
    body = copy.deepcopy(body)
    if status is not None:
        body["status"] = status
    return body


def seen(expression: str = "*/10 * * * *", **spec: Any) -> dict[str, Any]:
    """The schedule once the operator has seen it (anchor and next fire recorded)."""
    body = schedule(expression, **spec)
    return after(body, plan(body, [], CREATED).status)


def finished(job: dict[str, Any], kind: str, at: int) -> dict[str, Any]:
    job = copy.deepcopy(job)
    job["status"] = {"conditions": [{"type": kind, "status": "True", "lastTransitionTime": rfc3339(at)}]}
    return job


Scenario = tuple[dict[str, Any], Plan]  # (the schedule as read, the plan made from it)


def launch() -> Scenario:
    body = seen()
    return body, plan(body, [], t("2024-03-01T00:10"))


def skip_then_success_and_launch() -> tuple[Scenario, Scenario]:
    body = seen(concurrencyPolicy="Forbid")
    first = plan(body, [], t("2024-03-01T00:10"))
    body = after(body, first.status)
    skipped = plan(body, first.create, t("2024-03-01T00:20"))
    body2 = after(body, skipped.status)
    done = finished(first.create[0], "Complete", t("2024-03-01T00:21"))
    return (body, skipped), (body2, plan(body2, [done], t("2024-03-01T00:21")))


def replace() -> Scenario:
    body = seen(concurrencyPolicy="Replace")
    first = plan(body, [], t("2024-03-01T00:10"))
    body = after(body, first.status)
    return body, plan(body, first.create, t("2024-03-01T00:20"))


def overflow() -> Scenario:
    body = seen("* * * * *")
    return body, plan(body, [], CREATED + 101)


def timeout() -> Scenario:
    body = seen("0 * * * *", timeoutMinutes=45)
    first = plan(body, [], t("2024-03-01T01:00"))
    body = after(body, first.status)
    return body, plan(body, first.create, t("2024-03-01T01:45"))


def retry() -> tuple[Scenario, Scenario]:
    """An attempt fails (AttemptFailed), then the next one starts (Retried)."""
    body = seen("0 * * * *", maxRetries=1, retryDelayMinutes=10)
    first = plan(body, [], t("2024-03-01T01:00"))
    body = after(body, first.status)
    failed = [finished(first.create[0], "Failed", t("2024-03-01T01:05"))]
    waiting = plan(body, failed, t("2024-03-01T01:05"))
    body2 = after(body, waiting.status)
    return (body, waiting), (body2, plan(body2, failed, t("2024-03-01T01:15")))


def failure() -> Scenario:
    body = seen()
    first = plan(body, [], t("2024-03-01T00:10"))
    body = after(body, first.status)
    return body, plan(body, [finished(first.create[0], "Failed", t("2024-03-01T00:12"))], t("2024-03-01T00:12"))


def catch_up_launch() -> Scenario:
    """The operator was away: at 00:45 the latest missed time, 00:40, launches five minutes late."""
    body = seen()
    return body, plan(body, [], t("2024-03-01T00:45"))
