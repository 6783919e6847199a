"""No function under operator/cronctl is past cyclomatic complexity 20 (radon's measure: every
branch, loop, ``except``, boolean operator, conditional expression and comprehension clause
counts), but for the few named below.

Length alone hides a tangle: a 60-line function with 48 paths through it is read path by path.
Past 20 a function holds more than one concept; split it by concept, each helper named for the
part it owns, rather than trimming it under the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from radon.complexity import cc_visit  # a test dependency: pip install -e ".[test]"
from radon.visitors import Class, Function

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "operator" / "cronctl"
LIMIT = 20

# Parsers of a grammar, where each branch is one rule of the grammar and reads best beside the
# others, in the grammar's order: splitting them would scatter the grammar over helpers.
ALLOWED = {
    ("core/every.py", "parse_every"),  # the every-expression grammar ("every 90 minutes from 08:00 ...")
}


def _functions(blocks: list[Function | Class]) -> Iterator[Function]:
    for block in blocks:
        if isinstance(block, Class):
            yield from _functions(block.methods)
        else:
            yield block
            yield from _functions(block.closures)


def measured() -> dict[tuple[str, str], int]:
    """(path under operator/cronctl, qualified name) -> complexity, of every function and method."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for function in _functions(cc_visit(source)):
            found[(path.relative_to(PACKAGE).as_posix(), function.fullname)] = function.complexity
    return found


def test_no_function_is_past_the_complexity_limit() -> None:
    over = {key: value for key, value in measured().items() if value > LIMIT and key not in ALLOWED}
    assert not over, "past complexity %d (split by concept): %s" % (
        LIMIT, ", ".join(f"{path}:{name} ({value})" for (path, name), value in sorted(over.items())))


def test_the_allow_list_names_functions_that_exist() -> None:
    """An allowed function that was renamed, removed or brought under the limit leaves the list."""
    found = measured()
    stale = sorted(key for key in ALLOWED if key not in found or found[key] <= LIMIT)
    assert not stale, f"allowed but absent or no longer past {LIMIT}: {stale}"
