"""The two CRDs (``crds/*.yaml``) say what the code does: kubectl's columns, each field's
description against behaviour, the defaults and bounds against the readers', and every doc
that hands over or applies a CRD names both.

A description is what ``kubectl explain`` shows and the generated reference
(``scripts/crd-reference.py``) prints; a sentence the code contradicts there (the operator
"launches at the nominal minute" while it jitters) is a bug like any other.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from cronctl import manifest
from cronctl.core.zones import UTC
from cronctl.core.spec import DEFAULT_KEEP_FAILED, DEFAULT_KEEP_SUCCEEDED, MAX_MISSED
from cronctl.operator.manifests import JobLaunch, job_manifest

from .conftest import REPO_ROOT

# crds/ also holds the CronSchedule's ValidatingAdmissionPolicy (cronschedule-policy.yaml), which is no CRD.
CRDS = {path.stem: document for path in sorted((REPO_ROOT / "crds").glob("*.yaml"))
        for document in [next(yaml.safe_load_all(path.read_text()))] if document["kind"] == "CustomResourceDefinition"}
NAMES = [crd["metadata"]["name"] for crd in CRDS.values()]
MAX_DEFAULT_COLUMNS = 8  # NAME and the printer columns kubectl shows without -o wide
PAST_TIMES = (".status.lastScheduleTime", ".status.lastSuccessfulTime", ".metadata.creationTimestamp")


def version(name: str) -> dict[str, Any]:
    [served] = CRDS[name]["spec"]["versions"]
    return served  # type: ignore[no-any-return]


def descriptions(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, str]]:
    """(path, description) of every field of a schema, depth first."""
    for name, sub in (schema.get("properties") or {}).items():
        here = f"{path}.{name}" if path else name
        yield here, " ".join(str(sub.get("description", "")).split())
        yield from descriptions(sub, here)
        if isinstance(sub.get("items"), dict):
            yield from descriptions(sub["items"], f"{here}[]")


ALL_DESCRIPTIONS = [(f"{name}: {path}", text) for name in CRDS
                    for path, text in descriptions(version(name)["schema"]["openAPIV3Schema"]) if text]


@pytest.mark.parametrize("name", sorted(CRDS))
def test_kubectl_get_shows_at_most_8_columns_the_rest_with_o_wide_and_past_times_relative(name: str) -> None:
    columns = version(name)["additionalPrinterColumns"]
    shown = [column["name"] for column in columns if not column.get("priority", 0)]
    assert 1 + len(shown) <= MAX_DEFAULT_COLUMNS, shown
    assert all(column.get("priority", 0) in (0, 1) for column in columns)
    for column in columns:
        if column["jsonPath"] in PAST_TIMES:
            assert column["type"] == "date", f"{column['name']}: a time past shows as an age, like AGE"


def test_cronschedules_default_columns_are_cronjobs_and_the_next_fire() -> None:
    shown = [column["name"] for column in version("cronschedule")["additionalPrinterColumns"]
             if not column.get("priority", 0)]
    assert shown == ["Ready", "Schedule", "Suspend", "Active", "Last Schedule", "Next Fire", "Age"]


# Words a description may not say, with why the code contradicts them: (pattern, the behaviour).
CONTRADICTED = [
    (r"(?i)operator (launches|starts|creates)[^.;]*nominal minute|operator (does not|doesn't|never) jitter"
     r"|jitter[^.]*(only|applied) by the local runner|applied by the local runner[^.]*operator",
     "the operator jitters: it creates the Job suspended and resumes it at its second "
     "(test_the_operator_jitters, tests/kube/test_operator.py::test_jitter_holds_the_job_suspended...)"),
    (r"(?i)(operator|local runner)[^.;]*\b(ignores|does not honou?r|is not applied)\b",
     "a field one driver ignores is said by the runner's notices, not denied in the schema"),
]


@pytest.mark.parametrize("pattern, behaviour", CONTRADICTED)
def test_no_field_description_says_what_the_code_contradicts(pattern: str, behaviour: str) -> None:
    wrong = [where for where, text in ALL_DESCRIPTIONS if re.search(pattern, text)]
    assert not wrong, f"{wrong}: {behaviour}"


def test_the_jitter_description_says_the_operator_applies_it() -> None:
    [(_, text)] = [(where, text) for where, text in ALL_DESCRIPTIONS if where.endswith("spec.jitterSeconds")]
    assert "operator" in text and "suspended" in text


def test_the_operator_jitters_a_job_held_for_its_second_is_created_suspended() -> None:
    """What the jitter description states, on the operator's Job builder."""
    schedule = {"metadata": {"name": "spread", "namespace": "team-a", "uid": "u"}, "spec": {}}
    template = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "a"}]}}}}
    held = job_manifest(schedule, template, JobLaunch(number=1, scheduled=60, started=60, start_at=3600 + 400))
    assert held["spec"].get("suspend") is True


def schema_of(path: str) -> dict[str, Any]:
    node: dict[str, Any] = version("cronschedule")["schema"]["openAPIV3Schema"]
    for step in path.split("."):
        node = node["properties"][step]
    return node


# The readers' defaults and bounds (cronctl.manifest, cronctl.core.spec), field by field.
DEFAULTS = {"spec.concurrencyPolicy": "Allow", "spec.catchUp": "Latest", "spec.daylightSaving": "Vixie",
            "spec.jitterSeconds": 0, "spec.missedSchedulesLimit": MAX_MISSED,
            "spec.upcomingTimes": manifest.DEFAULT_UPCOMING,
            "spec.successfulJobsHistoryLimit": DEFAULT_KEEP_SUCCEEDED, "spec.failedJobsHistoryLimit": DEFAULT_KEEP_FAILED}
MAXIMUMS = {"spec.jitterSeconds": manifest.MAX_JITTER_SECONDS, "spec.missedSchedulesLimit": manifest.MAX_MISSED_LIMIT,
            "spec.upcomingTimes": manifest.MAX_UPCOMING}


@pytest.mark.parametrize("path, default", sorted(DEFAULTS.items()))
def test_each_schema_default_is_the_readers(path: str, default: object) -> None:
    assert schema_of(path).get("default") == default


@pytest.mark.parametrize("path, maximum", sorted(MAXIMUMS.items()))
def test_each_schema_maximum_is_the_readers(path: str, maximum: int) -> None:
    assert schema_of(path).get("maximum") == maximum


def test_the_time_zone_description_says_the_readers_default() -> None:
    text = " ".join(schema_of("spec.timeZone")["description"].split())
    assert "Defaults to UTC" in text
    spec = manifest.read_manifest(yaml.safe_load((REPO_ROOT / "examples" / "cronschedules" / "heartbeat.yaml")
                                                 .read_text()), 0)
    assert spec.job.options.tz == UTC


def test_the_generated_reference_shows_defaults_and_bounds() -> None:
    page = (REPO_ROOT / "docs" / "reference" / "cronschedule.md").read_text()
    assert "| `spec.jitterSeconds` | integer | `0` | 0 to 3600 |" in page
    assert "| `spec.concurrencyPolicy` | string: `Allow`, `Forbid`, `Replace`, `WaitForLast` | `\"Allow\"` |" in page
    assert "| `spec.schedules` | array of string |  | 1 to 20 items, each 1 to 256 characters |" in page
    assert "| NEXT FIRE | always |" in page and "| TIME ZONE | `-o wide` |" in page
    pools = (REPO_ROOT / "docs" / "reference" / "cronpool.md").read_text()
    assert "| `spec.workers` | integer |  | 1 to 10000 |" in pools


DOCS = sorted((REPO_ROOT / "docs").rglob("*.md")) + [REPO_ROOT / "charts" / "cronctl" / "README.md.gotmpl",
                                                     REPO_ROOT / "charts" / "cronctl" / "templates" / "NOTES.txt"]


def blocks(text: str) -> list[str]:
    """The fenced code blocks of a page, and its inline code spans."""
    return re.findall(r"```.*?```", text, re.DOTALL) + re.findall(r"`[^`\n]+`", re.sub(r"```.*?```", "", text,
                                                                                     flags=re.DOTALL))


@pytest.mark.parametrize("page", DOCS, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_every_command_that_hands_over_applies_or_deletes_a_crd_names_both(page: Path) -> None:
    """Followed as written, a handover of one CRD leaves helm install failing on the other's
    ownership; an apply of one leaves the operator without pools."""
    for code in blocks(page.read_text()):
        if re.search(r"kubectl (label|annotate|delete) crd|kubectl get crd", code) or (
                "kubectl apply" in code and "crds/" in code):
            named = [name for name in NAMES if name in code] + [f"crds/{stem}.yaml" for stem in CRDS
                                                                if f"crds/{stem}.yaml" in code]
            if re.search(r"crds/(?![\w.])", code):  # the folder: both
                named = NAMES
            assert len(named) == len(NAMES), f"{page.name}: {code!r} names {named}, not both CRDs"


NAMING_PAGES = [*DOCS, REPO_ROOT / "charts" / "cronctl" / "values.yaml", REPO_ROOT / "charts" / "cronctl" / "README.md",
                REPO_ROOT / "README.md"]


@pytest.mark.parametrize("page", NAMING_PAGES, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_a_page_that_names_one_crd_names_the_other(page: Path) -> None:
    """The chart installs, keeps and hands over both; a page that names one for any of that names both."""
    text = page.read_text()
    named = [name for name in NAMES if name in text]
    assert len(named) in (0, len(NAMES)), f"{page.name} names only {named}"
