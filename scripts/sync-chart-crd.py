#!/usr/bin/env python3
"""Copy into the charts what they take from the rest of the repository, and the zones into the policy.

A chart must hold real files (helm lint warns about a symbolic link, and a
packaged chart carries no link), so three are copies, written here and checked
current by tests/charts:

- ``charts/cronctl/files/cronschedule-crd.yaml``: ``crds/cronschedule.yaml``,
  byte for byte. ``templates/crd.yaml`` renders it (``crds.enabled``), so that
  ``helm upgrade`` upgrades the CRD, which Helm never does for ``crds/``.
- ``charts/cronctl/files/cronpool-crd.yaml``: ``crds/cronpool.yaml``, the same way
  (``templates/crd.yaml`` renders both).
- ``charts/cronctl/files/cronschedule-policy.yaml``: ``crds/cronschedule-policy.yaml``
  (the CronSchedule's ValidatingAdmissionPolicy and its binding), byte for byte;
  ``templates/validatingadmissionpolicy.yaml`` renders it with the CRDs.
- ``charts/cronschedule-fleet/files/time-zones.txt``: the zone names of the tz
  database the operator reads zones from (the ``tzdata`` package, a dependency
  of cronctl), one a line, less those that depend on the host. The fleet chart
  takes a ``timeZone`` from this list or a UTC offset, as the operator does.

The policy's rule on ``spec.timeZone`` (in ``crds/cronschedule-policy.yaml``
itself, from the comment that says so to the end of its ``validations``, which
it closes) lists the same zone names, so that the API server refuses an
unknown zone at create (422) as it does a CronJob's; ``cronctl.manifest``
reads its reader's list of zones back from that rule. (Until issue 47 the rule
was the CRD's own, evaluated on every status write too.)

Run it after editing ``crds/``, or upgrading ``tzdata``, with
the project's Python (``.venv/bin/python scripts/sync-chart-crd.py``);
``--check`` writes nothing and exits 1 naming each copy that is not current.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRD_SOURCE = ROOT / "crds" / "cronschedule.yaml"
CRD_COPY = ROOT / "charts" / "cronctl" / "files" / "cronschedule-crd.yaml"
POOL_CRD_SOURCE = ROOT / "crds" / "cronpool.yaml"
POOL_CRD_COPY = ROOT / "charts" / "cronctl" / "files" / "cronpool-crd.yaml"
POLICY_SOURCE = ROOT / "crds" / "cronschedule-policy.yaml"
POLICY_COPY = ROOT / "charts" / "cronctl" / "files" / "cronschedule-policy.yaml"
ZONES_COPY = ROOT / "charts" / "cronschedule-fleet" / "files" / "time-zones.txt"
# Names in the tz database that are no fixed zone (the operator refuses them too).
HOST_DEPENDENT = frozenset({"Factory", "localtime", "posixrules"})
COMMAND = "scripts/sync-chart-crd.py"


def tzdata_zones() -> tuple[str, list[str]]:
    """(the tzdata package's version, its zone names (its ``zones`` file), sorted, less the
    host-dependent ones)."""
    try:
        from importlib import metadata, resources

        names = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8").split()
        version = metadata.version("tzdata")
    except (ImportError, OSError) as error:
        sys.exit(f"{COMMAND}: the tzdata package is needed (run it with .venv/bin/python): {error}")
    return version, sorted(set(names) - HOST_DEPENDENT)


def zone_names() -> list[str]:
    version, names = tzdata_zones()
    return [f"# The tz database's zone names (tzdata {version}), written by {COMMAND}.", *names]


# The UTC offsets the operator takes (core.zones.parse_offset): hours to 14, minutes 00/15/30/45.
OFFSET_PATTERN = "^[+-]((0[0-9]|1[0-3]):(00|15|30|45)|14:00)$"
ZONE_RULE_MARK = "# The zones spec.timeZone takes"
ZONE_RULE_INDENT = 4  # the policy's list of validations, whose last item the zone rule is


def zone_rule() -> list[str]:
    """The lines of spec.timeZone's validation in the policy: none, an offset or one of tzdata's
    zone names, the names wrapped to lines of at most 110 characters."""
    version, names = tzdata_zones()
    pad = " " * ZONE_RULE_INDENT
    lines = [f"{pad}{ZONE_RULE_MARK}: a UTC offset, or a zone name of the tz database (tzdata {version},",
             f"{pad}# less {', '.join(sorted(HOST_DEPENDENT))}), written by {COMMAND}.",
             f"{pad}- expression: >-",
             f"{pad}    !has(object.spec.timeZone) || object.spec.timeZone.matches('{OFFSET_PATTERN}')",
             f"{pad}    || object.spec.timeZone in ["]
    line = ""
    for index, name in enumerate(names):
        item = f"'{name}'" + ("," if index < len(names) - 1 else "]")
        if line and len(pad) + 4 + len(line) + 1 + len(item) > 110:
            lines.append(f"{pad}    {line}")
            line = ""
        line = f"{line} {item}" if line else item
    lines.append(f"{pad}    {line}")
    lines += [f"{pad}  messageExpression: >-",
              f"{pad}    \"spec.timeZone: unknown time zone '\" + object.spec.timeZone + \"': name a zone of the tz",
              f"{pad}    database (tzdata {version}), such as Europe/Berlin or UTC, or a UTC offset such as +05:30\""]
    return lines


def with_zone_rule(policy: str) -> str:
    """The policy's text with spec.timeZone's rule as ``zone_rule`` writes it: the lines from its
    mark to the end of the list of validations replaced."""
    lines = policy.split("\n")
    marks = [i for i, line in enumerate(lines) if line.strip().startswith(ZONE_RULE_MARK)]
    if len(marks) != 1:
        sys.exit(f"{COMMAND}: {POLICY_SOURCE.relative_to(ROOT)} needs one line '{ZONE_RULE_MARK}' closing its "
                 "validations")
    start = end = marks[0]
    while end + 1 < len(lines) and (len(lines[end + 1]) - len(lines[end + 1].lstrip()) >= ZONE_RULE_INDENT
                                    or not lines[end + 1].strip()):
        end += 1
    return "\n".join([*lines[:start], *zone_rule(), *lines[end + 1:]])


def expected() -> dict[Path, bytes]:
    """What each copy must hold (the policy itself with its zone rule current)."""
    policy = with_zone_rule(POLICY_SOURCE.read_text(encoding="utf-8")).encode("utf-8")
    return {POLICY_SOURCE: policy, POLICY_COPY: policy, CRD_COPY: CRD_SOURCE.read_bytes(),
            POOL_CRD_COPY: POOL_CRD_SOURCE.read_bytes(),
            ZONES_COPY: ("\n".join(zone_names()) + "\n").encode("utf-8")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a copy is not current")
    args = parser.parse_args(argv)
    stale = []
    for path, content in expected().items():
        current = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        if current == content:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink():
                path.unlink()
            path.write_bytes(content)
            print(f"wrote {path.relative_to(ROOT)}")
    if args.check and stale:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is not current: run {COMMAND}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
