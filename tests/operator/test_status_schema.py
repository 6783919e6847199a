"""Every status field the operator writes is declared in the CRD: a v1 CRD prunes undeclared
fields silently, and a pruned counter or time would be a counting rule lost at the next reconcile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from .test_crash_consistency import PLANS

CRD = Path(__file__).resolve().parents[2] / "crds" / "cronschedule.yaml"


def status_schema() -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]


def undeclared(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    if isinstance(value, dict):
        declared = schema.get("properties")
        if declared is None:
            return [] if schema.get("x-kubernetes-preserve-unknown-fields") else [f"{path} (no properties)"]
        return [item for key, inner in value.items()
                for item in ([f"{path}.{key}"] if key not in declared
                             else undeclared(inner, declared[key], f"{path}.{key}"))]
    if isinstance(value, list):
        return [item for entry in value for item in undeclared(entry, schema.get("items", {}), f"{path}[]")]
    return []


@pytest.mark.parametrize("moment", PLANS, ids=[m.__name__ for m in PLANS])
def test_the_status_written_is_all_declared(moment: Any) -> None:
    world, now, second = moment()
    result = world.plan(now, second)
    for status in (world.schedule["status"], result.status or {}):
        assert undeclared({k: v for k, v in status.items() if v is not None}, status_schema(), "status") == []


def test_the_overflow_fields_are_declared() -> None:
    properties = status_schema()["properties"]
    assert properties["overflowing"]["type"] == "boolean"
    assert {"overflowed", "skipped", "lastSkippedTime", "conditions"} <= set(properties)




def outside_enums(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    """Values the CRD's enums refuse (the API server refuses the whole status write for one)."""
    if isinstance(value, dict):
        declared = schema.get("properties") or {}
        return [item for key, inner in value.items() if key in declared
                for item in outside_enums(inner, declared[key], f"{path}.{key}")]
    if isinstance(value, list):
        return [item for entry in value for item in outside_enums(entry, schema.get("items", {}), f"{path}[]")]
    return [f"{path}: {value!r}"] if "enum" in schema and value not in schema["enum"] else []


def test_a_queued_runs_status_is_declared_and_allowed() -> None:
    from .world import every_ten_minutes

    world = every_ten_minutes(0, pool="reports")
    world.reconcile(10)
    status = {k: v for k, v in world.schedule["status"].items() if v is not None}
    assert status["active"][0]["state"] == "queued"
    assert undeclared(status, status_schema(), "status") == []
    assert outside_enums(status, status_schema(), "status") == []
