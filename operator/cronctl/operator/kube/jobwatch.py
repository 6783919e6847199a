"""The shard's Jobs, listed and then watched (``watch``): the cache's Jobs, and the schedules to look at.

A launch makes two Job events (the staged create, the release) and a run two
more (started, ended). The operator reads a few fields of a Job
(``cache.slim_job``), and looks at a schedule again only when one of its
Jobs ended or was deleted, or its pool let one that waited run: the rest of
what it writes it knows already.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ...api import POOL_LABEL
from .cache import Cache, Key, owner_of
from .rest import Rest
from .watch import GONE, RETRY_SECONDS, Gone, Watch

__all__ = ["GONE", "RETRY_SECONDS", "Gone", "JobWatch", "has_ended", "watches"]


def has_ended(job: Mapping[str, Any]) -> bool:
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def _let_run_by_its_pool(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> bool:
    """A pooled Job that waited and now runs: its schedule's status still calls it queued (the
    pool may be another shard's, whose look does not reconcile this shard's schedules)."""
    if POOL_LABEL not in ((after.get("metadata") or {}).get("labels") or {}):
        return False
    return (before is not None and (before.get("spec") or {}).get("suspend") is True
            and (after.get("spec") or {}).get("suspend") is not True)


class JobWatch(Watch):
    """The Jobs of one namespace (None: all) that ``selector`` picks, kept in ``cache``;
    ``look_at`` is called with each schedule whose Job was deleted or ended."""

    what = "Jobs"

    def __init__(self, rest: Rest, cache: Cache, namespace: str | None, selector: str,
                 look_at: Callable[[Key], None]) -> None:
        super().__init__(namespace, selector)
        self.rest, self.cache, self.look_at = rest, cache, look_at

    def _list(self) -> dict[str, Any]:
        return (self.rest.list_job_for_all_namespaces(label_selector=self.selector) if self.namespace is None
                else self.rest.list_namespaced_job(self.namespace, label_selector=self.selector))

    def _watch(self, **kwargs: Any) -> Any:
        return (self.rest.watch_job_for_all_namespaces(**kwargs) if self.namespace is None
                else self.rest.watch_namespaced_job(self.namespace, **kwargs))

    def replace(self, items: list[dict[str, Any]]) -> None:
        """The cache's Jobs of this namespace become the list's; the schedules whose Jobs differ
        are looked at."""
        for key in sorted(self.cache.replace_all_jobs(self.namespace, items)):
            self.look_at(key)

    def changed(self, body: dict[str, Any]) -> None:
        owner = owner_of(body)
        if owner is not None:
            before = self.cache.job(*owner, body["metadata"]["name"])
            self.cache.put_job(body)
            if has_ended(body) or _let_run_by_its_pool(before, body):
                self.look_at(owner)

    def deleted(self, body: dict[str, Any]) -> None:
        owner = owner_of(body)
        if owner is not None:
            self.cache.drop_job(owner[0], owner[1], body["metadata"]["name"])
            self.look_at(owner)


def watches(rest: Rest, cache: Cache, namespaces: Iterable[str], selector: str,
            look_at: Callable[[Key], None]) -> list[JobWatch]:
    """One watch per namespace watched, or one of the whole cluster."""
    return [JobWatch(rest, cache, namespace, selector, look_at) for namespace in list(namespaces) or [None]]
