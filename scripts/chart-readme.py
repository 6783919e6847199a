#!/usr/bin/env python3
"""Write each chart's README.md from its README.md.gotmpl and the comments of its values.yaml.

The convention is helm-docs' (https://github.com/norwoodj/helm-docs), so that
either tool gives the same table:

- A comment block directly above a key (no blank line between) whose first
  line starts with ``# --`` documents that key: the text after ``# --`` and
  the comment lines after it, joined, are its description. Comment lines
  above the ``# --`` line are left out, so a block may start with notes for
  the reader of values.yaml alone.
- ``# -- (type) text`` gives the type; otherwise it is the default's (bool,
  int, float, string, list, object). A key whose default is null must give
  one.
- ``# @default -- text``, a line of the block, shows ``text`` as the default
  instead of the value.
- A key is listed by its dotted path (``image.repository``); a map with a
  ``# --`` comment is listed as a whole, and so is each documented key in it.
  Keys inside lists are not listed.

A ``# --`` comment that documents no key (a blank line or a list item follows
it) is an error, as is a key with a null default and no type.

The template is Markdown with helm-docs' placeholders: ``{{ template
"chart.name" . }}``, ``chart.description``, ``chart.version``,
``chart.appVersion`` and ``chart.valuesTable``. ``helm show readme`` prints
the README.md this writes; the chart's .helmignore leaves the template out of
the package.

``scripts/chart-readme.py`` writes both charts' READMEs; ``--check`` writes
nothing and exits 1 naming each README that is not current (tests/charts
does the same comparison).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CHARTS = (ROOT / "charts" / "cronctl", ROOT / "charts" / "cronschedule-fleet")
TEMPLATE = "README.md.gotmpl"
COMMAND = "scripts/chart-readme.py"

_KEY = re.compile(r"^(?P<indent> *)(?P<key>\"[^\"]+\"|'[^']+'|[^\s#'\"\-][^:#]*?):(?:\s|$)")
_ITEM = re.compile(r"^(?P<indent> *)- ")
_COMMENT = re.compile(r"^ *#")
_DOC = re.compile(r"^ *# -- ?(?:\((?P<type>[^)]+)\) *)?(?P<text>.*)$")
_DEFAULT = re.compile(r"^ *# @default -- ?(?P<text>.*)$")
_PLACEHOLDER = re.compile(r"\{\{-? *template +\"(?P<name>[^\"]+)\" +\. *-?\}\}")


class ReadmeError(Exception):
    pass


@dataclass(frozen=True)
class Row:
    key: str
    type: str
    default: str
    description: str


def _type_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return None


def _lookup(values: Any, path: list[str]) -> Any:
    for key in path:
        values = values[key]
    return values


def rows(values_text: str, where: str = "values.yaml") -> list[Row]:
    """The documented keys of a values file, in the file's order."""
    values = yaml.safe_load(values_text) or {}
    lines = values_text.splitlines()
    out: list[Row] = []
    stack: list[tuple[int, str | None]] = []  # (indent, key); None: a list item, whose keys are not listed
    block: list[str] = []  # the comment lines directly above the current line
    for number, line in enumerate(lines, 1):
        if _COMMENT.match(line):
            block.append(line)
            continue
        if not line.strip():
            if any(_DOC.match(c) for c in block):
                raise ReadmeError(f"{where}:{number}: a '# --' comment must be directly above its key")
            block = []
            continue
        item, key_match = _ITEM.match(line), _KEY.match(line)
        indent = len(line) - len(line.lstrip(" "))
        stack = [(i, k) for i, k in stack if i < indent]
        if item:
            if any(_DOC.match(c) for c in block):
                raise ReadmeError(f"{where}:{number}: '# --' documents a key, not a list item")
            stack.append((indent, None))
        elif key_match:
            key = key_match.group("key").strip("\"'")
            path = [k for _, k in stack] + [key]
            doc_at = next((i for i, c in enumerate(block) if _DOC.match(c)), None)
            if doc_at is not None and None not in path:
                out.append(_row(path, block[doc_at:], values, f"{where}:{number}"))
            elif doc_at is not None:
                raise ReadmeError(f"{where}:{number}: '# --' on {key}, a key inside a list")
            stack.append((indent, key))
        block = []
    if any(_DOC.match(c) for c in block):
        raise ReadmeError(f"{where}: a '# --' comment at the end documents no key")
    return out


def _row(path: list[str], block: list[str], values: Any, where: str) -> Row:
    first = _DOC.match(block[0])
    assert first is not None
    words, default = [first.group("text").strip()], None
    for comment in block[1:]:
        override = _DEFAULT.match(comment)
        if override:
            default = override.group("text").strip()
        else:
            words.append(re.sub(r"^ *#", "", comment).strip())
    value = _lookup(values, path)
    kind = first.group("type") or _type_of(value)
    if kind is None:
        raise ReadmeError(f"{where}: {'.'.join(path)} defaults to null: give its type, '# -- (type) ...'")
    shown = default if default is not None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    description = " ".join(word for word in words if word)
    return Row(".".join(path), kind, shown, description)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _entities(text: str) -> str:
    """Outside `code`, < and > as entities (Markdown would take <release> for HTML)."""
    parts = text.split("`")
    parts[::2] = [part.replace("<", "&lt;").replace(">", "&gt;") for part in parts[::2]]
    return "`".join(parts)


def _prose(text: str) -> str:
    return _cell(_entities(text))


def table(found: list[Row]) -> str:
    lines = ["| Key | Type | Default | Description |", "|-----|------|---------|-------------|"]
    lines += [f"| {_cell(r.key)} | {_cell(r.type)} | `{_cell(r.default)}` | {_prose(r.description)} |" for r in found]
    return "\n".join(lines)


def render(chart: Path) -> str:
    """The README.md of a chart, as this script writes it."""
    meta = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    values_text = (chart / "values.yaml").read_text(encoding="utf-8")
    fields = {
        "chart.name": str(meta["name"]),
        "chart.description": _entities(" ".join(str(meta.get("description", "")).split())),
        "chart.version": str(meta["version"]),
        "chart.appVersion": str(meta.get("appVersion", "")),
        "chart.valuesTable": table(rows(values_text, f"{chart.name}/values.yaml")),
    }
    template = (chart / TEMPLATE).read_text(encoding="utf-8")

    def fill(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in fields:
            raise ReadmeError(f"{chart.name}/{TEMPLATE}: unknown placeholder {name!r} (known: {', '.join(fields)})")
        return fields[name]

    return _PLACEHOLDER.sub(fill, template).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("charts", nargs="*", type=Path, help="chart folders (default: the repository's charts)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a README is not current")
    args = parser.parse_args(argv)
    stale = []
    for chart in args.charts or CHARTS:
        try:
            text = render(chart)
        except ReadmeError as error:
            print(f"{COMMAND}: {error}", file=sys.stderr)
            return 2
        readme = chart / "README.md"
        if readme.is_file() and readme.read_text(encoding="utf-8") == text:
            continue
        stale.append(readme)
        if not args.check:
            readme.write_text(text, encoding="utf-8")
            print(f"wrote {readme.resolve().relative_to(ROOT) if readme.resolve().is_relative_to(ROOT) else readme}")
    if args.check and stale:
        for readme in stale:
            print(f"{readme} is not current: run {COMMAND}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
