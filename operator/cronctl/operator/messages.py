"""What the Events of a reconcile say: one function per kind of news, text only.

The plan decides which Events a reconcile posts (what the core's result says
is news); this module words them. Messages name the run, its Job and the
schedule time in RFC 3339, so that ``kubectl describe`` reads as a log.
"""

from __future__ import annotations

from typing import Sequence

from ..core.failures import PAUSED_ON_FAILURES
from ..core.passed_over import MAX_COUNTED, PassedOver
from ..core.state import Backfill, FAILED, SUCCEEDED, TIMED_OUT
from ..core.staging import DEADLINE, SUPERSEDED
from ..core.tick import MAX_COUNTED_DROPPED, Launch, Overflow
from .manifests import EventSpec
from .observe import RunView
from .resource import rfc3339, rfc3339_seconds


def normal(reason: str, message: str) -> EventSpec:
    return EventSpec("Normal", reason, message)


def warning(reason: str, message: str) -> EventSpec:
    return EventSpec("Warning", reason, message)


def ended(run: RunView, gone: bool) -> EventSpec:
    if gone:
        return warning("JobGone", f"run {run.number}: its Job {run.name} was deleted; counted as failed")
    reason = {SUCCEEDED: "Succeeded", FAILED: "Failed", TIMED_OUT: "TimedOut"}[run.state]
    why = f": {run.failure}" if run.failure is not None and run.state != SUCCEEDED else ""
    return EventSpec("Normal" if run.state == SUCCEEDED else "Warning", reason,
                     f"run {run.number} ({run.name}) {run.state.replace('_', ' ')} at {rfc3339(run.finished or 0)}{why}")


def attempt_failed(run: RunView, next_attempt: int, due: int) -> EventSpec:
    return warning("AttemptFailed", f"attempt {run.attempt} of run {run.number} ({run.job}) failed; "
                   f"attempt {next_attempt} at {rfc3339(due)}")


def retried(run: RunView) -> EventSpec:
    return normal("Retried", f"started attempt {run.attempt} of run {run.number} ({run.job}) for "
                  f"{rfc3339(run.scheduled)}")


_MISSED = {SUPERSEDED: "a newer schedule time came before its Job could be released",
           DEADLINE: "its startingDeadlineSeconds passed before its Job could be released"}


def missed(nominal: int, why: str) -> EventSpec:
    return warning("MissedSchedule", f"{rfc3339(nominal)} was not started: {_MISSED[why]}")


def passed_over(times: PassedOver) -> EventSpec:
    """The times a launch passed over (``core.passed_over``): one Warning, once."""
    count = f"at least {times.count}" if times.count >= MAX_COUNTED else str(times.count)
    which = (rfc3339(times.earliest) if times.count == 1
             else f"from {rfc3339(times.earliest)} to {rfc3339(times.latest)}")
    message = (f"{count} schedule time{'s' if times.count != 1 else ''} {which} "
               f"{'was' if times.count == 1 else 'were'} not started: a newer time was launched in their place "
               "(catchUp: Latest runs only the latest missed time)")
    return EventSpec("Warning", "MissedSchedule", message, times=times.count)


def launched(launch: Launch, name: str, held_until: int | None) -> EventSpec:
    note = {"manual": " (manual)", "catch-up": " (catch-up)", "backfill": " (backfill)"}.get(launch.reason, "")
    if held_until is not None:
        note += f"; it starts at {rfc3339_seconds(held_until)} (jitter)"
    return normal("Launched", f"launched run {launch.number} ({name}) for {rfc3339(launch.scheduled_for)}{note}")


def released(launch: Launch, name: str, held_until: int | None) -> EventSpec:
    note = ("released its staged Job" if held_until is None
            else f"its staged Job starts at {rfc3339_seconds(held_until)} (jitter)")
    reason = " (catch-up)" if launch.reason == "catch-up" else ""
    return normal("Launched", f"launched run {launch.number} ({name}) for "
                  f"{rfc3339(launch.scheduled_for)}{reason}; {note}")


def replaced(run_id: str) -> EventSpec:
    return normal("Replaced", f"deleted the active run {run_id}")


def skipped(nominal: int, active: str) -> EventSpec:
    return normal("Skipped", f"skipped {rfc3339(nominal)}: {active} is still active (Forbid)")


def queued(nominal: int, reason: str) -> EventSpec:
    return normal("Queued", f"{rfc3339(nominal)} ({reason}) waits for the active run (WaitForLast)")


def coalesced(nominal: int) -> EventSpec:
    return normal("Coalesced", f"{rfc3339(nominal)} gave its place to a newer scheduled time (WaitForLast)")


def overflow_message(overflow: Overflow, launched_times: Sequence[int]) -> str:
    """How many times were missed, the limit, what was launched, how many were dropped."""
    limit = overflow.limit
    least = "at least " if overflow.dropped >= MAX_COUNTED_DROPPED else ""
    if overflow.dropped:
        missed_times = (f"{least}{limit + overflow.dropped} schedule times were missed, "
                        f"more than missedSchedulesLimit {limit}")
    else:
        missed_times = f"more than {limit} schedule times were missed (missedSchedulesLimit)"
    what = ("launched " + ", ".join(rfc3339(t) for t in launched_times) if launched_times
            else "nothing launched yet: a run is still active")
    dropped = f"; dropped the {least}{overflow.dropped} older ones (catchUp All)" if overflow.dropped else ""
    return f"{missed_times}; {what}{dropped}"


def overflowed(message: str) -> EventSpec:
    return warning("TooManyMissedSchedules", message)


def suspended(reason: str | None) -> EventSpec:
    return normal("Suspended", "suspended" + (f": {reason}" if reason else
                                              ": nothing fires until spec.suspend is false"))


def paused_on_failures(message: str) -> EventSpec:
    return warning(PAUSED_ON_FAILURES, message)


POOL_NOT_FOUND = "PoolNotFound"  # the Ready condition's reason and the Warning's


def pool_not_found_message(pool: str, namespace: str) -> str:
    return (f'CronPool "{pool}" (spec.pool) does not exist in namespace {namespace}: its runs wait, '
            "suspended, until it does")


def pool_not_found(pool: str, namespace: str) -> EventSpec:
    return warning(POOL_NOT_FOUND, pool_not_found_message(pool, namespace))


def resumed() -> EventSpec:
    return normal("Resumed", "resumed: the next fire times count from now (missed ones are not caught up)")


def _times(count: int) -> str:
    return f"{count} schedule time{'' if count == 1 else 's'}"


def backfill_started(backfill: Backfill) -> EventSpec:
    return normal("BackfillStarted", f"backfill of {_times(backfill.total)} from {rfc3339(backfill.start)} "
                  f"to {rfc3339(backfill.end)}, oldest first")


def backfill_refused(request: str, why: str) -> EventSpec:
    return warning("BackfillRefused", f"backfill {request!r} refused: {why}")


def backfill_complete(backfill: Backfill) -> EventSpec:
    runs = f"{backfill.launched} run{'' if backfill.launched == 1 else 's'}"
    return normal("BackfillComplete", f"backfill of {_times(backfill.total)} from {rfc3339(backfill.start)} "
                  f"to {rfc3339(backfill.end)} complete: {runs} launched")
