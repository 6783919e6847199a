"""The policy's list of zones is the pinned tzdata's, and the reader takes exactly what it takes.

The API server refuses an unknown ``spec.timeZone`` at create (422), as it
does a CronJob's, by the rule of the CronSchedule's ValidatingAdmissionPolicy
(``crds/cronschedule-policy.yaml``; the CRD's own until issue 47): a UTC offset or one of the zone names
tzdata ships (less those that depend on the host), a list that
``scripts/sync-chart-crd.py`` writes. These tests keep that list current
with the tzdata the project pins, and keep ``cronctl.manifest`` (the reader
of the runner and the fleet preview) and the operator's core agreeing with
it: a name or an offset the API server takes, the reader takes and the core
reads; one it refuses, the reader refuses. (tests/kube/test_manifest_verdicts.py
asks the API server itself.)
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import zoneinfo
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from cronctl.core.errors import CronctlError
from cronctl.core.zones import parse_zone
from cronctl.manifest import ZONE_LIST, SpecError, crd_zones, policy, read_manifest, schema_problems

ROOT = Path(__file__).resolve().parent.parent
BODY: dict[str, Any] = {
    "apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "metadata": {"name": "zoned"},
    "spec": {"schedule": "30 2 * * *",
             "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "x"}]}}}}},
}


def zoned(zone: str) -> dict[str, Any]:
    body = copy.deepcopy(BODY)
    body["spec"]["timeZone"] = zone
    return body


def sync_script() -> Any:
    spec = importlib.util.spec_from_file_location("sync_chart_crd", ROOT / "scripts" / "sync-chart-crd.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tzdata_names() -> set[str]:
    return set(resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8").split())


def test_the_crds_zones_are_what_the_pinned_tzdata_ships_less_the_host_dependent() -> None:
    pinned = next(line for line in (ROOT / "requirements.lock").read_text().splitlines()
                  if line.startswith("tzdata=="))
    assert pinned.split("==")[1].split()[0] == metadata.version("tzdata"), "test with the tzdata the lock pins"
    _, names = crd_zones()
    assert names == tzdata_names() - {"Factory", "localtime", "posixrules"}, (
        "crds/cronschedule-policy.yaml's zones are not tzdata's: run .venv/bin/python scripts/sync-chart-crd.py")
    assert sync_script().expected()[ROOT / "crds" / "cronschedule-policy.yaml"] == \
        (ROOT / "crds" / "cronschedule-policy.yaml").read_bytes()


def test_every_zone_the_crd_lists_the_reader_takes_and_the_core_reads() -> None:
    _, names = crd_zones()
    for name in sorted(names):
        assert schema_problems(zoned(name)) == [], name
        assert read_manifest(zoned(name), anchor=0).job.options.tz.name == name


@pytest.mark.parametrize("name", ["Factory", "localtime", "posixrules", "posix/Europe/Berlin", "right/UTC",
                                  "europe/berlin", "Europe", "bad-time-zone", "UTC ", " UTC", "Mars/Base", ""])
def test_a_name_the_crd_leaves_out_the_reader_refuses_on_spec_time_zone(name: str) -> None:
    problems = schema_problems(zoned(name))
    assert [p.field for p in problems] == ["spec.timeZone"], problems
    with pytest.raises(SpecError, match="^spec.timeZone: unknown time zone"):
        read_manifest(zoned(name), anchor=0)


def test_no_name_the_hosts_zoneinfo_adds_to_tzdatas_is_taken() -> None:
    """The core reads any zone the host's zoneinfo has (its TZPATH first); the API server takes
    tzdata's only, so the reader does too, whatever host it runs on."""
    _, names = crd_zones()
    for name in sorted(zoneinfo.available_timezones() - names):
        assert [p.field for p in schema_problems(zoned(name))] == ["spec.timeZone"], name


def every_offset_like_string() -> list[str]:
    return [f"{sign}{hours:02d}:{minutes:02d}" for sign in "+-" for hours in range(16) for minutes in range(60)]


def test_the_crds_offsets_are_the_cores_exactly() -> None:
    offsets, _ = crd_zones()
    for text in every_offset_like_string() + ["+5:30", "+05:3", "05:30", "+05-30", "+05:30\n", "+0a:00"]:
        try:
            parse_zone(text, "spec.timeZone")
            core = True
        except CronctlError:
            core = False
        assert (offsets.fullmatch(text) is not None) == core == (schema_problems(zoned(text)) == []), text


def test_the_rule_says_which_value_it_refuses_in_words_not_the_list() -> None:
    [rule] = [each for each in policy()["spec"]["validations"] if ZONE_LIST in each["expression"]]
    assert "object.spec.timeZone" in rule["messageExpression"] and "Europe/Berlin" in rule["messageExpression"]
    assert rule["messageExpression"].startswith('"spec.timeZone: ')
    assert len(rule["messageExpression"]) < 300


def test_the_crd_stays_small_enough_for_kubectl_apply_and_etcd() -> None:
    """``kubectl apply`` (client side, as docs/operator.md installs it) keeps the whole object in
    its last-applied annotation: annotations may total 256 KiB. etcd takes 1.5 MiB a value."""
    text = (ROOT / "crds" / "cronschedule.yaml").read_text()
    applied = json.dumps(yaml.safe_load(text), separators=(",", ":"))
    assert len(applied) < 128 * 1024, len(applied)


def test_the_policy_stays_small_enough_for_kubectl_apply_and_etcd() -> None:
    for document in yaml.safe_load_all((ROOT / "crds" / "cronschedule-policy.yaml").read_text()):
        assert len(json.dumps(document, separators=(",", ":"))) < 128 * 1024


def test_the_crd_has_no_cel_rule_for_the_api_server_to_evaluate_on_each_status_write() -> None:
    """Issue 47: a CRD's x-kubernetes-validations run on every write, /status too (about 1 ms of
    kube-apiserver CPU a status write); the rules are the policy's, which matches creates and
    spec changes only."""
    text = (ROOT / "crds" / "cronschedule.yaml").read_text()
    assert not re.search(r"^\s*x-kubernetes-validations:", text, re.M)
    assert not re.search(r"^\s*x-kubernetes-validations:", (ROOT / "crds" / "cronpool.yaml").read_text(), re.M)
