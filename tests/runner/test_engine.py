"""The single-node runner end to end: manifests in a folder, real processes, an injected clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cronctl.runner.engine import Runner
from cronctl.runner.views import history_lines, status_lines, trigger

from .support import SOURCE_ROOT, Clock, journal, manifest, runner, t, until, wait_until


def test_a_firing_runs_the_first_containers_command_with_its_env_and_keeps_its_output(folder: Path,
                                                                                         clock: Clock) -> None:
    (folder / "greet.yaml").write_text(manifest("greet", "*/5 * * * *", ["sh", "-c", "echo hi $WHO; exit 3"],
                                                env={"WHO": "there"}))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    entries = until(r, lambda: journal(folder, "greet"))
    assert [(e["run"], e["reason"], e["outcome"], e["nominal"]) for e in entries] == [
        ("greet-1", "scheduled", "failed", t("2024-03-01T00:05"))]
    logs = list((folder / "runs" / "greet").glob("*/stdout.log"))
    assert [log.read_text() for log in logs] == ["hi there\n"]
    assert any("greet-1" in line and "failed" in line for line in history_lines(folder, "greet"))


def test_a_manifest_means_what_it_means_on_a_cluster_var_references_expanded_and_working_dir_honoured(
        folder: Path, clock: Clock) -> None:
    """$(VAR) in command, args and env values expand from the container's env as the kubelet
    expands them ($$ escapes, unknown ones stay as written); the command runs in workingDir."""
    body = json.loads(manifest("greet", "*/5 * * * *", ["sh", "-c", 'echo "$1 $2 $3 $GREETING"; pwd', "sh"],
                               env={"WHO": "there", "GREETING": "hi $(WHO)"}))
    container = body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    container["args"] = ["$(GREETING)", "$$(WHO)", "$(NOBODY)"]
    container["workingDir"] = "work"
    (folder / "work").mkdir()
    (folder / "greet.yaml").write_text(json.dumps(body))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    entries = until(r, lambda: journal(folder, "greet"))
    assert entries[0]["outcome"] == "succeeded"
    [log] = list((folder / "runs" / "greet").glob("*/stdout.log"))
    assert log.read_text() == f"hi there $(WHO) $(NOBODY) hi there\n{(folder / 'work').resolve()}\n"


@pytest.mark.parametrize("working_dir, runs_in", [(None, "."), ("work", "work")])
def test_a_runner_given_a_relative_folder_runs_each_command_in_it_or_its_working_dir(
        folder: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch, working_dir: str | None, runs_in: str) -> None:
    """As the Quick start runs it (cronctl local examples/local): the wrapper runs elsewhere, so
    the folder and a relative workingDir are made absolute."""
    body = json.loads(manifest("here", "*/5 * * * *", ["pwd"]))
    if working_dir:
        body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["workingDir"] = working_dir
        (folder / working_dir).mkdir()
    (folder / "here.yaml").write_text(json.dumps(body))
    monkeypatch.chdir(folder.parent)
    r = runner(Path(folder.name), clock)
    r.step()
    clock.set("2024-03-01T00:05")
    [entry] = until(r, lambda: journal(folder, "here"))
    assert entry["outcome"] == "succeeded", entry
    [log] = list((folder / "runs" / "here").glob("*/stdout.log"))
    assert log.read_text() == f"{(folder / runs_in).resolve()}\n"


def test_a_run_past_its_timeout_is_stopped_even_if_it_ignores_sigterm(folder: Path, clock: Clock) -> None:
    (folder / "slow.yaml").write_text(manifest("slow", "*/5 * * * *", ["sh", "-c", "trap '' TERM; sleep 60"],
                                               timeoutMinutes=1, maxRetries=1))  # the core's timeout
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: list((folder / "runs" / "slow").glob("*/pid")))
    clock.set("2024-03-01T00:06")
    entries = until(r, lambda: journal(folder, "slow"), timeout=20)
    assert entries[0]["outcome"] == "timed_out"


@pytest.mark.parametrize("command, outcome", [("exit 0", "succeeded"), ("exit 3", "failed")])
def test_a_run_that_ended_within_its_timeout_is_not_timed_out_by_a_clock_past_it_when_seen(
        folder: Path, clock: Clock, command: str, outcome: str) -> None:
    """A runner stopped (SIGSTOP, a laptop lid) or its clock stepped while a short run went: when it
    looks again, its clock is past the timeout and the run's end is there. The run's own elapsed
    time (the wrapper's, monotonic) decides: it ended well within its minute."""
    (folder / "quick.yaml").write_text(manifest("quick", "*/5 * * * *", ["sh", "-c", f"sleep 1; {command}"],
                                                timeoutMinutes=1))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: list((folder / "runs" / "quick").glob("*/pid")))
    wait_until(lambda: list((folder / "runs" / "quick").glob("*/exit.json")))  # the runner does not look
    assert journal(folder, "quick") == []
    clock.set("2024-03-02T01:05")  # 25 h on
    [entry] = until(r, lambda: journal(folder, "quick"))
    assert entry["outcome"] == outcome, entry


def test_firings_wait_for_a_free_slot_in_nominal_time_then_name_order(folder: Path, clock: Clock) -> None:
    for name in ("beta", "alpha"):
        (folder / f"{name}.yaml").write_text(manifest(name, "*/5 * * * *", ["sh", "-c", "sleep 0.5"]))
    r = runner(folder, clock, workers=1)
    r.step()
    clock.set("2024-03-01T00:05")
    r.step()
    assert [(f.schedule, f.slot) for f in r.firings.values() if f.slot] == [("alpha", "worker-1")]
    assert r.waiting_reason() == "queued: 1/1 worker busy"
    assert any("queued: 1/1 worker busy" in line for line in status_lines(folder))
    until(r, lambda: journal(folder, "beta"))


def test_a_manual_trigger_fires_once_with_reason_manual(folder: Path, clock: Clock) -> None:
    (folder / "adhoc.yaml").write_text(manifest("adhoc", "0 0 1 1 *", ["true"]))
    r = runner(folder, clock)
    r.step()
    trigger(folder, "adhoc")
    entries = until(r, lambda: journal(folder, "adhoc"))
    assert [(e["reason"], e["outcome"]) for e in entries] == [("manual", "succeeded")]
    assert not list((folder / "triggers").glob("*.json"))


def test_a_clock_that_goes_back_fires_nothing_again(folder: Path, clock: Clock) -> None:
    (folder / "tick.yaml").write_text(manifest("tick", "*/5 * * * *", ["true"]))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: journal(folder, "tick"))
    clock.set("2024-03-01T00:01")
    for _ in range(5):
        r.step()
    clock.set("2024-03-01T00:05")
    r.step()
    assert len(journal(folder, "tick")) == 1


def test_a_book_of_a_newer_version_is_refused_and_left_untouched(folder: Path, clock: Clock) -> None:
    (folder / "job.yaml").write_text(manifest("job", "* * * * *", ["true"]))
    book = folder / "cronctl.json"
    book.write_text('{"version": 99, "future": true}')
    before = book.read_bytes(), book.stat().st_mtime_ns
    r = runner(folder, clock)
    clock.set("2024-03-01T00:05")
    for _ in range(3):
        r.step()
    assert (book.read_bytes(), book.stat().st_mtime_ns) == before
    assert not (folder / "runs").exists()


def test_a_book_that_does_not_parse_is_moved_aside_and_the_runner_starts_empty(folder: Path, clock: Clock) -> None:
    (folder / "cronctl.json").write_text("{not json")
    messages: list[str] = []
    r = Runner(folder, clock, 1, say=messages.append)
    assert r.open()
    assert len(list(folder.glob("cronctl.json.broken-*"))) == 1
    assert any("moved aside" in message for message in messages)


def test_a_second_runner_is_read_only_and_names_the_holder(folder: Path, clock: Clock) -> None:
    first = runner(folder, clock)
    messages: list[str] = []
    second = Runner(folder, clock, 1, say=messages.append)
    assert not second.open()
    assert str(os.getpid()) in messages[0] and "read-only" in messages[0]
    first.lock.release()
    assert second.open()


CRASHING_RUNNER = """
import sys
import time
from pathlib import Path
sys.path.insert(0, {operator!r})
from cronctl.runner.engine import Runner
import cronctl.runner.engine as engine

folder = Path({folder!r})
r = Runner(folder, lambda: {minute}, 1, say=lambda text: None)
assert r.open()
def crash(name):
    if name == {point!r}:
        import os
        os._exit(9)  # like kill -9: no cleanup, no book saved
r.executor._checkpoint = crash
r.step()
r.step()
"""


def crash_at_the_0005_start(folder: Path, clock: Clock, point: str) -> None:
    """Save the book before 00:05, then run a runner that is killed (kill -9) at ``point``
    of the 00:05 start."""
    r = runner(folder, clock)
    r.step()
    r.save()
    r.lock.release()
    script = CRASHING_RUNNER.format(operator=str(SOURCE_ROOT), folder=str(folder), minute=t("2024-03-01T00:05"),
                                    point=point)
    assert subprocess.run([sys.executable, "-c", script]).returncode == 9


@pytest.mark.parametrize("point", ["after_mkdir", "after_request", "after_spawn"])
def test_a_crash_at_any_point_of_a_start_starts_no_second_process_and_loses_no_run(
        folder: Path, clock: Clock, point: str) -> None:
    (folder / "once.yaml").write_text(manifest("once", "*/5 * * * *", ["sh", "-c", "echo ran >> count"]))
    crash_at_the_0005_start(folder, clock, point)
    clock.set("2024-03-01T00:05")
    again = runner(folder, clock)
    entries = until(again, lambda: journal(folder, "once"))
    assert [(e["nominal"], e["outcome"]) for e in entries] == [(t("2024-03-01T00:05"), "succeeded")]
    for _ in range(5):
        again.step()
    assert (folder / "count").read_text() == "ran\n"


def test_wait_for_last_runs_a_waiting_firing_with_the_command_it_had_when_due(folder: Path, clock: Clock) -> None:
    path = folder / "wfl.yaml"
    path.write_text(manifest("wfl", "*/5 * * * *", ["sh", "-c", "sleep 1; echo first"],
                             concurrencyPolicy="WaitForLast"))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    r.step()
    clock.set("2024-03-01T00:10")
    r.step()  # 00:10 waits for the 00:05 run
    clock.set("2024-03-01T00:15")
    r.step()  # 00:15 takes its place: 00:10 is coalesced
    path.write_text(manifest("wfl", "*/5 * * * *", ["sh", "-c", "echo edited"], concurrencyPolicy="WaitForLast"))
    entries = until(r, lambda: len(journal(folder, "wfl")) >= 3 and journal(folder, "wfl"))
    assert [(e["nominal"], e["outcome"]) for e in entries[:3]] == [
        (t("2024-03-01T00:10"), "coalesced"), (t("2024-03-01T00:05"), "succeeded"),
        (t("2024-03-01T00:15"), "succeeded")]
    logs = sorted((folder / "runs" / "wfl").glob("*/stdout.log"))
    assert [log.read_text() for log in logs] == ["first\n", "first\n"]


def test_catch_up_all_runs_every_missed_day_in_order(folder: Path, clock: Clock) -> None:
    (folder / "daily.yaml").write_text(manifest("daily", "0 2 * * *", ["true"], concurrencyPolicy="WaitForLast",
                                                catchUp="All"))
    clock.set("2024-03-13T20:00")
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-17T09:00")
    entries = until(r, lambda: len(journal(folder, "daily")) == 4 and journal(folder, "daily"))
    assert [(e["nominal"], e["reason"]) for e in entries] == [
        (t(f"2024-03-{day}T02:00"), "catch-up") for day in (14, 15, 16, 17)]


def test_a_suspended_schedule_counts_no_missed_run_and_resumes_at_its_next_time(folder: Path, clock: Clock) -> None:
    path = folder / "pause.yaml"
    path.write_text(manifest("pause", "*/5 * * * *", ["true"], suspend=True))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:12")
    r.step()
    path.write_text(manifest("pause", "*/5 * * * *", ["true"]))
    clock.set("2024-03-01T00:13")
    r.step()
    assert journal(folder, "pause") == [] and not r.firings
    clock.set("2024-03-01T00:15")
    entries = until(r, lambda: journal(folder, "pause"))
    assert [e["nominal"] for e in entries] == [t("2024-03-01T00:15")]


def test_the_node_switch_stops_all_firing_and_its_off_time_counts_no_missed_run(folder: Path, clock: Clock) -> None:
    (folder / "busy.yaml").write_text(manifest("busy", "*/5 * * * *", ["true"]))
    r = runner(folder, clock)
    r.step()
    (folder / "cronctl.disabled").touch()
    clock.set("2024-03-01T00:12")
    r.step()
    (folder / "cronctl.disabled").unlink()
    clock.set("2024-03-01T00:13")
    r.step()
    assert not r.firings
    clock.set("2024-03-01T00:15")
    assert [e["nominal"] for e in until(r, lambda: journal(folder, "busy"))] == [t("2024-03-01T00:15")]


def test_a_second_runner_shows_the_schedules_read_only_and_takes_over_when_the_first_ends(
        folder: Path, clock: Clock) -> None:
    from cronctl.runner.engine import run_forever

    (folder / "shared.yaml").write_text(manifest("shared", "*/5 * * * *", ["true"]))
    first = runner(folder, clock)
    first.step()
    first.save()
    messages: list[str] = []
    second = Runner(folder, clock, 1, say=messages.append)
    turns = iter(range(1000))

    def stop_after_takeover() -> bool:
        if next(turns) == 3:
            first.lock.release()  # the first runner ends
        return second.lock.held

    run_forever(second, poll_seconds=0.01, retry_lock_seconds=0.02, should_stop=stop_after_takeover)
    assert any("read-only" in m for m in messages)
    assert any(m.startswith("shared: */5 * * * *") for m in messages)
    assert second.lock.held


def test_jitter_moves_the_actual_start_never_the_nominal_time_and_spares_catch_up(folder: Path) -> None:
    from cronctl.core.every import jitter_offset

    (folder / "spread.yaml").write_text(manifest("spread", "*/5 * * * *", ["true"], jitterSeconds=3600))
    minute = Clock("2024-03-01T00:00")
    wall = {"seconds": minute.now * 60.0}
    r = Runner(folder, minute, 1, say=lambda text: None, grace_seconds=0.5, seconds=lambda: wall["seconds"])
    assert r.open()
    r.step()
    nominal = t("2024-03-01T00:05")
    offset = jitter_offset(3600, "spread", nominal)
    assert 0 < offset <= 3600  # for this name and time: a real delay
    minute.set("2024-03-01T00:05")
    wall["seconds"] = nominal * 60.0 + offset - 1
    r.step()
    assert [f.slot for f in r.firings.values()] == [None]  # due, but its actual time has not come
    wall["seconds"] = nominal * 60.0 + offset
    entries = until(r, lambda: journal(folder, "spread"))
    assert [(e["nominal"], e["reason"]) for e in entries] == [(nominal, "scheduled")]


def test_a_rule_with_its_own_jitter_needs_the_schedules_jitter_at_zero(folder: Path, clock: Clock) -> None:
    (folder / "both.yaml").write_text(manifest("both", "every(5).minutes.jitter(30)", ["true"], jitterSeconds=10))
    messages: list[str] = []
    r = Runner(folder, clock, 1, say=messages.append)
    assert r.open()
    r.step()
    assert any("spec.schedule: jitter: a rule that sets .jitter() needs the schedule's own jitter at 0" in m
               for m in messages)
    assert "both" not in r.controller.state.jobs



def test_replace_stops_the_process_of_a_running_run(folder: Path, clock: Clock) -> None:
    """Run outcomes: stopped is a run whose process was stopped."""
    (folder / "swap.yaml").write_text(manifest("swap", "*/5 * * * *", ["sh", "-c", "sleep 30"],
                                               concurrencyPolicy="Replace"))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: list((folder / "runs" / "swap").glob("*/pid")))
    clock.set("2024-03-01T00:10")
    until(r, lambda: journal(folder, "swap"))
    assert [(e["nominal"], e["outcome"], e["attempts"]) for e in journal(folder, "swap")] == [
        (t("2024-03-01T00:05"), "stopped", 1)]
    until(r, lambda: list((folder / "runs" / "swap").glob("20240301T0010/pid")))  # the new run took its place
    r.executor.stop(next(f.key for f in r.firings.values()), "stopped", 0)
    until(r, lambda: not r.firings)


def test_replace_cancels_a_firing_that_never_started(folder: Path, clock: Clock) -> None:
    """Run outcomes: canceled is a run that never ran (here it waited for the only worker)."""
    (folder / "hog.yaml").write_text(manifest("hog", "0 * * * *", ["sh", "-c", "sleep 30"]))
    (folder / "swap.yaml").write_text(manifest("swap", "*/5 * * * *", ["true"], concurrencyPolicy="Replace"))
    r = runner(folder, clock, workers=1)
    r.step()
    clock.set("2024-03-01T01:00")
    until(r, lambda: list((folder / "runs" / "hog").glob("*/pid")))  # hog holds the slot: swap waits
    clock.set("2024-03-01T01:05")
    until(r, lambda: journal(folder, "swap"))
    assert [(e["nominal"], e["outcome"], e["actual"]) for e in journal(folder, "swap")] == [
        (t("2024-03-01T01:00"), "canceled", None)]
    r.executor.stop(next(f.key for f in r.firings.values() if f.schedule == "hog"), "stopped", 0)
    until(r, lambda: not r.firings)


def test_a_run_started_before_a_crash_and_ended_before_its_firing_is_decided_again_is_recorded(
        folder: Path, clock: Clock) -> None:
    """The runner crashed after starting the 00:05 run, before saving; it restarts with a clock
    that reads 00:04, so the run's end arrives before the core decides 00:05 again."""
    (folder / "once.yaml").write_text(manifest("once", "*/5 * * * *", ["sh", "-c", "echo ran >> count"]))
    crash_at_the_0005_start(folder, clock, "after_spawn")
    wait_until(lambda: (folder / "runs" / "once" / "20240301T0005" / "exit.json").exists())  # it ran and ended
    clock.set("2024-03-01T00:04")
    again = runner(folder, clock)
    for _ in range(3):
        again.step()  # the end is reported and acknowledged: no firing knows it yet
    clock.set("2024-03-01T00:05")
    entries = until(again, lambda: journal(folder, "once"))
    assert [(e["nominal"], e["outcome"]) for e in entries] == [(t("2024-03-01T00:05"), "succeeded")]
    assert not again.firings and again.slots.free_count == again.slots.size  # no slot held forever
    assert (folder / "count").read_text() == "ran\n"


def test_a_worker_that_frees_takes_the_next_waiting_run_at_once_not_at_the_next_poll(folder: Path,
                                                                                    clock: Clock) -> None:
    """6 runs due at one minute on 2 workers, the loop polling every 2 s: each run after the
    first two starts as a worker frees (it waited for the next poll, 2 s, before)."""
    import threading

    from cronctl.runner.engine import run_forever

    for index in range(6):
        (folder / f"quick-{index}.yaml").write_text(manifest(f"quick-{index}", "*/5 * * * *", ["true"]))
    r = runner(folder, clock, workers=2)
    stop = threading.Event()
    loop = threading.Thread(target=run_forever, args=(r,), kwargs={"poll_seconds": 2.0, "should_stop": stop.is_set})
    loop.start()
    try:
        wait_until(lambda: (folder / "cronctl.json").exists())
        clock.set("2024-03-01T00:05")
        wait_until(lambda: len(list(folder.glob("runs/*/*/exit.json"))) == 6, timeout=30)
    finally:
        stop.set()
        loop.join()
    runs = [path.parent for path in folder.glob("runs/*/*/exit.json")]
    starts = sorted((run / "pid").stat().st_mtime for run in runs)
    ends = sorted((run / "exit.json").stat().st_mtime for run in runs)
    gaps = [start - end for end, start in zip(ends, starts[2:])]
    assert max(gaps) < 0.6, gaps


@pytest.mark.parametrize("command, working_dir, exit_code, why", [
    (["no-such-command-cronctl"], None, 127, "command not found: 'no-such-command-cronctl'"),
    (["./notes.txt"], None, 126, "not executable (permission denied): './notes.txt'"),
    (["true"], "gone", 127, "the working directory '{folder}/gone' does not exist"),
    (["echo", "x" * 200_000], None, 126, "the arguments are too long: 200,006 bytes of arguments and "),  # E2BIG:
    # one string past 32 pages (128 KiB)
], ids=["not-found", "not-executable", "no-working-dir", "too-long"])
def test_a_run_that_could_not_start_says_why_in_its_line_and_its_history_note(
        folder: Path, clock: Clock, command: list[str], working_dir: str | None, exit_code: int, why: str) -> None:
    (folder / "notes.txt").write_text("not a program")
    body = json.loads(manifest("broken", "*/5 * * * *", command[:2]))
    container = body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    container["args"] = command[2:]
    if working_dir is not None:
        container["workingDir"] = working_dir
    (folder / "broken.yaml").write_text(json.dumps(body))
    said: list[str] = []
    r = Runner(folder, clock, 1, say=said.append)
    r.step()
    clock.set("2024-03-01T00:05")
    [entry] = until(r, lambda: journal(folder, "broken"))
    expected = why.format(folder=folder)
    assert (entry["outcome"], entry["exit_code"]) == ("failed", exit_code)
    assert entry["note"].startswith(f"did not start: {expected}")
    assert any(line.startswith(f"broken: broken-1 failed (exit {exit_code}: did not start: {expected}")
               for line in said), said


def test_a_daemon_the_command_starts_ends_with_its_run_as_a_pods_processes_do(folder: Path, clock: Clock) -> None:
    """setsid sleep 98 &: a session of its own, outside the run's process group and its timeout."""
    (folder / "daemon.yaml").write_text(manifest("daemon", "*/5 * * * *", [
        "sh", "-c", 'setsid sh -c "echo \\$\\$ > $0/daemon.pid; exec sleep 98" & sleep 0.3; echo started',
        str(folder)]))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    [entry] = until(r, lambda: journal(folder, "daemon"))
    assert entry["outcome"] == "succeeded"
    pid = int((folder / "daemon.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_run_past_its_jobs_active_deadline_is_stopped_and_counted_failed(folder: Path, clock: Clock) -> None:
    """activeDeadlineSeconds acts as on Kubernetes: the run is stopped once it has run that long
    (the job controller's DeadlineExceeded), whatever the minute says."""
    body = json.loads(manifest("slow", "*/5 * * * *", ["sleep", "30"]))
    body["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"] = 1
    (folder / "slow.yaml").write_text(json.dumps(body))
    said: list[str] = []
    r = Runner(folder, clock, 1, say=said.append)
    r.step()
    clock.set("2024-03-01T00:05")
    began = time.monotonic()
    [entry] = until(r, lambda: journal(folder, "slow"))
    assert time.monotonic() - began < 10
    assert (entry["outcome"], entry["signal"]) == ("failed", 15)
    assert entry["note"] == "DeadlineExceeded: stopped at its activeDeadlineSeconds (1 s)"
    assert any(line.startswith("slow: slow-1 failed (signal 15: DeadlineExceeded") for line in said), said
    assert not [notice for notice in said if "not honoured" in notice]


def test_a_jobs_backoff_limit_retries_a_failed_try_within_the_run_as_on_kubernetes(folder: Path, clock: Clock) -> None:
    """backoffLimit acts as on Kubernetes: a failed try is run again (after 10 s) within the same
    run, and the run succeeds with its second try; history shows one run, succeeded."""
    count = folder / "tries"
    body = json.loads(manifest("flaky", "*/5 * * * *", ["sh", "-c", f'echo x >> {count}; test "$(wc -l < {count})" -ge 2']))
    body["spec"]["jobTemplate"]["spec"]["backoffLimit"] = 1
    (folder / "flaky.yaml").write_text(json.dumps(body))
    said: list[str] = []
    r = Runner(folder, clock, 1, say=said.append)
    r.step()
    clock.set("2024-03-01T00:05")
    [entry] = until(r, lambda: journal(folder, "flaky"), timeout=30)
    assert count.read_text().count("x") == 2
    assert (entry["outcome"], entry["attempts"], entry["exit_code"]) == ("succeeded", 1, 0)
    assert not [notice for notice in said if "not honoured" in notice]


def test_with_max_retries_each_attempt_is_tried_once_whatever_the_backoff_limit(folder: Path, clock: Clock) -> None:
    """As the operator's Jobs (backoffLimit 0 with maxRetries): the retries are cronctl's, counted."""
    body = json.loads(manifest("flaky", "*/5 * * * *", ["sh", "-c", "exit 3"], maxRetries=1, retryDelayMinutes=1))
    body["spec"]["jobTemplate"]["spec"]["backoffLimit"] = 4
    (folder / "flaky.yaml").write_text(json.dumps(body))
    r = Runner(folder, clock, 1, say=lambda line: None)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: any(f.retry_due is not None for f in r.firings.values()))
    [run_dir] = (folder / "runs" / "flaky").iterdir()
    assert json.loads((run_dir / "request.json").read_text())["backoff_limit"] == 0
    assert "tries" not in json.loads((run_dir / "exit.json").read_text())
