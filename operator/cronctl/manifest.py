"""A CronSchedule manifest: what the resource is, its schema, and reading its spec into the core's.

The operator, the single-node runner and ``cronctl fleet preview`` read the
same manifests with this one reader. ``schema_problems`` judges an object as
the API server does by the CRD's ``openAPIV3Schema`` (types, bounds, enums,
required and unknown fields, with ``kubectl apply``'s strict field
validation), with a JSON-schema validator, and by the rules of the
CronSchedule's ValidatingAdmissionPolicy (``crds/cronschedule-policy.yaml``);
``read_spec`` then turns it into the core's ``JobSpec`` (judging the policy's
rules again, for a cluster without it), and what only the core can judge comes back as a
``SpecError`` whose field is the path in the object (``spec.schedule:
day-of-week: 8 is out of range 0-7``). ``read_manifest`` is both, for objects
no API server has seen (the runner's folder, a fleet's values); the operator
reads what the API server admitted with ``read_spec`` alone.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable, Mapping

import jsonschema
import yaml

from .api import (API_VERSION as API_VERSION, GROUP as GROUP, KIND as KIND, PLURAL as PLURAL,  # read from here too
                  POOL_KIND as POOL_KIND, POOL_PLURAL as POOL_PLURAL, VERSION as VERSION)
from .core.errors import CronctlError, ExpressionError
from .core import backfill
from .core.dst import DaylightSaving
from .core.every import check_jitter_allowed, rule_jitter
from .core.exclusions import parse_exclusions
from .core.merged import MAX_SCHEDULES
from .core.schedule import Expression, IntervalExpression, parse_expression
from .core.spec import (CATCH_UP_ALL, CATCH_UP_LATEST, DEFAULT_KEEP_FAILED, DEFAULT_KEEP_SUCCEEDED, MAX_MISSED,
                        PAST_LIMIT_LAUNCH, JobSpec, Options, Policy)
from .core.times import parse_time
from .core.window import Window
from .core.zones import UTC, AnyZone, parse_zone

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")  # the CRDs' pattern of spec.pool and a pool's name
NOT_A_DNS_LABEL = "is not a DNS label (at most 63 lowercase letters, digits and '-', beginning and ending " \
                  "with a letter or digit)"

MAX_JITTER_SECONDS = 3600
MAX_MISSED_LIMIT = 10000  # the CRD's maximum of missedSchedulesLimit
DEFAULT_UPCOMING, MAX_UPCOMING = 5, 20  # status.nextScheduleTimes: the CRD's default and maximum of upcomingTimes

POLICIES = {"Allow": Policy.ALLOW, "Forbid": Policy.FORBID, "Replace": Policy.REPLACE,
            "WaitForLast": Policy.WAIT_FOR_LAST}
CATCH_UP = {"Latest": CATCH_UP_LATEST, "All": CATCH_UP_ALL}
DAYLIGHT_SAVING = {rule.value: rule for rule in DaylightSaving}
ONE_OF_SCHEDULES = "give schedule (one expression) or schedules (a list), exactly one of them"  # the policy's rule


class SpecError(CronctlError):
    """A spec the core refuses; ``reason`` is a CamelCase Event/condition reason."""

    def __init__(self, field: str, message: str, reason: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class ScheduleSpec:
    job: JobSpec
    suspend: bool
    job_template: Mapping[str, Any]
    upcoming: int = DEFAULT_UPCOMING  # how many next fire times the status lists
    suspend_reason: str | None = None  # why it is suspended, as its owner wrote it
    pool: str | None = None  # the CronPool whose workers run its runs (spec.pool)


def read_spec(body: Mapping[str, Any], anchor: int) -> ScheduleSpec:
    """The core's view of a CronSchedule's spec; raises SpecError naming the field."""
    metadata, spec = body.get("metadata", {}), body.get("spec", {})
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if isinstance(name, str) and len(name) > MAX_NAME_LENGTH:  # the policy's rule, where it is not installed
        raise SpecError("metadata.name", NAME_TOO_LONG, "InvalidName")
    texts, expressions = _schedules(spec)
    expression = expressions[0]
    zone = _zone(spec, expressions)
    policy = _one_of(spec, "concurrencyPolicy", POLICIES, "Allow", "InvalidPolicy")
    catch_up = _one_of(spec, "catchUp", CATCH_UP, "Latest", "InvalidCatchUp")
    jitter = _jitter(spec, texts, expressions)
    exclude = spec.get("exclude", [])
    try:
        parse_exclusions(exclude, "spec.exclude")
    except ExpressionError as error:
        raise SpecError(error.field, error.reason, "InvalidExclusion") from None
    daylight_saving = _one_of(spec, "daylightSaving", DAYLIGHT_SAVING, "Vixie", "InvalidDaylightSaving")
    missed_limit = _in_range(spec, "missedSchedulesLimit", MAX_MISSED, 1, MAX_MISSED_LIMIT,
                             "InvalidMissedSchedulesLimit")
    upcoming = _in_range(spec, "upcomingTimes", DEFAULT_UPCOMING, 1, MAX_UPCOMING, "InvalidUpcomingTimes")
    suspend_reason = spec.get("suspendReason")
    if suspend_reason is not None and not isinstance(suspend_reason, str):
        raise SpecError("spec.suspendReason", f"{suspend_reason!r} is not text", "InvalidSuspendReason")
    deadline_seconds = spec.get("startingDeadlineSeconds")
    window = _window(spec)
    options = Options(
        # Schedule times are whole minutes: t >= now - s seconds is t >= now - floor(s / 60) minutes.
        starting_deadline=None if deadline_seconds is None else int(deadline_seconds) // 60,
        timeout=spec.get("timeoutMinutes"),
        keep_succeeded=spec.get("successfulJobsHistoryLimit", DEFAULT_KEEP_SUCCEEDED),
        keep_failed=spec.get("failedJobsHistoryLimit", DEFAULT_KEEP_FAILED),
        tz=zone,
        retries=spec.get("maxRetries", 0),
        retry_delay=spec.get("retryDelayMinutes", 0),
        catch_up=catch_up,
        jitter=jitter,
        missed_limit=missed_limit,
        past_limit=PAST_LIMIT_LAUNCH,  # as CronJob: an outage never strands a schedule
        more_schedules=tuple(each.text for each in expressions[1:]),
        exclude=tuple(exclude),
        daylight_saving=daylight_saving,
        window=window,
        max_runs=spec.get("maxRuns"),
        pause_on_failures=spec.get("pauseOnFailures"),
    )
    job = JobSpec(name=metadata["name"], expression=expression.text, policy=policy, options=options,
                  created_at=anchor, index=0)
    return ScheduleSpec(job=job, suspend=bool(spec.get("suspend", False)),
                        job_template=spec.get("jobTemplate", {}), upcoming=upcoming,
                        suspend_reason=suspend_reason or None, pool=_pool_name(spec))


def _one_of(spec: Mapping[str, Any], name: str, choices: Mapping[str, Any], default: str, reason: str) -> Any:
    """The core's value for the word ``spec.<name>`` gives (``default`` when absent)."""
    word = spec.get(name, default)
    value = choices.get(word) if isinstance(word, str) else None
    if value is None:
        words = list(choices)
        raise SpecError(f"spec.{name}", f"must be {', '.join(words[:-1])} or {words[-1]}", reason)
    return value


def _jitter(spec: Mapping[str, Any], texts: list[str], expressions: list[Expression]) -> int:
    """spec.jitterSeconds, checked against each expression (a rule's own .jitter() only alone)."""
    jitter = _in_range(spec, "jitterSeconds", 0, 0, MAX_JITTER_SECONDS, "InvalidJitter")
    for field, each in zip(texts, expressions):
        try:
            check_jitter_allowed(each, jitter)
        except CronctlError as error:
            raise SpecError(field, error.message, "InvalidJitter") from None
        if len(expressions) > 1 and rule_jitter(each) is not None:
            raise SpecError(field, "a rule in a list cannot set .jitter(); spec.jitterSeconds applies to all",
                            "InvalidJitter")
    return jitter


def _pool_name(spec: Mapping[str, Any]) -> str | None:
    pool = spec.get("pool")
    if pool is not None and not (isinstance(pool, str) and len(pool) <= 63 and DNS_LABEL.match(pool)):
        raise SpecError("spec.pool", f"{_shown(pool)} {NOT_A_DNS_LABEL}", "InvalidPool")
    return pool


def _zone(spec: Mapping[str, Any], expressions: list[Expression]) -> AnyZone:
    if spec.get("timeZone") is None:
        return UTC
    if any(isinstance(each, IntervalExpression) for each in expressions):
        raise SpecError("spec.timeZone", "an @every interval counts real time and takes no time zone",
                        "InvalidTimeZone")
    try:
        return parse_zone(spec["timeZone"], "spec.timeZone")
    except CronctlError as error:
        raise SpecError("spec.timeZone", error.message.partition(": ")[2], "UnknownTimeZone") from None


def _in_range(spec: Mapping[str, Any], key: str, default: int, low: int, high: int, reason: str) -> int:
    """A whole number field of the spec within its bounds; raises SpecError naming it."""
    value = spec.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise SpecError(f"spec.{key}", f"{value!r} is out of range {low}-{high}", reason)
    return value


WINDOW_FIELDS = ("startTime", "endTime")
WINDOW_FORMAT = "must be an RFC 3339 time with its offset, such as 2027-01-04T09:00:00Z"
END_AFTER_START = "must be after startTime"  # the policy's rule


def _window(spec: Mapping[str, Any]) -> Window:
    """spec.startTime and spec.endTime as the core's window; raises SpecError naming the field."""
    start, end = (_instant(spec, name) for name in WINDOW_FIELDS)
    if start is not None and end is not None and end <= start:
        raise SpecError("spec.endTime", END_AFTER_START, "InvalidWindow")
    return Window.of_seconds(start, end)


def _instant(spec: Mapping[str, Any], name: str) -> int | None:
    """An RFC 3339 instant with its offset, in UTC seconds (fractions dropped)."""
    text = spec.get(name)
    if text is None:
        return None
    when = None
    if isinstance(text, str):
        try:
            when = dt.datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
        except ValueError:
            pass
    if when is None or when.tzinfo is None:
        raise SpecError(f"spec.{name}", f"{_shown(text)} {WINDOW_FORMAT}", "InvalidWindow")
    return int(when.timestamp() // 1)


def backfill_preview(body: Mapping[str, Any], start: int, end: int, now: int,
                     admitted: bool = True) -> tuple[JobSpec, list[int]]:
    """The times the operator would run for ``cronctl.dev/backfill: <start>/<end>`` on this
    CronSchedule, read from the anchor it recorded (``status.anchorTime``; ``now`` before its
    first reconcile). ``admitted``: the API server has judged it (else its schema is judged
    first, on what ``kubectl get -o yaml`` adds left out). Raises CronctlError."""
    anchor = _minute_of((body.get("status") or {}).get("anchorTime"))
    anchor = now if anchor is None else anchor
    if admitted:
        spec = read_spec(body, anchor).job
    else:
        metadata = {key: value for key, value in (body.get("metadata") or {}).items()
                    if key in ("name", "namespace", "labels", "annotations")}
        spec = read_manifest({**{key: body[key] for key in ("apiVersion", "kind", "spec") if key in body},
                              "metadata": metadata}, anchor).job
    return spec, backfill.preview(spec, start, end, now)


def _minute_of(stamp: object) -> int | None:
    """The minute of an RFC 3339 UTC time as the operator writes them (``...T02:30:00Z``)."""
    return parse_time(stamp[:16]) if isinstance(stamp, str) else None


def _schedules(spec: Mapping[str, Any]) -> tuple[list[str], list[Expression]]:
    """The fields and compiled expressions of spec.schedule, or of each of spec.schedules."""
    if ("schedule" in spec) == ("schedules" in spec):
        raise SpecError("spec.schedule", ONE_OF_SCHEDULES, "InvalidSchedule")
    if "schedule" in spec:
        fields, texts = ["spec.schedule"], [spec["schedule"]]
    else:
        texts = spec["schedules"]
        if not isinstance(texts, list) or not 1 <= len(texts) <= MAX_SCHEDULES:
            raise SpecError("spec.schedules", f"must be a list of 1-{MAX_SCHEDULES} expressions", "InvalidSchedule")
        fields = [f"spec.schedules[{i}]" for i in range(len(texts))]
    expressions = []
    for field, text in zip(fields, texts):
        try:
            expressions.append(parse_expression(text))
        except CronctlError as error:
            raise SpecError(field, error.message, "InvalidSchedule") from None
    return fields, expressions


def read_manifest(body: Mapping[str, Any], anchor: int) -> ScheduleSpec:
    """A CronSchedule no API server has checked: its schema first, then the core's checks,
    on the object as the API server would store it (no nulls; 2.0 is the whole number 2)."""
    problems = schema_problems(body)
    if problems:
        raise SpecError(problems[0].field, problems[0].reason, "InvalidManifest")
    return read_spec(_as_stored(body), anchor)


@dataclass(frozen=True)
class SchemaProblem:
    field: str  # the path in the object: spec.timeoutMinutes, spec.jobTemplate.spec.template
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


MAX_NAME_LENGTH = 52  # the policy's rule on metadata.name, so that the Job names made from it stay valid
NAME_TOO_LONG = f"at most {MAX_NAME_LENGTH} characters, so that Job names derived from it stay valid"


def schema_problems(body: Mapping[str, Any]) -> list[SchemaProblem]:
    """What the API server refuses in this object by the CRD's schema and the policy's rules, first
    field first.

    A null value is as good as none (the API server prunes nulls of fields not
    marked nullable before it validates).
    """
    instance = _as_stored(body)
    problems = [problem for error in _validator().iter_errors(instance) for problem in _problems(error)]
    name = (instance.get("metadata") or {}).get("name") if isinstance(instance.get("metadata"), dict) else None
    spec = instance.get("spec")
    if isinstance(spec, dict) and ("schedule" in spec) == ("schedules" in spec):
        problems.append(SchemaProblem("spec.schedule", ONE_OF_SCHEDULES))
    if isinstance(spec, dict):
        problems.extend(_window_problems(spec))
        problems.extend(_zone_problems(spec))
    if isinstance(name, str) and len(name) > MAX_NAME_LENGTH:
        problems.append(SchemaProblem("metadata.name", NAME_TOO_LONG))
    return sorted(set(problems), key=lambda problem: problem.field)


def _window_problems(spec: Mapping[str, Any]) -> list[SchemaProblem]:
    """What the API server's date-time format and the policy's rule on the window refuse."""
    problems, instants = [], []
    for name in WINDOW_FIELDS:
        if isinstance(spec.get(name), str):
            try:
                instants.append(_instant(spec, name))
            except SpecError as error:
                problems.append(SchemaProblem(error.field, error.message.partition(": ")[2]))
                instants.append(None)
        else:
            instants.append(None)
    start, end = instants
    if start is not None and end is not None and end <= start:
        problems.append(SchemaProblem("spec.endTime", END_AFTER_START))
    return problems


def _zone_problems(spec: Mapping[str, Any]) -> list[SchemaProblem]:
    """What the policy's rule on spec.timeZone refuses: a name not in tzdata's list, an offset
    the operator does not take (the core reads a name the host's zoneinfo has, such as
    posix/Europe/Berlin, but the API server refuses it: so does this reader)."""
    zone = spec.get("timeZone")
    offsets, names = crd_zones()
    if not isinstance(zone, str) or offsets.fullmatch(zone) or zone in names:
        return []
    return [SchemaProblem("spec.timeZone", f"unknown time zone {zone!r}: name a zone of the tz database, such "
                                           "as Europe/Berlin or UTC, or a UTC offset such as +05:30")]


ZONE_LIST = "object.spec.timeZone in ["  # how the policy's rule on spec.timeZone opens its list of zones


@lru_cache(maxsize=1)
def crd_zones() -> tuple[re.Pattern[str], frozenset[str]]:
    """(the offsets, the zone names) that the policy's rule on spec.timeZone takes: the pattern it
    matches and the names it lists (tzdata's, written by scripts/sync-chart-crd.py)."""
    [rule] = [each["expression"] for each in policy()["spec"]["validations"] if ZONE_LIST in each["expression"]]
    pattern = re.search(r"object\.spec\.timeZone\.matches\('([^']+)'\)", rule)
    assert pattern is not None, "the policy's rule on spec.timeZone matches an offset pattern"
    return re.compile(pattern.group(1)), frozenset(re.findall(r"'([^']+)'", rule.partition(ZONE_LIST)[2]))


def policy() -> dict[str, Any]:
    """The CronSchedule's ValidatingAdmissionPolicy (``crds/cronschedule-policy.yaml``, whose first
    document it is): the rules the CRD's schema leaves out, judged at create and at a spec change."""
    text = resources.files(__package__).joinpath("cronschedule-policy.yaml").read_text(encoding="utf-8")
    loaded: dict[str, Any] = next(yaml.safe_load_all(text))
    return loaded


def crd(file: str = "cronschedule-crd.yaml") -> dict[str, Any]:
    """A CustomResourceDefinition shipped in the package: the CronSchedule's (``crds/cronschedule.yaml``)
    unless ``file`` names another (``cronpool-crd.yaml``)."""
    text = resources.files(__package__).joinpath(file).read_text(encoding="utf-8")
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


@lru_cache(maxsize=2)
def _validator(file: str = "cronschedule-crd.yaml") -> jsonschema.protocols.Validator:
    schema = crd(file)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return jsonschema.Draft202012Validator(_as_json_schema(schema))


def _as_json_schema(node: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAPI v3 structural schema as JSON schema: unknown fields refused where the
    CRD does not preserve them (strict field validation), Kubernetes' own extensions left
    out (its CEL rules are judged here and by the core). Like the API server, it takes an
    integer's ``format`` (int32, int64) as a name, not a bound."""
    converted: dict[str, Any] = {key: value for key, value in node.items()
                                 if not key.startswith("x-kubernetes-") and key not in ("properties", "items")}
    if "properties" in node:
        converted["properties"] = {name: _as_json_schema(child) for name, child in node["properties"].items()}
        if not node.get("x-kubernetes-preserve-unknown-fields"):
            converted["additionalProperties"] = False
    if "items" in node:
        converted["items"] = _as_json_schema(node["items"])
    return converted


def _problems(error: jsonschema.ValidationError, kind_name: str = KIND) -> Iterable[SchemaProblem]:
    """One schema error in the API server's words: a problem for each field missing or unknown,
    else one for the value."""
    where = _path(error.absolute_path)
    instance: Any = error.instance
    names: Any = error.validator_value
    if error.validator == "required":
        return [SchemaProblem(_join(where, name), "is required") for name in names
                if isinstance(instance, dict) and name not in instance]
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        return [SchemaProblem(_join(where, name), f"is not a field of a {kind_name} (unknown field)")
                for name in sorted(key for key in instance if key not in known)]
    reason = _value_problem(error, where)
    return [SchemaProblem(where, reason) if reason is not None else SchemaProblem(where or "(object)", error.message)]


_BOUNDS = {"minimum": "at least", "maximum": "at most", "minLength": "at least", "maxLength": "at most"}


def _value_problem(error: jsonschema.ValidationError, where: str) -> str | None:
    """What is wrong with the value at ``where``, in the API server's words; None where jsonschema's
    own message says it best."""
    instance: Any = error.instance
    value: Any = error.validator_value
    kind = error.validator
    if kind == "type":
        return f"must be {_a(value)}, not {_shown(instance)}"
    if kind == "enum":
        return f"{_shown(instance)} must be one of {', '.join(map(str, value))}"
    if kind in ("minimum", "maximum"):
        return f"{_shown(instance)} must be {_BOUNDS[kind]} {value}"
    if kind in ("minLength", "maxLength"):
        return f"must be {_BOUNDS[kind]} {value} characters long"
    if kind == "pattern":
        return _pattern_problem(instance, value, where)
    return None


def _pattern_problem(instance: Any, pattern: str, where: str) -> str | None:
    """A window's time or a DNS label in the words of its format; None for another pattern."""
    if where in (f"spec.{name}" for name in WINDOW_FIELDS):
        return f"{_shown(instance)} {WINDOW_FORMAT}"
    if pattern == DNS_LABEL.pattern:
        return f"{_shown(instance)} {NOT_A_DNS_LABEL}"
    return None


# -- CronPool ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolSpec:
    """A CronPool: ``workers`` runs of its schedules at once, at most."""

    name: str
    workers: int


POOL_CRD_FILE = "cronpool-crd.yaml"


def pool_problems(body: Mapping[str, Any]) -> list[SchemaProblem]:
    """What the API server refuses in a CronPool by its CRD's schema, first field first."""
    instance = _as_stored(body)
    problems = {problem for error in _validator(POOL_CRD_FILE).iter_errors(instance)
                for problem in _problems(error, POOL_KIND)}
    return sorted(problems, key=lambda problem: problem.field)


def read_pool(body: Mapping[str, Any]) -> PoolSpec:
    """A CronPool no API server has checked, or one it admitted; raises SpecError naming the field."""
    problems = pool_problems(body)
    if problems:
        raise SpecError(problems[0].field, problems[0].reason, "InvalidManifest")
    return PoolSpec(str(body["metadata"]["name"]), int(body["spec"]["workers"]))


def _path(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _a(kind: object) -> str:
    return {"integer": "a whole number", "string": "a string", "boolean": "true or false",
            "object": "a mapping", "array": "a list"}.get(str(kind), str(kind))


def _shown(value: object) -> str:
    return json.dumps(value, default=str)


def as_stored(value: Any) -> Any:
    """The object as the API server stores it, which :func:`read_spec` reads (for ``cronctl lint``)."""
    return _as_stored(value)


def _as_stored(value: Any) -> Any:
    """What the API server keeps of a value: nulls pruned, whole floats read as integers."""
    if isinstance(value, Mapping):
        return {key: _as_stored(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_as_stored(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML parse error in one line: ``line 3 column 7: expected ',' or ']', but got ':'``."""
    mark = getattr(error, "problem_mark", None)
    where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
    problem = getattr(error, "problem", None) or " ".join(str(error).split())
    return f"{where}{problem}"
