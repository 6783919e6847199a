#!/usr/bin/env python3
"""Copy into the charts what they take from the rest of the repository, and the zones into the CRD.

A chart must hold real files (helm lint warns about a symbolic link, and a
packaged chart carries no link), so three are copies, written here and checked
current by tests/charts:

- ``charts/cronctl/files/cronschedule-crd.yaml``: ``crds/cronschedule.yaml``,
  byte for byte. ``templates/crd.yaml`` renders it (``crds.enabled``), so that
  ``helm upgrade`` upgrades the CRD, which Helm never does for ``crds/``.
- ``charts/cronctl/files/cronpool-crd.yaml``: ``crds/cronpool.yaml``, the same way
  (``templates/crd.yaml`` renders both).
- ``charts/cronschedule-fleet/files/time-zones.txt``: the zone names of the tz
  database the operator reads zones from (the ``tzdata`` package, a dependency
  of cronctl), one a line, less those that depend on the host. The fleet chart
  takes a ``timeZone`` from this list or a UTC offset, as the operator does.

The CRD's rule on ``spec.timeZone`` (in ``crds/cronschedule.yaml`` itself, from
the comment that says so to the end of its ``x-kubernetes-validations``) lists
the same zone names, so that the API server refuses an unknown zone at create
(422) as it does a CronJob's; ``cronctl.manifest`` reads its reader's list of
zones back from that rule.

Run it after editing ``crds/cronschedule.yaml`` or upgrading ``tzdata``, with
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
ZONE_RULE_INDENT = 18  # spec.timeZone's keys in crds/cronschedule.yaml


def zone_rule() -> list[str]:
    """The lines of spec.timeZone's ``x-kubernetes-validations`` in the CRD: an offset or one of
    tzdata's zone names, the names wrapped to lines of at most 110 characters."""
    version, names = tzdata_zones()
    pad = " " * ZONE_RULE_INDENT
    lines = [f"{pad}{ZONE_RULE_MARK}: a UTC offset, or a zone name of the tz database (tzdata {version},",
             f"{pad}# less {', '.join(sorted(HOST_DEPENDENT))}), written by {COMMAND}.",
             f"{pad}x-kubernetes-validations:",
             f"{pad}  - rule: >-",
             f"{pad}      self.matches('{OFFSET_PATTERN}') || self in ["]
    line = ""
    for index, name in enumerate(names):
        item = f"'{name}'" + ("," if index < len(names) - 1 else "]")
        if line and len(pad) + 6 + len(line) + 1 + len(item) > 110:
            lines.append(f"{pad}      {line}")
            line = ""
        line = f"{line} {item}" if line else item
    lines.append(f"{pad}      {line}")
    lines += [f"{pad}    messageExpression: >-",
              f"{pad}      \"unknown time zone '\" + self + \"': name a zone of the tz database (tzdata {version}),",
              f"{pad}      such as Europe/Berlin or UTC, or a UTC offset such as +05:30\""]
    return lines


def with_zone_rule(crd: str) -> str:
    """The CRD's text with spec.timeZone's rule as ``zone_rule`` writes it: the lines from its
    mark to the next key of the schema replaced."""
    lines = crd.split("\n")
    marks = [i for i, line in enumerate(lines) if line.strip().startswith(ZONE_RULE_MARK)]
    if len(marks) != 1:
        sys.exit(f"{COMMAND}: {CRD_SOURCE.relative_to(ROOT)} needs one line '{ZONE_RULE_MARK}' under spec.timeZone")
    start = end = marks[0]
    while end + 1 < len(lines) and (len(lines[end + 1]) - len(lines[end + 1].lstrip()) >= ZONE_RULE_INDENT
                                    or not lines[end + 1].strip()):
        end += 1
    return "\n".join([*lines[:start], *zone_rule(), *lines[end + 1:]])


def expected() -> dict[Path, bytes]:
    """What each copy must hold (the CRD itself with its zone rule current)."""
    crd = with_zone_rule(CRD_SOURCE.read_text(encoding="utf-8")).encode("utf-8")
    return {CRD_SOURCE: crd, CRD_COPY: crd, POOL_CRD_COPY: POOL_CRD_SOURCE.read_bytes(),
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
