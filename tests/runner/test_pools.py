"""CronPools on the runner: the folder's CronPool manifests limit how many runs of their schedules
run at once, within the node's --workers, in seed 001's order; a schedule whose pool is not in
the folder waits for it; a bad CronPool is refused naming file, pool and field."""

from __future__ import annotations

import json
from pathlib import Path

from cronctl.runner.definitions import load_definitions
from cronctl.runner.views import status, status_lines

from .support import Clock, journal, manifest, runner, until

def hold(name: str) -> list[str]:
    """Runs until the test creates ./go-NAME."""
    return ["sh", "-c", f"while [ ! -e go-{name} ]; do sleep 0.05; done"]


def pool(name: str = "reports", workers: int = 2) -> str:
    return json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronPool", "metadata": {"name": name},
                       "spec": {"workers": workers}})


def running(r) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(f.schedule for f in r.firings.values() if f.slot is not None)


def test_a_pool_of_two_runs_five_due_at_one_minute_two_at_a_time_in_seed_order(folder: Path, clock: Clock) -> None:
    (folder / "pool.yaml").write_text(pool(workers=2))
    for name in ("e", "c", "a", "d", "b"):
        (folder / f"{name}.yaml").write_text(manifest(name, "*/5 * * * *", hold(name), pool="reports"))
    (folder / "free.yaml").write_text(manifest("free", "*/5 * * * *", ["true"]))
    r = runner(folder, clock, workers=4)
    r.step()
    clock.set("2024-03-01T00:05")
    r.step()
    assert running(r) == ["a", "b", "free"]  # the pool's first two; a schedule of no pool beside them
    assert r.waiting_reason() == "queued: 2/2 workers of CronPool 'reports' busy"
    shown = {s["name"]: s for s in status(folder)["schedules"]}
    assert shown["e"]["pool"] == {"name": "reports", "workers": 2, "busy": 2}
    assert "  e-1 queued: 2/2 workers of CronPool 'reports' busy" in status_lines(folder)
    for ended, now in (("b", ["a", "c"]), ("a", ["c", "d"]), ("d", ["c", "e"])):
        (folder / f"go-{ended}").touch()  # a worker frees: the next waiting in order takes it
        until(r, lambda now=now: running(r) == now)
    for name in ("c", "e"):
        (folder / f"go-{name}").touch()
    until(r, lambda: all(journal(folder, name) for name in ("a", "b", "c", "d", "e")))
    assert [journal(folder, name)[0]["outcome"] for name in ("a", "b", "c", "d", "e")] == ["succeeded"] * 5


def test_a_schedule_whose_pool_is_not_in_the_folder_waits_for_it(folder: Path, clock: Clock) -> None:
    (folder / "a.yaml").write_text(manifest("a", "*/5 * * * *", ["true"], pool="reports"))
    r = runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    r.step()
    r.step()
    assert running(r) == [] and not journal(folder, "a")
    assert r.waiting_reason() == "queued: CronPool 'reports' is not in the folder"
    (folder / "pool.yaml").write_text(pool(workers=1))
    until(r, lambda: journal(folder, "a"))
    assert journal(folder, "a")[0]["outcome"] == "succeeded"


def test_a_bad_cronpool_is_refused_naming_file_pool_and_field(folder: Path) -> None:
    (folder / "pool.yaml").write_text(pool(workers=0) + "\n---\n" + json.dumps(
        {"apiVersion": "cronctl.dev/v1", "kind": "CronPool", "metadata": {"name": "more"},
         "spec": {"workers": 2, "extra": 1}}))
    loaded = load_definitions(folder)
    assert [str(error) for error in loaded.errors] == [
        f"{folder / 'pool.yaml'}: CronPool 'reports': spec.workers: 0 must be at least 1",
        f"{folder / 'pool.yaml'}: CronPool 'more': spec.extra: is not a field of a CronPool (unknown field)"]
    assert loaded.pools == {}


def test_spec_pool_must_be_a_dns_label(folder: Path) -> None:
    from cronctl.manifest import SpecError, read_manifest

    body = json.loads(manifest("a", "*/5 * * * *", ["true"], pool="Reports_1"))
    try:
        read_manifest(body, 0)
    except SpecError as error:
        assert error.field == "spec.pool" and "is not a DNS label" in error.message
    else:
        raise AssertionError("refused")
