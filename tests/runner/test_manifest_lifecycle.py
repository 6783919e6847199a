"""Manifests come, change, break and go while the runner runs, as CronSchedule objects do.

The runner reads each manifest by the CRD's own rules (``read_manifest``) and refuses a bad
one when it reads it, naming file, schedule and field; an invalid edit holds its schedule as
a suspension does and it resumes when fixed; a deleted or renamed manifest retires its
schedule (its process stopped, its waiting firings canceled, each recorded). Restarts always
work. The clock is injected; the runs are real processes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cronctl.runner.engine import Runner

from .support import Clock, journal, manifest, t, until

HOLD = ["sh", "-c", "while [ ! -e release ]; do sleep 0.02; done"]  # runs until the file release exists
STUBBORN = ["sh", "-c", "trap '' TERM; while :; do sleep 0.02; done"]  # only SIGKILL ends it


def a_runner(folder: Path, clock: Clock, said: list[str] | None = None, workers: int = 2) -> Runner:
    r = Runner(folder, clock, workers, say=(said.append if said is not None else lambda text: None),
               grace_seconds=0.3)
    assert r.open()
    return r


def book(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "cronctl.json").read_text())


def running(folder: Path, name: str) -> list[Path]:
    return list((folder / "runs" / name).glob("*/pid"))


def broken_manifest(name: str, **mistake: Any) -> str:
    body = json.loads(manifest(name, "*/5 * * * *", ["true"]))
    body["spec"].update(mistake)
    if "schedul" in mistake:
        del body["spec"]["schedule"]
    return json.dumps(body)


@pytest.mark.parametrize("mistake, field, reason", [
    ({"timeoutMinutes": "ten"}, "spec.timeoutMinutes", 'must be a whole number, not "ten"'),
    ({"startingDeadlineSeconds": "x"}, "spec.startingDeadlineSeconds", 'must be a whole number, not "x"'),
    ({"maxRetries": "x"}, "spec.maxRetries", 'must be a whole number, not "x"'),
    ({"timeoutMinutes": -5}, "spec.timeoutMinutes", "-5 must be at least 1"),
    ({"timeoutMinutes": 1.5}, "spec.timeoutMinutes", "must be a whole number, not 1.5"),
    ({"maxRetries": True}, "spec.maxRetries", "must be a whole number, not true"),
    ({"suspend": "yes"}, "spec.suspend", 'must be true or false, not "yes"'),
    ({"schedul": "*/5 * * * *"}, "spec.schedul", "is not a field of a CronSchedule (unknown field)"),
])
def test_a_manifest_the_crd_refuses_is_refused_when_read_naming_file_schedule_and_field(
        folder: Path, clock: Clock, mistake: dict[str, Any], field: str, reason: str) -> None:
    (folder / "bad.yaml").write_text(broken_manifest("bad", **mistake))
    (folder / "good.yaml").write_text(manifest("good", "*/5 * * * *", ["true"]))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    message = f"{folder / 'bad.yaml'}: CronSchedule 'bad': {field}: {reason}"
    assert [line for line in said if "bad.yaml" in line] == [f"{message} (not loaded until it is fixed)"]
    assert "bad" not in r.controller.state.jobs
    assert book(folder)["manifests"]["invalid"] == [{"file": str(folder / "bad.yaml"), "schedule": "bad",
                                                      "message": message}]
    clock.set("2024-03-01T00:05")
    assert [e["outcome"] for e in until(r, lambda: journal(folder, "good"))] == ["succeeded"]  # the others go on
    assert journal(folder, "bad") == []


def test_a_deleted_manifest_retires_its_schedule_stopping_its_process_with_sigkill_after_the_grace(
        folder: Path, clock: Clock) -> None:
    (folder / "gone.yaml").write_text(manifest("gone", "*/5 * * * *", STUBBORN))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: running(folder, "gone"))
    (folder / "gone.yaml").unlink()
    r.step()
    assert "gone" not in r.controller.state.jobs and "gone-1" not in r.controller.state.runs
    assert any(line.startswith("gone: retired, its manifest gone.yaml is gone") and "stopping gone-1" in line
               for line in said)
    [entry] = until(r, lambda: journal(folder, "gone"))
    assert (entry["run"], entry["outcome"], entry["note"]) == (
        "gone-1", "stopped", "its schedule was retired: the manifest was deleted, or the schedule renamed")
    assert not r.firings and r.slots.free_count == 2
    assert json.loads((folder / "runs/gone/20240301T0005/exit.json").read_text())["signal"] == 9
    assert book(folder)["manifests"]["retired"] == [{"schedule": "gone", "at": t("2024-03-01T00:05")}]
    clock.set("2024-03-01T00:10")  # its next due minute, and a restart: neither finds it (KeyError before)
    r.step()
    r.lock.release()
    again = a_runner(folder, clock)
    again.step()
    assert journal(folder, "gone") == [entry]


def test_a_renamed_schedule_is_a_new_one_and_the_old_one_retires(folder: Path, clock: Clock) -> None:
    path = folder / "job.yaml"
    path.write_text(manifest("old-name", "*/5 * * * *", ["true"]))
    r = a_runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: journal(folder, "old-name"))
    clock.set("2024-03-01T00:07")
    path.write_text(manifest("new-name", "*/5 * * * *", ["true"]))
    r.step()
    jobs = r.controller.state.jobs
    assert list(jobs) == ["new-name"] and jobs["new-name"].spec.created_at == t("2024-03-01T00:07")
    assert [entry["schedule"] for entry in book(folder)["manifests"]["retired"]] == ["old-name"]
    clock.set("2024-03-01T00:10")
    assert [e["nominal"] for e in until(r, lambda: journal(folder, "new-name"))] == [t("2024-03-01T00:10")]


def test_a_manifest_deleted_and_put_back_is_not_shown_retired_while_it_fires(folder: Path, clock: Clock) -> None:
    """A git checkout or an rsync deletes a manifest and puts it back (issue 45): status said "retired,
    nothing fires" while the schedule fired and took triggers."""
    from cronctl.runner.views import status_lines

    path = folder / "back.yaml"
    path.write_text(manifest("back", "*/5 * * * *", ["true"]))
    r = a_runner(folder, clock)
    r.step()
    text = path.read_text()
    path.unlink()
    clock.set("2024-03-01T00:01")
    r.step()
    assert [row["schedule"] for row in book(folder)["manifests"]["retired"]] == ["back"]
    path.write_text(text)
    clock.set("2024-03-01T00:02")
    r.step()
    assert book(folder)["manifests"]["retired"] == []
    clock.set("2024-03-01T00:05")
    assert until(r, lambda: journal(folder, "back"))[0]["outcome"] == "succeeded"
    shown = "\n".join(status_lines(folder, now=t("2024-03-01T00:06")))
    assert "retired" not in shown and "next:  2024-03-01 00:10 UTC" in shown, shown


def test_the_status_of_an_older_book_listing_a_schedule_put_back_as_retired_shows_it_firing(
        folder: Path, clock: Clock) -> None:
    """A book saved before the fix lists the schedule as retired beside its job: the job wins."""
    from cronctl.runner.views import status_lines

    (folder / "back.yaml").write_text(manifest("back", "*/5 * * * *", ["true"]))
    a_runner(folder, clock).step()
    data = book(folder)
    data["manifests"]["retired"] = [{"schedule": "back", "at": t("2024-03-01T00:00")}]
    (folder / "cronctl.json").write_text(json.dumps(data))
    shown = "\n".join(status_lines(folder, now=t("2024-03-01T00:01")))
    assert "retired" not in shown, shown


def test_a_retired_schedules_waiting_firing_is_canceled_and_its_name_starts_again_without_reusing_run_ids(
        folder: Path, clock: Clock) -> None:
    (folder / "hog.yaml").write_text(manifest("hog", "0 * * * *", HOLD))
    (folder / "late.yaml").write_text(manifest("late", "*/5 * * * *", ["true"]))
    r = a_runner(folder, clock, workers=1)
    r.step()
    clock.set("2024-03-01T01:00")
    until(r, lambda: running(folder, "hog"))  # hog holds the only slot: late's 01:00 firing waits
    assert [f.run_id for f in r.firings.values() if f.schedule == "late"] == ["late-1"]
    moved = (folder / "late.yaml").read_text()
    (folder / "late.yaml").unlink()
    r.step()
    assert [(e["run"], e["outcome"], e["actual"]) for e in journal(folder, "late")] == [
        ("late-1", "canceled", None)]
    (folder / "late.yaml").write_text(moved)  # back again: a new schedule of the same name, from 01:01
    (folder / "release").touch()
    clock.set("2024-03-01T01:01")
    r.step()
    clock.set("2024-03-01T01:05")
    entries = until(r, lambda: len(journal(folder, "late")) == 2 and journal(folder, "late"))
    assert [(e["run"], e["outcome"]) for e in entries] == [("late-1", "canceled"), ("late-2", "succeeded")]


def test_an_invalid_edit_holds_the_schedule_its_run_still_times_out_and_the_fix_resumes_without_catching_up(
        folder: Path, clock: Clock) -> None:
    path = folder / "edit.yaml"
    # maxRetries: the core's timeout, on the runner's clock (without, the wrapper's, on the run's own time)
    path.write_text(manifest("edit", "*/5 * * * *", HOLD, timeoutMinutes=3, maxRetries=1))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: running(folder, "edit"))
    path.write_text(broken_manifest("edit", timeoutMinutes="ten"))
    clock.set("2024-03-01T00:06")
    r.step()
    message = f"{path}: CronSchedule 'edit': spec.timeoutMinutes: must be a whole number, not \"ten\""
    assert f"{message} (its schedule does not fire until the manifest is fixed)" in said
    assert book(folder)["manifests"]["invalid"] == [{"file": str(path), "schedule": "edit", "message": message}]
    clock.set("2024-03-01T00:08")  # the run launched at 00:05 times out at 00:08: supervised as before
    [entry] = until(r, lambda: journal(folder, "edit"))
    assert entry["outcome"] == "timed_out"
    for minute in ("2024-03-01T00:10", "2024-03-01T00:15", "2024-03-01T00:16"):
        clock.set(minute)  # held: 00:10 and 00:15 do not fire, and count as no missed run
        r.step()
    assert not r.firings and len(journal(folder, "edit")) == 1
    path.write_text(manifest("edit", "*/5 * * * *", ["true"], timeoutMinutes=3))
    clock.set("2024-03-01T00:17")
    r.step()
    assert "edit: the manifest" in said[-1] and said[-1].endswith("is valid again; the schedule fires again")
    assert not r.firings and book(folder)["manifests"]["invalid"] == []  # 00:15 is not caught up
    clock.set("2024-03-01T00:20")
    entries = until(r, lambda: len(journal(folder, "edit")) == 2 and journal(folder, "edit"))
    assert [(e["nominal"], e["reason"], e["outcome"]) for e in entries[1:]] == [
        (t("2024-03-01T00:20"), "scheduled", "succeeded")]


def test_a_manifest_that_stops_parsing_holds_its_schedule_rather_than_retiring_it(folder: Path, clock: Clock) -> None:
    """An editor's half-saved file: the schedule keeps its state and fires again once the file reads."""
    path = folder / "half.yaml"
    text = manifest("half", "*/5 * * * *", ["true"])
    path.write_text(text)
    r = a_runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: journal(folder, "half"))
    path.write_text(text[: len(text) // 2])
    clock.set("2024-03-01T00:06")
    r.step()
    assert "half" in r.controller.state.jobs and book(folder)["manifests"]["retired"] == []
    [invalid] = book(folder)["manifests"]["invalid"]
    assert invalid["schedule"] == "half" and invalid["message"].startswith(f"{path}: not valid YAML")
    r.lock.release()
    again = a_runner(folder, clock)  # a restart reads the same: still held, not retired
    again.step()
    assert "half" in again.controller.state.jobs
    path.write_text(text)
    clock.set("2024-03-01T00:10")
    entries = until(again, lambda: len(journal(folder, "half")) == 2 and journal(folder, "half"))
    assert [e["run"] for e in entries] == ["half-1", "half-2"]


def test_a_restart_after_a_manifest_was_deleted_while_the_runner_was_down_retires_it(
        folder: Path, clock: Clock) -> None:
    (folder / "stays.yaml").write_text(manifest("stays", "*/5 * * * *", ["true"]))
    (folder / "leaves.yaml").write_text(manifest("leaves", "*/5 * * * *", HOLD))
    r = a_runner(folder, clock)
    r.step()
    clock.set("2024-03-01T00:05")
    until(r, lambda: running(folder, "leaves") and journal(folder, "stays"))
    r.lock.release()  # the runner ends; its run goes on; the manifest is deleted meanwhile
    (folder / "leaves.yaml").unlink()
    clock.set("2024-03-01T00:10")
    again = a_runner(folder, clock)
    entries = until(again, lambda: journal(folder, "leaves"))
    assert [(e["run"], e["outcome"]) for e in entries] == [("leaves-1", "stopped")]
    until(again, lambda: len(journal(folder, "stays")) == 2)
    assert list(again.controller.state.jobs) == ["stays"]


def test_the_loader_keeps_only_the_checks_the_schema_does_not_make(folder: Path) -> None:
    """The runner's own checks: the container it runs and the name; the rest is the CRD's."""
    from cronctl.runner.definitions import load_file

    path = folder / "x.yaml"
    path.write_text(json.dumps({"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
                                "metadata": {"name": "x" * 60}, "spec": {"schedule": "* * * * *"}}))
    [definition] = load_file(path).definitions  # too long and no jobTemplate: both the CRD's to say
    from cronctl.runner.engine import job_spec
    from cronctl.manifest import SpecError
    with pytest.raises(SpecError) as refused:
        job_spec(definition, 0, 0)
    assert refused.value.field == "metadata.name"


def test_the_folder_is_read_again_only_where_it_changed(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file keeps its records while its stamps stay; one modified within RACY_SECONDS of the scan
    is read again at the next one (two writes in one tick of the file system's clock share stamps)."""
    import os

    from cronctl.runner import folder as scanning

    reads: list[str] = []
    load_file = scanning.load_file
    monkeypatch.setattr(scanning, "load_file", lambda path: reads.append(Path(path).name) or load_file(path))
    for name in ("a", "b"):
        (folder / f"{name}.yaml").write_text(manifest(name, "*/5 * * * *", ["true"]))
    os.utime(folder / "a.yaml", (1e9, 1e9))  # long ago; b was just written
    scanned = scanning.ManifestFolder(folder)
    first, changed = scanned.scan()
    assert changed and sorted(reads) == ["a.yaml", "b.yaml"]
    second, changed = scanned.scan()
    assert not changed and sorted(reads) == ["a.yaml", "b.yaml", "b.yaml"]  # b is racy: read again, the same
    assert second.definitions[0] is first.definitions[0] and second.definitions[1] is first.definitions[1]
    os.utime(folder / "b.yaml", (1e9, 1e9))
    scanned.scan()
    reads.clear()
    assert scanned.scan()[1] is False and reads == []  # nothing changed, nothing read
    (folder / "a.yaml").write_text(manifest("a", "*/7 * * * *", ["true"]))
    loaded, changed = scanned.scan()
    assert changed and reads == ["a.yaml"] and loaded.definitions[0].spec["schedule"] == "*/7 * * * *"
    (folder / "b.yaml").unlink()
    loaded, changed = scanned.scan()
    assert changed and [d.name for d in loaded.definitions] == ["a"]


def test_a_copy_of_a_manifest_in_use_does_not_take_its_schedule_over_whatever_its_name_sorts_as(
        folder: Path, clock: Clock) -> None:
    """cp report.yaml backup-report.yaml: the schedule stays with report.yaml, whose later edits
    count; the copy is the one named as the duplicate, and it stays so after a restart."""
    (folder / "report.yaml").write_text(manifest("report", "*/5 * * * *", ["echo", "first"]))
    said: list[str] = []
    r = a_runner(folder, clock, said)
    r.step()
    (folder / "backup-report.yaml").write_text((folder / "report.yaml").read_text())
    (folder / "report.yaml").write_text(manifest("report", "*/5 * * * *", ["echo", "edited"]))
    r.step()
    assert r.definitions["report"].file == folder / "report.yaml"
    assert r.definitions["report"].command == ["echo", "edited"]
    assert any(line.startswith(f"{folder / 'backup-report.yaml'}: CronSchedule 'report': metadata.name: "
                               f"already defined in {folder / 'report.yaml'}") for line in said), said
    r.lock.release()
    again = a_runner(folder, clock)
    again.step()
    assert again.definitions["report"].file == folder / "report.yaml"
