"""How fast ``cronctl local`` starts runs that share a minute, on few workers.

N schedules (200 by default), each an ``echo``, all due at the same minute,
on W worker slots (2 by default): the runner's loop as ``cronctl local``
runs it (``run_forever``, its default poll of 1 s), with its clock moved to
the minute. Printed: the seconds from the minute until the last run started
and until the last ended, runs started per second, and the gap between a
worker freeing and the next run starting (median and p99, from each run
folder's times). The peer is a supercronic-like expectation: a scheduler
that starts the next job as soon as a worker frees, so the gap is the cost
of starting a process (this machine's ``fork`` + ``exec`` of the wrapper).

    python benchmarks/bench_runner_starts.py [--schedules 200] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "operator"))

from cronctl.core.times import parse_time  # noqa: E402
from cronctl.runner.engine import Runner, run_forever  # noqa: E402

MANIFEST = {"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": ""},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "main", "command": ["echo", "hi"]}]}}}}}}


def measure(schedules: int, workers: int) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix="cronctl-starts-"))
    try:
        for index in range(schedules):
            body = json.loads(json.dumps(MANIFEST))
            body["metadata"]["name"] = f"echo-{index:03d}"
            (folder / f"echo-{index:03d}.yaml").write_text(json.dumps(body))
        minute = [parse_time("2024-03-01T00:04")]
        runner = Runner(folder, lambda: minute[0], workers, say=lambda text: None)
        stop = threading.Event()
        loop = threading.Thread(target=run_forever, args=(runner,), kwargs={"should_stop": stop.is_set})
        loop.start()
        while not (folder / "cronctl.json").exists():
            time.sleep(0.05)
        time.sleep(1.5)
        began = time.time()
        minute[0] = parse_time("2024-03-01T00:05")
        while len(list(folder.glob("runs/*/*/exit.json"))) < schedules:
            time.sleep(0.05)
        stop.set()
        loop.join()
        runs = [path.parent for path in folder.glob("runs/*/*/exit.json")]
        # the wrapper writes pid as it starts the command and exit.json as it ends (sub-second times)
        starts = sorted((run / "pid").stat().st_mtime for run in runs)
        ends = sorted((run / "exit.json").stat().st_mtime for run in runs)
        # a worker frees at each end; the run started next after it took this long
        gaps = [start - end for end, start in zip(ends, starts[workers:])]
        return {"last_start": starts[-1] - began, "last_end": ends[-1] - began,
                "per_second": schedules / max(starts[-1] - began, 1e-9),
                "gap_median": statistics.median(gaps), "gap_p99": sorted(gaps)[int(len(gaps) * 0.99) - 1]}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fork_exec_seconds(python: str = sys.executable, tries: int = 20) -> float:
    """What starting one Python process costs here: the floor of a start through the wrapper."""
    began = time.perf_counter()
    for _ in range(tries):
        subprocess.run([python, "-s", "-E", "-c", "pass"], check=True)
    return (time.perf_counter() - began) / tries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    floor = fork_exec_seconds()
    result = measure(args.schedules, args.workers)
    expected = args.schedules / args.workers * floor
    print(f"{args.schedules} runs due at one minute, {args.workers} workers:")
    print(f"  last run started {result['last_start']:.2f} s after the minute, last ended {result['last_end']:.2f} s "
          f"({result['per_second']:.1f} starts/s)")
    print(f"  a worker freeing to the next start: median {result['gap_median'] * 1000:.0f} ms, "
          f"p99 {result['gap_p99'] * 1000:.0f} ms")
    print(f"  supercronic-like expectation (the next start as a worker frees, {floor * 1000:.0f} ms a process "
          f"start here): last start ~{expected:.2f} s; ratio {result['last_start'] / expected:.2f}x")


if __name__ == "__main__":
    main()
