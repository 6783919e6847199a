"""What a plan makes of what the cluster says: a refusal standing on Ready until a create goes
through, a schedule being deleted launching nothing, the first time counted from creation."""

from __future__ import annotations

import copy

from cronctl.operator.plan import first_anchor, plan
from cronctl.operator.resource import ANCHOR_ANNOTATION, rfc3339

from .test_plan import CREATED, after, finished, schedule, t

REFUSED_READY = {"type": "Ready", "status": "False", "reason": "FailedCreate",
                 "message": "cannot create Job sync-28512360: exceeded quota: jobs",
                 "lastTransitionTime": "2024-03-01T00:03:00Z", "observedGeneration": 1}


def refused(body: dict) -> dict:
    """The schedule as the operator's refusal left it: Ready False, FailedCreate."""
    body = copy.deepcopy(body)
    body["status"]["conditions"] = [REFUSED_READY, *[c for c in body["status"]["conditions"] if c["type"] != "Ready"]]
    return body


def ready(status: dict) -> dict:
    return next(c for c in status["conditions"] if c["type"] == "Ready")


def test_a_refused_create_stands_on_ready_through_a_reconcile_that_creates_nothing() -> None:
    body = refused(after(schedule(), plan(schedule(), [], CREATED).status))
    result = plan(body, [], CREATED + 5)  # 00:05: nothing due
    assert result.create == []
    assert result.status is None  # Ready still says the refusal: nothing to write


def test_a_create_that_goes_through_ends_the_refusal() -> None:
    body = refused(after(schedule(), plan(schedule(), [], CREATED).status))
    result = plan(body, [], t("2024-03-01T00:10"))
    assert len(result.create) == 1
    assert result.status is not None
    assert (ready(result.status)["status"], ready(result.status)["reason"]) == ("True", "Scheduled")


def deleting(body: dict, finalizers: list[str]) -> dict:
    body = copy.deepcopy(body)
    body["metadata"].update(deletionTimestamp="2024-03-01T00:07:30Z", finalizers=finalizers)
    return body


def test_a_schedule_being_deleted_launches_nothing_at_its_time() -> None:
    body = deleting(after(schedule(), plan(schedule(), [], CREATED).status), ["argocd.argoproj.io/finalizer"])
    result = plan(body, [], t("2024-03-01T00:10"))
    assert result.create == [] and result.stage == []
    assert result.status is not None and result.status["nextFireTime"] is None
    assert (ready(result.status)["status"], ready(result.status)["reason"]) == ("False", "Deleting")
    assert "argocd.argoproj.io/finalizer" in ready(result.status)["message"]
    assert plan(after(body, result.status), [], t("2024-03-01T00:20")).create == []


def test_a_schedule_being_deleted_runs_no_manual_trigger() -> None:
    body = deleting(after(schedule(), plan(schedule(), [], CREATED).status), ["backup.example.com/hold"])
    body["metadata"]["annotations"] = {"cronctl.dev/trigger": "now-please"}
    assert plan(body, [], CREATED + 3).create == []


def test_a_schedule_being_deleted_unstages_the_job_it_staged() -> None:
    body = after(schedule(), plan(schedule(), [], CREATED).status)
    staged = plan(body, [], t("2024-03-01T00:09"), staging=True)
    [job] = staged.stage
    result = plan(deleting(after(body, staged.status), ["hold"]), [job], t("2024-03-01T00:09"), staging=True)
    assert result.deletes() == [job["metadata"]["name"]]
    assert result.create == [] and result.release == []


def created_at(text: str) -> dict:
    body = schedule("* * * * *")
    body["metadata"]["creationTimestamp"] = text
    return body


def test_the_first_time_counts_from_the_schedules_creation() -> None:
    # Created at 04:10:02 while no operator ran; the operator first sees it at 04:11:10.
    body = created_at("2024-03-01T04:10:02Z")
    assert first_anchor(body, t("2024-03-01T04:11")) == t("2024-03-01T04:10")
    result = plan(body, [], t("2024-03-01T04:11"), second=t("2024-03-01T04:11") * 60 + 10)
    assert [job["metadata"]["annotations"]["cronctl.dev/scheduled-time"] for job in result.create] == [
        rfc3339(t("2024-03-01T04:11"))]


def test_a_creation_the_operator_sees_at_once_starts_its_times_after_that_minute() -> None:
    body = created_at("2024-03-01T04:10:02Z")
    result = plan(body, [], t("2024-03-01T04:10"))
    assert result.create == []
    assert result.status is not None and result.status["nextFireTime"] == rfc3339(t("2024-03-01T04:11"))


def test_a_creation_time_ahead_of_the_operators_clock_counts_as_now() -> None:
    assert first_anchor(created_at("2024-03-01T04:12:00Z"), t("2024-03-01T04:10")) == t("2024-03-01T04:10")


def test_an_imports_anchor_comes_before_the_creation_time() -> None:
    body = created_at("2024-03-01T04:10:02Z")
    body["metadata"]["annotations"] = {ANCHOR_ANNOTATION: "2024-03-01T04:05:00Z"}
    assert first_anchor(body, t("2024-03-01T04:11")) == t("2024-03-01T04:05")


def test_a_schedule_being_deleted_retries_no_failed_run_as_a_suspended_one_does() -> None:
    """Since a suspended schedule's runs finish their retries (issue 44), deletion is no longer
    a suspension: a schedule a finalizer holds launches no retry Job either, and waits for none."""
    body = schedule("0 * * * *", maxRetries=2)
    body = after(body, plan(body, [], CREATED).status)
    first = plan(body, [], t("2024-03-01T01:00"))
    body = after(body, first.status)
    failed = [finished(first.create[0], "Failed", t("2024-03-01T01:05"))]
    suspended = copy.deepcopy(body)
    suspended["spec"]["suspend"] = True
    assert len(plan(suspended, failed, t("2024-03-01T01:05")).create) == 1  # the retry, held or not
    result = plan(deleting(body, ["argocd.argoproj.io/finalizer"]), failed, t("2024-03-01T01:05"))
    assert result.create == [] and result.wake_at is None
