"""The CronPools of the watched namespaces, listed and then watched (``watch``): the cache's
pools, and the pools (and their schedules) to look at when one comes, goes or changes.

Every shard watches every pool of its namespaces (a schedule of any shard may name any
pool, and says so in its Ready condition); only the pool's own shard starts its Jobs.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from .cache import Cache, Key
from .rest import Rest
from .watch import Watch


def _key(body: dict[str, Any]) -> Key:
    return body["metadata"].get("namespace") or "", body["metadata"].get("name") or ""


class PoolWatch(Watch):
    """The CronPools of one namespace (None: all); ``look_at`` is called with each pool that
    came, went or changed."""

    what = "CronPools"

    def __init__(self, rest: Rest, cache: Cache, namespace: str | None, look_at: Callable[[Key], None]) -> None:
        super().__init__(namespace, "")
        self.rest, self.cache, self.look_at = rest, cache, look_at

    def _list(self) -> dict[str, Any]:
        return (self.rest.list_cron_pool_for_all_namespaces() if self.namespace is None
                else self.rest.list_namespaced_cron_pool(self.namespace))

    def _watch(self, **kwargs: Any) -> Any:
        kwargs.pop("label_selector", None)
        return (self.rest.watch_cron_pool_for_all_namespaces(**kwargs) if self.namespace is None
                else self.rest.watch_namespaced_cron_pool(self.namespace, **kwargs))

    def replace(self, items: list[dict[str, Any]]) -> None:
        for key in sorted(self.cache.replace_all_pools(self.namespace, items)):
            self.look_at(key)

    def changed(self, body: dict[str, Any]) -> None:
        """A pool new or changed is looked at; one whose event is the operator's own status write
        (its spec as the cache has it) is not."""
        old = self.cache.pool(*_key(body))
        self.cache.put_pool(body)
        if old is None or old.get("spec") != body.get("spec"):
            self.look_at(_key(body))

    def deleted(self, body: dict[str, Any]) -> None:
        self.cache.drop_pool(*_key(body))
        self.look_at(_key(body))


def pool_watches(rest: Rest, cache: Cache, namespaces: Iterable[str],
                 look_at: Callable[[Key], None]) -> list[PoolWatch]:
    """One watch per namespace watched, or one of the whole cluster."""
    return [PoolWatch(rest, cache, namespace, look_at) for namespace in list(namespaces) or [None]]
