"""Fleets: the cronschedule-fleet chart's values, checked and replayed through the core.

A fleet is ``<prefix>-0 ... <prefix>-<count-1>``, CronSchedule i taking
``schedules[i % len(schedules)]``, with one policy, one set of options and one
job template: the meaning of the harness's ``bulk_create``. ``read_values``
makes the chart's checks (``charts/cronschedule-fleet/templates/_validate.tpl``)
in the same order, naming the same value with the same reason
(``<value>: <reason>``): ``prefix``, ``count``, ``schedules``,
``concurrencyPolicy``, the options, the generated names, as bulk_create checks
its arguments. A value with a counterpart among bulk_create's arguments takes
exactly what bulk_create takes (so ``concurrencyPolicy`` is Allow, Forbid or
Replace, ``startingDeadlineSeconds`` at least 60: whole minutes, at least 1);
the other options take what the CRD takes, and so does ``timeZone``: a UTC
offset, or a zone of the tz database the chart lists (the ``tzdata`` package's
names, which the operator's reader takes too). The one difference: helm reads
numbers as floats and so takes ``count: 5.0`` as 5, which this reader, like
bulk_create, refuses. Messages name the fleet's values, never the harness.

``create`` then reads the fleet's CronSchedule manifests with the operator's
reader (``manifest.read_spec``) and creates the fleet with the core's
``Controller.bulk_create`` (a schedule that never fires from ``--from`` is
refused here, as the operator would mark it Ready=False).

``preview`` replays the fleet from ``--from`` to ``--to`` under each of the
three policies. It looks only at the minutes where something can happen: a
schedule time of the fleet, or the end of a run. The assumption that makes
Forbid, Replace and overflows mean something: **every run takes
``run_minutes`` minutes** (default 1) and succeeds, ending at launch +
``run_minutes`` (before that minute's tick), unless ``timeoutMinutes`` is no
longer, in which case the core times it out at launch + ``timeoutMinutes``.
Runs never fail, so retries never happen. Counts are what the operator would
report: a launch per run, a skip per skipped schedule time (not per look),
a replace per deleted run, an overflow each time a schedule starts
overflowing (more missed times than its limit, 100 by default; as on the
operator, the most recent of them is launched all the same).
"""

from __future__ import annotations

import argparse
import heapq
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence, TextIO

from .core.controller import Controller
from .core.errors import CronctlError
from .core.every import is_every
from .core.schedule import IntervalExpression, parse_seed_expression
from .core.spec import HARNESS_POLICIES, MAX_BULK, MAX_NAME_LENGTH, JobSpec, check_name
from .core.state import RUNNING
from .core.tick import Launch, Overflow, Replace, Skip
from .core.times import format_time, parse_time
from .core.zones import parse_offset, parse_zone
from .manifest import API_VERSION, CATCH_UP, KIND, POLICIES, SpecError, read_spec, yaml_problem

EXIT_USAGE = 2
MAX_EXACT = 2**53 - 1  # the largest whole number a helm value (a float) holds exactly
MAX_INT32 = 2**31 - 1  # the CRD's int32 fields
FLEET_LABEL = "cronctl.dev/fleet"
# The policies of bulk_create, by their CRD names, in the order messages list them.
FLEET_POLICIES = {name: policy for name, policy in POLICIES.items() if policy in HARNESS_POLICIES}
# The labels the chart sets on every CronSchedule (templates/_helpers.tpl fleet.labels).
RESERVED_LABELS = ("app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "app.kubernetes.io/name",
                   "app.kubernetes.io/part-of", "helm.sh/chart", FLEET_LABEL)
NAME_RULE = f"must be 1-{MAX_NAME_LENGTH} lower-case letters and digits in groups joined by single hyphens"
EVERY_RULE_REASON = "expression: every(N).unit rules are not taken here: give a cron expression or '@every <N>m|h'"
UNKNOWN_ZONE_REASON = "is not a time zone: give an IANA name such as Europe/Berlin or a UTC offset such as +05:30"
# Names of the tz database that are no zone anywhere but on one host (the chart's list leaves them out).
HOST_DEPENDENT_ZONES = frozenset({"Factory", "localtime", "posixrules"})

# The chart's values.yaml (tests/charts/test_fleet_chart.py holds the two equal):
# what a values file leaves out, as helm fills it in.
DEFAULTS: dict[str, Any] = {
    "prefix": "example",
    "count": 1,
    "schedules": ["*/15 * * * *"],
    "concurrencyPolicy": "Allow",
    "timeZone": None,
    "startingDeadlineSeconds": None,
    "timeoutMinutes": None,
    "successfulJobsHistoryLimit": None,
    "failedJobsHistoryLimit": None,
    "maxRetries": None,
    "retryDelayMinutes": None,
    "catchUp": None,
    "jitterSeconds": None,
    "suspend": None,
    "labels": {},
    "jobTemplate": {"spec": {"template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox:1.36",
                        "command": ["sh", "-c", "echo fired at $(date -u)"]}]}}}},
}
# Whole-number options: (lowest, highest), in the order they are checked. bulk_create's
# first (starting_deadline, timeout, keep_succeeded, keep_failed), then the CRD's own.
HARNESS_WHOLE = {"startingDeadlineSeconds": (60, MAX_EXACT), "timeoutMinutes": (1, MAX_EXACT),
                 "successfulJobsHistoryLimit": (0, MAX_INT32), "failedJobsHistoryLimit": (0, MAX_INT32)}
CRD_WHOLE = {"maxRetries": (0, 100), "retryDelayMinutes": (0, MAX_INT32), "jitterSeconds": (0, 3600)}
# The spec fields a fleet's CronSchedules carry when set, in the chart's order.
SPEC_OPTIONS = ("timeZone", "catchUp", "suspend", *HARNESS_WHOLE, "maxRetries", "retryDelayMinutes",
                "jitterSeconds")


class FleetError(CronctlError):
    """A value of the fleet refused: ``<value>: <reason>``."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def _show(value: object) -> str:
    """A value as the chart's messages show it (JSON)."""
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Fleet:
    """Checked values: the fleet's names, expressions and CronSchedule spec."""

    prefix: str
    count: int
    schedules: tuple[str, ...]
    policy: str  # Allow, Forbid or Replace
    values: Mapping[str, Any]

    @property
    def names(self) -> list[str]:
        return [f"{self.prefix}-{i}" for i in range(self.count)]

    def schedule_of(self, i: int) -> str:
        return self.schedules[i % len(self.schedules)]

    @property
    def used(self) -> int:
        """How many of the schedules the fleet uses: the first min(count, len)."""
        return min(self.count, len(self.schedules))

    @property
    def suspended(self) -> bool:
        return self.values.get("suspend") is True

    def manifest(self, i: int) -> dict[str, Any]:
        """CronSchedule i as the chart renders it (less helm's own labels)."""
        values = self.values
        spec: dict[str, Any] = {"schedule": self.schedule_of(i), "concurrencyPolicy": self.policy}
        spec.update((key, values[key]) for key in SPEC_OPTIONS if values.get(key) is not None)
        spec["jobTemplate"] = values["jobTemplate"]
        labels = {FLEET_LABEL: self.prefix, **(values.get("labels") or {})}
        return {"apiVersion": API_VERSION, "kind": KIND,
                "metadata": {"name": f"{self.prefix}-{i}", "labels": labels}, "spec": spec}


# -- the values ---------------------------------------------------------------------------------


def merge_defaults(values: Mapping[str, Any], defaults: Mapping[str, Any] = DEFAULTS) -> dict[str, Any]:
    """Helm's coalescing of a values file over the chart's: maps merge key by key,
    anything else replaces the default, and a null removes the key."""
    merged = dict(defaults)
    for key, value in values.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_defaults(value, merged[key])
        else:
            merged[key] = value
    return merged


def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_whole(name: str, value: object, low: int, high: int, nullable: bool = True) -> None:
    if nullable and value is None:
        return
    if not _is_whole(value):
        raise FleetError(name, f"{_show(value)} is not a whole number ({low}-{high})")
    if not low <= value <= high:  # type: ignore[operator]
        raise FleetError(name, f"{_show(value)} is out of range {low}-{high}")


def read_values(raw: Mapping[str, Any]) -> Fleet:
    """Check merged values (``merge_defaults``) as the chart does; raises FleetError."""
    values = dict(raw)
    prefix = values.get("prefix")
    _check_prefix(prefix)
    count = values.get("count")
    _check_whole("count", count, 1, MAX_BULK, nullable=False)
    schedules = values.get("schedules")
    compiled = _compiled_schedules(schedules)
    policy = values.get("concurrencyPolicy")
    if not isinstance(policy, str) or policy not in FLEET_POLICIES:
        raise FleetError("concurrencyPolicy", f"{_show(policy)} is not one of {', '.join(FLEET_POLICIES)}")
    _check_known_keys(values)
    for name, (low, high) in HARNESS_WHOLE.items():
        _check_whole(name, values.get(name), low, high)
    assert isinstance(count, int) and isinstance(schedules, list)
    _check_zone(values.get("timeZone"), schedules, compiled[:count])
    _check_crd_options(values)
    _check_labels(values.get("labels"))
    _check_job_template(values.get("jobTemplate"))
    _check_last_name(prefix, count)
    assert isinstance(prefix, str)
    return Fleet(prefix, count, tuple(schedules), policy, values)


def _check_prefix(prefix: object) -> None:
    try:
        check_name(prefix, "prefix")
    except CronctlError:
        raise FleetError("prefix", f"{_show(prefix)} {NAME_RULE}") from None


def _compiled_schedules(schedules: object) -> list[object]:
    """The schedules, each compiled as the seed's expressions are (no every-expressions)."""
    if not isinstance(schedules, list) or not schedules:
        raise FleetError("schedules", f"{_show(schedules)} must be a non-empty list of expressions")
    compiled: list[object] = []
    for i, text in enumerate(schedules):
        if is_every(text):
            raise FleetError(f"schedules[{i}]", EVERY_RULE_REASON)
        try:
            compiled.append(parse_seed_expression(text))
        except CronctlError as error:
            raise FleetError(f"schedules[{i}]", error.message) from None
    return compiled


def _check_known_keys(values: Mapping[str, Any]) -> None:
    known = list(DEFAULTS)
    for key in sorted(values):
        if key not in known and key != "global":
            raise FleetError(str(key), f"is not a value of this chart (known: {', '.join(known)})")


def _check_crd_options(values: Mapping[str, Any]) -> None:
    """The options only the CRD has (the seed's harness has none of them): retries, catch-up,
    jitter, suspension."""
    _check_whole("maxRetries", values.get("maxRetries"), *CRD_WHOLE["maxRetries"])
    _check_whole("retryDelayMinutes", values.get("retryDelayMinutes"), *CRD_WHOLE["retryDelayMinutes"])
    catch_up = values.get("catchUp")
    if catch_up is not None and (not isinstance(catch_up, str) or catch_up not in CATCH_UP):
        raise FleetError("catchUp", f"{_show(catch_up)} is not one of {', '.join(CATCH_UP)}")
    _check_whole("jitterSeconds", values.get("jitterSeconds"), *CRD_WHOLE["jitterSeconds"])
    suspend = values.get("suspend")
    if suspend is not None and not isinstance(suspend, bool):
        raise FleetError("suspend", f"{_show(suspend)} must be true or false")


def _check_last_name(prefix: object, count: int) -> None:
    """The longest name the fleet makes, ``<prefix>-<count - 1>``, is still a valid name."""
    last = f"{prefix}-{count - 1}"
    try:
        check_name(last)
    except CronctlError:
        raise FleetError("prefix", f"{_show(prefix)} with count {count} makes names up to {_show(last)} "
                                   f"({len(last)} characters); names {NAME_RULE}") from None


def _check_zone(zone: object, schedules: list[str], used: Sequence[object]) -> None:
    """The CRD's timeZone: not with an @every schedule in use (the first one is looked at
    before the zone itself), and a UTC offset or a zone of the tz database."""
    if zone is None:
        return
    reason = "an @every interval counts real time and takes no time zone"
    if isinstance(used[0], IntervalExpression):
        raise FleetError("timeZone", f"{reason} (schedules[0] is {_show(schedules[0])})")
    if isinstance(zone, str) and zone[:1] in ("+", "-"):
        try:
            parse_offset(zone, "timeZone")
        except CronctlError as error:
            raise FleetError("timeZone", error.message.partition(": ")[2].replace(repr(zone), _show(zone), 1)) \
                from None
    elif not isinstance(zone, str):
        raise FleetError("timeZone", "must be an offset like +05:30 or a zone name like Europe/Berlin")
    elif zone not in tz_database_names():
        raise FleetError("timeZone", f"{_show(zone)} {UNKNOWN_ZONE_REASON}")
    else:
        try:
            parse_zone(zone, "timeZone")  # the operator's reader, which must take it too
        except CronctlError:
            raise FleetError("timeZone", f"{_show(zone)} {UNKNOWN_ZONE_REASON}") from None
    for i, expression in enumerate(used):
        if isinstance(expression, IntervalExpression):
            raise FleetError("timeZone", f"{reason} (schedules[{i}] is {_show(schedules[i])})")


@lru_cache(maxsize=1)
def tz_database_names() -> frozenset[str]:
    """The zone names the chart takes (its files/time-zones.txt): the tzdata package's,
    less the host-dependent ones. Not whatever the host's zoneinfo holds, so that the
    chart and the preview take the same names on every machine."""
    from importlib import resources

    names = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8").split()
    return frozenset(names) - HOST_DEPENDENT_ZONES


_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"


def _check_labels(labels: object) -> None:
    if labels is None:
        return
    if not isinstance(labels, dict):
        raise FleetError("labels", f"{_show(labels)} must be a map of label names to values")
    for key in sorted(labels, key=str):
        value = labels[key]
        if key in RESERVED_LABELS:
            raise FleetError("labels", f"{key} is set by the chart")
        key_prefix, slash, name = str(key).rpartition("/")
        if not isinstance(key, str) or len(name) > 63 or not re.fullmatch(_LABEL_NAME, name) \
                or len(key_prefix) > 253 or (slash and not re.fullmatch(_DNS_SUBDOMAIN, key_prefix)):
            raise FleetError("labels", f"{_show(key)} is not a valid label name")
        if not isinstance(value, str) or len(value) > 63 or not re.fullmatch(f"({_LABEL_NAME})?", value):
            raise FleetError("labels", f"the value of {key}, {_show(value)}, is not a valid label value")


def _check_job_template(template: object) -> None:
    spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("template"), dict):
        raise FleetError("jobTemplate", "must be a JobTemplateSpec with spec.template (a batch/v1 Job's pod template)")


def load_values(path: Path) -> Fleet:
    """A values file (YAML, like ``helm -f``) over the chart's defaults, checked."""
    import yaml

    try:
        with open(path, encoding="utf-8") as stream:
            raw = yaml.safe_load(stream)
    except OSError as error:
        raise FleetError(str(path), f"cannot be read: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise FleetError(str(path), f"is not YAML: {yaml_problem(error)}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise FleetError(str(path), "must hold a map of values (prefix, count, schedules, ...)")
    return read_values(merge_defaults(raw))


# -- creating the fleet in the core ------------------------------------------------------------


def create(fleet: Fleet, now: int, policy: str | None = None) -> tuple[Controller, list[JobSpec]]:
    """The fleet created at ``now`` in a fresh controller (under ``policy``, the fleet's
    own by default): each schedule in use read from its manifest by the operator's
    reader, then one bulk_create."""
    specs = []
    for i in range(fleet.used):
        manifest = fleet.manifest(i)
        if policy is not None:
            manifest["spec"]["concurrencyPolicy"] = policy
        try:
            job = read_spec(manifest, now).job
        except SpecError as error:  # the checks above leave nothing for it to refuse
            raise FleetError(error.field.removeprefix("spec."), error.message.partition(": ")[2]) from None
        if not job.timeline(now).fires:
            raise FleetError(f"schedules[{i}]", f"{_show(fleet.schedules[i])} never fires within 8 years "
                                                f"after {format_time(now)}")
        specs.append(job)
    controller = Controller()
    first = specs[0]
    created = controller.bulk_create(now, fleet.prefix, fleet.count, list(fleet.schedules), first.policy.value,
                                      first.options)
    return controller, created


# -- the replay ---------------------------------------------------------------------------------


@dataclass
class Counts:
    launches: int = 0
    skips: int = 0
    replaces: int = 0
    overflows: int = 0
    by_minute: Counter[int] = field(default_factory=Counter)

    def busiest(self, top: int = 5) -> list[tuple[int, int]]:
        return sorted(self.by_minute.items(), key=lambda item: (-item[1], item[0]))[:top]

    def to_json(self) -> dict[str, Any]:
        return {"launches": self.launches, "skips": self.skips, "replaces": self.replaces,
                "overflows": self.overflows, "firings": self.launches,
                "busiest_minutes": [{"minute": format_time(t), "firings": n} for t, n in self.busiest()]}


class Lane:
    """One policy's replay: a controller, the ends of its runs, what it counted."""

    def __init__(self, fleet: Fleet, policy: str, start: int, run_minutes: int) -> None:
        self.controller, specs = create(fleet, start, policy)
        self.run_minutes = run_minutes
        self.timeout = specs[0].options.timeout
        # One job per schedule in use stands for all that share its schedule (same anchor, zone).
        self.representatives = [spec.name for spec in specs[:fleet.used]]
        self.ends: list[tuple[int, int, str]] = []  # (minute, order, run id) of the runs still to end:
        # at launch + run_minutes, or at their timeout if that comes first (the core ends those)
        self.counts = Counts()
        self._order = 0

    def next_minute(self) -> int | None:
        """The next minute something can happen: a schedule time, or a run's end."""
        candidates = [self.controller.job_status(name).next_fire for name in self.representatives]
        if self.ends:
            candidates.append(self.ends[0][0])
        return min((t for t in candidates if t is not None), default=None)

    def step(self, now: int) -> None:
        """Runs that end at ``now`` end (those the core timed out already have), then the tick."""
        self.controller.advance(now)  # the core times out the runs whose timeout is up
        runs = self.controller.state.runs
        while self.ends and self.ends[0][0] <= now:
            _, _, run_id = heapq.heappop(self.ends)
            run = runs.get(run_id)  # gone if replaced or dropped by retention
            if run is not None and run.state == RUNNING:
                self.controller.finish(now, run_id, "succeeded")
        counts = self.counts
        for applied in self.controller.step(now):
            decision = applied.decision
            if isinstance(decision, Launch):
                counts.launches += 1
                counts.by_minute[now] += 1
                length = self.run_minutes if self.timeout is None else min(self.run_minutes, self.timeout)
                self._order += 1
                heapq.heappush(self.ends, (now + length, self._order, decision.run_id))
            elif isinstance(decision, Skip) and applied.news:  # once per skipped schedule time
                counts.skips += 1
            elif isinstance(decision, Replace):
                counts.replaces += 1
            elif isinstance(decision, Overflow) and applied.news:  # once per entry into it
                counts.overflows += 1


@dataclass
class Preview:
    fleet: Fleet
    start: int
    end: int
    run_minutes: int
    counts: dict[str, Counts]  # by policy (CRD name), the fleet's own first

    def to_json(self) -> dict[str, Any]:
        fleet = self.fleet
        own = self.counts[fleet.policy]
        return {
            "from": format_time(self.start), "to": format_time(self.end), "run_minutes": self.run_minutes,
            "schedules_created": fleet.count, "first": fleet.names[0], "last": fleet.names[-1],
            "expressions": list(fleet.schedules), "policy": fleet.policy, "suspended": fleet.suspended,
            "policies": {policy: counts.to_json() for policy, counts in self.counts.items()},
            "firings": own.launches,
            "busiest_minutes": own.to_json()["busiest_minutes"],
        }


def preview(fleet: Fleet, start: int, end: int, run_minutes: int = 1, progress: Any = None) -> Preview:
    """Replay the fleet from ``start`` (its creation) through ``end`` under each policy.

    ``progress``, if given, is told how many minutes of the range each step covered
    (``progress.update(n)``), as a tqdm bar is.
    """
    order = [fleet.policy, *(name for name in FLEET_POLICIES if name != fleet.policy)]
    lanes = {policy: Lane(fleet, policy, start, run_minutes) for policy in order}
    if not fleet.suspended:  # a suspended fleet fires nothing and keeps no missed time
        done = start
        for now in _minutes(lanes.values(), end):
            for lane in lanes.values():
                if lane.next_minute() == now:
                    lane.step(now)
            if progress is not None:
                progress.update(now - done)
            done = now
        if progress is not None:
            progress.update(end - done)
    return Preview(fleet, start, end, run_minutes, {policy: lane.counts for policy, lane in lanes.items()})


def _minutes(lanes: Any, end: int) -> Iterator[int]:
    """The minutes through ``end`` at which some lane has something to do, in order."""
    while True:
        upcoming = [t for t in (lane.next_minute() for lane in lanes) if t is not None]
        if not upcoming or min(upcoming) > end:
            return
        yield min(upcoming)


# -- the command ----------------------------------------------------------------------------------


def progress_bar(total: int, stream: TextIO, wanted: bool = True) -> Any:
    """A tqdm bar over the range's minutes on ``stream``: drawn only on a terminal, when
    wanted, and only once the replay has taken half a second (short ranges draw none)."""
    from tqdm import tqdm

    enabled = wanted and hasattr(stream, "isatty") and stream.isatty()
    return tqdm(total=total, unit="min", unit_scale=True, desc="replaying", file=stream, disable=not enabled,
                delay=0.5, leave=False, dynamic_ncols=True)


def _parse_range(start_text: str, end_text: str) -> tuple[int, int]:
    start, end = parse_time(start_text), parse_time(end_text)
    for flag, text, value in (("--from", start_text, start), ("--to", end_text, end)):
        if value is None:
            raise FleetError(flag, f"{_show(text)} is not a UTC time YYYY-MM-DDTHH:MM (2000-2199)")
    assert start is not None and end is not None
    if end < start:
        raise FleetError("--to", f"{end_text} is before --from {start_text}")
    return start, end


def preview_command(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``cronctl fleet preview VALUES --from T --to T [--run-minutes M] [--json] [--no-progress]``."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        start, end = _parse_range(args.start, args.end)
        if args.run_minutes < 1:
            raise FleetError("--run-minutes", f"{args.run_minutes} must be 1 or more")
        fleet = load_values(args.values)
        create(fleet, start)  # the checks that need a time (never fires), before any replay
        with progress_bar(end - start, err, not args.no_progress) as bar:
            result = preview(fleet, start, end, args.run_minutes, bar)
    except FleetError as error:
        print(f"cronctl: {error.message}", file=err)
        return EXIT_USAGE
    if args.json:
        out.write(json.dumps(result.to_json()) + "\n")
    else:
        out.write("\n".join(report_lines(result)) + "\n")
    return 0


def report_lines(result: Preview) -> list[str]:
    fleet = result.fleet
    own = result.counts[fleet.policy]
    names = fleet.names[0] if fleet.count == 1 else f"{fleet.names[0]} ... {fleet.names[-1]}"
    plural = "s" if len(fleet.schedules) > 1 else ""
    lines = [
        f"fleet {fleet.prefix}: {fleet.count} CronSchedule{'s' if fleet.count > 1 else ''} created ({names}), "
        f"{len(fleet.schedules)} schedule{plural} round robin, policy {fleet.policy}",
        f"from {format_time(result.start)} to {format_time(result.end)} UTC; each run takes "
        f"{result.run_minutes} minute{'s' if result.run_minutes != 1 else ''}"
        + (" (or its timeout)" if fleet.values.get("timeoutMinutes") is not None else ""),
    ]
    if fleet.suspended:
        lines.append("suspended: nothing fires")
    lines += ["", f"{'policy':<20}{'launches':>10}{'skips':>10}{'replaces':>10}{'overflows':>10}"]
    for policy, counts in result.counts.items():
        label = f"{policy} (the fleet's)" if policy == fleet.policy else policy
        lines.append(f"{label:<20}{counts.launches:>10}{counts.skips:>10}{counts.replaces:>10}"
                     f"{counts.overflows:>10}")
    lines += ["", f"total firings ({fleet.policy}): {own.launches}"]
    busiest = own.busiest()
    if busiest:
        lines.append(f"busiest minutes ({fleet.policy}):")
        lines += [f"  {format_time(t)}  {n} firing{'s' if n != 1 else ''}" for t, n in busiest]
    return lines
