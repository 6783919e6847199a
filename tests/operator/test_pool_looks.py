"""The looks at CronPools (``pool_looks.Pools``): which pool is looked at when, what a look carries out,
and what it hands back to the scheduling loop. The cluster is a stand-in that records the writes."""

from __future__ import annotations

from typing import Any

from cronctl.operator.kube.cache import Cache
from cronctl.operator.metrics import Metrics
from cronctl.operator.pool_looks import Pools
from cronctl.operator.resource import rfc3339, rfc3339_seconds
from cronctl.operator.shard import Shard

MINUTE = 28487530
SECOND = MINUTE * 60


def waiting(schedule: str) -> dict[str, Any]:
    return {"metadata": {"name": f"{schedule}-{MINUTE}", "namespace": "team-a",
                         "annotations": {"cronctl.dev/scheduled-time": rfc3339(MINUTE)},
                         "labels": {"cronctl.dev/schedule": schedule, "cronctl.dev/run": "1",
                                    "cronctl.dev/attempt": "1", "cronctl.dev/pool": "reports"}},
            "spec": {"suspend": True}, "status": {}}


class Cluster:
    def __init__(self, workers: int = 1, jobs: list[dict[str, Any]] | None = None, shard: str | None = None,
                 refuse: Exception | None = None) -> None:
        labels = {} if shard is None else {"cronctl.dev/shard": shard}
        self.pools = {("team-a", "reports"): {"metadata": {"name": "reports", "namespace": "team-a",
                                                           "generation": 1, "labels": labels},
                                              "spec": {"workers": workers}}}
        self.jobs = jobs or []
        self.cache = Cache()
        self.started: list[str] = []
        self.statuses: list[dict[str, Any]] = []
        self.refuse = refuse

    def pool(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.pools.get((namespace, name))

    def pool_jobs(self, namespace: str, pool: str) -> list[dict[str, Any]]:
        return self.jobs

    def start_pooled(self, namespace: str, starts: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        if self.refuse is not None:
            return [self.refuse for _ in starts]
        for name, patch in starts:
            self.started.append(name)
            next(job for job in self.jobs if job["metadata"]["name"] == name)["spec"].update(patch["spec"])
        return [True for _ in starts]

    def patch_pool_status(self, namespace: str, name: str, status: dict[str, Any]) -> None:
        self.statuses.append(status)

    def schedule(self, namespace: str, name: str) -> dict[str, Any] | None:
        return {"metadata": {"name": name, "namespace": namespace}, "spec": {"pool": "reports"}}


def test_a_marked_pool_is_due_once_and_a_look_starts_the_first_waiting_and_hands_back_its_schedule() -> None:
    cluster = Cluster(workers=1, jobs=[waiting("b"), waiting("a")])
    pools = Pools(cluster, metrics=Metrics())  # type: ignore[arg-type]
    pools.mark(("team-a", "reports"))
    assert pools.due(SECOND) == [("team-a", "reports")] and pools.due(SECOND) == []
    looked = pools.look_all([("team-a", "reports")], SECOND)
    assert looked.started == [("team-a", "a")] and looked.queued == [("team-a", "reports")]
    assert cluster.started == [f"a-{MINUTE}"]
    assert cluster.statuses[-1]["busy"] == 1 and cluster.statuses[-1]["queued"] == 1


def test_a_pool_whose_queue_is_empty_asks_for_no_poll() -> None:
    pools = Pools(Cluster(workers=2, jobs=[waiting("a"), waiting("b")]), metrics=Metrics())  # type: ignore[arg-type]
    looked = pools.look_all([("team-a", "reports")], SECOND)
    assert len(looked.started) == 2 and looked.queued == [] and looked.failed == []


def test_a_jittered_attempt_wakes_its_pool_at_its_second_by_the_schedules_clock() -> None:
    jittered = waiting("a")
    jittered["metadata"]["annotations"]["cronctl.dev/start-at"] = rfc3339_seconds(SECOND + 20)
    pools = Pools(Cluster(workers=1, jobs=[jittered]), metrics=Metrics())  # type: ignore[arg-type]
    assert pools.look_all([("team-a", "reports")], SECOND).started == []
    assert pools.next_second() == SECOND + 20
    assert pools.due(SECOND + 19) == [] and pools.due(SECOND + 20) == [("team-a", "reports")]


def test_the_schedules_reconciled_mark_the_pool_they_name() -> None:
    pools = Pools(Cluster(), metrics=Metrics())  # type: ignore[arg-type]
    pools.mark_for([("team-a", "a"), ("team-a", "b")])
    assert pools.due(SECOND) == [("team-a", "reports")]


def test_another_shards_pool_is_not_started_here() -> None:
    cluster = Cluster(workers=1, jobs=[waiting("a")], shard="blue")
    default = Pools(cluster, metrics=Metrics())  # type: ignore[arg-type]
    assert default.look_all([("team-a", "reports")], SECOND).started == []
    assert cluster.started == [] and cluster.statuses == []
    blue = Pools(cluster, Shard("blue"), metrics=Metrics())  # type: ignore[arg-type]
    assert blue.look_all([("team-a", "reports")], SECOND).started == [("team-a", "a")]


def test_a_refused_start_writes_no_status_and_asks_for_another_look() -> None:
    cluster = Cluster(workers=1, jobs=[waiting("a")], refuse=ConnectionResetError("reset"))
    pools = Pools(cluster, metrics=Metrics())  # type: ignore[arg-type]
    looked = pools.look_all([("team-a", "reports")], SECOND)
    assert looked.started == [] and looked.failed == [("team-a", "reports")]
    assert cluster.statuses == []  # it would count a start that did not happen
