"""The watch cache: reconciles read it, writes go through it, it never moves backwards."""

from __future__ import annotations

from typing import Any

from cronctl.operator.kube.cache import LAST_APPLIED, Cache, Kept, slim_job
from cronctl.operator.loop import reconcile
from cronctl.operator.manifests import JobLaunch, job_manifest
from cronctl.operator.plan import plan

from ..test_plan import CREATED, TEMPLATE, after, schedule, t
from ..world import one_by_one


def job(name: str, version: str, schedule: str = "sync", **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "team-a", "resourceVersion": version,
                         "labels": {"cronctl.dev/schedule": schedule}, "managedFields": [{"big": "x" * 100}]},
            "spec": {"template": {"spec": {"containers": []}}}, "status": status}


def test_an_older_version_never_replaces_a_newer_one() -> None:
    cache = Cache()
    cache.put_job(job("sync-1", "20", active=1))
    cache.put_job(job("sync-1", "19"))  # a late watch event of the state before our write
    assert cache.jobs("team-a", "sync")[0]["metadata"]["resourceVersion"] == "20"
    cache.put_job(job("sync-1", "21", conditions=[{"type": "Complete", "status": "True"}]))
    assert cache.jobs("team-a", "sync")[0]["status"]["conditions"][0]["type"] == "Complete"


def test_jobs_are_kept_by_their_schedule_and_slim() -> None:
    cache = Cache()
    cache.put_jobs([job("sync-1", "1"), job("other-1", "2", schedule="other")])
    kept = cache.jobs("team-a", "sync")
    assert [j["metadata"]["name"] for j in kept] == ["sync-1"]
    assert "managedFields" not in kept[0]["metadata"] and "template" not in kept[0]["spec"]
    cache.drop_job("team-a", "sync", "sync-1")
    assert cache.jobs("team-a", "sync") == []


def test_schedules_are_kept_without_their_managed_fields_whether_watched_or_listed() -> None:
    cache = Cache()
    body = {"metadata": {"name": "sync", "namespace": "team-a", "resourceVersion": "5", "uid": "u",
                         "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"schedule": "* * * * *"}}
    cache.put_schedule(body)
    assert cache.schedule("team-a", "sync") == {
        "metadata": {"name": "sync", "namespace": "team-a", "resourceVersion": "5", "uid": "u"},
        "spec": {"schedule": "* * * * *"}}
    assert "managedFields" in body["metadata"]  # the watch's own object is left as it came
    cache.replace_all_schedules("team-a", [{**body, "metadata": {**body["metadata"], "resourceVersion": "6"}}])
    assert "managedFields" not in cache.schedule("team-a", "sync")["metadata"]


def test_a_slim_job_keeps_what_the_operator_reads() -> None:
    manifest = job_manifest(schedule(), TEMPLATE, JobLaunch(1, t("2024-03-01T00:10"), t("2024-03-01T00:10"),
                                                       start_at=t("2024-03-01T00:10") * 60 + 7))
    manifest["metadata"]["uid"] = "job-uid"
    body = after(schedule(), plan(schedule(), [], CREATED).status)
    assert plan(body, [slim_job(manifest)], t("2024-03-01T00:11")) == plan(body, [manifest], t("2024-03-01T00:11"))


class FakeCluster:
    """A cache that lags: it has not seen the Job another replica created."""

    def __init__(self, body: dict[str, Any], live: list[dict[str, Any]]) -> None:
        self.body, self.live, self.applied = body, live, []

    def schedule(self, namespace: str, name: str) -> dict[str, Any]:
        return self.body

    def plan_jobs(self, schedule: Any) -> list[dict[str, Any]]:
        return []

    def live_jobs(self, namespace: str, name: str) -> list[dict[str, Any]]:
        return self.live

    def apply(self, schedule: Any, result: Any) -> None:
        self.applied.append(result)

    def apply_all(self, work: list[tuple[Any, Any]]) -> list[Any]:
        return one_by_one(self.apply, work)


def test_a_run_missing_from_the_cache_is_checked_against_the_api_before_it_counts_as_gone() -> None:
    first = plan(after(schedule(), plan(schedule(), [], CREATED).status), [], t("2024-03-01T00:10"))
    body, created = after(schedule(), first.status), first.create[0]
    cluster = FakeCluster(body, [created])
    reconcile(cluster, ("team-a", "sync"), t("2024-03-01T00:12") * 60)  # type: ignore[arg-type]
    applied = cluster.applied[0]
    assert "JobGone" not in [event.reason for event in applied.events]
    assert applied.lost == [] and applied.create == []


def test_a_schedule_is_kept_as_its_compact_json_and_each_read_is_a_fresh_object() -> None:
    """Issue 47: parsed, a fleet's schedule is five times its JSON; each read parses it again."""
    cache = Cache()
    body = {"metadata": {"name": "sync", "namespace": "team-a", "resourceVersion": "5", "uid": "u",
                         "annotations": {LAST_APPLIED: '{"spec": "all of it"}', "cronctl.dev/trigger": "1"}},
            "spec": {"schedule": "* * * * *", "pool": "nightly"}}
    cache.put_schedule(body)
    kept = cache._schedules[("team-a", "sync")]
    assert isinstance(kept, Kept) and isinstance(kept.json, bytes)
    assert (kept.version, kept.pool) == ("5", "nightly")
    read = cache.schedule("team-a", "sync")
    assert read is not cache.schedule("team-a", "sync")
    read["spec"]["suspend"] = True  # a caller's change is its own
    assert cache.schedule("team-a", "sync") == {  # kubectl apply's copy of the spec is never read
        "metadata": {"name": "sync", "namespace": "team-a", "resourceVersion": "5", "uid": "u",
                     "annotations": {"cronctl.dev/trigger": "1"}},
        "spec": {"schedule": "* * * * *", "pool": "nightly"}}
    assert cache.schedules_in_pool("team-a", "nightly") == [("team-a", "sync")]


def test_a_kept_job_has_only_its_ending_conditions() -> None:
    at = "2024-03-01T00:11:00Z"
    met = {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime": at, "lastTransitionTime": at,
           "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}
    complete = {**met, "type": "Complete"}
    cache = Cache()
    cache.put_job(job("sync-1", "3", conditions=[met, complete]))
    [kept] = cache.jobs("team-a", "sync")
    assert kept["status"]["conditions"] == [{key: value for key, value in complete.items() if key != "lastProbeTime"}]
    assert cache._jobs[("team-a", "sync")]["sync-1"].version == "3"


def test_a_kept_object_takes_its_own_size_not_the_buffer_it_was_written_in() -> None:
    """orjson's answer keeps the buffer it grew to: 16 KiB held for 2 KiB of JSON."""
    import tracemalloc

    body = {"metadata": {"name": "sync", "namespace": "team-a", "resourceVersion": "5"},
            "spec": {"schedule": "* * * * *", "note": "x" * 1700}}
    tracemalloc.start()
    try:
        kept = Kept.of(body)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 2 * len(kept.json), (held, len(kept.json))
