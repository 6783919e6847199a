"""The shard's CronSchedules, listed and then watched (``watch``): the cache's schedules, and
which of them the loop looks at.

Each event's schedule goes into the cache and is offered to the loop
(``Looks.look``), which says whether it is worth a reconcile; one deleted
or gone from a new list is forgotten by the loop.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol

from kubernetes.client.exceptions import ApiException

from ...api import GROUP, PLURAL, VERSION
from .cache import Cache, Key
from .rest import Rest
from .watch import Watch

NOT_FOUND = 404


class Looks(Protocol):
    """What the loop offers the watch (``loop.Scheduler``)."""

    def look(self, body: Mapping[str, Any]) -> None: ...

    def forget(self, key: Key) -> None: ...


def _key(body: Mapping[str, Any]) -> Key:
    return body["metadata"].get("namespace") or "", body["metadata"].get("name") or ""


class ScheduleWatch(Watch):
    """The CronSchedules of one namespace (None: all) that ``selector`` picks (the shard's)."""

    what = "CronSchedules"

    def __init__(self, rest: Rest, cache: Cache, namespace: str | None, selector: str, loop: Looks) -> None:
        super().__init__(namespace, selector)
        self.rest, self.cache, self.loop = rest, cache, loop

    def _list(self) -> dict[str, Any]:
        if self.namespace is None:
            return self.rest.list_custom_object_for_all_namespaces(GROUP, VERSION, PLURAL, label_selector=self.selector)
        return self.rest.list_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL,
                                                       label_selector=self.selector)

    def _watch(self, **kwargs: Any) -> Any:
        if self.namespace is None:
            return self.rest.watch_custom_object_for_all_namespaces(GROUP, VERSION, PLURAL, **kwargs)
        return self.rest.watch_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, **kwargs)

    def describe(self, error: Exception) -> str:
        said = super().describe(error)
        if isinstance(error, ApiException) and error.status == NOT_FOUND:
            return f"{said}: is the CronSchedule CRD installed? kubectl apply -f crds/cronschedule.yaml"
        return said

    def replace(self, items: list[dict[str, Any]]) -> None:
        """The cache's schedules of this namespace become the list's: those gone are dropped, the
        others looked at as their events would be."""
        for key in sorted(self.cache.replace_all_schedules(self.namespace, items)):
            self._drop(key)
        for body in items:
            self._look(body)

    def changed(self, body: dict[str, Any]) -> None:
        self.cache.put_schedule(body)
        self._look(body)

    def deleted(self, body: dict[str, Any]) -> None:
        key = _key(body)
        self.cache.drop_schedule(*key)
        self._drop(key)

    def _look(self, body: Mapping[str, Any]) -> None:
        self.loop.look(body)

    def _drop(self, key: Key) -> None:
        self.loop.forget(key)


def schedule_watches(rest: Rest, cache: Cache, namespaces: Iterable[str], selector: str,
                     loop: Looks) -> list[ScheduleWatch]:
    """One watch per namespace watched, or one of the whole cluster."""
    return [ScheduleWatch(rest, cache, namespace, selector, loop) for namespace in list(namespaces) or [None]]
