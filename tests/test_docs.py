"""The documentation: a site MkDocs builds with --strict, and a CronSchedule reference that is the CRD's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_site_builds_with_strict_link_checks(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                             "-d", str(tmp_path / "site")], capture_output=True, text=True, timeout=300,
                            env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "cronschedule" / "index.html").exists()


def test_the_references_are_generated_from_the_crds_and_current() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "crd-reference.py"), "--check"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_cli_reference_is_generated_from_the_parsers_and_current() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "cli-reference.py"), "--check"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_cli_reference_names_every_command_and_flag() -> None:
    sys.path.insert(0, str(ROOT / "operator"))
    from cronctl.cli import _parser as cronctl_parser
    from cronctl.plugin.cli import _parser as plugin_parser

    page = (ROOT / "docs" / "reference" / "cli.md").read_text()
    for prog, parser in (("cronctl", cronctl_parser()), ("kubectl cronctl", plugin_parser())):
        for name, command in parser._subparsers._group_actions[0].choices.items():  # type: ignore[union-attr]
            heading = f"### {prog} {name}\n"
            assert heading in page
            flags = [flag for action in command._actions if action.help != "==SUPPRESS=="
                     for flag in action.option_strings if flag not in ("-h", "--help")]
            section = page.split(heading, 1)[1].split("\n### ", 1)[0]
            assert [flag for flag in flags if f"`{flag}`" not in section] == [], name


@pytest.mark.parametrize("kind", ["cronschedule", "cronpool"])
def test_every_field_of_the_crds_spec_is_in_the_reference(kind: str) -> None:
    import yaml

    crd = yaml.safe_load((ROOT / "crds" / f"{kind}.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    page = (ROOT / "docs" / "reference" / f"{kind}.md").read_text()
    assert [name for name in spec if f"| `spec.{name}` |" not in page] == []


@pytest.mark.parametrize("kind", ["cronschedule", "cronpool"])
def test_the_reference_shows_each_fields_default_bounds_and_the_crds_rules(kind: str) -> None:
    import yaml

    crd = yaml.safe_load((ROOT / "crds" / f"{kind}.yaml").read_text())
    root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    page = (ROOT / "docs" / "reference" / f"{kind}.md").read_text()
    fields = page.split("## Rules the ")[0]
    rows = {line.split(" | ")[0].strip("| `"): line for line in fields.splitlines() if line.startswith("| `spec")}
    missing = []
    for name, field in root["properties"]["spec"]["properties"].items():
        row = rows[f"spec.{name}"]
        if "default" in field and f"`{json.dumps(field['default'])}`" not in row:
            missing.append(f"spec.{name}: default")
        for bound in ("minimum", "maximum", "maxLength", "minItems", "maxItems"):
            if bound in field and str(field[bound]) not in row:
                missing.append(f"spec.{name}: {bound}")
        if "pattern" in field and field["pattern"].replace("|", "\\|") not in row:
            missing.append(f"spec.{name}: pattern")
    messages = re.findall(r"^\s+message: \"(.*)\"$", (ROOT / "crds" / f"{kind}.yaml").read_text(), re.M)
    policy = ROOT / "crds" / f"{kind}-policy.yaml"  # the CronSchedule's rules since issue 47: "field: message"
    said = re.findall(r"^\s+message: \"(.*)\"$", policy.read_text(), re.M) if policy.exists() else []
    assert [f"| `{field}` | {message} |" for field, _, message in (each.partition(": ") for each in said)
            if f"| `{field}` | {message} |" not in page] == []
    assert missing == [] and [message for message in messages if message not in page] == []


def test_the_readme_is_short_and_speaks_no_internal_words() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]:
        text = page.read_text()
        assert not re.search(r"\bseed\b|\bPart [1-5]\b|shared/spec", text, re.I), page


def test_every_docs_page_is_in_the_navigation() -> None:
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(entries: list) -> list[str]:  # type: ignore[type-arg]
        found = []
        for entry in entries:
            for value in entry.values():
                found += pages(value) if isinstance(value, list) else [value]
        return found

    listed = set(pages(config["nav"]))
    assert {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").glob("**/*.md")} == listed


def test_ci_runs_the_test_command_the_readme_gives() -> None:
    readme = (ROOT / "README.md").read_text()
    command = subprocess.run([str(ROOT / ".ci" / "run"), "--print-command"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
    assert command == "scripts/test"
    assert f"The test command is `{command}`" in readme
    assert (ROOT / command).is_file() and os.access(ROOT / command, os.X_OK)
    ci = (ROOT / ".ci" / "run").read_text()
    assert "scripts/test" not in ci  # read from the README, not written twice