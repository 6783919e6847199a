"""What a user asks of one job: its name, expression, policy and options.

Validation lives here so that every driver refuses the same inputs with the
same code and a message naming the field and the reason. Defaults are
CronJob's: keep 3 succeeded and 1 failed run, no deadline, no timeout.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from .errors import Code, CronctlError, OptionError
from .dst import DaylightSaving
from .merged import MergedExpression, merged_expression
from .schedule import Expression, IntervalExpression, Timeline, parse_expression, parse_seed_expression
from .window import Window
from .zones import UTC, AnyZone, parse_offset

MAX_NAME_LENGTH = 40
DEFAULT_KEEP_SUCCEEDED = 3
DEFAULT_KEEP_FAILED = 1
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class Policy(str, enum.Enum):
    ALLOW = "allow"
    FORBID = "forbid"
    REPLACE = "replace"
    # One scheduled firing waits for the active run; a newer one takes its place
    # (the older is coalesced). Not a policy of the run() harness.
    WAIT_FOR_LAST = "wait-for-last"


HARNESS_POLICIES = (Policy.ALLOW, Policy.FORBID, Policy.REPLACE)
CATCH_UP_LATEST = "latest"  # the most recent missed time only (CronJob's behaviour)
CATCH_UP_ALL = "all"  # every missed time, in order, through the overlap policy

MAX_MISSED = 100  # by default, more missed schedule times than this is an overflow
# What an overflow does: the seed's rule (the run() harness's) reports it and
# launches nothing until fewer times are missed; CronJob's rule (the operator's
# and the runner's) reports it and still launches the newest missed times.
PAST_LIMIT_HOLD = "hold"
PAST_LIMIT_LAUNCH = "launch"


def check_name(name: object, field_name: str = "name") -> str:
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME_LENGTH \
            or not name.isascii() or _NAME.fullmatch(name) is None:
        raise CronctlError(f"{field_name}: {name!r} must be 1-{MAX_NAME_LENGTH} lower-case letters "
                           "and digits in groups joined by single hyphens", Code.INVALID_NAME)
    return name


def parse_policy(policy: object) -> Policy:
    if isinstance(policy, str):
        for member in HARNESS_POLICIES:
            if member.value == policy:
                return member
    raise CronctlError(f"policy: {policy!r} is not one of allow, forbid, replace", Code.INVALID_POLICY)


@dataclass(frozen=True)
class Options:
    starting_deadline: int | None = None
    timeout: int | None = None
    keep_succeeded: int = DEFAULT_KEEP_SUCCEEDED
    keep_failed: int = DEFAULT_KEEP_FAILED
    tz: AnyZone = field(default=UTC)  # the harness allows fixed offsets only (parse_options)
    # Attempts after a failed one (0: none). The run() harness never sets
    # these: its contract has no such option, so its results stay as they were.
    retries: int = 0
    retry_delay: int = 0  # minutes from a failed attempt to the next
    catch_up: str = CATCH_UP_LATEST
    jitter: int = 0  # seconds (0-3600) a scheduled firing may start after its nominal time
    missed_limit: int = MAX_MISSED  # more missed times than this is an overflow
    past_limit: str = PAST_LIMIT_HOLD  # what an overflow does (PAST_LIMIT_HOLD or PAST_LIMIT_LAUNCH)
    # The job's times beyond its one expression (never set by the run() harness): more
    # expressions merged with it, exclusions, and the daylight-saving rule (core/merged.py).
    more_schedules: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    daylight_saving: DaylightSaving = DaylightSaving.VIXIE
    # Temporal's start_time, end_time and limited_actions (never set by the run() harness):
    # no schedule time outside the window (window.py), at most max_runs scheduled runs.
    window: Window = Window()
    max_runs: int | None = None
    pause_on_failures: int | None = None  # pause at this many failed runs in a row (failures.py)

    def to_json(self) -> dict[str, object]:
        shown: dict[str, object] = {
            "starting_deadline": self.starting_deadline, "timeout": self.timeout,
            "keep_succeeded": self.keep_succeeded, "keep_failed": self.keep_failed,
            "tz": self.tz.name, "retries": self.retries, "retry_delay": self.retry_delay,
            "catch_up": self.catch_up, "jitter": self.jitter, "missed_limit": self.missed_limit,
            "past_limit": self.past_limit}
        if self.more_schedules or self.exclude or self.daylight_saving is not DaylightSaving.VIXIE:
            shown.update(more_schedules=list(self.more_schedules), exclude=list(self.exclude),
                         daylight_saving=self.daylight_saving.value)
        if self.window:
            shown["window"] = [self.window.first, self.window.last]
        if self.max_runs is not None:
            shown["max_runs"] = self.max_runs
        if self.pause_on_failures is not None:
            shown["pause_on_failures"] = self.pause_on_failures
        return shown


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive_or_null(key: str, value: object) -> int | None:
    if value is None:
        return None
    if not _is_int(value) or value < 1:  # type: ignore[operator]
        raise OptionError(key, f"{value!r} must be a positive whole number of minutes or null")
    return value  # type: ignore[return-value]


def _count(key: str, value: object) -> int:
    if not _is_int(value) or value < 0:  # type: ignore[operator]
        raise OptionError(key, f"{value!r} must be a whole number >= 0")
    return value  # type: ignore[return-value]


def parse_options(options: object, expression: Expression) -> Options:
    """The options object of create_job / bulk_create; None or absent means every default."""
    if options is None:
        return Options()
    if not isinstance(options, dict):
        raise OptionError("options", "must be an object or null")
    unknown = sorted(str(key) for key in options if key not in _OPTION_KEYS)
    if unknown:
        raise OptionError(unknown[0], "is not an option (known: " + ", ".join(_OPTION_KEYS) + ")")
    parsed: dict[str, object] = {}
    if "starting_deadline" in options:
        parsed["starting_deadline"] = _positive_or_null("starting_deadline", options["starting_deadline"])
    if "timeout" in options:
        parsed["timeout"] = _positive_or_null("timeout", options["timeout"])
    for key in ("keep_succeeded", "keep_failed"):
        if key in options:
            parsed[key] = _count(key, options[key])
    if "tz" in options:
        check_zone_allowed(expression, "tz")
        try:
            parsed["tz"] = parse_offset(options["tz"])
        except CronctlError as error:
            raise OptionError("tz", error.message.partition(": ")[2]) from None
    return Options(**parsed)  # type: ignore[arg-type]


def check_zone_allowed(expression: Expression, field_name: str) -> None:
    if isinstance(expression, IntervalExpression):
        raise OptionError(field_name, "an @every interval counts real time and takes no time zone")


_OPTION_KEYS = ("starting_deadline", "timeout", "keep_succeeded", "keep_failed", "tz")


@dataclass(frozen=True)
class JobSpec:
    """A validated job: everything its decisions depend on besides its state."""

    name: str
    expression: str
    policy: Policy
    options: Options
    created_at: int
    index: int  # 0-based position among all successful creations

    @property
    def compiled(self) -> Expression | MergedExpression:
        """The job's schedule times: its expressions, less exclusions and what is outside its window."""
        return self._compiled(self.options.window)

    @property
    def unbounded(self) -> Expression | MergedExpression:
        """The same without the window: whether the expressions fire at all, a window aside."""
        return self._compiled(Window())

    def timeline(self, anchor: int | None = None) -> Timeline:
        """Its schedule times, counted from ``anchor`` (its creation by default): the one way every
        driver builds them."""
        return Timeline(self.compiled, self.created_at if anchor is None else anchor, self.options.tz)

    def fires_from(self, anchor: int) -> bool:
        """Whether its expressions have a time after ``anchor``, its window aside: a job whose
        window has closed (or not opened within the horizon) has ended; it is not invalid."""
        return Timeline(self.unbounded, anchor, self.options.tz).fires

    def _compiled(self, window: Window) -> Expression | MergedExpression:
        options = self.options
        if not options.more_schedules and not options.exclude \
                and options.daylight_saving is DaylightSaving.VIXIE and not window:
            return parse_expression(self.expression)
        return merged_expression((self.expression, *options.more_schedules), options.exclude,
                                 options.daylight_saving, window)


MAX_BULK = 5000  # the most jobs one bulk_create makes


def read_job(now: int, name: object, expression: object, policy: object, options: object,
             index: int) -> JobSpec:
    """The job a harness's create_job asks for, each field checked in the seed's order
    (name, expression, policy, options); ``index``: its place in creation order."""
    check_name(name)
    compiled = parse_seed_expression(expression)
    parsed_policy = parse_policy(policy)
    parsed_options = parse_options(options, compiled)
    assert isinstance(name, str) and isinstance(expression, str)
    return JobSpec(name, expression, parsed_policy, parsed_options, now, index)


def read_bulk(now: int, prefix: object, count: object, expressions: object, policy: object,
              options: object, first_index: int) -> tuple[list[JobSpec], int]:
    """The jobs a bulk_create asks for, <prefix>-0 .. <prefix>-<count-1>, job i with
    expressions[i % len], and how many of the expressions they use (the first ``count``).

    ``options`` is the harness's options object (a dict, or None for every default), or
    ``Options`` a driver has already read, with the fields the harness lacks (``cronctl fleet
    preview`` reads them from the fleet's CronSchedule manifests). An ``Options`` value cannot
    tell a zone given as ``+00:00`` from none: with it, a zone other than UTC with an ``@every``
    expression is refused (its reader refuses any zone with one)."""
    check_name(prefix, "prefix")
    if not _is_int(count) or not 1 <= count <= MAX_BULK:  # type: ignore[operator]
        raise CronctlError(f"count: {count!r} must be a whole number from 1 to {MAX_BULK}", Code.INVALID_COUNT)
    assert isinstance(prefix, str) and isinstance(count, int)
    if not isinstance(expressions, list) or not expressions:
        raise CronctlError("exprs: must be a non-empty list of expressions", Code.INVALID_EXPRESSION)
    compiled = [parse_seed_expression(text) for text in expressions]
    parsed_policy = parse_policy(policy)
    used = compiled[:count]
    parsed_options = options if isinstance(options, Options) else parse_options(options, used[0])
    if (isinstance(options, dict) and "tz" in options) or (isinstance(options, Options) and options.tz != UTC):
        for expression in used:
            check_zone_allowed(expression, "tz")
    names = [check_name(f"{prefix}-{i}") for i in range(count)]
    return [JobSpec(name, expressions[i % len(expressions)], parsed_policy, parsed_options, now, first_index + i)
            for i, name in enumerate(names)], len(used)
