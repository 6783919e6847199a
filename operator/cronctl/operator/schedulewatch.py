"""The shard's CronSchedules, listed and then watched (``watch``): the cache's schedules, and
which of them the loop looks at.

Most events of a schedule are the operator's own status patches, which the
cache has already (the patch's answer): they change nothing to look at. A
schedule is looked at when it is new to the loop, when its spec changed
(its generation is past the status's ``observedGeneration``), or when it
asks for a manual run or a backfill (annotations); one deleted is dropped
with its gauges.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol

from kubernetes.client.exceptions import ApiException

from ..manifest import GROUP, PLURAL, VERSION
from .cache import Cache, Key
from .metrics import METRICS
from .plan import pending_backfill, pending_trigger
from .rest import Rest
from .watch import Watch

NOT_FOUND = 404


class Looks(Protocol):
    """What the loop offers the watch (``loop.Scheduler``)."""

    known: set[Key]

    def touch(self, key: Key) -> None: ...

    def forget(self, key: Key) -> None: ...


def needs_a_look(body: Mapping[str, Any], known: bool) -> bool:
    """Whether a schedule seen by the watch is worth a reconcile now (else its wake-up time stands)."""
    return (not known or _spec_changed(body) or pending_trigger(body) is not None
            or pending_backfill(body) is not None)


def _spec_changed(body: Mapping[str, Any]) -> bool:
    return body["metadata"].get("generation") != (body.get("status") or {}).get("observedGeneration")


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
        key = _key(body)
        if needs_a_look(body, key in self.loop.known):
            self.loop.touch(key)

    def _drop(self, key: Key) -> None:
        METRICS.forget(*key)  # its gauges go with it (it is reconciled no more)
        self.loop.forget(key)


def schedule_watches(rest: Rest, cache: Cache, namespaces: Iterable[str], selector: str,
                     loop: Looks) -> list[ScheduleWatch]:
    """One watch per namespace watched, or one of the whole cluster."""
    return [ScheduleWatch(rest, cache, namespace, selector, loop) for namespace in list(namespaces) or [None]]
