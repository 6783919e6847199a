"""Write docs/reference/cronschedule.md and cronpool.md from crds/, so the references cannot drift.

A CRD's rules come from its own ``x-kubernetes-validations`` and, for the CronSchedule, from
its ValidatingAdmissionPolicy (``crds/cronschedule-policy.yaml``), which holds its cross-field
rules since issue 47 so that the API server does not evaluate them on every status write.

    python scripts/crd-reference.py          # write it
    python scripts/crd-reference.py --check  # exit 1 if the committed page is not current
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Iterator

import yaml

ROOT = Path(__file__).resolve().parent.parent
# The CRD file and its page, by name.
PAGES = {ROOT / "crds" / f"{name}.yaml": ROOT / "docs" / "reference" / f"{name}.md" for name in ("cronschedule", "cronpool")}


_BOUNDS = (("minimum", "maximum", "{}"), ("minLength", "maxLength", "{} characters"),
           ("minItems", "maxItems", "{} items"))


def fields(schema: dict[str, Any], path: str) -> Iterator[tuple[str, str, str, str, str]]:
    """(path, type, default, bounds, description) of every documented field under ``schema``, depth first."""
    for name, sub in (schema.get("properties") or {}).items():
        here = f"{path}.{name}" if path else name
        kind = sub.get("type", "object")
        if kind == "array" and isinstance(sub.get("items"), dict):
            kind = f"array of {sub['items'].get('type', 'object')}"
        if "enum" in sub:
            kind += ": " + ", ".join(f"`{value}`" for value in sub["enum"])
        description = _cell(str(sub.get("description", "")))
        yield here, kind, _default(sub), _bounds(sub), description
        if sub.get("x-kubernetes-preserve-unknown-fields") and not sub.get("properties"):
            continue
        yield from fields(sub, here)
        if isinstance(sub.get("items"), dict):
            yield from fields(sub["items"], f"{here}[]")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def _default(schema: dict[str, Any]) -> str:
    return f"`{json.dumps(schema['default'])}`" if "default" in schema else ""


def _bounds(schema: dict[str, Any]) -> str:
    """The field's bounds in words (``1 to 20 items``, ``≥ 0``); an array's items' bounds after its own."""
    said = _ranges(schema)
    items = schema.get("items")
    each = _ranges(items) if isinstance(items, dict) else []
    return ", ".join(said + ([f"each {', '.join(each)}"] if each else []))


def _ranges(schema: dict[str, Any]) -> list[str]:
    said = [f"matches `{_cell(schema['pattern'])}`"] if "pattern" in schema else []
    for low, high, unit in _BOUNDS:
        if low in schema and high in schema:
            said.append(unit.format(f"{schema[low]} to {schema[high]}"))
        elif low in schema:
            said.append(unit.format(f"≥ {schema[low]}") if low == "minimum" else f"at least {unit.format(schema[low])}")
        elif high in schema:
            said.append(unit.format(f"≤ {schema[high]}") if high == "maximum" else f"at most {unit.format(schema[high])}")
    return said


def rules(schema: dict[str, Any], path: str) -> Iterator[tuple[str, str]]:
    """(where, message) of every validation rule (``x-kubernetes-validations``) under ``schema``: the
    checks the API server makes across fields, or beyond what a type and bounds say."""
    for rule in schema.get("x-kubernetes-validations", []):
        where = path + rule.get("fieldPath", "") if path else rule.get("fieldPath", "").lstrip(".") or "(the object)"
        message = rule.get("message") or _expression_message(rule.get("messageExpression", ""))
        yield where, _cell(message)
    for name, sub in (schema.get("properties") or {}).items():
        yield from rules(sub, f"{path}.{name}" if path else name)
    if isinstance(schema.get("items"), dict):
        yield from rules(schema["items"], f"{path}[]")


def policy_rules(source: Path) -> Iterator[tuple[str, str]]:
    """(where, message) of every validation of the CRD's ValidatingAdmissionPolicy
    (``<name>-policy.yaml`` beside it, where there is one): each message opens with its field."""
    policy = source.with_name(f"{source.stem}-policy.yaml")
    if not policy.is_file():
        return
    for document in yaml.safe_load_all(policy.read_text()):
        if document["kind"] != "ValidatingAdmissionPolicy":
            continue
        for rule in document["spec"]["validations"]:
            message = rule.get("message") or _expression_message(rule.get("messageExpression", ""))
            where, _, said = message.partition(": ")
            yield where, _cell(said)


def _expression_message(expression: str) -> str:
    """A messageExpression as its reader sees it: its string literals, the value where it names ``self``."""
    parts = re.split(r'("(?:[^"\\]|\\.)*")', " ".join(expression.split()))
    return "".join(part[1:-1] if part.startswith('"') else "<value>" if part.strip(" +") else "" for part in parts)


def columns(version: dict[str, Any]) -> list[str]:
    """The printer columns as a table: what ``kubectl get`` shows, and what only ``-o wide`` adds."""
    rows = ["| column | shown | type | from | description |", "|---|---|---|---|---|"]
    for column in version.get("additionalPrinterColumns", []):
        shown = "`-o wide`" if column.get("priority", 0) else "always"
        rows.append(f"| {column['name'].upper()} | {shown} | {column['type']} | `{_cell(column['jsonPath'])}` | "
                    f"{_cell(column.get('description', ''))} |")
    return rows


def page(source: Path) -> str:
    crd = yaml.safe_load(source.read_text())
    names = crd["spec"]["names"]
    first = crd["spec"]["versions"][0]["name"]
    short = ", ".join(f"`{name}`" for name in names.get("shortNames", []))
    lines = [f"# {names['kind']} reference", "",
             f"`{crd['spec']['group']}/{first}`, kind `{names['kind']}`, namespaced"
             + (f"; short names {short}" if short else "") + ". "
             f"Generated from `crds/{source.name}` by `scripts/crd-reference.py`: the API server "
             "enforces the same schema, and applies each default where the field is not given."]
    for version in crd["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]["properties"]
        if version.get("additionalPrinterColumns"):
            lines += ["", f"## kubectl get {names['plural']}", "",
                      "Dates are relative (`5m`), as kubectl shows `date` columns; NAME comes first.", ""]
            lines += columns(version)
        for part in ("spec", "status"):
            if part not in schema:
                continue
            lines += ["", f"## {part}", "", "| field | type | default | bounds | description |", "|---|---|---|---|---|"]
            lines += [f"| `{path}` | {kind} | {default} | {bounds} | {text} |"
                      for path, kind, default, bounds, text in fields(schema[part], part)]
        checks = list(rules(version["schema"]["openAPIV3Schema"], ""))
        if checks:
            lines += ["", "## Rules the API server checks", "",
                      "Beyond each field's type, default and bounds (a create or update that breaks one is "
                      "refused with the message):", "", "| on | message |", "|---|---|"]
            lines += [f"| `{where}` | {message} |" for where, message in checks]
    checks = list(policy_rules(source))
    if checks:
        lines += ["", "## Rules the ValidatingAdmissionPolicy checks", "",
                  f"`crds/{source.stem}-policy.yaml` (installed with the CRD: `kubectl apply -f crds/`, or the "
                  "chart with `crds.enabled`) judges a create, and an update that changes the spec, by these "
                  "rules; a status write is never judged by them, which is why they are not the CRD's own "
                  "(evaluated on every write, they cost about 1 ms of kube-apiserver CPU a status write). A "
                  "create or update that breaks one is refused with the field and the message. Where the "
                  "policy is not installed, the operator judges the same rules: the schedule is marked "
                  "Ready=False with the reason, and never fires.", "", "| on | message |", "|---|---|"]
        lines += [f"| `{where}` | {message} |" for where, message in checks]
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
