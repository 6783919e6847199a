"""Write docs/reference/cli.md from the argparse parsers of cronctl and kubectl cronctl, so the reference cannot drift.

    python scripts/cli-reference.py          # write it
    python scripts/cli-reference.py --check  # exit 1 if the committed page is not current

Each command gets its usage line and a table of its arguments: the flags, the default, the choices and
the help text. The default is the one the help text says (``(default: the number of CPUs)``) where it
says one, so that a default the machine decides does not make the page differ between machines, else
the one argparse holds. Arguments whose help is suppressed are left out, as ``--help`` leaves them out.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "cli.md"
sys.path.insert(0, str(ROOT / "operator"))
os.environ["COLUMNS"] = "120"  # argparse wraps usage lines at the terminal's width: one width for every machine

# "(default: text)", "(1-1000, default 5)": the default as the help text words it, up to a ";" or ")".
_SAID_DEFAULT = re.compile(r"\bdefault:? ([^;)]+)")

INTRO = """# Command-line reference

Generated from the commands' own parsers by `scripts/cli-reference.py`: what `--help` says, every command
and flag in one page. Exit codes: 0 done, 1 a valid question with no answer (or, for `lint`, a problem
found), 2 input that cannot be used (a usage error is one line naming the command and the flag), 130
after Ctrl-C. What the commands do, by task: [the runner](../runner/index.md), [the
plugin](../plugin.md), [the operator](../operator.md); what their errors mean:
[Troubleshooting](../troubleshooting.md)."""


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """(name, summary, parser) of each subcommand of ``parser``, in the order ``--help`` lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, summaries.get(name, ""), sub


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")


def _default(action: argparse.Action) -> str:
    said = _SAID_DEFAULT.search(action.help or "")
    if said:
        return _cell(said.group(1))
    if action.default in (None, False, [], argparse.SUPPRESS):
        return ""
    if isinstance(action, (argparse._StoreTrueAction, argparse._VersionAction, argparse._HelpAction)):
        return ""
    if isinstance(action.default, bool):
        return "on" if action.default else "off"
    return f"`{action.default}`"


def _name(action: argparse.Action) -> str:
    if action.option_strings:
        flags = ", ".join(f"`{flag}`" for flag in action.option_strings)
        takes = action.nargs != 0 and not isinstance(action, argparse.BooleanOptionalAction)
        value = action.metavar or action.dest.upper()
        return flags + (f" {_cell(value)}" if takes else "")
    return f"`{_cell(action.metavar or action.dest)}`" + {"?": " (optional)", "*": " (any number)", "+": " (one or more)"}.get(str(action.nargs), "")


def _table(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | default | choices | description |", "|---|---|---|---|"]
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        choices = ", ".join(f"`{choice}`" for choice in action.choices) if action.choices else ""
        rows.append(f"| {_name(action)} | {_default(action)} | {choices} | {_cell(action.help or '')} |")
    return rows if len(rows) > 2 else []


def _section(title: str, summary: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    lines = ["", f"{'#' * level} {title}", ""]
    if summary:
        lines += [_cell(summary), ""]
    lines += ["```text", parser.format_usage().strip().removeprefix("usage: "), "```"]
    table = _table(parser)
    if table:
        lines += [""] + table
    for name, sub_summary, sub in _subcommands(parser):
        lines += _section(f"{title} {name}", sub_summary, sub, level + 1)
    return lines


def page() -> str:
    from cronctl.cli import _parser as cronctl_parser
    from cronctl.plugin.cli import _parser as plugin_parser

    lines = [INTRO]
    for title, parser in (("cronctl", cronctl_parser()), ("kubectl cronctl", plugin_parser())):
        description = (parser.description or "").strip().splitlines()
        lines += _section(title, description[0] if description else "", parser, 2)
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = page()
    if argv[1:] == ["--check"]:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE} is not current: run python scripts/cli-reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
