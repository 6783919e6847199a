"""Carrying out plans: each in its order, several at once a round at a time (one pipelined send
a round), and a plan stopped by its own failure only; and the facade's own writes, without the
applier.

The API's side is a recording stand-in for ``Rest.send`` here; ``tests/kube`` carries out plans
against the API server.
"""

from __future__ import annotations

from typing import Any

import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from cronctl.operator.apply import Cluster
from cronctl.operator.kube.cache import Cache
from cronctl.operator.kube.facade import KubeFacade
from cronctl.operator.manifests import EventSpec
from cronctl.operator.effects import CreateJob, DeleteJob, PatchStatus, Plan, PostEvent, ReleaseJob
from cronctl.operator.kube.rest import PIPELINE, Call

RELEASE = {"spec": {"suspend": False}}


def schedule(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "team-a", "uid": f"uid-{name}"}, "status": {"launched": 1}}


def job(name: str, **metadata: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "team-a", "labels": {"cronctl.dev/schedule": name.split("-")[0]},
                         **metadata}}


class Api:
    """Answers each round of writes (``send``): the Job or status written, or the refusal set for
    its target; records the rounds."""

    def __init__(self, refuse: dict[str, int] | None = None, fail_round: int | None = None) -> None:
        self.refuse, self.fail_round = refuse or {}, fail_round
        self.rounds: list[list[str]] = []
        self.reads: list[str] = []

    def send(self, calls: list[Call]) -> list[Any]:
        self.rounds.append([f"{call.method} {call.target.rsplit('/namespaces/team-a/', 1)[1]}" for call in calls])
        if self.fail_round == len(self.rounds):
            raise ConnectionResetError("the API server went away")
        return [self._answer(call) for call in calls]

    def _answer(self, call: Call) -> Any:
        target = call.target.rsplit("/namespaces/team-a/", 1)[1]
        if target in self.refuse:
            return ApiException(status=self.refuse[target], reason="refused")
        if target.startswith("cronschedules/"):
            return {"metadata": {"name": target.split("/")[1], "namespace": "team-a", "uid": "u"},
                    "status": call.body["status"]}
        if call.method == "POST":
            return orjson.loads(call.body) if isinstance(call.body, bytes) else call.body
        return job(target.split("/")[1])

    def read_namespaced_job(self, namespace: str, name: str) -> dict[str, Any]:
        self.reads.append(name)
        return job(name, ownerReferences=[{"controller": True, "uid": "uid-a"}])


def cluster_with(api: Api, kind: type[KubeFacade] = Cluster) -> tuple[Cluster, Cache]:
    cache = Cache()
    configuration = client.Configuration()
    configuration.host = "http://127.0.0.1:1"  # never reached: the requests go to ``api``
    cluster = kind(client.ApiClient(configuration), cache)
    cluster.rest = api  # type: ignore[assignment]
    cluster.events = Recorded()  # type: ignore[assignment]
    return cluster, cache


class Recorded:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def record(self, schedule: dict[str, Any], event: EventSpec) -> None:
        self.events.append((schedule["metadata"]["name"], event.reason))


def launch(name: str) -> Plan:
    return Plan(effects=[ReleaseJob(f"{name}-1", RELEASE, 0), PatchStatus({"launched": 2}),
                         PostEvent(EventSpec("Normal", "Launched", "launched run 2"))])


def test_each_round_sends_every_plans_next_write_together_in_the_plans_order() -> None:
    api = Api()
    cluster, cache = cluster_with(api)
    assert cluster.apply_all([(schedule("a"), launch("a")), (schedule("b"), launch("b"))]) == [True, True]
    assert api.rounds == [["PATCH jobs/a-1", "PATCH jobs/b-1"],
                          ["PATCH cronschedules/a/status", "PATCH cronschedules/b/status"]]
    assert cluster.events.events == [("a", "Launched"), ("b", "Launched")]  # type: ignore[attr-defined]
    assert [j["metadata"]["name"] for j in cache.jobs("team-a", "a")] == ["a-1"]  # the answers are cached
    assert cache.schedule("team-a", "b")["status"] == {"launched": 2}  # type: ignore[index]


def test_a_round_larger_than_a_pipeline_goes_out_in_parts_each_taken_in_before_the_next_is_sent() -> None:
    """A herd's round is hundreds of writes a thread: their answers, held parsed at once, were the
    operator's peak memory (issue 47)."""
    api = Api()
    cluster, cache = cluster_with(api)
    names = [f"s{index:03}" for index in range(2 * PIPELINE + 1)]
    cached_before_each_send: list[int] = []
    send = api.send
    api.send = lambda calls: (cached_before_each_send.append(  # type: ignore[method-assign]
        sum(len(cache.jobs("team-a", name)) for name in names)), send(calls))[1]
    plans = [(schedule(name), Plan(effects=[ReleaseJob(f"{name}-1", RELEASE, 0)])) for name in names]
    assert cluster.apply_all(plans) == [True] * len(names)
    assert [len(sent) for sent in api.rounds] == [PIPELINE, PIPELINE, 1]
    assert cached_before_each_send == [0, PIPELINE, 2 * PIPELINE]  # each part's answers taken in first


def test_a_failed_connection_in_one_part_of_a_round_is_the_error_of_that_parts_plans_only() -> None:
    api = Api(fail_round=2)
    cluster, _ = cluster_with(api)
    names = [f"s{index:03}" for index in range(PIPELINE + 1)]
    outcomes = cluster.apply_all([(schedule(name), Plan(effects=[ReleaseJob(f"{name}-1", RELEASE, 0)]))
                                  for name in names])
    assert outcomes[:PIPELINE] == [True] * PIPELINE and isinstance(outcomes[PIPELINE], ConnectionResetError)


def test_a_status_patch_sends_only_what_changed() -> None:
    api = Api()
    cluster, _ = cluster_with(api)
    sent: list[Call] = []
    send = api.send
    api.send = lambda calls: sent.extend(calls) or send(calls)  # type: ignore[method-assign]
    cluster.apply(schedule("a"), Plan(effects=[PatchStatus({"launched": 1, "active": ["a-1"]})]))
    assert sent[0].body == {"status": {"active": ["a-1"]}}


def test_a_staged_job_gone_stops_its_plan_only() -> None:
    api = Api(refuse={"jobs/b-1": 404})
    cluster, _ = cluster_with(api)
    assert cluster.apply_all([(schedule("a"), launch("a")), (schedule("b"), launch("b"))]) == [True, False]
    assert api.rounds[1] == ["PATCH cronschedules/a/status"]  # b's status would record a launch that did not happen
    assert cluster.events.events == [("a", "Launched")]  # type: ignore[attr-defined]


def test_a_refused_write_stops_its_plan_with_the_error_and_the_others_go_on() -> None:
    api = Api(refuse={"cronschedules/a/status": 500})
    cluster, _ = cluster_with(api)
    [a, b] = cluster.apply_all([(schedule("a"), launch("a")), (schedule("b"), launch("b"))])
    assert isinstance(a, ApiException) and a.status == 500
    assert b is True
    assert cluster.events.events == [("b", "Launched")]  # type: ignore[attr-defined]


def test_a_failed_connection_is_the_error_of_every_plan_with_a_write_in_that_round() -> None:
    api = Api(fail_round=2)
    cluster, _ = cluster_with(api)
    short = Plan(effects=[ReleaseJob("c-1", RELEASE, 0)])  # done in the first round
    outcomes = cluster.apply_all([(schedule("a"), launch("a")), (schedule("c"), short)])
    assert isinstance(outcomes[0], ConnectionResetError) and outcomes[1] is True


def test_a_missing_job_to_delete_is_done_and_the_plan_goes_on() -> None:
    api = Api(refuse={"jobs/a-0": 404})
    cluster, _ = cluster_with(api)
    result = Plan(effects=[DeleteJob("a-0", "dropped"), PostEvent(EventSpec("Normal", "Succeeded", "..."))])
    assert cluster.apply(schedule("a"), result) is True
    assert cluster.events.events == [("a", "Succeeded")]  # type: ignore[attr-defined]


def test_a_job_that_exists_already_and_is_ours_is_adopted() -> None:
    api = Api(refuse={"jobs": 409})
    cluster, cache = cluster_with(api)
    manifest = job("a-2")
    assert cluster.apply(schedule("a"), Plan(effects=[CreateJob(manifest)])) is True
    assert api.reads == ["a-2"]
    assert [j["metadata"]["name"] for j in cache.jobs("team-a", "a")] == ["a-2"]
    assert cluster.events.events == []  # type: ignore[attr-defined]


def test_apply_alone_raises_what_stopped_its_plan() -> None:
    import pytest

    cluster, _ = cluster_with(Api(refuse={"jobs/a-1": 403}))
    with pytest.raises(ApiException):
        cluster.apply(schedule("a"), launch("a"))


def test_an_error_carrying_out_one_plan_stops_that_plan_only() -> None:
    cluster, _ = cluster_with(Api())

    def record(schedule: dict[str, Any], event: EventSpec) -> None:
        if schedule["metadata"]["name"] == "a":
            raise RuntimeError("the queue broke")

    cluster.events.record = record  # type: ignore[attr-defined]
    [a, b] = cluster.apply_all([(schedule("a"), launch("a")), (schedule("b"), launch("b"))])
    assert isinstance(a, RuntimeError) and b is True


def test_the_facade_alone_starts_a_pools_jobs_in_one_send_and_keeps_each_answer() -> None:
    api = Api(refuse={"jobs/gone-1": 404, "jobs/locked-1": 403})
    facade, cache = cluster_with(api, KubeFacade)
    assert not hasattr(facade, "apply_all")  # the applier is apply.py's, not the facade's
    outcomes = facade.start_pooled("team-a", [(name, RELEASE) for name in ("a-1", "gone-1", "locked-1")])
    assert outcomes[:2] == [True, False]
    assert isinstance(outcomes[2], ApiException) and outcomes[2].status == 403
    assert api.rounds == [["PATCH jobs/a-1", "PATCH jobs/gone-1", "PATCH jobs/locked-1"]]
    assert [j["metadata"]["name"] for j in cache.jobs("team-a", "a")] == ["a-1"]
