"""Leader election: of several operator replicas, exactly one acts at a time.

Every replica watches (kopf's watches only mark schedules for the loop); only
the holder of a ``coordination.k8s.io`` Lease reconciles. The election is the
kubernetes client's own (``kubernetes.leaderelection`` with a ``LeaseLock``):
a candidate takes the Lease once its holder has not renewed it for a lease
duration, and the holder that cannot renew within the renew deadline gives up.

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
from typing import Callable

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


class Leadership:
    """Waits for the Lease, then keeps it; ``lost`` is called if it cannot be kept."""

    def __init__(self, election: Election, lost: Callable[[], None] | None = None) -> None:
        self.election = election
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
        from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

        logging.getLogger("leaderelection").setLevel(logging.WARNING)  # it logs every retry at INFO
        e = self.election
        log.info("waiting for the Lease %s/%s as %s", e.namespace, e.name, e.identity)
        config = electionconfig.Config(LeaseLock(e.name, e.namespace, e.identity), e.lease_seconds,
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
