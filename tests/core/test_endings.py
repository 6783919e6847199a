"""core.endings.end_runs, table-tested: the active runs as a driver sees them, and the minute ->
how each ended (or waits for its next attempt), in the order they ended, applied to the state."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from cronctl.core.endings import RunEnd, RunSeen, end_runs, ended_in_time
from cronctl.core.retention import Finished
from cronctl.core.spec import Options
from cronctl.core.state import FAILED, RETRY_PENDING, SUCCEEDED, TIMED_OUT, JobState, PendingRetry

NOW = 1000
STARTED = 990


@dataclass
class Row:
    name: str
    seen: list[RunSeen]
    options: Options = field(default_factory=Options)
    ends: list[tuple[str, str, int]] = field(default_factory=list)  # (run, outcome, at)
    active_after: list[str] = field(default_factory=list)
    retries_after: list[PendingRetry] = field(default_factory=list)


ROWS = [
    Row("a run still running has not ended", [RunSeen("job-1", 1, 1, STARTED)], active_after=["job-1"]),
    Row("a reported success ends the run at its time",
        [RunSeen("job-1", 1, 1, STARTED, (SUCCEEDED, 995))], ends=[("job-1", SUCCEEDED, 995)]),
    Row("a reported failure with no retries ends the run failed",
        [RunSeen("job-1", 1, 1, STARTED, (FAILED, 995))], ends=[("job-1", FAILED, 995)]),
    Row("a failed attempt with attempts left waits for the next one",
        [RunSeen("job-1", 1, 1, STARTED, (FAILED, 995))], Options(retries=2, retry_delay=3),
        ends=[("job-1", RETRY_PENDING, 995)], active_after=["job-1"],
        retries_after=[PendingRetry(998, 1, "job-1", 2)]),
    Row("the last attempt failing ends the run failed",
        [RunSeen("job-1", 1, 3, STARTED, (FAILED, 995))], Options(retries=2, retry_delay=3),
        ends=[("job-1", FAILED, 995)]),
    Row("a run whose Job is gone failed now, and is not retried",
        [RunSeen("job-1", 1, 1, STARTED, gone=True)], Options(retries=2),
        ends=[("job-1", FAILED, NOW)]),
    Row("a run past its timeout timed out at its expiry",
        [RunSeen("job-1", 1, 1, STARTED)], Options(timeout=5), ends=[("job-1", TIMED_OUT, 995)]),
    Row("an outcome reported at the very expiry is too late",
        [RunSeen("job-1", 1, 1, STARTED, (SUCCEEDED, 995))], Options(timeout=5), ends=[("job-1", TIMED_OUT, 995)]),
    Row("a run whose timeout expired while it waited for its next attempt timed out, not retried",
        [RunSeen("job-1", 1, 1, STARTED, (FAILED, 992))], Options(timeout=5, retries=2, retry_delay=20),
        ends=[("job-1", TIMED_OUT, 995)]),
    Row("runs end in the order they ended, then by number",
        [RunSeen("job-2", 2, 1, STARTED, (SUCCEEDED, 996)), RunSeen("job-1", 1, 1, STARTED, (SUCCEEDED, 997)),
         RunSeen("job-3", 3, 1, STARTED, (FAILED, 996))],
        ends=[("job-2", SUCCEEDED, 996), ("job-3", FAILED, 996), ("job-1", SUCCEEDED, 997)]),
    # The worker's own elapsed time (issue 44, one rule of the timeout for every driver): a first
    # attempt under its timeout by it keeps its outcome, at the last minute before the expiry at the
    # latest, however late its driver sees the end; at the timeout, or a later attempt, the clock rules.
    Row("a first attempt its worker measured under the timeout keeps its outcome, seen late",
        [RunSeen("job-1", 1, 1, STARTED, (SUCCEEDED, 999), elapsed=299.0)], Options(timeout=5),
        ends=[("job-1", SUCCEEDED, 994)]),
    Row("an attempt its worker measured at the timeout is timed out",
        [RunSeen("job-1", 1, 1, STARTED, (SUCCEEDED, 999), elapsed=300.0)], Options(timeout=5),
        ends=[("job-1", TIMED_OUT, 995)]),
    Row("a second attempt is timed out by the clock (the wait between attempts counts)",
        [RunSeen("job-1", 1, 2, STARTED, (SUCCEEDED, 999), elapsed=10.0)], Options(timeout=5, retries=1),
        ends=[("job-1", TIMED_OUT, 995)]),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_end_runs(row: Row) -> None:
    state = JobState(launched=len(row.seen), active=sorted(run.run_id for run in row.seen))
    ends = end_runs(state, row.seen, row.options, NOW)
    assert [(end.run_id, end.outcome, end.at) for end in ends] == row.ends
    assert state.active == row.active_after
    assert state.pending_retries == row.retries_after


def test_retention_drops_the_oldest_kept_run_past_the_limit() -> None:
    state = JobState(launched=2, active=["job-2"], kept_succeeded=[Finished(900, 1, "job-1")])
    [end] = end_runs(state, [RunSeen("job-2", 2, 1, STARTED, (SUCCEEDED, 995))], Options(keep_succeeded=1), NOW)
    assert end == RunEnd("job-2", SUCCEEDED, 995, dropped=(Finished(900, 1, "job-1"),))
    assert state.kept_succeeded == [Finished(995, 2, "job-2")]


def test_a_driver_records_an_end_in_time_before_its_clock_passes_the_expiry() -> None:
    """endings.ended_in_time: what the runner asks before its clock moves (cronctl local stopped
    past a run's expiry, whose wrapper measured it under its timeout)."""
    seen = RunSeen("job-1", 1, 1, STARTED, (SUCCEEDED, 999), elapsed=10.0)
    assert ended_in_time(seen, 5, NOW)  # the clock would time it out: the driver records it first
    assert not ended_in_time(seen, 20, NOW)  # not expired: the ordinary end
    assert not ended_in_time(RunSeen("job-1", 1, 1, STARTED, (SUCCEEDED, 999)), 5, NOW)  # not measured
