"""A resource's objects, listed and then watched, on a thread of their own.

The operator's two watches (``jobwatch``: the shard's Jobs; ``schedulewatch``:
its CronSchedules) do the least the API's contract asks of a client
(https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes):

- LIST, and keep the list's ``resourceVersion``;
- WATCH from it, with bookmarks, so the version stays fresh while nothing
  changes; after a dropped connection or the server's timeout, watch again
  from the last version seen;
- on ``410 Gone`` (the version was compacted away), LIST again: the list
  replaces what was known, and what changed in the gap is looked at.

One JSON parse per event (orjson), on the watch's thread. Through kopf, each
event was wrapped in its views, given three loggers, queued to a worker task
of its own object and matched against the handlers on the event loop:
profiled over launches, kopf's processing of the Jobs' events was a quarter
of the operator's CPU, and of the schedules' (each launch's status patch
comes back as one) a fifth.

A watch keeps how fresh it is (``listed_at``, ``heard_at``: the monotonic
clock, the process's own time) for the operator's probe (``health``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Mapping

import orjson
from kubernetes.client.exceptions import ApiException

from .retry import MAX_RETRY_AFTER_SECONDS, retry_after

log = logging.getLogger("cronctl.operator")

GONE = 410
WATCH_SECONDS = 300  # the server ends each watch after this; the next starts from the last version
RETRY_SECONDS = (0.5, 1, 2, 4, 8, 15)  # after an error, waits growing to the last, which repeats


class Gone(Exception):
    """The watch's version is older than the server keeps: list again."""


class Watch:
    """The objects of one namespace (None: all) that ``selector`` picks. A kind of object says
    how to list and watch it (``_list``, ``_watch``) and what a list and an event mean
    (``replace``, ``changed``, ``deleted``)."""

    what = "objects"  # in the logs: "the Jobs' watch of team-a failed..."

    def __init__(self, namespace: str | None, selector: str) -> None:
        self.namespace, self.selector = namespace, selector
        self.resource_version: str | None = None
        self.listed_at: float | None = None  # the last successful list (monotonic)
        self.heard_at: float | None = None  # the last event or bookmark, or watch begun (monotonic)
        self._stopping = threading.Event()
        self._response: Any = None

    # -- what a kind of object says ------------------------------------------------------

    def _list(self) -> dict[str, Any]:
        raise NotImplementedError

    def _watch(self, **kwargs: Any) -> Any:
        raise NotImplementedError

    def replace(self, items: list[dict[str, Any]]) -> None:
        """What a fresh LIST says, whatever was known before."""
        raise NotImplementedError

    def changed(self, body: dict[str, Any]) -> None:
        """An object ADDED or MODIFIED."""
        raise NotImplementedError

    def deleted(self, body: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- the protocol -------------------------------------------------------------------

    def list(self) -> int:
        """LIST: what it says replaces what was known. The number of objects listed."""
        listing = self._list()
        self.replace(listing["items"])
        self.resource_version = listing["metadata"]["resourceVersion"]
        self.listed_at = time.monotonic()
        return len(listing["items"])

    def watch_once(self) -> None:
        """One WATCH from the last version, until the server ends it. Raises ``Gone``."""
        try:
            self._response = self._watch(label_selector=self.selector, resource_version=self.resource_version,
                                         timeout_seconds=WATCH_SECONDS)
        except ApiException as error:
            if error.status == GONE:  # said by the answer's status, before any event
                raise Gone(error.reason or "") from None
            raise
        self.heard_at = time.monotonic()  # the API server began the watch
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
        kind, body = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if body.get("code") == GONE:
                raise Gone(body.get("message", ""))
            raise ApiException(status=body.get("code"), reason=f"{body.get('reason')}: {body.get('message')}")
        self.heard_at = time.monotonic()
        version = (body.get("metadata") or {}).get("resourceVersion")
        if version:
            self.resource_version = version
        if kind == "BOOKMARK":
            return
        if kind == "DELETED":
            self.deleted(body)
        else:  # ADDED, MODIFIED
            self.changed(body)

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
                log.info("the %s' watch%s is too old (%s): listing again", self.what, self._where, gone)
                self.resource_version = None
            except Exception as error:  # the API server away, a dropped connection: what is known waits
                if self._stopping.is_set():
                    return
                wait = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                asked = retry_after(error)  # a 429's Retry-After: never sooner than the API server asks
                wait = wait if asked is None else max(wait, min(asked, MAX_RETRY_AFTER_SECONDS))
                failures += 1
                log.warning("the %s' watch%s failed (%s); again in %g s", self.what, self._where,
                            self.describe(error), wait)
                self._stopping.wait(wait)

    def describe(self, error: Exception) -> str:
        """An error in one line: the API's status and reason, not its headers and body."""
        if isinstance(error, ApiException):
            return f"{error.status} {error.reason}".strip()
        return str(error) or type(error).__name__

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name=f"cronctl-{self.what.lower()}{self._where}", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """End the watch at once: the blocked read is woken by shutting its socket."""
        self._stopping.set()
        response = self._response
        if response is not None:
            response.shutdown()

    @property
    def name(self) -> str:
        """What it watches, where: "Jobs", "CronSchedules of team-a"."""
        return f"{self.what}{self._where}"

    @property
    def _where(self) -> str:
        return "" if self.namespace is None else f" of {self.namespace}"
