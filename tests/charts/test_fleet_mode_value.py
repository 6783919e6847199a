"""The chart's fleetMode value (issue 47): the operator gets CRONCTL_FLEET_MODE=on, and nothing when it is off."""

from __future__ import annotations

from pathlib import Path

from .operator_chart import of_kind, render


def _environment(helm: Path, values: dict[str, object]) -> dict[str, object]:
    (deployment,) = of_kind(render(helm, values), "Deployment")
    (main,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "operator"] or \
        deployment["spec"]["template"]["spec"]["containers"][:1]
    return {item["name"]: item.get("value") for item in main.get("env") or []}


def test_fleet_mode_is_off_unless_the_value_turns_it_on(helm: Path) -> None:
    assert "CRONCTL_FLEET_MODE" not in _environment(helm, {"replicas": 1})
    assert _environment(helm, {"replicas": 1, "fleetMode": True})["CRONCTL_FLEET_MODE"] == "on"
