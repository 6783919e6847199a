"""The SBOM of an image's root file system, as CycloneDX 1.5 JSON: its Debian packages (dpkg's status,
which scripts/image/make-rootfs.py writes for exactly the packages it copied) and its Python
distributions (every ``*.dist-info`` under ``/opt/cronctl``, as ``pip inspect`` would list them;
the image has no pip to ask). scripts/release writes it for the image it exports:

    python3 scripts/image/sbom.py ROOTFS NAME VERSION > sbom.cdx.json

Standard library only. The timestamp is SOURCE_DATE_EPOCH's when set, so a rebuild can match.
"""

from __future__ import annotations

import datetime
import email.parser
import json
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote


def debian_packages(rootfs: Path) -> list[dict[str, Any]]:
    status = (rootfs / "var" / "lib" / "dpkg" / "status").read_text()
    release = (rootfs / "etc" / "debian_version").read_text().strip().split(".")[0]
    components = []
    for stanza in status.strip().split("\n\n"):
        fields = dict(re.findall(r"^([\w-]+): ?(.*)$", stanza, re.M))
        name, version, arch = fields["Package"], fields["Version"], fields.get("Architecture", "all")
        purl = f"pkg:deb/debian/{name}@{quote(version, safe='')}?arch={arch}&distro=debian-{release}"
        components.append({"type": "library", "bom-ref": purl, "name": name, "version": version, "purl": purl,
                           "properties": [{"name": "cronctl:source", "value": "dpkg"}]})
    return components


def python_distributions(rootfs: Path) -> list[dict[str, Any]]:
    components = []
    for metadata_file in sorted((rootfs / "opt").glob("*/lib/python3*/site-packages/*.dist-info/METADATA")):
        metadata = email.parser.HeaderParser().parsestr(metadata_file.read_text(errors="replace"))
        name, version = metadata["Name"], metadata["Version"]
        purl = f"pkg:pypi/{re.sub(r'[-_.]+', '-', name).lower()}@{quote(version, safe='')}"
        component: dict[str, Any] = {"type": "library", "bom-ref": purl, "name": name, "version": version,
                                     "purl": purl, "properties": [{"name": "cronctl:source", "value": "python"}]}
        if metadata["License-Expression"]:
            component["licenses"] = [{"expression": metadata["License-Expression"]}]
        elif metadata["License"] and len(metadata["License"]) < 100:
            component["licenses"] = [{"license": {"name": metadata["License"]}}]
        components.append(component)
    return components


def sbom_of_rootfs(rootfs: Path, name: str, version: str) -> dict[str, Any]:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.datetime.fromtimestamp(int(epoch), datetime.UTC) if epoch else datetime.datetime.now(datetime.UTC)
    components = debian_packages(rootfs) + python_distributions(rootfs)
    return {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "serialNumber": f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'{name}/{version}/{len(components)}')}",
        "version": 1,
        "metadata": {
            "timestamp": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tools": {"components": [{"type": "application", "name": "cronctl scripts/image/sbom.py"}]},
            "component": {"type": "container", "bom-ref": f"{name}@{version}", "name": name, "version": version},
        },
        "components": components,
    }


if __name__ == "__main__":
    print(json.dumps(sbom_of_rootfs(Path(sys.argv[1]), sys.argv[2], sys.argv[3]), indent=2))
