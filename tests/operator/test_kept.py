"""A plan as a reconcile keeps it (``kept``): it sends the same requests, its record reads the same,
and it keeps of its Jobs' manifests and its new status only what is sent and what is read later
(issue 47: every plan of a herd's second is held at once, made ahead and between the passes)."""

from __future__ import annotations

import copy
from typing import Any, Callable

import orjson
import pytest

from cronctl.operator.apply import status_changes
from cronctl.operator.effects import (RUN_FIELDS, CreateJob, PatchStatus, Plan, RecordReplaced,
                                      RecordReplacedChanges, StageJob, StatusChanges)
from cronctl.operator.kept import as_recorded, carried_out, kept
from cronctl.operator.kube.rest import Call
from cronctl.operator.logs import event_fields
from cronctl.operator.metrics import active_runs, counts, launch_delays

from .test_apply import Api, cluster_with
from .test_crash_consistency import seen, t
from .world import World


def a_launch() -> tuple[World, Plan]:
    world = seen("*/10 * * * *")
    return world, world.plan(t("2024-03-01T00:10"))


def a_staged_release() -> tuple[World, Plan]:
    """The release of a staged Job, the next minute's staged after it: the Launched Event finds its
    run in the new status, not in a created Job."""
    world = seen("*/10 * * * *")
    world.staging = True
    world.reconcile(t("2024-03-01T00:09"))
    result = world.plan(t("2024-03-01T00:10"))
    assert result.releases and not result.create
    return world, result


def a_replace() -> tuple[World, Plan]:
    """A Replace of a run still going: its record is written before the launch, and is not the new status."""
    world = seen("*/10 * * * *", concurrencyPolicy="Replace")
    world.reconcile(t("2024-03-01T00:10"))
    return world, world.plan(t("2024-03-01T00:20"))


PLANS: dict[str, Callable[[], tuple[World, Plan]]] = {
    "launch": a_launch, "staged-release": a_staged_release, "replace": a_replace}
CASES = pytest.mark.parametrize("made", PLANS.values(), ids=PLANS.keys())


def sent(world: World, result: Plan) -> list[tuple[str, str, Any]]:
    """The requests carrying out ``result`` against ``world``'s schedule sends: method, target, body as JSON."""
    api = Api()
    cluster, _ = cluster_with(api)
    calls: list[Call] = []
    send = api.send
    api.send = lambda batch: calls.extend(batch) or send(batch)  # type: ignore[method-assign]
    assert cluster.apply(copy.deepcopy(world.schedule), result) is True
    return [(call.method, call.target, orjson.loads(call.body) if isinstance(call.body, bytes) else call.body)
            for call in calls]


@CASES
def test_a_kept_plan_sends_the_very_requests_of_the_plan_it_was_made_from(made: Callable[[], tuple[World, Plan]]) -> None:
    world, result = made()
    assert sent(world, kept(result, world.schedule["status"])) == sent(world, result)


@CASES
def test_a_kept_plans_record_reads_what_the_plans_would(made: Callable[[], tuple[World, Plan]]) -> None:
    """The counters, the launch delays, the log's fields of each Event, the active gauge."""
    world, result = made()
    old = world.schedule["status"]
    kept_ = kept(result, old)
    now = t("2024-03-01T00:20") * 60 + 2.0
    assert counts(kept_) == counts(result)
    assert launch_delays(kept_, now) == launch_delays(result, now)
    assert event_fields("team-a", "sync", kept_, old) == event_fields("team-a", "sync", result, old)
    assert active_runs(kept_, old) == active_runs(result, old)
    assert kept_.wake_second == result.wake_second


@CASES
def test_a_kept_plan_splits_as_the_plan_it_was_made_from(made: Callable[[], tuple[World, Plan]]) -> None:
    """The loop's first pass carries out the same writes, a Replace's record among them."""
    world, result = made()
    urgent, rest = kept(result, world.schedule["status"]).split()
    assert (len(urgent.effects), len(rest.effects)) == tuple(len(part.effects) for part in result.split())


def test_a_replaces_record_is_kept_as_its_change_and_is_not_the_new_status() -> None:
    world, result = a_replace()
    old = world.schedule["status"]
    [record] = [effect for effect in result.effects if isinstance(effect, RecordReplaced)]
    [kept_record] = [effect for effect in kept(result, old).effects if isinstance(effect, RecordReplacedChanges)]
    assert kept_record.changes == status_changes(old, record.status)
    assert kept(result, old).runs == Plan(effects=[PatchStatus(result.status)]).runs  # type: ignore[arg-type]


def test_of_a_jobs_manifest_a_kept_plan_keeps_its_body_and_what_its_record_and_an_adoption_read() -> None:
    world, result = a_launch()
    [manifest] = result.create
    [create] = [effect for effect in kept(result, world.schedule["status"]).effects if isinstance(effect, CreateJob)]
    assert orjson.loads(create.body) == manifest  # type: ignore[arg-type]
    assert create.manifest == as_recorded(manifest) == {"metadata": {
        "name": manifest["metadata"]["name"], "namespace": "team-a",
        "labels": {"cronctl.dev/run": "1", "cronctl.dev/attempt": "1"},
        "annotations": {"cronctl.dev/scheduled-time": "2024-03-01T00:10:00Z", "cronctl.dev/reason": "scheduled"}}}


def test_the_shard_a_job_is_labelled_to_is_kept_an_adoption_relabels_to_it() -> None:
    manifest = {"metadata": {"name": "sync-1", "namespace": "team-a",
                             "labels": {"cronctl.dev/shard": "b", "app": "x"}}, "spec": {}}
    assert as_recorded(manifest)["metadata"]["labels"] == {"cronctl.dev/shard": "b"}


def test_a_staged_jobs_manifest_is_kept_as_its_body_too() -> None:
    world = seen("*/10 * * * *")
    world.staging = True
    result = world.plan(t("2024-03-01T00:09"))
    [manifest] = result.stage
    [stage] = [effect for effect in kept(result, world.schedule["status"]).effects if isinstance(effect, StageJob)]
    assert orjson.loads(stage.body) == manifest and "spec" not in stage.manifest  # type: ignore[arg-type]


def test_of_the_new_status_a_kept_plan_keeps_the_change_and_the_runs() -> None:
    world, result = a_launch()
    old, new = world.schedule["status"], result.status
    assert new is not None
    [patch] = [effect for effect in kept(result, old).effects if isinstance(effect, StatusChanges)]
    assert patch.changes == status_changes(old, new)
    assert patch.runs == {key: new[key] for key in RUN_FIELDS if key in new}
    assert not any(isinstance(effect, PatchStatus) for effect in kept(result, old).effects)


def test_a_plan_kept_already_is_kept_as_it_is() -> None:
    world, result = a_staged_release()
    once = kept(result, world.schedule["status"])
    assert kept(once, {}) == once


def test_once_carried_out_a_created_job_keeps_no_body_and_its_record_reads_the_same() -> None:
    world, result = a_launch()
    kept_ = kept(result, world.schedule["status"])
    urgent, _ = kept_.split()
    done = carried_out(kept_, len(urgent.effects))
    [create] = [effect for effect in done.effects if isinstance(effect, CreateJob)]
    assert create.body == b""
    assert launch_delays(done, 1e12) == launch_delays(result, 1e12)
