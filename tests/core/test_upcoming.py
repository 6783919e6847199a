"""What a job fires next: one rule for every driver (core.upcoming)."""

from __future__ import annotations

import pytest

from cronctl.core.schedule import Timeline
from cronctl.core.spec import JobSpec, Options, Policy
from cronctl.core.state import JobState
from cronctl.core.times import parse_time
from cronctl.core.upcoming import Upcoming, upcoming
from cronctl.core.window import END_TIME_REACHED, MAX_RUNS_REACHED, Window


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


NOW, NEXT, END = t("2024-03-01T00:05"), t("2024-03-01T00:10"), t("2024-03-01T00:20")


def job(**options: object) -> tuple[JobSpec, Timeline]:
    spec = JobSpec("sync", "*/10 * * * *", Policy.ALLOW, Options(**options), t("2024-03-01T00:00"), 0)  # type: ignore[arg-type]
    return spec, Timeline(spec.compiled, spec.created_at, spec.options.tz)


def state(scheduled_runs: int = 0) -> JobState:
    job_state = JobState()
    job_state.scheduled_runs = scheduled_runs
    return job_state


@pytest.mark.parametrize("held, runs, options, now, expected", [
    (False, 0, {}, NOW, Upcoming(NEXT, None, NEXT)),
    (True, 0, {}, NOW, Upcoming(NEXT, None, None)),  # suspended, paused on failures, being deleted
    (False, 3, {"max_runs": 3}, NOW, Upcoming(NEXT, MAX_RUNS_REACHED, None)),
    (False, 2, {"max_runs": 3}, NOW, Upcoming(NEXT, None, NEXT)),
    (False, 0, {"window": Window(None, END)}, NOW, Upcoming(NEXT, None, NEXT)),
    (False, 0, {"window": Window(None, END)}, END, Upcoming(None, END_TIME_REACHED, None)),
], ids=["fires", "held", "run limit reached", "one run left", "inside its window", "past its window"])
def test_the_next_time_whether_the_job_ended_and_what_fires(held: bool, runs: int, options: dict, now: int,
                                                            expected: Upcoming) -> None:
    spec, timeline = job(**options)
    assert upcoming(spec, state(runs), timeline, now, held) == expected
