"""What an idle ``cronctl local`` costs: the share of a core it takes while nothing fires.

N manifests (2,000 by default) whose times are spread over the day, so that
nothing or next to nothing fires; ``cronctl local DIR`` as a user starts it (the
real clock, its default poll of 1 s), left to settle for a warm-up, then its CPU
time (user + system, from /proc) over a window that spans minute boundaries. The
goal (issue 45): under 0.5% of a core with 2,000 manifests. The peer, supercronic, on the
same 2,000 times (a crontab line each), in the same window beside it when its binary is
there (``GOFLAGS=-mod=mod go install github.com/aptible/supercronic@latest``).

    python benchmarks/bench_runner_idle.py [--manifests 2000] [--warm-up 15] [--seconds 90] [--supercronic BIN]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def measure(manifests: int, warm_up: float, seconds: float, root: Path = ROOT,
            supercronic: str | None = None) -> tuple[float, float | None]:
    """The share of a core (0-1) the runner of ``root``'s cronctl took over ``seconds``, and
    supercronic's on the same times in the same window (None: not measured)."""
    folder = Path(tempfile.mkdtemp(prefix="cronctl-idle-"))
    try:
        for n in range(manifests):
            (folder / f"s{n:04d}.yaml").write_text(json.dumps({
                "apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": f"s{n:04d}"},
                "spec": {"schedule": f"{n % 60} {n % 24} * * *", "jobTemplate": {"spec": {"template": {"spec": {
                    "restartPolicy": "Never", "containers": [{"name": "main", "command": ["true"]}]}}}}}}))
        (folder / "crontab").write_text("".join(f"{n % 60} {n % 24} * * * true\n" for n in range(manifests)))
        env = dict(os.environ, PYTHONPATH=str(root / "operator"))
        processes = [subprocess.Popen([sys.executable, "-m", "cronctl", "local", str(folder)], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        if supercronic is not None:
            processes.append(subprocess.Popen([supercronic, str(folder / "crontab")], stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL))
        try:
            time.sleep(warm_up)
            used, began = [cpu_seconds(p.pid) for p in processes], time.monotonic()
            time.sleep(seconds)
            shares = [(cpu_seconds(p.pid) - u) / (time.monotonic() - began) for p, u in zip(processes, used)]
            return shares[0], shares[1] if supercronic is not None else None
        finally:
            for process in processes:
                process.send_signal(signal.SIGINT)
                process.wait(timeout=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifests", type=int, default=2000)
    parser.add_argument("--warm-up", type=float, default=15.0)
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose cronctl to run")
    parser.add_argument("--supercronic", default=shutil.which("supercronic") or str(Path.home() / "go/bin/supercronic"),
                        help="the peer's binary (go install github.com/aptible/supercronic@latest)")
    args = parser.parse_args()
    peer = args.supercronic if Path(args.supercronic).exists() else None
    share, peer_share = measure(args.manifests, args.warm_up, args.seconds, args.root, peer)
    print(f"idle cronctl local, {args.manifests} manifests, {args.seconds:g} s: {share * 100:.3f}% of a core "
          f"(goal: under 0.5%)")
    if peer_share is None:
        print(f"  supercronic: not measured ({args.supercronic} is not there)")
    else:
        print(f"  supercronic on the same {args.manifests} times, the same window: {peer_share * 100:.3f}% of a core")


if __name__ == "__main__":
    main()
