#!/usr/bin/env python3
"""Copy into the charts what they take from the rest of the repository.

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


def zone_names() -> list[str]:
    """The tzdata package's zone names (its ``zones`` file), sorted, less the host-dependent ones."""
    try:
        from importlib import metadata, resources

        names = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8").split()
        version = metadata.version("tzdata")
    except (ImportError, OSError) as error:
        sys.exit(f"{COMMAND}: the tzdata package is needed (run it with .venv/bin/python): {error}")
    return [f"# The tz database's zone names (tzdata {version}), written by {COMMAND}.",
            *sorted(set(names) - HOST_DEPENDENT)]


def expected() -> dict[Path, bytes]:
    """What each copy must hold."""
    return {CRD_COPY: CRD_SOURCE.read_bytes(), POOL_CRD_COPY: POOL_CRD_SOURCE.read_bytes(),
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
