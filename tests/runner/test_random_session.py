"""A long session of what users do to a runner's folder, at random (seeded).

``cronctl local`` runs as a real process on a clock file. Each turn moves the
clock one minute (now and then many) and does something to the folder: a
schedule written, edited into something invalid, fixed, deleted, renamed, a
trigger (a good one, a garbage one, one for a schedule that does not exist),
the node switch left alone, the runner killed with SIGKILL and started again.
Throughout, a canary schedule that fires every minute must run for every
minute the clock shows, the book must always parse, and no traceback may
reach the runner's output.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from cronctl.core.times import format_time

from .support import SOURCE_ROOT, manifest, t

START = "2024-03-01T00:00"
TURNS = 70
SCHEDULES = ["*/2 * * * *", "*/5 * * * *", "@every 3m", "every(7).minutes", "0 * * * *", "*/3 9-17 * * MON-FRI"]
POLICIES = ["Allow", "Forbid", "Replace", "WaitForLast"]
MISTAKES: list[dict[str, Any]] = [
    {"timeoutMinutes": "ten"}, {"startingDeadlineSeconds": "x"}, {"maxRetries": "x"}, {"timeoutMinutes": -5},
    {"timeoutMinutes": 1.5}, {"suspend": "yes"}, {"schedul": "* * * * *"}, {"schedule": "0 9 * * 8"},
    {"timeZone": "Mars/Olympus"}, {"concurrencyPolicy": "Sometimes"}, {"jitterSeconds": 5000},
]


class Session:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.clock_file = folder.parent / "clock"
        self.minute = t(START)
        self.write_clock()
        self.process: subprocess.Popen[str] | None = None
        self.logs: list[Path] = []

    def write_clock(self) -> None:
        temp = self.clock_file.with_suffix(".tmp")
        temp.write_text(format_time(self.minute))
        os.replace(temp, self.clock_file)

    def start(self) -> None:
        log = self.folder.parent / f"runner-{len(self.logs)}.log"
        self.logs.append(log)
        env = {**os.environ, "PYTHONPATH": str(SOURCE_ROOT), "CRONCTL_CLOCK_FILE": str(self.clock_file)}
        with log.open("w") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "cronctl", "local", str(self.folder),
                                             "--workers", "4", "--poll", "0.05"],
                                            stdout=out, stderr=subprocess.STDOUT, text=True, env=env)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def book(self) -> dict[str, Any]:
        path = self.folder / "cronctl.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def output(self) -> str:
        return "".join(log.read_text() for log in self.logs)

    def canary_ran(self, minute: int) -> bool:
        return any(entry.get("nominal") == minute and entry.get("outcome") == "succeeded"
                   for entry in self.book().get("journal", {}).get("canary", []))


def until(condition: Callable[[], bool], what: Callable[[], str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what()
        time.sleep(0.05)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_long_random_session_never_stops_the_canary(tmp_path: Path, seed: int) -> None:
    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "canary.yaml").write_text(manifest("canary", "* * * * *", ["true"]))
    rng = random.Random(seed)
    session = Session(folder)
    session.start()
    until(lambda: "canary" in {job["name"] for job in session.book().get("controller", {}).get("jobs", [])},
          lambda: "the runner did not start:\n" + session.output())
    names = [f"job-{i}" for i in range(5)]
    try:
        for turn in range(TURNS):
            act = rng.choice(["write", "write", "break", "delete", "rename", "trigger", "garbage", "kill",
                              "jump", "nothing"])
            name = rng.choice(names)
            path = folder / f"{name}.yaml"
            if act == "write":
                path.write_text(manifest(name, rng.choice(SCHEDULES), ["sh", "-c", f"sleep {rng.random():.2f}"],
                                         concurrencyPolicy=rng.choice(POLICIES),
                                         timeoutMinutes=rng.choice([1, 2, 5])))
            elif act == "break":
                body = json.loads(manifest(name, rng.choice(SCHEDULES), ["true"]))
                body["spec"].update(rng.choice(MISTAKES))
                path.write_text(json.dumps(body))
            elif act == "delete" and path.exists():
                path.unlink()
            elif act == "rename" and path.exists():
                path.rename(folder / f"{rng.choice(names)}-renamed.yaml")
            elif act in ("trigger", "garbage"):
                triggers = folder / "triggers"
                triggers.mkdir(exist_ok=True)
                text = (json.dumps({"schedule": rng.choice([*names, "canary", "nobody"])}) if act == "trigger"
                        else rng.choice(["{", "[]", '{"schedule": 5}', "\x00\xff"]))
                (triggers / f"t-{turn}.json").write_text(text)
            elif act == "kill":
                session.kill()
                session.start()
            session.minute += rng.randint(30, 200) if act == "jump" else 1
            session.write_clock()
            until(lambda: session.canary_ran(session.minute),
                  lambda: f"turn {turn} ({act}): the canary did not run for {format_time(session.minute)}:\n"
                          + session.output()[-3000:])
            assert session.process is not None and session.process.poll() is None, session.output()[-3000:]
    finally:
        session.stop()
    assert "Traceback" not in session.output(), session.output()[-5000:]
