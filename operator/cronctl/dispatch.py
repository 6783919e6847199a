"""The dispatcher of seed 001: occurrences, attempts, retries and workers.

This module owns ``CronJobScheduler``, the in-memory model that turns
"first run + fixed interval" job schedules into occurrences and pairs pending
occurrences with idle workers, exactly as seed 001 describes it, together with
the harness that replays a JSON list of the seed's Java calls against it
(``run_calls``, and ``main`` behind ``python -m cronctl dispatch``). It is
standard library only, does no I/O outside ``main`` and never reads a clock:
time is whatever the caller passes.

Semantics the seed leaves to the language (shared/spec/dispatch-harness.md):

* Order of job ids and worker ids is Java's ``String.compareTo``: UTF-16 code
  units. ``id.encode("utf-16-be", "surrogatepass")`` compares the same way as
  bytes, so that encoding is the sort key.
* Identity of ids is Java's ``String.equals``: two ids are the same id when
  their UTF-16 code units are equal. Only a Python string that spells a
  surrogate pair as two lone surrogates differs from Python equality here.
  Ids are stored and returned exactly as first given, never trimmed.
* Blank is Java's ``String.isBlank``: empty, or every code point satisfies
  ``Character.isWhitespace`` (see ``_JAVA_WHITESPACE``).
* Pairing: one ``dispatch_jobs`` call first creates every due occurrence,
  then walks the pending occurrences (QUEUED and RETRY_PENDING together) in
  (scheduled time, job id) order, giving each the smallest available worker
  id, until either runs out.

Arguments outside the Java signature or the seed's model raise instead of
answering, and change nothing, not even the current time: ``TypeError`` for
a wrong type (ids must be ``str``, numbers ``int`` but not ``bool``,
``successful`` a ``bool``), ``ValueError`` for a number outside its Java type
(``long``: -2**63..2**63-1, ``int``: -2**31..2**31-1) or, for the values that
define state (current time, first run time, interval, max retries), below 0.
The seed's upper bounds (10**12 s, interval 10**9, 10 retries) are not
enforced; larger values keep a well-defined meaning. Values that only name
something (a scheduled time, an attempt number) may be anything in range: a
name that matches nothing gives ``False`` or ``""`` as the seed says. The
seed promises nondecreasing times; if a caller breaks that, each call still
means what its own arguments say (the clock is set, not maxed).

Costs: ``schedule_job`` is O(log J); ``dispatch_jobs`` is O((C + A) log n)
for C occurrences created and A attempts assigned, never a scan of all jobs
and never a step through intervals that creates nothing; ``complete_job``
and ``get_job_status`` are O(log n) plus the id's length.

The harness (``run_calls``) takes a list of calls ``[methodName, *args]``
with the seed's Java names and returns one result per call: ``bool``,
``list[str]`` or ``str`` as the method returns. It never raises. A call it
cannot run yields a string instead:

* ``"error: invalid call"`` when the call is not a non-empty list whose first
  item is a string;
* ``"error: unknown method"`` when that string is not one of the five methods
  (or the constructor, below);
* ``"error: invalid arguments"`` for the wrong number of arguments or any
  argument the class rejects as above (a JSON ``1.0`` is not an integer);
* ``"error: internal error"`` if the scheduler itself failed, which would be
  a bug: the call is reported and the run goes on.

``["CronJobScheduler"]`` (no arguments) is the constructor, as in the seed's
call counts: it replaces the scheduler with a fresh one and yields ``None``
(JSON ``null``). A ``calls`` value that is not a list or tuple yields ``[]``.
"""

from __future__ import annotations

import heapq
import json
import sys
from typing import Any, Callable, Final

from .core.pool import java_order

__all__ = ["CronJobScheduler", "run_calls", "main"]

SCHEDULED: Final = "SCHEDULED"
QUEUED: Final = "QUEUED"
RUNNING: Final = "RUNNING"
RETRY_PENDING: Final = "RETRY_PENDING"
SUCCEEDED: Final = "SUCCEEDED"
FAILED: Final = "FAILED"

_LONG_MIN: Final = -(2**63)
_LONG_MAX: Final = 2**63 - 1
_INT_MIN: Final = -(2**31)
_INT_MAX: Final = 2**31 - 1

# Character.isWhitespace (Java 11+, Unicode 10+): the space, line and
# paragraph separators except the no-break ones (U+00A0, U+2007, U+202F),
# plus \t \n \v \f \r and the four information separators U+001C-U+001F.
# U+0085 (NEL) and U+180E are not whitespace.
_JAVA_WHITESPACE: Final = (
    "\t\n\u000b\u000c\r\u001c\u001d\u001e\u001f "
    "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u2009\u200a"
    "\u2028\u2029\u205f\u3000"
)


def _is_blank(s: str) -> bool:
    """Java ``String.isBlank``: nothing is left once Java whitespace is stripped."""
    return not s.strip(_JAVA_WHITESPACE)


_java_key = java_order  # sort and identity key: Java's UTF-16 view of a string (core/pool.py)


def _check_id(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected str, got {type(value).__name__}")
    return value if type(value) is str else str.__str__(value)


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if type(value) is int and low <= value <= high:
        return value
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name}: expected int, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name}: {value} is out of range {low}..{high}")
    return int(value)


def _check_time(name: str, value: object) -> int:
    return _check_int(name, value, 0, _LONG_MAX)


class _Job:
    __slots__ = ("job_id", "first", "interval", "max_attempts")

    def __init__(self, job_id: str, first: int, interval: int, max_retries: int):
        self.job_id = job_id
        self.first = first
        self.interval = interval
        self.max_attempts = max_retries + 1

    def owns(self, t: int) -> bool:
        """Whether ``t`` is one of this job's occurrence times."""
        if t < self.first:
            return False
        if self.interval == 0:
            return t == self.first
        return (t - self.first) % self.interval == 0


# An occurrence is one int, ``attempt << 3 | state``, where attempt is the
# number of its latest attempt (0 before the first). Up to 200,000 of them
# live at once; as plain ints (and heap entries as tuples of an int and
# bytes) they give the cyclic garbage collector nothing to track, which made
# creating them about three times faster than one object each.
_QUEUED, _RUNNING, _RETRY_PENDING, _SUCCEEDED, _FAILED = range(5)
_STATE_NAMES: Final = (QUEUED, RUNNING, RETRY_PENDING, SUCCEEDED, FAILED)
_STATE_BITS: Final = 3
_STATE_MASK: Final = 7

_OccurrenceKey = tuple[bytes, int]  # (job key, scheduled time)


class CronJobScheduler:
    """Seed 001's ``CronJobScheduler`` with Python-style method names.

    State, all of it created by the calls themselves (a key is
    ``_java_key(id)``):

    * ``_workers``: worker key -> worker id as first given; ``_idle``: heap of
      idle worker keys; ``_running``: occurrence key -> the worker running it.
    * ``_jobs``: job key -> job; ``_due``: heap of (next uncreated time, job
      key), one entry per job that still has occurrences to create.
    * ``_occurrences``: (job key, time) -> packed state, every occurrence
      created; ``_pending``: heap of (time, job key) of the QUEUED and
      RETRY_PENDING ones, which is the dispatch order.
    """

    def __init__(self) -> None:
        self._now = 0
        self._workers: dict[bytes, str] = {}
        self._idle: list[bytes] = []
        self._running: dict[_OccurrenceKey, bytes] = {}
        self._jobs: dict[bytes, _Job] = {}
        self._due: list[tuple[int, bytes]] = []
        self._occurrences: dict[_OccurrenceKey, int] = {}
        self._pending: list[tuple[int, bytes]] = []

    @property
    def current_time(self) -> int:
        """The scheduler's current time: the last time a call supplied (0 at first)."""
        return self._now

    def register_worker(self, worker_id: str) -> bool:
        worker_id = _check_id("worker_id", worker_id)
        if _is_blank(worker_id):
            return False
        key = _java_key(worker_id)
        if key in self._workers:
            return False
        self._workers[key] = worker_id
        heapq.heappush(self._idle, key)
        return True

    def schedule_job(
        self,
        job_id: str,
        first_run_time: int,
        interval: int,
        max_retries: int,
        current_time: int,
    ) -> bool:
        job_id = _check_id("job_id", job_id)
        first_run_time = _check_time("first_run_time", first_run_time)
        interval = _check_int("interval", interval, 0, _LONG_MAX)
        max_retries = _check_int("max_retries", max_retries, 0, _INT_MAX)
        now = self._now = _check_time("current_time", current_time)
        if _is_blank(job_id) or first_run_time < now:
            return False
        key = _java_key(job_id)
        if key in self._jobs:
            return False
        self._jobs[key] = _Job(job_id, first_run_time, interval, max_retries)
        heapq.heappush(self._due, (first_run_time, key))
        return True

    def dispatch_jobs(self, current_time: int) -> list[str]:
        now = self._now = _check_time("current_time", current_time)
        self._create_due(now)
        assigned: list[str] = []
        pending, idle, occurrences = self._pending, self._idle, self._occurrences
        while pending and idle:
            t, key = heapq.heappop(pending)
            worker = heapq.heappop(idle)
            attempt = (occurrences[(key, t)] >> _STATE_BITS) + 1
            occurrences[(key, t)] = attempt << _STATE_BITS | _RUNNING
            self._running[(key, t)] = worker
            assigned.append(f"{self._jobs[key].job_id},{t},{attempt},{self._workers[worker]}")
        return assigned

    def _create_due(self, now: int) -> None:
        """Create, QUEUED, every occurrence at or before ``now`` not created yet.

        Each job taken from ``_due`` creates all its due occurrences in one go
        and goes back at most once, so the work is per occurrence created.
        """
        due, jobs, occurrences = self._due, self._jobs, self._occurrences
        created: list[tuple[int, bytes]] = []
        while due and due[0][0] <= now:
            t, key = due[0]
            step = jobs[key].interval
            while True:
                occurrences[(key, t)] = _QUEUED  # attempt 0
                created.append((t, key))
                if step == 0 or t + step > now:
                    break
                t += step
            if step == 0:
                heapq.heappop(due)
            else:
                heapq.heapreplace(due, (t + step, key))
        pending = self._pending
        if len(created) > len(pending):
            pending.extend(created)
            heapq.heapify(pending)
        else:
            for entry in created:
                heapq.heappush(pending, entry)

    def complete_job(
        self,
        job_id: str,
        scheduled_time: int,
        attempt_number: int,
        successful: bool,
        current_time: int,
    ) -> bool:
        job_id = _check_id("job_id", job_id)
        scheduled_time = _check_int("scheduled_time", scheduled_time, _LONG_MIN, _LONG_MAX)
        attempt_number = _check_int("attempt_number", attempt_number, _INT_MIN, _INT_MAX)
        if not isinstance(successful, bool):
            raise TypeError(f"successful: expected bool, got {type(successful).__name__}")
        self._now = _check_time("current_time", current_time)
        key = _java_key(job_id)
        occurrence = (key, scheduled_time)
        running = attempt_number << _STATE_BITS | _RUNNING
        if self._occurrences.get(occurrence) != running:
            return False
        heapq.heappush(self._idle, self._running.pop(occurrence))
        if successful:
            state = _SUCCEEDED
        elif attempt_number < self._jobs[key].max_attempts:
            state = _RETRY_PENDING
            heapq.heappush(self._pending, (scheduled_time, key))
        else:
            state = _FAILED
        self._occurrences[occurrence] = attempt_number << _STATE_BITS | state
        return True

    def get_job_status(self, job_id: str, scheduled_time: int, current_time: int) -> str:
        job_id = _check_id("job_id", job_id)
        scheduled_time = _check_int("scheduled_time", scheduled_time, _LONG_MIN, _LONG_MAX)
        self._now = _check_time("current_time", current_time)
        key = _java_key(job_id)
        packed = self._occurrences.get((key, scheduled_time))
        if packed is not None:
            return _STATE_NAMES[packed & _STATE_MASK]
        job = self._jobs.get(key)
        if job is not None and job.owns(scheduled_time):
            return SCHEDULED
        return ""


# --- harness -----------------------------------------------------------------

INVALID_CALL: Final = "error: invalid call"
UNKNOWN_METHOD: Final = "error: unknown method"
INVALID_ARGUMENTS: Final = "error: invalid arguments"
INTERNAL_ERROR: Final = "error: internal error"

_CONSTRUCTOR: Final = "CronJobScheduler"

_METHODS: Final[dict[str, tuple[Callable[..., Any], int]]] = {
    "registerWorker": (CronJobScheduler.register_worker, 1),
    "scheduleJob": (CronJobScheduler.schedule_job, 5),
    "dispatchJobs": (CronJobScheduler.dispatch_jobs, 1),
    "completeJob": (CronJobScheduler.complete_job, 5),
    "getJobStatus": (CronJobScheduler.get_job_status, 3),
}


def run_calls(calls: object) -> list[Any]:
    """Run ``[methodName, *args]`` calls against one fresh scheduler.

    Returns one result per call; see the module docstring for the error
    strings. Never raises.
    """
    if not isinstance(calls, (list, tuple)):
        return []
    scheduler = CronJobScheduler()
    results: list[Any] = []
    for call in calls:
        if not isinstance(call, (list, tuple)) or not call or not isinstance(call[0], str):
            results.append(INVALID_CALL)
            continue
        name, args = call[0], call[1:]
        if name == _CONSTRUCTOR:
            if args:
                results.append(INVALID_ARGUMENTS)
            else:
                scheduler = CronJobScheduler()
                results.append(None)
            continue
        entry = _METHODS.get(name)
        if entry is None:
            results.append(UNKNOWN_METHOD)
            continue
        method, arity = entry
        if len(args) != arity:
            results.append(INVALID_ARGUMENTS)
            continue
        try:
            results.append(method(scheduler, *args))
        except (TypeError, ValueError):
            results.append(INVALID_ARGUMENTS)
        except Exception:  # a bug, not an input: report it rather than die
            results.append(INTERNAL_ERROR)
    return results


_USAGE: Final = "usage: python -m cronctl dispatch [FILE|-]"


def main(argv: list[str]) -> int:
    """``python -m cronctl dispatch [FILE|-]``: replay a JSON array of calls.

    Reads the array from FILE, or from stdin when FILE is ``-`` or absent,
    prints the JSON array of results on one line (ASCII, so any id prints)
    and returns 0. Returns 2 with a message on stderr for a usage error, an
    unreadable file, or input that is not a JSON array.
    """
    if len(argv) > 1:
        print(_USAGE, file=sys.stderr)
        return 2
    source = argv[0] if argv else "-"
    raw: str | bytes
    try:
        if source == "-":
            if sys.stdin is None:
                raise OSError("no standard input")
            raw = getattr(sys.stdin, "buffer", sys.stdin).read()
        else:
            with open(source, "rb") as f:
                raw = f.read()
    except OSError as e:
        print(f"cronctl dispatch: cannot read {source}: {e.strerror or e}", file=sys.stderr)
        return 2
    try:
        calls = json.loads(raw)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, bad encoding, too deep
        print(f"cronctl dispatch: {source}: not valid JSON: {e}", file=sys.stderr)
        return 2
    if not isinstance(calls, list):
        print(f"cronctl dispatch: {source}: expected a JSON array of calls", file=sys.stderr)
        return 2
    print(json.dumps(run_calls(calls)))
    return 0
