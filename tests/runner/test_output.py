"""cronctl logs: a run's output, the newest run by default (a manual one too), a run by its
history name, its standard error, and followed until the run ends."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cronctl.runner.output import RunOutput, run_output, show
from cronctl.runner.wrapper import CappedLog
from cronctl.runner.views import ViewError, trigger

from .support import SOURCE_ROOT, Clock, journal, manifest, runner, until


def printed(folder: Path, schedule: str, run: str | None = None, stream: str = "stdout") -> bytes:
    out: list[bytes] = []
    show(run_output(folder, schedule, run), stream, out.append)
    return b"".join(out)


def a_schedule_with_two_runs_and_a_manual_one(folder: Path, clock: Clock) -> None:
    (folder / "say.yaml").write_text(manifest("say", "*/5 * * * *", ["sh", "-c",
                                                                     'echo "out $CRONCTL_REASON"; echo err >&2']))
    r = runner(folder, clock)
    r.step()
    for minute in ("00:05", "00:10"):
        clock.set(f"2024-03-01T{minute}")
        until(r, lambda minute=minute: len(journal(folder, "say")) == (1 if minute == "00:05" else 2))
    trigger(folder, "say")
    until(r, lambda: len(journal(folder, "say")) == 3)


def test_the_newest_run_by_default_a_manual_one_included_and_a_run_by_its_history_name(folder: Path,
                                                                                         clock: Clock) -> None:
    a_schedule_with_two_runs_and_a_manual_one(folder, clock)
    runs = [entry["run"] for entry in journal(folder, "say")]
    assert run_output(folder, "say").run == runs[-1]
    assert printed(folder, "say") == b"out manual\n"
    assert printed(folder, "say", runs[0]) == b"out scheduled\n"
    assert printed(folder, "say", runs[0], "stderr") == b"err\n"


def test_a_run_the_schedule_never_had_is_named_with_its_latest_runs(folder: Path, clock: Clock) -> None:
    a_schedule_with_two_runs_and_a_manual_one(folder, clock)
    with pytest.raises(ViewError) as refused:
        run_output(folder, "say", "say-99")
    assert refused.value.exit_code == 2 and "say has no run 'say-99' (its latest: say-1, say-2, say-3)" in \
        refused.value.message


def test_a_schedule_without_runs_says_so_with_exit_1(folder: Path) -> None:
    with pytest.raises(ViewError) as nothing:
        run_output(folder, "say")
    assert (nothing.value.exit_code, nothing.value.message) == (1, f"say has no run yet in {folder}")


def test_follow_prints_the_output_as_it_comes_until_the_run_ends(folder: Path, clock: Clock) -> None:
    (folder / "slow.yaml").write_text(manifest("slow", "*/5 * * * *", [
        "sh", "-c", 'echo one; while [ ! -e "$0/go" ]; do sleep 0.02; done; echo two', str(folder)]))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: (found := list(folder.glob("runs/slow/*/stdout.log"))) and found[0].read_bytes())
    env = dict(os.environ, PYTHONPATH=str(SOURCE_ROOT))
    follower = subprocess.Popen([sys.executable, "-m", "cronctl", "logs", "slow", "--follow", "--dir", str(folder)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert follower.stdout is not None
    assert follower.stdout.readline() == b"one\n"
    time.sleep(0.3)
    assert follower.poll() is None  # the run goes on: so does the follower
    (folder / "go").touch()
    until(r, lambda: journal(folder, "slow"))
    out, err = follower.communicate(timeout=20)
    assert (follower.returncode, out, err) == (0, b"two\n", b"")


def lines(first: int, last: int) -> bytes:
    return "".join(f"line {n:04}\n" for n in range(first, last + 1)).encode()


def follow_a_log_cut_while_followed(run: Path, per_poll: int, polls: int) -> bytes:
    """``show --follow`` on a log the wrapper's CappedLog writes ``per_poll`` lines to between two
    looks, cut past 60 bytes (and 20 of slack) as the wrapper cuts it; the run ends after ``polls``."""
    log = CappedLog(run / "stdout.log", 60)
    log.slack = 20  # cuts every few lines (the wrapper's slack is at least one read)
    written = [0]

    def more(seconds: float) -> None:
        log.write(lines(written[0] + 1, written[0] + per_poll))
        written[0] += per_poll
        if written[0] >= per_poll * polls:
            log.close()
            (run / "exit.json").write_text("{}")

    more(0)
    out: list[bytes] = []
    show(RunOutput("say-1", run), "stdout", out.append, follow=True, sleep=more)
    return b"".join(out)


def test_follow_goes_on_after_a_cut_with_no_line_skipped_or_repeated(tmp_path: Path) -> None:
    assert follow_a_log_cut_while_followed(tmp_path, per_poll=3, polls=12) == lines(1, 36)


def test_follow_says_how_many_bytes_were_cut_before_it_could_show_them(tmp_path: Path) -> None:
    # 11 lines a look: the log keeps its last 60 bytes (6 lines), so 5 of each 11 go unseen; the
    # first look shows the log as it is, its marker line first.
    shown = follow_a_log_cut_while_followed(tmp_path, per_poll=11, polls=3)
    notice = b"[cronctl: 50 bytes were cut before they could be shown]\n"
    assert shown == b"[cronctl: 50 earlier bytes cut; the last 60 are kept]\n" + lines(6, 11) + notice + \
        lines(17, 22) + notice + lines(28, 33)


def test_a_runs_name_alone_names_the_run_and_its_schedule(folder: Path, clock: Clock) -> None:
    a_schedule_with_two_runs_and_a_manual_one(folder, clock)
    assert run_output(folder, "say-1") == run_output(folder, "say", "say-1")
    assert printed(folder, "say-1") == b"out scheduled\n"
    with pytest.raises(ViewError) as nothing:
        run_output(folder, "say-99")
    assert nothing.value.exit_code == 1
