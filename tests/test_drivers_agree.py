"""Every driver of the one core counts the same timeline the same way.

One table of timelines (a schedule, a policy, options, how long each run
takes, a range of minutes) is driven through the run() harness, the
operator's plan (against an in-memory cluster, tests/operator/world.py), the
single-node runner (real processes, an injected clock) and ``cronctl fleet
preview``, and each reports what a user sees of it (the harness's events, the
operator's Events and status counters, the runner's history and output, the
preview's counts): runs launched, schedule times skipped (each once, however
many ticks skipped it), runs replaced, overflows (each once per entry into it).
Pooled schedules (a CronPool's workers shared across them) are compared by when
each run started, on the operator and the runner (the last section).

The drivers tick every minute; a run ends at its launch + ``run_minutes``
(before that minute's tick), unless its timeout ends it first. The harness
keeps the seed's overflow rule (nothing launched) where the others follow
CronJob's (the most recent missed time launched), so overflow rows compare the
harness with the seed's counts instead.
"""

from __future__ import annotations

import ast
import copy
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple

import pytest

from cronctl import run
from cronctl.core.controller import Controller
from cronctl.core.tick import Launch, Replace, Skip
from cronctl.core.times import format_time, parse_time
from cronctl.fleet import merge_defaults, preview, read_values
from cronctl.operator.effects import CreateJob, PostEvent
from cronctl.operator.pool_decisions import pool_plan
from cronctl.operator.resource import BACKFILL_ANNOTATION, TRIGGER_ANNOTATION
from cronctl.runner.asking import ask_backfill, resume, suspend, trigger
from cronctl.runner.engine import Runner
from cronctl.runner.expansion import expand
from cronctl.runner.values import RunKey, nominal_iso, run_folder_name

from .operator.world import World, merge_patch


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


class Counts(NamedTuple):
    launched: int
    skipped: int
    replaced: int
    overflowed: int


POLICY_NAMES = {"allow": "Allow", "forbid": "Forbid", "replace": "Replace"}


@dataclass(frozen=True)
class Timeline:
    name: str
    schedule: str
    policy: str  # the harness's name: allow, forbid, replace
    run_minutes: int
    start: str = "2024-03-01T00:00"
    end: str = "2024-03-01T02:00"
    timeout: int | None = None  # minutes
    deadline: int | None = None  # minutes
    expected: Counts | None = None  # what they all report (None: only that they agree)
    # The seed's rule for the harness where it differs (an overflow launches nothing).
    harness_expected: Counts | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    triggers: tuple[str, ...] = ()  # minutes at whose turn a manual run is asked for
    backfills: tuple[tuple[str, str, str], ...] = ()  # (the turn it is asked at, from, to)
    suspended: tuple[str, str] | None = None  # suspended at the first turn, resumed at the second
    failing: bool = False  # every run fails

    def __str__(self) -> str:
        return self.name


TIMELINES = [
    # 00:10 runs to 00:35, when the skipped 00:30 is launched (to 01:00), then 01:00 (to 01:25),
    # 01:20 at 01:25 (to 01:50), 01:50 (to 02:15): 00:20 00:30 00:40 00:50 01:10 01:20 01:30 01:40
    # and 02:00 skipped.
    Timeline("every 10 minutes, forbid, runs of 25: a skipped time runs when the run ends",
             "*/10 * * * *", "forbid", 25, expected=Counts(5, 9, 0, 0)),
    Timeline("every 10 minutes, replace, runs of 25: each run replaced by the next",
             "*/10 * * * *", "replace", 25, expected=Counts(12, 0, 11, 0)),
    Timeline("every 10 minutes, allow, runs of 25: overlapping runs",
             "*/10 * * * *", "allow", 25, expected=Counts(12, 0, 0, 0)),
    Timeline("every minute, forbid, runs of 3 (the issue's overlap): each skipped time once",
             "* * * * *", "forbid", 3, end="2024-03-01T00:20", expected=Counts(7, 13, 0, 0)),
    Timeline("@every 45m, forbid, runs of 100",
             "@every 45m", "forbid", 100, end="2024-03-01T06:00"),
    Timeline("forbid with a 4-minute deadline: a skipped time past it is never launched",
             "*/10 * * * *", "forbid", 25, deadline=4),
    Timeline("forbid, a 15-minute timeout ends runs of 25",
             "*/10 * * * *", "forbid", 25, timeout=15),
    # 00:01 runs to 02:31; 00:02 ... 01:41 skipped (100 missed times); from 01:42 more than 100:
    # an overflow, counted once. CronJob's rule goes on skipping the latest time (01:42 ... 02:30)
    # and launches 02:31 when the run ends (to 05:01; 02:32 ... 03:00 skipped); the seed's rule
    # launches nothing more.
    Timeline("every minute, forbid, one run of 150 minutes: an overflow, once",
             "* * * * *", "forbid", 150, end="2024-03-01T03:00",
             expected=Counts(2, 178, 0, 1), harness_expected=Counts(1, 100, 0, 1)),
]


# What the harness's contract has no words for (spec fields of the operator and the runner only):
# those two drivers agree with each other and with the counts worked out by hand.
BEYOND_THE_HARNESS = [
    # 00:30 00:40 00:50 01:00 01:10: 00:10 and 00:20 are before the start, 01:20 on after the end.
    Timeline("every 10 minutes in a window from 00:25 to 01:15: only the times inside it",
             "*/10 * * * *", "allow", 5, extra={"startTime": "2024-03-01T00:25:00Z",
                                                "endTime": "2024-03-01T01:15:00Z"},
             expected=Counts(5, 0, 0, 0)),
    Timeline("every 10 minutes, maxRuns 3: three runs, then none",
             "*/10 * * * *", "allow", 5, extra={"maxRuns": 3}, expected=Counts(3, 0, 0, 0)),
    # 00:10 runs to 00:35 (00:20 and 00:30 skipped), 00:30 launched at 00:35 to 01:00 (00:40 and
    # 00:50 skipped), 01:00 is the third and last: nothing is skipped once the limit is reached.
    Timeline("every 10 minutes, forbid, runs of 25, maxRuns 3: skips count no run, the limit ends the skips",
             "*/10 * * * *", "forbid", 25, extra={"maxRuns": 3}, expected=Counts(3, 4, 0, 0)),
    Timeline("every 10 minutes, replace, runs of 15, maxRuns 3: each replaced by the next, then none",
             "*/10 * * * *", "replace", 15, extra={"maxRuns": 3}, expected=Counts(3, 0, 2, 0)),
    Timeline("every 10 minutes, replace, runs of 15, in a window from 00:25 to 01:15",
             "*/10 * * * *", "replace", 15, extra={"startTime": "2024-03-01T00:25:00Z",
                                                   "endTime": "2024-03-01T01:15:00Z"},
             expected=Counts(5, 0, 4, 0)),
    Timeline("a window's end in the middle of a run of Forbid: the time it skipped is the last",
             "*/10 * * * *", "forbid", 25, extra={"endTime": "2024-03-01T00:30:00Z"},
             expected=Counts(2, 2, 0, 0)),
]


# -- the harness ----------------------------------------------------------------------------------

def harness_counts(timeline: Timeline) -> Counts:
    """run() on the whole timeline, one operation list; runs are finished as they end."""
    options: dict[str, Any] = {}
    if timeline.timeout is not None:
        options["timeout"] = timeline.timeout
    if timeline.deadline is not None:
        options["starting_deadline"] = timeline.deadline
    operations: list[list[Any]] = [["create_job", timeline.start, "job", timeline.schedule, timeline.policy,
                                    options or None]]
    ends: dict[int, list[str]] = {}
    launched = replaced = overflowed = 0
    skipped: set[str] = set()
    overflowing = False
    for now in range(t(timeline.start) + 1, t(timeline.end) + 1):
        operations += [["finish", format_time(now), run_id, "succeeded"] for run_id in ends.pop(now, [])]
        operations.append(["tick", format_time(now)])
        events = run(operations)[-1]
        assert isinstance(events, list), events
        for event in events:
            verb, subject, *rest = event.split()
            if verb == "launch":
                launched += 1
                ends.setdefault(now + timeline.run_minutes, []).append(subject)
            elif verb == "skip":
                skipped.add(rest[1])
            elif verb == "replace":
                replaced += 1
        overflows = any(event.startswith("overflow") for event in events)
        overflowed += overflows and not overflowing
        overflowing = overflows
    return Counts(launched, len(skipped), replaced, overflowed)


# -- the fleet preview ------------------------------------------------------------------------------

def fleet_counts(timeline: Timeline) -> Counts:
    values: dict[str, Any] = {"prefix": "job", "count": 1, "schedules": [timeline.schedule],
                              "concurrencyPolicy": POLICY_NAMES[timeline.policy]}
    if timeline.timeout is not None:
        values["timeoutMinutes"] = timeline.timeout
    if timeline.deadline is not None:
        values["startingDeadlineSeconds"] = timeline.deadline * 60
    fleet = read_values(merge_defaults(values))
    counts = preview(fleet, t(timeline.start), t(timeline.end), timeline.run_minutes).counts[fleet.policy]
    return Counts(counts.launches, counts.skips, counts.replaces, counts.overflows)


# -- the operator --------------------------------------------------------------------------------------

def cronschedule_spec(timeline: Timeline) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedule": timeline.schedule, "concurrencyPolicy": POLICY_NAMES[timeline.policy],
                            **timeline.extra}
    if timeline.timeout is not None:
        spec["timeoutMinutes"] = timeline.timeout
    if timeline.deadline is not None:
        spec["startingDeadlineSeconds"] = timeline.deadline * 60
    return spec


History = list[tuple[int, str, str]]  # the finished runs each driver keeps: (run number, outcome, nominal time)


def operator_counts(timeline: Timeline, history: History | None = None) -> Counts:
    """The operator's plan, reconciled every minute against an in-memory cluster: its Events."""
    template = {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                               "containers": [{"name": "main", "image": "busybox"}]}}}}
    world = World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                   "metadata": {"name": "job", "namespace": "team-a", "uid": "uid-1", "generation": 1},
                   "spec": {**cronschedule_spec(timeline), "jobTemplate": template}})
    world.reconcile(t(timeline.start))  # first seen: the schedule's anchor, as the harness's create_job
    ends: dict[int, list[str]] = {}
    reasons: list[str] = []
    for now in range(t(timeline.start) + 1, t(timeline.end) + 1):
        for name in ends.pop(now, []):  # the Job completes just before the minute's reconcile
            if name in world.jobs and not world.jobs[name].get("status"):
                world.finish(name, "Failed" if timeline.failing else "Complete", now)
        ask_the_operator(world, timeline, now)
        result = world.reconcile(now)
        for effect in result.effects:
            if isinstance(effect, CreateJob):
                ends.setdefault(now + timeline.run_minutes, []).append(effect.manifest["metadata"]["name"])
            elif isinstance(effect, PostEvent):
                reasons.append(effect.event.reason)
    status = world.schedule["status"]
    if history is not None:
        history += sorted((entry["run"], entry["state"], entry["scheduledTime"][:16]) for entry in status["history"])
    assert (status["skipped"], status["overflowed"]) == (reasons.count("Skipped"),
                                                         reasons.count("TooManyMissedSchedules"))
    return Counts(reasons.count("Launched"), reasons.count("Skipped"), reasons.count("Replaced"),
                  reasons.count("TooManyMissedSchedules"))


def ask_the_operator(world: World, timeline: Timeline, now: int) -> None:
    """The timeline's manual runs and backfills asked for at ``now``, as kubectl cronctl asks them."""
    if timeline.suspended is not None and format_time(now) in timeline.suspended:
        world.schedule["spec"]["suspend"] = format_time(now) == timeline.suspended[0]  # kubectl patch
        world.schedule["metadata"]["generation"] += 1
    if format_time(now) in timeline.triggers:
        world.annotate(TRIGGER_ANNOTATION, format_time(now))
    for at, start, end in timeline.backfills:
        if at == format_time(now):
            world.annotate(BACKFILL_ANNOTATION, f"{start}:00Z/{end}:00Z")


# -- the single-node runner --------------------------------------------------------------------------

# A run's process waits for its mark, which the test lays at the minute the run ends.
WAIT_FOR_MARK = 'while [ ! -e "$MARKS/$CRONCTL_NOMINAL_TIME" ]; do sleep 0.01; done; exit $EXIT'


def runner_counts(timeline: Timeline, folder: Path, history: History | None = None) -> Counts:
    """``cronctl local`` on the timeline: what its history and its output say."""
    marks = folder / "marks"
    marks.mkdir()
    spec = cronschedule_spec(timeline)
    container = {"name": "main", "image": "busybox", "command": ["sh", "-c", WAIT_FOR_MARK],
                 "env": [{"name": "MARKS", "value": str(marks)}, {"name": "EXIT", "value": str(int(timeline.failing))}]}
    spec["jobTemplate"] = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}}
    (folder / "job.yaml").write_text(json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                                                 "metadata": {"name": "job"}, "spec": spec}))
    clock = [t(timeline.start)]
    said: list[str] = []
    runner = Runner(folder, lambda: clock[0], workers=20, say=said.append, grace_seconds=0.2)
    assert runner.open()
    runner.step()
    ends: dict[int, list[int]] = {}  # minute -> nominal times of the runs that end then
    started: dict[str, int] = {}  # run -> its nominal time (a manual run's is the minute it was asked at)
    for now in range(t(timeline.start) + 1, t(timeline.end) + 1):
        for nominal in ends.pop(now, []):  # the run ends just before the minute's tick
            (marks / nominal_iso(nominal)).touch()
            running = {f.run_id for f in runner.firings.values() if f.slot and f.nominal == nominal}
            stamp = run_folder_name(RunKey("job", nominal))  # a manual or backfill run's folder is elsewhere
            wait_for(lambda: len(list(folder.glob(f"**/runs/job/{stamp}/exit.json"))) >= len(
                [run for run, at in started.items() if at == nominal]) or not running)
        clock[0] = now
        ask_the_runner(folder, timeline, now)
        runner.step()
        for firing in runner.firings.values():
            if firing.slot is not None and firing.run_id not in started:
                started[firing.run_id] = firing.nominal
                ends.setdefault(now + timeline.run_minutes, []).append(firing.nominal)
    book = json.loads((folder / "cronctl.json").read_text())
    rows = book["journal"].get("job", [])
    if history is not None:  # the finished runs the core keeps (retention), as the runner's history shows them
        kept = {run["id"] for run in book["controller"]["runs"] if run["state"] not in ("running", "retry_pending")}
        history += sorted((int(row["run"].rpartition("-")[2]), row["outcome"], format_time(row["nominal"]))
                          for row in rows if row["run"] in kept)
    runs = {row["run"] for row in rows if row["run"] is not None} | set(runner.firings)
    skipped = [row["nominal"] for row in rows if row["outcome"] == "skipped"]
    assert len(skipped) == len(set(skipped)), "a skipped time has one history row"
    # A time Forbid held back waits for the active run and has a skipped row only if it never ran (issue
    # 45): the times held back, as the others count them, are those rows, the ones that ran, the one waiting.
    wait = book.get("waits", {}).get("job", {"nominal": None, "ran": 0})
    skipped += [None] * (wait["ran"] + (wait["nominal"] is not None))
    replaced = sum(row["outcome"] in ("stopped", "canceled") for row in rows)
    replaced += sum(firing.stopping == "stopped" for firing in runner.firings.values())
    overflowed = sum("overflow" in line for line in said)
    for marked in marks.iterdir():  # let the processes still waiting go
        marked.touch()
    for nominal in started.values():
        (marks / nominal_iso(nominal)).touch()
    return Counts(len(runs), len(skipped), replaced, overflowed)


def ask_the_runner(folder: Path, timeline: Timeline, now: int) -> None:
    """The timeline's manual runs and backfills asked for at ``now``, as cronctl trigger and backfill ask."""
    if timeline.suspended is not None and format_time(now) == timeline.suspended[0]:
        suspend(folder, "job", None, at=now * 60)
    elif timeline.suspended is not None and format_time(now) == timeline.suspended[1]:
        resume(folder, "job", now)
    if format_time(now) in timeline.triggers:
        trigger(folder, "job", now)
    for at, start, end in timeline.backfills:
        if at == format_time(now):
            ask_backfill(folder, "job", t(start), t(end), now)


# -- the harness's controller, asked for manual runs, backfills and suspensions ----------------------
# The run() harness has no operation for them; its in-memory controller (core.controller, which the
# fleet preview and the runner drive too) is asked directly, as the runner's step asks it.

def controller_counts(timeline: Timeline, history: History | None = None) -> Counts:
    options: dict[str, Any] = {}
    if timeline.timeout is not None:
        options["timeout"] = timeline.timeout
    if timeline.deadline is not None:
        options["starting_deadline"] = timeline.deadline
    c = Controller()
    c.create_job(t(timeline.start), "job", timeline.schedule, timeline.policy, options or None)
    ends: dict[int, list[str]] = {}
    launched = replaced = 0
    skipped: set[int] = set()
    held = bool(timeline.extra.get("suspend"))
    for now in range(t(timeline.start) + 1, t(timeline.end) + 1):
        for run_id in ends.pop(now, []):
            if run_id in c.state.runs and c.state.runs[run_id].state == "running":
                c.finish(now, run_id, "succeeded")
        if timeline.suspended is not None and format_time(now) in timeline.suspended:
            held = format_time(now) == timeline.suspended[0]
            if not held:
                c.wake(now, "job")
        for at, start, end in timeline.backfills:
            if at == format_time(now):
                c.backfill(now, "job", t(start), t(end), f"backfill-{at}")
        asked = {"job": 1} if format_time(now) in timeline.triggers else {}
        for item in c.step(now, holding={"job"} if held else set(), triggers=asked):
            decision = item.decision
            if isinstance(decision, Launch):
                launched += 1
                ends.setdefault(now + timeline.run_minutes, []).append(decision.run_id)
            elif isinstance(decision, Skip):
                skipped.add(decision.scheduled_for)
            elif isinstance(decision, Replace):
                replaced += 1
    if history is not None:
        history += sorted((run.number, run.state, format_time(run.scheduled_for)) for run in c.history("job"))
    return Counts(launched, len(skipped), replaced, 0)


def wait_for(condition: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "a run's process did not end"
        time.sleep(0.01)


DRIVERS: dict[str, Callable[..., Counts]] = {"operator": operator_counts, "fleet preview": fleet_counts,
                                             "runner": runner_counts}


@pytest.mark.parametrize("timeline", TIMELINES, ids=str)
def test_the_harness_counts_as_the_seed_says(timeline: Timeline) -> None:
    expected = timeline.harness_expected or timeline.expected
    counts = harness_counts(timeline)
    if expected is not None:
        assert counts == expected


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("timeline", TIMELINES, ids=str)
def test_every_driver_counts_the_timeline_as_the_harness_does(timeline: Timeline, driver: str,
                                                              tmp_path: Path) -> None:
    if driver == "runner" and timeline.timeout is not None:
        # Since 1dcf87f (issue 45) the runner's wrapper times timeoutMinutes on its own monotonic clock
        # and the core is handed no timeout (definitions.timed_by_core): the injected clock of this test
        # moves no run's own elapsed time, so its runs are never timed out here. Feeding a wrapper-timed
        # report at the harness's minute would take the wrapper's deadline off its real monotonic clock
        # (a separate process: the request's timeout_seconds) or a forged exit.json, neither of which
        # this test may do; the core's step that applies such an end (Controller.step's ends, outcome
        # timed_out) is tested in tests/core/test_turn.py, and the core's rule that judges a run its
        # worker timed (RunSeen.elapsed) is table-tested in tests/core/test_endings.py.
        pytest.skip("the runner's wrapper times a run on its own clock, which the injected clock does not move")
    counts = DRIVERS[driver](timeline, tmp_path) if driver == "runner" else DRIVERS[driver](timeline)
    if timeline.harness_expected is None:
        assert counts == harness_counts(timeline)
    if timeline.expected is not None:
        assert counts == timeline.expected


# Manual runs and backfills, which the harness's contract has no operation for: the operator and the
# runner compose a turn in one order (core.reconcile): the runs that ended, the tick, the backfill's
# next run, then the manual run asked for (docs/concepts/policies.md). So a manual run asked for in
# the turn a time is due launches beside it under every policy: Forbid does not skip the time for
# it, Replace does not replace it.
ASKED = [
    *[Timeline(f"{policy}: a manual run asked for in the turn of a due time launches beside it",
               "*/10 * * * *", policy, 5, end="2024-03-01T00:25", triggers=("2024-03-01T00:10",),
               expected=Counts(3, 0, 0, 0)) for policy in ("allow", "forbid")],
    # 00:10 and the manual run at 00:10; at 00:20 Replace replaces whichever still runs (runs of 15).
    Timeline("replace: a manual run asked for in the turn of a due time is not replaced by it",
             "*/10 * * * *", "replace", 15, end="2024-03-01T00:25", triggers=("2024-03-01T00:10",),
             expected=Counts(3, 0, 2, 0)),
    # A manual run of a running Forbid schedule, then the next time skipped while both run.
    # 00:10 runs to 00:22 and the manual run of 00:15 to 00:27: 00:20 is skipped, and still waits
    # at 00:25 (a run is active).
    Timeline("forbid: a manual run while a run goes on; the next time is skipped while they run",
             "*/10 * * * *", "forbid", 12, end="2024-03-01T00:25", triggers=("2024-03-01T00:15",),
             expected=Counts(2, 1, 0, 0)),
    Timeline("a manual run of a suspended schedule runs; its times do not",
             "*/10 * * * *", "allow", 5, end="2024-03-01T00:25", triggers=("2024-03-01T00:12",),
             extra={"suspend": True}, expected=Counts(1, 0, 0, 0)),
    # Asked at 00:10 for 00:00..00:05 (every 5 minutes: 00:00 and 00:05): beside the due 00:10.
    *[Timeline(f"{policy}: a backfill asked in the turn of a due time, one run at a time under the policy",
               "*/5 * * * *", policy, 2, end="2024-03-01T00:16",
               backfills=(("2024-03-01T00:10", "2024-03-01T00:00", "2024-03-01T00:05"),))
      for policy in ("allow", "forbid", "replace")],
    # Asked together between due times (00:10's run ends at 00:12): the backfill's first run (23:40),
    # then the manual run beside it, whatever the policy; a manual run first would hold the backfill.
    Timeline("forbid: a backfill and a manual run asked in one turn: the backfill's run first",
             "*/10 * * * *", "forbid", 2, end="2024-03-01T00:13", triggers=("2024-03-01T00:12",),
             backfills=(("2024-03-01T00:12", "2024-02-29T23:40", "2024-02-29T23:50"),),
             expected=Counts(3, 0, 0, 0)),
    Timeline("forbid: a backfill and a manual run asked in the turn of a due time",
             "*/5 * * * *", "forbid", 2, end="2024-03-01T00:16", triggers=("2024-03-01T00:10",),
             backfills=(("2024-03-01T00:10", "2024-03-01T00:00", "2024-03-01T00:05"),)),
]


# Suspensions under each policy: a time due while suspended is never launched on resume, and one due
# in the minute the schedule is resumed (the turn of that minute sees it resumed) fires.
SUSPENDED = [
    *[Timeline(f"{policy}: suspended from 00:05, resumed in the turn of the due 00:20: 00:10 never runs, 00:20 does",
               "*/10 * * * *", policy, 5, end="2024-03-01T00:35",
               suspended=("2024-03-01T00:05", "2024-03-01T00:20"), expected=Counts(2, 0, 0, 0))
      for policy in ("allow", "forbid", "replace")],
    *[Timeline(f"{policy}: resumed the minute after a due time: that time is not run",
               "*/10 * * * *", policy, 5, end="2024-03-01T00:25",
               suspended=("2024-03-01T00:05", "2024-03-01T00:11"), expected=Counts(1, 0, 0, 0))
      for policy in ("allow", "forbid", "replace")],
    # 00:10 runs to 00:22; suspended at 00:15 with a manual run asked at 00:16 (to 00:28), resumed at
    # 00:20: Forbid skips 00:20 while a run goes on, launches it at 00:28 when the manual run ends (to
    # 00:40), and skips 00:30.
    Timeline("forbid: a manual run of a suspended schedule, then resumed in the turn of a due time",
             "*/10 * * * *", "forbid", 12, end="2024-03-01T00:32", triggers=("2024-03-01T00:16",),
             suspended=("2024-03-01T00:15", "2024-03-01T00:20"), expected=Counts(3, 2, 0, 0)),
    Timeline("replace: a backfill waits while suspended and goes on once resumed",
             "*/5 * * * *", "replace", 2, end="2024-03-01T00:16",
             backfills=(("2024-03-01T00:06", "2024-03-01T00:00", "2024-03-01T00:05"),),
             suspended=("2024-03-01T00:04", "2024-03-01T00:10")),
]


# pauseOnFailures under each policy: the second failure in a row pauses the schedule from that turn on;
# its runs (every one fails) end at launch + 5. 00:10 and 00:20 fail (the pause at 00:25): nothing more.
PAUSED = [Timeline(f"{policy}: runs that fail pause the schedule at the second failure in a row",
                   "*/10 * * * *", policy, 5, end="2024-03-01T00:45", failing=True,
                   extra={"pauseOnFailures": 2}, expected=Counts(2, 0, 0, 0))
          for policy in ("allow", "forbid", "replace")]


@pytest.mark.parametrize("timeline", PAUSED, ids=str)
def test_the_operator_and_the_runner_agree_on_pauses_on_failures(timeline: Timeline, tmp_path: Path) -> None:
    histories: tuple[History, History] = ([], [])
    assert operator_counts(timeline, histories[0]) == runner_counts(timeline, tmp_path, histories[1]) == \
        timeline.expected
    assert histories[0] == histories[1] == [(2, "failed", "2024-03-01T00:20")]  # failedJobsHistoryLimit 1


@pytest.mark.parametrize("timeline", ASKED + SUSPENDED, ids=str)
def test_the_operator_the_runner_and_the_controller_agree_on_manual_runs_backfills_and_suspensions(
        timeline: Timeline, tmp_path: Path) -> None:
    histories: tuple[History, History, History] = ([], [], [])
    operator, runner = operator_counts(timeline, histories[0]), runner_counts(timeline, tmp_path, histories[1])
    assert operator == runner
    assert controller_counts(timeline, histories[2]) == operator
    assert histories[0] == histories[1] == histories[2]  # the same runs kept, with the same outcomes
    if timeline.expected is not None:
        assert operator == timeline.expected


@pytest.mark.parametrize("driver", ["operator", "runner"])
@pytest.mark.parametrize("timeline", BEYOND_THE_HARNESS, ids=str)
def test_the_operator_and_the_runner_agree_on_windows_and_run_limits(timeline: Timeline, driver: str,
                                                                    tmp_path: Path) -> None:
    counts = runner_counts(timeline, tmp_path) if driver == "runner" else operator_counts(timeline)
    assert counts == timeline.expected


# -- pools: the operator and the runner start pooled runs at the same minutes ------------------------
# A CronPool's workers are seed 001's dispatcher across schedules: the same
# manifests (a pool, its schedules, how long each run takes, a range of
# minutes) go to the operator's plan and its pool's look (in-memory clusters,
# tests/operator/world.py; the pool's Jobs gathered from every schedule's) and
# to the single-node runner (real processes, an injected clock, a node with
# workers to spare), and each reports when each run started: the minute its
# Job was let run, or its process started. Runs end at their start +
# ``run_minutes``, before that minute's tick; the pool looks after every tick.

Start = tuple[str, int, int, int]  # (schedule, nominal, attempt, minute started)


@dataclass(frozen=True)
class Pooled:
    name: str
    workers: int
    schedules: dict[str, str]  # name -> expression
    run_minutes: int
    end: str
    start: str = "2024-03-01T00:00"
    extra: dict[str, Any] = field(default_factory=dict)  # spec fields of every schedule
    failing: frozenset[str] = frozenset()  # schedules whose runs fail (every attempt)
    expected: list[Start] | None = None  # worked out by hand (None: only that they agree)

    def __str__(self) -> str:
        return self.name


def m(text: str) -> int:
    return t(f"2024-03-01T{text}")


POOLED = [
    # 00:10: a, b, c due; a and b start (c waits). 00:25: a and b end, c (00:10) and a (00:20)
    # start (b and c of 00:20 wait, and 00:30's come). 00:40: those two end, b and c of 00:20
    # start: the first waiting in seed order (nominal time, then name) whenever a worker frees.
    Pooled("three schedules every 10 minutes, runs of 15, a pool of 2", 2,
           {"c": "*/10 * * * *", "a": "*/10 * * * *", "b": "*/10 * * * *"}, 15, "2024-03-01T00:45",
           expected=[("a", m("00:10"), 1, m("00:10")), ("b", m("00:10"), 1, m("00:10")),
                     ("a", m("00:20"), 1, m("00:25")), ("c", m("00:10"), 1, m("00:25")),
                     ("b", m("00:20"), 1, m("00:40")), ("c", m("00:20"), 1, m("00:40"))]),
    Pooled("a failing schedule's retry waits by its attempt, ahead of later times", 1,
           {"a": "*/10 * * * *", "b": "*/10 * * * *"}, 3, "2024-03-01T00:30",
           extra={"maxRetries": 1}, failing=frozenset({"a"}),
           expected=[("a", m("00:10"), 1, m("00:10")), ("a", m("00:10"), 2, m("00:13")),
                     ("b", m("00:10"), 1, m("00:16")), ("a", m("00:20"), 1, m("00:20")),
                     ("a", m("00:20"), 2, m("00:23")), ("b", m("00:20"), 1, m("00:26"))]),
    Pooled("forbid: a time skipped while its own run is queued", 1,
           {"a": "*/5 * * * *", "b": "*/5 * * * *"}, 8, "2024-03-01T00:40",
           extra={"concurrencyPolicy": "Forbid"}),
]


TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main",
                                                                                      "image": "busybox"}]}}}}


def operator_starts(row: Pooled) -> list[Start]:
    worlds = {name: World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                           "metadata": {"name": name, "namespace": "team-a", "uid": f"uid-{name}", "generation": 1},
                           "spec": {"schedule": expression, "pool": "pool", **row.extra, "jobTemplate": TEMPLATE}})
              for name, expression in row.schedules.items()}
    pool = {"metadata": {"name": "pool", "namespace": "team-a", "generation": 1}, "spec": {"workers": row.workers}}
    for world in worlds.values():
        world.reconcile(t(row.start))
    starts: list[Start] = []
    ends: dict[int, list[tuple[str, str]]] = {}
    for now in range(t(row.start) + 1, t(row.end) + 1):
        for schedule, job in ends.pop(now, []):
            worlds[schedule].finish(job, "Failed" if schedule in row.failing else "Complete", now)
        for world in worlds.values():
            for effect in world.reconcile(now).effects:
                if isinstance(effect, CreateJob):
                    assert effect.manifest["spec"]["suspend"] is True  # every pooled Job waits for its pool
        jobs = [copy.deepcopy(job) for world in worlds.values() for job in world.jobs.values()]
        looked = pool_plan(pool, jobs, now * 60)
        if looked.status is not None:
            pool["status"] = merge_patch(pool.get("status") or {}, looked.status)
        for each in looked.starts:
            world = worlds[each.schedule]
            job = world.jobs[each.job] = merge_patch(world.jobs[each.job], each.patch)
            labels, annotations = job["metadata"]["labels"], job["metadata"]["annotations"]
            starts.append((each.schedule, parse_time(annotations["cronctl.dev/scheduled-time"][:16]) or 0,
                           int(labels["cronctl.dev/attempt"]), now))
            ends.setdefault(now + row.run_minutes, []).append((each.schedule, each.job))
    return starts


# A pooled run's process waits for its own mark (several schedules share a nominal time).
WAIT_FOR_POOLED_MARK = ('while [ ! -e "$MARKS/$CRONCTL_SCHEDULE-$CRONCTL_NOMINAL_TIME-$CRONCTL_ATTEMPT" ]; '
                 'do sleep 0.01; done; exit $EXIT')


def runner_starts(row: Pooled, folder: Path) -> list[Start]:
    marks = folder / "marks"
    marks.mkdir()
    (folder / "pool.yaml").write_text(json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronPool",
                                                  "metadata": {"name": "pool"}, "spec": {"workers": row.workers}}))
    for name, expression in row.schedules.items():
        env = [{"name": "MARKS", "value": str(marks)}, {"name": "EXIT", "value": "3" if name in row.failing else "0"}]
        container = {"name": "main", "image": "busybox", "command": ["sh", "-c", WAIT_FOR_POOLED_MARK], "env": env}
        spec = {"schedule": expression, "pool": "pool", **row.extra,
                "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}}}
        (folder / f"{name}.yaml").write_text(json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                                                         "metadata": {"name": name}, "spec": spec}))
    clock = [t(row.start)]
    runner = Runner(folder, lambda: clock[0], workers=20, say=lambda text: None, grace_seconds=0.2)
    assert runner.open()
    runner.step()
    starts: list[Start] = []
    ends: dict[int, list[tuple[str, int, int]]] = {}
    seen: set[tuple[str, int, int]] = set()
    try:
        for now in range(t(row.start) + 1, t(row.end) + 1):
            for schedule, nominal, attempt in ends.pop(now, []):
                (marks / f"{schedule}-{nominal_iso(nominal)}-{attempt}").touch()
                exited = folder / "runs" / schedule / run_folder_name(RunKey(schedule, nominal, attempt)) / "exit.json"
                wait_for(exited.exists)
            clock[0] = now
            runner.step()
            for key in sorted(_running(runner) - seen, key=lambda k: (k[1], k[0], k[2])):
                seen.add(key)
                starts.append((*key, now))
                ends.setdefault(now + row.run_minutes, []).append(key)
    finally:
        for schedule, nominal, attempt in seen:
            (marks / f"{schedule}-{nominal_iso(nominal)}-{attempt}").touch()
    return starts


def _running(runner: Runner) -> set[tuple[str, int, int]]:
    return {(f.schedule, f.nominal, f.attempt) for f in runner.firings.values() if f.slot is not None}


def _ordered(starts: list[Start]) -> list[Start]:
    return sorted(starts, key=lambda s: (s[3], s[1], s[0], s[2]))


@pytest.mark.parametrize("row", POOLED, ids=str)
def test_the_operator_and_the_runner_start_pooled_runs_at_the_same_minutes(row: Pooled, tmp_path: Path) -> None:
    operator, runner = _ordered(operator_starts(row)), _ordered(runner_starts(row, tmp_path))
    assert operator == runner
    if row.expected is not None:
        assert operator[:len(row.expected)] == _ordered(row.expected)
    for minute in {start[3] for start in operator}:  # never more than the pool's workers at once
        running = [s for s in operator if s[3] <= minute < s[3] + row.run_minutes]
        assert len(running) <= row.workers


# -- the command line: $(VAR) as the kubelet expands it ----------------------------------------------

# The CRONCTL_* facts of the run, an escape, the container's env (one entry naming a fact, which on a
# cluster is defined after it: as written), an undefined name.
EXPANDED_CONTAINER = {
    "name": "main", "image": "busybox", "command": ["echo", "$(CRONCTL_NOMINAL_TIME)"],
    "args": ["$(CRONCTL_SCHEDULE)", "$(CRONCTL_REASON)", "$(CRONCTL_ATTEMPT)", "$$(CRONCTL_SCHEDULE)", "$(WHO)",
             "$(EARLY)", "$(NOBODY)", "$$"],
    "env": [{"name": "WHO", "value": "it's $(CRONCTL_SCHEDULE)"}, {"name": "EARLY", "value": "$(WHO)!"}]}


def kubelet_command_line(container: dict[str, Any]) -> list[str]:
    """What the kubelet runs of a Job's container: each env value expanded from the entries before
    it, then the command and args from the whole env (k8s.io/kubernetes third_party expansion)."""
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        env[item["name"]] = expand(item.get("value", ""), env)
    return [expand(part, env) for part in list(container["command"]) + list(container.get("args") or [])]


def operator_command_lines() -> list[list[str]]:
    template = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [EXPANDED_CONTAINER]}}}}
    world = World({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                   "metadata": {"name": "job", "namespace": "team-a", "uid": "uid-1", "generation": 1},
                   "spec": {"schedule": "*/10 * * * *", "jobTemplate": template}})
    world.reconcile(t("2024-03-01T00:00"))
    lines = []
    for now in range(t("2024-03-01T00:01"), t("2024-03-01T00:11")):
        if now == t("2024-03-01T00:05"):
            world.annotate(TRIGGER_ANNOTATION, format_time(now))
        for effect in world.reconcile(now).effects:
            if isinstance(effect, CreateJob):
                [container] = effect.manifest["spec"]["template"]["spec"]["containers"]
                lines.append(kubelet_command_line(container))
    return lines


def runner_command_lines(folder: Path) -> list[list[str]]:
    spec = {"schedule": "*/10 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [EXPANDED_CONTAINER]}}}}}
    (folder / "job.yaml").write_text(json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                                                 "metadata": {"name": "job"}, "spec": spec}))
    clock = [t("2024-03-01T00:00")]
    runner = Runner(folder, lambda: clock[0], workers=2, say=lambda text: None, grace_seconds=0.2)
    assert runner.open()
    runner.step()
    for now in range(t("2024-03-01T00:01"), t("2024-03-01T00:11")):
        clock[0] = now
        if now == t("2024-03-01T00:05"):
            trigger(folder, "job", now)
        runner.step()
    requests = [json.loads(path.read_text()) for path in sorted(folder.glob("**/runs/job/*/request.json"))]
    return [list(request["command"]) + list(request["args"]) for request in requests]


def test_the_same_manifest_runs_the_same_command_line_on_the_operator_and_the_runner(tmp_path: Path) -> None:
    operator = operator_command_lines()
    assert sorted(operator) == sorted(runner_command_lines(tmp_path))
    assert ["echo", "2024-03-01T00:10:00Z", "job", "scheduled", "1", "$(CRONCTL_SCHEDULE)",
            "it's $(CRONCTL_SCHEDULE)", "it's $(CRONCTL_SCHEDULE)!", "$(NOBODY)", "$"] in operator


# -- one composition: no driver composes a turn of its own ------------------------------------------
# The order of a turn (the ends, the hold, the tick, staging, the backfill, the manual runs) is written
# once, in core/reconcile.py (``ends`` and ``turn``); the operator's reconcile, the Controller (the
# harness, the fleet preview) and the runner's step reach these steps only through it. A module that
# calls one of them itself composes a turn of its own, and may order it its own way.

PACKAGE = Path(__file__).resolve().parent.parent / "operator" / "cronctl"
COMPOSER = "cronctl.core.reconcile"
THE_STEPS = {"cronctl.core.tick.decide", "cronctl.core.tick.while_held", "cronctl.core.tick.manual_launch",
             "cronctl.core.transitions.apply_tick", "cronctl.core.transitions.hold",
             "cronctl.core.endings.end_runs", "cronctl.core.backfill.next_launch", "cronctl.core.failures.pauses"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_names(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """Each local name bound by an import, as the dotted name it stands for."""
    package = module if is_package else module.rpartition(".")[0]
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            source = (f"{base}.{node.module}" if node.module else base) if node.level else node.module or ""
            for alias in node.names:
                names[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.partition(".")[0]] = alias.name if alias.asname else \
                    alias.name.partition(".")[0]
    return names


def _calls_to_the_steps(path: Path, module: str | None = None) -> list[str]:
    tree = ast.parse(path.read_text())
    module = module or _module_name(path)
    names = _imported_names(tree, module, path.name == "__init__.py")
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func, called = node.func, None
        if isinstance(func, ast.Name):
            called = names.get(func.id, f"{module}.{func.id}")
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in names:
            called = f"{names[func.value.id]}.{func.attr}"
        if called in THE_STEPS:
            found.append(f"{module}:{node.lineno} calls {called}")
    return found


def test_only_core_reconcile_composes_a_turn() -> None:
    """Fails if a driver (or any module but core/reconcile.py) calls a step of a turn itself."""
    calls = [call for path in sorted(PACKAGE.rglob("*.py")) if _module_name(path) != COMPOSER
             for call in _calls_to_the_steps(path)]
    assert calls == []
    assert len(_calls_to_the_steps(PACKAGE / "core" / "reconcile.py")) >= len(THE_STEPS)  # the test sees calls


def test_the_check_finds_a_turn_composed_elsewhere(tmp_path: Path) -> None:
    """The check above is not blind: a module that decides and applies a tick itself is found."""
    driver = tmp_path / "composes_its_own.py"
    driver.write_text("from ..core.tick import decide\nfrom ..core import transitions\n\n"
                      "def turn(spec, state, timeline, now):\n"
                      "    transitions.apply_tick(state, decide(spec, state, timeline, now).decisions)\n")
    assert sorted(_calls_to_the_steps(driver, "cronctl.runner.composes_its_own")) == [
        "cronctl.runner.composes_its_own:5 calls cronctl.core.tick.decide",
        "cronctl.runner.composes_its_own:5 calls cronctl.core.transitions.apply_tick"]


# -- the runner reaches the Controller through one door ----------------------------------------------
# Its step's modules read the Controller's records (``memory.controller.state``) but call it only
# through runner/composition.py, so what the runner asks of the core is in one place.

RUNNER = PACKAGE / "runner"
RUNNERS_DOOR = "cronctl.runner.composition"
CONTROLLER_METHODS = {name for name, value in vars(Controller).items()
                      if callable(value) and not name.startswith("__")}


def _calls_to_the_controller(path: Path, module: str | None = None) -> list[str]:
    """The calls of a Controller method on something named ``controller`` (``controller.step(...)``,
    ``memory.controller.drop(...)``)."""
    module = module or _module_name(path)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in CONTROLLER_METHODS):
            continue
        owner = node.func.value
        if (isinstance(owner, ast.Name) and owner.id == "controller") or \
                (isinstance(owner, ast.Attribute) and owner.attr == "controller"):
            found.append(f"{module}:{node.lineno} calls Controller.{node.func.attr}")
    return found


def test_the_runner_calls_the_controller_only_through_its_one_door() -> None:
    """Fails if a runner module but runner/composition.py calls a Controller method."""
    calls = [call for path in sorted(RUNNER.glob("*.py")) if _module_name(path) != RUNNERS_DOOR
             for call in _calls_to_the_controller(path)]
    assert calls == []
    door = _calls_to_the_controller(RUNNER / "composition.py")
    assert {"step", "advance", "finish", "drop", "adopt_run"} <= {call.rpartition(".")[2] for call in door}


def test_the_door_check_finds_a_call_elsewhere(tmp_path: Path) -> None:
    """The check above is not blind: a step module that ends a run on the Controller itself is found."""
    module = tmp_path / "ends_its_own.py"
    module.write_text("def end(memory, run, now):\n"
                      "    memory.controller.finish(now, run.id, 'failed')\n"
                      "    controller = memory.controller\n"
                      "    return controller.step(now), controller.state.runs.get(run.id)\n")
    assert _calls_to_the_controller(module, "cronctl.runner.ends_its_own") == [
        "cronctl.runner.ends_its_own:2 calls Controller.finish", "cronctl.runner.ends_its_own:4 calls Controller.step"]
