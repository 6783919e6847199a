"""A status write carries only the fields that changed, and means the same as the whole status."""

from __future__ import annotations

import copy

import pytest

from cronctl.operator.apply import status_changes

from .scenarios import (catch_up_launch, failure, launch, overflow, replace, retry, skip_then_success_and_launch,
                        timeout)
from .world import merge_patch

SCENARIOS = {"launch": launch(), "skip then success": skip_then_success_and_launch()[1], "replace": replace(),
             "overflow": overflow(), "timeout": timeout(), "retry": retry()[1], "failure": failure(),
             "catch-up": catch_up_launch()}


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_changed_fields_patch_the_old_status_into_the_new_one(name: str) -> None:
    body, result = SCENARIOS[name]
    old, new = merge_patch({}, body.get("status") or {}), result.status  # stored: no nulls, as the API keeps it
    assert new is not None
    changes = status_changes(old, new)
    assert merge_patch(copy.deepcopy(old), changes) == merge_patch(copy.deepcopy(old), new)
    assert set(changes) <= set(new) | set(old)


def test_a_launch_sends_only_what_it_changed() -> None:
    body, result = launch()
    changes = status_changes(body["status"], result.status)
    assert "anchorTime" not in changes and "observedGeneration" not in changes
    assert {"launched", "active", "lastScheduleTime", "nextFireTime"} <= set(changes)


def test_a_field_gone_from_the_status_is_removed() -> None:
    assert status_changes({"a": 1, "overflowing": True}, {"a": 1}) == {"overflowing": None}
    assert status_changes({"a": 1, "gone": None}, {"a": 1}) == {}
