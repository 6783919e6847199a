"""Leader election: of several operator replicas, exactly one acts at a time.

Every replica watches (the watches only mark schedules for the loop); only
the holder of a ``coordination.k8s.io`` Lease reconciles. The Lease is kept
as client-go's ``leaderelection`` keeps it:

- a candidate takes the Lease once the record it last saw has not changed
  for a lease duration, measured on its own monotonic clock from when it saw
  it (never from the record's times: the replicas' clocks may differ);
- the holder renews every retry period, counted from the start of its last
  try (a slow round trip is not followed by a whole period more); a renewal
  that fails for any reason (a refusal, a connection refused or reset, a
  timeout, the API server restarting) is tried again every retry period
  until the renew deadline, counted from the start of the last write that was
  taken (the Lease says no earlier). As client-go's, a try may use what is
  left of the deadline, a new connection's connect and TLS handshake
  included, so a round trip of several seconds costs no renewal: with the
  default 15 s lease, up to about 4.5 s a round trip keeps the Lease
  (client-go counts its deadline from each renewal cycle's start, a retry
  period after the last answer, so it keeps the Lease through longer round
  trips but may act for a round trip and a period past what the Lease says). It
  leaves the last second for one more try, on a new connection: a request
  stuck on a dead connection costs one try, not the Lease. A candidate's try
  may take a lease duration (reading and taking the Lease through a new
  connection on a slow path takes several round trips);
- past the renew deadline, which is shorter than the lease, the holder stops
  acting (``leading`` is cleared, and the loop acts on nothing) before another
  replica can take the Lease, and campaigns again: the process lives on. An
  API server down for longer than the deadline (etcd stalled, a restart that
  takes a while) leaves nobody able to take the Lease, and this replica takes
  its own back as soon as it can write it; where another replica took it, this
  one follows. client-go controllers exit instead, and their Deployment
  restarts them; that costs the watches' lists and a cold cache. A failover
  creates no duplicate Job because Job names are a function of the schedule
  and the nominal time: the new leader adopts what the old one created.

Written here rather than through the kubernetes client's ``leaderelection``:
that one lets a renewal's failure other than a refusal (a connection error)
end the election at once, so every API server restart ended the operator,
it bounds no single try by the deadline, so a renewal hung on a dead
connection outlived the lease, and it cannot campaign again. The rules on the
record and on the tries' times are pure functions (``expired``, ``claimed``,
``next_try_in``, ``try_seconds``); ``Leadership`` is the shell that reads,
writes and waits, with its clocks injected.

The identity is the Pod's name (``POD_NAME``), so a restarted container of the
same Pod takes its Lease back at once instead of waiting for it to expire.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

from kubernetes.client.exceptions import ApiException

from ...api import DEFAULT_LEASE_NAME
from .rest import Rest

log = logging.getLogger("cronctl.operator")

DEFAULT_LEASE_SECONDS = 15
MIN_LEASE_SECONDS = 3
LEASE_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LAST_TRY_SECONDS = 1.0  # kept for the last try, on a new connection, before the renew deadline
TRIED = 1e-3  # a try that started this close to the last-try moment was the last try


@dataclass(frozen=True)
class Election:
    enabled: bool = True
    namespace: str = "default"
    name: str = DEFAULT_LEASE_NAME
    identity: str = ""
    lease_seconds: int = DEFAULT_LEASE_SECONDS

    @property
    def renew_seconds(self) -> int:
        """The holder gives up when it could not renew for this long (client-go's 2/3 ratio)."""
        return self.lease_seconds * 2 // 3

    @property
    def retry_seconds(self) -> int:
        return max(1, self.lease_seconds // 7)


def election_from(enabled: bool, namespace: str | None, watched: list[str], name: str, identity: str | None,
                  lease_seconds: int) -> Election:
    """The Lease lives in the operator's own namespace (``POD_NAMESPACE``), else the
    first watched one, else ``default``."""
    if lease_seconds < MIN_LEASE_SECONDS:
        raise ValueError(f"--lease-seconds: {lease_seconds} is below the minimum {MIN_LEASE_SECONDS}")
    if enabled and not LEASE_NAME.fullmatch(name):
        raise ValueError(f"the Lease name {name!r} (--leader-election-id, or the default and --shard) is not a "
                         "DNS subdomain: lowercase letters, digits, '-' and '.', at most 253")
    namespace = namespace or os.environ.get("POD_NAMESPACE") or (watched[0] if watched else "default")
    identity = identity or os.environ.get("POD_NAME") or socket.gethostname()
    return Election(enabled, namespace, name, identity, lease_seconds)


# -- the rules on the record: pure --------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """A Lease's spec as a candidate last saw it change, and when (its monotonic clock)."""

    spec: Mapping[str, Any]
    at: float


def observed(previous: Seen | None, spec: Mapping[str, Any], now: float) -> Seen:
    """What a candidate knows after reading ``spec`` at ``now``: the time only moves when the
    record changed (a holder's renewal changes its renewTime)."""
    if previous is not None and previous.spec == spec:
        return previous
    return Seen(spec, now)


def expired(seen: Seen, identity: str, now: float, lease_seconds: float) -> bool:
    """Whether ``identity`` may write the Lease: it holds it, nobody does, or the record has not
    changed for the lease duration the record states (else ours)."""
    holder = seen.spec.get("holderIdentity")
    if not holder or holder == identity:
        return True
    duration = seen.spec.get("leaseDurationSeconds") or lease_seconds
    return now >= seen.at + duration


def claimed(spec: Mapping[str, Any], identity: str, lease_seconds: int, now: datetime) -> dict[str, Any]:
    """The Lease's spec as ``identity`` writes it to take or renew it: the acquire time kept
    while it holds the Lease, the transitions counted when the holder changes."""
    stamp = micro_time(now)
    holding = spec.get("holderIdentity") == identity
    transitions = int(spec.get("leaseTransitions") or 0)
    if spec.get("holderIdentity") and not holding:
        transitions += 1
    return {**spec, "holderIdentity": identity, "leaseDurationSeconds": lease_seconds,
            "acquireTime": spec.get("acquireTime") if holding and spec.get("acquireTime") else stamp,
            "renewTime": stamp, "leaseTransitions": transitions}


def micro_time(instant: datetime) -> str:
    """A Lease's MicroTime: RFC 3339 in UTC with microseconds."""
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# -- the rules on the tries' times: pure ---------------------------------------------------------


def try_seconds(now: float, deadline: float | None, lease_seconds: float) -> float:
    """How long a try that starts at ``now`` may take, connection set-up included. A holder's
    (``deadline``: its renew deadline) may use what is left of it, as client-go's, but for
    LAST_TRY_SECONDS kept for one more try on a new connection, unless no more than that is
    left; a candidate's (no deadline) may take a lease duration."""
    if deadline is None:
        return float(lease_seconds)
    left = deadline - now
    return left - LAST_TRY_SECONDS if left > 2 * LAST_TRY_SECONDS else left


def next_try_in(now: float, last_try: float, deadline: float, retry_seconds: float, failing: bool) -> float | None:
    """How long the holder waits from ``now`` before its next try, the last having started at
    ``last_try``: a retry period from that start; after a failure, no later than LAST_TRY_SECONDS
    before the deadline (at once if that passed during a slow try). None: no try is left, the
    last one having been made, or the deadline passed."""
    if now >= deadline:
        return None
    wait = max(0.0, last_try + retry_seconds - now)
    if not failing:
        return wait
    last_chance = deadline - LAST_TRY_SECONDS
    if last_try >= last_chance - TRIED:
        return None
    return min(wait, max(0.0, last_chance - now))


# -- the Lease on the API server -------------------------------------------------------------


class LeaseLock:
    """One Lease read and written through ``Rest`` as plain JSON.

    The holder renews from the Lease it wrote last, without reading it first (client-go's
    fast path): a renewal is one request, not two. Had another replica written the Lease since,
    the renewal's resourceVersion is refused (Conflict), and the next try reads."""

    def __init__(self, rest: Rest, namespace: str, name: str) -> None:
        self.rest, self.namespace, self.name = rest, namespace, name
        self.lease: dict[str, Any] | None = None  # as last read or written
        self.wrote_last = False  # the Lease as this replica last wrote it is the newest it knows

    def read(self, seconds: float) -> dict[str, Any] | None:
        """The Lease's spec (from what this replica wrote last, if that is the newest it knows);
        None: there is no Lease."""
        if not (self.wrote_last and self.lease is not None):
            try:
                self.lease = self.rest.read_namespaced_lease(self.namespace, self.name, seconds=seconds)
            except ApiException as error:
                if error.status != 404:
                    raise
                self.lease = None
        return None if self.lease is None else dict(self.lease.get("spec") or {})

    def write(self, spec: dict[str, Any], seconds: float) -> None:
        """Create the Lease with ``spec``, or replace the one read last (a Conflict if another
        replica wrote it since). Raises whatever stopped the write."""
        self.wrote_last = False  # whatever happens now, the next read asks unless this write is taken
        if self.lease is None:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": self.name},
                    "spec": spec}
            self.lease = self.rest.create_namespaced_lease(self.namespace, body, seconds=seconds)
        else:
            self.lease = self.rest.replace_namespaced_lease(self.namespace, self.name,
                                                            {**self.lease, "spec": spec}, seconds=seconds)
        self.wrote_last = True


def _wall() -> datetime:
    return datetime.now(timezone.utc)


class Leadership:
    """Waits for the Lease, then keeps it, and campaigns again once it could not be kept;
    ``lost`` is called each time, after ``leading`` was cleared. The clocks and the wait are
    injected for tests."""

    def __init__(self, election: Election, rest: Rest, lost: Callable[[], None] | None = None, *,
                 monotonic: Callable[[], float] = time.monotonic, wall: Callable[[], datetime] = _wall,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.election, self.lock = election, LeaseLock(rest, election.namespace, election.name)
        self.leading = threading.Event()
        self._lost = lost or (lambda: None)
        self._monotonic, self._wall, self._sleep = monotonic, wall, sleep
        self._seen: Seen | None = None
        self._failing = False  # a renewal failed since the last one taken (``_say_failure`` sets it)
        self._refusal: str | None = None  # why the last try to take the Lease failed, as said
        self._wrote_at = 0.0  # when the last write of the Lease that was taken began (monotonic)

    def start(self) -> None:
        if not self.election.enabled:
            log.info("leader election is off: this replica acts alone")
            self.leading.set()
            return
        threading.Thread(target=self.campaign, name="cronctl-leader-election", daemon=True).start()

    def campaign(self) -> None:
        """Take the Lease, keep it until it cannot be kept (then ``lost``), and again."""
        e = self.election
        while True:
            log.info("waiting for the Lease %s/%s as %s", e.namespace, e.name, e.identity)
            while not self.try_to_hold(try_seconds(self._monotonic(), None, e.lease_seconds)):
                self._sleep(e.retry_seconds)
            log.info("holding the Lease %s/%s as %s: this replica acts", e.namespace, e.name, e.identity)
            self.leading.set()
            self.keep()
            self.leading.clear()
            log.error("could not renew the Lease %s/%s for %d s (the renew deadline): this replica stopped "
                      "acting so that no two replicas act, and campaigns again", e.namespace, e.name,
                      e.renew_seconds)
            self._lost()

    def keep(self) -> None:
        """Renew (``next_try_in``, ``try_seconds``); return once no renewal was taken for the
        renew deadline, counted from the start of the last write taken."""
        e = self.election
        renewed = last_try = self._wrote_at
        self._failing = False
        while True:
            deadline = renewed + e.renew_seconds
            wait = next_try_in(self._monotonic(), last_try, deadline, e.retry_seconds, self._failing)
            if wait is None:
                return
            self._sleep(wait)
            last_try = self._monotonic()
            if last_try >= deadline:
                return
            if self.try_to_hold(try_seconds(last_try, deadline, e.lease_seconds)):
                renewed = self._wrote_at
                if self._failing:
                    log.info("renewed the Lease %s/%s again", e.namespace, e.name)
                self._failing = False

    def try_to_hold(self, seconds: float) -> bool:
        """One try to take or renew the Lease, within ``seconds`` from now, connection set-up
        included: whether it holds it (``_wrote_at``: when the write that took it began)."""
        e = self.election
        until = self._monotonic() + seconds
        try:
            spec = self.lock.read(seconds)
            now = self._monotonic()
            if spec is not None:
                self._seen = observed(self._seen, spec, now)
                if not expired(self._seen, e.identity, now, e.lease_seconds):
                    return False
            if until - now <= 0:
                raise TimeoutError("no time left to write the Lease")
            self.lock.write(claimed(spec or {}, e.identity, e.lease_seconds, self._wall()), until - now)
        except Exception as error:  # any failure is a failed try: retried until the deadline
            self._say_failure(error)
            return False
        self._wrote_at = now
        self._refusal = None
        self._seen = observed(self._seen, self.lock.lease.get("spec") or {} if self.lock.lease else {},
                              self._monotonic())
        return True

    def _say_failure(self, error: Exception) -> None:
        """A holder's failed renewal, once a failing streak; a candidate's failure to take the
        Lease (RBAC, an invalid name, the API server away), once per reason: never silence."""
        e = self.election
        if self.leading.is_set():
            if not self._failing:
                log.warning("could not renew the Lease %s/%s (%s); trying again every %d s until the renew "
                            "deadline", e.namespace, e.name, _said(error), e.retry_seconds)
                self._failing = True
        elif _said(error) != self._refusal:
            self._refusal = _said(error)
            log.warning("could not take the Lease %s/%s (%s); trying again every %d s", e.namespace, e.name,
                        self._refusal, e.retry_seconds)


def _said(error: BaseException) -> str:
    if isinstance(error, ApiException):
        return f"{error.status} {error.reason}"
    return str(error) or type(error).__name__

