"""Where the Lease lives and who holds it: the operator's own namespace and Pod name first."""

from __future__ import annotations

import pytest

from cronctl.operator.leader import Election, election_from


def test_the_lease_lives_in_the_pods_namespace_and_is_held_by_the_pods_name(monkeypatch) -> None:
    monkeypatch.setenv("POD_NAMESPACE", "cronctl-system")
    monkeypatch.setenv("POD_NAME", "cronctl-7d9f-abcde")
    election = election_from(True, None, ["team-a"], "cronctl-operator", None, 15)
    assert (election.namespace, election.identity) == ("cronctl-system", "cronctl-7d9f-abcde")


def test_outside_a_pod_the_lease_lives_in_the_first_watched_namespace_else_default(monkeypatch) -> None:
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    assert election_from(True, None, ["team-a", "team-b"], "x", "me", 15).namespace == "team-a"
    assert election_from(True, None, [], "x", "me", 15).namespace == "default"
    assert election_from(True, "ops", ["team-a"], "x", "me", 15).namespace == "ops"


def test_the_renew_deadline_and_retry_period_follow_the_lease_as_client_go_does() -> None:
    assert (Election(lease_seconds=15).renew_seconds, Election(lease_seconds=15).retry_seconds) == (10, 2)
    assert (Election(lease_seconds=3).renew_seconds, Election(lease_seconds=3).retry_seconds) == (2, 1)


def test_a_lease_too_short_to_renew_is_refused_naming_the_flag() -> None:
    with pytest.raises(ValueError, match="--lease-seconds: 2 is below the minimum 3"):
        election_from(True, None, [], "x", "me", 2)
