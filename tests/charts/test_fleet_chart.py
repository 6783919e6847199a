"""The cronschedule-fleet chart: what it renders, what it refuses, and that both are bulk_create's.

Every refusal is checked three ways: the render fails naming the value (with
helm's schema check, and with the templates' own checks alone), `cronctl fleet
preview`'s reader refuses it naming the same value, and the core's
``Controller.bulk_create`` refuses the same values with the contract's code.
What the chart accepts, it renders as bulk_create creates it: the same names in
the same order, with the same expressions (and the preview reads the same specs).
The one option wider than bulk_create's is timeZone, which takes IANA names as
the CRD does (the harness's tz takes offsets only). No message names bulk_create:
users meet the fleet's values, never the harness.
"""

from __future__ import annotations

import dataclasses

import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from cronctl import fleet
from cronctl.core.controller import Controller
from cronctl.core.errors import Code, CronctlError
from cronctl.core.spec import PAST_LIMIT_LAUNCH, check_name
from cronctl.core.times import parse_time
from cronctl.core.zones import parse_zone

from .conftest import CHARTS
from .operator_chart import notes

CHART = CHARTS / "cronschedule-fleet"
NOW = parse_time("2024-03-01T00:00")
JOB_TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                               "containers": [{"name": "c", "image": "busybox"}]}}}}


def render(helm: Path, tmp_path: Path, values: dict[str, Any], *flags: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values, allow_unicode=True), encoding="utf-8")
    return subprocess.run([str(helm), "template", "fleet", str(CHART), "-f", str(path), *flags],
                          capture_output=True, text=True)


def rendered(helm: Path, tmp_path: Path, values: dict[str, Any]) -> list[dict[str, Any]]:
    result = render(helm, tmp_path, values)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


# -- the values as bulk_create's arguments -------------------------------------------------------

POLICY_NAMES = {"Allow": "allow", "Forbid": "forbid", "Replace": "replace"}
HARNESS_OPTIONS = {"timeoutMinutes": "timeout", "successfulJobsHistoryLimit": "keep_succeeded",
                   "failedJobsHistoryLimit": "keep_failed", "timeZone": "tz"}
CRD_ONLY = {"maxRetries", "retryDelayMinutes", "catchUp", "jitterSeconds", "suspend", "labels", "jobTemplate",
            "global"}


def harness_arguments(values: dict[str, Any]) -> tuple[Any, ...]:
    """bulk_create's (prefix, count, exprs, policy, options) for the same merged values.

    A value with no counterpart (a policy that is no CRD name of the three) becomes one
    bulk_create refuses; null or absent options are absent; the CRD's own options have
    no counterpart and are left out; any other key stays an (unknown) option.
    """
    options: dict[str, Any] = {}
    for key, value in values.items():
        if value is None or key in CRD_ONLY or key in ("prefix", "count", "schedules", "concurrencyPolicy"):
            continue
        if key == "timeZone" and isinstance(value, str) and value[:1] not in ("+", "-") \
                and value in fleet.tz_database_names():
            continue  # an IANA name: the CRD's, no counterpart in the harness's tz (offsets only)
        if key == "startingDeadlineSeconds":
            options["starting_deadline"] = value // 60 if fleet._is_whole(value) else value
        else:
            options[HARNESS_OPTIONS.get(key, key)] = value
    policy = values.get("concurrencyPolicy")
    policy = POLICY_NAMES.get(policy, None) if isinstance(policy, str) else policy
    return values.get("prefix"), values.get("count"), values.get("schedules"), policy, options


def bulk_create(values: dict[str, Any]) -> list[Any]:
    return Controller().bulk_create(NOW, *harness_arguments(fleet.merge_defaults(values)))


# -- lint, defaults, the basic render ----------------------------------------------------------


def test_helm_lint_strict_passes_with_the_defaults_and_with_a_fleet(helm: Path, tmp_path: Path) -> None:
    result = subprocess.run([str(helm), "lint", "--strict", str(CHART)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    values = tmp_path / "fleet.yaml"
    values.write_text(yaml.safe_dump({"prefix": "probe", "count": 50, "schedules": ["*/5 * * * *", "@every 45m"],
                                      "concurrencyPolicy": "Forbid", "timeoutMinutes": 30,
                                      "labels": {"team": "payments"}}))
    result = subprocess.run([str(helm), "lint", "--strict", str(CHART), "-f", str(values)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_previews_defaults_are_the_charts_values_yaml() -> None:
    assert yaml.safe_load((CHART / "values.yaml").read_text()) == fleet.DEFAULTS


def test_count_5_with_two_schedules_renders_prefix_0_to_4_alternating(helm: Path, tmp_path: Path) -> None:
    docs = rendered(helm, tmp_path, {"prefix": "probe", "count": 5, "schedules": ["*/30 * * * *", "@every 45m"],
                                     "concurrencyPolicy": "Forbid", "jobTemplate": JOB_TEMPLATE})
    assert [d["metadata"]["name"] for d in docs] == ["probe-0", "probe-1", "probe-2", "probe-3", "probe-4"]
    assert [d["spec"]["schedule"] for d in docs] == ["*/30 * * * *", "@every 45m", "*/30 * * * *",
                                                     "@every 45m", "*/30 * * * *"]
    for doc in docs:
        assert doc["apiVersion"] == "cronctl.dev/v1" and doc["kind"] == "CronSchedule"
        assert doc["metadata"]["namespace"] == "default"
        assert doc["metadata"]["labels"]["cronctl.dev/fleet"] == "probe"
        assert doc["spec"]["concurrencyPolicy"] == "Forbid"
        assert doc["spec"]["jobTemplate"] == JOB_TEMPLATE


def test_options_are_rendered_under_their_crd_names_as_whole_numbers(helm: Path, tmp_path: Path) -> None:
    values = {"prefix": "opt", "count": 1, "schedules": ["0 9 * * MON-FRI"], "concurrencyPolicy": "Replace",
              "timeZone": "+05:30", "startingDeadlineSeconds": 300, "timeoutMinutes": 10_000_000,
              "successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 2, "maxRetries": 3,
              "retryDelayMinutes": 5, "catchUp": "All", "jitterSeconds": 30, "suspend": False,
              "labels": {"team": "payments", "example.com/tier": "batch"}, "jobTemplate": JOB_TEMPLATE}
    (doc,) = rendered(helm, tmp_path, values)
    assert doc["spec"] == {"schedule": "0 9 * * MON-FRI", "concurrencyPolicy": "Replace", "timeZone": "+05:30",
                           "startingDeadlineSeconds": 300, "timeoutMinutes": 10_000_000,
                           "successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 2, "maxRetries": 3,
                           "retryDelayMinutes": 5, "catchUp": "All", "jitterSeconds": 30, "suspend": False,
                           "jobTemplate": JOB_TEMPLATE}
    assert {"team": "payments", "example.com/tier": "batch"}.items() <= doc["metadata"]["labels"].items()


def test_count_5000_renders(helm: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    docs = rendered(helm, tmp_path, {"prefix": "load", "count": 5000, "schedules": ["* * * * *", "*/5 * * * *"],
                                     "jobTemplate": JOB_TEMPLATE})
    print(f"helm template: 5000 CronSchedules in {time.monotonic() - started:.1f} s")
    assert [d["metadata"]["name"] for d in docs] == [f"load-{i}" for i in range(5000)]
    assert docs[4999]["spec"]["schedule"] == "*/5 * * * *"


# -- the same fleet as bulk_create's ---------------------------------------------------------------

ACCEPTED = [
    pytest.param({"prefix": "a", "count": 1, "schedules": ["0 * * * *"]}, id="one"),
    pytest.param({"prefix": "web", "count": 7, "schedules": ["*/5 * * * *", "@every 90m", "0 0 29 2 *"]},
                 id="three-schedules-seven-names"),
    pytest.param({"prefix": "p", "count": 2, "schedules": ["0 * * * *", "1 * * * *", "2 * * * *", "3 * * * *"]},
                 id="more-schedules-than-names"),
    pytest.param({"prefix": "a" * 38, "count": 10, "schedules": ["0 0 * * *"]}, id="longest-name-is-40"),
    pytest.param({"prefix": "a" * 35, "count": 5000, "schedules": ["0 0 * * *", "@every 1h"]},
                 id="5000-names-up-to-40"),
    pytest.param({"prefix": "ws", "count": 3, "schedules": ["  */5\t* *  * *  ", "007 00 * * 1-FRI",
                                                            "0 12 * jan-Mar Mon-fri/2", "*/100 * * * 7"]},
                 id="whitespace-zeros-names-steps"),
    pytest.param({"prefix": "nbsp", "count": 1, "schedules": ["0\u00a00 * * *", "30\u20032 * * *"]},
                 id="python-whitespace"),
    pytest.param({"prefix": "tz", "count": 2, "schedules": ["30 2 * * *"], "timeZone": "-00:00",
                  "concurrencyPolicy": "Forbid", "startingDeadlineSeconds": 90, "timeoutMinutes": 5,
                  "successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 0}, id="options"),
    pytest.param({"prefix": "tz", "count": 1, "schedules": ["0 * * * *", "@every 45m"], "timeZone": "+14:00"},
                 id="zone-with-an-unused-every"),
    pytest.param({"prefix": "berlin", "count": 3, "schedules": ["30 2 * * *", "0 9 * * MON-FRI"],
                  "timeZone": "Europe/Berlin", "concurrencyPolicy": "Forbid"}, id="iana-zone"),
    pytest.param({"prefix": "utc", "count": 1, "schedules": ["0 0 * * *"], "timeZone": "UTC"}, id="iana-utc"),
    pytest.param({"prefix": "kolkata", "count": 2, "schedules": ["0 0 * * *"], "timeZone": "+05:30"}, id="offset"),
    pytest.param({"prefix": "x", "count": 3, "schedules": ["@every 525600m", "@every 8760h"],
                  "concurrencyPolicy": "Replace"}, id="longest-intervals"),
]


@pytest.mark.parametrize("values", ACCEPTED)
def test_the_render_is_what_bulk_create_creates(helm: Path, tmp_path: Path, values: dict[str, Any]) -> None:
    values = {**values, "jobTemplate": JOB_TEMPLATE}
    docs = rendered(helm, tmp_path, values)
    specs = bulk_create(values)
    assert [d["metadata"]["name"] for d in docs] == [spec.name for spec in specs]
    assert [d["spec"]["schedule"] for d in docs] == [spec.expression for spec in specs]
    # The preview reads the rendered specs with the operator's reader into the very same jobs.
    checked = fleet.read_values(fleet.merge_defaults(values))
    assert [d["spec"] for d in docs] == [checked.manifest(i)["spec"] for i in range(checked.count)]
    _, previewed = fleet.create(checked, NOW)
    # The same jobs, with the overflow rule of CronSchedules (CronJob's) where the harness keeps the seed's,
    # and the zone as the operator reads it (an IANA name the harness's tz has no counterpart for).
    zone = values.get("timeZone")
    assert previewed == [dataclasses.replace(spec, options=dataclasses.replace(
        spec.options, past_limit=PAST_LIMIT_LAUNCH, tz=spec.options.tz if zone is None else parse_zone(zone)))
        for spec in specs]


def test_helm_reads_5_0_as_5_where_bulk_create_and_the_preview_refuse_it(helm: Path, tmp_path: Path) -> None:
    """The one difference, documented in values.yaml: helm's numbers are floats."""
    values = {"prefix": "f", "count": 2.0, "jobTemplate": JOB_TEMPLATE}
    assert [d["metadata"]["name"] for d in rendered(helm, tmp_path, values)] == ["f-0", "f-1"]
    with pytest.raises(fleet.FleetError, match=r"^count: 2.0 is not a whole number"):
        fleet.read_values(fleet.merge_defaults(values))
    with pytest.raises(CronctlError) as refused:
        bulk_create(values)
    assert refused.value.code is Code.INVALID_COUNT


# -- what is refused ---------------------------------------------------------------------------------

NAME, COUNT, EXPR, POLICY, OPTIONS = (Code.INVALID_NAME, Code.INVALID_COUNT, Code.INVALID_EXPRESSION,
                                      Code.INVALID_POLICY, Code.INVALID_OPTIONS)
REFUSED = [
    # (values, the value named, words of the reason, bulk_create's code or None: no counterpart)
    ({"prefix": "Web"}, "prefix", "lower-case letters", NAME),
    ({"prefix": ""}, "prefix", "lower-case letters", NAME),
    ({"prefix": "a--b"}, "prefix", "single hyphens", NAME),
    ({"prefix": "web-"}, "prefix", "single hyphens", NAME),
    ({"prefix": "-web"}, "prefix", "single hyphens", NAME),
    ({"prefix": "web_1"}, "prefix", "single hyphens", NAME),
    ({"prefix": "wéb"}, "prefix", "lower-case letters", NAME),
    ({"prefix": "a" * 41}, "prefix", "1-40", NAME),
    ({"prefix": 7}, "prefix", "lower-case letters", NAME),
    ({"prefix": None}, "prefix", "lower-case letters", NAME),
    ({"count": 0}, "count", "0 is out of range 1-5000", COUNT),
    ({"count": 5001}, "count", "5001 is out of range 1-5000", COUNT),
    ({"count": -1}, "count", "out of range 1-5000", COUNT),
    ({"count": "5"}, "count", "not a whole number", COUNT),
    ({"count": True}, "count", "not a whole number", COUNT),
    ({"count": 2.5}, "count", "not a whole number", COUNT),
    ({"count": None}, "count", "not a whole number", COUNT),
    ({"schedules": []}, "schedules", "non-empty list", EXPR),
    ({"schedules": "*/5 * * * *"}, "schedules", "non-empty list", EXPR),
    ({"schedules": None}, "schedules", "non-empty list", EXPR),
    ({"schedules": ["0 9 * * 8"]}, "schedules[0]", "day-of-week: 8 is out of range 0-7", EXPR),
    ({"schedules": ["*/15 * * * *", "61 * * * *"]}, "schedules[1]", "minute: 61 is out of range 0-59", EXPR),
    ({"count": 1, "schedules": ["* * * * *", "* * * *"]}, "schedules[1]", "has 4 fields", EXPR),
    ({"schedules": ["5/15 * * * *"]}, "schedules[0]", "a step may follow only * or a range", EXPR),
    ({"schedules": ["*/0 * * * *"]}, "schedules[0]", "step must be >= 1", EXPR),
    ({"schedules": ["*/ * * * *"]}, "schedules[0]", "is not a number", EXPR),
    ({"schedules": ["0 0 * * FRI-SUN"]}, "schedules[0]", "runs backwards", EXPR),
    ({"schedules": ["0 0 1,,2 * *"]}, "schedules[0]", "empty item", EXPR),
    ({"schedules": ["0 0 * * ſun"]}, "schedules[0]", "day-of-week", EXPR),
    ({"schedules": ["٣ * * * *"]}, "schedules[0]", "minute", EXPR),
    ({"schedules": ["MON * * * *"]}, "schedules[0]", "minute: 'MON' is not a number", EXPR),
    ({"schedules": ["0 0 0 * *"]}, "schedules[0]", "day-of-month: 0 is out of range 1-31", EXPR),
    ({"schedules": ["0 0 * 13 *"]}, "schedules[0]", "month: 13 is out of range 1-12", EXPR),
    ({"schedules": ["0 24 * * *"]}, "schedules[0]", "hour: 24 is out of range 0-23", EXPR),
    ({"schedules": ["0000000000060 * * * *"]}, "schedules[0]", "out of range 0-59", EXPR),
    ({"schedules": ["@every 0m"]}, "schedules[0]", "interval", EXPR),
    ({"schedules": ["@every 05m"]}, "schedules[0]", "leading zeros", EXPR),
    ({"schedules": ["@every 525601m"]}, "schedules[0]", "longer than 525600 minutes", EXPR),
    ({"schedules": ["@every 8761h"]}, "schedules[0]", "longer than 525600 minutes", EXPR),
    ({"schedules": ["@every 10s"]}, "schedules[0]", "unit", EXPR),
    ({"schedules": ["@every  5m now"]}, "schedules[0]", "the only @ form", EXPR),
    ({"schedules": ["@hourly"]}, "schedules[0]", "the only @ form", EXPR),
    ({"schedules": ["every(5).minutes"]}, "schedules[0]", "every(N).unit rules are not taken here", EXPR),
    ({"schedules": ["EVERY(0).hours"]}, "schedules[0]", "every(N).unit rules are not taken here", EXPR),
    ({"schedules": [""]}, "schedules[0]", "has 0 fields", EXPR),
    ({"schedules": [5]}, "schedules[0]", "must be a string", EXPR),
    ({"concurrencyPolicy": "WaitForLast"}, "concurrencyPolicy", "not one of Allow, Forbid, Replace", POLICY),
    ({"concurrencyPolicy": "allow"}, "concurrencyPolicy", "not one of Allow, Forbid, Replace", POLICY),
    ({"concurrencyPolicy": "Sometimes"}, "concurrencyPolicy", "not one of", POLICY),
    ({"concurrencyPolicy": None}, "concurrencyPolicy", "not one of", POLICY),
    ({"timezone": "+01:00"}, "timezone", "is not a value of this chart", OPTIONS),
    ({"startingDeadlineSeconds": 30}, "startingDeadlineSeconds", "out of range 60-", OPTIONS),
    ({"startingDeadlineSeconds": 0}, "startingDeadlineSeconds", "out of range 60-", OPTIONS),
    ({"startingDeadlineSeconds": "60"}, "startingDeadlineSeconds", "not a whole number", OPTIONS),
    ({"timeoutMinutes": 0}, "timeoutMinutes", "out of range 1-", OPTIONS),
    ({"timeoutMinutes": True}, "timeoutMinutes", "not a whole number", OPTIONS),
    ({"successfulJobsHistoryLimit": -1}, "successfulJobsHistoryLimit", "out of range 0-", OPTIONS),
    ({"failedJobsHistoryLimit": 1.5}, "failedJobsHistoryLimit", "not a whole number", OPTIONS),
    ({"timeZone": "Mars/Olympus"}, "timeZone", '"Mars/Olympus" is not a time zone: give an IANA name', OPTIONS),
    ({"timeZone": "europe/berlin"}, "timeZone", "is not a time zone", OPTIONS),
    ({"timeZone": "Factory"}, "timeZone", "is not a time zone", OPTIONS),
    ({"timeZone": "localtime"}, "timeZone", "is not a time zone", OPTIONS),
    ({"timeZone": "posix/Europe/Berlin"}, "timeZone", "is not a time zone", OPTIONS),
    ({"timeZone": "# The tz database's zone names"}, "timeZone", "is not a time zone", OPTIONS),
    ({"timeZone": ""}, "timeZone", '"" is not a time zone', OPTIONS),
    ({"timeZone": "+5:30"}, "timeZone", "not an offset", OPTIONS),
    ({"timeZone": "+ab:30"}, "timeZone", "hours must be two digits", OPTIONS),
    ({"timeZone": "+05:20"}, "timeZone", "minutes must be 00, 15, 30 or 45", OPTIONS),
    ({"timeZone": "+14:15"}, "timeZone", "beyond the largest offset", OPTIONS),
    ({"timeZone": 5}, "timeZone", "must be an offset like +05:30 or a zone name like Europe/Berlin", OPTIONS),
    ({"timeZone": "+02:00", "schedules": ["@every 45m"]}, "timeZone", "@every", OPTIONS),
    ({"timeZone": "+00:00", "count": 2, "schedules": ["0 * * * *", " @every 45m"]}, "timeZone", "schedules[1]",
     OPTIONS),
    ({"maxRetries": 101}, "maxRetries", "out of range 0-100", None),
    ({"retryDelayMinutes": -1}, "retryDelayMinutes", "out of range 0-", None),
    ({"catchUp": "Sometimes"}, "catchUp", "not one of Latest, All", None),
    ({"jitterSeconds": 3601}, "jitterSeconds", "out of range 0-3600", None),
    ({"suspend": "yes please"}, "suspend", "true or false", None),
    ({"labels": {"cronctl.dev/fleet": "x"}}, "labels", "set by the chart", None),
    ({"labels": {"app.kubernetes.io/name": "x"}}, "labels", "set by the chart", None),
    ({"labels": {"app.kubernetes.io/part-of": "x"}}, "labels", "set by the chart", None),
    ({"labels": {"team": "a b"}}, "labels", "not a valid label value", None),
    ({"labels": {"bad key": "a"}}, "labels", "not a valid label name", None),
    ({"labels": {"team": "x" * 64}}, "labels", "not a valid label value", None),
    ({"jobTemplate": {"spec": {"template": None}}}, "jobTemplate", "spec.template", None),
    ({"jobTemplate": "busybox"}, "jobTemplate", "spec.template", None),
    ({"prefix": "a" * 38, "count": 11}, "prefix", "makes names up to", NAME),
    ({"prefix": "a" * 39, "count": 1}, "prefix", "makes names up to", NAME),
    ({"prefix": "a" * 36, "count": 5000}, "prefix", "(41 characters)", NAME),
]


def _id(case: tuple[Any, ...]) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", str(case[0]))[:60]


@pytest.mark.parametrize("values, name, reason, code", REFUSED, ids=[_id(c) for c in REFUSED])
def test_the_render_refuses_what_bulk_create_refuses_and_renders_nothing(
        helm: Path, tmp_path: Path, values: dict[str, Any], name: str, reason: str, code: Code | None) -> None:
    # helm's schema check first (the value's path), or the templates' check (value: reason).
    with_schema = render(helm, tmp_path, values)
    assert with_schema.returncode != 0 and with_schema.stdout == ""
    base = name.split("[")[0]
    assert f"{name}: " in with_schema.stderr or f"'/{base}" in with_schema.stderr \
        or f"'{base}'" in with_schema.stderr, with_schema.stderr
    # The templates alone refuse it too, naming the value and the reason.
    templates_only = render(helm, tmp_path, values, "--skip-schema-validation")
    assert templates_only.returncode != 0 and templates_only.stdout == ""
    message = templates_only.stderr.strip().splitlines()[0]
    assert f": {name}: " in message and reason in message, message
    assert "bulk_create" not in with_schema.stderr + templates_only.stderr
    # The preview's reader: the same value, the same reason.
    with pytest.raises(fleet.FleetError) as refused:
        checked = fleet.read_values(fleet.merge_defaults(values))
        fleet.create(checked, NOW)
    assert refused.value.field == name and reason in refused.value.reason
    assert "bulk_create" not in refused.value.message and "harness" not in refused.value.message
    # And the core's bulk_create, given the same values, refuses them with the contract's code.
    if code is not None:
        with pytest.raises(CronctlError) as core:
            bulk_create(values)
        assert core.value.code is code


def test_a_schedule_that_never_fires_is_the_operators_to_judge_but_the_preview_refuses_it(
        helm: Path, tmp_path: Path) -> None:
    """Never firing depends on the minute the schedule starts: no render can know it."""
    values = {"prefix": "feb", "count": 2, "schedules": ["0 0 30 2 *"], "jobTemplate": JOB_TEMPLATE}
    assert len(rendered(helm, tmp_path, values)) == 2
    with pytest.raises(fleet.FleetError, match=r"^schedules\[0\]: .* never fires"):
        fleet.create(fleet.read_values(fleet.merge_defaults(values)), NOW)
    with pytest.raises(CronctlError) as core:
        bulk_create(values)
    assert core.value.code is Code.NEVER_FIRES


def test_every_name_the_harness_takes_is_a_kubernetes_object_name_the_crd_takes() -> None:
    """Why checking the harness's rule is enough: its names are RFC 1123 labels of at
    most 40 characters, within the policy's 52 (and the label limit, 63)."""
    policy = next(yaml.safe_load_all((CHARTS.parent / "crds" / "cronschedule-policy.yaml").read_text()))
    rule = policy["spec"]["validations"][0]["expression"]
    assert rule == "object.metadata.name.size() <= 52"
    label = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
    for name in ["a", "a" * 40, "a-b-c", "0-0", "web-4999", "x1-2y-3z"]:
        assert check_name(name) and label.fullmatch(name) and len(name) <= 52


def test_the_option_bounds_are_the_crds(helm: Path) -> None:
    """The bounds of the options bulk_create lacks are the CRD's; those it has are at least as strict."""
    crd = yaml.safe_load((CHARTS.parent / "crds" / "cronschedule.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    for key, (low, high) in {**fleet.CRD_WHOLE, **fleet.HARNESS_WHOLE}.items():
        assert spec[key]["type"] == "integer"
        assert low >= spec[key].get("minimum", low)
        assert high <= spec[key].get("maximum", high) and high <= (
            fleet.MAX_INT32 if spec[key].get("format") == "int32" else fleet.MAX_EXACT)
    for key, (low, high) in fleet.CRD_WHOLE.items():
        assert (low, high) == (spec[key]["minimum"], spec[key].get("maximum", fleet.MAX_INT32))
    assert set(spec["catchUp"]["enum"]) == {"Latest", "All"}
    assert set(fleet.FLEET_POLICIES) == set(spec["concurrencyPolicy"]["enum"]) - {"WaitForLast"}
    assert set(fleet.DEFAULTS) - {"prefix", "count", "schedules", "labels"} <= set(spec)


# -- zones, labels, words -------------------------------------------------------------------------------


@pytest.mark.parametrize("zone", ["Europe/Berlin", "+05:30", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "UTC"])
def test_the_fleet_takes_iana_names_and_offsets_as_the_crd_does(helm: Path, tmp_path: Path, zone: str) -> None:
    values = {"prefix": "z", "count": 2, "schedules": ["30 2 * * *"], "timeZone": zone, "jobTemplate": JOB_TEMPLATE}
    assert [d["spec"]["timeZone"] for d in rendered(helm, tmp_path, values)] == [zone, zone]
    checked = fleet.read_values(fleet.merge_defaults(values))
    _, jobs = fleet.create(checked, NOW)  # the operator's reader takes each rendered spec
    assert [job.options.tz for job in jobs] == [parse_zone(zone)] * 2


def test_an_unknown_zone_is_refused_naming_the_value(helm: Path, tmp_path: Path) -> None:
    values = {"prefix": "z", "timeZone": "Mars/Olympus", "jobTemplate": JOB_TEMPLATE}
    result = render(helm, tmp_path, values)
    assert result.returncode != 0 and result.stdout == ""
    expected = ('timeZone: "Mars/Olympus" is not a time zone: give an IANA name such as Europe/Berlin '
                "or a UTC offset such as +05:30")
    assert expected in result.stderr
    with pytest.raises(fleet.FleetError) as refused:
        fleet.read_values(fleet.merge_defaults(values))
    assert refused.value.message == expected


def test_the_charts_zones_are_the_tz_database_the_operator_reads() -> None:
    """files/time-zones.txt (scripts/sync-chart-crd.py) is the preview's list, and the operator's
    reader takes every name in it."""
    lines = (CHART / "files" / "time-zones.txt").read_text().splitlines()
    names = [line for line in lines if not line.startswith("#")]
    assert names == sorted(fleet.tz_database_names()), "run scripts/sync-chart-crd.py"
    assert {"Europe/Berlin", "UTC", "Asia/Kolkata", "America/New_York"} <= set(names)
    for name in names:
        parse_zone(name)


def test_every_rendered_object_carries_the_recommended_labels(helm: Path, tmp_path: Path) -> None:
    values = {"prefix": "probe", "count": 3, "labels": {"team": "payments"}, "jobTemplate": JOB_TEMPLATE}
    docs = rendered(helm, tmp_path, values)
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert len(docs) == 3
    for doc in docs:
        assert doc["metadata"]["labels"] == {
            "app.kubernetes.io/name": "cronschedule-fleet", "app.kubernetes.io/instance": "fleet",
            "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/part-of": "cronctl",
            "helm.sh/chart": f"cronschedule-fleet-{chart['version']}", "cronctl.dev/fleet": "probe",
            "team": "payments"}
    assert set(fleet.RESERVED_LABELS) == set(docs[0]["metadata"]["labels"]) - {"team"}


def test_no_message_or_text_of_the_fleet_speaks_of_bulk_create(helm: Path) -> None:
    """Users meet the fleet's values (count, schedules, prefix, ...), never the harness's names:
    not in the chart's messages and texts, NOTES included, nor in the preview's errors."""
    for path in sorted(CHART.rglob("*")):
        if path.is_file():
            assert "bulk_create" not in path.read_text(encoding="utf-8"), path.relative_to(CHART)
    text = notes(helm, CHART, {"prefix": "probe", "count": 3, "timeZone": "Europe/Berlin"}, release="probes",
                 namespace="team-a")
    assert "bulk_create" not in text and "charts/" not in text
    assert "kubectl get cronschedules -n team-a -l cronctl.dev/fleet=probe" in text
    for values, _name, _reason, _code in REFUSED:
        try:
            fleet.create(fleet.read_values(fleet.merge_defaults(values)), NOW)
        except fleet.FleetError as error:
            assert "bulk_create" not in error.message and "harness" not in error.message, error.message
        else:
            pytest.fail(f"{values} was not refused")
