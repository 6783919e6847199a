"""The run() harness contract, one test per rule.

Written from seed 000 (Parts 1-5) and shared/spec/run-harness.md alone; every
expected value was worked out by hand from those texts (weekdays checked with
the standard library's calendar), never by running the implementation.

Each test feeds `run()` a whole scenario and asserts the whole result list.
"""

import os
import pathlib
import subprocess
import sys

from cronctl import run

# -- shorthands -------------------------------------------------------------

INVALID_ARGUMENTS = "error: invalid arguments"
UNKNOWN_OPERATION = "error: unknown operation"
INVALID_TIME = "error: invalid time"
BACKWARDS = "error: clock went backwards"
INVALID_EXPRESSION = "error: invalid expression"
INVALID_COUNT = "error: invalid count"
INVALID_TIMEZONE = "error: invalid timezone"
NEVER_FIRES = "error: never fires"
INVALID_NAME = "error: invalid name"
INVALID_POLICY = "error: invalid policy"
INVALID_OPTIONS = "error: invalid options"
JOB_EXISTS = "error: job exists"
JOB_NOT_FOUND = "error: job not found"
RUN_NOT_FOUND = "error: run not found"
RUN_NOT_ACTIVE = "error: run not active"
INVALID_OUTCOME = "error: invalid outcome"

MIDNIGHT = "2024-03-01T00:00"  # a Friday


def t(hhmm):
    """A time on Friday 2024-03-01."""
    return "2024-03-01T" + hhmm


def status(last_schedule, next_fire, active, launched):
    return {"last_schedule": last_schedule, "next_fire": next_fire,
            "active": active, "launched": launched}


def run_record(run_id, job, state, scheduled_for, launched_at, finished_at):
    return {"id": run_id, "job": job, "state": state, "scheduled_for": scheduled_for,
            "launched_at": launched_at, "finished_at": finished_at}


def counts(launched=0, skipped=0, replaced=0, overflowed=0, digest=0):
    return {"launched": launched, "skipped": skipped, "replaced": replaced,
            "overflowed": overflowed, "digest": digest}


def next_runs_all(exprs, after=MIDNIGHT, count=1):
    """One next_runs operation per expression."""
    return [["next_runs", e, after, count] for e in exprs]


# == run() itself and the shape of operations ===============================


def test_from_cronctl_import_run_works_with_the_standard_library_alone():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('kopf', 'kubernetes', 'yaml'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from cronctl import run\n"
        "print(run([['next_runs', '0 0 * * 7', '2024-03-01T00:00', 1]]))\n"
    )
    source_root = pathlib.Path(__file__).resolve().parents[2] / "operator"
    env = dict(os.environ, PYTHONPATH=str(source_root))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "[['2024-03-03T00:00']]\n", "")


def test_run_of_something_that_is_not_a_list_returns_an_empty_list():
    assert run(None) == []
    assert run("tick") == []
    assert run(5) == []
    assert run({"tick": ["2024-03-01T00:00"]}) == []


def test_run_of_an_empty_list_returns_an_empty_list():
    assert run([]) == []


def test_an_operation_that_is_not_a_non_empty_list_is_invalid_arguments():
    assert run([[], "tick", None, 5, {"op": "tick"}, "job_status"]) == [INVALID_ARGUMENTS] * 6


def test_a_first_element_that_is_not_a_known_name_is_unknown_operation():
    assert run([
        ["nope"],
        ["TICK", MIDNIGHT],
        ["Next_runs", "* * * * *", MIDNIGHT, 1],
        ["tick ", MIDNIGHT],
        [42, MIDNIGHT],
        [None],
        [True, MIDNIGHT],
        [["tick"], MIDNIGHT],
        [{"tick": 1}, MIDNIGHT],
    ]) == [UNKNOWN_OPERATION] * 9


def test_an_unknown_name_is_unknown_operation_whatever_its_arguments():
    assert run([["nope", 1, 2, 3, 4, 5, 6, 7, 8], ["frobnicate"]]) == [UNKNOWN_OPERATION] * 2


def test_a_known_name_with_a_number_of_arguments_outside_the_table_is_invalid_arguments():
    assert run([
        ["next_runs"],
        ["next_runs", "* * * * *"],
        ["next_runs", "* * * * *", MIDNIGHT],
        ["next_runs", "* * * * *", MIDNIGHT, 1, "+00:00", "extra"],
        ["create_job"],
        ["create_job", MIDNIGHT, "a", "* * * * *"],
        ["create_job", MIDNIGHT, "a", "* * * * *", "allow", {}, "extra"],
        ["tick"],
        ["tick", MIDNIGHT, "counts", "extra"],
        ["finish", MIDNIGHT, "a-1"],
        ["finish", MIDNIGHT, "a-1", "succeeded", "extra"],
        ["job_status"],
        ["job_status", "a", "extra"],
        ["run"],
        ["run", "a-1", "extra"],
        ["history"],
        ["history", "a", "extra"],
        ["bulk_create", MIDNIGHT, "p", 1, ["* * * * *"]],
        ["bulk_create", MIDNIGHT, "p", 1, ["* * * * *"], "allow", {}, "extra"],
    ]) == [INVALID_ARGUMENTS] * 19


def test_a_second_argument_of_tick_other_than_the_string_counts_is_invalid_arguments():
    assert run([
        ["tick", MIDNIGHT, "Counts"],
        ["tick", MIDNIGHT, "COUNTS"],
        ["tick", MIDNIGHT, "counts "],
        ["tick", MIDNIGHT, "list"],
        ["tick", MIDNIGHT, None],
        ["tick", MIDNIGHT, True],
        ["tick", MIDNIGHT, 1],
        ["tick", MIDNIGHT, ["counts"]],
    ]) == [INVALID_ARGUMENTS] * 8


def test_a_wrong_arity_never_moves_the_clock():
    assert run([
        ["tick", t("10:00"), "verbose"],
        ["create_job", t("11:00"), "a", "* * * * *"],
        ["bulk_create", t("12:00"), "p", 1, ["* * * * *"]],
        ["finish", t("13:00"), "a-1"],
        ["tick", t("09:00")],
    ]) == [INVALID_ARGUMENTS] * 4 + [[]]


def test_an_unknown_operation_never_moves_the_clock():
    assert run([
        ["advance", t("10:00")],
        ["Tick", t("10:00")],
        ["tick", t("09:00")],
    ]) == [UNKNOWN_OPERATION, UNKNOWN_OPERATION, []]


def test_a_wrong_arity_or_unknown_operation_never_times_out_runs():
    assert run([
        ["create_job", t("00:00"), "j", "0 * * * *", "allow", {"timeout": 10}],
        ["tick", t("01:00")],
        ["tick", t("02:00"), "verbose"],
        ["Tick", t("02:00")],
        ["finish", t("02:00"), "j-1"],
        ["run", "j-1"],
        ["finish", t("01:05"), "j-1", "succeeded"],
    ]) == [
        True,
        ["launch j-1 for 2024-03-01T01:00"],
        INVALID_ARGUMENTS,
        UNKNOWN_OPERATION,
        INVALID_ARGUMENTS,
        run_record("j-1", "j", "running", t("01:00"), t("01:00"), None),
        True,
    ]


def test_run_never_raises_on_unhashable_or_odd_arguments():
    assert run([
        ["next_runs", {}, [], {}],
        ["next_runs", "* * * * *", {}, 1],
        ["create_job", [], ["a"], {}, [], []],
        ["job_status", {}],
        ["job_status", ["a"]],
        ["run", {"id": "a-1"}],
        ["history", [1]],
        ["finish", {}, "a-1", "succeeded"],
    ]) == [INVALID_EXPRESSION, INVALID_TIME, INVALID_TIME, JOB_NOT_FOUND, JOB_NOT_FOUND,
           RUN_NOT_FOUND, JOB_NOT_FOUND, INVALID_TIME]


# == times ==================================================================


def test_times_at_the_edges_of_the_valid_range_are_accepted():
    assert run([
        ["next_runs", "* * * * *", "2000-01-01T00:00", 1],
        ["next_runs", "* * * * *", "2024-02-29T12:00", 1],
        ["next_runs", "* * * * *", "2199-12-31T23:58", 1],
    ]) == [["2000-01-01T00:01"], ["2024-02-29T12:01"], ["2199-12-31T23:59"]]


def test_a_result_may_fall_after_2199():
    assert run([
        ["next_runs", "* * * * *", "2199-12-31T23:59", 2],
        ["next_runs", "@every 8760h", "2199-12-31T00:00", 1],
    ]) == [["2200-01-01T00:00", "2200-01-01T00:01"], ["2200-12-31T00:00"]]


def test_a_time_not_exactly_of_the_shape_or_not_a_real_date_is_invalid_time():
    bad = [
        "1999-12-31T23:59", "2200-01-01T00:00", "2023-02-29T00:00", "2024-02-30T00:00",
        "2024-04-31T00:00", "2024-13-01T00:00", "2024-00-01T00:00", "2024-03-00T00:00",
        "2024-03-01T24:00", "2024-03-01T23:60", "2024-03-01 09:30", "2024-03-01t09:30",
        "2024-03-01T09:30:00", "2024-03-01T09:30Z", "2024-3-01T09:30", "2024-03-01T9:30",
        " 2024-03-01T09:30", "2024-03-01T09:30 ", "2024-03-01T09:30\n", "20240301T0930",
        "", "+2024-03-01T09:30",
    ]
    assert run([["next_runs", "* * * * *", b, 1] for b in bad]) == [INVALID_TIME] * len(bad)


def test_a_time_with_signs_or_spaces_that_int_would_accept_is_invalid_time():
    bad = ["2024-03-01T 9:30", "2024- 3-01T09:30", "2024-03-01T+9:30", "2024-03-+1T09:30",
           "2024-03-01T09:-0", "2024-03-01T09: 0"]
    assert run([["next_runs", "* * * * *", b, 1] for b in bad]) == [INVALID_TIME] * len(bad)


def test_non_ascii_digits_in_a_time_are_invalid_time():
    bad = ["2024-03-0\u0663T00:00", "\uff12\uff10\uff12\uff14-03-01T00:00",
           "2024-03-01T0\u0669:00", "2024-03-01T09:3\u0660"]
    assert run([["next_runs", "* * * * *", b, 1] for b in bad]) == [INVALID_TIME] * 4


def test_a_time_that_is_not_a_string_is_invalid_time():
    assert run([
        ["next_runs", "* * * * *", None, 1],
        ["next_runs", "* * * * *", 202403010000, 1],
        ["next_runs", "* * * * *", ["2024-03-01T00:00"], 1],
        ["tick", None],
        ["tick", 5],
        ["create_job", None, "a", "* * * * *", "allow"],
        ["finish", 1.5, "a-1", "succeeded"],
        ["bulk_create", True, "p", 1, ["* * * * *"], "allow"],
    ]) == [INVALID_TIME] * 8


# == next_runs: order of checks, count, types ===============================


def test_next_runs_checks_the_expression_before_the_time():
    assert run([["next_runs", "bad", "bad", 0, "bad"]]) == [INVALID_EXPRESSION]


def test_next_runs_checks_the_time_before_the_count():
    assert run([["next_runs", "* * * * *", "bad", 0, "bad"]]) == [INVALID_TIME]


def test_next_runs_checks_the_count_before_the_timezone():
    assert run([
        ["next_runs", "* * * * *", MIDNIGHT, 0, "bad"],
        ["next_runs", "@every 5m", MIDNIGHT, 0, "+00:00"],
    ]) == [INVALID_COUNT, INVALID_COUNT]


def test_next_runs_checks_the_timezone_before_never_fires():
    assert run([
        ["next_runs", "0 0 30 2 *", MIDNIGHT, 1, "UTC"],
        ["next_runs", "0 0 30 2 *", MIDNIGHT, 1, "+01:00"],
    ]) == [INVALID_TIMEZONE, NEVER_FIRES]


def test_count_must_be_an_integer_from_1_to_50():
    result = run([
        ["next_runs", "* * * * *", MIDNIGHT, 1],
        ["next_runs", "* * * * *", MIDNIGHT, 50],
        ["next_runs", "* * * * *", MIDNIGHT, 0],
        ["next_runs", "* * * * *", MIDNIGHT, 51],
        ["next_runs", "* * * * *", MIDNIGHT, -1],
    ])
    assert result == [
        [t("00:01")],
        [t("00:%02d" % m) for m in range(1, 51)],
        INVALID_COUNT, INVALID_COUNT, INVALID_COUNT,
    ]


def test_a_count_that_is_not_an_integer_is_invalid_count_and_bool_is_not_int():
    assert run([
        ["next_runs", "* * * * *", MIDNIGHT, True],
        ["next_runs", "* * * * *", MIDNIGHT, False],
        ["next_runs", "* * * * *", MIDNIGHT, 3.0],
        ["next_runs", "* * * * *", MIDNIGHT, "3"],
        ["next_runs", "* * * * *", MIDNIGHT, None],
        ["next_runs", "* * * * *", MIDNIGHT, [3]],
        ["next_runs", "* * * * *", MIDNIGHT, {"n": 3}],
    ]) == [INVALID_COUNT] * 7


def test_an_expression_that_is_not_a_string_is_invalid_expression():
    assert run([
        ["next_runs", None, MIDNIGHT, 1],
        ["next_runs", 5, MIDNIGHT, 1],
        ["next_runs", ["*", "*", "*", "*", "*"], MIDNIGHT, 1],
        ["next_runs", {"minute": "*"}, MIDNIGHT, 1],
        ["next_runs", True, MIDNIGHT, 1],
    ]) == [INVALID_EXPRESSION] * 5


def test_a_timezone_that_is_not_a_valid_offset_string_is_invalid_timezone_null_included():
    assert run([
        ["next_runs", "* * * * *", MIDNIGHT, 1, None],
        ["next_runs", "* * * * *", MIDNIGHT, 1, 530],
        ["next_runs", "* * * * *", MIDNIGHT, 1, ["+05:30"]],
        ["next_runs", "* * * * *", MIDNIGHT, 1, {"tz": "+05:30"}],
    ]) == [INVALID_TIMEZONE] * 4


def test_next_runs_returns_each_next_fire_after_the_previous_one():
    assert run([["next_runs", "0 */6 * * *", "2024-02-29T13:00", 4]]) == [
        ["2024-02-29T18:00", "2024-03-01T00:00", "2024-03-01T06:00", "2024-03-01T12:00"]]


def test_the_next_fire_is_strictly_after_the_given_minute():
    assert run([["next_runs", "30 9 * * *", "2024-03-01T09:30", 1]]) == [["2024-03-02T09:30"]]


# == the 8-year bound and never fires =======================================


def test_an_expression_that_cannot_match_any_date_never_fires():
    assert run([
        ["next_runs", "0 0 30 2 *", MIDNIGHT, 1],
        ["next_runs", "0 0 31 4,6,9,11 *", MIDNIGHT, 1],
        ["next_runs", "0 0 31 2 *", MIDNIGHT, 1],
    ]) == [NEVER_FIRES] * 3


def test_february_30th_with_a_restricted_day_of_week_fires_on_that_weekday():
    # Both day fields restricted: the 30th (never in February) OR a Monday.
    assert run([["next_runs", "0 0 30 2 MON", MIDNIGHT, 2]]) == [
        ["2025-02-03T00:00", "2025-02-10T00:00"]]


def test_eight_years_always_reach_the_next_29_february_even_across_2100():
    assert run([["next_runs", "0 0 29 2 *", "2096-03-01T00:00", 2]]) == [
        ["2104-02-29T00:00", "2108-02-29T00:00"]]


def test_a_chain_of_next_runs_ends_when_a_search_finds_nothing_within_eight_years():
    # 1 December on a Friday: 2028, 2034, then 2045 (11 years later).
    assert run([["next_runs", "0 0 */31 12 FRI", "2024-01-01T00:00", 5]]) == [
        ["2028-12-01T00:00", "2034-12-01T00:00"]]


def test_an_expression_with_no_match_within_eight_years_never_fires():
    assert run([
        ["next_runs", "0 0 */31 12 FRI", "2035-01-01T00:00", 1],
        ["next_runs", "0 0 */31 12 FRI", "2036-12-31T23:59", 1],
        ["next_runs", "0 0 */31 12 FRI", "2037-01-01T00:00", 1],
    ]) == [NEVER_FIRES, NEVER_FIRES, ["2045-12-01T00:00"]]


def test_the_eight_year_bound_uses_the_local_calendar_year_of_after():
    # 2036-12-31T23:00Z is 2037-01-01T01:00 at +02:00: the bound is 2045, and
    # local 2045-12-01T00:00 (a Friday) is 2045-11-30T22:00Z.
    # 2037-01-01T01:00Z is 2036-12-31T23:00 at -02:00: the bound is 2044.
    assert run([
        ["next_runs", "0 0 */31 12 FRI", "2036-12-31T23:00", 1, "+02:00"],
        ["next_runs", "0 0 */31 12 FRI", "2037-01-01T01:00", 1, "-02:00"],
    ]) == [["2045-11-30T22:00"], NEVER_FIRES]


# == cron fields ============================================================


def test_both_0_and_7_mean_sunday():
    assert run([
        ["next_runs", "0 0 * * 0", MIDNIGHT, 2],
        ["next_runs", "0 0 * * 7", MIDNIGHT, 2],
        ["next_runs", "0 0 * * SUN", MIDNIGHT, 2],
        ["next_runs", "0 0 * * 5-7", MIDNIGHT, 3],
    ]) == [
        ["2024-03-03T00:00", "2024-03-10T00:00"],
        ["2024-03-03T00:00", "2024-03-10T00:00"],
        ["2024-03-03T00:00", "2024-03-10T00:00"],
        ["2024-03-02T00:00", "2024-03-03T00:00", "2024-03-08T00:00"],
    ]


def test_star_in_day_of_week_is_0_to_6_and_0_to_7_is_every_day():
    assert run([
        ["next_runs", "0 0 * * */7", MIDNIGHT, 2],
        ["next_runs", "0 0 * * 0-7", MIDNIGHT, 3],
    ]) == [
        ["2024-03-03T00:00", "2024-03-10T00:00"],
        ["2024-03-02T00:00", "2024-03-03T00:00", "2024-03-04T00:00"],
    ]


def test_a_step_counts_from_the_first_value_of_its_range():
    assert run([
        ["next_runs", "*/15 0 * * *", MIDNIGHT, 3],
        ["next_runs", "0 0 */10 * *", MIDNIGHT, 4],
        ["next_runs", "0 0 1 */2 *", MIDNIGHT, 3],
        ["next_runs", "0 0 1-30/7 * *", MIDNIGHT, 5],
        ["next_runs", "0 0 * * MON-FRI/2", MIDNIGHT, 3],
        ["next_runs", "10-40/15 0 * * *", MIDNIGHT, 3],
    ]) == [
        ["2024-03-01T00:15", "2024-03-01T00:30", "2024-03-01T00:45"],
        ["2024-03-11T00:00", "2024-03-21T00:00", "2024-03-31T00:00", "2024-04-01T00:00"],
        ["2024-05-01T00:00", "2024-07-01T00:00", "2024-09-01T00:00"],
        ["2024-03-08T00:00", "2024-03-15T00:00", "2024-03-22T00:00", "2024-03-29T00:00",
         "2024-04-01T00:00"],
        ["2024-03-04T00:00", "2024-03-06T00:00", "2024-03-08T00:00"],
        ["2024-03-01T00:10", "2024-03-01T00:25", "2024-03-01T00:40"],
    ]


def test_a_step_is_allowed_only_after_star_or_a_range():
    assert run(next_runs_all(["5/15 * * * *", "* * 1/2 * *", "* * * * MON/2"])) == [
        INVALID_EXPRESSION] * 3


def test_a_step_has_no_upper_bound():
    assert run([
        ["next_runs", "*/100 * * * *", MIDNIGHT, 2],
        ["next_runs", "0 */24 * * *", MIDNIGHT, 2],
    ]) == [
        ["2024-03-01T01:00", "2024-03-01T02:00"],
        ["2024-03-02T00:00", "2024-03-03T00:00"],
    ]


def test_steps_and_values_may_have_leading_zeros():
    assert run([
        ["next_runs", "*/015 00 * * *", MIDNIGHT, 2],
        ["next_runs", "00-10/05 000 * * *", MIDNIGHT, 3],
        ["next_runs", "0 0 01 003 *", MIDNIGHT, 1],
    ]) == [
        ["2024-03-01T00:15", "2024-03-01T00:30"],
        ["2024-03-01T00:05", "2024-03-01T00:10", "2024-03-02T00:00"],
        ["2025-03-01T00:00"],
    ]


def test_a_5000_digit_step_is_a_valid_huge_step_and_does_not_crash():
    assert run([
        ["next_runs", "*/" + "1" * 5000 + " * * * *", MIDNIGHT, 2],
        ["next_runs", "0-59/" + "9" * 5000 + " * * * *", MIDNIGHT, 1],
    ]) == [["2024-03-01T01:00", "2024-03-01T02:00"], ["2024-03-01T01:00"]]


def test_a_5000_digit_value_is_out_of_range_but_5000_leading_zeros_are_fine():
    assert run([
        ["next_runs", "1" * 5000 + " * * * *", MIDNIGHT, 1],
        ["next_runs", "0-" + "1" * 5000 + " * * * *", MIDNIGHT, 1],
        ["next_runs", "0" * 5000 + "7 * * * *", MIDNIGHT, 2],
    ]) == [INVALID_EXPRESSION, INVALID_EXPRESSION, ["2024-03-01T00:07", "2024-03-01T01:07"]]


def test_malformed_items_and_out_of_range_values_are_invalid_expression():
    bad = [
        "", "   ", "* * * *", "* * * * * *",
        "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 0 *", "* * * 13 *",
        "* * * * 8",
        "-1 * * * *", "+1 * * * *", "1,,2 * * * *", ",1 * * * *", "1, * * * *",
        "? * * * *", "* * ? * *", "* * L * *", "* * * * 5L", "* * * * 5#2",
        "10-5 * * * *", "*/0 * * * *", "1-5/0 * * * *", "*/ * * * *", "*/-1 * * * *",
        "*/+2 * * * *", "1-5-7 * * * *", "*-5 * * * *", "** * * * *", "*/5/2 * * * *",
        "5- * * * *", "-5 * * * *", "- * * * *", "*/* * * * *",
        "0x1 * * * *", "1_0 * * * *", "1.5 * * * *", "1e1 * * * *",
        "JAN * * * *", "* MON * * *", "* * MON * *", "* * * MON *", "* * * * JAN",
        "* * * JANUARY *", "* * * * SUNDAY", "* * * * MO",
    ]
    assert run(next_runs_all(bad)) == [INVALID_EXPRESSION] * len(bad)


def test_non_ascii_digits_in_an_expression_are_invalid_expression():
    bad = ["\u0663 * * * *", "*/\u0663 * * * *", "\uff11 * * * *", "0 0 1-\uff15 * *",
           "0 0 * * \u0661", "@every \u0663m", "@every \uff13h"]
    assert run(next_runs_all(bad)) == [INVALID_EXPRESSION] * len(bad)


def test_names_and_numbers_may_be_mixed_in_one_range():
    assert run([
        ["next_runs", "0 0 * * 1-FRI", MIDNIGHT, 3],
        ["next_runs", "0 0 * * SAT-7", MIDNIGHT, 3],
        ["next_runs", "0 0 1 3-JUN *", MIDNIGHT, 4],
    ]) == [
        ["2024-03-04T00:00", "2024-03-05T00:00", "2024-03-06T00:00"],
        ["2024-03-02T00:00", "2024-03-03T00:00", "2024-03-09T00:00"],
        ["2024-04-01T00:00", "2024-05-01T00:00", "2024-06-01T00:00", "2025-03-01T00:00"],
    ]


def test_fri_sun_is_a_range_with_lo_above_hi_and_is_invalid():
    assert run(next_runs_all([
        "0 0 * * FRI-SUN", "0 0 * * SAT-SUN", "0 0 * * 7-SAT", "0 0 * DEC-JAN *",
    ])) == [INVALID_EXPRESSION] * 4


def test_month_and_weekday_names_match_in_any_case():
    assert run([
        ["next_runs", "0 0 1 jan,Feb,MAR *", MIDNIGHT, 3],
        ["next_runs", "0 0 * * sun,Mon,tUE", MIDNIGHT, 3],
        ["next_runs", "0 0 * * sat-sun", MIDNIGHT, 1],
    ]) == [
        ["2025-01-01T00:00", "2025-02-01T00:00", "2025-03-01T00:00"],
        ["2024-03-03T00:00", "2024-03-04T00:00", "2024-03-05T00:00"],
        INVALID_EXPRESSION,
    ]


def test_names_match_ascii_letters_only_so_long_s_sun_is_not_sun():
    # "\u017fun".upper() == "SUN" and "fr\u0131".upper() == "FRI" in Python.
    assert run(next_runs_all([
        "0 0 * * \u017fun", "0 0 * * fr\u0131", "0 0 1 \u017fep *", "0 0 * * \uff33\uff35\uff2e",
    ])) == [INVALID_EXPRESSION] * 4


def test_expressions_split_on_whitespace_like_str_split():
    assert run([
        ["next_runs", "  0\t0  *\n* *  ", MIDNIGHT, 1],
        ["next_runs", "0\u00a00 * * *", MIDNIGHT, 1],
    ]) == [["2024-03-02T00:00"], ["2024-03-02T00:00"]]


# == restricted day fields ==================================================


def test_with_both_day_fields_restricted_either_may_match():
    assert run([["next_runs", "0 0 13 * FRI", MIDNIGHT, 3]]) == [
        ["2024-03-08T00:00", "2024-03-13T00:00", "2024-03-15T00:00"]]


def test_a_day_field_beginning_with_star_is_unrestricted_but_applies_its_set():
    # */2 in day-of-month: odd days that are also Fridays (seed Part 1).
    # */1 in day-of-month: every day, so only the day-of-week decides.
    assert run([
        ["next_runs", "0 0 */2 * FRI", MIDNIGHT, 3],
        ["next_runs", "0 0 */1 * MON", MIDNIGHT, 2],
    ]) == [
        ["2024-03-15T00:00", "2024-03-29T00:00", "2024-04-05T00:00"],
        ["2024-03-04T00:00", "2024-03-11T00:00"],
    ]


def test_a_day_field_not_beginning_with_star_is_restricted_even_if_it_covers_every_day():
    # 1-31 is restricted, so "1-31 or Monday" is every day.
    assert run([["next_runs", "0 0 1-31 * MON", MIDNIGHT, 2]]) == [
        ["2024-03-02T00:00", "2024-03-03T00:00"]]


def test_star_comma_5_is_unrestricted_and_5_comma_star_is_restricted():
    assert run([
        ["next_runs", "0 0 *,5 * MON", MIDNIGHT, 3],
        ["next_runs", "0 0 5,* * MON", MIDNIGHT, 3],
    ]) == [
        ["2024-03-04T00:00", "2024-03-11T00:00", "2024-03-18T00:00"],
        ["2024-03-02T00:00", "2024-03-03T00:00", "2024-03-04T00:00"],
    ]


def test_an_unrestricted_day_of_week_step_still_applies_its_set():
    # */2 in day-of-week is SUN, TUE, THU, SAT; the 15th must also be one of them.
    assert run([["next_runs", "0 0 15 * */2", MIDNIGHT, 3]]) == [
        ["2024-06-15T00:00", "2024-08-15T00:00", "2024-09-15T00:00"]]


# == @every =================================================================


def test_every_fires_every_n_minutes_from_the_anchor_never_at_the_anchor():
    assert run([
        ["next_runs", "@every 1m", MIDNIGHT, 2],
        ["next_runs", "@every 2h", "2024-03-01T23:30", 2],
        ["next_runs", "  @every  45m  ", "2024-03-01T00:07", 2],
    ]) == [
        ["2024-03-01T00:01", "2024-03-01T00:02"],
        ["2024-03-02T01:30", "2024-03-02T03:30"],
        ["2024-03-01T00:52", "2024-03-01T01:37"],
    ]


def test_every_accepts_up_to_525600_minutes_and_8760_hours():
    assert run([
        ["next_runs", "@every 525600m", MIDNIGHT, 2],
        ["next_runs", "@every 8760h", MIDNIGHT, 1],
    ]) == [["2025-03-01T00:00", "2026-03-01T00:00"], ["2025-03-01T00:00"]]


def test_malformed_every_forms_are_invalid_expression():
    bad = [
        "@every 525601m", "@every 8761h", "@every 05m", "@every 0m", "@every 0h",
        "@every +5m", "@every -5m", "@EVERY 5m", "@Every 5m", "@every 5M", "@every 5H",
        "@every 5", "@every m", "@every 5s", "@every 5d", "@every 1h30m", "@every 5 m",
        "@every5m", "@every 5m 5m", "@ every 5m", "@every", "@daily", "@hourly", "@",
        "@every 1.5h", "@every 1_0m",
    ]
    assert run(next_runs_all(bad)) == [INVALID_EXPRESSION] * len(bad)


def test_an_every_expression_never_gives_never_fires():
    assert run([["next_runs", "@every 8760h", "2199-12-31T23:59", 3]]) == [
        ["2200-12-31T23:59", "2201-12-31T23:59", "2202-12-31T23:59"]]


def test_a_timezone_with_an_every_expression_is_invalid_timezone_for_next_runs():
    assert run([
        ["next_runs", "@every 5m", MIDNIGHT, 1, "+00:00"],
        ["next_runs", "@every 5m", MIDNIGHT, 1, "-00:00"],
        ["next_runs", "@every 1h", MIDNIGHT, 1, "+05:30"],
    ]) == [INVALID_TIMEZONE] * 3


# == time zones =============================================================


def test_an_offset_with_signs_or_spaces_inside_is_invalid_timezone():
    bad = ["+ 5:30", "+05: 0", "+05:+0", "++5:00", "+-5:00", "-+5:00", "+05:-0"]
    assert run([["next_runs", "* * * * *", MIDNIGHT, 1, b] for b in bad]) == [
        INVALID_TIMEZONE] * len(bad)


def test_valid_offsets_shift_matching_to_local_time():
    assert run([
        ["next_runs", "0 0 * * MON", MIDNIGHT, 1, "+14:00"],
        ["next_runs", "0 0 * * MON", MIDNIGHT, 1, "-14:00"],
        ["next_runs", "0 0 1 * *", MIDNIGHT, 1, "-00:00"],
        ["next_runs", "0 0 1 * *", MIDNIGHT, 1, "+00:00"],
        ["next_runs", "0 12 * * *", MIDNIGHT, 1, "+05:45"],
        ["next_runs", "0 12 * * *", MIDNIGHT, 1, "-03:15"],
    ]) == [
        ["2024-03-03T10:00"],
        ["2024-03-04T14:00"],
        ["2024-04-01T00:00"],
        ["2024-04-01T00:00"],
        ["2024-03-01T06:15"],
        ["2024-03-01T15:15"],
    ]


def test_malformed_offsets_are_invalid_timezone():
    bad = ["+14:15", "-14:30", "+15:00", "+5:30", "+05:3", "+0530", "05:30", "UTC", "Z",
           "+05:10", "+05:60", "+05:30 ", " +05:30", "", "+24:00", "\u2212" + "05:00",
           "+0\u0663:00", "+\uff10\uff15:00", "\uff0b05:00", "+05:30\n"]
    assert run([["next_runs", "* * * * *", MIDNIGHT, 1, b] for b in bad]) == [
        INVALID_TIMEZONE] * len(bad)


# == the clock ==============================================================


def test_an_earlier_time_than_the_clock_is_clock_went_backwards_and_does_nothing():
    assert run([
        ["create_job", t("00:00"), "a", "*/10 * * * *", "allow"],
        ["tick", t("00:30")],
        ["tick", t("00:25")],
        ["create_job", t("00:29"), "b", "* * * * *", "allow"],
        ["finish", t("00:29"), "a-1", "succeeded"],
        ["bulk_create", t("00:29"), "p", 2, ["* * * * *"], "allow"],
        ["job_status", "a"],
        ["job_status", "b"],
        ["job_status", "p-0"],
        ["run", "a-1"],
    ]) == [
        True,
        ["launch a-1 for 2024-03-01T00:30"],
        BACKWARDS, BACKWARDS, BACKWARDS, BACKWARDS,
        status(t("00:30"), t("00:40"), ["a-1"], 1),
        JOB_NOT_FOUND,
        JOB_NOT_FOUND,
        run_record("a-1", "a", "running", t("00:30"), t("00:30"), None),
    ]


def test_an_equal_time_is_not_clock_went_backwards():
    assert run([
        ["tick", t("10:00")],
        ["tick", t("10:00")],
        ["create_job", t("10:00"), "a", "* * * * *", "allow"],
        ["tick", t("10:00")],
    ]) == [[], [], True, []]


def test_invalid_time_is_checked_before_clock_went_backwards():
    assert run([["tick", t("10:00")], ["tick", "2024-03-01T09:60"]]) == [[], INVALID_TIME]


def test_an_invalid_time_does_not_move_the_clock():
    assert run([
        ["tick", "2024-03-01T25:00"],
        ["create_job", "2199-13-01T00:00", "a", "* * * * *", "allow"],
        ["tick", t("10:00")],
    ]) == [INVALID_TIME, INVALID_TIME, []]


def test_the_clock_moves_even_when_the_operation_then_fails():
    assert run([
        ["create_job", t("01:00"), "Bad", "* * * * *", "allow"],
        ["tick", t("00:59")],
        ["create_job", t("02:00"), "a", "0 0 30 2 *", "allow"],
        ["tick", t("01:59")],
        ["finish", t("03:00"), "a-1", "done"],
        ["tick", t("02:59")],
        ["finish", t("04:00"), "nope-1", "succeeded"],
        ["tick", t("03:59")],
        ["bulk_create", t("05:00"), "p", 0, ["* * * * *"], "allow"],
        ["tick", t("04:59")],
        ["job_status", "a"],
    ]) == [
        INVALID_NAME, BACKWARDS,
        NEVER_FIRES, BACKWARDS,
        INVALID_OUTCOME, BACKWARDS,
        RUN_NOT_FOUND, BACKWARDS,
        INVALID_COUNT, BACKWARDS,
        JOB_NOT_FOUND,
    ]


def test_reads_never_move_the_clock():
    assert run([
        ["next_runs", "* * * * *", "2199-01-01T00:00", 1],
        ["job_status", "a"],
        ["run", "a-1"],
        ["history", "a"],
        ["tick", "2000-01-01T00:00"],
    ]) == [["2199-01-01T00:01"], JOB_NOT_FOUND, RUN_NOT_FOUND, JOB_NOT_FOUND, []]


# == create_job =============================================================


def test_create_job_returns_true_and_a_fresh_job_status():
    assert run([
        ["create_job", MIDNIGHT, "nightly-report", "30 2 * * *", "allow"],
        ["job_status", "nightly-report"],
        ["history", "nightly-report"],
    ]) == [True, status(None, t("02:30"), [], 0), []]


def test_create_job_checks_in_order_time_clock_name_expression_policy_options_exists_never_fires():
    assert run([
        ["create_job", t("10:00"), "ok", "* * * * *", "allow"],
        ["create_job", "bad", "Bad", "bad", "bad", "bad"],
        ["create_job", t("09:00"), "Bad", "bad", "bad", "bad"],
        ["create_job", t("10:00"), "Bad", "bad", "bad", "bad"],
        ["create_job", t("10:00"), "ok", "bad", "bad", "bad"],
        ["create_job", t("10:00"), "ok", "* * * * *", "bad", "bad"],
        ["create_job", t("10:00"), "ok", "* * * * *", "allow", "bad"],
        ["create_job", t("10:00"), "ok", "@every 5m", "allow", {"tz": "+01:00"}],
        ["create_job", t("10:00"), "ok", "0 0 30 2 *", "allow"],
        ["create_job", t("10:00"), "other", "0 0 30 2 *", "allow"],
        ["job_status", "other"],
    ]) == [
        True, INVALID_TIME, BACKWARDS, INVALID_NAME, INVALID_EXPRESSION, INVALID_POLICY,
        INVALID_OPTIONS, INVALID_OPTIONS, JOB_EXISTS, NEVER_FIRES, JOB_NOT_FOUND,
    ]


def test_a_valid_name_is_1_to_40_lowercase_letters_and_digits_in_hyphen_groups():
    names = ["a", "0", "nightly-report", "a1-b2-c3", "9lives", "a" * 40, "x-" * 19 + "yz"]
    assert run([["create_job", MIDNIGHT, n, "* * * * *", "allow"] for n in names]) == [
        True] * len(names)


def test_an_invalid_name_is_rejected():
    names = ["", "a" * 41, "Nightly", "-a", "a-", "a--b", "a_b", "a.b", "a b", "a\n", " a",
             "\u00e9t\u00e9", "\uff41", "\u0663", "job/1", None, 5, True, ["a"], {"a": 1}]
    assert run([["create_job", MIDNIGHT, n, "* * * * *", "allow"] for n in names]) == [
        INVALID_NAME] * len(names)


def test_a_policy_other_than_allow_forbid_or_replace_is_invalid_policy():
    policies = ["Allow", "FORBID", "replace ", "", "skip", None, 1, True, ["allow"]]
    assert run([["create_job", MIDNIGHT, "a", "* * * * *", p] for p in policies]) == [
        INVALID_POLICY] * len(policies)


def test_valid_options_are_accepted():
    options = [
        None, {}, {"starting_deadline": None}, {"starting_deadline": 1},
        {"starting_deadline": 10 ** 30}, {"timeout": None}, {"timeout": 1},
        {"timeout": 10 ** 30}, {"keep_succeeded": 0}, {"keep_failed": 0},
        {"keep_succeeded": 10 ** 30, "keep_failed": 7}, {"tz": "+05:30"}, {"tz": "-00:00"},
        {"tz": "+00:00"},
        {"starting_deadline": 5, "timeout": 5, "keep_succeeded": 2, "keep_failed": 2,
         "tz": "-14:00"},
    ]
    assert run([["create_job", MIDNIGHT, "j%d" % i, "* * * * *", "allow", o]
                for i, o in enumerate(options)]) == [True] * len(options)


def test_invalid_options_are_rejected():
    options = [
        "bad", [], ["timeout", 5], 5, True,
        {"bogus": 1}, {"Timeout": 5},
        {"starting_deadline": 0}, {"starting_deadline": -1}, {"starting_deadline": True},
        {"starting_deadline": 5.0}, {"starting_deadline": "5"},
        {"timeout": 0}, {"timeout": -5}, {"timeout": False}, {"timeout": 1.5},
        {"keep_succeeded": -1}, {"keep_succeeded": None}, {"keep_succeeded": True},
        {"keep_succeeded": 1.0}, {"keep_failed": -1}, {"keep_failed": None},
        {"keep_failed": False},
        {"tz": None}, {"tz": "UTC"}, {"tz": "+14:15"}, {"tz": "+5:30"}, {"tz": 5},
        {"tz": "+0\u0663:00"},
    ]
    assert run([["create_job", MIDNIGHT, "j%d" % i, "* * * * *", "allow", o]
                for i, o in enumerate(options)]) == [INVALID_OPTIONS] * len(options)


def test_option_integers_have_no_upper_bound_and_huge_values_just_work():
    assert run([
        ["create_job", MIDNIGHT, "a", "*/10 * * * *", "forbid",
         {"timeout": 10 ** 30, "starting_deadline": 10 ** 30, "keep_succeeded": 10 ** 30}],
        ["tick", t("00:35")],
        ["tick", "2199-12-31T23:59"],
        ["finish", "2199-12-31T23:59", "a-1", "succeeded"],
        ["tick", "2199-12-31T23:59"],
        ["history", "a"],
    ]) == [
        True,
        ["launch a-1 for 2024-03-01T00:30"],
        ["overflow a"],
        True,
        ["overflow a"],
        [["a-1", "succeeded", "2199-12-31T23:59"]],
    ]


def test_a_tz_with_an_every_expression_is_invalid_options_even_plus_or_minus_zero():
    assert run([
        ["create_job", MIDNIGHT, "a", "@every 5m", "allow", {"tz": "+00:00"}],
        ["create_job", MIDNIGHT, "b", "@every 5m", "allow", {"tz": "-00:00"}],
        ["create_job", MIDNIGHT, "c", "@every 5m", "allow", {"tz": "+01:00"}],
        ["create_job", MIDNIGHT, "d", "@every 5m", "allow", {"timeout": 3}],
        ["job_status", "a"],
    ]) == [INVALID_OPTIONS, INVALID_OPTIONS, INVALID_OPTIONS, True, JOB_NOT_FOUND]


def test_a_job_that_never_fires_from_its_creation_time_is_rejected():
    assert run([
        ["create_job", MIDNIGHT, "feb30", "0 0 30 2 *", "allow"],
        ["create_job", "2035-01-01T00:00", "fri", "0 0 */31 12 FRI", "allow"],
        ["job_status", "feb30"],
        ["job_status", "fri"],
    ]) == [NEVER_FIRES, NEVER_FIRES, JOB_NOT_FOUND, JOB_NOT_FOUND]


def test_a_job_name_can_only_be_used_once():
    assert run([
        ["create_job", MIDNIGHT, "a", "* * * * *", "allow"],
        ["create_job", t("00:01"), "a", "0 * * * *", "forbid"],
        ["job_status", "a"],
    ]) == [True, JOB_EXISTS, status(None, t("00:02"), [], 0)]


def test_schedule_times_are_strictly_after_the_creation_time():
    assert run([
        ["create_job", t("09:30"), "a", "30 9 * * *", "allow"],
        ["tick", t("09:30")],
        ["job_status", "a"],
        ["tick", "2024-03-02T09:30"],
    ]) == [True, [], status(None, "2024-03-02T09:30", [], 0),
           ["launch a-1 for 2024-03-02T09:30"]]


def test_a_job_with_a_tz_matches_local_time_and_reports_utc():
    assert run([
        ["create_job", MIDNIGHT, "berlin", "0 9 * * *", "allow", {"tz": "+01:00"}],
        ["create_job", MIDNIGHT, "kiritimati", "0 0 * * MON", "allow", {"tz": "+14:00"}],
        ["job_status", "berlin"],
        ["job_status", "kiritimati"],
        ["tick", t("08:00")],
    ]) == [True, True, status(None, t("08:00"), [], 0),
           status(None, "2024-03-03T10:00", [], 0),
           ["launch berlin-1 for 2024-03-01T08:00"]]


# == tick ===================================================================


def test_a_tick_with_no_jobs_returns_no_events():
    assert run([["tick", MIDNIGHT], ["tick", MIDNIGHT, "counts"]]) == [[], counts()]


def test_tick_decides_for_each_job_in_creation_order():
    assert run([
        ["create_job", MIDNIGHT, "zeta", "* * * * *", "allow"],
        ["create_job", MIDNIGHT, "alpha", "* * * * *", "allow"],
        ["tick", t("00:01")],
    ]) == [True, True, ["launch zeta-1 for 2024-03-01T00:01",
                        "launch alpha-1 for 2024-03-01T00:01"]]


def test_only_the_most_recent_missed_schedule_is_launched():
    assert run([
        ["create_job", MIDNIGHT, "a", "*/10 * * * *", "allow"],
        ["tick", t("00:59")],
        ["job_status", "a"],
        ["tick", t("00:59")],
    ]) == [True, ["launch a-1 for 2024-03-01T00:50"], status(t("00:50"), t("01:00"), ["a-1"], 1),
           []]


def test_allow_launches_alongside_running_runs_and_active_is_oldest_first():
    assert run([
        ["create_job", MIDNIGHT, "a", "*/10 * * * *", "allow"],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["tick", t("00:30")],
        ["finish", t("00:31"), "a-2", "failed"],
        ["job_status", "a"],
        ["run", "a-2"],
        ["run", "a-3"],
    ]) == [
        True,
        ["launch a-1 for 2024-03-01T00:10"],
        ["launch a-2 for 2024-03-01T00:20"],
        ["launch a-3 for 2024-03-01T00:30"],
        True,
        status(t("00:30"), t("00:40"), ["a-1", "a-3"], 3),
        run_record("a-2", "a", "failed", t("00:20"), t("00:20"), t("00:31")),
        run_record("a-3", "a", "running", t("00:30"), t("00:30"), None),
    ]


def test_a_forbid_skip_keeps_last_schedule_so_the_time_is_still_missed():
    assert run([
        ["create_job", MIDNIGHT, "f", "*/10 * * * *", "forbid"],
        ["tick", t("00:10")],
        ["tick", t("00:35")],
        ["job_status", "f"],
        ["tick", t("00:35")],
        ["finish", t("00:36"), "f-1", "succeeded"],
        ["tick", t("00:36")],
        ["job_status", "f"],
    ]) == [
        True,
        ["launch f-1 for 2024-03-01T00:10"],
        ["skip f for 2024-03-01T00:30 (forbid)"],
        status(t("00:10"), t("00:40"), ["f-1"], 1),
        ["skip f for 2024-03-01T00:30 (forbid)"],
        True,
        ["launch f-2 for 2024-03-01T00:30"],
        status(t("00:30"), t("00:40"), ["f-2"], 2),
    ]


def test_replace_deletes_the_running_run_before_launching_and_it_is_gone():
    assert run([
        ["create_job", MIDNIGHT, "r", "*/10 * * * *", "replace"],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["run", "r-1"],
        ["finish", t("00:21"), "r-1", "succeeded"],
        ["finish", t("00:22"), "r-2", "succeeded"],
        ["tick", t("00:30")],
        ["history", "r"],
        ["job_status", "r"],
    ]) == [
        True,
        ["launch r-1 for 2024-03-01T00:10"],
        ["replace r-1", "launch r-2 for 2024-03-01T00:20"],
        RUN_NOT_FOUND,
        RUN_NOT_FOUND,
        True,
        ["launch r-3 for 2024-03-01T00:30"],
        [["r-2", "succeeded", t("00:22")]],
        status(t("00:30"), t("00:40"), ["r-3"], 3),
    ]


def test_replace_only_deletes_running_runs_not_timed_out_ones():
    assert run([
        ["create_job", MIDNIGHT, "r", "*/10 * * * *", "replace", {"timeout": 5}],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["history", "r"],
        ["tick", t("00:24")],
        ["tick", t("00:30")],
        ["run", "r-2"],
    ]) == [
        True,
        ["launch r-1 for 2024-03-01T00:10"],
        ["launch r-2 for 2024-03-01T00:20"],
        [["r-1", "timed_out", t("00:15")]],
        [],
        ["launch r-3 for 2024-03-01T00:30"],
        run_record("r-2", "r", "timed_out", t("00:20"), t("00:20"), t("00:25")),
    ]


def test_events_of_several_jobs_follow_creation_order_replace_before_its_launch():
    assert run([
        ["create_job", MIDNIGHT, "r", "*/10 * * * *", "replace"],
        ["create_job", MIDNIGHT, "f", "*/10 * * * *", "forbid"],
        ["create_job", MIDNIGHT, "a", "*/10 * * * *", "allow"],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
    ]) == [
        True, True, True,
        ["launch r-1 for 2024-03-01T00:10", "launch f-1 for 2024-03-01T00:10",
         "launch a-1 for 2024-03-01T00:10"],
        ["replace r-1", "launch r-2 for 2024-03-01T00:20",
         "skip f for 2024-03-01T00:20 (forbid)", "launch a-2 for 2024-03-01T00:20"],
    ]


def test_exactly_100_missed_schedules_launch():
    assert run([
        ["create_job", MIDNIGHT, "e", "* * * * *", "allow"],
        ["create_job", MIDNIGHT, "h", "0 * * * *", "allow"],
        ["tick", t("01:40")],
        ["tick", "2024-03-05T05:00"],
    ]) == [True, True, ["launch e-1 for 2024-03-01T01:40", "launch h-1 for 2024-03-01T01:00"],
           ["overflow e", "launch h-2 for 2024-03-05T05:00"]]


def test_101_missed_schedules_overflow_and_change_nothing_else():
    assert run([
        ["create_job", MIDNIGHT, "e", "* * * * *", "forbid"],
        ["create_job", MIDNIGHT, "h", "0 * * * *", "allow"],
        ["tick", t("01:41")],
        ["job_status", "e"],
        ["tick", t("01:42")],
        ["tick", "2024-03-05T06:00"],
        ["job_status", "h"],
    ]) == [
        True, True,
        ["overflow e", "launch h-1 for 2024-03-01T01:00"],
        status(None, t("01:42"), [], 0),
        ["overflow e"],
        ["overflow e", "overflow h"],
        status(t("01:00"), "2024-03-05T07:00", ["h-1"], 1),
    ]


def test_an_every_job_overflows_at_101_missed_intervals():
    assert run([
        ["create_job", MIDNIGHT, "a", "@every 7m", "allow"],
        ["tick", t("11:40")],
    ]) == [True, ["launch a-1 for 2024-03-01T11:40"]]
    assert run([
        ["create_job", MIDNIGHT, "a", "@every 7m", "allow"],
        ["tick", t("11:47")],
    ]) == [True, ["overflow a"]]


def test_the_starting_deadline_window_is_inclusive_at_both_ends():
    assert run([
        ["create_job", MIDNIGHT, "d", "*/10 * * * *", "allow", {"starting_deadline": 5}],
        ["tick", t("00:15")],
        ["tick", t("00:30")],
        ["tick", t("00:45")],
    ]) == [
        True,
        ["launch d-1 for 2024-03-01T00:10"],
        ["launch d-2 for 2024-03-01T00:30"],
        ["launch d-3 for 2024-03-01T00:40"],
    ]


def test_a_schedule_older_than_the_starting_deadline_is_not_missed():
    assert run([
        ["create_job", MIDNIGHT, "d", "*/10 * * * *", "allow", {"starting_deadline": 5}],
        ["tick", t("00:16")],
        ["job_status", "d"],
        ["tick", t("00:26")],
        ["tick", t("00:30")],
    ]) == [True, [], status(None, t("00:20"), [], 0), [], ["launch d-1 for 2024-03-01T00:30"]]


def test_the_starting_deadline_limits_what_counts_towards_overflow():
    # [now - deadline, now] holds deadline + 1 minutes: 99 gives 100, 100 gives 101.
    assert run([
        ["create_job", MIDNIGHT, "d", "* * * * *", "allow", {"starting_deadline": 99}],
        ["create_job", MIDNIGHT, "e", "* * * * *", "allow", {"starting_deadline": 100}],
        ["tick", t("05:00")],
    ]) == [True, True, ["launch d-1 for 2024-03-01T05:00", "overflow e"]]


def test_a_yearly_job_catches_up_once_after_a_decade():
    assert run([
        ["create_job", MIDNIGHT, "y", "0 0 1 1 *", "allow"],
        ["create_job", MIDNIGHT, "leap", "0 0 29 2 *", "allow"],
        ["tick", "2034-06-01T00:00"],
        ["job_status", "y"],
        ["job_status", "leap"],
    ]) == [
        True, True,
        ["launch y-1 for 2034-01-01T00:00", "launch leap-1 for 2032-02-29T00:00"],
        status("2034-01-01T00:00", "2035-01-01T00:00", ["y-1"], 1),
        status("2032-02-29T00:00", "2036-02-29T00:00", ["leap-1"], 1),
    ]


def test_a_leap_day_job_created_in_2096_next_fires_in_2104():
    assert run([
        ["create_job", "2096-03-01T00:00", "leap", "0 0 29 2 *", "allow"],
        ["job_status", "leap"],
        ["tick", "2199-12-31T23:59"],
        ["job_status", "leap"],
    ]) == [
        True,
        status(None, "2104-02-29T00:00", [], 0),
        ["launch leap-1 for 2196-02-29T00:00"],
        status("2196-02-29T00:00", "2204-02-29T00:00", ["leap-1"], 1),
    ]


def test_a_ten_year_outage_of_an_every_minute_job_overflows_quickly():
    assert run([
        ["create_job", "2024-01-01T00:00", "m", "* * * * *", "allow"],
        ["create_job", "2024-01-01T00:00", "d", "* * * * *", "allow", {"starting_deadline": 10}],
        ["tick", "2034-01-01T00:00", "counts"],
        ["job_status", "d"],
    ]) == [
        True, True,
        counts(launched=1, overflowed=1, digest=33661440 * 2),
        status("2034-01-01T00:00", "2034-01-01T00:01", ["d-1"], 1),
    ]


def test_an_every_job_is_anchored_at_its_creation_time_not_at_a_launch():
    assert run([
        ["create_job", MIDNIGHT, "e", "@every 45m", "allow"],
        ["create_job", t("00:07"), "f", "@every 45m", "allow"],
        ["tick", t("01:00")],
        ["tick", t("02:00")],
        ["job_status", "e"],
        ["job_status", "f"],
    ]) == [
        True, True,
        ["launch e-1 for 2024-03-01T00:45", "launch f-1 for 2024-03-01T00:52"],
        ["launch e-2 for 2024-03-01T01:30", "launch f-2 for 2024-03-01T01:37"],
        status(t("01:30"), t("02:15"), ["e-1", "e-2"], 2),
        status(t("01:37"), t("02:22"), ["f-1", "f-2"], 2),
    ]


def test_next_fire_is_the_next_schedule_time_strictly_after_the_clock():
    assert run([
        ["create_job", MIDNIGHT, "a", "*/10 * * * *", "allow"],
        ["create_job", t("00:10"), "b", "* * * * *", "allow"],
        ["job_status", "a"],
    ]) == [True, True, status(None, t("00:20"), [], 0)]


def test_next_fire_becomes_null_when_the_schedule_chain_has_ended():
    # 1 December on a Friday: 2034, then not until 2045 (more than 8 years).
    assert run([
        ["create_job", "2029-01-01T00:00", "x", "0 0 */31 12 FRI", "allow"],
        ["job_status", "x"],
        ["tick", "2040-01-01T00:00"],
        ["job_status", "x"],
        ["tick", "2046-01-01T00:00"],
        ["job_status", "x"],
    ]) == [
        True,
        status(None, "2034-12-01T00:00", [], 0),
        ["launch x-1 for 2034-12-01T00:00"],
        status("2034-12-01T00:00", None, ["x-1"], 1),
        [],
        status("2034-12-01T00:00", None, ["x-1"], 1),
    ]


def test_next_fire_is_null_past_the_end_of_the_chain_even_without_a_launch():
    assert run([
        ["create_job", "2029-01-01T00:00", "x", "0 0 */31 12 FRI", "allow",
         {"starting_deadline": 1}],
        ["tick", "2040-01-01T00:00"],
        ["job_status", "x"],
        ["tick", "2045-12-01T00:00"],
    ]) == [True, [], status(None, None, [], 0), []]


# == tick "counts" and the digest ===========================================


def test_tick_counts_performs_the_same_tick_and_counts_each_kind_of_event():
    ops = [
        ["create_job", "2024-01-01T00:00", "f", "*/10 * * * *", "forbid"],
        ["create_job", "2024-01-01T00:00", "r", "*/10 * * * *", "replace"],
        ["create_job", "2024-01-01T00:00", "o", "* * * * *", "allow"],
        ["tick", "2024-01-01T00:10"],
    ]
    assert run(ops + [["tick", "2024-01-01T01:51"], ["job_status", "r"]]) == [
        True, True, True,
        ["launch f-1 for 2024-01-01T00:10", "launch r-1 for 2024-01-01T00:10",
         "launch o-1 for 2024-01-01T00:10"],
        ["skip f for 2024-01-01T01:50 (forbid)", "replace r-1", "launch r-2 for 2024-01-01T01:50",
         "overflow o"],
        status("2024-01-01T01:50", "2024-01-01T02:00", ["r-2"], 2),
    ]
    # digest: minutes_since_1970(01:50) = 28401230, times (index 1 + 1).
    assert run(ops + [["tick", "2024-01-01T01:51", "counts"], ["job_status", "r"]]) == [
        True, True, True,
        ["launch f-1 for 2024-01-01T00:10", "launch r-1 for 2024-01-01T00:10",
         "launch o-1 for 2024-01-01T00:10"],
        counts(launched=1, skipped=1, replaced=1, overflowed=1, digest=56802460),
        status("2024-01-01T01:50", "2024-01-01T02:00", ["r-2"], 2),
    ]


def test_the_digest_creation_index_counts_successful_creations_across_create_job_and_bulk_create():
    # a=0, b-0=1, b-1=2, d=3; failed creations take no index.
    # 28401180 * (1 + 2 + 3) + 28401150 * 4 = 284011680
    assert run([
        ["create_job", "2024-01-01T00:00", "a", "0 * * * *", "allow"],
        ["create_job", "2024-01-01T00:00", "a", "0 * * * *", "allow"],
        ["bulk_create", "2024-01-01T00:00", "b", 2, ["0 * * * *"], "allow"],
        ["bulk_create", "2024-01-01T00:00", "c", 2, ["0 0 30 2 *"], "allow"],
        ["create_job", "2024-01-01T00:00", "Bad", "0 * * * *", "allow"],
        ["create_job", "2024-01-01T00:00", "d", "30 * * * *", "allow"],
        ["tick", "2024-01-01T01:00", "counts"],
    ]) == [True, JOB_EXISTS, 2, NEVER_FIRES, INVALID_NAME, True,
           counts(launched=4, digest=284011680)]


def test_the_digest_is_taken_modulo_1000000007():
    # 28401180 * (1 + 2 + ... + 40) = 23288967600 -> 288967439
    assert run([
        ["bulk_create", "2024-01-01T00:00", "n", 40, ["0 * * * *"], "allow"],
        ["tick", "2024-01-01T01:00", "counts"],
    ]) == [40, counts(launched=40, digest=288967439)]


# == finish =================================================================


def test_finish_checks_in_order_time_clock_outcome_run_found_run_active():
    assert run([
        ["create_job", t("00:00"), "a", "0 * * * *", "allow"],
        ["tick", t("10:00")],
        ["finish", "bad", "nope", "bad"],
        ["finish", t("09:59"), "nope", "bad"],
        ["finish", t("10:00"), "nope", "bad"],
        ["finish", t("10:00"), "nope", "succeeded"],
        ["finish", t("10:00"), "a-1", "succeeded"],
        ["finish", t("10:00"), "a-1", "succeeded"],
        ["finish", t("10:00"), "a-1", "bad"],
    ]) == [
        True, ["launch a-1 for 2024-03-01T10:00"],
        INVALID_TIME, BACKWARDS, INVALID_OUTCOME, RUN_NOT_FOUND, True,
        RUN_NOT_ACTIVE, INVALID_OUTCOME,
    ]


def test_finishing_a_run_that_is_not_running_is_run_not_active():
    assert run([
        ["create_job", t("00:00"), "a", "0 * * * *", "allow"],
        ["tick", t("01:00")],
        ["finish", t("01:10"), "a-1", "succeeded"],
        ["finish", t("01:11"), "a-1", "succeeded"],
        ["finish", t("01:12"), "a-1", "failed"],
        ["run", "a-1"],
    ]) == [True, ["launch a-1 for 2024-03-01T01:00"], True, RUN_NOT_ACTIVE, RUN_NOT_ACTIVE,
           run_record("a-1", "a", "succeeded", t("01:00"), t("01:00"), t("01:10"))]


def test_an_outcome_other_than_succeeded_or_failed_is_invalid_outcome():
    outcomes = ["Succeeded", "FAILED", "timed_out", "running", "", None, True, 1, ["failed"]]
    assert run([
        ["create_job", t("00:00"), "a", "0 * * * *", "allow"],
        ["tick", t("01:00")],
    ] + [["finish", t("01:10"), "a-1", o] for o in outcomes] + [["run", "a-1"]]) == [
        True, ["launch a-1 for 2024-03-01T01:00"]] + [INVALID_OUTCOME] * len(outcomes) + [
        run_record("a-1", "a", "running", t("01:00"), t("01:00"), None)]


def test_a_run_id_that_names_no_run_is_run_not_found():
    assert run([
        ["create_job", t("00:00"), "a", "0 * * * *", "allow"],
        ["tick", t("01:00")],
        ["finish", t("01:10"), "a-2", "succeeded"],
        ["finish", t("01:10"), "A-1", "succeeded"],
        ["finish", t("01:10"), None, "succeeded"],
        ["finish", t("01:10"), 1, "succeeded"],
        ["finish", t("01:10"), ["a-1"], "succeeded"],
    ]) == [True, ["launch a-1 for 2024-03-01T01:00"]] + [RUN_NOT_FOUND] * 5


# == timeouts ===============================================================


def test_a_tick_exactly_at_a_timeout_sees_no_running_run():
    assert run([
        ["create_job", MIDNIGHT, "w", "*/10 * * * *", "forbid", {"timeout": 15}],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["tick", t("00:25")],
        ["run", "w-1"],
    ]) == [
        True,
        ["launch w-1 for 2024-03-01T00:10"],
        ["skip w for 2024-03-01T00:20 (forbid)"],
        ["launch w-2 for 2024-03-01T00:20"],
        run_record("w-1", "w", "timed_out", t("00:10"), t("00:10"), t("00:25")),
    ]


def test_a_finish_exactly_at_the_expiry_is_run_not_active_and_a_minute_before_succeeds():
    assert run([
        ["create_job", MIDNIGHT, "a", "*/10 * * * *", "allow", {"timeout": 15}],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["finish", t("00:25"), "a-1", "succeeded"],
        ["finish", t("00:34"), "a-2", "succeeded"],
        ["history", "a"],
    ]) == [
        True,
        ["launch a-1 for 2024-03-01T00:10"],
        ["launch a-2 for 2024-03-01T00:20"],
        RUN_NOT_ACTIVE,
        True,
        [["a-1", "timed_out", t("00:25")], ["a-2", "succeeded", t("00:34")]],
    ]


def test_a_timed_out_run_finishes_at_its_expiry_not_when_it_is_noticed():
    assert run([
        ["create_job", MIDNIGHT, "a", "*/10 * * * *", "allow",
         {"timeout": 25, "keep_failed": 5}],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["tick", t("00:30")],
        ["tick", t("01:00")],
        ["history", "a"],
        ["job_status", "a"],
    ]) == [
        True,
        ["launch a-1 for 2024-03-01T00:10"],
        ["launch a-2 for 2024-03-01T00:20"],
        ["launch a-3 for 2024-03-01T00:30"],
        ["launch a-4 for 2024-03-01T01:00"],
        [["a-1", "timed_out", t("00:35")], ["a-2", "timed_out", t("00:45")],
         ["a-3", "timed_out", t("00:55")]],
        status(t("01:00"), t("01:10"), ["a-4"], 4),
    ]


def test_timeouts_apply_in_an_operation_that_then_fails():
    assert run([
        ["create_job", MIDNIGHT, "j", "0 * * * *", "allow", {"timeout": 10}],
        ["tick", t("01:00")],
        ["create_job", t("01:10"), "Bad", "* * * * *", "allow"],
        ["run", "j-1"],
    ]) == [
        True,
        ["launch j-1 for 2024-03-01T01:00"],
        INVALID_NAME,
        run_record("j-1", "j", "timed_out", t("01:00"), t("01:00"), t("01:10")),
    ]


def test_timeouts_apply_in_a_failing_finish_and_bulk_create():
    assert run([
        ["create_job", MIDNIGHT, "j", "*/10 * * * *", "allow", {"timeout": 10}],
        ["tick", t("00:10")],
        ["tick", t("00:15")],
        ["finish", t("00:20"), "j-1", "bogus"],
        ["run", "j-1"],
        ["tick", t("00:20")],
        ["bulk_create", t("00:30"), "p", 0, ["* * * * *"], "allow"],
        ["run", "j-2"],
    ]) == [
        True,
        ["launch j-1 for 2024-03-01T00:10"],
        [],
        INVALID_OUTCOME,
        run_record("j-1", "j", "timed_out", t("00:10"), t("00:10"), t("00:20")),
        ["launch j-2 for 2024-03-01T00:20"],
        INVALID_COUNT,
        run_record("j-2", "j", "timed_out", t("00:20"), t("00:20"), t("00:30")),
    ]


def test_an_invalid_time_applies_no_timeouts():
    assert run([
        ["create_job", MIDNIGHT, "j", "0 * * * *", "allow", {"timeout": 10}],
        ["tick", t("01:00")],
        ["tick", "2024-03-01T25:00"],
        ["finish", "2024-03-01T01:7", "j-1", "succeeded"],
        ["run", "j-1"],
        ["finish", t("01:05"), "j-1", "succeeded"],
    ]) == [
        True,
        ["launch j-1 for 2024-03-01T01:00"],
        INVALID_TIME,
        INVALID_TIME,
        run_record("j-1", "j", "running", t("01:00"), t("01:00"), None),
        True,
    ]


def test_runs_without_a_timeout_never_time_out():
    assert run([
        ["create_job", MIDNIGHT, "j", "0 0 1 1 *", "allow", {"timeout": None}],
        ["tick", "2025-01-01T00:00"],
        ["tick", "2025-12-31T23:59"],
        ["run", "j-1"],
    ]) == [
        True,
        ["launch j-1 for 2025-01-01T00:00"],
        [],
        run_record("j-1", "j", "running", "2025-01-01T00:00", "2025-01-01T00:00", None),
    ]


def test_a_timeout_is_a_finish_and_keep_failed_0_drops_the_run_at_once():
    assert run([
        ["create_job", MIDNIGHT, "t", "*/10 * * * *", "allow", {"timeout": 5, "keep_failed": 0}],
        ["tick", t("00:10")],
        ["finish", t("00:15"), "t-1", "succeeded"],
        ["run", "t-1"],
        ["history", "t"],
        ["job_status", "t"],
    ]) == [
        True,
        ["launch t-1 for 2024-03-01T00:10"],
        RUN_NOT_FOUND,
        RUN_NOT_FOUND,
        [],
        status(t("00:10"), t("00:20"), [], 1),
    ]


# == retention and history ==================================================


def test_keep_succeeded_0_drops_a_succeeded_run_at_once_and_ids_are_never_reused():
    assert run([
        ["create_job", MIDNIGHT, "z", "*/10 * * * *", "allow", {"keep_succeeded": 0}],
        ["tick", t("00:10")],
        ["finish", t("00:11"), "z-1", "succeeded"],
        ["run", "z-1"],
        ["history", "z"],
        ["tick", t("00:20")],
        ["job_status", "z"],
    ]) == [
        True,
        ["launch z-1 for 2024-03-01T00:10"],
        True,
        RUN_NOT_FOUND,
        [],
        ["launch z-2 for 2024-03-01T00:20"],
        status(t("00:20"), t("00:30"), ["z-2"], 2),
    ]


def test_by_default_3_succeeded_and_1_failed_runs_are_kept():
    ticks = [["tick", t(hhmm)] for hhmm in ("00:10", "00:20", "00:30", "00:40", "00:50", "01:00")]
    assert run([["create_job", MIDNIGHT, "d", "*/10 * * * *", "allow"]] + ticks + [
        ["finish", t("01:01"), "d-1", "succeeded"],
        ["finish", t("01:02"), "d-2", "succeeded"],
        ["finish", t("01:03"), "d-3", "succeeded"],
        ["finish", t("01:04"), "d-4", "succeeded"],
        ["finish", t("01:05"), "d-5", "failed"],
        ["finish", t("01:06"), "d-6", "failed"],
        ["history", "d"],
        ["run", "d-1"],
        ["run", "d-5"],
        ["job_status", "d"],
    ])[7:] == [
        True, True, True, True, True, True,
        [["d-2", "succeeded", t("01:02")], ["d-3", "succeeded", t("01:03")],
         ["d-4", "succeeded", t("01:04")], ["d-6", "failed", t("01:06")]],
        RUN_NOT_FOUND,
        RUN_NOT_FOUND,
        status(t("01:00"), t("01:10"), [], 6),
    ]


def test_timed_out_runs_share_the_failed_class():
    assert run([
        ["create_job", MIDNIGHT, "t", "*/10 * * * *", "allow", {"timeout": 5}],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["finish", t("00:21"), "t-2", "failed"],
        ["history", "t"],
        ["run", "t-1"],
    ]) == [
        True,
        ["launch t-1 for 2024-03-01T00:10"],
        ["launch t-2 for 2024-03-01T00:20"],
        True,
        [["t-2", "failed", t("00:21")]],
        RUN_NOT_FOUND,
    ]


def test_the_newest_run_is_the_one_with_the_greater_finished_at():
    assert run([
        ["create_job", MIDNIGHT, "k", "*/10 * * * *", "allow", {"keep_succeeded": 1}],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["finish", t("00:25"), "k-2", "succeeded"],
        ["finish", t("00:30"), "k-1", "succeeded"],
        ["history", "k"],
        ["run", "k-2"],
    ]) == [
        True,
        ["launch k-1 for 2024-03-01T00:10"],
        ["launch k-2 for 2024-03-01T00:20"],
        True, True,
        [["k-1", "succeeded", t("00:30")]],
        RUN_NOT_FOUND,
    ]


def test_a_tie_on_finished_at_is_broken_by_the_higher_launch_number():
    assert run([
        ["create_job", MIDNIGHT, "k", "*/10 * * * *", "allow", {"keep_succeeded": 1}],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["finish", t("00:30"), "k-2", "succeeded"],
        ["finish", t("00:30"), "k-1", "succeeded"],
        ["history", "k"],
        ["run", "k-1"],
    ]) == [
        True,
        ["launch k-1 for 2024-03-01T00:10"],
        ["launch k-2 for 2024-03-01T00:20"],
        True, True,
        [["k-2", "succeeded", t("00:30")]],
        RUN_NOT_FOUND,
    ]


def test_retention_is_per_job():
    assert run([
        ["create_job", MIDNIGHT, "a", "*/10 * * * *", "allow", {"keep_succeeded": 1}],
        ["create_job", MIDNIGHT, "b", "*/10 * * * *", "allow", {"keep_succeeded": 1}],
        ["tick", t("00:10")],
        ["finish", t("00:11"), "a-1", "succeeded"],
        ["finish", t("00:12"), "b-1", "succeeded"],
        ["history", "a"],
        ["history", "b"],
    ]) == [
        True, True,
        ["launch a-1 for 2024-03-01T00:10", "launch b-1 for 2024-03-01T00:10"],
        True, True,
        [["a-1", "succeeded", t("00:11")]],
        [["b-1", "succeeded", t("00:12")]],
    ]


def test_history_lists_both_classes_oldest_first_by_finished_at_then_launch_number():
    assert run([
        ["create_job", MIDNIGHT, "h", "*/10 * * * *", "allow", {"keep_failed": 5}],
        ["tick", t("00:10")],
        ["tick", t("00:20")],
        ["tick", t("00:30")],
        ["finish", t("00:35"), "h-2", "succeeded"],
        ["finish", t("00:40"), "h-3", "succeeded"],
        ["finish", t("00:40"), "h-1", "failed"],
        ["history", "h"],
    ])[4:] == [
        True, True, True,
        [["h-2", "succeeded", t("00:35")], ["h-1", "failed", t("00:40")],
         ["h-3", "succeeded", t("00:40")]],
    ]


# == reads ==================================================================


def test_reads_of_a_missing_or_non_string_name_are_job_not_found_or_run_not_found():
    assert run([
        ["create_job", MIDNIGHT, "a", "* * * * *", "allow"],
        ["job_status", "b"],
        ["job_status", "A"],
        ["job_status", None],
        ["job_status", 5],
        ["history", "b"],
        ["history", None],
        ["run", "a-1"],
        ["run", None],
        ["run", 1],
        ["run", "a"],
    ]) == [True] + [JOB_NOT_FOUND] * 6 + [RUN_NOT_FOUND] * 4


def test_run_ids_and_job_names_are_matched_as_exact_strings():
    assert run([
        ["create_job", MIDNIGHT, "a", "0 * * * *", "allow"],
        ["tick", t("01:00")],
        ["run", "a-01"],
        ["run", "a-+1"],
        ["run", "a-\u0661"],
        ["run", " a-1"],
        ["run", "a-1\n"],
        ["finish", t("01:01"), "a-01", "succeeded"],
        ["job_status", "a "],
        ["history", "a\n"],
        ["run", "a-1"],
    ]) == [True, ["launch a-1 for 2024-03-01T01:00"]] + [RUN_NOT_FOUND] * 6 + [
        JOB_NOT_FOUND, JOB_NOT_FOUND,
        run_record("a-1", "a", "running", t("01:00"), t("01:00"), None)]


def test_run_reports_every_field_and_finished_at_is_null_while_running():
    assert run([
        ["create_job", MIDNIGHT, "a", "*/10 * * * *", "allow"],
        ["tick", t("00:25")],
        ["run", "a-1"],
        ["finish", t("00:40"), "a-1", "failed"],
        ["run", "a-1"],
    ]) == [
        True,
        ["launch a-1 for 2024-03-01T00:20"],
        run_record("a-1", "a", "running", t("00:20"), t("00:25"), None),
        True,
        run_record("a-1", "a", "failed", t("00:20"), t("00:25"), t("00:40")),
    ]


# == bulk_create ============================================================

P38 = "p" * 38


def test_bulk_create_creates_prefix_0_to_count_minus_1_cycling_expressions_with_shared_policy_and_options():
    assert run([
        ["bulk_create", MIDNIGHT, "w", 3, ["*/10 * * * *", "@every 15m"], "forbid", {"timeout": 5}],
        ["job_status", "w-0"],
        ["job_status", "w-1"],
        ["job_status", "w-2"],
        ["job_status", "w-3"],
        ["tick", t("00:15")],
        ["tick", t("00:20")],
    ]) == [
        3,
        status(None, t("00:10"), [], 0),
        status(None, t("00:15"), [], 0),
        status(None, t("00:10"), [], 0),
        JOB_NOT_FOUND,
        ["launch w-0-1 for 2024-03-01T00:10", "launch w-1-1 for 2024-03-01T00:15",
         "launch w-2-1 for 2024-03-01T00:10"],
        ["launch w-0-2 for 2024-03-01T00:20", "launch w-2-2 for 2024-03-01T00:20"],
    ]


def test_bulk_create_jobs_all_get_the_same_creation_time():
    assert run([
        ["bulk_create", t("00:07"), "e", 2, ["@every 10m"], "allow"],
        ["tick", t("00:17")],
    ]) == [2, ["launch e-0-1 for 2024-03-01T00:17", "launch e-1-1 for 2024-03-01T00:17"]]


def test_bulk_create_checks_in_order_and_creates_nothing_on_failure():
    assert run([
        ["create_job", t("10:00"), "p-1", "* * * * *", "allow"],
        ["create_job", t("10:00"), P38 + "-0", "* * * * *", "allow"],
        ["bulk_create", "bad", "Bad", 0, [], "bad", "bad"],
        ["bulk_create", t("09:00"), "Bad", 0, [], "bad", "bad"],
        ["bulk_create", t("10:00"), "Bad", 0, [], "bad", "bad"],
        ["bulk_create", t("10:00"), "p", 0, [], "bad", "bad"],
        ["bulk_create", t("10:00"), "p", 2, [], "bad", "bad"],
        ["bulk_create", t("10:00"), "p", 2, ["* * * * *"], "bad", "bad"],
        ["bulk_create", t("10:00"), P38, 11, ["* * * * *"], "allow", "bad"],
        ["bulk_create", t("10:00"), P38, 11, ["0 0 30 2 *"], "allow"],
        ["bulk_create", t("10:00"), P38, 10, ["0 0 30 2 *"], "allow"],
        ["bulk_create", t("10:00"), "p", 2, ["0 0 30 2 *"], "allow"],
        ["bulk_create", t("10:00"), "q", 2, ["* * * * *", "0 0 30 2 *"], "allow"],
        ["job_status", "p-0"],
        ["job_status", "q-0"],
        ["job_status", P38 + "-1"],
    ]) == [
        True, True,
        INVALID_TIME, BACKWARDS, INVALID_NAME, INVALID_COUNT, INVALID_EXPRESSION,
        INVALID_POLICY, INVALID_OPTIONS, INVALID_NAME, JOB_EXISTS, JOB_EXISTS, NEVER_FIRES,
        JOB_NOT_FOUND, JOB_NOT_FOUND, JOB_NOT_FOUND,
    ]


def test_bulk_create_prefix_must_be_a_valid_name():
    prefixes = ["", "Bad", "a-", "-a", "a--b", "a_b", None, 5, ["p"], "a" * 41]
    assert run([["bulk_create", MIDNIGHT, p, 1, ["* * * * *"], "allow"] for p in prefixes]) == [
        INVALID_NAME] * len(prefixes)


def test_bulk_create_count_must_be_an_integer_from_1_to_5000():
    assert run([
        ["bulk_create", MIDNIGHT, "a", 0, ["* * * * *"], "allow"],
        ["bulk_create", MIDNIGHT, "a", 5001, ["* * * * *"], "allow"],
        ["bulk_create", MIDNIGHT, "a", -1, ["* * * * *"], "allow"],
        ["bulk_create", MIDNIGHT, "a", True, ["* * * * *"], "allow"],
        ["bulk_create", MIDNIGHT, "a", 2.0, ["* * * * *"], "allow"],
        ["bulk_create", MIDNIGHT, "a", "2", ["* * * * *"], "allow"],
        ["bulk_create", MIDNIGHT, "a", None, ["* * * * *"], "allow"],
        ["job_status", "a-0"],
        ["bulk_create", MIDNIGHT, "b", 1, ["* * * * *"], "allow"],
        ["bulk_create", MIDNIGHT, "c", 5000, ["@every 1m"], "allow"],
        ["job_status", "c-4999"],
    ]) == [INVALID_COUNT] * 7 + [JOB_NOT_FOUND, 1, 5000, status(None, t("00:01"), [], 0)]


def test_bulk_create_exprs_must_be_a_non_empty_list_of_valid_expressions_used_or_not():
    assert run([
        ["bulk_create", MIDNIGHT, "a", 1, [], "allow"],
        ["bulk_create", MIDNIGHT, "a", 1, "* * * * *", "allow"],
        ["bulk_create", MIDNIGHT, "a", 1, None, "allow"],
        ["bulk_create", MIDNIGHT, "a", 1, {"0": "* * * * *"}, "allow"],
        ["bulk_create", MIDNIGHT, "a", 1, [None], "allow"],
        ["bulk_create", MIDNIGHT, "a", 1, [["* * * * *"]], "allow"],
        ["bulk_create", MIDNIGHT, "a", 1, ["* * * * *", "bad"], "allow"],
        ["bulk_create", MIDNIGHT, "a", 1, ["* * * * *", "@EVERY 5m"], "allow"],
        ["job_status", "a-0"],
    ]) == [INVALID_EXPRESSION] * 8 + [JOB_NOT_FOUND]


def test_bulk_create_a_generated_name_over_40_characters_is_invalid_name():
    assert run([
        ["bulk_create", MIDNIGHT, P38, 11, ["* * * * *"], "allow"],
        ["bulk_create", MIDNIGHT, "a" * 40, 1, ["* * * * *"], "allow"],
        ["job_status", P38 + "-0"],
        ["bulk_create", MIDNIGHT, P38, 10, ["* * * * *"], "allow"],
        ["job_status", P38 + "-9"],
    ]) == [INVALID_NAME, INVALID_NAME, JOB_NOT_FOUND, 10, status(None, t("00:01"), [], 0)]


def test_bulk_create_any_taken_generated_name_is_job_exists_and_nothing_is_created():
    assert run([
        ["create_job", MIDNIGHT, "p-2", "* * * * *", "allow"],
        ["bulk_create", MIDNIGHT, "p", 3, ["* * * * *"], "allow"],
        ["job_status", "p-0"],
        ["bulk_create", MIDNIGHT, "p", 2, ["* * * * *"], "allow"],
        ["bulk_create", MIDNIGHT, "p", 2, ["* * * * *"], "allow"],
    ]) == [True, JOB_EXISTS, JOB_NOT_FOUND, 2, JOB_EXISTS]


def test_bulk_create_never_fires_applies_only_to_the_expressions_used():
    assert run([
        ["bulk_create", MIDNIGHT, "a", 1, ["* * * * *", "0 0 30 2 *"], "allow"],
        ["bulk_create", MIDNIGHT, "b", 2, ["* * * * *", "0 0 30 2 *"], "allow"],
        ["job_status", "a-0"],
        ["job_status", "b-0"],
    ]) == [1, NEVER_FIRES, status(None, t("00:01"), [], 0), JOB_NOT_FOUND]


def test_bulk_create_tz_with_every_applies_only_to_the_expressions_used():
    assert run([
        ["bulk_create", MIDNIGHT, "a", 1, ["0 9 * * *", "@every 5m"], "allow", {"tz": "+01:00"}],
        ["bulk_create", MIDNIGHT, "b", 2, ["0 9 * * *", "@every 5m"], "allow", {"tz": "+01:00"}],
        ["bulk_create", MIDNIGHT, "c", 2, ["@every 5m", "0 0 30 2 *"], "allow", {"tz": "+00:00"}],
        ["bulk_create", MIDNIGHT, P38, 11, ["@every 5m"], "allow", {"tz": "+00:00"}],
        ["job_status", "a-0"],
        ["job_status", "b-0"],
    ]) == [1, INVALID_OPTIONS, INVALID_OPTIONS, INVALID_OPTIONS,
           status(None, t("08:00"), [], 0), JOB_NOT_FOUND]


def test_bulk_create_rejects_invalid_policy_and_options_like_create_job():
    assert run([
        ["bulk_create", MIDNIGHT, "a", 1, ["* * * * *"], "Allow"],
        ["bulk_create", MIDNIGHT, "a", 1, ["* * * * *"], None],
        ["bulk_create", MIDNIGHT, "a", 1, ["* * * * *"], "allow", {"timeout": 0}],
        ["bulk_create", MIDNIGHT, "a", 1, ["* * * * *"], "allow", []],
        ["bulk_create", MIDNIGHT, "a", 1, ["* * * * *"], "allow", None],
    ]) == [INVALID_POLICY, INVALID_POLICY, INVALID_OPTIONS, INVALID_OPTIONS, 1]


# == scale (seed Part 5 rule 3) =============================================

P = 1_000_000_007


def minutes_since_1970(text):
    import datetime
    moment = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M")
    return int((moment - datetime.datetime(1970, 1, 1)).total_seconds()) // 60


def test_a_fleet_of_5000_every_minute_jobs_down_for_ten_years_overflows_or_launches_once():
    # With a 10-minute deadline every job launches once, for 2034-01-01T00:00:
    # digest = minutes * (1 + ... + 5000) mod P.
    digest = minutes_since_1970("2034-01-01T00:00") * (5000 * 5001 // 2) % P
    assert run([
        ["bulk_create", "2024-01-01T00:00", "m", 5000, ["* * * * *"], "allow"],
        ["tick", "2034-01-01T00:00", "counts"],
    ]) == [5000, counts(overflowed=5000)]
    assert run([
        ["bulk_create", "2024-01-01T00:00", "m", 5000, ["* * * * *"], "allow",
         {"starting_deadline": 10}],
        ["tick", "2034-01-01T00:00", "counts"],
        ["tick", "2034-01-01T00:00", "counts"],
    ]) == [5000, counts(launched=5000, digest=digest), counts()]


def test_many_schedules_that_can_never_fire_are_rejected_quickly():
    never = ["0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 31 2 *", "0 0 */31 12 FRI"]
    assert run([
        ["bulk_create", "2035-01-01T00:00", "n", 5000, never, "allow"],
        ["bulk_create", "2035-01-01T00:00", "n", 5000, ["@every 5m"] * 3 + ["0 0 30 2 *"],
         "allow"],
        ["job_status", "n-0"],
    ]) == [NEVER_FIRES, NEVER_FIRES, JOB_NOT_FOUND]


def test_a_fleet_of_yearly_monthly_and_leap_day_jobs_ticked_monthly_for_a_decade():
    # Job i uses exprs[i % 3]: yearly (i % 3 == 0), monthly (1), leap day (2).
    exprs = ["0 0 1 1 *", "0 0 1 * *", "0 0 29 2 *"]
    ops = [["bulk_create", "2024-01-01T00:00", "f", 300, exprs, "allow",
            {"keep_succeeded": 0, "keep_failed": 0}]]
    expected = [300]
    by_class = {c: sum(i + 1 for i in range(300) if i % 3 == c) for c in range(3)}
    for k in range(1, 121):  # the 1st of each month, 2024-02-01 ... 2034-01-01
        year, month = 2024 + k // 12, k % 12 + 1
        now = "%04d-%02d-01T00:00" % (year, month)
        ops.append(["tick", now, "counts"])
        launched, digest = 100, minutes_since_1970(now) * by_class[1]
        if month == 1:
            launched += 100
            digest += minutes_since_1970(now) * by_class[0]
        if month == 3 and year % 4 == 0:
            launched += 100
            digest += minutes_since_1970("%04d-02-29T00:00" % year) * by_class[2]
        expected.append(counts(launched=launched, digest=digest % P))
    ops += [["job_status", "f-0"], ["job_status", "f-1"], ["job_status", "f-2"]]
    expected += [
        status("2034-01-01T00:00", "2035-01-01T00:00", ["f-0-%d" % n for n in range(1, 11)], 10),
        status("2034-01-01T00:00", "2034-02-01T00:00", ["f-1-%d" % n for n in range(1, 121)], 120),
        status("2032-02-29T00:00", "2036-02-29T00:00", ["f-2-1", "f-2-2", "f-2-3"], 3),
    ]
    assert run(ops) == expected
