"""The operator under the faults a cluster has, on the real API server behind a fault proxy.

A small fleet (every-minute schedules, and Forbid ones whose first run never
ends) is due at 00:01; a fault is injected across that minute (the
operator's clock is a file the test moves, the fault runs in real time); then
the invariants are checked:

- no nominal minute without its Job, and none twice (each schedule's status
  counts exactly the runs its Jobs show);
- no Job left suspended for a minute that has come (staged, with staging on);
- status converged (lastScheduleTime is the minute);
- the operator's process alive, unless its Lease was really lost;
- the writes again within a few seconds of the fault's end.

The faults: connections reset and a blackhole across the minute (the
combination that cost every run of a minute before failed reconciles were
tried again within seconds), answers cut mid-body, every chunk delayed,
kube-apiserver killed and restarted, etcd stopped; and a holder cut off
longer than the Lease's renew deadline, which must stop acting before
another replica could take the Lease, and live on.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from .faultproxy import FaultProxy, kubeconfig_through
from .helpers import Cluster, Operator, Starts, job_of, schedule_manifest, wait_for

RUNNABLE = [f"every-{index}" for index in range(6)]
BLOCKED = ["forbid-0", "forbid-1"]  # Forbid, their first run never ends (no job controller here)
STAGED = "cronctl.dev/staged"
RESUMED_WITHIN_SECONDS = 5.0 + 1.5  # the retry's cap, the clock file's poll and this test's own


def a_proxy(control_plane: Any) -> FaultProxy:
    host, port = control_plane.url.removeprefix("https://").rsplit(":", 1)
    return FaultProxy(host, int(port))


@pytest.fixture
def proxy(control_plane: Any) -> Iterator[FaultProxy]:
    with a_proxy(control_plane) as running:
        yield running


def operator_through(control_plane: Any, namespace: str, tmp_path: Path, proxy: FaultProxy, name: str = "operator",
                     extra_args: tuple[str, ...] = (), extra_env: dict[str, str] | None = None) -> Operator:
    kubeconfig = tmp_path / f"{name}-through-proxy.kubeconfig"
    kubeconfig.write_text(kubeconfig_through(control_plane.kubeconfig.read_text(), control_plane.url, proxy.url))
    return Operator(control_plane, namespace, tmp_path, name=name, kubeconfig=kubeconfig,
                    extra_args=["--identity", name, *extra_args], extra_env=extra_env)


@pytest.fixture
def operator(control_plane: Any, namespace: str, tmp_path: Path, proxy: FaultProxy) -> Iterator[Operator]:
    op = operator_through(control_plane, namespace, tmp_path, proxy)
    op.set_clock("2024-03-01T00:00")
    op.start()
    yield op
    op.stop()
    print(op.log()[-8000:])


def staged_for(cluster: Cluster, schedule: str, when: str) -> bool:
    job = next((j for j in cluster.jobs(schedule) if j.metadata.name == job_of(schedule, when)), None)
    return job is not None and job.spec.suspend is True and (job.metadata.labels or {}).get(STAGED) == "true"


def released(cluster: Cluster, schedule: str, when: str) -> bool:
    """The Job of ``when`` exists and may run: created so at its minute, or staged and released."""
    job = next((j for j in cluster.jobs(schedule) if j.metadata.name == job_of(schedule, when)), None)
    return job is not None and job.spec.suspend is False and STAGED not in (job.metadata.labels or {})


def due_at(cluster: Cluster, names: list[str], when: str) -> Callable[[], bool]:
    return lambda: all(cluster.status(name).get("nextFireTime") == f"{when}:00Z" for name in names)


def a_fleet_due_at_0001(cluster: Cluster, staging: bool = False) -> None:
    """The fleet applied at 00:00 and seen by the operator (with ``staging``, 00:01's Jobs staged)."""
    for name in RUNNABLE:
        cluster.apply(schedule_manifest(name, "* * * * *"))
    for name in BLOCKED:
        cluster.apply(schedule_manifest(name, "* * * * *", "Forbid"))
    wait_for("00:01 the next fire of every schedule", due_at(cluster, RUNNABLE + BLOCKED, "2024-03-01T00:01"))
    if staging:
        wait_for("00:01 staged for every schedule",
                 lambda: all(staged_for(cluster, name, "2024-03-01T00:01") for name in RUNNABLE + BLOCKED))
    else:
        assert not any(cluster.jobs(name) for name in RUNNABLE + BLOCKED)  # created at the minute, not before


def across_the_minute(operator: Operator, cluster: Cluster, fault: Callable[[], None], fault_seconds: float,
                      minute: str = "2024-03-01T00:01") -> float:
    """The fault starts, the clock reaches ``minute`` inside it; the seconds from the fault's end
    until every runnable schedule's Job for the minute was released."""
    fault()
    operator.set_clock(f"{minute}:00")
    time.sleep(fault_seconds)
    ended = time.monotonic()
    wait_for(f"every run of {minute} released after the fault",
             lambda: all(released(cluster, name, minute) for name in RUNNABLE), timeout=60)
    return time.monotonic() - ended


def assert_every_minute_ran_once(operator: Operator, cluster: Cluster, minutes: list[str]) -> None:
    last = minutes[-1]
    for name in RUNNABLE:
        status = wait_for(f"{name}'s status converged",
                          lambda name=name: (s := cluster.status(name)).get("lastScheduleTime") == f"{last}:00Z" and s)
        runs = [job for job in cluster.jobs(name) if STAGED not in (job.metadata.labels or {})]
        assert sorted(job.metadata.name for job in runs) == [job_of(name, minute) for minute in minutes], name
        assert status["launched"] == len(minutes), (name, status)  # counted once each: none twice
        assert all(job.spec.suspend is False for job in runs), name
    for name in BLOCKED:  # the first run goes on; each later minute is skipped, once
        status = wait_for(f"{name}'s status converged",  # its first run recorded, and each skip
                          lambda name=name: (s := cluster.status(name)).get("skipped") == len(minutes) - 1
                          and s.get("launched", 0) >= 1 and s)
        assert status["launched"] == 1, (name, status)
    assert operator.process is not None and operator.process.poll() is None, operator.log()[-3000:]


def test_connections_reset_then_a_blackhole_across_the_minute_then_new_ones_reset_lose_no_run(
        operator: Operator, cluster: Cluster, proxy: FaultProxy) -> None:
    """As an idle connection closed by the API server, then a network partition over the minute,
    then a load balancer refusing connections as it comes back."""
    a_fleet_due_at_0001(cluster)

    def fault() -> None:
        proxy.reset_all()
        proxy.blackhole(4.0, reset_at_end=1.0)

    took = across_the_minute(operator, cluster, fault, 5.0)
    assert proxy.stats["refused"] > 0  # the minute's first tries met the reset at the blackhole's end
    assert took < RESUMED_WITHIN_SECONDS
    assert_every_minute_ran_once(operator, cluster, ["2024-03-01T00:01"])
    assert "MissedSchedule" not in [reason for reason, _ in cluster.events(RUNNABLE[0])]


def test_connections_reset_during_the_launches_lose_no_run(operator: Operator, cluster: Cluster,
                                                          proxy: FaultProxy) -> None:
    a_fleet_due_at_0001(cluster)

    def fault() -> None:
        threading.Timer(0.15, proxy.reset_all).start()  # the loop reads the clock file every 0.2 s

    took = across_the_minute(operator, cluster, fault, 0.2)
    assert took < RESUMED_WITHIN_SECONDS
    assert_every_minute_ran_once(operator, cluster, ["2024-03-01T00:01"])


def test_with_staging_on_connections_reset_during_the_releases_lose_no_run(
        control_plane: Any, namespace: str, tmp_path: Path, cluster: Cluster, proxy: FaultProxy) -> None:
    staging = operator_through(control_plane, namespace, tmp_path, proxy, extra_env={"CRONCTL_STAGING": "on"})
    staging.set_clock("2024-03-01T00:00")
    try:
        staging.start()
        a_fleet_due_at_0001(cluster, staging=True)
        took = across_the_minute(staging, cluster, lambda: threading.Timer(0.15, proxy.reset_all).start(), 0.2)
        assert took < RESUMED_WITHIN_SECONDS
        assert_every_minute_ran_once(staging, cluster, ["2024-03-01T00:01"])
    finally:
        staging.stop()


def test_kept_connections_gone_silent_at_the_minute_cost_a_write_timeout_not_the_run(
        operator: Operator, cluster: Cluster, proxy: FaultProxy) -> None:
    """As when a NAT or conntrack entry is dropped: what the operator sends on its kept
    connections vanishes and nothing comes back. A write waits WRITE_SECONDS for its answer,
    then goes again on a new connection, within the minute (it waited a minute before)."""
    from cronctl.operator.kube.rest import WRITE_SECONDS

    a_fleet_due_at_0001(cluster)
    took = across_the_minute(operator, cluster, proxy.go_silent, 0.0)
    assert took < WRITE_SECONDS + RESUMED_WITHIN_SECONDS
    assert_every_minute_ran_once(operator, cluster, ["2024-03-01T00:01"])
    assert proxy.stats["silenced"] > 0


def test_answers_cut_mid_body_across_the_minute_lose_no_run_and_double_none(
        operator: Operator, cluster: Cluster, proxy: FaultProxy) -> None:
    a_fleet_due_at_0001(cluster)
    took = across_the_minute(operator, cluster, lambda: proxy.cut_answers(3.0), 3.0)
    assert took < RESUMED_WITHIN_SECONDS
    operator.set_clock("2024-03-01T00:01:30")
    wait_for("00:02 the next fire", due_at(cluster, RUNNABLE, "2024-03-01T00:02"))
    operator.set_clock("2024-03-01T00:02:00")
    wait_for("00:02 released", lambda: all(released(cluster, name, "2024-03-01T00:02") for name in RUNNABLE))
    assert_every_minute_ran_once(operator, cluster, ["2024-03-01T00:01", "2024-03-01T00:02"])
    assert proxy.stats["cut"] > 0


def test_every_chunk_delayed_across_the_minute_loses_no_run(operator: Operator, cluster: Cluster,
                                                             proxy: FaultProxy) -> None:
    a_fleet_due_at_0001(cluster)
    took = across_the_minute(operator, cluster, lambda: proxy.delay(0.3, 4.0), 4.0)
    assert took < RESUMED_WITHIN_SECONDS
    assert_every_minute_ran_once(operator, cluster, ["2024-03-01T00:01"])


def test_the_api_server_killed_and_restarted_across_the_minute_loses_no_run_and_no_process(
        control_plane: Any, operator: Operator, cluster: Cluster) -> None:
    """Away 5 s, less than the Lease's renew deadline (10 s): the operator keeps its Lease."""
    a_fleet_due_at_0001(cluster)
    # On this thread: the new kube-apiserver dies with the thread that starts it (PR_SET_PDEATHSIG).
    threading.Timer(0.5, operator.set_clock, args=("2024-03-01T00:01:00",)).start()
    control_plane.restart_apiserver(5.0)
    ended = time.monotonic()
    wait_for("every run of 00:01 released after the restart",
             lambda: all(released(cluster, name, "2024-03-01T00:01") for name in RUNNABLE), timeout=60)
    assert time.monotonic() - ended < RESUMED_WITHIN_SECONDS
    assert_every_minute_ran_once(operator, cluster, ["2024-03-01T00:01"])
    assert "stopping so that no two replicas act" not in operator.log()


def test_etcd_stopped_across_the_minute_loses_no_run(control_plane: Any, operator: Operator,
                                                     cluster: Cluster) -> None:
    a_fleet_due_at_0001(cluster)

    def fault() -> None:
        control_plane.pause_etcd()
        threading.Timer(6.0, control_plane.resume_etcd).start()

    try:
        took = across_the_minute(operator, cluster, fault, 6.0)
    finally:
        control_plane.resume_etcd()
    assert took < RESUMED_WITHIN_SECONDS + 5  # the API server's own requests to etcd time out first
    assert_every_minute_ran_once(operator, cluster, ["2024-03-01T00:01"])


def test_a_holder_cut_off_past_the_renew_deadline_stops_acting_before_its_lease_can_expire_and_lives(
        control_plane: Any, namespace: str, tmp_path: Path, cluster: Cluster, proxy: FaultProxy) -> None:
    """Lease 3 s, renew deadline 2 s: the holder's path blackholed for 8 s. It stops acting within
    the deadline of its last renewal, before the other replica may take the Lease; the other
    takes it and launches the minute, once; the first lives on, and follows once its path heals."""
    first = operator_through(control_plane, namespace, tmp_path, proxy, "one", ("--lease-seconds", "3"))
    with a_proxy(control_plane) as second_proxy:
        second = operator_through(control_plane, namespace, tmp_path, second_proxy, "two", ("--lease-seconds", "3"))
        first.set_clock("2024-03-01T00:00")
        try:
            first.start()
            a_fleet_due_at_0001(cluster)
            second.start()
            time.sleep(1.0)
            proxy.blackhole(8.0)  # only the first replica's path
            cut = time.monotonic()
            wait_for("the first replica stopped acting",
                     lambda: "this replica stopped acting" in first.log(), timeout=10)
            assert time.monotonic() - cut < 3.0 + 0.5  # the lease: nobody could take it before this
            first.set_clock("2024-03-01T00:01:00")
            wait_for("the other replica released every run of 00:01",
                     lambda: all(released(cluster, name, "2024-03-01T00:01") for name in RUNNABLE), timeout=60)
            assert "holding the Lease" in second.log()
            time.sleep(8.0)  # the first replica's path heals: it follows
            assert_every_minute_ran_once(second, cluster, ["2024-03-01T00:01"])
            assert first.process is not None and first.process.poll() is None  # alive, a candidate again
            assert first.log().count("holding the Lease") == 1
        finally:
            for replica in (first, second):
                replica.stop()
                print(f"--- {replica.log_file.name}\n{replica.log()[-4000:]}")


def test_a_pool_under_resets_and_cut_answers_starts_each_waiting_job_once_and_never_more_than_its_workers(
        operator: Operator, cluster: Cluster, proxy: FaultProxy) -> None:
    """A CronPool's looks (a LIST, the resumes, its status) under the faults: a look that failed
    is made again within a second, from the Jobs as the API has them, so a resume whose answer
    was lost is seen as done, and none is made twice or past the pool's workers."""
    cluster.apply(json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronPool", "metadata": {"name": "reports"},
                              "spec": {"workers": 2}}))
    names = [f"pooled-{index}" for index in range(4)]
    for name in names:
        cluster.apply(schedule_manifest(name, "1 * * * *", pool="reports"))
    wait_for("00:01 the next fire", due_at(cluster, names, "2024-03-01T00:01"))
    starts = Starts(cluster, "reports")
    try:
        proxy.cut_answers(3.0)
        threading.Timer(0.15, proxy.reset_all).start()
        operator.set_clock("2024-03-01T00:01:00")
        wait_for("two of the four let run", lambda: len(starts.order) == 2, timeout=60)
        wait_for("the pool's status says so", lambda: (pool_status(cluster).get("busy"), pool_status(cluster)
                                                        .get("queued")) == (2, 2), timeout=60)
        proxy.cut_answers(3.0)
        threading.Timer(0.15, proxy.reset_all).start()
        for job in list(starts.order):
            cluster.finish_job(job, "Complete", "2024-03-01T00:01")
        wait_for("the other two let run once those ended", lambda: len(starts.order) == 4, timeout=60)
    finally:
        starts.stop()
    assert starts.order == [job_of(name, "2024-03-01T00:01") for name in names]  # seed order: by name
    assert starts.most == 2
    for name in names:
        assert cluster.job_names(name) == [job_of(name, "2024-03-01T00:01")]
        wait_for(f"{name}'s status converged", lambda name=name: cluster.status(name).get("launched") == 1)
    assert proxy.stats["cut"] > 0
    assert operator.process is not None and operator.process.poll() is None


def pool_status(cluster: Cluster) -> dict[str, Any]:
    body = cluster.custom.get_namespaced_custom_object("cronctl.dev", "v1", cluster.namespace, "cronpools", "reports")
    return body.get("status") or {}
