"""``kubectl cronctl describe``'s lines, from a CronSchedule and its Events (no API server)."""

from __future__ import annotations

from cronctl.plugin.views import describe_lines


def body(**status: object) -> dict[str, object]:
    return {"metadata": {"name": "report", "namespace": "team-a"},
            "spec": {"schedule": "*/10 * * * *", "pool": "reports", "jobTemplate": {}},
            "status": {"conditions": [], **status}}


def test_describe_shows_the_pool_and_which_active_runs_wait_for_a_worker() -> None:
    active = [{"name": "report-100", "run": 1, "attempt": 1, "state": "queued", "pool": "reports",
               "job": "report-100", "reason": "scheduled", "scheduledTime": "2024-03-01T00:10:00Z",
               "startedTime": "2024-03-01T00:10:00Z"}]
    lines = describe_lines(body(active=active), [])
    assert "Pool:               reports (1 queued for a worker)" in lines
    header = next(line for line in lines if "JOB" in line and "RUN" in line)
    row = lines[lines.index(header) + 1]
    assert header.split()[:3] == ["RUN", "JOB", "STATE"] and row.split()[:3] == ["1", "report-100", "queued"]


def test_describe_names_the_pool_of_a_schedule_with_nothing_waiting() -> None:
    assert "Pool:               reports" in describe_lines(body(), [])
