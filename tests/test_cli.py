"""The cronctl command: `run`, `next` and `dispatch` as a person or a script uses them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def while_running(process: subprocess.Popen[str], deadline: float, done: Callable[[], object]) -> None:
    """Wait for ``done`` while the process runs, until ``deadline`` (monotonic)."""
    import time

    while not done():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)


class TriggeredRun(NamedTuple):
    """``cronctl local`` on a node clock offset file, with one schedule's run triggered and going."""

    process: subprocess.Popen[str]
    offset: Path  # seconds added to the node's clock: write to step it
    book: Path
    deadline: float  # monotonic

    def rows(self, name: str) -> list[dict[str, Any]]:
        """The schedule's history rows in the runner's book (none yet: empty)."""
        return list(json.loads(self.book.read_text()).get("journal", {}).get(name, []))

    def wait_for_its_row(self, name: str) -> None:
        """Until the book records the schedule's run (its end), while the runner runs."""
        while_running(self.process, self.deadline, lambda: self.rows(name))


@contextmanager
def a_triggered_run(tmp_path: Path, name: str, seconds: int, timeout_minutes: int) -> Iterator[TriggeredRun]:
    """The runner started on a folder of one schedule that never fires by itself, its run of ``sleep
    SECONDS`` (``timeoutMinutes``) triggered and started; the runner stopped with SIGINT after, and
    its stderr checked for a traceback."""
    import signal
    import time

    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / f"{name}.yaml").write_text(a_manifest(name, "0 0 1 1 *", timeoutMinutes=timeout_minutes).replace(
        '["true"]', f'["sleep", "{seconds}"]'))
    offset = tmp_path / "offset"
    offset.write_text(str(61 - time.time() % 60))  # a minute just begun: no real minute ends before the step
    env = {"CRONCTL_NODE_CLOCK_OFFSET_FILE": str(offset)}
    process = subprocess.Popen([sys.executable, "-m", "cronctl", "local", str(folder), "--poll", "0.05"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, PYTHONPATH=str(ROOT / "operator"), **env))
    book = folder / "cronctl.json"
    try:
        deadline = time.monotonic() + 30
        while_running(process, deadline, lambda: book.exists())
        assert run_cli("trigger", name, "--dir", str(folder), env=env).returncode == 0
        while_running(process, deadline, lambda: list(folder.glob(f"**/runs/{name}/*/pid")))
        yield TriggeredRun(process, offset, book, deadline)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    assert "Traceback" not in err, err


def cronctl(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"))
    return subprocess.run([sys.executable, "-m", "cronctl", *args], input=stdin, capture_output=True,
                          text=True, env=env, cwd=ROOT)


def test_run_reads_operations_from_a_file_and_prints_results_on_one_line() -> None:
    result = cronctl("run", "examples/harness/policies.json")
    assert result.returncode == 0
    assert result.stdout.count("\n") == 1
    assert json.loads(result.stdout)[-1] == {"last_schedule": "2024-03-01T01:00",
                                             "next_fire": "2024-03-01T09:40",
                                             "active": ["sync-2"], "launched": 2}


def test_run_reads_standard_input() -> None:
    result = cronctl("run", "-", stdin='[["next_runs", "@every 90m", "2024-03-01T10:07", 2]]')
    assert json.loads(result.stdout) == [["2024-03-01T11:37", "2024-03-01T13:07"]]


def test_run_refuses_a_file_that_is_not_json() -> None:
    result = cronctl("run", "-", stdin="[not json")
    assert result.returncode == 2
    assert "cannot read a JSON array" in result.stderr


def test_next_json_gives_the_utc_times_of_next_runs() -> None:
    result = cronctl("next", "30 2 * * *", "--tz", "+05:30", "--after", "2024-03-01T00:00", "--count", "2",
                     "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == ["2024-03-01T21:00", "2024-03-02T21:00"]


def test_next_shows_utc_and_local_wall_time_for_a_person() -> None:
    result = cronctl("next", "30 2 * * *", "--tz", "+05:30", "--after", "2024-03-01T00:00", "--count", "1")
    assert result.stdout.splitlines() == ["2024-03-01 21:00 UTC   Sat 2024-03-02 02:30 +05:30"]


def test_next_on_a_bad_expression_prints_the_field_and_reason_and_exits_2() -> None:
    result = cronctl("next", "0 9 * * 8")
    assert result.returncode == 2
    assert "day-of-week: 8 is out of range 0-7" in result.stderr


def test_next_on_an_expression_that_never_fires_exits_1() -> None:
    result = cronctl("next", "0 0 30 2 *", "--after", "2024-03-01T00:00", "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout) == []
    assert "never fires" in result.stderr


def test_next_refuses_a_bad_zone() -> None:
    result = cronctl("next", "0 9 * * *", "--tz", "+5:30")
    assert result.returncode == 2
    assert "--tz" in result.stderr


def test_dispatch_runs_the_seed_001_calls_from_standard_input() -> None:
    calls = [["registerWorker", "worker-b"], ["registerWorker", "worker-a"],
             ["scheduleJob", "inventory-sync", 10, 5, 1, 0], ["dispatchJobs", 9],
             ["getJobStatus", "inventory-sync", 10, 9], ["dispatchJobs", 10]]
    result = cronctl("dispatch", "-", stdin=json.dumps(calls))
    assert result.returncode == 0
    assert json.loads(result.stdout) == [True, True, True, [], "SCHEDULED", ["inventory-sync,10,1,worker-a"]]


# -- no tracebacks for people: one `cronctl:` line and an exit code ------------------------------------

A_MINUTE = "2024-03-01T00:10"


def a_manifest(name: str, schedule: str, **spec: object) -> str:
    return json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": name},
                       "spec": {"schedule": schedule, **spec, "jobTemplate": {"spec": {"template": {"spec": {
                           "restartPolicy": "Never", "containers": [{"name": "main", "command": ["true"]}]}}}}}})


def a_runner_folder(folder: Path, runs: int = 0) -> Path:
    """A folder with the manifest ``hello`` and the book of a runner that stopped at 00:03 after
    ``runs`` runs (each with its exit.json)."""
    import dataclasses

    from cronctl.core.controller import Controller
    from cronctl.core.times import parse_time
    from cronctl.manifest import read_manifest
    from cronctl.runner.book import Book

    (folder / "hello.yaml").write_text(a_manifest("hello", "* * * * *"))
    controller = Controller()
    start = parse_time("2024-03-01T00:00")
    assert start is not None
    controller.add_job(dataclasses.replace(read_manifest(json.loads(a_manifest("hello", "* * * * *")),
                                                         start).job, index=0))
    controller.state.clock = start + 3
    journal = [{"run": f"hello-{n}", "reason": "scheduled", "nominal": start - runs + n, "actual": None,
                "attempts": 1, "outcome": "succeeded", "finished": start - runs + n + 1} for n in range(runs)]
    Book(folder).save({"controller": controller.state.to_json(), "firings": [], "journal": {"hello": journal},
                       "overflows": {}, "workers": 1})
    return folder


def at(minute: str, tmp_path: Path) -> dict[str, str]:
    """The environment of a command whose clock reads ``minute`` (CRONCTL_CLOCK_FILE)."""
    clock = tmp_path / "clock"
    clock.write_text(minute)
    return {"CRONCTL_CLOCK_FILE": str(clock)}


def run_cli(*args: str, env: dict[str, str] | None = None, stdout: int = subprocess.PIPE
            ) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, PYTHONPATH=str(ROOT / "operator"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "cronctl", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env=full, cwd=ROOT, timeout=60)


def assert_one_line(result: subprocess.CompletedProcess[str], code: int, starts: str) -> None:
    assert "Traceback" not in result.stderr
    assert result.returncode == code, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(starts), result.stderr


@pytest.mark.parametrize("args, line", [
    (["status", "--bogus"], "cronctl: unrecognized arguments: --bogus (see cronctl --help)"),
    (["local", ".", "--workers", "abc"],
     "cronctl: local: argument --workers: invalid int value: 'abc' (see cronctl local --help)"),
    (["nonsense"], "cronctl: argument COMMAND: invalid choice: 'nonsense'"),
])
def test_a_usage_error_is_one_line_naming_the_command_and_its_help_and_exit_2(args: list[str], line: str) -> None:
    assert_one_line(cronctl(*args), 2, line)


@pytest.mark.parametrize("workers", ["0", "-3"])
def test_local_refuses_fewer_than_one_worker(tmp_path: Path, workers: str) -> None:
    assert_one_line(cronctl("local", str(tmp_path), "--workers", workers), 2,
                    "cronctl: --workers must be at least 1")


@pytest.mark.parametrize("workers", ["4097", "10000000", str(10**30)])
def test_local_refuses_more_workers_than_its_bound_naming_the_flag_the_value_and_the_bound(
        tmp_path: Path, workers: str) -> None:
    """No MemoryError traceback, no 738 MB taken: refused before the runner starts."""
    assert_one_line(cronctl("local", str(tmp_path), "--workers", workers), 2,
                    f"cronctl: --workers {workers}: at most 4096 (")


def without_a_reader(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command with its stdout a pipe whose reader has gone, as `... | head -1` leaves it."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return run_cli(*args, env=env, stdout=writer)
    finally:
        os.close(writer)


@pytest.mark.parametrize("command", [
    ["history", "hello", "--dir", "{dir}"],
    ["history", "hello", "--dir", "{dir}", "--json"],
    ["status", "--dir", "{dir}"],
    ["next", "hello", "--dir", "{dir}", "--count", "50"],
    ["next", "*/5 * * * *", "--count", "50"],
])
def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path, command: list[str]) -> None:
    folder = a_runner_folder(tmp_path, runs=150)
    result = without_a_reader(*[part.format(dir=folder) for part in command], env=at(A_MINUTE, tmp_path))
    assert result.stderr == ""
    assert result.returncode == 141  # 128 + SIGPIPE, as the shell reports `yes | head -1`


def interrupted_while_reading(*args: str) -> subprocess.CompletedProcess[str]:
    """Ctrl-C (SIGINT) while the command waits on its input file, a FIFO nobody writes to."""
    import signal
    import time

    fifo = Path(args[-1])
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"))
    process = subprocess.Popen([sys.executable, "-m", "cronctl", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while True:  # a bounded wait for the command to open the FIFO: then it is reading it
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, "the command never read its input"
            time.sleep(0.02)
    # Ctrl-C only once the command sleeps in read(2): a signal that lands between open(2) and
    # read(2), outside Python's checks, would leave read blocked for good (the race is the test's).
    wchan = Path(f"/proc/{process.pid}/wchan")
    while not wchan.read_text().endswith("pipe_read") and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        os.close(writer)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_ctrl_c_during_fleet_preview_says_interrupted_and_exits_130(tmp_path: Path) -> None:
    result = interrupted_while_reading("fleet", "preview", "--from", "2024-03-01T00:00", "--to",
                                       "2024-03-08T00:00", str(tmp_path / "values.yaml"))
    assert_one_line(result, 130, "cronctl: interrupted")


def test_ctrl_c_during_any_command_says_interrupted_and_exits_130(tmp_path: Path) -> None:
    assert_one_line(interrupted_while_reading("run", str(tmp_path / "operations.json")), 130,
                    "cronctl: interrupted")


def test_ctrl_c_in_the_middle_of_a_fleet_replay_says_interrupted(tmp_path: Path, monkeypatch, capsys) -> None:
    from cronctl import cli, fleet

    def replay(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fleet, "preview", replay)
    values = tmp_path / "fleet.yaml"
    values.write_text('prefix: probe\ncount: 2\nschedules: ["*/5 * * * *"]\n')
    try:
        code = cli.main(["fleet", "preview", str(values), "--from", "2024-03-01T00:00", "--to", "2024-03-02T00:00"])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C went through cronctl to its caller")
    assert (code, capsys.readouterr().err) == (130, "cronctl: interrupted\n")


def test_operator_without_credentials_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items()
           if key not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT / "operator"))
    result = subprocess.run([sys.executable, "-m", "cronctl", "operator", "--no-leader-election"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert_one_line(result, 2, "cronctl: no Kubernetes credentials: not in a cluster, and no usable kubeconfig")


def test_operator_behind_a_proxy_it_cannot_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443",
                                              "proxy-url": "socks5://127.0.0.1:1080"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    env = {key: value for key, value in os.environ.items()
           if key not in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
    env.update(KUBECONFIG=str(kubeconfig), PYTHONPATH=str(ROOT / "operator"))
    result = subprocess.run([sys.executable, "-m", "cronctl", "operator", "--no-leader-election"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert_one_line(result, 2, "cronctl operator: the proxy 'socks5://127.0.0.1:1080' is not an http:// proxy")


@pytest.mark.parametrize("command", [
    ["status", "--dir", "{dir}/nope"],
    ["history", "hello", "--dir", "{dir}/nope"],
    ["trigger", "hello", "--dir", "{dir}/nope"],
    ["next", "hello", "--dir", "{dir}/nope"],
])
def test_a_missing_folder_is_one_line_and_exit_2(tmp_path: Path, command: list[str]) -> None:
    result = run_cli(*[part.format(dir=tmp_path) for part in command])
    assert_one_line(result, 2, f"cronctl: {tmp_path}/nope: no such folder")


@pytest.mark.parametrize("book, says", [
    (None, "cronctl: {dir}/cronctl.json: "),  # a folder where the book should be
    ('{"version": 7}', "cronctl: {dir}/cronctl.json: the book has schema version 7"),
    ("{not json", "cronctl: {dir}/cronctl.json: the book does not parse (not JSON"),
    ('{"version": 1, "controller": []}', "cronctl: {dir}/cronctl.json: the book has a field this cronctl cannot"),
])
@pytest.mark.parametrize("command", [["status"], ["history", "hello"], ["next", "hello"]])
def test_a_book_that_cannot_be_read_is_one_line_and_exit_2(tmp_path: Path, book: str | None, says: str,
                                                           command: list[str]) -> None:
    if book is None:
        (tmp_path / "cronctl.json").mkdir()
    else:
        (tmp_path / "cronctl.json").write_text(book)
    assert_one_line(run_cli(*command, "--dir", str(tmp_path)), 2, says.format(dir=tmp_path))


def test_a_folder_given_as_a_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    assert_one_line(run_cli("status", "--dir", str(tmp_path / "file")), 2, f"cronctl: {tmp_path}/file: not a folder")


# -- status, history, next and trigger of a runner's folder ------------------------------------------


def test_status_and_history_json_for_scripts(tmp_path: Path) -> None:
    folder = a_runner_folder(tmp_path, runs=2)
    status = run_cli("status", "--dir", str(folder), "--json", env=at(A_MINUTE, tmp_path))
    assert status.returncode == 0
    [hello] = json.loads(status.stdout)["schedules"]
    assert (hello["name"], hello["next"], hello["overdue_since"]) == (
        "hello", "2024-03-01T00:04:00Z", "2024-03-01T00:04:00Z")
    history = run_cli("history", "hello", "--dir", str(folder), "--json")
    assert [run["nominal"] for run in json.loads(history.stdout)["runs"]] == [
        "2024-02-29T23:58:00Z", "2024-02-29T23:59:00Z"]


def test_status_says_no_runner_runs_and_what_is_overdue(tmp_path: Path) -> None:
    folder = a_runner_folder(tmp_path)
    result = run_cli("status", "--dir", str(folder), env=at(A_MINUTE, tmp_path))
    assert result.stdout.splitlines() == [
        f"no runner is running: nothing fires until 'cronctl local {folder}' runs",
        "hello: * * * * * (+00:00, allow)",
        "  last:  -",
        "  next:  2024-03-01 00:04 UTC, overdue since 2024-03-01 00:04 UTC"]


def test_history_has_a_header_and_the_exit_codes(tmp_path: Path) -> None:
    folder = a_runner_folder(tmp_path, runs=1)
    exit_json = folder / "runs" / "hello" / "20240229T2359" / "exit.json"
    exit_json.parent.mkdir(parents=True)
    exit_json.write_text('{"exit_code": 0, "signal": null}')
    lines = run_cli("history", "hello", "--dir", str(folder)).stdout.splitlines()
    assert lines[0] == "hello: * * * * * (+00:00), the last 1 run, oldest first"
    assert lines[1].split() == ["RUN", "REASON", "NOMINAL", "ACTUAL", "ATTEMPTS", "EXIT", "OUTCOME"]
    assert lines[2].split() == ["hello-0", "scheduled", "2024-02-29", "23:59", "UTC", "-", "1", "0", "succeeded"]


def test_next_of_a_schedule_works_from_its_manifest_before_the_runner_ever_ran(tmp_path: Path) -> None:
    (tmp_path / "nightly.yaml").write_text(a_manifest("nightly", "30 2 * * *", timeZone="+05:30"))
    result = run_cli("next", "nightly", "--dir", str(tmp_path), "--count", "2", env=at(A_MINUTE, tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["2024-03-01 21:00 UTC (2024-03-02 02:30 +05:30)",
                                          "2024-03-02 21:00 UTC (2024-03-03 02:30 +05:30)"]


def test_next_of_a_bad_manifest_names_the_file_schedule_field_and_reason_and_exits_1(tmp_path: Path) -> None:
    """No times: the schedule fires nothing until fixed (exit 1, no answer; issue 45), with or without a book."""
    (tmp_path / "nightly.yaml").write_text(a_manifest("nightly", "0 9 * * 8"))
    result = run_cli("next", "nightly", "--dir", str(tmp_path), env=at(A_MINUTE, tmp_path))
    assert_one_line(result, 1, f"cronctl: {tmp_path}/nightly.yaml: CronSchedule 'nightly': spec.schedule: "
                               "day-of-week: 8 is out of range 0-7")
    (tmp_path / "booked").mkdir()
    folder = a_runner_folder(tmp_path / "booked")  # the book has hello, whose manifest then goes bad
    (folder / "hello.yaml").write_text(a_manifest("hello", "* * * * *", timeoutMinutes="ten"))
    result = run_cli("next", "hello", "--dir", str(folder), env=at(A_MINUTE, tmp_path))
    assert_one_line(result, 1, f"cronctl: {folder}/hello.yaml: CronSchedule 'hello': spec.timeoutMinutes: ")
    assert result.stdout == ""


def test_trigger_says_what_will_happen(tmp_path: Path) -> None:
    folder = a_runner_folder(tmp_path)
    unknown = run_cli("trigger", "helo", "--dir", str(folder))
    assert_one_line(unknown, 2, f"cronctl: no schedule named 'helo' in {folder}; its manifests define: hello")
    queued = run_cli("trigger", "hello", "--dir", str(folder))
    assert (queued.returncode, queued.stdout) == (
        0, f"triggered hello: queued: no runner is running; hello runs when 'cronctl local {folder}' starts\n")
    (folder / "cronctl.disabled").touch()
    assert_one_line(run_cli("trigger", "hello", "--dir", str(folder)), 1,
                    "cronctl: hello was not triggered: the node switch is off")


def test_the_quick_starts_runner_commands_work_before_the_runner_ever_ran(tmp_path: Path) -> None:
    """The README's Quick start commands, on a fresh copy of examples/local."""
    import re
    import shutil

    folder = tmp_path / "local"
    shutil.copytree(ROOT / "examples" / "local", folder)
    quick_start = (ROOT / "README.md").read_text().split("## Quick start")[1].split("\n## ")[0]
    commands = re.findall(r"^cronctl ((?:status|history|trigger|next) .*?--dir examples/local)", quick_start, re.M)
    assert len(commands) == 4
    for command in commands:
        result = run_cli(*command.replace("examples/local", str(folder)).split(), env=at(A_MINUTE, tmp_path))
        assert (result.returncode, result.stderr) == (0, ""), command
        assert result.stdout.strip(), command


def test_local_refuses_a_log_cap_below_one_byte(tmp_path: Path) -> None:
    assert_one_line(cronctl("local", str(tmp_path), "--max-log-bytes", "0"), 2,
                    "cronctl: --max-log-bytes must be at least 1")


def test_local_with_log_format_json_writes_one_object_per_line(tmp_path: Path) -> None:
    import signal
    import time

    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "hello.yaml").write_text(a_manifest("hello", "* * * * *"))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"), **at("2024-03-01T00:00", tmp_path))
    process = subprocess.Popen([sys.executable, "-m", "cronctl", "local", str(folder), "--log-format", "json",
                                "--max-log-bytes", "4096", "--poll", "0.05"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while_running(process, deadline, lambda: (folder / "cronctl.json").exists())
        (tmp_path / "clock").write_text("2024-03-01T00:01")
        while_running(process, deadline, lambda: "hello-1" in (folder / "cronctl.json").read_text()
                      and list(folder.glob("runs/hello/*/exit.json")))
        time.sleep(0.3)
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert "Traceback" not in err
    records = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert records and all(isinstance(record, dict) for record in records)
    assert any(record.get("schedule") == "hello" and record.get("run") == "hello-1" for record in records)
    [request] = [json.loads(path.read_text()) for path in folder.glob("runs/hello/*/request.json")]
    assert request.get("max_log_bytes") == 4096


@pytest.mark.parametrize("clock, says", [("03/01/2024 00:00", "'03/01/2024 00:00' is not a time YYYY-MM-DDTHH:MM"),
                                         (None, "No such file or directory")])
@pytest.mark.parametrize("command", [["local", "{folder}"], ["status", "--dir", "{folder}"]])
def test_a_bad_clock_file_at_start_is_one_line_naming_the_variable_the_file_and_why_and_exit_2(
        tmp_path: Path, clock: str | None, says: str, command: list[str]) -> None:
    path = tmp_path / "clock"
    if clock is not None:
        path.write_text(clock)
    result = run_cli(*(arg.format(folder=a_runner_folder(tmp_path)) for arg in command),
                     env={"CRONCTL_CLOCK_FILE": str(path)})
    assert_one_line(result, 2, f"cronctl: CRONCTL_CLOCK_FILE={path}: {says}")


def test_a_clock_file_gone_bad_while_the_runner_runs_is_said_once_per_streak_and_the_runner_waits(
        tmp_path: Path) -> None:
    import signal
    import time

    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "hello.yaml").write_text(a_manifest("hello", "* * * * *"))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"), **at("2024-03-01T00:00", tmp_path))
    clock = tmp_path / "clock"
    process = subprocess.Popen([sys.executable, "-m", "cronctl", "local", str(folder), "--poll", "0.05"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while_running(process, deadline, lambda: (folder / "cronctl.json").exists())

        def write(text: str) -> None:  # at once: the runner never reads half a write
            (tmp_path / "clock.new").write_text(text)
            (tmp_path / "clock.new").replace(clock)

        for bad in ("garbled", None, "garbled again"):  # three streaks: each read many times
            if bad is None:
                clock.unlink()
            else:
                write(bad)
            time.sleep(1.0)
            assert process.poll() is None
            write("2024-03-01T00:01")
            time.sleep(0.5)
        # it ran on by the file once good
        while_running(process, deadline, lambda: "hello-1" in (folder / "cronctl.json").read_text())
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    assert "Traceback" not in err
    waits = [line for line in err.splitlines() if "the runner waits" in line]
    assert [line.split(": ")[2].split(";")[0] for line in waits] == [
        "'garbled' is not a time YYYY-MM-DDTHH:MM[:SS]", "No such file or directory",
        "'garbled again' is not a time YYYY-MM-DDTHH:MM[:SS]"], err
    assert all(line.startswith(f"cronctl: CRONCTL_CLOCK_FILE={clock}: ") for line in waits)
    assert err.count(f"cronctl: CRONCTL_CLOCK_FILE={clock}: reads again\n") == 3


def test_a_run_that_ended_while_the_runner_was_stopped_is_not_timed_out_by_the_time_it_was_stopped(
        tmp_path: Path) -> None:
    """SIGSTOP of the runner (a debugger, a laptop lid) while a 2 s run with a 1-minute timeout goes;
    its clock passes the timeout meanwhile (stepped 2 minutes through the node's offset file, in
    place of waiting them). Seen on SIGCONT, the run ended after 2 s of its own time: succeeded."""
    import signal
    import time

    with a_triggered_run(tmp_path, "quick", seconds=2, timeout_minutes=1) as run:
        folder = run.book.parent
        run.process.send_signal(signal.SIGSTOP)
        try:
            while not list(folder.glob("**/runs/quick/*/exit.json")):
                assert time.monotonic() < run.deadline
                time.sleep(0.05)
            run.offset.write_text(str(float(run.offset.read_text()) + 120))
        finally:
            run.process.send_signal(signal.SIGCONT)
        run.wait_for_its_row("quick")
    [row] = run.rows("quick")
    assert row["outcome"] == "succeeded", row


def test_a_run_still_going_when_the_clock_is_stepped_past_its_timeout_runs_on_to_its_own_end(
        tmp_path: Path) -> None:
    """The issue's case: the clock stepped 25 h forward while a run with ``timeoutMinutes: 1440`` goes.
    Its deadline is its own elapsed time (the wrapper's, on the monotonic clock, as systemd's
    RuntimeMaxSec=): it runs to its end and succeeds, where it was killed at the next step."""
    with a_triggered_run(tmp_path, "long", seconds=3, timeout_minutes=1440) as run:
        run.offset.write_text(str(float(run.offset.read_text()) + 25 * 3600))
        run.wait_for_its_row("long")
    [row] = run.rows("long")
    assert row["outcome"] == "succeeded", row


def test_a_forbid_time_due_while_a_run_goes_waits_for_it_and_runs_and_is_never_called_skipped(
        tmp_path: Path) -> None:
    """Issue 45, as a user sees it: ``cronctl local`` on a Forbid schedule every 10 minutes whose 00:10
    run goes on past 00:20 (the injected clock). It said "skipped 00:20", wrote a skipped row and
    counted it in status, then ran 00:20 when the run ended: now 00:20 waits, then runs, and nothing
    says skipped."""
    import signal
    import time

    folder = tmp_path / "schedules"
    folder.mkdir()
    mark = tmp_path / "mark"
    (folder / "job.yaml").write_text(a_manifest("job", "*/10 * * * *", concurrencyPolicy="Forbid").replace(
        '["true"]', json.dumps(["sh", "-c", f"while [ ! -e {mark} ]; do sleep 0.05; done"])))
    env = at("2024-03-01T00:09:58", tmp_path)
    clock, book = Path(env["CRONCTL_CLOCK_FILE"]), folder / "cronctl.json"
    process = subprocess.Popen([sys.executable, "-m", "cronctl", "local", str(folder), "--poll", "0.05"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, PYTHONPATH=str(ROOT / "operator"), **env))

    def book_says(check: Callable[[dict], object]) -> Callable[[], object]:
        return lambda: book.exists() and check(json.loads(book.read_text()))

    try:
        deadline = time.monotonic() + 60
        while_running(process, deadline, book.exists)
        clock.write_text("2024-03-01T00:10:01")
        while_running(process, deadline, lambda: list(folder.glob("runs/job/*/pid")))
        clock.write_text("2024-03-01T00:20:01")
        while_running(process, deadline, book_says(  # the core held 00:20 back
            lambda b: b["controller"]["jobs"][0]["state"].get("last_skipped") == "2024-03-01T00:20"))
        status = json.loads(run_cli("status", "--dir", str(folder), "--json", env=env).stdout)
        assert status["schedules"][0]["skipped"] == 0
        mark.touch()
        clock.write_text("2024-03-01T00:20:20")
        while_running(process, deadline, book_says(lambda b: len(b["journal"].get("job", [])) == 2))
    finally:
        mark.touch()  # a failed try leaves no run polling for the mark after the test
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert "Traceback" not in err, err
    rows = json.loads(book.read_text())["journal"]["job"]
    assert [(row["nominal"] % 60, row["outcome"]) for row in rows] == [(10, "succeeded"), (20, "succeeded")]
    assert "job: 2024-03-01 00:20 UTC waits for the active run job-1" in out and "skipped" not in out, out
    status = json.loads(run_cli("status", "--dir", str(folder), "--json", env=env).stdout)
    assert status["schedules"][0]["skipped"] == 0


def test_a_standby_runner_takes_over_the_moment_the_holder_is_killed(tmp_path: Path) -> None:
    """The second ``cronctl local`` waits blocked on the lock's flock: kill -9 of the first hands it
    over at once (issue 45), where it tried again every 60 s (up to 57 s late)."""
    import signal
    import time

    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "hello.yaml").write_text(a_manifest("hello", "0 0 1 1 *"))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"), **at("2024-03-01T00:00", tmp_path))
    command = [sys.executable, "-m", "cronctl", "local", str(folder), "--poll", "0.5"]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    second: subprocess.Popen[str] | None = None
    try:
        deadline = time.monotonic() + 60
        while_running(first, deadline, lambda: (folder / "cronctl.json").exists())
        second = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert second.stdout is not None
        line = second.stdout.readline()
        while "read-only" not in line:
            assert line and time.monotonic() < deadline, line
            line = second.stdout.readline()
        assert line.rstrip().endswith("this runner takes over the moment it ends"), line
        first.kill()
        killed = time.monotonic()
        while "took over" not in line:
            assert line and time.monotonic() < deadline, line
            line = second.stdout.readline()
        assert time.monotonic() - killed < 3.0
    finally:
        first.kill()
        first.communicate(timeout=20)
        if second is not None:
            second.send_signal(signal.SIGINT)
            second.communicate(timeout=20)


def test_a_lock_file_the_runner_cannot_open_is_named_with_what_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """root's leftover lock said ``cronctl: d: Permission denied``, naming no file (issue 45)."""
    from cronctl.cli import main

    lock = tmp_path / "cronctl.lock"
    lock.write_text("")
    real_open = os.open

    def refused(path, *args, **kwargs):  # as a lock file of root's is to another user
        if str(path) == str(lock):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("cronctl.runner.lock.os.open", refused)
    monkeypatch.setenv("CRONCTL_CLOCK_FILE", at("2024-03-01T00:00", tmp_path)["CRONCTL_CLOCK_FILE"])
    assert main(["local", str(tmp_path), "--poll", "0.05"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cronctl: {lock}: permission denied (owned by uid "), err
    assert f"sudo chown {os.getuid()} {lock}" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("flag, staging", [("--no-staging", False), ("--staging", True), (None, None)])
def test_operator_staging_flag_becomes_the_processs_option(flag: str | None, staging: bool | None) -> None:
    from cronctl.cli import _parser, operator_options

    options = operator_options(_parser().parse_args(["operator", "--no-leader-election", "-n", "team-a",
                                                     *([flag] if flag else [])]))
    assert options.staging == staging  # None: CRONCTL_STAGING decides
    assert options.namespaces == ("team-a",) and not options.election.enabled


# -- suspend and resume (pause with a reason) on a runner's folder ---------------------------------------


def test_suspend_and_resume_say_what_happened_in_one_line_and_status_json_shows_the_pause(tmp_path: Path) -> None:
    folder = a_runner_folder(tmp_path)
    manifest_before = (folder / "hello.yaml").read_text()
    suspended = run_cli("suspend", "hello", "--reason", "db migration until Friday", "--dir", str(folder),
                        env=at(A_MINUTE, tmp_path))
    assert (suspended.returncode, suspended.stdout, suspended.stderr) == (
        0, 'hello suspended: "db migration until Friday"\n', "")
    assert (folder / "hello.yaml").read_text() == manifest_before  # the user's manifest is not rewritten
    status = run_cli("status", "--dir", str(folder), "--json", env=at(A_MINUTE, tmp_path))
    [hello] = json.loads(status.stdout)["schedules"]
    assert hello["suspended"] == {"by": "cronctl suspend", "since": "2024-03-01T00:10:00Z",
                                  "reason": "db migration until Friday", "manifest": False, "problem": None}
    assert hello["overdue_since"] is None
    resumed = run_cli("resume", "hello", "--dir", str(folder), env=at(A_MINUTE, tmp_path))
    assert (resumed.returncode, resumed.stdout, resumed.stderr) == (0, "hello resumed; next fire 2024-03-01 00:11 UTC\n",
                                                                    "")
    assert not (folder / "paused" / "hello.json").exists()


def test_suspend_without_a_reason_says_none_was_given(tmp_path: Path) -> None:
    folder = a_runner_folder(tmp_path)
    result = run_cli("suspend", "hello", "--dir", str(folder), env=at(A_MINUTE, tmp_path))
    assert (result.returncode, result.stdout) == (0, "hello suspended (no reason given)\n")


def test_resume_of_a_schedule_its_manifest_suspends_is_one_line_naming_the_file_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "nightly.yaml").write_text(a_manifest("nightly", "30 2 * * *", suspend=True))
    result = run_cli("resume", "nightly", "--dir", str(tmp_path), env=at(A_MINUTE, tmp_path))
    assert_one_line(result, 2, f"cronctl: nightly is suspended by its manifest {tmp_path}/nightly.yaml "
                               "(spec.suspend: true), not by cronctl suspend: set spec.suspend: false there")


def test_a_reason_longer_than_256_characters_is_one_line_naming_reason_and_exit_2(tmp_path: Path) -> None:
    folder = a_runner_folder(tmp_path)
    result = run_cli("suspend", "hello", "--reason", "x" * 257, "--dir", str(folder))
    assert_one_line(result, 2, "cronctl: --reason: 257 characters, more than the 256")
    assert not (folder / "paused").exists()


@pytest.mark.parametrize("command", ["suspend", "resume"])
def test_suspend_and_resume_of_an_unknown_schedule_are_one_line_and_exit_2(tmp_path: Path, command: str) -> None:
    folder = a_runner_folder(tmp_path)
    assert_one_line(run_cli(command, "helo", "--dir", str(folder)), 2,
                    f"cronctl: no schedule named 'helo' in {folder}; its manifests define: hello")


@pytest.mark.parametrize("command", ["suspend", "resume"])
def test_suspend_and_resume_of_a_missing_folder_are_one_line_and_exit_2(tmp_path: Path, command: str) -> None:
    assert_one_line(run_cli(command, "hello", "--dir", str(tmp_path / "nope")), 2,
                    f"cronctl: {tmp_path}/nope: no such folder")


def test_next_of_a_suspended_schedule_says_so_before_its_times_and_on_stderr_with_json(tmp_path: Path) -> None:
    folder = a_runner_folder(tmp_path)
    run_cli("suspend", "hello", "--reason", "db migration", "--dir", str(folder), env=at(A_MINUTE, tmp_path))
    text = run_cli("next", "hello", "--dir", str(folder), "--count", "1", env=at(A_MINUTE, tmp_path))
    assert (text.returncode, text.stdout.splitlines()) == (0, [
        'hello is suspended since 2024-03-01 00:10 UTC by cronctl suspend: "db migration"; it fires at these '
        "times only if resumed by then:", "2024-03-01 00:11 UTC"])
    as_json = run_cli("next", "hello", "--dir", str(folder), "--count", "1", "--json", env=at(A_MINUTE, tmp_path))
    assert (as_json.returncode, json.loads(as_json.stdout)) == (0, ["2024-03-01T00:11"])
    assert as_json.stderr.startswith("cronctl: hello is suspended since 2024-03-01 00:10 UTC")


# -- backfill -----------------------------------------------------------------------------------------

NIGHTLY = a_manifest("nightly", "30 2 * * *", timeZone="+05:30")  # 21:00 UTC every day


def test_backfill_dry_run_lists_the_times_oldest_first_in_utc_and_the_zone_then_counts_them(tmp_path: Path) -> None:
    (tmp_path / "nightly.yaml").write_text(NIGHTLY)
    result = run_cli("backfill", "nightly", "--from", "2024-02-26T00:00", "--to", "2024-02-28T23:59", "--dry-run",
                     "--dir", str(tmp_path), env=at(A_MINUTE, tmp_path))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        "2024-02-26 21:00 UTC (2024-02-27 02:30 +05:30)",
        "2024-02-27 21:00 UTC (2024-02-28 02:30 +05:30)",
        "2024-02-28 21:00 UTC (2024-02-29 02:30 +05:30)",
        "3 schedule times of nightly from 2024-02-26 00:00 UTC (2024-02-26 05:30 +05:30) to 2024-02-28 23:59 UTC "
        "(2024-02-29 05:29 +05:30); a backfill runs them oldest first, one at a time (a dry run: nothing was asked)"]
    assert not (tmp_path / "backfills").exists()


@pytest.mark.parametrize("dry_run", [["--dry-run"], []])
@pytest.mark.parametrize("schedule, start, end, says", [
    ("30 2 * * *", "2024-02-28T00:00", "2024-02-27T00:00",
     "the range ends (2024-02-27T00:00) before it starts (2024-02-28T00:00)"),
    ("30 2 * * *", "2024-02-28T00:00", "2024-03-02T00:00",
     "the range ends at 2024-03-02T00:00, after now (2024-03-01T00:10): a backfill runs past times only"),
    ("* * * * *", "2024-02-01T00:00", "2024-02-29T00:00",
     "the range holds 40321 schedule times, more than the 1000 one backfill may run: ask for a shorter range"),
])
def test_backfill_refuses_a_range_before_it_starts_past_now_or_too_long_in_one_line_and_exit_2(
        tmp_path: Path, dry_run: list[str], schedule: str, start: str, end: str, says: str) -> None:
    (tmp_path / "x.yaml").write_text(a_manifest("x", schedule))
    result = run_cli("backfill", "x", "--from", start, "--to", end, *dry_run, "--dir", str(tmp_path),
                     env=at(A_MINUTE, tmp_path))
    assert_one_line(result, 2, f"cronctl: backfill of x refused: {says}")
    assert result.stdout == "" and not (tmp_path / "backfills").exists()


def test_backfill_hands_the_runner_a_request_and_says_how_many_times_run_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "nightly.yaml").write_text(NIGHTLY)
    result = run_cli("backfill", "nightly", "--from", "2024-02-27T00:00", "--to", "2024-02-28T23:59",
                     "--dir", str(tmp_path), env=at(A_MINUTE, tmp_path))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        "backfill of nightly: 2 schedule times from 2024-02-27 00:00 UTC (2024-02-27 05:30 +05:30) to "
        "2024-02-28 23:59 UTC (2024-02-29 05:29 +05:30) run oldest first, one at a time; no runner is running: "
        f"the runner takes it when 'cronctl local {tmp_path}' starts\n")
    [request] = (tmp_path / "backfills").iterdir()
    assert json.loads(request.read_text()) == {"schedule": "nightly", "from": "2024-02-27T00:00",
                                               "to": "2024-02-28T23:59"}


def test_backfill_of_a_range_without_a_schedule_time_asks_nothing_in_one_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "nightly.yaml").write_text(NIGHTLY)
    result = run_cli("backfill", "nightly", "--from", "2024-02-28T00:00", "--to", "2024-02-28T20:59",
                     "--dir", str(tmp_path), env=at(A_MINUTE, tmp_path))
    assert_one_line(result, 1, "cronctl: no schedule time of nightly from 2024-02-28 00:00 UTC")
    assert not (tmp_path / "backfills").exists()


@pytest.mark.parametrize("args, says", [
    (["nightly", "--from", "2024-02-28", "--to", "2024-02-28T20:59"],
     "cronctl: --from: '2024-02-28' is not a UTC time YYYY-MM-DDTHH:MM"),
    (["nightly", "--from", "2024-02-28T00:00", "--to", "tomorrow"], "cronctl: --to: 'tomorrow' is not a UTC time"),
    (["nigthly", "--from", "2024-02-28T00:00", "--to", "2024-02-28T20:59"],
     "cronctl: no schedule named 'nigthly' in"),
])
def test_backfill_of_a_bad_time_or_an_unknown_schedule_is_one_line_and_exit_2(tmp_path: Path, args: list[str],
                                                                               says: str) -> None:
    (tmp_path / "nightly.yaml").write_text(NIGHTLY)
    assert_one_line(run_cli("backfill", *args, "--dir", str(tmp_path), env=at(A_MINUTE, tmp_path)), 2, says)


# -- next EXPRESSION with exclusions and a daylight-saving rule ------------------------------------------


def test_next_of_an_expression_leaves_out_the_excluded_dates_ranges_and_minutes() -> None:
    result = cronctl("next", "0 9,12 * * *", "--after", "2024-03-01T00:00", "--count", "3", "--json",
                     "--exclude", "2024-03-01", "--exclude", "2024-03-03/2024-03-05", "--exclude", "0 12 * * *")
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout) == ["2024-03-02T09:00", "2024-03-06T09:00", "2024-03-07T09:00"]


@pytest.mark.parametrize("rule, times", [
    (None, ["2024-03-30T01:30", "2024-03-31T01:00", "2024-04-01T00:30"]),  # Vixie: 03:00 at the change
    ("Literal", ["2024-03-30T01:30", "2024-04-01T00:30", "2024-04-02T00:30"]),
    ("Skip", ["2024-03-30T01:30", "2024-04-01T00:30", "2024-04-02T00:30"]),
])
def test_next_of_an_expression_takes_the_daylight_saving_rule_at_berlins_spring_forward(
        rule: str | None, times: list[str]) -> None:
    flag = [] if rule is None else ["--daylight-saving", rule]
    result = cronctl("next", "30 2 * * *", "--tz", "Europe/Berlin", "--after", "2024-03-29T12:00", "--count", "3",
                     "--json", *flag)
    assert (result.returncode, json.loads(result.stdout)) == (0, times)


@pytest.mark.parametrize("args, says", [
    (["--exclude", "2026-02-30"], "cronctl: --exclude: '2026-02-30' is not a date of the calendar"),
    (["--exclude", "2026-12-31/2026-12-24"], "cronctl: --exclude: '2026-12-31/2026-12-24' ends before it starts"),
    (["--exclude", "0 9 * * 8"], "cronctl: --exclude: '0 9 * * 8' is not a date (YYYY-MM-DD), a date range "
                                 "(YYYY-MM-DD/YYYY-MM-DD) or a cron expression: day-of-week: 8 is out of range 0-7"),
    (["--daylight-saving", "Wall"], "cronctl: --daylight-saving: 'Wall' is not Vixie, Literal or Skip"),
])
def test_next_refuses_a_bad_exclusion_or_rule_in_one_line_naming_the_flag_and_the_reason(
        args: list[str], says: str) -> None:
    result = cronctl("next", "30 2 * * *", *args)
    assert_one_line(result, 2, says)
    assert result.stderr.strip() == says


def test_next_of_a_schedule_takes_its_exclusions_from_its_manifest_not_a_flag(tmp_path: Path) -> None:
    (tmp_path / "nightly.yaml").write_text(NIGHTLY)
    assert_one_line(run_cli("next", "nightly", "--dir", str(tmp_path), "--exclude", "2024-03-02"), 2,
                    "cronctl: --exclude: a schedule takes its exclusions from its manifest (spec.exclude)")


CLUSTER_OBJECT = """
apiVersion: cronctl.dev/v1
kind: CronSchedule
metadata: {name: nightly, namespace: team-a, uid: u-1, resourceVersion: "5"}
spec:
  schedule: "30 2 * * *"
  timeZone: "+05:30"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: b}]}}}}
status: {anchorTime: "2024-03-01T00:00:00Z"}
"""


def test_a_backfill_dry_run_previews_a_cluster_objects_times_from_its_manifest(tmp_path: Path) -> None:
    manifest = tmp_path / "nightly.yaml"
    manifest.write_text("apiVersion: v1\nkind: List\nitems:\n" + "\n".join(
        "  " + line if i else "- " + line.lstrip() for i, line in enumerate(CLUSTER_OBJECT.strip().splitlines())))
    result = run_cli("backfill", "nightly", "--from", "2024-02-20T00:00", "--to", "2024-02-22T00:00", "--dry-run",
                     "-f", str(manifest), env=at(A_MINUTE, tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["2024-02-20 21:00 UTC (2024-02-21 02:30 +05:30)",
                                              "2024-02-21 21:00 UTC (2024-02-22 02:30 +05:30)"]
    assert "cronctl.dev/backfill=2024-02-20T00:00:00Z/2024-02-22T00:00:00Z" in result.stdout.splitlines()[2]


def test_a_backfill_preview_of_a_manifest_without_that_name_is_one_line_and_exit_2(tmp_path: Path) -> None:
    manifest = tmp_path / "nightly.yaml"
    manifest.write_text(CLUSTER_OBJECT)
    result = run_cli("backfill", "other", "--from", "2024-02-20T00:00", "--to", "2024-02-22T00:00", "--dry-run",
                     "-f", str(manifest), env=at(A_MINUTE, tmp_path))
    assert (result.returncode, result.stderr) == (2, f"cronctl: {manifest}: no CronSchedule named 'other' in it\n")


def test_a_backfill_from_a_manifest_file_is_a_preview_only(tmp_path: Path) -> None:
    manifest = tmp_path / "nightly.yaml"
    manifest.write_text(CLUSTER_OBJECT)
    result = run_cli("backfill", "nightly", "--from", "2024-02-20T00:00", "--to", "2024-02-22T00:00",
                     "-f", str(manifest), env=at(A_MINUTE, tmp_path))
    assert result.returncode == 2 and "kubectl annotate cronschedule nightly" in result.stderr


# -- cronctl local as a process: stopping, its lines, its folder ------------------------------------


def _runner_with_a_run_under_way(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    """``cronctl local`` whose schedule ``hello`` (``sleep 60``) has a run under way at 00:01."""
    import time

    folder = tmp_path / "schedules"
    folder.mkdir()
    manifest = json.loads(a_manifest("hello", "* * * * *"))
    manifest["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"] = ["sleep", "60"]
    (folder / "hello.yaml").write_text(json.dumps(manifest))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "operator"), **at("2024-03-01T00:00", tmp_path))
    process = subprocess.Popen([sys.executable, "-m", "cronctl", "local", str(folder), "--poll", "0.05"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 30
    while_running(process, deadline, lambda: (folder / "cronctl.json").exists())
    (tmp_path / "clock").write_text("2024-03-01T00:01")
    while_running(process, deadline, lambda: list(folder.glob("runs/hello/*/pid")))
    time.sleep(0.2)
    return process, folder


@pytest.mark.parametrize("stop, code", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_sigterm_and_sighup_stop_the_runner_as_ctrl_c_does_and_its_run_goes_on(tmp_path: Path, stop: str,
                                                                               code: int) -> None:
    """What systemd, Docker and Kubernetes send to stop a process, and a closed terminal: the
    runner says which runs go on (the next start adopts them) and exits 128 + the signal."""
    import signal

    process, folder = _runner_with_a_run_under_way(tmp_path)
    process.send_signal(getattr(signal, stop))
    out, err = process.communicate(timeout=20)
    pid = json.loads(next(folder.glob("runs/hello/*/pid")).read_text())["pid"]
    try:
        assert (process.returncode, err) == (code, "")
        assert out.splitlines()[-1].endswith(
            f"cronctl: stopped; 1 run goes on and the next runner adopts them: hello-1 (pid {pid})")
        os.kill(pid, 0)  # it goes on
    finally:
        os.killpg(os.getpgid(pid), signal.SIGKILL)


def test_every_line_of_the_runner_starts_with_a_utc_timestamp(tmp_path: Path) -> None:
    import re
    import signal

    process, folder = _runner_with_a_run_under_way(tmp_path)
    pid = json.loads(next(folder.glob("runs/hello/*/pid")).read_text())["pid"]
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=20)
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    lines = out.splitlines()
    assert len(lines) >= 3  # the start, the launch, the stop
    assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \S", line) for line in lines), out
    assert any(line.startswith("2024-03-01T00:01:00Z ") for line in lines), out  # the runner's own clock


def test_a_read_only_folder_is_one_line_naming_it_and_exit_2(tmp_path: Path) -> None:
    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "hello.yaml").write_text(a_manifest("hello", "* * * * *"))
    if os.geteuid() != 0:
        folder.chmod(0o555)
    elif subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True).returncode != 0:
        pytest.skip("root without mount: no way to make a folder read-only here")
    else:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
    try:
        assert_one_line(cronctl("local", str(folder)), 2, f"cronctl: {folder} is not writable")
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(folder)], check=True)
        else:
            folder.chmod(0o755)


@pytest.mark.parametrize("module, command", [("cronctl", "cronctl"), ("cronctl.plugin", "kubectl-cronctl")])
def test_version_is_the_installed_packages_and_exits_0(module: str, command: str) -> None:
    from importlib.metadata import version

    result = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{command} {version('cronctl')}\n", "")
