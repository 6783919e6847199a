"""cronctl lint: manifests checked with the one reader, for CI and pre-commit."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .runner.support import manifest

ROOT = Path(__file__).resolve().parent.parent


def cronctl_lint(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cronctl", "lint", *args], input=stdin, capture_output=True,
                          text=True, timeout=60, cwd=ROOT)


def test_the_examples_are_clean_and_exit_0() -> None:
    files = sorted(str(p) for p in (ROOT / "examples").glob("*/*.yaml") if "harness" not in p.parts)
    result = cronctl_lint(*files)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout
    assert result.stderr.startswith("0 problems; ")


def test_every_problem_names_its_file_document_and_field_and_the_exit_is_1(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(manifest("report", "61 * * * *", ["true"]) + "\n---\n"
                                     + yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                                                       "metadata": {"name": "c"}}))
    (tmp_path / "b.yaml").write_text(manifest("nightly", "0 0 30 2 *", ["true"]))
    (tmp_path / "c.yaml").write_text(manifest("nightly", "0 1 * * *", ["true"]))
    (tmp_path / "d.yaml").write_text("kind: [CronSchedule\n")
    result = cronctl_lint(*(str(tmp_path / name) for name in ("a.yaml", "b.yaml", "c.yaml", "d.yaml")))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert f"{tmp_path / 'c.yaml'}: CronSchedule 'nightly': metadata.name: already defined in {tmp_path / 'b.yaml'}" \
        in lines
    assert any(line.startswith(f"{tmp_path / 'd.yaml'}: not valid YAML: line 2") for line in lines), lines
    assert f"{tmp_path / 'a.yaml'}: CronSchedule 'report': spec.schedule: minute: 61 is out of range 0-59" in lines
    assert f"{tmp_path / 'b.yaml'}: CronSchedule 'nightly': spec.schedule: never fires" in lines
    assert not [line for line in lines if "ConfigMap" in line]
    assert result.stderr == "4 problems; 0 CronSchedules valid\n"


def test_standard_input_and_json_output(tmp_path: Path) -> None:
    text = manifest("ok", "*/5 * * * *", ["true"]) + "\n---\n" + manifest("Bad", "*/5 * * * *", ["true"])
    result = cronctl_lint("-", "-o", "json", stdin=text)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["valid"] == ["ok"]
    [problem] = report["problems"]
    assert (problem["file"], problem["field"]) == ("-", "metadata.name")


def test_the_pre_commit_hook_runs_cronctl_lint_on_yaml_files() -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["entry"], hook["language"]) == ("cronctl-lint", "cronctl lint", "python")
    assert all(re.search(hook["files"], name) for name in ("a.yaml", "dir/b.yml"))
    assert not re.search(hook["files"], "notes.txt")


def test_a_folder_is_linted_as_the_runner_reads_it_its_own_yaml_files_only(tmp_path: Path) -> None:
    """`cronctl lint DIR`, as `cronctl local DIR` reads DIR: its .yaml and .yml files, not the
    subfolders', not dot files; a folder with none is a problem, not a silent pass."""
    (tmp_path / "a.yaml").write_text(manifest("a", "*/5 * * * *", ["true"]))
    (tmp_path / "b.yml").write_text(manifest("b", "61 * * * *", ["true"]))
    (tmp_path / ".c.yaml").write_text(manifest("c", "61 * * * *", ["true"]))  # an editor's swap file
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.yaml").write_text(manifest("d", "61 * * * *", ["true"]))
    (tmp_path / "empty").mkdir()
    result = cronctl_lint(str(tmp_path), str(tmp_path / "empty"))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{tmp_path / 'empty'}: no .yaml or .yml manifest in this folder (its subfolders are not read)",
        f"{tmp_path / 'b.yml'}: CronSchedule 'b': spec.schedule: minute: 61 is out of range 0-59"]
    assert result.stderr == "2 problems; 1 CronSchedule valid\n"
    clean = cronctl_lint(str(ROOT / "examples" / "local"), str(ROOT / "examples" / "pools"))
    assert (clean.returncode, clean.stdout) == (0, ""), clean.stdout


def test_a_folder_that_cannot_be_listed_is_a_problem_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cronctl.runner import lint as linting

    def refused(folder: Path) -> list[Path]:
        raise PermissionError(13, "Permission denied", str(folder))

    monkeypatch.setattr(linting, "manifest_files", refused)
    [problem] = linting.lint([tmp_path], 0).problems
    assert str(problem) == f"{tmp_path}: cannot read: Permission denied"


def test_a_bare_double_dollar_in_a_command_is_a_warning_naming_its_field_and_the_exit_stays_0(tmp_path: Path) -> None:
    """A crontab habit ($$, the shell's process id) the kubelet turns into '$'; its escapes are not warned on."""
    (tmp_path / "a.yaml").write_text(manifest("pid", "*/5 * * * *", ["sh", "-c", "echo $$ > /tmp/pid"]))
    (tmp_path / "b.yaml").write_text(manifest("escaped", "*/5 * * * *", ["sh", "-c", "echo $$$$ $$(date) $(HOME) $"]))
    result = cronctl_lint(str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"))
    field = "spec.jobTemplate.spec.template.spec.containers[0].command[2]"
    assert (result.returncode, result.stdout.splitlines()) == (0, [
        f"warning: {tmp_path / 'a.yaml'}: CronSchedule 'pid': {field}: '$$' becomes '$' (Kubernetes expands $(VAR) "
        "and takes '$$' as an escaped '$'), so the shell never sees '$$'; write '$$$$' for the shell's process id"])
    assert result.stderr == "0 problems, 1 warning; 2 CronSchedules valid\n"
    report = json.loads(cronctl_lint(str(tmp_path / "a.yaml"), "-o", "json").stdout)
    assert [(w["document"], w["field"]) for w in report["warnings"]] == [("CronSchedule 'pid'", field)]
