"""Shards: which operator owns a CronSchedule, what it watches, and the handoff when a schedule moves."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cronctl.operator.effects import LabelJob

from cronctl.operator.plan import plan
from cronctl.operator.shard import Shard, parse_shard_name, shard_of, shard_of_lease

from .scenarios import CREATED, after, schedule, t
from .world import World


def labelled(body: dict[str, Any], shard: str | None) -> dict[str, Any]:
    body = copy.deepcopy(body)
    labels = body["metadata"].setdefault("labels", {})
    if shard is None:
        labels.pop("cronctl.dev/shard", None)
    else:
        labels["cronctl.dev/shard"] = shard
    return body


# -- ownership and selectors --------------------------------------------------------------


@pytest.mark.parametrize("label, owner", [(None, Shard()), ("a", Shard("a")), ("b", Shard("b"))])
def test_a_schedule_belongs_to_the_shard_its_label_names_and_to_no_other(label: str | None, owner: Shard) -> None:
    body = labelled(schedule(), label)
    assert [s for s in (Shard(), Shard("a"), Shard("b")) if s.owns(body)] == [owner]


def test_an_empty_shard_label_belongs_to_no_shard() -> None:
    body = labelled(schedule(), "")
    assert not any(s.owns(body) for s in (Shard(), Shard("a")))


def test_the_api_server_filters_each_shards_watches_by_label() -> None:
    assert Shard().schedule_selector == "!cronctl.dev/shard"
    assert Shard("a").schedule_selector == "cronctl.dev/shard=a"
    assert Shard().job_selector == "cronctl.dev/schedule,!cronctl.dev/shard"
    assert Shard("a").job_selector == "cronctl.dev/schedule,cronctl.dev/shard=a"


def test_each_shard_has_a_lease_of_its_own_and_the_default_keeps_the_old_name() -> None:
    assert Shard().lease_name("cronctl-operator") == "cronctl-operator"
    assert Shard("a").lease_name("cronctl-operator") == "cronctl-operator-a"


@pytest.mark.parametrize("shard", [Shard(), Shard("a"), Shard("eu-west")])
def test_a_leases_name_reads_back_as_its_shard(shard: Shard) -> None:
    assert shard_of_lease(shard.lease_name("cronctl-operator"), "cronctl-operator") == shard


@pytest.mark.parametrize("lease", ["other", "cronctl-operator-", "cronctl-operatorx"])
def test_a_lease_of_someone_else_is_no_shards(lease: str) -> None:
    assert shard_of_lease(lease, "cronctl-operator") is None


@pytest.mark.parametrize("text", ["", "-a", "a-", "a b", "x" * 64, "a/b"])
def test_a_shard_name_must_be_a_label_value(text: str) -> None:
    with pytest.raises(ValueError, match="--shard"):
        parse_shard_name(text)


@pytest.mark.parametrize("text", ["a", "shard-0", "eu.west_1", "x" * 63])
def test_shard_names_that_are_label_values_are_taken(text: str) -> None:
    assert parse_shard_name(text) == text


def test_a_schedule_moved_in_when_its_status_was_written_by_another_shard() -> None:
    body = labelled(schedule(), "b")
    assert not Shard("b").moved_in(body)  # never reconciled: it has no Jobs anywhere
    written_by_a = after(body, {**plan(labelled(schedule(), "a"), [], CREATED).status})
    assert written_by_a["status"]["shard"] == "a"
    assert Shard("b").moved_in(written_by_a)
    assert not Shard("b").moved_in(after(body, plan(body, [], CREATED).status))
    unsharded_before = after(body, {"launched": 3})  # a status from before shards: no status.shard
    assert Shard("b").moved_in(unsharded_before) and not Shard().moved_in(labelled(unsharded_before, None))


# -- the Jobs a shard makes, and the handoff ---------------------------------------------------


def test_a_job_carries_its_schedules_shard_label() -> None:
    world = World(labelled(schedule(), "a"))
    world.reconcile(CREATED)
    world.reconcile(t("2024-03-01T00:10"))
    assert [shard_of(job) for job in world.jobs.values()] == ["a"]
    unsharded = World(schedule())
    unsharded.reconcile(CREATED)
    unsharded.reconcile(t("2024-03-01T00:10"))
    assert [shard_of(job) for job in unsharded.jobs.values()] == [None]


def test_a_moved_schedules_jobs_are_relabelled_to_its_new_shard_and_the_status_says_so() -> None:
    world = World(labelled(schedule(), "a"))
    world.reconcile(CREATED)
    world.reconcile(t("2024-03-01T00:10"))
    world.schedule = labelled(world.schedule, "b")  # kubectl label cronschedule sync cronctl.dev/shard=b
    result = world.reconcile(t("2024-03-01T00:11"))
    assert [e for e in result.effects if isinstance(e, LabelJob)] == [LabelJob(world.job_named(t("2024-03-01T00:10")), "b")]
    assert [shard_of(job) for job in world.jobs.values()] == ["b"]
    assert world.schedule["status"]["shard"] == "b"
    assert not any(isinstance(e, LabelJob) for e in world.reconcile(t("2024-03-01T00:12")).effects)


def test_a_schedule_moved_to_the_default_shard_loses_the_label_on_its_jobs() -> None:
    world = World(labelled(schedule(), "a"))
    world.reconcile(CREATED)
    world.reconcile(t("2024-03-01T00:10"))
    world.schedule = labelled(world.schedule, None)
    world.reconcile(t("2024-03-01T00:11"))
    assert [shard_of(job) for job in world.jobs.values()] == [None]
    assert "shard" not in world.schedule["status"]


def test_the_handoff_neither_doubles_nor_loses_a_launch() -> None:
    """Shard a launched 00:10; the schedule moves at 00:15 and shard b first looks at 00:21:
    it relabels 00:10's Job, keeps it as the run it is, and launches 00:20 once."""
    world = World(labelled(schedule(), "a"))
    world.reconcile(CREATED)
    world.reconcile(t("2024-03-01T00:10"))
    world.schedule = labelled(world.schedule, "b")
    world.reconcile(t("2024-03-01T00:21"))
    assert sorted(world.jobs) == sorted([world.job_named(t("2024-03-01T00:10")), world.job_named(t("2024-03-01T00:20"))])
    assert world.schedule["status"]["launched"] == 2
    assert all(shard_of(job) == "b" for job in world.jobs.values())


def test_a_job_of_another_schedule_is_never_relabelled() -> None:
    world = World(labelled(schedule(), "a"))
    world.reconcile(CREATED)
    stranger = {"metadata": {"name": "x-1", "namespace": "team-a", "labels": {"cronctl.dev/schedule": "sync"},
                             "ownerReferences": [{"controller": True, "uid": "someone-else"}]},
                "spec": {}, "status": {}}
    result = plan(world.schedule, [stranger], t("2024-03-01T00:01"))
    assert not any(isinstance(e, LabelJob) for e in result.effects)
