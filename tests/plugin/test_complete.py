"""kubectl_complete-cronctl: what `kubectl cronctl <TAB>` completes, in kubectl's plugin completion protocol.

kubectl runs `kubectl_complete-cronctl __complete WORD... PARTIAL` and reads a candidate a line
(`candidate<TAB>description`) and a last line `:N`, cobra's directive (4: no file names).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cronctl.plugin.complete import NO_FILE_COMPLETION, completions

ROOT = Path(__file__).resolve().parents[2]
NAMES = {("get", "cronschedules"): ["nightly-report", "heartbeat"], ("get", "cronjobs"): ["old-backup"],
         ("get", "namespaces"): ["team-a", "team-b"]}


def asked(log: list[tuple[list[str], list[str]]]):  # type: ignore[no-untyped-def]
    def ask(args, target):  # type: ignore[no-untyped-def]
        log.append((list(args), list(target)))
        return NAMES.get(tuple(args[:2]), [])
    return ask


def complete(*words: str) -> tuple[list[str], int]:
    return completions(list(words), asked([]))


def test_the_commands_with_their_summaries_then_those_the_partial_word_starts() -> None:
    candidates, directive = complete("")
    assert [line.split("\t")[0] for line in candidates] == [
        "trigger", "next", "history", "suspend", "resume", "backfill", "describe", "import", "completion"]
    assert candidates[0] == "trigger\tAsk the operator for one manual run now (cronctl.dev/trigger)."
    assert directive == NO_FILE_COMPLETION
    assert complete("re") == (["resume\tFire again (spec.suspend false, spec.suspendReason removed, a pause on "
                               "failures ended)."], NO_FILE_COMPLETION)


def test_a_commands_name_is_asked_of_the_cluster_in_the_namespace_typed_anywhere() -> None:
    log: list[tuple[list[str], list[str]]] = []
    assert completions(["-n", "team-a", "trigger", "ni"], asked(log)) == (["nightly-report"], NO_FILE_COMPLETION)
    assert completions(["history", "--context=prod", ""], asked(log))[0] == ["nightly-report", "heartbeat"]
    assert log == [(["get", "cronschedules"], ["--namespace", "team-a"]),
                   (["get", "cronschedules"], ["--context", "prod"])]
    assert complete("trigger", "nightly-report", "") == ([], NO_FILE_COMPLETION)  # one NAME only
    assert complete("import", "")[0] == ["cronjob/old-backup"]


def test_flags_their_choices_and_values() -> None:
    flags, _ = complete("describe", "--")
    assert [line.split("\t")[0] for line in flags] == ["--help", "--namespace", "--context", "--kubeconfig",
                                                       "--output"]
    assert complete("history", "-o", "") == (["json", "yaml"], NO_FILE_COMPLETION)
    assert complete("next", "-n", "team-") == (["team-a", "team-b"], NO_FILE_COMPLETION)
    assert complete("completion", "") == (["bash", "zsh", "tcsh"], NO_FILE_COMPLETION)
    assert complete("suspend", "x", "--reason", "") == ([], NO_FILE_COMPLETION)
    assert complete("next", "--kubeconfig", "") == ([], 0)  # a file: the shell completes it


def test_the_console_script_is_installed_with_the_plugin_and_answers_as_kubectl_asks(tmp_path: Path) -> None:
    """pyproject installs it beside kubectl-cronctl; run as kubectl runs it, with a kubectl on PATH
    that lists two schedules, it prints them and the directive line."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl_complete-cronctl"] == "cronctl.plugin.complete:main"
    assert scripts["kubectl-cronctl"] == "cronctl.plugin.cli:main"
    kubectl = tmp_path / "kubectl"
    kubectl.write_text("#!/bin/sh\n[ \"$2\" = cronschedules ] && printf 'nightly-report\\nheartbeat\\n'\n")
    kubectl.chmod(0o755)
    environment = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([sys.executable, "-m", "cronctl.plugin.complete", "__complete", "next", "h"],
                            capture_output=True, text=True, timeout=60, env=environment)
    assert (result.returncode, result.stdout, result.stderr) == (0, "heartbeat\n:4\n", "")
    gone = {**os.environ, "PATH": str(tmp_path / "nowhere")}  # no kubectl: no names, still an answer
    result = subprocess.run([sys.executable, "-m", "cronctl.plugin.complete", "__complete", "next", ""],
                            capture_output=True, text=True, timeout=60, env=gone)
    assert (result.returncode, result.stdout) == (0, ":4\n")


def test_kubectl_itself_completes_kubectl_cronctl_through_it(tmp_path: Path) -> None:
    """kubectl __complete cronctl ...: what a shell asks kubectl on TAB, with the plugin and its
    completion executable on PATH (as pip installs them, here as two small scripts)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on PATH")
    for name, module in (("kubectl-cronctl", "cronctl.plugin"), ("kubectl_complete-cronctl", "cronctl.plugin.complete")):
        script = tmp_path / name
        script.write_text(f'#!/bin/sh\nexec {sys.executable} -m {module} "$@"\n')
        script.chmod(0o755)
    environment = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([kubectl, "__complete", "cronctl", "hi"], capture_output=True, text=True, timeout=60,
                            env=environment)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["history\tThe finished runs, from status.history, oldest first.", ":4"]
