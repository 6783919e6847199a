"""The API server's refusals: read from its answer, said in its words, on the schedule's Ready
condition until a write of the refused kind goes through."""

from __future__ import annotations

import json

import pytest

from cronctl.operator.refusals import (Refusal, carried, event, refusal_of, refused_conditions, standing)

POLICY_DENIED = json.dumps({
    "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Invalid", "code": 422,
    "message": "jobs.batch \"nightly-28512345\" is forbidden: ValidatingAdmissionPolicy 'no-jobs' with binding "
               "'no-jobs' denied request: no Jobs now"})
QUOTA_EXCEEDED = json.dumps({
    "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
    "message": "jobs.batch \"nightly-28512345\" is forbidden: exceeded quota: jobs, requested: count/jobs.batch=1, "
               "used: count/jobs.batch=2, limited: count/jobs.batch=2"})
TERMINATING = json.dumps({
    "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
    "message": "jobs.batch \"nightly-28512345\" is forbidden: unable to create new content in namespace team-a "
               "because it is being terminated",
    "details": {"name": "nightly-28512345", "group": "batch", "kind": "jobs",
                "causes": [{"reason": "NamespaceTerminating", "message": "namespace team-a is being terminated",
                            "field": "metadata.namespace"}]}})
TERMINATING_CAUSE_TYPE = json.dumps({
    "kind": "Status", "reason": "Forbidden", "code": 403, "message": "being terminated",
    "details": {"causes": [{"type": "NamespaceTerminating", "message": "namespace team-a is being terminated"}]}})


@pytest.mark.parametrize("code, body, reason, words", [
    (422, POLICY_DENIED, "Invalid", "ValidatingAdmissionPolicy 'no-jobs' with binding 'no-jobs' denied request"),
    (403, QUOTA_EXCEEDED, "Forbidden", "used: count/jobs.batch=2, limited: count/jobs.batch=2"),
    (403, "not json at all", "Forbidden", "not json at all"),
    (404, "", "Not Found", "Not Found"),
], ids=["admission policy", "quota", "a body that is not a Status", "no body"])
def test_a_refusal_is_read_in_the_api_servers_words(code: int, body: str, reason: str, words: str) -> None:
    refusal = refusal_of("create", "jobs", "nightly-28512345", code, "Not Found" if code == 404 else reason, body)
    assert refusal is not None
    assert refusal.code == code and refusal.reason == reason and words in refusal.message
    assert refusal.said().startswith("cannot create Job nightly-28512345: ") and words in refusal.said()
    assert not refusal.terminating


@pytest.mark.parametrize("code", [0, 408, 409, 429, 500, 503, 504, None])
def test_a_failure_that_passes_is_no_refusal(code: int | None) -> None:
    assert refusal_of("create", "jobs", "j", code, "x", "{}") is None


@pytest.mark.parametrize("body", [TERMINATING, TERMINATING_CAUSE_TYPE])
def test_a_namespace_being_terminated_is_named_by_its_cause(body: str) -> None:
    refusal = refusal_of("create", "jobs", "j", 403, "Forbidden", body)
    assert refusal is not None and refusal.terminating


@pytest.mark.parametrize("verb, resource, reason, what", [
    ("create", "jobs", "FailedCreate", "cannot create Job j"),
    ("patch", "jobs", "FailedUpdate", "cannot patch Job j"),
    ("delete", "jobs", "FailedDelete", "cannot delete Job j"),
    ("patch", "cronschedules/status", "FailedUpdate", "cannot patch status of j"),
])
def test_the_warning_event_is_cronjobs_reason_with_the_api_servers_message(verb: str, resource: str, reason: str,
                                                                           what: str) -> None:
    spec = event(Refusal(verb, resource, "j", 403, "Forbidden", "no, says the quota"))
    assert (spec.type, spec.reason) == ("Warning", reason)
    assert spec.message == f"{what}: no, says the quota"


READY = {"type": "Ready", "status": "True", "reason": "Scheduled", "message": "the schedule is valid",
         "lastTransitionTime": "2024-03-01T00:00:00Z", "observedGeneration": 1}
MISSED = {"type": "MissedSchedules", "status": "False", "reason": "OnTime", "message": "m",
          "lastTransitionTime": "2024-03-01T00:00:00Z", "observedGeneration": 1}
QUOTA = Refusal("create", "jobs", "j", 403, "Forbidden", "exceeded quota: jobs")


def test_the_first_refusal_turns_ready_false_and_keeps_the_other_conditions() -> None:
    conditions = refused_conditions([READY, MISSED], QUOTA, 1, 28512345)
    assert conditions is not None
    ready, missed = conditions
    assert (ready["status"], ready["reason"]) == ("False", "FailedCreate")
    assert ready["message"] == "cannot create Job j: exceeded quota: jobs"
    assert ready["lastTransitionTime"] != READY["lastTransitionTime"]
    assert missed == MISSED


def test_the_same_refusal_again_writes_nothing() -> None:
    conditions = refused_conditions([READY, MISSED], QUOTA, 1, 28512345)
    assert conditions is not None
    assert refused_conditions(conditions, QUOTA, 1, 28512346) is None


def test_another_refusal_rewrites_the_message() -> None:
    conditions = refused_conditions([READY], QUOTA, 1, 28512345)
    assert conditions is not None
    other = Refusal("create", "jobs", "k", 422, "Invalid", "denied by policy")
    [ready] = refused_conditions(conditions, other, 1, 28512346) or []
    assert ready["message"] == "cannot create Job k: denied by policy"
    assert ready["lastTransitionTime"] == conditions[0]["lastTransitionTime"]  # still False since then


def test_a_schedule_with_no_conditions_yet_gets_ready_false() -> None:
    [ready] = refused_conditions([], QUOTA, 1, 28512345) or []
    assert ready["type"] == "Ready" and ready["status"] == "False"


def _standing(reason: str) -> list[dict[str, object]]:
    return [{**READY, "status": "False", "reason": reason, "message": "cannot ..."}]


@pytest.mark.parametrize("reason, creates, patches, deletes_after, kept", [
    ("FailedCreate", False, False, False, True),  # no create went through yet: it stands
    ("FailedCreate", True, False, False, False),  # the plan's status follows its create: it went through
    ("FailedCreate", False, True, True, True),  # other writes end nothing
    ("FailedUpdate", False, False, False, True),
    ("FailedUpdate", False, True, False, False),
    ("FailedDelete", False, False, True, True),  # the delete is tried again after the status
    ("FailedDelete", False, False, False, False),  # nothing left to delete: it went through
])
def test_a_refusal_stands_until_a_write_of_its_kind_goes_through(reason: str, creates: bool, patches: bool,
                                                                  deletes_after: bool, kept: bool) -> None:
    conditions = _standing(reason)
    assert (carried(conditions, creates, patches, deletes_after) is not None) == kept


@pytest.mark.parametrize("ready", [READY, {**READY, "status": "False", "reason": "PoolNotFound"},
                                   {**READY, "status": "False", "reason": "InvalidSchedule"}])
def test_only_a_refusal_stands_as_one(ready: dict[str, object]) -> None:
    assert standing([ready]) is None
    assert carried([ready], False, False, True) is None
