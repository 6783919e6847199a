"""`cronctl fleet preview`: a fleet's values replayed through the core, end to end.

The expected counts are worked out by hand in each test's comments, from the
assumption the preview states: every run takes --run-minutes minutes and then
succeeds (or times out first, at timeoutMinutes).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cronctl import fleet
from cronctl.core.times import parse_time

ROOT = Path(__file__).resolve().parent.parent


def cronctl(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"))
    return subprocess.run([sys.executable, "-m", "cronctl", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, stdin=subprocess.DEVNULL)


def values_file(tmp_path: Path, values: dict[str, Any]) -> str:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return str(path)


def preview_json(tmp_path: Path, values: dict[str, Any], start: str, end: str, *flags: str) -> dict[str, Any]:
    result = cronctl("fleet", "preview", values_file(tmp_path, values), "--from", start, "--to", end, "--json",
                     *flags)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # not a terminal: no progress bar
    return json.loads(result.stdout)


def counts(report: dict[str, Any], policy: str) -> tuple[int, int, int, int]:
    c = report["policies"][policy]
    return c["launches"], c["skips"], c["replaces"], c["overflows"]


def test_forbid_skips_and_catches_up_while_runs_take_25_minutes(tmp_path: Path) -> None:
    # w-0 and w-1 fire at :10 :20 :30 :40 :50 and 01:00; each run takes 25 minutes.
    # Forbid, per schedule: launch 00:10 (ends 00:35); skip 00:20, skip 00:30; at 00:35 the
    # run ends and the latest missed time, 00:30, is launched (ends 01:00); skip 00:40,
    # skip 00:50; at 01:00 the run ends first, then 01:00 is launched. 3 launches, 4 skips.
    # Allow: all 6 times. Replace: 6 launches, each of the last 5 replacing the active run.
    report = preview_json(tmp_path, {"prefix": "w", "count": 2, "schedules": ["*/10 * * * *"],
                                     "concurrencyPolicy": "Forbid"},
                          "2024-01-01T00:00", "2024-01-01T01:00", "--run-minutes", "25")
    assert report["schedules_created"] == 2 and (report["first"], report["last"]) == ("w-0", "w-1")
    assert report["policy"] == "Forbid" and report["run_minutes"] == 25
    assert counts(report, "Forbid") == (6, 8, 0, 0)
    assert counts(report, "Allow") == (12, 0, 0, 0)
    assert counts(report, "Replace") == (12, 0, 10, 0)
    assert report["firings"] == 6
    assert report["busiest_minutes"] == [{"minute": "2024-01-01T00:10", "firings": 2},
                                         {"minute": "2024-01-01T00:35", "firings": 2},
                                         {"minute": "2024-01-01T01:00", "firings": 2}]
    assert list(report["policies"]) == ["Forbid", "Allow", "Replace"]  # the fleet's own first


def test_round_robin_schedules_and_the_busiest_minutes(tmp_path: Path) -> None:
    # probe-0, probe-2: */30 -> 00:30, 01:00, 01:30, 02:00; probe-1: @every 45m from 00:00 ->
    # 00:45, 01:30. Runs take a minute, so every policy launches all 10.
    report = preview_json(tmp_path, {"prefix": "probe", "count": 3, "schedules": ["*/30 * * * *", "@every 45m"]},
                          "2024-01-01T00:00", "2024-01-01T02:00")
    assert report["expressions"] == ["*/30 * * * *", "@every 45m"]
    for policy in ("Allow", "Forbid", "Replace"):
        assert counts(report, policy) == (10, 0, 0, 0)
    assert report["busiest_minutes"] == [{"minute": "2024-01-01T01:30", "firings": 3},
                                         {"minute": "2024-01-01T00:30", "firings": 2},
                                         {"minute": "2024-01-01T01:00", "firings": 2},
                                         {"minute": "2024-01-01T02:00", "firings": 2},
                                         {"minute": "2024-01-01T00:45", "firings": 1}]


def test_a_forbid_schedule_whose_run_outlasts_100_missed_times_overflows_once(tmp_path: Path) -> None:
    # Every minute, runs of 200 minutes, 00:00-04:00 (240 times). Forbid: launch 00:01; skip
    # 00:02 ... 01:41 (100 missed times); from 01:42, 101 missed: an overflow, counted once, and
    # as on the operator the most recent time is still handed to the policy, so 01:42 ... 03:20
    # are skipped too (99); the run ends at 03:21, which is launched (to 06:41), and 03:22 ...
    # 04:00 are skipped (39): 2 launches, 238 skips, 1 overflow.
    # Allow: 240 launches; Replace: 240 launches, 239 replaces.
    report = preview_json(tmp_path, {"prefix": "m", "schedules": ["* * * * *"], "concurrencyPolicy": "Forbid"},
                          "2024-01-01T00:00", "2024-01-01T04:00", "--run-minutes", "200")
    assert counts(report, "Forbid") == (2, 238, 0, 1)
    assert counts(report, "Allow") == (240, 0, 0, 0)
    assert counts(report, "Replace") == (240, 0, 239, 0)


def test_a_starting_deadline_keeps_a_forbid_schedule_from_overflowing(tmp_path: Path) -> None:
    # As above with a 10-minute deadline: at most 11 missed times are ever counted, so no
    # overflow; 00:02 ... 03:20 are skipped (199), the run ends at 03:21 and 03:21 is
    # launched (ends 06:41): 03:22 ... 04:00 are skipped too (39). 2 launches, 238 skips.
    report = preview_json(tmp_path, {"prefix": "d", "schedules": ["* * * * *"], "concurrencyPolicy": "Forbid",
                                     "startingDeadlineSeconds": 600},
                          "2024-01-01T00:00", "2024-01-01T04:00", "--run-minutes", "200")
    assert counts(report, "Forbid") == (2, 238, 0, 0)


def test_a_timeout_shorter_than_the_run_ends_it(tmp_path: Path) -> None:
    # */10, runs of 25 minutes but a 15-minute timeout. Forbid: launch 00:10, times out 00:25
    # and the missed 00:20 is launched then (to 00:40); skip 00:30; 00:40: timed out, launch
    # 00:40 (to 00:55); skip 00:50; 00:55: launch the missed 00:50 (to 01:10); skip 01:00.
    report = preview_json(tmp_path, {"prefix": "t", "schedules": ["*/10 * * * *"], "concurrencyPolicy": "Forbid",
                                     "timeoutMinutes": 15},
                          "2024-01-01T00:00", "2024-01-01T01:00", "--run-minutes", "25")
    assert counts(report, "Forbid") == (4, 4, 0, 0)
    assert [m["minute"][11:] for m in report["busiest_minutes"]] == ["00:10", "00:25", "00:40", "00:55"]


def test_zones_count_in_local_time(tmp_path: Path) -> None:
    # 02:30 at +05:30 is 21:00 UTC the day before: one firing per day at 21:00.
    report = preview_json(tmp_path, {"prefix": "z", "count": 2, "schedules": ["30 2 * * *"], "timeZone": "+05:30"},
                          "2024-03-01T00:00", "2024-03-03T23:59")
    assert counts(report, "Allow") == (6, 0, 0, 0)
    assert [m["minute"] for m in report["busiest_minutes"]] == ["2024-03-01T21:00", "2024-03-02T21:00",
                                                                "2024-03-03T21:00"]


def test_an_iana_zone_counts_in_its_wall_clock_across_the_spring_forward(tmp_path: Path) -> None:
    # 02:30 in Europe/Berlin: 01:30 UTC on 30 March 2024 (CET, +01:00). On 31 March the clocks
    # jump from 02:00 to 03:00, and a fixed-time schedule runs once at the change (the CRD's
    # default daylightSaving, Vixie): 03:00 CEST, 01:00 UTC. From 1 April: 00:30 UTC (+02:00).
    report = preview_json(tmp_path, {"prefix": "b", "count": 2, "schedules": ["30 2 * * *"],
                                     "timeZone": "Europe/Berlin"}, "2024-03-30T00:00", "2024-04-01T23:59")
    assert counts(report, "Allow") == (6, 0, 0, 0)
    assert [m["minute"] for m in report["busiest_minutes"]] == ["2024-03-30T01:30", "2024-03-31T01:00",
                                                                "2024-04-01T00:30"]


def test_a_suspended_fleet_fires_nothing(tmp_path: Path) -> None:
    report = preview_json(tmp_path, {"prefix": "s", "count": 3, "schedules": ["* * * * *"], "suspend": True},
                          "2024-01-01T00:00", "2024-01-01T01:00")
    assert report["suspended"] is True and report["firings"] == 0 and report["busiest_minutes"] == []


def test_the_text_report_names_the_fleet_the_counts_and_the_busiest_minutes(tmp_path: Path) -> None:
    result = cronctl("fleet", "preview", values_file(tmp_path, {"prefix": "w", "count": 2,
                                                                "schedules": ["*/10 * * * *"],
                                                                "concurrencyPolicy": "Forbid"}),
                     "--from", "2024-01-01T00:00", "--to", "2024-01-01T01:00", "--run-minutes", "25")
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == "fleet w: 2 CronSchedules created (w-0 ... w-1), 1 schedule round robin, policy Forbid"
    assert "each run takes 25 minutes" in lines[1]
    assert lines[4].split() == ["Forbid", "(the", "fleet's)", "6", "8", "0", "0"]
    assert lines[5].split() == ["Allow", "12", "0", "0", "0"]
    assert lines[6].split() == ["Replace", "12", "0", "10", "0"]
    assert "total firings (Forbid): 6" in lines
    assert "  2024-01-01T00:10  2 firings" in lines


@pytest.mark.parametrize("values, message", [
    ({"count": 0}, "cronctl: count: 0 is out of range 1-5000"),
    ({"count": 5001}, "cronctl: count: 5001 is out of range 1-5000"),
    ({"count": 5.0}, "cronctl: count: 5.0 is not a whole number (1-5000)"),
    ({"prefix": "Web"}, 'cronctl: prefix: "Web" must be 1-40 lower-case letters'),
    ({"prefix": "a" * 38, "count": 11}, 'makes names up to "' + "a" * 38 + '-10" (41 characters)'),
    ({"schedules": []}, "cronctl: schedules: [] must be a non-empty list of expressions"),
    ({"schedules": ["0 9 * * 8"]}, "cronctl: schedules[0]: day-of-week: 8 is out of range 0-7"),
    ({"concurrencyPolicy": "WaitForLast"}, 'cronctl: concurrencyPolicy: "WaitForLast" is not one of Allow, Forbid'),
    ({"timeZone": "Mars/Olympus"}, 'cronctl: timeZone: "Mars/Olympus" is not a time zone: give an IANA name such '
                                   "as Europe/Berlin or a UTC offset such as +05:30"),
    ({"timeZone": "+5:30"}, 'cronctl: timeZone: "+5:30" is not an offset of the form +HH:MM or -HH:MM\n'),
    ({"schedules": ["every(5).minutes"]}, "cronctl: schedules[0]: expression: every(N).unit rules are not taken "
                                          "here: give a cron expression or '@every <N>m|h'"),
    ({"startingDeadlineSeconds": 30}, "cronctl: startingDeadlineSeconds: 30 is out of range 60-"),
    ({"schedules": ["0 0 30 2 *"]}, 'cronctl: schedules[0]: "0 0 30 2 *" never fires within 8 years after'),
    ({"Count": 3}, "cronctl: Count: is not a value of this chart"),
])
def test_bad_values_exit_2_naming_the_value_and_the_reason(tmp_path: Path, values: dict[str, Any],
                                                           message: str) -> None:
    result = cronctl("fleet", "preview", values_file(tmp_path, values), "--from", "2024-01-01T00:00",
                     "--to", "2024-01-02T00:00")
    assert result.returncode == 2
    assert result.stdout == ""
    assert message in result.stderr, result.stderr
    assert "bulk_create" not in result.stderr and "harness" not in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--from", "2024-01-01", "--to", "2024-01-02T00:00"], 'cronctl: --from: "2024-01-01" is not a UTC time'),
    (["--from", "2024-01-01T00:00", "--to", "2024-02-30T00:00"], "cronctl: --to:"),
    (["--from", "2024-01-02T00:00", "--to", "2024-01-01T00:00"], "cronctl: --to: 2024-01-01T00:00 is before --from"),
    (["--from", "2024-01-01T00:00", "--to", "2024-01-02T00:00", "--run-minutes", "0"],
     "cronctl: --run-minutes: 0 must be 1 or more"),
])
def test_bad_arguments_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = cronctl("fleet", "preview", values_file(tmp_path, {}), *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_values_file_that_is_missing_or_not_a_map_exits_2(tmp_path: Path) -> None:
    missing = cronctl("fleet", "preview", str(tmp_path / "nope.yaml"), "--from", "2024-01-01T00:00",
                      "--to", "2024-01-01T01:00")
    assert missing.returncode == 2 and "nope.yaml: cannot be read" in missing.stderr
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n- 2\n")
    result = cronctl("fleet", "preview", str(listed), "--from", "2024-01-01T00:00", "--to", "2024-01-01T01:00")
    assert result.returncode == 2 and "must hold a map of values" in result.stderr


def test_a_values_file_with_broken_yaml_is_one_cronctl_line_naming_the_file_line_and_problem(tmp_path: Path) -> None:
    broken = tmp_path / "values.yaml"
    broken.write_text("count: [1, 2\nprefix: x\n")
    result = cronctl("fleet", "preview", str(broken), "--from", "2024-01-01T00:00", "--to", "2024-01-01T01:00")
    assert result.returncode == 2
    assert result.stderr == f"cronctl: {broken}: is not YAML: line 2 column 7: expected ',' or ']', but got ':'\n"


def test_an_empty_values_file_is_the_charts_example_fleet(tmp_path: Path) -> None:
    # The chart's defaults: example-0 on */15: 4 firings an hour.
    (tmp_path / "empty.yaml").write_text("")
    result = cronctl("fleet", "preview", str(tmp_path / "empty.yaml"), "--from", "2024-01-01T00:00",
                     "--to", "2024-01-01T01:00", "--json")
    report = json.loads(result.stdout)
    assert (report["first"], report["firings"]) == ("example-0", 4)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_is_drawn_on_a_terminal_only_and_not_with_no_progress() -> None:
    with fleet.progress_bar(100, io.StringIO()) as bar:
        assert bar.disable  # standard error piped or redirected: no bar
    with fleet.progress_bar(100, _Terminal(), wanted=False) as bar:
        assert bar.disable  # --no-progress
    stream = _Terminal()
    with fleet.progress_bar(100, stream) as bar:
        assert not bar.disable
        bar.delay = bar.mininterval = 0  # draw at once, rather than after half a second of replay
        fleet.preview(fleet.read_values(fleet.merge_defaults({"schedules": ["* * * * *"]})),
                      parse_time("2024-01-01T00:00"), parse_time("2024-01-01T01:40"), 1, bar)
        assert bar.n == 100  # the whole range, minute for minute
    assert "replaying" in stream.getvalue()


def test_no_progress_on_a_long_range_still_prints_only_the_report(tmp_path: Path) -> None:
    # A year of a daily schedule: 366 firings in 2024; nothing on standard error.
    result = cronctl("fleet", "preview", values_file(tmp_path, {"schedules": ["0 6 * * *"]}),
                     "--from", "2024-01-01T00:00", "--to", "2024-12-31T23:59", "--json", "--no-progress")
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["firings"] == 366
