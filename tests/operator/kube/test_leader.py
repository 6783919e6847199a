"""Where the Lease lives and who holds it (the operator's own namespace and Pod name first), the
rules on its record and on its tries' times, and how the holder keeps it: every failed renewal
tried again until the renew deadline, a try allowed what is left of it (a slow API server costs
no renewal), and leading stopped before another replica can take the Lease."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

import pytest
from kubernetes.client.exceptions import ApiException

from cronctl.operator.kube.leader import (Election, Leadership, Seen, claimed, election_from, expired, next_try_in,
                                          observed, try_seconds)


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


# -- the rules on the record -------------------------------------------------------------------

NOON = datetime(2024, 3, 1, 12, 0, 0, 250000, tzinfo=timezone.utc)


@pytest.mark.parametrize("spec, seen_at, now, may_write", [
    ({}, 0.0, 0.0, True),  # nobody holds it
    ({"holderIdentity": "pod-a", "leaseDurationSeconds": 15}, 0.0, 1.0, True),  # we hold it
    ({"holderIdentity": "pod-b", "leaseDurationSeconds": 15}, 100.0, 114.9, False),  # theirs, not expired
    ({"holderIdentity": "pod-b", "leaseDurationSeconds": 15}, 100.0, 115.0, True),  # unchanged for its duration
    ({"holderIdentity": "pod-b", "leaseDurationSeconds": 30}, 100.0, 120.0, False),  # the record's duration counts
], ids=["nobody-holds-it", "ours", "theirs-renewed-lately", "theirs-expired", "their-longer-lease"])
def test_a_candidate_writes_the_lease_only_once_it_expired_on_its_own_clock(spec, seen_at, now, may_write) -> None:
    assert expired(Seen(spec, seen_at), "pod-a", now, 15) is may_write


def test_the_time_a_record_was_seen_moves_only_when_it_changed() -> None:
    first = observed(None, {"holderIdentity": "pod-b", "renewTime": "t1"}, 10.0)
    assert observed(first, {"holderIdentity": "pod-b", "renewTime": "t1"}, 14.0).at == 10.0
    assert observed(first, {"holderIdentity": "pod-b", "renewTime": "t2"}, 14.0).at == 14.0


def test_a_renewal_keeps_the_acquire_time_and_a_takeover_counts_a_transition() -> None:
    ours = {"holderIdentity": "pod-a", "acquireTime": "2024-03-01T11:00:00.000000Z", "leaseTransitions": 2}
    renewed = claimed(ours, "pod-a", 15, NOON)
    assert (renewed["acquireTime"], renewed["renewTime"], renewed["leaseTransitions"]) == (
        "2024-03-01T11:00:00.000000Z", "2024-03-01T12:00:00.250000Z", 2)
    taken = claimed({**ours, "holderIdentity": "pod-b"}, "pod-a", 15, NOON)
    assert (taken["acquireTime"], taken["leaseTransitions"]) == ("2024-03-01T12:00:00.250000Z", 3)
    assert claimed({}, "pod-a", 15, NOON)["leaseTransitions"] == 0


# -- the rules on the tries' times ---------------------------------------------------------------


@pytest.mark.parametrize("now, deadline, seconds", [
    (100.0, None, 15.0),  # a candidate: a lease duration, enough to connect, read and write on a slow path
    (102.0, 110.0, 7.0),  # a renewal: what is left of the deadline, but the last second
    (106.0, 110.0, 3.0),
    (108.0, 110.0, 2.0),  # no more than two seconds left: all of it, this is the last try
    (109.0, 110.0, 1.0),
    (109.5, 110.0, 0.5),
], ids=["candidate", "renewal-8-s-left", "renewal-4-s-left", "renewal-2-s-left", "last-try", "half-a-second-left"])
def test_a_try_may_use_what_is_left_of_the_renew_deadline_but_the_last_second(now, deadline, seconds) -> None:
    assert try_seconds(now, deadline, 15) == pytest.approx(seconds)


@pytest.mark.parametrize("now, last_try, deadline, failing, wait", [
    (100.1, 100.0, 110.0, False, 1.9),  # renewed at once: a retry period from the try's start
    (104.1, 100.0, 110.0, False, 0.0),  # a round trip of 4.1 s: the next try at once, not 2 s more
    (100.1, 100.0, 110.0, True, 1.9),  # failed at once: again a retry period later
    (107.6, 107.5, 110.0, True, 1.4),  # the last try one second before the deadline, not at 109.5
    (109.05, 102.0, 110.0, True, 0.0),  # a try that timed out past that moment: the last try at once
    (109.01, 109.0, 110.0, True, None),  # the last try was made
    (110.0, 108.0, 110.0, False, None),  # the deadline passed
], ids=["renewed", "slow-renewal", "failed", "last-try-before-the-deadline", "last-try-after-a-slow-failure",
        "last-try-made", "deadline-passed"])
def test_the_next_try_comes_a_retry_period_after_the_last_ones_start_and_the_last_before_the_deadline(
        now, last_try, deadline, failing, wait) -> None:
    got = next_try_in(now, last_try, deadline, 2, failing)
    assert got == (None if wait is None else pytest.approx(wait))


# -- the shell: renewals tried again until the renew deadline ------------------------------------


class LeaseServer:
    """Stands for the API server's Lease calls; ``down`` makes them fail as a restart does."""

    def __init__(self, clock: list[float]) -> None:
        self.clock, self.lease, self.down, self.calls = clock, None, False, []
        self.started: list[float] = []  # the clock when each call began
        self.version, self.taken_at = 0, 0.0  # the clock when the last write was taken
        self.round_trip, self.handshake = 0.01, 0.0  # a slow API server: seconds a call, a new connection's more
        self.connected = False
        self.down_from = float("inf")  # the clock from which every call is refused

    def _call(self, what: str, seconds: float) -> None:
        self.calls.append((what, seconds))
        self.started.append(self.clock[0])
        if self.down or self.clock[0] >= self.down_from:
            self.clock[0] += 0.01
            raise ConnectionRefusedError(111, "Connection refused")
        took = self.round_trip + (0.0 if self.connected else self.handshake)
        if took > seconds:  # no answer within the try's time: the connection is dropped
            self.clock[0] += seconds
            self.connected = False
            raise TimeoutError("The read operation timed out")
        self.clock[0] += took
        self.connected = True

    def read_namespaced_lease(self, namespace: str, name: str, seconds: float) -> dict:
        self._call("read", seconds)
        if self.lease is None:
            raise ApiException(status=404, reason="Not Found")
        return self.lease

    def create_namespaced_lease(self, namespace: str, body: dict, seconds: float) -> dict:
        self._call("create", seconds)
        self.version, self.taken_at = self.version + 1, self.clock[0]
        self.lease = {**body, "metadata": {**body["metadata"], "resourceVersion": str(self.version)}}
        return self.lease

    def replace_namespaced_lease(self, namespace: str, name: str, body: dict, seconds: float) -> dict:
        self._call("replace", seconds)
        if body["metadata"]["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
            raise ApiException(status=409, reason="Conflict")
        self.version, self.taken_at = self.version + 1, self.clock[0]
        self.lease = {**body, "metadata": {**body["metadata"], "resourceVersion": str(self.version)}}
        return self.lease


class Stepped:
    """A monotonic clock that a sleep moves, and what happens at chosen times."""

    def __init__(self) -> None:
        self.now = [0.0]
        self.at: dict[float, Callable[[], None]] = {}

    def monotonic(self) -> float:
        return self.now[0]

    def sleep(self, seconds: float) -> None:
        assert self.now[0] < 1000, "the replica never stopped: the test's clock ran out"
        before, self.now[0] = self.now[0], self.now[0] + seconds
        for when in sorted(self.at):
            if before < when <= self.now[0]:
                self.at.pop(when)()


class Lost(Exception):
    pass


def a_leader(clock: Stepped, server: LeaseServer) -> Leadership:
    def lost() -> None:
        raise Lost(clock.now[0])
    return Leadership(Election(True, "ops", "cronctl-operator", "pod-a", 15), server, lost,  # type: ignore[arg-type]
                      monotonic=clock.monotonic, wall=lambda: NOON, sleep=clock.sleep)


def test_an_api_server_down_for_less_than_the_renew_deadline_loses_nothing() -> None:
    clock = Stepped()
    server = LeaseServer(clock.now)
    leader = a_leader(clock, server)
    leadership_ended: list[float] = []
    clock.at[20.0] = lambda: setattr(server, "down", True)
    clock.at[27.0] = lambda: setattr(server, "down", False)  # 7 s of refused connections (deadline 10 s)
    clock.at[60.0] = lambda: leadership_ended.append(clock.now[0]) or setattr(server, "down", True)
    with pytest.raises(Lost):
        leader.campaign()
    assert leadership_ended == [pytest.approx(60.0, abs=2.1)]  # held through the outage at 20-27 s
    assert not leader.leading.is_set()


def test_past_the_renew_deadline_the_holder_stops_leading_before_the_lease_can_expire() -> None:
    clock = Stepped()
    server = LeaseServer(clock.now)
    leader = a_leader(clock, server)
    cleared: list[float] = []
    clock.at[10.0] = lambda: setattr(server, "down", True)
    original = leader.leading.clear
    leader.leading.clear = lambda: cleared.append(clock.now[0]) or original()  # type: ignore[method-assign]
    with pytest.raises(Lost) as raised:
        leader.campaign()
    assert cleared and cleared[0] == raised.value.args[0]  # leading stopped, then the process ends
    # Another replica may take the Lease 15 s after it saw the last renewal taken; this one
    # stopped leading within the renew deadline (10 s) of it.
    assert 9.0 <= cleared[0] - server.taken_at <= 10.1


def test_each_try_waits_at_most_what_is_left_of_the_renew_deadline() -> None:
    clock = Stepped()
    server = LeaseServer(clock.now)
    leader = a_leader(clock, server)
    clock.at[10.0] = lambda: setattr(server, "down", True)
    with pytest.raises(Lost):
        leader.campaign()
    deadline = server.taken_at + 10
    failed = [(at, seconds) for at, (what, seconds) in zip(server.started, server.calls) if at > server.taken_at]
    assert len(failed) >= 4
    assert all(at + seconds <= deadline + 0.02 for at, seconds in failed)  # never past the deadline
    assert max(seconds for _, seconds in failed) > 10 / 3  # more than a third of it, as client-go allows


def test_a_renewal_stuck_on_a_dead_connection_costs_one_try_not_the_lease() -> None:
    clock = Stepped()
    server = LeaseServer(clock.now)
    leader = a_leader(clock, server)
    stuck = {"once": True}
    replace = server.replace_namespaced_lease

    def hanging_once(namespace: str, name: str, body: dict, seconds: float) -> dict:
        if clock.now[0] > 10 and stuck.pop("once", False):
            clock.now[0] += seconds  # no answer: the read waits its whole timeout
            raise TimeoutError("The read operation timed out")
        return replace(namespace, name, body, seconds)

    server.replace_namespaced_lease = hanging_once  # type: ignore[method-assign]
    clock.at[40.0] = lambda: setattr(server, "down", True)
    with pytest.raises(Lost) as raised:
        leader.campaign()
    assert raised.value.args[0] > 40.0  # kept through the stuck try at ~12 s, lost only once down


def test_a_slow_api_server_costs_no_renewal_and_a_candidate_takes_the_lease_through_a_new_connection() -> None:
    """Every request delayed 2 s each way (4.1 s a round trip), a new connection's TLS handshake
    6 s more: the candidate reads and takes the Lease within its try, and the holder renews in
    every try, for two minutes, until the API server is away."""
    clock = Stepped()
    server = LeaseServer(clock.now)
    server.round_trip, server.handshake = 4.1, 6.0
    leader = a_leader(clock, server)
    led: list[float] = []
    original = leader.leading.set
    leader.leading.set = lambda: led.append(clock.now[0]) or original()  # type: ignore[method-assign]
    server.down_from = 130.0
    with pytest.raises(Lost) as raised:
        leader.campaign()
    assert led == [pytest.approx(14.2)]  # a read through a new connection (10.1 s), then the write (4.1 s)
    assert raised.value.args[0] > 130.0  # held until the API server went away
    writes = [at for at, (what, _) in zip(server.started, server.calls) if what == "replace" and 14.2 < at < 130]
    assert len(writes) >= 25 and max(b - a for a, b in zip(writes, writes[1:])) == pytest.approx(4.1)


def test_another_replicas_takeover_is_refused_as_a_conflict_and_read_afresh() -> None:
    clock = Stepped()
    server = LeaseServer(clock.now)
    leader = a_leader(clock, server)
    assert leader.try_to_hold(10)  # created
    assert leader.try_to_hold(10)  # renewed without a read
    assert [what for what, _ in server.calls] == ["read", "create", "replace"]
    server.lease = {**server.lease, "spec": {**server.lease["spec"], "holderIdentity": "pod-b"},
                    "metadata": {**server.lease["metadata"], "resourceVersion": "99"}}
    assert not leader.try_to_hold(10)  # the fast path's write is refused
    assert not leader.try_to_hold(10)  # read: pod-b holds it, not expired
    assert [what for what, _ in server.calls[3:]] == ["replace", "read"]


def test_after_losing_the_lease_the_replica_campaigns_again_and_takes_its_own_back() -> None:
    """etcd stalled for 20 s: nobody could write the Lease, and the holder takes it back at once."""
    clock = Stepped()
    server = LeaseServer(clock.now)
    losses: list[float] = []
    led_again: list[float] = []

    def lost() -> None:
        losses.append(clock.now[0])
        if len(losses) == 2:
            raise Lost(clock.now[0])

    leader = Leadership(Election(True, "ops", "cronctl-operator", "pod-a", 15), server, lost,  # type: ignore[arg-type]
                        monotonic=clock.monotonic, wall=lambda: NOON, sleep=clock.sleep)
    original = leader.leading.set
    leader.leading.set = lambda: led_again.append(clock.now[0]) or original()  # type: ignore[method-assign]
    clock.at[10.0] = lambda: setattr(server, "down", True)
    clock.at[30.0] = lambda: setattr(server, "down", False)
    clock.at[50.0] = lambda: setattr(server, "down", True)
    with pytest.raises(Lost):
        leader.campaign()
    assert losses[0] < 10.0 + 10.1  # stopped acting within the renew deadline of its last renewal
    assert len(led_again) == 2 and 30.0 <= led_again[1] <= 32.1  # its own Lease, taken back at once


def test_a_candidate_that_cannot_take_the_lease_says_why_once(caplog: pytest.LogCaptureFixture) -> None:
    clock = Stepped()
    server = LeaseServer(clock.now)

    def refused(namespace: str, body: dict, seconds: float) -> dict:
        raise ApiException(status=422, reason="Unprocessable Entity")

    server.create_namespaced_lease = refused  # type: ignore[method-assign]
    leader = a_leader(clock, server)
    for _ in range(5):
        assert not leader.try_to_hold(3)
    said = [record.getMessage() for record in caplog.records if "could not take the Lease" in record.getMessage()]
    assert said == ["could not take the Lease ops/cronctl-operator (422 Unprocessable Entity); trying again every 2 s"]


@pytest.mark.parametrize("name", ["cronctl-operator-Bad_Name", "-x", "a" * 254])
def test_a_lease_name_the_api_server_would_refuse_is_refused_at_start(name: str) -> None:
    with pytest.raises(ValueError, match="is not a DNS subdomain"):
        election_from(True, None, [], name, "me", 15)
    assert election_from(False, None, [], name, "me", 15).name == name  # no Lease without election
