"""Wait-for-last and catch-up of every missed time (seed 004 "Overlap" and "Catch-up")."""

from __future__ import annotations

from cronctl import run
from cronctl.core.controller import Controller
from cronctl.core.spec import CATCH_UP_ALL, JobSpec, Options, Policy
from cronctl.core.tick import Coalesce, Enqueue, Launch, Replace, Skip
from cronctl.core.times import parse_time


def t(text: str) -> int:
    minute = parse_time(text)
    assert minute is not None
    return minute


def controller(expression: str, policy: Policy, created: str, **options: object) -> Controller:
    c = Controller()
    c.advance(t(created))
    c.add_job(JobSpec("job", expression, policy, Options(**options), t(created), 0))  # type: ignore[arg-type]
    return c


def launched(decisions: list) -> list[str]:
    return [f"{d.run_id} {d.reason} for {d.scheduled_for}" for d in decisions if isinstance(d, Launch)]


def test_the_seeds_catch_up_example_runs_the_missed_days_one_after_another() -> None:
    """Daily at 02:00; the node is off from the 13th 20:00 to the 17th 09:00."""
    c = controller("0 2 * * *", Policy.WAIT_FOR_LAST, "2024-03-13T20:00", catch_up=CATCH_UP_ALL)
    first = c.tick(t("2024-03-17T09:00"))
    assert [d for d in first if isinstance(d, Enqueue)] == [
        Enqueue("job", t(f"2024-03-{day}T02:00"), "catch-up") for day in (14, 15, 16, 17)]
    assert [d for d in first if isinstance(d, Launch)] == [Launch("job", "job-1", 1, t("2024-03-14T02:00"), "catch-up")]
    for day, minute in ((15, "09:10"), (16, "09:20"), (17, "09:30")):
        c.finish(t(f"2024-03-17T{minute}"), f"job-{day - 14}", "succeeded")
        assert c.tick(t(f"2024-03-17T{minute}")) == [
            Launch("job", f"job-{day - 13}", day - 13, t(f"2024-03-{day}T02:00"), "catch-up")]
    c.finish(t("2024-03-17T09:40"), "job-4", "succeeded")
    assert c.tick(t("2024-03-17T09:40")) == []
    assert c.job_status("job").next_fire == t("2024-03-18T02:00")


def test_one_scheduled_firing_waits_at_most_and_a_newer_one_coalesces_it() -> None:
    c = controller("*/10 * * * *", Policy.WAIT_FOR_LAST, "2024-03-01T00:00")
    assert launched(c.tick(t("2024-03-01T00:10"))) == [f"job-1 scheduled for {t('2024-03-01T00:10')}"]
    assert c.tick(t("2024-03-01T00:20")) == [Enqueue("job", t("2024-03-01T00:20"), "scheduled")]
    assert c.tick(t("2024-03-01T00:30")) == [Coalesce("job", t("2024-03-01T00:20")),
                                             Enqueue("job", t("2024-03-01T00:30"), "scheduled")]
    c.finish(t("2024-03-01T00:35"), "job-1", "succeeded")
    assert c.tick(t("2024-03-01T00:35")) == [Launch("job", "job-2", 2, t("2024-03-01T00:30"), "scheduled")]


def test_catch_up_firings_keep_their_place_behind_the_active_run() -> None:
    c = controller("0 * * * *", Policy.WAIT_FOR_LAST, "2024-03-01T00:00", catch_up=CATCH_UP_ALL)
    c.tick(t("2024-03-01T01:00"))
    decisions = c.tick(t("2024-03-01T03:30"))
    assert decisions == [Enqueue("job", t("2024-03-01T02:00"), "catch-up"),
                         Enqueue("job", t("2024-03-01T03:00"), "catch-up")]


def test_catch_up_all_under_allow_launches_every_missed_time_in_order() -> None:
    c = controller("0 * * * *", Policy.ALLOW, "2024-03-01T00:00", catch_up=CATCH_UP_ALL)
    assert [d.scheduled_for for d in c.tick(t("2024-03-01T03:00"))] == [
        t("2024-03-01T01:00"), t("2024-03-01T02:00"), t("2024-03-01T03:00")]


def test_catch_up_all_under_forbid_runs_them_one_at_a_time() -> None:
    c = controller("0 * * * *", Policy.FORBID, "2024-03-01T00:00", catch_up=CATCH_UP_ALL)
    assert launched(c.tick(t("2024-03-01T03:00"))) == [f"job-1 catch-up for {t('2024-03-01T01:00')}"]
    assert c.tick(t("2024-03-01T03:01")) == [Skip("job", t("2024-03-01T02:00"))]
    c.finish(t("2024-03-01T03:02"), "job-1", "succeeded")
    assert [d.scheduled_for for d in c.tick(t("2024-03-01T03:02"))] == [t("2024-03-01T02:00")]


def test_catch_up_all_under_replace_keeps_only_the_newest() -> None:
    c = controller("0 * * * *", Policy.REPLACE, "2024-03-01T00:00", catch_up=CATCH_UP_ALL)
    c.tick(t("2024-03-01T01:00"))
    decisions = c.tick(t("2024-03-01T03:00"))
    assert decisions == [Replace("job", "job-1"), Launch("job", "job-2", 2, t("2024-03-01T03:00"), "scheduled")]


def test_the_100_missed_cap_guards_catch_up_all_too() -> None:
    c = controller("* * * * *", Policy.WAIT_FOR_LAST, "2024-03-01T00:00", catch_up=CATCH_UP_ALL)
    assert [type(d).__name__ for d in c.tick(t("2024-03-01T00:00") + 101)] == ["Overflow"]
    assert [type(d).__name__ for d in controller("* * * * *", Policy.ALLOW, "2024-03-01T00:00",
                                                 catch_up=CATCH_UP_ALL).tick(t("2024-03-01T00:00") + 100)] == [
        "Launch"] * 100


def test_a_manual_firing_does_not_move_the_last_schedule_time() -> None:
    c = controller("0 * * * *", Policy.ALLOW, "2024-03-01T00:00")
    [applied] = c.step(t("2024-03-01T00:30"), triggers={"job": 1})
    launch = applied.decision
    assert (launch.reason, launch.scheduled_for) == ("manual", t("2024-03-01T00:30"))
    assert c.job_status("job").last_schedule is None
    assert launched(c.tick(t("2024-03-01T01:00"))) == [f"job-2 scheduled for {t('2024-03-01T01:00')}"]


def test_the_harness_refuses_the_new_policy_and_option() -> None:
    assert run([["create_job", "2024-03-01T00:00", "a", "* * * * *", "wait-for-last"],
                ["create_job", "2024-03-01T00:00", "b", "* * * * *", "allow", {"catch_up": "all"}]]) == [
        "error: invalid policy", "error: invalid options"]
