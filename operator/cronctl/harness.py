"""The offline harness: ``run(operations)`` over the in-memory controller.

A thin adapter (contract: shared/spec/run-harness.md): it checks the shape of
each operation, parses its time, calls the controller and turns decisions
and refusals into the contract's strings and objects. It never raises.

The cyclic garbage collector is paused for the length of one ``run()``: the
objects a batch makes (jobs, runs, decisions) mostly live until it ends or
are freed by their reference counts, so the collector's passes over them
were wasted work, measured at 18% of the seed's Part 5 fleet workload (b)
and 23% of (b'). Collection resumes (and catches up) when the batch is done,
as the operator does around its busy second (``operator.loop``).
"""

from __future__ import annotations

import gc
from typing import Any, Callable

from .core.controller import Controller
from .core.errors import Code, CronctlError
from .core.schedule import IntervalExpression, next_runs, parse_seed_expression
from .core.tick import Decision, Launch, Overflow, Replace, Skip
from .core.times import format_time, parse_time
from .core.zones import UTC, parse_offset

DIGEST_MODULUS = 1_000_000_007
MAX_NEXT_RUNS = 50

# operation name -> (fewest, most) arguments after the name
ARITY: dict[str, tuple[int, int]] = {
    "next_runs": (3, 4),
    "create_job": (4, 5),
    "tick": (1, 2),
    "finish": (3, 3),
    "job_status": (1, 1),
    "run": (1, 1),
    "history": (1, 1),
    "bulk_create": (5, 6),
}


def run(operations: object) -> list[Any]:
    """Execute operations in order against a fresh controller; one result each."""
    if not isinstance(operations, list):
        return []
    controller = Controller()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return [_result(controller, operation) for operation in operations]
    finally:
        if was_enabled:
            gc.enable()


def _result(controller: Controller, operation: object) -> Any:
    try:
        return _execute(controller, operation)
    except CronctlError as error:
        return _error(error.code)
    except Exception:  # the harness never raises; an input we did not foresee is refused
        return _error(Code.INVALID_ARGUMENTS)


def _error(code: Code) -> str:
    return f"error: {code.value}"


def _execute(controller: Controller, operation: object) -> Any:
    if not isinstance(operation, list) or not operation:
        raise CronctlError("an operation is a non-empty list", Code.INVALID_ARGUMENTS)
    name, args = operation[0], operation[1:]
    if not isinstance(name, str) or name not in ARITY:
        raise CronctlError(f"unknown operation {name!r}", Code.UNKNOWN_OPERATION)
    fewest, most = ARITY[name]
    if not fewest <= len(args) <= most or (name == "tick" and len(args) == 2 and args[1] != "counts"):
        raise CronctlError(f"{name} takes {fewest}-{most} arguments", Code.INVALID_ARGUMENTS)
    return _HANDLERS[name](controller, *args)


def _time(value: object) -> int:
    minute = parse_time(value)
    if minute is None:
        raise CronctlError(f"{value!r} is not a time YYYY-MM-DDTHH:MM in 2000-2199", Code.INVALID_TIME)
    return minute


def _next_runs(controller: Controller, expr: object, after: object, count: object,
               *tz: object) -> list[str]:
    expression = parse_seed_expression(expr)
    start = _time(after)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_NEXT_RUNS:
        raise CronctlError(f"count must be 1-{MAX_NEXT_RUNS}", Code.INVALID_COUNT)
    zone = UTC
    if tz:
        zone = parse_offset(tz[0])
        if isinstance(expression, IntervalExpression):
            raise CronctlError("tz: an @every interval takes no time zone", Code.INVALID_TIMEZONE)
    times = next_runs(expression, start, count, zone)
    if not times:
        raise CronctlError("never fires", Code.NEVER_FIRES)
    return [format_time(t) for t in times]


def _create_job(controller: Controller, now: object, name: object, expr: object, policy: object,
                options: object = None) -> bool:
    controller.create_job(_time(now), name, expr, policy, options)
    return True


def _bulk_create(controller: Controller, now: object, prefix: object, count: object, exprs: object,
                 policy: object, options: object = None) -> int:
    return len(controller.bulk_create(_time(now), prefix, count, exprs, policy, options))


def _tick(controller: Controller, now: object, *mode: object) -> Any:
    decisions = controller.tick(_time(now))
    if mode:
        return _counts(controller, decisions)
    return [_event(decision) for decision in decisions]


def _event(decision: Decision) -> str:
    if isinstance(decision, Launch):
        return f"launch {decision.run_id} for {format_time(decision.scheduled_for)}"
    if isinstance(decision, Skip):
        return f"skip {decision.job} for {format_time(decision.scheduled_for)} ({decision.reason})"
    if isinstance(decision, Replace):
        return f"replace {decision.run_id}"
    assert isinstance(decision, Overflow)
    return f"overflow {decision.job}"


def _counts(controller: Controller, decisions: list[Decision]) -> dict[str, int]:
    # By exact type, skips first: a long outage's Forbid jobs skip at every tick (Part 5's daily ticks).
    launched = skipped = replaced = overflowed = digest = 0
    jobs = controller.state.jobs
    for decision in decisions:
        kind = type(decision)
        if kind is Skip:
            skipped += 1
        elif kind is Launch:
            launched += 1
            digest += decision.scheduled_for * (jobs[decision.job].spec.index + 1)  # type: ignore[union-attr]
        elif kind is Replace:
            replaced += 1
        else:
            assert kind is Overflow
            overflowed += 1
    return {"launched": launched, "skipped": skipped, "replaced": replaced, "overflowed": overflowed,
            "digest": digest % DIGEST_MODULUS}


def _finish(controller: Controller, now: object, run_id: object, outcome: object) -> bool:
    controller.finish(_time(now), run_id, outcome)
    return True


def _job_status(controller: Controller, name: object) -> dict[str, Any]:
    status = controller.job_status(name)
    return {"last_schedule": _time_or_none(status.last_schedule),
            "next_fire": _time_or_none(status.next_fire),
            "active": status.active, "launched": status.launched}


def _run(controller: Controller, run_id: object) -> dict[str, Any]:
    run = controller.find_run(run_id)
    return {"id": run.id, "job": run.job, "state": run.state,
            "scheduled_for": format_time(run.scheduled_for), "launched_at": format_time(run.launched_at),
            "finished_at": _time_or_none(run.finished_at)}


def _history(controller: Controller, name: object) -> list[list[str]]:
    return [[run.id, run.state, format_time(run.finished_at)]  # type: ignore[arg-type]
            for run in controller.history(name)]


def _time_or_none(minute: int | None) -> str | None:
    return None if minute is None else format_time(minute)


_HANDLERS: dict[str, Callable[..., Any]] = {
    "next_runs": _next_runs,
    "create_job": _create_job,
    "tick": _tick,
    "finish": _finish,
    "job_status": _job_status,
    "run": _run,
    "history": _history,
    "bulk_create": _bulk_create,
}
