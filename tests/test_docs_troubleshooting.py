"""docs/troubleshooting.md quotes the programs' lines as they print them: each quoted line's fixed part
must still be in the source, so a reworded message fails here until the page follows it.

A quoted line is a line of a ```text block of the page; ``<...>`` in it stands for what varies (with
the quotes around it, which ``!r`` prints), and so do numbers. The source's messages are its string literals (f-strings' and %-formats' fields cut out). A fixed part may
be made of several literals (``"clock %s: %s"`` and ``"skew"`` and ``"this node's clock is ..."``):
it is covered when it reads as the end of one literal, whole literals, then the start of another.
"""

from __future__ import annotations

import ast
import bisect
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "troubleshooting.md"
SOURCE = ROOT / "operator" / "cronctl"
_VARIES = re.compile(r"'?<[^<>]+>'?|[0-9]+")
_PERCENT_FIELD = re.compile(r"%[-+ #0-9.]*[sdrfgi]")
_WORD = re.compile(r"[A-Za-z]")


def quoted_lines(text: str) -> list[str]:
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = line == "```text"
        elif inside and line.strip():
            lines.append(line.strip())
    return lines


def _pieces(node: ast.AST) -> list[str]:
    """The literal runs of a string expression: a JoinedStr's constants, a plain string cut at its
    %-format fields."""
    if isinstance(node, ast.JoinedStr):
        runs, current = [], ""
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                current += value.value
            else:
                runs.append(current)
                current = ""
        return [*runs, current]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _PERCENT_FIELD.split(node.value.replace("%%", "\0"))
    return []


@lru_cache(maxsize=1)
def literals() -> tuple[list[str], list[str], set[str]]:
    """Every literal run of the package's source: sorted, sorted reversed (for suffixes), and as a set."""
    found: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for piece in _pieces(node):
                piece = piece.replace("\0", "%")
                if piece:
                    found.add(piece)
    return sorted(found), sorted(piece[::-1] for piece in found), found


def _starts_one(sorted_pieces: list[str], text: str) -> bool:
    """Whether ``text`` is the start of some piece."""
    at = bisect.bisect_left(sorted_pieces, text)
    return at < len(sorted_pieces) and sorted_pieces[at].startswith(text)


def covered(fragment: str) -> bool:
    """Whether the fixed part reads as the end of a literal, whole literals, then the start of one."""
    forward, backward, whole = literals()
    if any(fragment in piece for piece in whole):
        return True
    n = len(fragment)
    # reachable[i]: fragment[:i] is covered and ends where a literal ends (a field follows)
    reachable = [False] * (n + 1)
    for i in range(1, n + 1):
        reachable[i] = _starts_one(backward, fragment[:i][::-1])  # the end of some literal
    for i in range(1, n):
        if not reachable[i]:
            continue
        if _starts_one(forward, fragment[i:]):
            return True
        for j in range(i + 1, n + 1):
            if fragment[i:j] in whole and _evidence(fragment[i:j]):
                reachable[j] = True
    return reachable[n]


def _evidence(literal: str) -> bool:
    """Whether a whole literal in the middle counts: not one letter ("s", "a" would cover any word)."""
    return len(literal) > 1 or not _WORD.match(literal)


def fixed_parts(line: str) -> list[str]:
    return [part for part in _VARIES.split(line) if part.strip()]


def test_the_page_quotes_lines() -> None:
    assert len(quoted_lines(PAGE.read_text())) >= 25


@pytest.mark.parametrize("line", quoted_lines(PAGE.read_text()))
def test_each_quoted_line_is_still_in_the_source(line: str) -> None:
    assert [part for part in fixed_parts(line) if not covered(part)] == []


@pytest.mark.parametrize("reworded", [
    "read-only: held by pid <pid> on <host> since <time> fires these schedules; this runner takes over when it ends",
    "cannot save the book <book>: <why>; the runner carries on with what it has in memory",
    "could not renew the Lease <namespace>/<lease> for <N> s (the renew deadline): this replica stops acting",
])
def test_a_reworded_line_is_not_found(reworded: str) -> None:
    assert [part for part in fixed_parts(reworded) if not covered(part)] != []
