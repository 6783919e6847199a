"""The manifest reader judges a CronSchedule as the API server does.

The same manifests go to the API server (``kubectl apply --dry-run=server``,
kubectl's strict field validation) and to ``cronctl.manifest.schema_problems``
(the reader of the runner and the fleet preview): both accept or both refuse,
and the field the reader names is the one the API server names.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from cronctl.manifest import pool_problems, schema_problems

from .helpers import Cluster, kubectl

GOOD: dict[str, Any] = {
    "apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": "verdict"},
    "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}}}}},
}


def edited(path: str, value: Any = None, delete: bool = False) -> dict[str, Any]:
    body = copy.deepcopy(GOOD)
    *parents, last = path.split(".")
    node = body
    for part in parents:
        node = node[part]
    if delete:
        del node[last]
    else:
        node[last] = value
    return body


def windowed(start: str, end: str) -> dict[str, Any]:
    body = edited("spec.startTime", start)
    body["spec"]["endTime"] = end
    return body


# (what, manifest, the field named, or None when both accept)
ROWS: list[tuple[str, dict[str, Any], str | None]] = [
    ("the example as it is", GOOD, None),
    ("timeoutMinutes a word", edited("spec.timeoutMinutes", "ten"), "spec.timeoutMinutes"),
    ("timeoutMinutes negative", edited("spec.timeoutMinutes", -5), "spec.timeoutMinutes"),
    ("timeoutMinutes zero", edited("spec.timeoutMinutes", 0), "spec.timeoutMinutes"),
    ("timeoutMinutes a fraction", edited("spec.timeoutMinutes", 1.5), "spec.timeoutMinutes"),
    ("timeoutMinutes true", edited("spec.timeoutMinutes", True), "spec.timeoutMinutes"),
    ("timeoutMinutes null is none", edited("spec.timeoutMinutes", None), None),
    ("timeoutMinutes 2.0 is the whole number 2", edited("spec.timeoutMinutes", 2.0), None),
    ("startingDeadlineSeconds a word", edited("spec.startingDeadlineSeconds", "x"), "spec.startingDeadlineSeconds"),
    ("maxRetries a word", edited("spec.maxRetries", "x"), "spec.maxRetries"),
    ("maxRetries past its maximum", edited("spec.maxRetries", 101), "spec.maxRetries"),
    ("missedSchedulesLimit zero", edited("spec.missedSchedulesLimit", 0), "spec.missedSchedulesLimit"),
    ("missedSchedulesLimit past its maximum", edited("spec.missedSchedulesLimit", 10001),
     "spec.missedSchedulesLimit"),
    ("past int32's range", edited("spec.successfulJobsHistoryLimit", 2**31), "spec.successfulJobsHistoryLimit"),
    ("the top of int32's range", edited("spec.successfulJobsHistoryLimit", 2**31 - 1), None),
    ("suspend yes", edited("spec.suspend", "yes"), "spec.suspend"),
    ("jitterSeconds past an hour", edited("spec.jitterSeconds", 3601), "spec.jitterSeconds"),
    ("a misspelt schedule", edited("spec.schedul", "* * * * *"), "spec.schedul"),
    ("no schedule", edited("spec.schedule", delete=True), "spec.schedule"),
    ("an empty schedule", edited("spec.schedule", ""), "spec.schedule"),
    ("a schedule that is a number", edited("spec.schedule", 5), "spec.schedule"),
    ("an unknown policy", edited("spec.concurrencyPolicy", "Sometimes"), "spec.concurrencyPolicy"),
    ("an unknown catch-up", edited("spec.catchUp", "Some"), "spec.catchUp"),
    ("a time zone that is a number", edited("spec.timeZone", 1), "spec.timeZone"),
    ("a time zone that names no zone", edited("spec.timeZone", "bad-time-zone"), "spec.timeZone"),
    ("a zone of the tz database", edited("spec.timeZone", "Europe/Berlin"), None),
    ("UTC by name", edited("spec.timeZone", "UTC"), None),
    ("an Etc zone west of UTC", edited("spec.timeZone", "Etc/GMT+5"), None),
    ("a UTC offset", edited("spec.timeZone", "+05:30"), None),
    ("the largest offset", edited("spec.timeZone", "-14:00"), None),
    ("an offset past 14:00", edited("spec.timeZone", "+14:15"), "spec.timeZone"),
    ("an offset's minutes not a quarter", edited("spec.timeZone", "+05:20"), "spec.timeZone"),
    ("an offset's hour in one digit", edited("spec.timeZone", "+5:30"), "spec.timeZone"),
    ("a name only a host's zoneinfo has", edited("spec.timeZone", "posix/Europe/Berlin"), "spec.timeZone"),
    ("Factory, no zone", edited("spec.timeZone", "Factory"), "spec.timeZone"),
    ("a zone name in the wrong case", edited("spec.timeZone", "europe/berlin"), "spec.timeZone"),
    ("no job template", edited("spec.jobTemplate", delete=True), "spec.jobTemplate"),
    ("a job template without its spec", edited("spec.jobTemplate", {}), "spec.jobTemplate.spec"),
    ("a job template that is a string", edited("spec.jobTemplate", "x"), "spec.jobTemplate"),
    ("anything inside the pod template is the Job's business", edited("spec.jobTemplate.spec.template.x", 1), None),
    ("no spec", edited("spec", delete=True), "spec"),
    ("a spec that is a list", edited("spec", []), "spec"),
    ("an unknown top-level field", edited("extra", 1), "extra"),
    ("a name of 53 characters", edited("metadata.name", "n" * 53), "metadata.name"),
    ("startTime a word", edited("spec.startTime", "soon"), "spec.startTime"),
    ("startTime without its offset", edited("spec.startTime", "2027-01-04T09:00:00"), "spec.startTime"),
    ("startTime on a day no month has", edited("spec.startTime", "2027-02-30T09:00:00Z"), "spec.startTime"),
    ("startTime a number", edited("spec.startTime", 2027), "spec.startTime"),
    ("endTime with an offset", edited("spec.endTime", "2027-01-04T09:00:00+05:30"), None),
    ("a window", windowed("2027-01-04T09:00:00Z", "2027-01-04T09:00:01Z"), None),
    ("endTime before startTime", windowed("2027-01-04T09:00:00Z", "2027-01-04T08:59:59Z"), "spec.endTime"),
    ("endTime at startTime, told in another offset", windowed("2027-01-04T09:00:00Z", "2027-01-04T10:00:00+01:00"),
     "spec.endTime"),
    ("maxRuns zero", edited("spec.maxRuns", 0), "spec.maxRuns"),
    ("maxRuns a word", edited("spec.maxRuns", "ten"), "spec.maxRuns"),
    ("maxRuns one", edited("spec.maxRuns", 1), None),
    ("pauseOnFailures zero", edited("spec.pauseOnFailures", 0), "spec.pauseOnFailures"),
    ("pauseOnFailures a word", edited("spec.pauseOnFailures", "three"), "spec.pauseOnFailures"),
    ("a pool", edited("spec.pool", "reports-2"), None),
    ("a pool that is no DNS label", edited("spec.pool", "Reports_2"), "spec.pool"),
    ("a pool name of 64 characters", edited("spec.pool", "p" * 64), "spec.pool"),
    ("a pool that is a number", edited("spec.pool", 2), "spec.pool"),
]


def pool(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "cronctl.dev/v1", "kind": "CronPool", "metadata": {"name": "verdict"}, "spec": spec}


POOL_ROWS: list[tuple[str, dict[str, Any], str | None]] = [
    ("a pool of 5", pool(workers=5), None),
    ("a pool of 10000", pool(workers=10000), None),
    ("no workers", pool(), "spec.workers"),
    ("workers zero", pool(workers=0), "spec.workers"),
    ("workers past 10000", pool(workers=10001), "spec.workers"),
    ("workers a word", pool(workers="five"), "spec.workers"),
    ("an unknown field", pool(workers=1, queue=3), "spec.queue"),
]


def same_verdict(cluster: Cluster, body: dict[str, Any], field: str | None, problems: list[Any]) -> None:
    """The API server (a server-side dry run, strict field validation) and the reader's ``problems``
    both accept ``body``, or both refuse it naming ``field``."""
    result = kubectl(cluster.cp, "apply", "--dry-run=server", "--validate=strict", "-n", cluster.namespace,
                     "-f", "-", input=json.dumps(body), check=False)
    if field is None:
        assert result.returncode == 0, result.stderr
        assert problems == []
        return
    assert result.returncode != 0, f"the API server took it: {result.stdout}"
    assert field in result.stderr, result.stderr
    assert problems and problems[0].field == field, problems


@pytest.mark.parametrize("what, body, field", ROWS, ids=[row[0] for row in ROWS])
def test_the_reader_and_the_api_server_give_the_same_verdict_on_the_same_field(
        cluster: Cluster, what: str, body: dict[str, Any], field: str | None) -> None:
    same_verdict(cluster, body, field, schema_problems(body))


@pytest.mark.parametrize("what, body, field", POOL_ROWS, ids=[row[0] for row in POOL_ROWS])
def test_the_reader_and_the_api_server_judge_a_cronpool_alike(cluster: Cluster, what: str, body: dict[str, Any],
                                                              field: str | None) -> None:
    same_verdict(cluster, body, field, pool_problems(body))
