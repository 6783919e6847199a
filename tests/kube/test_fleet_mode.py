"""Fleet mode on the real API server (issue 47): ``kubectl get cronschedules`` shows every column
fresh within 5 s of the truth in the default mode, and the per-launch columns (ACTIVE, LAST
SCHEDULE, NEXT FIRE, ATTEMPT) empty, never stale, in fleet mode, where what a person acts on
(LAST SUCCESS, READY) is still written and ``kubectl cronctl describe`` reads the launches off
the Jobs. The truth is the Jobs and the operator's clock, a file the test moves. In fleet mode an
operator killed after a launch's create launches nothing twice after its restart.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from .helpers import ROOT, Cluster, Operator, job_of, kubectl, schedule_manifest, wait_for

FRESH_SECONDS = 5.0
MODES = {"default": {}, "fleet": {"CRONCTL_FLEET_MODE": "on"}}
PER_LAUNCH = ("Active", "Attempt", "Last Schedule", "Next Fire")


@pytest.fixture(params=sorted(MODES))
def operator_env(request: pytest.FixtureRequest) -> dict[str, str]:
    return MODES[request.param]


def status_columns() -> dict[str, str]:
    """The CRD's printer columns that read the status, by name: what ``kubectl get`` shows of it."""
    crd = yaml.safe_load((ROOT / "operator/cronctl/cronschedule-crd.yaml").read_text())
    columns = crd["spec"]["versions"][0]["additionalPrinterColumns"]
    return {c["name"]: c["jsonPath"] for c in columns if c["jsonPath"].startswith(".status.")}


def shown(cluster: Cluster, name: str) -> dict[str, str]:
    """``kubectl get cronschedule`` with every status column (wide or not), by column name."""
    columns = status_columns()
    spec = ",".join(f"C{index}:{path}" for index, path in enumerate(columns.values()))
    out = kubectl(cluster.cp, "get", "cronschedule", name, "-n", cluster.namespace, "-o", f"custom-columns={spec}",
                  "--no-headers").stdout.split()
    return dict(zip(columns, out))


def truth(cluster: Cluster, name: str, clock_minute: str, succeeded: str | None) -> dict[str, str]:
    """What each status column must show, from the Jobs and the clock (the default mode's)."""
    jobs = cluster.jobs(name)
    running = [j for j in jobs if not (j.status and j.status.conditions)]
    latest = max(j.metadata.annotations["cronctl.dev/scheduled-time"] for j in jobs)
    minute = int(clock_minute[-2:])
    return {"Ready": "True", "Suspend Reason": "<none>", "Active": str(len(running)),
            "Attempt": ",".join("1" for _ in running) or "<none>", "Last Schedule": latest,
            "Last Success": f"{succeeded}:00Z" if succeeded else "<none>",
            "Next Fire": f"2024-03-01T00:{minute + 1:02d}:00Z", "Ended": "<none>"}


def reconciled(cluster: Cluster, name: str) -> Any:
    status = cluster.status(name)
    return status.get("anchorTime") and any(c.get("type") == "Ready" and c.get("status") == "True"
                                            for c in status.get("conditions") or [])


def check_columns(cluster: Cluster, fleet: bool, clock: str, succeeded: str | None) -> None:
    """Default mode: every column equals the truth within FRESH_SECONDS. Fleet mode: the same for
    the columns it writes, and the per-launch ones empty at every look over that time."""
    want = truth(cluster, "minutely", clock, succeeded)
    if fleet:
        want.update({column: "<none>" for column in PER_LAUNCH})
    deadline, seen = time.monotonic() + FRESH_SECONDS, {}
    while time.monotonic() < deadline:
        seen = shown(cluster, "minutely")
        if fleet:
            assert all(seen[column] == "<none>" for column in PER_LAUNCH), seen  # never stale: never there
        if seen == want:
            return
        time.sleep(0.2)
    raise AssertionError(f"at {clock}, {FRESH_SECONDS} s after its Job: shown {seen}, true {want}")


def test_kubectl_get_columns_are_fresh_by_default_and_empty_never_stale_in_fleet_mode(
        operator: Operator, cluster: Cluster, operator_env: dict[str, str]) -> None:
    fleet = bool(operator_env)
    cluster.apply(schedule_manifest("minutely", "* * * * *"))
    wait_for("reconciled", lambda: reconciled(cluster, "minutely"))
    for minute in (1, 2, 3):
        clock = f"2024-03-01T00:{minute:02d}"
        operator.set_clock(clock + ":00")
        wait_for(f"{clock}'s Job", lambda: job_of("minutely", clock) in cluster.job_names("minutely"))
        check_columns(cluster, fleet, clock, None)
    cluster.finish_job(job_of("minutely", "2024-03-01T00:01"), "Complete", "2024-03-01T00:03")
    check_columns(cluster, fleet, "2024-03-01T00:03", "2024-03-01T00:03")  # an end is written in both modes
    assert cluster.job_names("minutely") == [job_of("minutely", f"2024-03-01T00:0{m}") for m in (1, 2, 3)]
    if fleet:
        described = plugin(cluster, "describe", "minutely")
        assert "Last Schedule:      2024-03-01T00:03:00Z" in described, described
        assert "Launched:           3" in described, described


def plugin(cluster: Cluster, *args: str) -> str:
    environment = cluster.cp.env(PYTHONPATH=str(ROOT / "operator"))
    result = subprocess.run([sys.executable, "-m", "cronctl.plugin", *args, "-n", cluster.namespace],
                            env=environment, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("operator_env", [MODES["fleet"]], ids=["fleet"])
def test_an_operator_killed_after_a_fleet_launch_launches_nothing_twice(
        operator: Operator, cluster: Cluster, tmp_path: Path) -> None:
    """The launch wrote no status: after a kill -9 and a restart the Job alone records it, and the
    next minute's run gets the next number."""
    cluster.apply(schedule_manifest("minutely", "* * * * *"))
    wait_for("reconciled", lambda: reconciled(cluster, "minutely"))
    operator.set_clock("2024-03-01T00:01:00")
    wait_for("00:01's Job", lambda: job_of("minutely", "2024-03-01T00:01") in cluster.job_names("minutely"))
    operator.kill()
    assert cluster.status("minutely").get("launched", 0) == 0  # recorded on the Job only
    operator.start()
    time.sleep(3)  # the restarted operator has listed and reconciled (a launch again would show by now)
    operator.set_clock("2024-03-01T00:02:00")
    wait_for("00:02's Job", lambda: job_of("minutely", "2024-03-01T00:02") in cluster.job_names("minutely"))
    time.sleep(2)
    jobs = {j.metadata.name: j.metadata.labels["cronctl.dev/run"] for j in cluster.jobs("minutely")}
    assert jobs == {job_of("minutely", "2024-03-01T00:01"): "1", job_of("minutely", "2024-03-01T00:02"): "2"}
    assert [reason for reason, _ in cluster.events("minutely") if reason == "Launched"] == []  # routine: none
