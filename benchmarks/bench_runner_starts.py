"""How fast ``cronctl local`` starts runs that share a minute, on few workers.

N schedules (200 by default), each an ``echo``, all due at the same minute,
on W worker slots (2 by default): the runner's loop as ``cronctl local``
runs it (``run_forever``, its default poll of 1 s), with its clock moved to
the minute (its clock 3 s before it, turning on its own). Printed: the seconds from the minute until the last run started
and until the last ended, runs started per second, and the gap between a
worker freeing and the next run starting (median and p99, from each run
folder's times). The peer is a supercronic-like expectation: a scheduler
that starts the next job as soon as a worker frees, so the gap is the cost
of starting a process (this machine's ``fork`` + ``exec`` of the wrapper); and
supercronic itself on the same commands in the same run, when its binary is
there (``GOFLAGS=-mod=mod go install github.com/aptible/supercronic@latest``).

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
        # The runner's clock, as cronctl local's: seconds, 3 s before 00:05 now; the minute it turns is
        # the wall clock's instant ``began`` (the runner wakes for it on its own, as it does for a real one).
        offset = parse_time("2024-03-01T00:05") * 60 - 3.0 - time.time()
        began = time.time() + 3.0

        def seconds() -> float:
            return time.time() + offset

        runner = Runner(folder, lambda: int(seconds() // 60), workers, say=lambda text: None, seconds=seconds,
                        one_read=True)
        stop = threading.Event()
        loop = threading.Thread(target=run_forever, args=(runner,), kwargs={"should_stop": stop.is_set})
        loop.start()
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


def supercronic(schedules: int, binary: str) -> dict[str, float] | None:
    """The peer on the same commands: supercronic with ``schedules`` crontab lines due at one second
    (its seconds field), each ``date +%s.%N`` (an echo that says when it ran). supercronic starts every
    due job at once (it has no worker bound). The seconds from that second to the last job's start."""
    folder = Path(tempfile.mkdtemp(prefix="supercronic-starts-"))
    try:
        at = int(time.time()) + 3
        moment = time.gmtime(at)
        crontab = folder / "crontab"
        crontab.write_text("".join(f"{moment.tm_sec} {moment.tm_min} {moment.tm_hour} * * * * date +%s.%N\n"
                                   for _ in range(schedules)))
        log = folder / "log"
        with open(log, "wb") as out:
            process = subprocess.Popen([binary, "-json", str(crontab)], stdout=out, stderr=subprocess.STDOUT)
            deadline = time.time() + 30
            while time.time() < deadline and log.read_text().count('"channel":"stdout"') < schedules:
                time.sleep(0.1)
            process.terminate()
            process.wait(timeout=30)
        starts = sorted(float(entry["msg"]) for entry in map(json.loads, log.read_text().splitlines())
                        if entry.get("channel") == "stdout")
        if len(starts) < schedules:
            return None
        return {"last_start": starts[-1] - at}
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
    parser.add_argument("--supercronic", default=shutil.which("supercronic") or str(Path.home() / "go/bin/supercronic"),
                        help="the peer's binary (go install github.com/aptible/supercronic@latest)")
    args = parser.parse_args()
    floor = fork_exec_seconds()
    result = measure(args.schedules, args.workers)
    peer = supercronic(args.schedules, args.supercronic) if Path(args.supercronic).exists() else None
    expected = args.schedules / args.workers * floor
    print(f"{args.schedules} runs due at one minute, {args.workers} workers:")
    print(f"  last run started {result['last_start']:.2f} s after the minute, last ended {result['last_end']:.2f} s "
          f"({result['per_second']:.1f} starts/s)")
    print(f"  a worker freeing to the next start: median {result['gap_median'] * 1000:.0f} ms, "
          f"p99 {result['gap_p99'] * 1000:.0f} ms")
    print(f"  supercronic-like expectation (the next start as a worker frees, {floor * 1000:.0f} ms a process "
          f"start here): last start ~{expected:.2f} s; ratio {result['last_start'] / expected:.2f}x")
    if peer is None:
        print(f"  supercronic: not measured ({args.supercronic} is not there, or its jobs did not all run)")
    else:
        print(f"  supercronic, the same {args.schedules} commands due at one second (all at once, no worker "
              f"bound): last started {peer['last_start']:.2f} s after it; ratio "
              f"{result['last_start'] / max(peer['last_start'], 1e-9):.2f}x")


if __name__ == "__main__":
    main()
