"""The runner in a container (issue 45): ``--wait-runs`` waits for the runs under way on SIGTERM, up to
a limit, then stops them; ``--metrics-port`` serves Prometheus metrics (runs by outcome, start delays,
the queue), as supercronic does."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cronctl.cli import wait_limit
from cronctl.runner.engine import Runner
from cronctl.runner.metrics import RunnerMetrics

from .support import Clock, journal, manifest, until

ROOT = Path(__file__).resolve().parents[2]


def a_runner(folder: Path, clock: Clock, said: list[str], workers: int = 2) -> Runner:
    r = Runner(folder, clock, workers, say=said.append, grace_seconds=0.3)
    assert r.open()
    return r


@pytest.mark.parametrize("text, seconds", [(None, None), ("", math.inf), ("90", 90.0), ("90s", 90.0),
                                           ("5m", 300.0), ("1h", 3600.0), ("0", 0.0), ("2.5", 2.5)])
def test_wait_runs_takes_seconds_or_a_unit_and_no_limit_without_one(text: str | None, seconds: float | None) -> None:
    assert wait_limit(text) == seconds


@pytest.mark.parametrize("text", ["soon", "-1", "5d", "inf"])
def test_wait_runs_refuses_what_is_not_a_time(text: str) -> None:
    assert isinstance(wait_limit(text), str)


def test_the_runs_under_way_end_on_their_own_within_the_limit_and_nothing_else_starts(tmp_path: Path) -> None:
    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "short.yaml").write_text(manifest("short", "5 0 * * *", ["sleep", "0.5"]))
    (folder / "later.yaml").write_text(manifest("later", "6 0 * * *", ["true"]))
    clock, said = Clock("2024-03-01T00:04"), []
    r = a_runner(folder, clock, said)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: list((folder / "runs" / "short").glob("*/pid")))
    clock.set("2024-03-01T00:06")  # later's time comes while it waits: it starts no run
    r.wait_for_runs(math.inf, poll_seconds=0.05)
    assert [e["outcome"] for e in journal(folder, "short")] == ["succeeded"]
    assert not (folder / "runs" / "later").exists()
    assert [f.run_id for f in r.firings.values()] == ["later-1"]  # in the book: the next runner starts it
    assert any(line.startswith("cronctl: stopping: waiting for the runs under way to end: short-1")
               for line in said), said


def test_past_the_limit_the_runs_are_stopped_and_recorded_so(tmp_path: Path) -> None:
    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "long.yaml").write_text(manifest("long", "5 0 * * *", ["sleep", "30"]))
    clock, said = Clock("2024-03-01T00:04"), []
    r = a_runner(folder, clock, said)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: list((folder / "runs" / "long").glob("*/pid")))
    began = time.monotonic()
    r.wait_for_runs(0.3, poll_seconds=0.05)
    assert time.monotonic() - began < 10
    [row] = journal(folder, "long")
    assert (row["outcome"], row["note"]) == ("stopped", "the runner was stopping and --wait-runs' 0.3 s passed")
    assert not r.firings


def test_metrics_count_ends_by_outcome_start_delays_and_the_queue() -> None:
    from prometheus_client import generate_latest

    metrics = RunnerMetrics()
    metrics.said("ended", {"outcome": "succeeded"})
    metrics.said("ended", {"outcome": "failed"})
    metrics.said("skipped", {"outcome": "skipped"})
    metrics.said("fired", {"outcome": "whatever"})  # not an end
    metrics.started(100, 100 * 60 + 1.5)
    metrics.turned(queued=3, running=2, schedules=7)
    text = generate_latest(metrics.registry).decode()
    for line in ('cronctl_runner_runs_total{outcome="succeeded"} 1.0', 'cronctl_runner_runs_total{outcome="failed"} 1.0',
                 'cronctl_runner_runs_total{outcome="skipped"} 1.0', "cronctl_runner_queue_length 3.0",
                 "cronctl_runner_runs_running 2.0", "cronctl_runner_schedules 7.0",
                 'cronctl_runner_start_delay_seconds_bucket{le="1.0"} 0.0',
                 'cronctl_runner_start_delay_seconds_bucket{le="2.0"} 1.0'):
        assert line in text, line


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_cronctl_local_on_sigterm_waits_for_its_run_and_serves_its_metrics(tmp_path: Path) -> None:
    """As in a container: SIGTERM while a 2 s run goes; with --wait-runs the run ends and is recorded,
    where the runner left it to a next runner that a container never starts."""
    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "job.yaml").write_text(manifest("job", "0 0 1 1 *", ["sh", "-c", "sleep 2; echo done"]))
    clock = tmp_path / "clock"
    clock.write_text("2024-03-01T00:00")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"), CRONCTL_CLOCK_FILE=str(clock))
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "cronctl", "local", str(folder), "--poll", "0.1",
                                "--wait-runs", "30s", "--metrics-port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while not (folder / "cronctl.json").exists():
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        subprocess.run([sys.executable, "-m", "cronctl", "trigger", "job", "--dir", str(folder)], env=env,
                       check=True, capture_output=True)
        while not list(folder.glob("manual/*/runs/job/*/pid")):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        scraped = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
        assert "cronctl_runner_runs_running 1.0" in scraped and "cronctl_runner_schedules 1.0" in scraped
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert "Traceback" not in err, err
    assert process.returncode == 128 + signal.SIGTERM
    [row] = json.loads((folder / "cronctl.json").read_text())["journal"]["job"]
    assert row["outcome"] == "succeeded", (row, out)
    assert "cronctl: stopping: waiting for the runs under way to end (at most 30 s, then they are stopped)" in out
