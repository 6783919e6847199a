"""An idle runner with 500 manifests uses next to no CPU: it reads a manifest again only when the
file changed, and keeps the parsed definitions (and their verdicts) otherwise.

Before: every step (one a second) read and parsed all 500 files, about 270 ms of CPU a step,
a quarter of a core. ``python -m tests.runner.test_idle_cost`` prints the figures.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import pytest

from cronctl.runner import folder as scanning
from cronctl.runner.engine import Runner

from .support import Clock, manifest

MANIFESTS = 500
IDLE_STEP_BUDGET_MS = 2.0
# Or this many times what it costs this machine just to list the folder and stat each manifest,
# the least a step that notices an edit must do: a stat costs a virtual machine 2-5x what it
# costs bare metal, and on such a machine a step took 2-3.1x the bare look (4.4-5.6 against
# 1.8-2.8 ms). Reading the manifests again, the cost this guards against, is 50x or more.
LOOKING_FACTOR = 5.0


def five_hundred(folder: Path) -> None:
    past = time.time() - 60  # written a minute ago: no file is "racy" (see folder.RACY_SECONDS)
    for i in range(MANIFESTS):
        path = folder / f"s{i:03d}.yaml"
        path.write_text(manifest(f"s{i:03d}", "0 3 * * *", ["true"]))
        os.utime(path, (past, past))


def cpu_ms_per_step(r: Runner, steps: int = 20, batches: int = 5) -> float:
    """The least CPU time a step took, on average over a batch (the least loaded batch)."""
    costs = []
    for _ in range(batches):
        start = time.process_time()
        for _ in range(steps):
            r.step()
        costs.append((time.process_time() - start) * 1000 / steps)
    return min(costs)


def cpu_ms_to_look(folder: Path, batches: int = 5, steps: int = 20) -> float:
    """The least CPU time, on average over a batch, of listing the folder and stat-ing each file."""
    costs = []
    for _ in range(batches):
        start = time.process_time()
        for _ in range(steps):
            with os.scandir(folder) as entries:
                for entry in entries:
                    entry.stat()
        costs.append((time.process_time() - start) * 1000 / steps)
    return min(costs)


def test_an_idle_runner_with_500_manifests_reads_none_of_them_and_steps_at_little_more_than_a_look_at_the_files(
        folder: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    five_hundred(folder)
    r = Runner(folder, clock, 4, say=lambda text: None)
    assert r.open()
    r.step()
    assert len(r.controller.state.jobs) == MANIFESTS
    reads: list[Path] = []
    load_file = scanning.load_file
    monkeypatch.setattr(scanning, "load_file", lambda path: reads.append(path) or load_file(path))
    cost = cpu_ms_per_step(r)
    assert reads == []
    looking = cpu_ms_to_look(folder)
    assert cost < max(IDLE_STEP_BUDGET_MS, LOOKING_FACTOR * looking), \
        f"{cost:.2f} ms of CPU per idle step; {looking:.2f} ms to list and stat the folder"
    (folder / "s007.yaml").write_text(manifest("s007", "0 4 * * *", ["true"]))  # one edit: one file read
    r.step()
    assert [path.name for path in reads] == ["s007.yaml"]
    assert r.controller.state.jobs["s007"].spec.expression == "0 4 * * *"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as name:
        five_hundred(Path(name))
        runner = Runner(Path(name), Clock("2024-03-01T00:00"), 4, say=lambda text: None)
        assert runner.open()
        start = time.process_time()
        runner.step()
        print(f"first step (reads {MANIFESTS} manifests): {(time.process_time() - start) * 1000:.1f} ms CPU",
              file=sys.stderr)
        print(f"idle step: {cpu_ms_per_step(runner):.2f} ms CPU; listing and stat-ing the folder: "
              f"{cpu_ms_to_look(Path(name)):.2f} ms", file=sys.stderr)
