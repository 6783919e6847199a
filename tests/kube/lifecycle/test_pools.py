"""CronPools on a whole cluster's Job lifecycle: the job controller, kube-scheduler and kwok run
the Pods; the pool's workers decide which Jobs may run.

A pool of 2 with 5 schedules due at one minute runs 2 at once; the others start in seed 001's
order (nominal time, schedule name, attempt) as workers free, a retry queued by its attempt.
An operator killed in the middle of a queue, and a leader failover, start nothing twice and
leave no run waiting for ever.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from ..helpers import Cluster, Operator, Starts, kubectl, pooled_jobs, wait_for
from .conftest import Clock
from .test_lifecycle import LONG, at_minute, job_condition, schedule, seen

POOL = "reports"


def pool(workers: int) -> str:
    return json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronPool", "metadata": {"name": POOL},
                       "spec": {"workers": workers}})


def pool_status(cluster: Cluster) -> dict[str, Any]:
    body = cluster.custom.get_namespaced_custom_object("cronctl.dev", "v1", cluster.namespace, "cronpools", POOL)
    return body.get("status") or {}


@pytest.fixture
def starts(cluster: Cluster) -> Iterator[Starts]:
    watcher = Starts(cluster, POOL)
    yield watcher
    watcher.stop()


def test_a_pool_of_two_runs_five_due_at_one_minute_two_at_a_time_in_seed_order_with_a_retry_by_attempt(
        operator: Operator, cluster: Cluster, clock: Clock, starts: Starts) -> None:
    cluster.apply(pool(2))
    minute = at_minute(clock, 1)
    # a fails at once and is retried: its attempt 2 waits ahead of c, d and e (same time, "a" < "c").
    cluster.apply(schedule("a-report", minute, run_for="1s", exit_code=3, pool=POOL, maxRetries=1))
    cluster.apply(schedule("b-report", minute, run_for="12s", pool=POOL))
    for name in ("e-report", "c-report", "d-report"):
        cluster.apply(schedule(name, minute, run_for="3s", pool=POOL))
    for name in ("a-report", "b-report", "c-report", "d-report", "e-report"):
        seen(cluster, name)
    clock.set(1)
    wait_for("all five launched", lambda: len(pooled_jobs(cluster, POOL)) >= 5)
    wait_for("the pool's status", lambda: pool_status(cluster).get("queued") == 3)
    assert pool_status(cluster)["busy"] == 2
    assert [entry["schedule"] for entry in pool_status(cluster)["queue"]] == ["c-report", "d-report", "e-report"]
    wait_for("e says it is queued", lambda: [(entry["state"], entry.get("pool"))
                                             for entry in cluster.status("e-report").get("active", [])]
             == [("queued", POOL)])
    printed = kubectl(cluster.cp, "get", "cronpools", "-n", cluster.namespace).stdout.splitlines()
    assert printed[0].split() == ["NAME", "WORKERS", "BUSY", "QUEUED", "AGE"]
    job = {name: f"{name}-{clock.minute(1)}" for name in ("a-report", "b-report", "c-report", "d-report", "e-report")}
    wait_for("every run ended", lambda: all(job_condition(cluster, name) for name in job.values())
             and job_condition(cluster, job["a-report"] + "-2"), timeout=LONG)
    wait_for("the pool empty", lambda: pool_status(cluster).get("busy") == 0 and pool_status(cluster)["queued"] == 0)
    assert starts.order[:2] == [job["a-report"], job["b-report"]]  # the first two, at once
    assert starts.order[2:] == [job["a-report"] + "-2", job["c-report"], job["d-report"], job["e-report"]]
    assert starts.most == 2
    clock.set(2)
    wait_for("a's run failed after its retry", lambda: [run["state"] for run in
                                                        cluster.status("a-report").get("history", [])] == ["failed"])
    for name in ("b-report", "c-report", "d-report", "e-report"):
        wait_for(f"{name} succeeded", lambda n=name: [run["state"] for run in cluster.status(n).get("history", [])]
                 == ["succeeded"])


def test_a_schedule_naming_a_missing_pool_is_not_ready_and_its_run_waits_until_the_pool_exists(
        operator: Operator, cluster: Cluster, clock: Clock) -> None:
    cluster.apply(schedule("orphan", at_minute(clock, 1), run_for="1s", pool=POOL))
    ready = lambda: next(c for c in cluster.status("orphan").get("conditions", []) if c["type"] == "Ready")  # noqa: E731
    wait_for("Ready=False naming the pool", lambda: cluster.status("orphan").get("conditions")
             and ready()["reason"] == "PoolNotFound")
    assert f'CronPool "{POOL}"' in ready()["message"]
    clock.set(1)
    [name] = wait_for("its Job", lambda: cluster.job_names("orphan"))
    wait_for("its launch recorded, queued", lambda: [entry["state"] for entry in
                                                     cluster.status("orphan").get("active", [])] == ["queued"])
    assert cluster.batch.read_namespaced_job(name, cluster.namespace).spec.suspend is True
    cluster.apply(pool(1))
    wait_for("Ready again", lambda: ready()["status"] == "True")
    wait_for("the run let start once the pool exists", lambda: job_condition(cluster, name), timeout=LONG)


def replica(control_plane: Any, namespace: str, workdir: Path, name: str) -> Operator:
    return Operator(control_plane, namespace, workdir, name=name, extra_args=["--identity", name, "--lease-seconds", "3"])


def test_a_restart_and_a_failover_in_the_middle_of_a_queue_start_nothing_twice(
        control_plane: Any, namespace: str, tmp_path: Path, cluster: Cluster, clock: Clock,
        starts: Starts) -> None:
    first, second = replica(control_plane, namespace, tmp_path, "one"), replica(control_plane, namespace, tmp_path,
                                                                                "two")
    assert first.clock_file == clock.path
    try:
        first.start()
        cluster.apply(pool(1))
        names = [f"q{index}" for index in range(4)]
        for name in names:
            cluster.apply(schedule(name, at_minute(clock, 1), run_for="6s", pool=POOL))
        for name in names:
            seen(cluster, name)
        clock.set(1)
        jobs = [f"{name}-{clock.minute(1)}" for name in names]
        wait_for("q0 runs", lambda: starts.order == jobs[:1])
        first.kill()  # in the middle of the queue: q0 runs, q1-q3 wait
        wait_for("q0 ends while no operator runs", lambda: job_condition(cluster, jobs[0]), timeout=LONG)
        second.start()  # takes the Lease once the killed one's expires
        wait_for("q1 let run by the new leader", lambda: starts.order == jobs[:2], timeout=LONG)
        first.start()  # a follower now
        second.kill()  # failover while q1 runs
        wait_for("q2 and q3 let run after the failover", lambda: starts.order == jobs, timeout=2 * LONG)
        wait_for("every run ended", lambda: all(job_condition(cluster, job) for job in jobs), timeout=LONG)
        assert starts.most == 1
        assert sorted(job.metadata.name for job in pooled_jobs(cluster, POOL)) == jobs  # none doubled
        clock.set(2)
        for name in names:
            wait_for(f"{name} succeeded once", lambda n=name: [run["state"] for run in
                                                               cluster.status(n).get("history", [])] == ["succeeded"])
    finally:
        for op in (first, second):
            op.stop()
            print(f"--- {op.log_file.name}\n{op.log()[-4000:]}")
