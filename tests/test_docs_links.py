"""Every relative link of the docs and the README leads somewhere: the file exists, and the heading an
anchor names is in it. MkDocs' strict build checks the pages under docs/; the README, which GitHub
shows and MkDocs never builds, is checked only here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
_LINK = re.compile(r"\]\(([^()\s]+(?:\([^()\s]*\)[^()\s]*)?)\)")
_INLINE_CODE = re.compile(r"`[^`]*`")
_EXTERNAL = ("http://", "https://", "mailto:")


def prose(text: str) -> list[str]:
    """The page's lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def anchors(page: Path) -> set[str]:
    """The ids of the page's headings, as Python-Markdown's toc (MkDocs) makes them."""
    found = set()
    for line in prose(page.read_text()):
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading:
            title = re.sub(r"[^\w\s-]", "", heading.group(1).replace("`", "")).strip().lower()
            found.add(re.sub(r"[-\s]+", "-", title))
    return found


def links(page: Path) -> list[str]:
    text = _INLINE_CODE.sub("", "\n".join(prose(page.read_text())))
    return [target for target in _LINK.findall(text) if not target.startswith(_EXTERNAL)]


def broken(page: Path) -> list[str]:
    wrong = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            wrong.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            wrong.append(f"{target}: no heading #{anchor} in {where.name}")
    return wrong


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []


def test_a_broken_link_and_a_wrong_anchor_are_found(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n## Some `code` here\n\n```sh\n# not a heading\n```\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#some-code-here) [gone](c.md) [wrong](a.md#not-a-heading) [self](#b)\n\n# B\n"
                    "`[in code](x.md)`\n")
    assert links(page) == ["a.md#some-code-here", "c.md", "a.md#not-a-heading", "#b"]
    assert broken(page) == ["c.md: no such file", "a.md#not-a-heading: no heading #not-a-heading in a.md"]
