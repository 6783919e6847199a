"""What the operator counts: plans in, counter increments and launch delays out; the
text exposition parsed back with prometheus_client's own parser. No server needed."""

from __future__ import annotations

import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from prometheus_client import REGISTRY, enable_created_metrics
from prometheus_client.parser import text_string_to_metric_families

from cronctl.operator.manifests import EventSpec, JobLaunch, job_manifest
from cronctl.operator.metrics import COUNTERS, DELAY_BUCKETS, Metrics, counts, launch_delays, parse_address, serve
from cronctl.operator.effects import CreateJob, Plan, PostEvent

from . import scenarios
from .scenarios import NAME, NAMESPACE, t


def samples(metrics: Metrics, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """The samples called ``name`` in the exposition, by their sorted labels."""
    found = {}
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        for sample in family.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


OURS = (("namespace", NAMESPACE), ("schedule", NAME))


def events(*reasons: str) -> Plan:
    return Plan(effects=[PostEvent(EventSpec("Normal", reason, "...")) for reason in reasons])


# -- the pure mapping -------------------------------------------------------------------


@pytest.mark.parametrize("reasons, expected", [
    ((), {}),
    (("Launched",), {"launches": 1}),
    (("Replaced", "Launched"), {"replaces": 1, "launches": 1}),
    (("Skipped",), {"skips": 1}),
    (("TooManyMissedSchedules",), {"overflows": 1}),
    (("TimedOut", "Launched"), {"timeouts": 1, "launches": 1}),
    (("AttemptFailed", "Retried"), {"retries": 1}),  # a failed attempt is not a run's end: not counted
    (("Succeeded", "Failed", "JobGone"), {"successes": 1, "failures": 2}),
    (("Queued", "Coalesced", "Queued"), {"queued": 2, "coalesced": 1}),
    (("InvalidSchedule", "NeverFires", "JobNameTaken"), {}),
])
def test_counts_map_event_reasons_to_counters(reasons: tuple[str, ...], expected: dict[str, int]) -> None:
    assert counts(events(*reasons)) == expected


@pytest.mark.parametrize("scenario, expected", [
    (scenarios.launch, {"launches": 1}),
    (scenarios.replace, {"replaces": 1, "launches": 1}),
    (scenarios.overflow, {"overflows": 1, "launches": 1}),  # the most recent time still runs
    (scenarios.timeout, {"timeouts": 1}),
    (scenarios.failure, {"failures": 1}),
    (lambda: scenarios.skip_then_success_and_launch()[0], {"skips": 1}),
    (lambda: scenarios.skip_then_success_and_launch()[1], {"successes": 1, "launches": 1}),
    (lambda: scenarios.retry()[0], {}),
    (lambda: scenarios.retry()[1], {"retries": 1}),
])
def test_counts_of_real_plans(scenario: Any, expected: dict[str, int]) -> None:
    _, result = scenario()
    assert counts(result) == expected


def manifest(nominal: str, attempt: int = 1, reason: str = "scheduled") -> dict[str, Any]:
    body = scenarios.schedule()
    return job_manifest(body, scenarios.TEMPLATE, JobLaunch(1, t(nominal), t(nominal), attempt=attempt, reason=reason))


@pytest.mark.parametrize("created, now, expected", [
    ([manifest("2024-03-01T00:10")], t("2024-03-01T00:10") * 60 + 1.5, [1.5]),
    ([manifest("2024-03-01T00:10", reason="catch-up")], t("2024-03-01T00:15") * 60, [300.0]),
    ([manifest("2024-03-01T00:10", attempt=2)], t("2024-03-01T00:20") * 60, []),  # a retry is late by design
    ([manifest("2024-03-01T00:10", reason="manual")], t("2024-03-01T00:10") * 60 + 7, []),
    ([manifest("2024-03-01T00:10")], t("2024-03-01T00:09") * 60 + 59, [0.0]),  # skew: never negative
    ([manifest("2024-03-01T00:10"), manifest("2024-03-01T00:20")], t("2024-03-01T00:20") * 60 + 2,
     [602.0, 2.0]),
    ([], t("2024-03-01T00:10") * 60, []),
])
def test_launch_delays_from_the_nominal_time_to_job_creation(created: list[dict[str, Any]], now: float,
                                                             expected: list[float]) -> None:
    assert launch_delays(Plan(effects=[CreateJob(manifest) for manifest in created]), now) == expected


# -- the registry and its exposition -------------------------------------------------------


def test_a_launch_is_counted_observed_and_gauged_in_the_text_exposition() -> None:
    metrics = Metrics()
    before, result = scenarios.launch()
    metrics.record(NAMESPACE, NAME, result, now_seconds=t("2024-03-01T00:10") * 60 + 0.3,
                   status=before["status"])
    assert samples(metrics, "cronctl_launches_total") == {OURS: 1.0}
    assert samples(metrics, "cronctl_skips_total") == {}  # a series appears at its first increment
    assert samples(metrics, "cronctl_launch_delay_seconds_count") == {(("namespace", NAMESPACE),): 1.0}
    assert samples(metrics, "cronctl_launch_delay_seconds_sum") == {(("namespace", NAMESPACE),): pytest.approx(0.3)}
    buckets = {dict(labels)["le"]: value for labels, value in samples(metrics, "cronctl_launch_delay_seconds_bucket").items()}
    assert buckets["0.25"] == 0 and buckets["0.5"] == 1 and buckets["3600.0"] == 1 and buckets["+Inf"] == 1
    assert samples(metrics, "cronctl_active_runs") == {OURS: 1.0}
    assert samples(metrics, "cronctl_schedules") == {(("namespace", NAMESPACE),): 1.0}


def test_every_family_is_prefixed_and_has_help_text() -> None:
    metrics = Metrics()
    names = set()
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        assert family.name.startswith("cronctl_")
        assert family.documentation
        names.add(family.name)
    assert names == {f"cronctl_{name}" for name in COUNTERS} | {
        "cronctl_launch_delay_seconds", "cronctl_schedules", "cronctl_active_runs", "cronctl_reconcile_errors",
        "cronctl_reconcile_errors_created", "cronctl_reconciles_failing", "cronctl_plans_ahead",
        "cronctl_clock_skew_seconds", "cronctl_clock_skew_error_seconds", "cronctl_pool_queued", "cronctl_pool_busy",
        "cronctl_pool_wait_seconds", "cronctl_pool_oldest_wait_seconds", "cronctl_refusals",
        "cronctl_schedules_refused", "cronctl_leader", "cronctl_build_info", "cronctl_api_requests",
        "cronctl_api_request_duration_seconds"}


def test_a_pools_look_sets_its_gauges_and_its_wait_histogram() -> None:
    metrics = Metrics()
    metrics.record_pool(NAMESPACE, "reports", busy=2, queued=3, oldest_wait=42.0, waits=[0.5, 30.0])
    pool = (("namespace", NAMESPACE), ("pool", "reports"))
    assert samples(metrics, "cronctl_pool_busy") == {pool: 2.0}
    assert samples(metrics, "cronctl_pool_queued") == {pool: 3.0}
    assert samples(metrics, "cronctl_pool_oldest_wait_seconds") == {pool: 42.0}
    metrics.forget_pool(NAMESPACE, "reports")
    assert samples(metrics, "cronctl_pool_queued") == {}
    assert {"launches", "skips", "replaces", "overflows", "timeouts", "retries"} <= set(COUNTERS)
    assert DELAY_BUCKETS[0] == 0.1 and DELAY_BUCKETS[-1] == 3600.0


def test_a_story_of_plans_adds_up() -> None:
    metrics = Metrics()
    story = [scenarios.launch(), scenarios.replace(), scenarios.overflow(), scenarios.timeout(),
             scenarios.failure(), *scenarios.skip_then_success_and_launch(), *scenarios.retry()]
    for before, result in story:
        metrics.record(NAMESPACE, NAME, result, now_seconds=t("2024-03-01T02:00") * 60, status=before.get("status"))
    totals = {name: samples(metrics, f"cronctl_{name}_total").get(OURS, 0) for name in COUNTERS}
    assert totals == {"launches": 4, "skips": 1, "replaces": 1, "overflows": 1, "timeouts": 1, "retries": 1,
                      "successes": 1, "failures": 1, "queued": 0, "coalesced": 0, "missed": 0, "pauses": 0}
    assert samples(metrics, "cronctl_launch_delay_seconds_count") == {(("namespace", NAMESPACE),): 4.0}


def test_active_runs_follow_the_status_the_plan_wrote_or_else_the_old_one() -> None:
    metrics = Metrics()
    before, launched = scenarios.launch()
    metrics.record(NAMESPACE, NAME, launched, 0.0, before["status"])
    metrics.record(NAMESPACE, NAME, Plan(), 0.0, launched.status)  # nothing changed: the old status holds
    assert samples(metrics, "cronctl_active_runs") == {OURS: 1.0}
    before, failed = scenarios.failure()
    metrics.record(NAMESPACE, NAME, failed, 0.0, before["status"])
    assert samples(metrics, "cronctl_active_runs") == {OURS: 0.0}


def test_schedules_are_gauged_per_namespace_and_forgotten_when_deleted() -> None:
    metrics = Metrics()
    for namespace, name in (("a", "x"), ("a", "y"), ("b", "x")):
        metrics.set_active(namespace, name, 2)
    assert samples(metrics, "cronctl_schedules") == {(("namespace", "a"),): 2.0, (("namespace", "b"),): 1.0}
    metrics.forget("a", "x")
    metrics.forget("b", "x")
    metrics.forget("b", "never-seen")
    assert samples(metrics, "cronctl_schedules") == {(("namespace", "a"),): 1.0}
    assert samples(metrics, "cronctl_active_runs") == {(("namespace", "a"), ("schedule", "y")): 2.0}


def test_each_metrics_object_owns_its_registry_and_the_global_one_holds_none_of_ours() -> None:
    one, two = Metrics(), Metrics()
    one.record(NAMESPACE, NAME, events("Launched"), 0.0)
    assert samples(one, "cronctl_launches_total") == {OURS: 1.0}
    assert samples(two, "cronctl_launches_total") == {}
    assert not [name for name in REGISTRY._names_to_collectors if name.startswith("cronctl_")]


def test_the_clock_is_injected() -> None:
    assert Metrics(clock=lambda: 123.5).now_seconds() == 123.5



def test_the_launch_delay_reads_the_clock_the_operator_fires_by() -> None:
    metrics = Metrics(clock=lambda: 123.5)  # the node's clock
    metrics.use_clock(lambda: 33.0)  # the one the scheduler fires by: the API server's, the node being ahead
    assert metrics.now_seconds() == 33.0


# -- the endpoint ----------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("0.0.0.0:9090", ("0.0.0.0", 9090)),
    ("127.0.0.1:0", ("127.0.0.1", 0)),
    (":9090", ("0.0.0.0", 9090)),
    ("[::1]:9090", ("::1", 9090)),
    ("localhost:8000", ("localhost", 8000)),
])
def test_metrics_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["9090", "host:", "host:http", "host:70000", ""])
def test_bad_metrics_addresses_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_address(text)


@pytest.fixture
def served() -> Iterator[tuple[Metrics, str]]:
    metrics = Metrics()
    server = serve("127.0.0.1:0", metrics)
    try:
        yield metrics, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        enable_created_metrics()  # serve() turned *_created off for the process; put it back


def test_serve_exposes_the_registry_at_slash_metrics(served: tuple[Metrics, str]) -> None:
    metrics, url = served
    metrics.record(NAMESPACE, NAME, scenarios.launch()[1], t("2024-03-01T00:10") * 60 + 2)
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        text = response.read().decode()
    assert f'cronctl_launches_total{{namespace="{NAMESPACE}",schedule="{NAME}"}} 1.0' in text
    assert "cronctl_launches_created" not in text
    assert f'cronctl_launch_delay_seconds_count{{namespace="{NAMESPACE}"}} 1.0' in text


def test_an_idle_metrics_server_sleeps_until_a_scrape_comes(served: tuple[Metrics, str]) -> None:
    """socketserver's serve_forever wakes twice a second to look at its stop flag: a cost on a VM."""
    _, url = served
    thread = next(thread for thread in threading.enumerate() if thread.name == "cronctl-metrics")
    before = settled_switches(thread)
    time.sleep(1.5)
    assert voluntary_switches(thread) == before  # not woken once
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        assert response.status == 200
    assert voluntary_switches(thread) > before  # a scrape does wake it


def test_stopping_the_metrics_server_wakes_it_and_ends_its_thread_at_once() -> None:
    server = serve("127.0.0.1:0", Metrics())
    try:
        thread = next(thread for thread in threading.enumerate() if thread.name == "cronctl-metrics")
        started = time.monotonic()
        server.shutdown()
        thread.join(timeout=2)
        assert not thread.is_alive() and time.monotonic() - started < 2
    finally:
        server.server_close()
        enable_created_metrics()


def settled_switches(thread: threading.Thread) -> int:
    """The thread's switches once it has reached its wait: on a loaded machine, a thread just
    started may still be taking turns at the GIL on its way there."""
    previous, switches = -1, voluntary_switches(thread)
    deadline = time.monotonic() + 3
    while switches != previous and time.monotonic() < deadline:
        time.sleep(0.1)
        previous, switches = switches, voluntary_switches(thread)
    return switches


def voluntary_switches(thread: threading.Thread) -> int:
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("voluntary_ctxt_switches")))


def test_the_operator_refuses_a_bad_metrics_address_before_it_starts(capsys: pytest.CaptureFixture[str]) -> None:
    from cronctl.cli import main

    assert main(["operator", "--metrics-address", "nowhere"]) == 2
    assert "--metrics-address: 'nowhere' is not HOST:PORT" in capsys.readouterr().err


def test_a_schedules_series_cost_a_few_hundred_bytes_not_labelled_children() -> None:
    """Issue 47: a labelled child of prometheus_client is an object with its own locks (0.7 KiB);
    a schedule's launches, successes and active runs were 2 KiB of the operator's memory."""
    import tracemalloc

    metrics = Metrics()
    keys = [(NAMESPACE, f"s{index}") for index in range(1000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for key in keys:
            metrics.per_schedule.count("launches", key, 1)
            metrics.per_schedule.count("successes", key, 1)
            metrics.set_active(*key, 1)
        per_schedule = (tracemalloc.get_traced_memory()[0] - before) / len(keys)
    finally:
        tracemalloc.stop()
    assert per_schedule < 600, per_schedule  # labelled children: about 2,000
    assert samples(metrics, "cronctl_launches_total")[(("namespace", NAMESPACE), ("schedule", "s7"))] == 1.0
    assert len(samples(metrics, "cronctl_active_runs")) == 1000
