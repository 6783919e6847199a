"""Leader election: of several operator replicas, exactly one acts at a time.

Every replica watches (the watches only mark schedules for the loop); only
the holder of a ``coordination.k8s.io`` Lease reconciles. The election is the
kubernetes client's own (``kubernetes.leaderelection`` with its ``LeaseLock``):
a candidate takes the Lease once its holder has not renewed it for a lease
duration, and the holder that cannot renew within the renew deadline gives up.
The lock reads and writes the Lease through ``rest`` as plain JSON
(``RestLeaseLock``): through the client's models, a read and a write every
few seconds cost 3-7% of the operator's CPU while every minute launched.

Giving up ends the process (as client-go controllers do): a replica that lost
the Lease must not act on a view it can no longer trust, and its Deployment
restarts it as a candidate. A failover creates no duplicate Job because Job
names are a function of the schedule and the nominal time: the new leader
adopts what the old one created.

The identity is the Pod's name (``POD_NAME``), so a restarted container of the
same Pod takes its Lease back at once instead of waiting for it to expire.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

from kubernetes.client.exceptions import ApiException
from kubernetes.leaderelection.leaderelectionrecord import LeaderElectionRecord
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

from .rest import Rest

log = logging.getLogger("cronctl.operator")

DEFAULT_LEASE_NAME = "cronctl-operator"
DEFAULT_LEASE_SECONDS = 15
MIN_LEASE_SECONDS = 3


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
    namespace = namespace or os.environ.get("POD_NAMESPACE") or (watched[0] if watched else "default")
    identity = identity or os.environ.get("POD_NAME") or socket.gethostname()
    return Election(enabled, namespace, name, identity, lease_seconds)


class RestLeaseLock(LeaseLock):
    """The client's ``LeaseLock`` (its record's conversions to and from the Lease), its reads and
    writes through ``Rest``: the Lease as a dict, not the client's models."""

    def __init__(self, rest: Rest, name: str, namespace: str, identity: str) -> None:
        # Not LeaseLock.__init__: it makes a client of its own from the default configuration.
        self.rest, self.name, self.namespace, self.identity = rest, name, namespace, str(identity)
        self.lease_reference: dict[str, Any] | None = None
        self.wrote_last = False  # the Lease as this replica last wrote it is the newest it knows

    def get(self, name: str, namespace: str) -> tuple[bool, Any]:
        """(True, the record the Lease holds), or (False, the API's refusal).

        The holder renews from the Lease it wrote last, without reading it first (client-go's
        fast path): a renewal is one request, not two. Had another replica written the Lease
        since, the renewal's resourceVersion is refused (Conflict), and the next get reads."""
        if self.wrote_last and self.lease_reference is not None:
            return True, self.record_of(self.lease_reference.get("spec") or {})
        try:
            lease = self.rest.read_namespaced_lease(namespace, name)
        except ApiException as error:
            return False, error
        self.lease_reference = lease
        return True, self.record_of(lease.get("spec") or {})

    def create(self, name: str, namespace: str, election_record: LeaderElectionRecord) -> bool:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
                "spec": self.spec_of(election_record)}
        self.wrote_last = False
        try:
            self.lease_reference = self.rest.create_namespaced_lease(namespace, body)
        except ApiException as error:
            log.info("could not create the Lease %s/%s: %s", namespace, name, error.reason)
            return False
        self.wrote_last = True
        return True

    def update(self, name: str, namespace: str, updated_record: LeaderElectionRecord) -> bool:
        """Replace the Lease read last (its resourceVersion: a Conflict if another wrote it since)."""
        if self.lease_reference is None:
            return False
        lease = {**self.lease_reference,
                 "spec": {**(self.lease_reference.get("spec") or {}), **self.spec_of(updated_record)}}
        self.wrote_last = False  # whatever happens now, the next get reads unless this write is taken
        try:
            self.lease_reference = self.rest.replace_namespaced_lease(namespace, name, lease)
        except ApiException as error:
            log.info("could not renew the Lease %s/%s: %s", namespace, name, error.reason)
            return False
        self.wrote_last = True
        return True

    def spec_of(self, record: LeaderElectionRecord) -> dict[str, Any]:
        return {"holderIdentity": record.holder_identity, "leaseDurationSeconds": int(record.lease_duration),
                "acquireTime": _micro_time(self.time_str_to_iso(record.acquire_time)),
                "renewTime": _micro_time(self.time_str_to_iso(record.renew_time))}

    def record_of(self, spec: dict[str, Any]) -> LeaderElectionRecord:
        record = LeaderElectionRecord(None, None, None, None)
        if spec.get("holderIdentity"):
            record.holder_identity = spec["holderIdentity"]
        if spec.get("leaseDurationSeconds"):
            record.lease_duration = str(spec["leaseDurationSeconds"])
        if spec.get("acquireTime"):
            record.acquire_time = self.time_from_utc(datetime.fromisoformat(spec["acquireTime"]))
        if spec.get("renewTime"):
            record.renew_time = self.time_from_utc(datetime.fromisoformat(spec["renewTime"]))
        return record


def _micro_time(instant: datetime) -> str:
    """A Lease's MicroTime: RFC 3339 in UTC with microseconds."""
    return instant.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Leadership:
    """Waits for the Lease, then keeps it; ``lost`` is called if it cannot be kept."""

    def __init__(self, election: Election, rest: Rest, lost: Callable[[], None] | None = None) -> None:
        self.election, self.rest = election, rest
        self.leading = threading.Event()
        self._lost = lost or _exit_process

    def start(self) -> None:
        if not self.election.enabled:
            log.info("leader election is off: this replica acts alone")
            self.leading.set()
            return
        threading.Thread(target=self._campaign, name="cronctl-leader-election", daemon=True).start()

    def _campaign(self) -> None:
        from kubernetes.leaderelection import electionconfig, leaderelection

        logging.getLogger("leaderelection").setLevel(logging.WARNING)  # it logs every retry at INFO
        e = self.election
        log.info("waiting for the Lease %s/%s as %s", e.namespace, e.name, e.identity)
        config = electionconfig.Config(RestLeaseLock(self.rest, e.name, e.namespace, e.identity), e.lease_seconds,
                                       e.renew_seconds, e.retry_seconds, self._won, self._gave_up)
        try:
            leaderelection.LeaderElection(config).run()
        except Exception:
            log.exception("leader election failed")
            self._gave_up()

    def _won(self) -> None:
        log.info("holding the Lease %s/%s as %s: this replica acts", self.election.namespace,
                 self.election.name, self.election.identity)
        self.leading.set()

    def _gave_up(self) -> None:
        if self.leading.is_set():
            log.error("lost the Lease %s/%s: stopping so that no two replicas act", self.election.namespace,
                      self.election.name)
        self.leading.clear()
        self._lost()


def _exit_process() -> None:
    logging.shutdown()
    os._exit(1)
