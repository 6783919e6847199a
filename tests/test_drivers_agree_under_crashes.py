"""The operator counts every timeline as the harness does even when it crashes mid-reconcile.

The timelines are ``test_drivers_agree``'s. The operator's plan runs against
the in-memory cluster (``tests/operator/world.py``) every minute, but at
each minute it is killed after a prefix of its plan's effects (none of
them, some, all but the last, or all: a crash point per minute, drawn from
a seed, or by hypothesis), then restarted, and reconciles the world it
finds at the same minute. What a crash cuts off is lost (the Events after
the crash point among them); what it carried out stays.

What a user sees must still be what the harness says: the schedule's status
counts the runs launched, the times skipped (each once) and the overflows
(each once per outage); the Jobs deleted as replaced are the runs the
harness replaces (a Replaced Event is never said twice, though one a crash
cut off is lost, as any Event after the crash point is); and no run has two
Jobs (a launch carried out before a crash is adopted after it, never made
again).
"""

from __future__ import annotations

import random
from typing import Any, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronctl.operator.effects import REPLACED, DeleteJob
from cronctl.operator.resource import RUN_LABEL, STAGED_LABEL

from .operator.world import World
from .test_drivers_agree import TIMELINES, Counts, Timeline, cronschedule_spec, harness_counts, t

TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "main", "image": "busybox"}]}}}}


def is_run(job: dict[str, Any]) -> bool:
    labels = job["metadata"].get("labels") or {}
    return RUN_LABEL in labels and labels.get(STAGED_LABEL) != "true"


def crashing_operator_counts(timeline: Timeline, crash_points: Sequence[float], staging: bool) -> Counts:
    """The operator on the timeline, crashing each minute after the fraction ``crash_points[i]``
    of its plan's effects (1.0: no crash), restarted at once. Its counts, from the status."""
    world = World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                   "metadata": {"name": "job", "namespace": "team-a", "uid": "uid-1", "generation": 1},
                   "spec": {**cronschedule_spec(timeline), "jobTemplate": TEMPLATE}}, staging=staging)
    world.reconcile(t(timeline.start))
    started: dict[str, int] = {}  # each run's Job, and the minute it was seen running
    replaced: set[str] = set()
    for index, now in enumerate(range(t(timeline.start) + 1, t(timeline.end) + 1)):
        for name, since in started.items():
            if since + timeline.run_minutes == now and name in world.jobs and not world.jobs[name].get("status"):
                world.finish(name, "Complete", now)
        effects = world.plan(now).effects
        cut = round(crash_points[index % len(crash_points)] * len(effects))
        world.carry_out(effects[:cut])  # then the process dies, and starts again
        carried_out = effects[:cut] + world.reconcile(now).effects
        replaced |= {effect.name for effect in carried_out if isinstance(effect, DeleteJob) and effect.why == REPLACED}
        for name, job in world.jobs.items():
            if is_run(job) and not job["spec"].get("suspend") and name not in started:
                started[name] = now
    said = [event.message for event in world.events if event.reason == "Replaced"]
    assert len(said) == len(set(said)) <= len(replaced), "a Replace said twice"  # or lost with a crash
    status = world.schedule["status"]
    assert status["launched"] == len(started), "a run with two Jobs, or a launch without one"
    return Counts(status["launched"], status["skipped"], len(replaced), status["overflowed"])


def assert_as_the_harness_counts(timeline: Timeline, counts: Counts) -> None:
    if timeline.harness_expected is None:
        assert counts == harness_counts(timeline)
    if timeline.expected is not None:
        assert counts == timeline.expected


def seeded_crash_points(timeline: Timeline, staging: bool) -> list[float]:
    """A crash point a minute: often none, often the very start or all but the last, else anywhere."""
    rng = random.Random(f"{timeline.name}/{staging}")
    return [rng.choice([1.0, 1.0, 0.0, 0.999, rng.random()]) for _ in range(t(timeline.end) - t(timeline.start))]


@pytest.mark.parametrize("staging", [True, False], ids=["staged", "unstaged"])
@pytest.mark.parametrize("timeline", TIMELINES, ids=str)
def test_the_operator_crashing_mid_reconcile_counts_the_timeline_as_the_harness_does(timeline: Timeline,
                                                                                      staging: bool) -> None:
    assert_as_the_harness_counts(timeline, crashing_operator_counts(timeline, seeded_crash_points(timeline, staging),
                                                                    staging))


def test_the_crash_points_do_cut_plans_short() -> None:
    """The seeded crash points are crashes: the test would pass without any otherwise."""
    points = seeded_crash_points(TIMELINES[0], True)
    assert points.count(1.0) < len(points) / 2 and 0.0 in points and 0.999 in points


SHORT = [timeline for timeline in TIMELINES if t(timeline.end) - t(timeline.start) <= 120]


@settings(max_examples=20, deadline=None)
@given(timeline=st.sampled_from(SHORT), staging=st.booleans(),
       crash_points=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=13))
def test_any_crash_points_leave_the_counts_as_the_harness_says(timeline: Timeline, staging: bool,
                                                                crash_points: list[float]) -> None:
    assert_as_the_harness_counts(timeline, crashing_operator_counts(timeline, crash_points, staging))
