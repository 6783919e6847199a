"""Controller.bulk_create given Options a driver has read (the fleet preview), not the harness's dict."""

from __future__ import annotations

import pytest

from cronctl.core.controller import Controller
from cronctl.core.errors import Code, CronctlError
from cronctl.core.spec import CATCH_UP_ALL, Options
from cronctl.core.times import parse_time
from cronctl.core.zones import parse_offset

NOW = parse_time("2024-03-01T00:00")


def test_options_are_taken_as_they_are_with_the_fields_the_harness_lacks() -> None:
    options = Options(timeout=5, retries=2, catch_up=CATCH_UP_ALL, jitter=30, tz=parse_offset("+05:30"))
    specs = Controller().bulk_create(NOW, "f", 3, ["30 2 * * *", "0 * * * *"], "forbid", options)
    assert [(s.name, s.expression, s.options) for s in specs] == [
        ("f-0", "30 2 * * *", options), ("f-1", "0 * * * *", options), ("f-2", "30 2 * * *", options)]


def test_a_zone_with_an_every_schedule_in_use_is_refused_and_nothing_is_created() -> None:
    controller = Controller()
    with pytest.raises(CronctlError) as refused:
        controller.bulk_create(NOW, "f", 2, ["0 * * * *", "@every 45m"], "allow", Options(tz=parse_offset("+01:00")))
    assert refused.value.code is Code.INVALID_OPTIONS
    assert controller.state.jobs == {}
    # Unused, it is no matter; and UTC is no zone to an Options value.
    assert len(controller.bulk_create(NOW, "g", 1, ["0 * * * *", "@every 45m"], "allow",
                                      Options(tz=parse_offset("+01:00")))) == 1
    assert len(controller.bulk_create(NOW, "h", 1, ["@every 45m"], "allow", Options())) == 1
