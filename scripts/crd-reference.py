"""Write docs/reference/cronschedule.md and cronpool.md from crds/, so the references cannot drift.

    python scripts/crd-reference.py          # write it
    python scripts/crd-reference.py --check  # exit 1 if the committed page is not current
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import yaml

ROOT = Path(__file__).resolve().parent.parent
# The CRD file and its page, by name.
PAGES = {ROOT / "crds" / f"{name}.yaml": ROOT / "docs" / "reference" / f"{name}.md" for name in ("cronschedule", "cronpool")}


def fields(schema: dict[str, Any], path: str) -> Iterator[tuple[str, str, str]]:
    """(path, type, description) of every documented field under ``schema``, depth first."""
    for name, sub in (schema.get("properties") or {}).items():
        here = f"{path}.{name}" if path else name
        kind = sub.get("type", "object")
        if kind == "array" and isinstance(sub.get("items"), dict):
            kind = f"array of {sub['items'].get('type', 'object')}"
        if "enum" in sub:
            kind += ": " + ", ".join(f"`{value}`" for value in sub["enum"])
        description = " ".join(str(sub.get("description", "")).split()).replace("|", "\\|").replace("<", "&lt;")
        yield here, kind, description
        if sub.get("x-kubernetes-preserve-unknown-fields") and not sub.get("properties"):
            continue
        yield from fields(sub, here)
        if isinstance(sub.get("items"), dict):
            yield from fields(sub["items"], f"{here}[]")


def page(source: Path) -> str:
    crd = yaml.safe_load(source.read_text())
    names = crd["spec"]["names"]
    first = crd["spec"]["versions"][0]["name"]
    short = ", ".join(f"`{name}`" for name in names.get("shortNames", []))
    lines = [f"# {names['kind']} reference", "",
             f"`{crd['spec']['group']}/{first}`, kind `{names['kind']}`, namespaced"
             + (f"; short names {short}" if short else "") + ". "
             f"Generated from `crds/{source.name}` by `scripts/crd-reference.py`: the API server "
             "enforces the same schema."]
    for version in crd["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]["properties"]
        for part in ("spec", "status"):
            if part not in schema:
                continue
            lines += ["", f"## {part}", "", "| field | type | description |", "|---|---|---|"]
            lines += [f"| `{path}` | {kind} | {text} |" for path, kind, text in fields(schema[part], part)]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    stale = 0
    for source, target in PAGES.items():
        text = page(source)
        if argv[1:] == ["--check"]:
            if not target.exists() or target.read_text() != text:
                print(f"{target} is not current: run python scripts/crd-reference.py", file=sys.stderr)
                stale = 1
            continue
        target.parent.mkdir(exist_ok=True)
        target.write_text(text)
    return stale


if __name__ == "__main__":
    sys.exit(main(sys.argv))
