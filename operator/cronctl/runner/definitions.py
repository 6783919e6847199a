"""CronSchedule manifests read from a folder, for the single-node runner.

``cronctl local DIR`` runs the same manifests the operator reads. This module
turns the ``*.yaml`` / ``*.yml`` files of one folder (not its subfolders;
names starting with a dot are skipped, as editors' lock and swap files are)
into plain :class:`Definition` records: the schedule's name, the object as
written, and what the runner needs to start a process, taken from the Job
template's first container: ``command``, ``args`` and ``env``. The image
cannot be honoured on a bare machine; it is kept on the record and
:func:`image_notice` words the one notice about it.

Judging the spec is not this module's job: the runner reads each object with
:func:`cronctl.manifest.read_manifest`, the CRD's schema then the core's
checks, as for any object no API server has seen. What this module refuses
is only what that reader does not cover: an object that cannot be named
(``metadata.name`` missing or not a DNS subdomain), another ``apiVersion``,
a name defined twice, and the first container as the runner needs it
(``command`` given, ``args`` and literal ``env`` values as strings; a
``valueFrom`` refers to cluster objects the runner does not have). Where the
schema has something to say on the way to the container (no ``jobTemplate``,
say), the record has no command and the reader refuses the object.

Nothing here raises for a bad manifest. Every problem is a
:class:`DefinitionError` naming the file, the object and the field path,
e.g. ``x.yaml: CronSchedule 'nightly': spec.jobTemplate.spec.template.spec.
containers[0].command: missing``, and one bad object or file does not keep
the others from loading. A file that is not valid YAML is refused whole
(what follows the error cannot be read, and half a file is a surprise).
Objects of other kinds (a ConfigMap next to the schedules) are skipped with
a notice, and so are the containers after the first.

The folder's scan is :mod:`.folder`'s; the verdict on what it read, :mod:`.judge`'s.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..core.spec import JobSpec
from ..manifest import POOL_KIND, PoolSpec, SpecError, read_pool, yaml_problem
from .expansion import expand

# libyaml's loader where PyYAML was built with it: 10x faster on a large manifest
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

API_VERSION = "cronctl.dev/v1"
KIND = "CronSchedule"
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
CONTAINER = "spec.jobTemplate.spec.template.spec.containers[0]"


@dataclass(frozen=True)
class Definition:
    name: str
    file: Path
    spec: dict[str, Any]
    command: list[str]  # empty only when the object's schema has a problem on the way to it
    args: list[str]
    env: dict[str, str]
    image: str | None
    body: dict[str, Any] = field(default_factory=dict)  # the whole object, for read_manifest
    working_dir: str | None = None  # the container's workingDir (None: the runner's folder)
    active_deadline_seconds: int | None = None  # the Job's activeDeadlineSeconds
    backoff_limit: int | None = None  # the Job's backoffLimit (None: not given, the run is tried once)


@dataclass(frozen=True)
class DefinitionError:
    file: Path
    object: str | None  # "CronSchedule 'nightly'", or "document 2" when it has no name
    path: str | None    # the field, e.g. "spec.jobTemplate...containers[0].command"
    reason: str
    schedule: str | None = None  # the schedule this refuses, when the object names one

    def __str__(self) -> str:
        return ": ".join(str(part) for part in (self.file, self.object, self.path, self.reason)
                         if part is not None)


@dataclass
class LoadedDefinitions:
    definitions: list[Definition] = field(default_factory=list)
    errors: list[DefinitionError] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    pools: dict[str, PoolSpec] = field(default_factory=dict)  # the CronPools, by name
    pool_files: dict[str, Path] = field(default_factory=dict)  # the file each pool was read from


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
    reports the second as an error (of no schedule: the first one stands).
    """
    return combine([load_file(path) for path in manifest_files(folder)])


def combine(files: list[LoadedDefinitions], owners: Mapping[str, str] | None = None) -> LoadedDefinitions:
    """The loads of a folder's files, in file name order, as the folder's load.

    A name defined in several files belongs to the file that defined it first, as ``owners``
    remembers it (schedule -> file name; the book's ``sources``): a copy of a manifest in use
    (``backup-report.yaml``, ``report.old.yaml``) is the one named as the duplicate and ignored,
    whatever its name sorts as. A name no owner is known for belongs to the first file in order.
    """
    owners = owners or {}
    result = LoadedDefinitions()
    defining: dict[str, list[Definition]] = {}
    for loaded in files:
        result.errors.extend(loaded.errors)
        result.notices.extend(loaded.notices)
        for name, pool in loaded.pools.items():
            if name in result.pools:
                result.errors.append(DefinitionError(loaded.pool_files[name], f"{POOL_KIND} {name!r}",
                                                     "metadata.name", f"already defined in {result.pool_files[name]}"))
            else:
                result.pools[name], result.pool_files[name] = pool, loaded.pool_files[name]
        for definition in loaded.definitions:
            defining.setdefault(definition.name, []).append(definition)
    winners = {name: next((d for d in found if d.file.name == owners.get(name)), found[0])
               for name, found in defining.items()}
    for loaded in files:
        for definition in loaded.definitions:
            winner = winners[definition.name]
            if definition is winner:
                result.definitions.append(definition)
            else:
                result.errors.append(DefinitionError(definition.file, f"{KIND} {definition.name!r}",
                                                     "metadata.name", f"already defined in {winner.file}"))
    notice = image_notice(result.definitions)
    if notice is not None:
        result.notices.append(notice)
    return result


def load_file(path: str | Path) -> LoadedDefinitions:
    """The CronSchedules of one (multi-document) YAML file."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:  # refused unread: parsing 10 MB of YAML would hold up every schedule
            return _too_large(path, size)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return LoadedDefinitions(errors=[DefinitionError(path, None, None, f"cannot read: {error}")])
    return load_text(text, path)


def _too_large(path: Path, size: int) -> LoadedDefinitions:
    return LoadedDefinitions(errors=[DefinitionError(path, None, None, f"{_mib(size)}: larger than the API server "
                                                     f"takes in a request ({_mib(MAX_FILE_BYTES)}); not read")])


def load_text(text: str, path: Path) -> LoadedDefinitions:
    """The CronSchedules of a (multi-document) YAML text, named ``path`` in what it says (a file's,
    or ``-`` for standard input)."""
    result = LoadedDefinitions()
    size = len(text.encode("utf-8", "replace"))
    if size > MAX_FILE_BYTES:
        return _too_large(path, size)
    try:
        documents = list(yaml.load_all(text, Loader=SAFE_LOADER))
    except yaml.YAMLError as error:
        result.errors.append(DefinitionError(path, None, None, f"not valid YAML: {yaml_problem(error)}"))
        return result
    if all(document is None for document in documents):
        result.notices.append(f"{path}: empty: no CronSchedule in it")
        return result
    for number, document in enumerate(documents, start=1):
        if document is not None:  # else an empty document, as between two "---"
            _add_document(result, path, number, document)
    return result


def _add_document(result: LoadedDefinitions, path: Path, number: int, document: object) -> None:
    """One document of a text: a CronSchedule or a CronPool added to ``result``, or why not said in it."""
    if not isinstance(document, dict):
        result.errors.append(DefinitionError(path, f"document {number}", None, "not a mapping"))
        return
    kind, name = document.get("kind"), _name_of(document)
    label = f"{kind if isinstance(kind, str) else 'object'} {name!r}" if name else f"document {number}"
    stored = len(json.dumps(document, default=str))
    if stored > MAX_OBJECT_BYTES:
        result.errors.append(DefinitionError(path, label, None, f"{_mib(stored)} as JSON: larger than an "
                                             f"object the API server stores ({_mib(MAX_OBJECT_BYTES)})"))
    elif kind == POOL_KIND:
        _add_pool(result, path, label, document)
    elif kind != KIND:
        result.notices.append(f"{path}: {label}: skipped, kind {kind!r} is not {KIND} or {POOL_KIND}")
    else:
        _add_schedule(result, path, label, document)


def _name_of(document: Mapping[str, Any]) -> str | None:
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) and name else None


def _add_schedule(result: LoadedDefinitions, path: Path, label: str, document: dict[str, Any]) -> None:
    """A CronSchedule's definition added to ``result``, with what the local runner does not honour
    of it; or why it is refused."""
    name = _name_of(document)
    named = name if name is not None and _DNS_SUBDOMAIN.fullmatch(name) else None
    try:
        if document.get("apiVersion") != API_VERSION:
            raise _Refused("apiVersion", f"{document.get('apiVersion')!r} is not {API_VERSION}")
        definition, containers = _definition(path, document)
    except _Refused as refused:
        result.errors.append(DefinitionError(path, label, refused.path, refused.reason, named))
        return
    result.definitions.append(definition)
    ignored = not_honoured(document)
    if ignored:
        result.notices.append(f"{path}: {label}: not honoured by the local runner (it runs the command "
                              f"on this machine): {', '.join(ignored)}")
    if containers > 1:
        result.notices.append(f"{path}: {label}: only the first container runs locally, "
                              f"{containers - 1} more ignored")


def _add_pool(result: LoadedDefinitions, path: Path, label: str, document: dict[str, Any]) -> None:
    """A CronPool, read as the API server would judge it; a refusal names file, pool and field."""
    try:
        if document.get("apiVersion") != API_VERSION:
            raise SpecError("apiVersion", f"{document.get('apiVersion')!r} is not {API_VERSION}", "InvalidManifest")
        pool = read_pool(document)
    except SpecError as error:
        result.errors.append(DefinitionError(path, label, error.field, error.message.partition(": ")[2]
                                             or error.message))
        return
    if pool.name in result.pools:
        result.errors.append(DefinitionError(path, label, "metadata.name", f"already defined in {path}"))
        return
    result.pools[pool.name] = pool
    result.pool_files[pool.name] = path


# What the API server takes: a request body of 3 MiB at most, an object of 1.5 MiB at most (etcd's
# request limit). A manifest past either could never be applied to a cluster.
MAX_FILE_BYTES = 3 * 1024 * 1024
MAX_OBJECT_BYTES = 3 * 1024 * 1024 // 2


def _mib(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MiB"


def _definition(path: Path, document: dict[str, Any]) -> tuple[Definition, int]:
    """The record of one CronSchedule object and how many containers it has."""
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        raise _Refused("metadata", "missing" if metadata is None else "not a mapping")
    name = metadata.get("name")
    if name is None:
        raise _Refused("metadata.name", "missing")
    if not isinstance(name, str) or _DNS_SUBDOMAIN.fullmatch(name) is None:
        # Its length is the CRD's rule, judged with the rest of the object by read_manifest.
        raise _Refused("metadata.name", f"{name!r} must be lower-case letters, digits, '-' and '.', "
                                        "starting and ending with a letter or digit")
    spec = document.get("spec")
    containers = _containers(spec)
    if containers is None:  # the schema refuses the object (read_manifest says why)
        return Definition(name, path, spec if isinstance(spec, dict) else {}, [], [], {}, None, document), 0
    container = containers[0]
    env = _env(container.get("env"))
    return Definition(
        name=name, file=path, spec=spec,  # type: ignore[arg-type]  # _containers found a mapping
        # As written: their $(VAR) may name the run's CRONCTL_* facts, expanded at each start.
        command=_strings(container.get("command"), f"{CONTAINER}.command", required=True),
        args=_strings(container.get("args"), f"{CONTAINER}.args", required=False),
        env=env,
        image=container.get("image") if isinstance(container.get("image"), str) else None,
        body=document,
        working_dir=_working_dir(container.get("workingDir")),
        active_deadline_seconds=_active_deadline(spec),
        backoff_limit=_backoff_limit(spec),
    ), len(containers)


def _active_deadline(spec: Any) -> int | None:
    """The Job's ``activeDeadlineSeconds``: the run is stopped once it has run that long."""
    value = spec["jobTemplate"]["spec"].get("activeDeadlineSeconds")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise _Refused("spec.jobTemplate.spec.activeDeadlineSeconds", f"{value!r} is not a whole number of "
                                                                      "seconds >= 1")
    return value


def _backoff_limit(spec: Any) -> int | None:
    """The Job's ``backoffLimit``: how many failed tries a run retries before it is failed."""
    value = spec["jobTemplate"]["spec"].get("backoffLimit")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _Refused("spec.jobTemplate.spec.backoffLimit", f"{value!r} is not a whole number >= 0")
    return value


def _working_dir(value: Any) -> str | None:
    """The container's ``workingDir``: where its command runs (relative: to the runner's folder)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _Refused(f"{CONTAINER}.workingDir", f"{value!r} is not a string (quote it)")
    return value


# What a Job template says that the runner does (or that changes nothing on one machine); any
# other field is named in a notice (``not_honoured``), never dropped in silence.
HONOURED = {
    "spec.jobTemplate.spec": {"template", "activeDeadlineSeconds", "backoffLimit"},
    "spec.jobTemplate.spec.template.spec": {"containers", "restartPolicy"},
    CONTAINER: {"name", "image", "imagePullPolicy", "command", "args", "env", "workingDir",
                "terminationMessagePath", "terminationMessagePolicy"},
}


def not_honoured(document: dict[str, Any]) -> list[str]:
    """The fields of the Job template the local runner does not carry out, by their paths."""
    node: Any = document
    found = []
    for path, steps in (("spec.jobTemplate.spec", ("spec", "jobTemplate", "spec")),
                        ("spec.jobTemplate.spec.template.spec", ("template", "spec")),
                        (CONTAINER, ("containers", 0))):
        for step in steps:
            node = node[step] if isinstance(node, (dict, list)) and _has(node, step) else None
        if not isinstance(node, dict):
            break
        found += [f"{path}.{key}" for key in sorted(node) if key not in HONOURED[path]]
    return found  # (an env entry's valueFrom is refused outright: the variable would be missing)


def _has(node: dict[str, Any] | list[Any], step: str | int) -> bool:
    return step in node if isinstance(node, dict) else isinstance(step, int) and step < len(node)


def _containers(spec: Any) -> list[dict[str, Any]] | None:
    """The template's containers, the first one a mapping; None where the CRD's schema has a
    problem on the way (spec, jobTemplate, its spec and template are the schema's to judge)."""
    node: Any = spec
    for step in ("jobTemplate", "spec", "template"):
        if not isinstance(node, dict) or not isinstance(node.get(step), dict):
            return None
        node = node[step]
    where = "spec.jobTemplate.spec.template"
    for step in ("spec", "containers"):
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
    return node


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
        env[name] = expand(item, env)  # $(VAR) of the entries before it; a later entry of a name wins
    return env


def image_notice(definitions: list[Definition]) -> str | None:
    """The one notice that images are ignored, or None when no definition names one."""
    with_image = [d for d in definitions if d.image]
    if not with_image:
        return None
    names = ", ".join(f"{d.name} ({d.image})" for d in with_image)
    return (f"the local runner ignores container images and runs each command on this machine: {names}")


def wrapper_timeout(definition: Definition) -> int | None:
    """The seconds after which a run of the schedule is timed out by its wrapper, on the run's own
    (monotonic) time, as systemd's ``RuntimeMaxSec=``: its ``timeoutMinutes`` when it has no
    ``maxRetries``. With retries the timeout covers the waits between attempts, which no wrapper
    sees: the core keeps it, on the runner's clock (None here)."""
    minutes, retries = definition.spec.get("timeoutMinutes"), definition.spec.get("maxRetries") or 0
    if not isinstance(minutes, int) or isinstance(minutes, bool) or minutes < 1 or retries:
        return None
    return minutes * 60


def timed_by_core(job: JobSpec) -> JobSpec:
    """The schedule as the runner hands it to the core: no timeout when its runs' wrappers time them
    (no ``maxRetries``, see :func:`wrapper_timeout`), so a step of the clock expires no run."""
    if job.options.timeout is None or job.options.retries:
        return job
    return dataclasses.replace(job, options=dataclasses.replace(job.options, timeout=None))
