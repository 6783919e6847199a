"""The shard's Jobs, listed and then watched: the cache's Jobs, and the schedules to look at.

A launch makes two Job events (the staged create, the release) and a run two
more (started, ended). Through kopf, each event was wrapped, queued to a
worker task of its own object and handed to a thread: profiled over a herd
of 2,000 launches, a quarter of the operator's CPU in the release window.
The operator reads a few fields of a Job (``cache.slim_job``), so this
watch does the least the API's contract asks of a client
(https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes):

- LIST, and keep the list's ``resourceVersion``;
- WATCH from it, with bookmarks, so the version stays fresh while nothing
  changes; after a dropped connection or the server's timeout, watch again
  from the last version seen;
- on ``410 Gone`` (the version was compacted away), LIST again: the list
  replaces what the cache held, and the schedules whose Jobs changed in the
  gap are looked at.

One JSON parse per event, on a thread of its own; the schedules' watch stays
kopf's (``handlers``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Iterable, Mapping

import orjson
from kubernetes.client.exceptions import ApiException

from .cache import Cache, Key, owner_of
from .rest import Rest

log = logging.getLogger("cronctl.operator")

GONE = 410
WATCH_SECONDS = 300  # the server ends each watch after this; the next starts from the last version
RETRY_SECONDS = (0.5, 1, 2, 4, 8, 15)  # after an error, waits growing to the last, which repeats


def has_ended(job: Mapping[str, Any]) -> bool:
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


class Gone(Exception):
    """The watch's version is older than the server keeps: list again."""


class JobWatch:
    """The Jobs of one namespace (None: all) that ``selector`` picks, kept in ``cache``;
    ``look_at`` is called with each schedule whose Job was deleted or ended."""

    def __init__(self, rest: Rest, cache: Cache, namespace: str | None, selector: str,
                 look_at: Callable[[Key], None]) -> None:
        self.rest, self.cache, self.namespace, self.selector = rest, cache, namespace, selector
        self.look_at = look_at
        self.resource_version: str | None = None
        self._stopping = threading.Event()
        self._response: Any = None

    # -- the protocol -------------------------------------------------------------------

    def list(self) -> int:
        """LIST: the cache's Jobs of this namespace become the list's; the schedules whose Jobs
        differ are looked at. The number of Jobs listed."""
        listing = (self.rest.list_job_for_all_namespaces(label_selector=self.selector) if self.namespace is None
                   else self.rest.list_namespaced_job(self.namespace, label_selector=self.selector))
        changed = self.cache.replace_all_jobs(self.namespace, listing["items"])
        self.resource_version = listing["metadata"]["resourceVersion"]
        for key in sorted(changed):
            self.look_at(key)
        return len(listing["items"])

    def watch_once(self) -> None:
        """One WATCH from the last version, until the server ends it. Raises ``Gone``."""
        kwargs = dict(label_selector=self.selector, resource_version=self.resource_version,
                      timeout_seconds=WATCH_SECONDS)
        try:
            self._response = (self.rest.watch_job_for_all_namespaces(**kwargs) if self.namespace is None
                              else self.rest.watch_namespaced_job(self.namespace, **kwargs))
        except ApiException as error:
            if error.status == GONE:  # said by the answer's status, before any event
                raise Gone(error.reason or "") from None
            raise
        try:
            for line in self._response:
                if self._stopping.is_set():
                    return
                if line.strip():
                    self.handle(orjson.loads(line))
        finally:
            response, self._response = self._response, None
            response.release_conn()

    def handle(self, event: Mapping[str, Any]) -> None:
        kind, job = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if job.get("code") == GONE:
                raise Gone(job.get("message", ""))
            raise ApiException(status=job.get("code"), reason=f"{job.get('reason')}: {job.get('message')}")
        version = (job.get("metadata") or {}).get("resourceVersion")
        if version:
            self.resource_version = version
        owner = owner_of(job)
        if kind == "BOOKMARK" or owner is None:
            return
        if kind == "DELETED":
            self.cache.drop_job(owner[0], owner[1], job["metadata"]["name"])
            self.look_at(owner)
        else:  # ADDED, MODIFIED
            self.cache.put_job(job)
            if has_ended(job):
                self.look_at(owner)

    # -- the thread ---------------------------------------------------------------------

    def run(self) -> None:
        """Watch until ``stop``: again after each end, a list again after Gone, waits after errors."""
        failures = 0
        while not self._stopping.is_set():
            try:
                if self.resource_version is None:
                    self.list()
                self.watch_once()
                failures = 0
            except Gone as gone:
                log.info("the Jobs' watch%s is too old (%s): listing again", self._where, gone)
                self.resource_version = None
            except Exception as error:  # the API server away, a dropped connection: the cache waits
                if self._stopping.is_set():
                    return
                wait = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                failures += 1
                log.warning("the Jobs' watch%s failed (%s); again in %g s", self._where, error, wait)
                self._stopping.wait(wait)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name=f"cronctl-jobs{self._where}", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """End the watch at once: the blocked read is woken by shutting its socket."""
        self._stopping.set()
        response = self._response
        if response is not None:
            response.shutdown()

    @property
    def _where(self) -> str:
        return "" if self.namespace is None else f" of {self.namespace}"


def watches(rest: Rest, cache: Cache, namespaces: Iterable[str], selector: str,
            look_at: Callable[[Key], None]) -> list[JobWatch]:
    """One watch per namespace watched, or one of the whole cluster."""
    return [JobWatch(rest, cache, namespace, selector, look_at) for namespace in list(namespaces) or [None]]
