"""core.controller: the in-memory driver of the core (the harness's and the runner's)."""

from __future__ import annotations

import dataclasses

import pytest

from cronctl.core.controller import Controller
from cronctl.core.errors import Code, CronctlError
from cronctl.core.spec import PAST_LIMIT_LAUNCH, JobSpec, Options, Policy
from cronctl.core.state import RUNNING, TIMED_OUT, ControllerState
from cronctl.core.tick import Launch, Overflow, Replace, Skip
from cronctl.core.times import parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


START = t("2024-03-01T00:00")


def test_a_time_before_the_clock_is_refused_and_an_equal_one_taken() -> None:
    c = Controller()
    c.tick(START + 10)
    c.tick(START + 10)
    with pytest.raises(CronctlError) as refused:
        c.tick(START + 9)
    assert refused.value.code is Code.CLOCK_WENT_BACKWARDS
    assert c.state.clock == START + 10


def test_a_skipped_time_is_an_event_at_every_tick_but_news_and_counted_once() -> None:
    c = Controller()
    c.create_job(START, "sync", "*/10 * * * *", "forbid")
    c.tick(START + 10)
    first = c.step(START + 20)
    again = c.step(START + 21)
    assert [(a.decision, a.news) for a in first] == [(Skip("sync", START + 20), True)]
    assert [(a.decision, a.news) for a in again] == [(Skip("sync", START + 20), False)]
    assert c.find_job("sync").state.skipped == 1
    assert [(a.decision, a.news) for a in c.step(START + 30)] == [(Skip("sync", START + 30), True)]
    assert c.find_job("sync").state.skipped == 2


def test_under_the_seeds_rule_an_overflow_repeats_launches_nothing_and_counts_once() -> None:
    c = Controller()
    c.create_job(START, "probe", "* * * * *", "allow")
    for now in (START + 101, START + 102):
        assert c.tick(now) == [Overflow("probe", 101)]
    state = c.find_job("probe").state
    assert (state.overflowed, state.last_schedule, state.launched) == (1, None, 0)


def test_under_cronjobs_rule_an_overflow_launches_the_latest_and_the_next_tick_ends_it() -> None:
    c = Controller()
    c.add_job(JobSpec("probe", "* * * * *", Policy.ALLOW, Options(past_limit=PAST_LIMIT_LAUNCH), START, 0))
    assert c.tick(START + 180) == [Overflow("probe", 101, 100, launches=True),
                                   Launch("probe", "probe-1", 1, START + 180)]
    assert c.tick(START + 181) == [Launch("probe", "probe-2", 2, START + 181)]
    state = c.find_job("probe").state
    assert (state.overflowed, state.overflowing, state.last_schedule) == (1, False, START + 181)


def test_a_replaced_run_is_gone() -> None:
    c = Controller()
    c.create_job(START, "job", "*/10 * * * *", "replace")
    c.tick(START + 10)
    assert c.tick(START + 20) == [Replace("job", "job-1"), Launch("job", "job-2", 2, START + 20)]
    with pytest.raises(CronctlError) as gone:
        c.find_run("job-1")
    assert gone.value.code is Code.RUN_NOT_FOUND


def test_a_trigger_is_a_manual_run_that_deals_with_no_schedule_time() -> None:
    c = Controller()
    c.create_job(START, "job", "0 * * * *", "forbid")
    assert [a.decision for a in c.step(START + 5, triggers={"job": 1})] == [
        Launch("job", "job-1", 1, START + 5, "manual")]
    assert c.job_status("job").last_schedule is None
    assert c.tick(START + 60) == [Skip("job", START + 60)]  # the manual run is active: forbid skips


@pytest.mark.parametrize("reason, last_schedule", [("scheduled", START + 10), ("manual", None)])
def test_an_adopted_run_is_active_under_the_next_number_and_its_end_is_recorded(reason, last_schedule) -> None:
    """A run the driver finds going with no record (the runner's book lost), as a CronJob
    controller rebuilds status.active from its Jobs: Forbid skips beside it, and it finishes."""
    c = Controller()
    c.create_job(START + 11, "job", "*/10 * * * *", "forbid")
    run = c.adopt_run(START + 11, "job", START + 10, reason)
    assert (run.id, run.state, run.scheduled_for) == ("job-1", RUNNING, START + 10)
    assert c.job_status("job").last_schedule == last_schedule
    assert c.tick(START + 20) == [Skip("job", START + 20)]
    c.finish(START + 21, "job-1", "succeeded")
    assert c.tick(START + 30) == [Launch("job", "job-2", 2, START + 30)]


def test_a_controller_restored_from_its_state_decides_as_the_one_that_saved_it() -> None:
    def fleet() -> Controller:
        c = Controller()
        c.create_job(START, "a", "*/7 * * * *", "forbid", {"timeout": 20})
        c.create_job(START, "b", "@every 45m", "replace")
        return c
    kept, restored = fleet(), fleet()
    minutes = range(START + 1, START + 600, 13)
    for i, now in enumerate(minutes):
        if i == len(minutes) // 2:
            restored = Controller(ControllerState.from_json(restored.state.to_json()))
        assert restored.tick(now) == kept.tick(now)
    assert restored.state.to_json() == kept.state.to_json()


# -- a driver's changes to its jobs: edit, retire, hold, drop --------------------------------


def _launches(applied: list) -> list[int]:  # type: ignore[type-arg]
    return [a.decision.scheduled_for for a in applied if isinstance(a.decision, Launch)]


def test_an_edit_changes_later_firings_and_keeps_the_name_anchor_and_index() -> None:
    c = Controller()
    spec = c.create_job(START, "sync", "*/10 * * * *", "allow")
    c.tick(START + 10)
    edited = dataclasses.replace(spec, expression="*/5 * * * *")
    assert c.edit(edited) is True
    assert c.edit(edited) is False  # the same spec again changes nothing
    assert _launches([a for a in c.step(START + 15) if a.decision.job == "sync"]) == [START + 15]
    assert c.state.jobs["sync"].spec.index == spec.index and c.state.jobs["sync"].spec.created_at == START


def test_an_edit_of_the_timeout_applies_to_the_active_run_and_the_old_expiry_is_forgotten() -> None:
    c = Controller()
    spec = c.create_job(START, "slow", "0 * * * *", "allow", {"timeout": 5})
    c.tick(START + 60)
    run_id = c.state.jobs["slow"].state.active[0]
    c.edit(dataclasses.replace(spec, options=dataclasses.replace(spec.options, timeout=30)))
    c.tick(START + 70)  # the old timeout would have ended it at +65
    assert c.state.runs[run_id].state == RUNNING
    c.tick(START + 90)
    assert c.state.runs[run_id].state == TIMED_OUT


def test_an_edit_to_an_expression_that_never_fires_is_refused_and_changes_nothing() -> None:
    c = Controller()
    spec = c.create_job(START, "sync", "*/10 * * * *", "allow")
    with pytest.raises(CronctlError):
        c.edit(dataclasses.replace(spec, expression="0 0 30 2 *"))  # February 30th
    assert c.state.jobs["sync"].spec == spec


def test_a_retired_job_leaves_with_its_runs_and_is_never_looked_at_again() -> None:
    c = Controller()
    c.create_job(START, "gone", "*/10 * * * *", "allow", {"timeout": 5})
    c.create_job(START, "stays", "*/10 * * * *", "allow")
    c.tick(START + 10)
    job = c.retire("gone")
    assert job.spec.name == "gone" and "gone" not in c.state.jobs
    assert all(run.job != "gone" for run in c.state.runs.values())
    assert {a.decision.job for a in c.step(START + 20)} == {"stays"}  # no KeyError on its wake or expiry
    c.create_job(START + 20, "gone", "*/10 * * * *", "allow")  # the name is free again
    assert _launches(c.step(START + 30)) == [START + 30, START + 30]


def test_a_held_job_counts_no_missed_time_up_to_the_hold_and_fires_after_it() -> None:
    c = Controller()
    c.create_job(START, "nightly", "*/10 * * * *", "allow")
    c.tick(START)
    assert _launches(c.step(START + 35, holding={"nightly"})) == []  # 00:10, 00:20, 00:30 are not missed
    assert c.held == ["nightly"]
    assert _launches(c.step(START + 35, holding={"nightly"})) == [] and c.held == []  # held at that minute already
    c.wake(START + 35, "nightly")
    assert _launches(c.step(START + 40)) == [START + 40]


def test_a_dropped_run_leaves_as_a_replaced_one_does_and_frees_a_forbid_schedule() -> None:
    c = Controller()
    c.create_job(START, "sync", "*/10 * * * *", "forbid")
    c.tick(START + 10)
    run_id = c.state.jobs["sync"].state.active[0]
    c.drop(run_id)
    assert run_id not in c.state.runs and c.state.jobs["sync"].state.active == []
    assert _launches(c.step(START + 20)) == [START + 20]


def test_a_job_added_with_the_numbers_used_before_does_not_reuse_a_run_id() -> None:
    c = Controller()
    spec = c.create_job(START, "sync", "*/10 * * * *", "allow")
    c.retire("sync")
    c.add_job(dataclasses.replace(spec, created_at=START + 5), launched=7)
    assert [a.decision.run_id for a in c.step(START + 10) if isinstance(a.decision, Launch)] == ["sync-8"]


def test_the_runs_a_move_of_the_clock_timed_out_are_named_even_when_the_history_limit_drops_them() -> None:
    c = Controller()
    c.create_job(START, "slow", "0 * * * *", "allow", {"timeout": 5, "keep_failed": 0})
    c.tick(START + 60)
    [run_id] = c.state.jobs["slow"].state.active
    c.advance(START + 65)
    assert run_id not in c.state.runs and c.expired == [run_id]
    c.advance(START + 65)  # the same minute again: still named
    assert c.expired == [run_id]
    c.advance(START + 66)
    assert c.expired == []


def test_a_worker_that_times_its_run_reports_timed_out_which_the_harness_may_not() -> None:
    """The runner's wrapper enforces timeoutMinutes on its own clock (issue 45) and says timed_out; the
    core records that outcome as it is, not retried (issue 44). The harness's outcomes stay its two."""
    c = Controller()
    c.create_job(START, "job", "*/10 * * * *", "allow", {"keep_failed": 1})
    c.tick(START + 10)
    with pytest.raises(CronctlError) as refused:
        c.finish(START + 12, "job-1", "timed_out")
    assert refused.value.code is Code.INVALID_OUTCOME
    assert c.finish(START + 12, "job-1", "timed_out", timed_by_worker=True).state == "timed_out"
    assert c.job_status("job").active == [] and c.state.jobs["job"].state.consecutive_failures == 1
