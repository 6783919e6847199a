"""cronctl local --echo: each run's output on the runner's stream, line by line, with its run."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cronctl.runner.echo import LONGEST_LINE, Echo
from cronctl.runner.engine import Runner

from .support import Clock, manifest, until


def an_echo() -> tuple[Echo, list[tuple[str, str, str, str]]]:
    shown: list[tuple[str, str, str, str]] = []
    return Echo(lambda *line: shown.append(line)), shown


def test_complete_lines_are_shown_as_they_come_and_a_partial_one_once_it_ends(tmp_path: Path) -> None:
    echo, shown = an_echo()
    (tmp_path / "stdout.log").write_bytes(b"one\ntw")
    echo.follow("nightly-1", "nightly", tmp_path)
    assert shown == [("nightly-1", "nightly", "stdout", "one")]
    with (tmp_path / "stdout.log").open("ab") as log:
        log.write(b"o\nthree")
    echo.follow("nightly-1", "nightly", tmp_path)
    assert shown[1:] == [("nightly-1", "nightly", "stdout", "two")]
    echo.finish("nightly-1", "nightly", tmp_path)
    assert shown[2:] == [("nightly-1", "nightly", "stdout", "three")]


def test_a_run_that_ended_between_two_looks_is_shown_whole_with_both_streams(tmp_path: Path) -> None:
    echo, shown = an_echo()
    (tmp_path / "stdout.log").write_bytes(b"hello\n")
    (tmp_path / "stderr.log").write_bytes(b"oops\n")
    echo.finish("quick-1", "quick", tmp_path)
    assert shown == [("quick-1", "quick", "stdout", "hello"), ("quick-1", "quick", "stderr", "oops")]


def test_a_log_cut_at_its_cap_is_followed_from_its_new_end_with_a_line_saying_so(tmp_path: Path) -> None:
    echo, shown = an_echo()
    log = tmp_path / "stdout.log"
    log.write_bytes(b"a\n" * 10)
    echo.follow("big-1", "big", tmp_path)
    replacement = tmp_path / "new.log"
    replacement.write_bytes(b"[cronctl: 20 earlier bytes cut; the last 2 are kept]\na\n")
    os.replace(replacement, log)  # as the wrapper cuts a log: a new file renamed over it
    with log.open("ab") as more:
        more.write(b"after\n")
    echo.follow("big-1", "big", tmp_path)
    assert [line[3] for line in shown[10:]] == ["[cronctl: the log was cut at its cap; some output is not shown]"]
    with log.open("ab") as more:
        more.write(b"later\n")
    echo.follow("big-1", "big", tmp_path)
    assert shown[-1][3] == "later"


def test_a_line_longer_than_the_longest_is_shown_in_pieces(tmp_path: Path) -> None:
    echo, shown = an_echo()
    (tmp_path / "stdout.log").write_bytes(b"x" * (LONGEST_LINE + 1))
    echo.follow("long-1", "long", tmp_path)
    assert [len(line[3]) for line in shown] == [LONGEST_LINE + 1]


def test_the_runner_with_echo_says_each_line_of_a_run_prefixed_with_the_run(folder: Path, clock: Clock) -> None:
    (folder / "quick.yaml").write_text(manifest("quick", "*/5 * * * *", ["sh", "-c", "echo hello; echo oops >&2"]))
    said: list[str] = []
    r = Runner(folder, clock, 1, say=said.append, echo=True)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: "quick-1: hello" in said and "quick-1 (stderr): oops" in said
          and any("quick-1 succeeded" in line for line in said))  # the end is waited for too
    assert said.index("quick-1: hello") < next(i for i, line in enumerate(said) if "quick-1 succeeded" in line)


def test_in_json_each_line_of_output_is_an_output_event_with_its_run_and_stream(folder: Path, clock: Clock) -> None:
    (folder / "quick.yaml").write_text(manifest("quick", "*/5 * * * *", ["sh", "-c", "echo hello"]))
    said: list[str] = []
    r = Runner(folder, clock, 1, say=said.append, log_format="json", echo=True)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: any('"event": "output"' in line for line in said))
    [event] = [json.loads(line) for line in said if '"event": "output"' in line]
    assert {key: event[key] for key in ("message", "run", "schedule", "stream")} == {
        "message": "hello", "run": "quick-1", "schedule": "quick", "stream": "stdout"}


def test_without_echo_the_runs_output_stays_in_its_logs(folder: Path, clock: Clock) -> None:
    (folder / "quick.yaml").write_text(manifest("quick", "*/5 * * * *", ["sh", "-c", "echo hello"]))
    said: list[str] = []
    r = Runner(folder, clock, 1, say=said.append)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: any("quick-1 succeeded" in line for line in said))
    assert not [line for line in said if "hello" in line]
