"""Write docs/reference/cronschedule.md from crds/cronschedule.yaml, so the reference cannot drift.

    python scripts/crd-reference.py          # write it
    python scripts/crd-reference.py --check  # exit 1 if the committed page is not current
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import yaml

ROOT = Path(__file__).resolve().parent.parent
CRD = ROOT / "crds" / "cronschedule.yaml"
PAGE = ROOT / "docs" / "reference" / "cronschedule.md"


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


def page() -> str:
    crd = yaml.safe_load(CRD.read_text())
    names = crd["spec"]["names"]
    first = crd["spec"]["versions"][0]["name"]
    short = ", ".join(f"`{name}`" for name in names.get("shortNames", []))
    lines = [f"# {names['kind']} reference", "",
             f"`{crd['spec']['group']}/{first}`, kind `{names['kind']}`, namespaced; short names {short}. "
             "Generated from `crds/cronschedule.yaml` by `scripts/crd-reference.py`: the API server "
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
    text = page()
    if argv[1:] == ["--check"]:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE} is not current: run python scripts/crd-reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.parent.mkdir(exist_ok=True)
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
