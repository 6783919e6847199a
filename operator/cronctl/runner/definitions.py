"""CronSchedule manifests read from a folder, for the single-node runner.

``cronctl local DIR`` runs the same manifests the operator reads. This module
turns the ``*.yaml`` / ``*.yml`` files of one folder (not its subfolders;
names starting with a dot are skipped, as editors' lock and swap files are)
into plain :class:`Definition` records: the schedule's name, its ``spec`` as
written (judging it is the core's job), and what the runner needs to start a
process, taken from the Job template's first container: ``command``,
``args`` and ``env``. The image cannot be honoured on a bare machine; it is
kept on the record and :func:`image_notice` words the one notice about it.

Nothing here raises for a bad manifest. Every problem is a
:class:`DefinitionError` naming the file, the object and the field path,
e.g. ``x.yaml: CronSchedule 'nightly': spec.jobTemplate.spec.template.spec.
containers[0].command: missing``, and one bad object or file does not keep
the others from loading. A file that is not valid YAML is refused whole
(what follows the error cannot be read, and half a file is a surprise).
Objects of other kinds (a ConfigMap next to the schedules) are skipped with
a notice, and so are the containers after the first. Only literal ``env`` values are supported: ``valueFrom`` refers to
cluster objects the runner does not have, and is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

API_VERSION = "cronctl.dev/v1"
KIND = "CronSchedule"
MAX_NAME_LENGTH = 52  # the CRD's limit, so that names valid here are valid in the cluster
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
CONTAINER = "spec.jobTemplate.spec.template.spec.containers[0]"


@dataclass(frozen=True)
class Definition:
    name: str
    file: Path
    spec: dict[str, Any]
    command: list[str]
    args: list[str]
    env: dict[str, str]
    image: str | None


@dataclass(frozen=True)
class DefinitionError:
    file: Path
    object: str | None  # "CronSchedule 'nightly'", or "document 2" when it has no name
    path: str | None    # the field, e.g. "spec.jobTemplate...containers[0].command"
    reason: str

    def __str__(self) -> str:
        return ": ".join(str(part) for part in (self.file, self.object, self.path, self.reason)
                         if part is not None)


@dataclass
class LoadedDefinitions:
    definitions: list[Definition] = field(default_factory=list)
    errors: list[DefinitionError] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


class _Refused(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path, self.reason = path, reason


def manifest_files(folder: str | Path) -> list[Path]:
    root = Path(folder)
    if not root.is_dir():
        raise NotADirectoryError(f"{root}: not a folder")
    return sorted(p for p in root.iterdir()
                  if p.suffix in (".yaml", ".yml") and not p.name.startswith(".") and p.is_file())


def load_definitions(folder: str | Path) -> LoadedDefinitions:
    """Every CronSchedule in ``folder``, with the errors and notices of the load.

    A name defined twice keeps its first definition (in file name order) and
    reports the second as an error.
    """
    result = LoadedDefinitions()
    seen: dict[str, Path] = {}
    for path in manifest_files(folder):
        loaded = load_file(path)
        result.errors.extend(loaded.errors)
        result.notices.extend(loaded.notices)
        for definition in loaded.definitions:
            if definition.name in seen:
                result.errors.append(DefinitionError(path, f"{KIND} {definition.name!r}", "metadata.name",
                                                     f"already defined in {seen[definition.name]}"))
                continue
            seen[definition.name] = path
            result.definitions.append(definition)
    notice = image_notice(result.definitions)
    if notice is not None:
        result.notices.append(notice)
    return result


def load_file(path: str | Path) -> LoadedDefinitions:
    """The CronSchedules of one (multi-document) YAML file."""
    path = Path(path)
    result = LoadedDefinitions()
    try:
        documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError) as error:
        result.errors.append(DefinitionError(path, None, None, f"cannot read: {error}"))
        return result
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        result.errors.append(DefinitionError(path, None, None, f"not valid YAML: {where}{problem}"))
        return result
    for number, document in enumerate(documents, start=1):
        if document is None:
            continue  # an empty document, as between two "---"
        label = f"document {number}"
        if not isinstance(document, dict):
            result.errors.append(DefinitionError(path, label, None, "not a mapping"))
            continue
        kind, api_version = document.get("kind"), document.get("apiVersion")
        metadata = document.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        if isinstance(name, str) and name:
            label = f"{kind if isinstance(kind, str) else 'object'} {name!r}"
        if kind != KIND:
            result.notices.append(f"{path}: {label}: skipped, kind {kind!r} is not {KIND}")
            continue
        try:
            if api_version != API_VERSION:
                raise _Refused("apiVersion", f"{api_version!r} is not {API_VERSION}")
            definition = _definition(path, document)
        except _Refused as refused:
            result.errors.append(DefinitionError(path, label, refused.path, refused.reason))
            continue
        result.definitions.append(definition)
        containers = definition.spec["jobTemplate"]["spec"]["template"]["spec"]["containers"]
        if len(containers) > 1:
            result.notices.append(f"{path}: {label}: only the first container runs locally, "
                                  f"{len(containers) - 1} more ignored")
    return result


def _definition(path: Path, document: dict[str, Any]) -> Definition:
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        raise _Refused("metadata", "missing" if metadata is None else "not a mapping")
    name = metadata.get("name")
    if name is None:
        raise _Refused("metadata.name", "missing")
    if not isinstance(name, str) or len(name) > MAX_NAME_LENGTH or _DNS_SUBDOMAIN.fullmatch(name) is None:
        raise _Refused("metadata.name", f"{name!r} must be at most {MAX_NAME_LENGTH} lower-case letters, "
                                        "digits, '-' and '.', starting and ending with a letter or digit")
    spec = document.get("spec")
    if not isinstance(spec, dict):
        raise _Refused("spec", "missing" if spec is None else "not a mapping")
    container = _first_container(spec)
    return Definition(
        name=name, file=path, spec=spec,
        command=_strings(container.get("command"), f"{CONTAINER}.command", required=True),
        args=_strings(container.get("args"), f"{CONTAINER}.args", required=False),
        env=_env(container.get("env")),
        image=container.get("image") if isinstance(container.get("image"), str) else None,
    )


def _first_container(spec: dict[str, Any]) -> dict[str, Any]:
    node: Any = spec
    where = "spec"
    for step in ("jobTemplate", "spec", "template", "spec", "containers"):
        where = f"{where}.{step}"
        if not isinstance(node, dict) or step not in node or node[step] is None:
            raise _Refused(where, "missing")
        node = node[step]
    if not isinstance(node, list):
        raise _Refused(where, "not a list")
    if not node:
        raise _Refused(where, "empty: the local runner runs the first container")
    if not isinstance(node[0], dict):
        raise _Refused(CONTAINER, "not a mapping")
    return node[0]


def _strings(value: Any, where: str, required: bool) -> list[str]:
    if value is None:
        if required:
            raise _Refused(where, "missing (the local runner has no image entrypoint to fall back on)")
        return []
    if not isinstance(value, list):
        raise _Refused(where, f"not a list of strings but {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise _Refused(f"{where}[{index}]", f"{item!r} is not a string (quote it)")
    if required and not value:
        raise _Refused(where, "empty")
    return list(value)


def _env(value: Any) -> dict[str, str]:
    where = f"{CONTAINER}.env"
    if value is None:
        return {}
    if not isinstance(value, list):
        raise _Refused(where, "not a list")
    env: dict[str, str] = {}
    for index, entry in enumerate(value):
        here = f"{where}[{index}]"
        if not isinstance(entry, dict):
            raise _Refused(here, "not a mapping")
        name = entry.get("name")
        if not isinstance(name, str) or not name or "=" in name:
            raise _Refused(f"{here}.name", "missing" if name is None else f"{name!r} is not a variable name")
        if "valueFrom" in entry:
            raise _Refused(f"{here}.valueFrom", "not supported by the local runner, which has no cluster "
                                                "to read it from; give the value literally")
        item = entry.get("value", "")
        if not isinstance(item, str):
            raise _Refused(f"{here}.value", f"{item!r} is not a string (quote it)")
        env[name] = item  # a later entry of the same name wins, as in Kubernetes
    return env


def image_notice(definitions: list[Definition]) -> str | None:
    """The one notice that images are ignored, or None when no definition names one."""
    with_image = [d for d in definitions if d.image]
    if not with_image:
        return None
    names = ", ".join(f"{d.name} ({d.image})" for d in with_image)
    return (f"the local runner ignores container images and runs each command on this machine: {names}")
