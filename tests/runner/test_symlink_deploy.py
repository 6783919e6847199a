"""A deploy by symlink (``cur -> rel1`` switched to ``rel2`` by ``mv -T``): one runner fires, its lock,
book and runs stay in one folder, the manifests follow the deploy, and status on the name is true."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cronctl.runner.engine import Runner

from .support import Clock, journal, manifest, runner, until

ROOT = Path(__file__).resolve().parents[2]


def switch(link: Path, target: Path) -> None:
    """``ln -s target link.new && mv -T link.new link``: the name moves at once."""
    new = link.with_name(link.name + ".new")
    new.symlink_to(target)
    os.replace(new, link)


def test_a_deploy_by_symlink_keeps_one_runner_and_its_files_in_one_folder(folder):
    rel1, rel2, cur = folder / "rel1", folder / "rel2", folder / "cur"
    rel1.mkdir()
    rel2.mkdir()
    (rel1 / "tick.yaml").write_text(manifest("tick", "* * * * *", ["echo", "one"]))
    (rel2 / "tick.yaml").write_text(manifest("tick", "* * * * *", ["echo", "two"]))
    cur.symlink_to(rel1)
    clock = Clock("2024-01-15T10:00")
    first = runner(cur, clock)
    first.step()
    switch(cur, rel2)
    first.step()  # the switch is seen, the new manifest read

    second = Runner(cur, clock, 2, say=lambda text: None, grace_seconds=0.5)
    assert not second.open(), "a second runner on the name fires beside the first"
    clock.set("2024-01-15T10:01")
    until(first, lambda: [r for r in journal(rel1, "tick") if r.get("outcome") == "succeeded"])
    assert second.open() is False

    assert not (rel2 / "cronctl.json").exists() and not (rel2 / "runs").exists()
    runs = list((rel1 / "runs" / "tick").iterdir())
    assert len(runs) == 1 and "two" in (runs[0] / "stdout.log").read_text()  # the deploy's manifest ran

    clock_file = folder / "clock"
    clock_file.write_text("2024-01-15T10:02")
    status = cronctl(clock_file, "status", "--dir", str(cur), "--json")
    view = json.loads(status.stdout)
    assert view["runner"]["running"] and view["runner"]["pid"] == os.getpid()
    assert view["book"] and view["folder"] == str(rel1)  # the book the runner keeps, not the new folder's none
    assert [s["last_success"] for s in view["schedules"]] == ["2024-01-15T10:01:00Z"]
    assert cronctl(clock_file, "logs", "tick", "--dir", str(cur)).stdout == "two\n"


def cronctl(clock_file: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "cronctl", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT / "operator"),
                                               CRONCTL_CLOCK_FILE=str(clock_file)))
    assert done.returncode == 0, done.stderr
    return done
