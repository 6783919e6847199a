"""A book lost (deleted or cut) while a Forbid run goes: the restarted runner rebuilds what is
running from the run folders, as a CronJob controller rebuilds ``status.active`` from its Jobs."""

from __future__ import annotations

import pytest

from .support import Clock, journal, manifest, runner, t, until

WAIT_FOR_GO = ["sh", "-c", "while [ ! -e go ]; do sleep 0.05; done; echo done"]


@pytest.mark.parametrize("loss", ["deleted", "cut"])
def test_a_lost_book_under_forbid_starts_no_second_run_and_records_the_first(folder, loss):
    (folder / "slow.yaml").write_text(manifest("slow", "* * * * *", WAIT_FOR_GO, concurrencyPolicy="Forbid"))
    clock = Clock("2024-01-15T09:59")
    first = runner(folder, clock)
    first.step()
    clock.set("2024-01-15T10:00")
    until(first, lambda: list((folder / "runs" / "slow").glob("*/pid")))
    first.lock.release()  # the runner ends; its run goes on under its wrapper
    book = folder / "cronctl.json"
    if loss == "deleted":
        book.unlink()
    else:
        book.write_bytes(book.read_bytes()[: book.stat().st_size // 2])

    clock.set("2024-01-15T10:01")
    second = runner(folder, clock)
    second.step()
    clock.set("2024-01-15T10:02")  # a time the restarted runner fires, under Forbid only once the first ended
    for _ in range(3):
        second.step()
    assert len(list((folder / "runs" / "slow").iterdir())) == 1, "a second run started beside the first"
    assert [f.nominal for f in second.firings.values()] == [t("2024-01-15T10:00")]

    (folder / "go").touch()
    ended = until(second, lambda: [r for r in journal(folder, "slow") if r.get("outcome") == "succeeded"])
    assert [(row["run"], row["nominal"]) for row in ended] == [("slow-1", t("2024-01-15T10:00"))]
    assert "done" in (folder / "runs" / "slow" / "20240115T1000" / "stdout.log").read_text()
