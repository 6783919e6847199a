"""The worked examples of seed 000 (Parts 1-5), verbatim.

Each test is one example: the operations exactly as the seed writes them and
the whole result list exactly as the seed states it.
"""

from cronctl import run


def test_part_1_next_runs_follow_the_cron_rules():
    assert run([
        ["next_runs", "*/20 9-10 * * MON-FRI", "2024-03-01T10:15", 4],
        ["next_runs", "0 12 13 * FRI", "2024-03-01T00:00", 4],
        ["next_runs", "0 12 */2 * FRI", "2024-03-01T00:00", 4],
    ]) == [
        ["2024-03-01T10:20", "2024-03-01T10:40", "2024-03-04T09:00", "2024-03-04T09:20"],
        ["2024-03-01T12:00", "2024-03-08T12:00", "2024-03-13T12:00", "2024-03-15T12:00"],
        ["2024-03-01T12:00", "2024-03-15T12:00", "2024-03-29T12:00", "2024-04-05T12:00"],
    ]


def test_part_2_one_catch_up_run_per_job_and_forbid_skips_while_running():
    assert run([
        ["create_job", "2024-03-01T00:00", "report", "30 9 * * *", "allow"],
        ["create_job", "2024-03-01T00:00", "sync", "*/10 * * * *", "forbid"],
        ["tick", "2024-03-01T00:45"],
        ["tick", "2024-03-01T01:05"],
        ["finish", "2024-03-01T01:06", "sync-1", "succeeded"],
        ["tick", "2024-03-01T01:06"],
        ["tick", "2024-03-01T09:30"],
        ["job_status", "sync"],
    ]) == [
        True,
        True,
        ["launch sync-1 for 2024-03-01T00:40"],
        ["skip sync for 2024-03-01T01:00 (forbid)"],
        True,
        ["launch sync-2 for 2024-03-01T01:00"],
        ["launch report-1 for 2024-03-01T09:30", "skip sync for 2024-03-01T09:30 (forbid)"],
        {"last_schedule": "2024-03-01T01:00", "next_fire": "2024-03-01T09:40",
         "active": ["sync-2"], "launched": 2},
    ]


def test_part_3_timeouts_and_bounded_history():
    assert run([
        ["create_job", "2024-03-01T00:00", "etl", "0 * * * *", "allow",
         {"timeout": 45, "keep_succeeded": 1}],
        ["tick", "2024-03-01T01:00"],
        ["tick", "2024-03-01T02:00"],
        ["finish", "2024-03-01T02:10", "etl-2", "succeeded"],
        ["tick", "2024-03-01T03:00"],
        ["finish", "2024-03-01T03:20", "etl-3", "succeeded"],
        ["history", "etl"],
        ["run", "etl-2"],
        ["finish", "2024-03-01T03:21", "etl-1", "failed"],
    ]) == [
        True,
        ["launch etl-1 for 2024-03-01T01:00"],
        ["launch etl-2 for 2024-03-01T02:00"],
        True,
        ["launch etl-3 for 2024-03-01T03:00"],
        True,
        [["etl-1", "timed_out", "2024-03-01T01:45"], ["etl-3", "succeeded", "2024-03-01T03:20"]],
        "error: run not found",
        "error: run not active",
    ]


def test_part_4_time_zones_and_intervals():
    assert run([
        ["next_runs", "30 2 * * *", "2024-03-01T00:00", 2, "+05:30"],
        ["next_runs", "0 0 1 * *", "2024-03-01T00:00", 2, "-08:00"],
        ["next_runs", "@every 90m", "2024-03-01T10:07", 3],
    ]) == [
        ["2024-03-01T21:00", "2024-03-02T21:00"],
        ["2024-03-01T08:00", "2024-04-01T08:00"],
        ["2024-03-01T11:37", "2024-03-01T13:07", "2024-03-01T14:37"],
    ]


def test_part_5_bulk_create_and_tick_counts():
    assert run([
        ["bulk_create", "2024-01-01T00:00", "probe", 3, ["*/30 * * * *", "@every 45m"], "allow"],
        ["tick", "2024-01-01T01:00", "counts"],
    ]) == [
        3,
        {"launched": 3, "skipped": 0, "replaced": 0, "overflowed": 0, "digest": 170407050},
    ]
