"""cronctl_leader and cronctl_build_info: there from the start, so that an alert can ask whether any
replica leads (an empty cluster has no cronctl_schedules series) and a dashboard which version runs."""

from __future__ import annotations

import threading

from prometheus_client.parser import text_string_to_metric_families

from cronctl.about import package_version
from cronctl.operator.metrics import Metrics


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(metrics.exposition().decode())
            for sample in family.samples}


def test_the_leader_gauge_is_0_until_told_then_follows_the_lease() -> None:
    metrics = Metrics()
    assert samples(metrics)[("cronctl_leader", ())] == 0.0
    leading = threading.Event()
    metrics.watch_leading(leading)
    assert samples(metrics)[("cronctl_leader", ())] == 0.0  # a follower
    leading.set()
    assert samples(metrics)[("cronctl_leader", ())] == 1.0
    leading.clear()  # the Lease lost
    assert samples(metrics)[("cronctl_leader", ())] == 0.0


def test_with_no_leader_election_the_replica_always_leads_even_with_no_schedule() -> None:
    metrics = Metrics()
    metrics.watch_leading(None)
    found = samples(metrics)
    assert found[("cronctl_leader", ())] == 1.0
    assert not [name for name, _ in found if name == "cronctl_schedules"]  # what the alert read before


def test_build_info_names_the_version() -> None:
    assert samples(Metrics())[("cronctl_build_info", (("version", package_version()),))] == 1.0
