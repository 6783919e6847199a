"""``cronctl lint``: CronSchedule and CronPool manifests checked as a cluster, or the runner, takes them.

By default a manifest is judged as the API server and the operator judge it: the CRD's schema
(:func:`cronctl.manifest.schema_problems`, every problem of it), then the scheduler's rules
(:func:`cronctl.manifest.read_spec`), then the Job template as the API server will judge the
Jobs made of it (:mod:`.job_template`), and a schedule that never fires. A container without
``command`` (the image's entrypoint) and ``env[].valueFrom`` (a Secret's key) are fine there.
``runner=True`` (``cronctl lint --runner``) judges as ``cronctl local`` reads the files: the
runner's stricter rules on the container (:func:`.definitions.load_text`: a ``command``, literal
``env`` values) in place of the Job template's (the runner makes no Job, and ignores the image).
Every problem of a document is reported, each naming its file, its document (the object, or its
number) and its field; a name defined twice among the files is one (in a
namespace, for a cluster; at all, for the runner).

What is not a Kubernetes object is skipped with a note, never a failure, so that the command
runs over a repository's YAML as a pre-commit hook: a template (a file whose ``{{ }}`` actions
YAML cannot read, as most of a Helm chart's; a CronSchedule or CronPool with actions in its
values), a document that is a list or a scalar, a mapping with no ``kind``. A ``kind: List`` (as ``kubectl get -o yaml`` prints several objects) is read
item by item. Objects of other kinds are counted and left alone.

A warning is a manifest that is valid but likely means something else than it says: a bare
``$$`` in a command or its args (a crontab habit, the shell's process id), which the kubelet,
and the runner as it does, turns into a single ``$`` (``$$`` is its escape; ``$$$$`` gives ``$$``).
Warnings do not change the exit status.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml

from ..manifest import POOL_KIND, SpecError, as_stored, pool_problems, read_spec, schema_problems, yaml_problem
from .definitions import (API_VERSION, CONTAINER, KIND, MAX_FILE_BYTES, MAX_OBJECT_BYTES, SAFE_LOADER, load_text,
                          manifest_files)
from .job_template import template_problems

STDIN = Path("-")
# Exactly two $ not followed by "(": not the escape of a $(VAR) ($$(VAR)) nor of $$ ($$$$).
_BARE_DOLLARS = re.compile(r"(?<!\$)\$\$(?![$(])")
_TEMPLATE_ACTION = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_RENDER = "render it first, e.g. helm template ... | cronctl lint -"
_LIST_KINDS = ("List", f"{KIND}List", f"{POOL_KIND}List")
_PLACEHOLDER = "0 0 * * *"  # an expression in place of a bad one, so that the rest is judged too
_MAX_ROUNDS = 32  # the scheduler's rules judged again after each problem, at most this often


@dataclass(frozen=True)
class Problem:
    file: str
    document: str | None  # "CronSchedule 'nightly'", or "document 2" when it has no name
    field: str | None  # e.g. spec.schedule
    message: str

    def __str__(self) -> str:
        return ": ".join(part for part in (self.file, self.document, self.field, self.message) if part)

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "document": self.document, "field": self.field, "message": self.message}


@dataclass(frozen=True)
class Linted:
    schedules: list[str]  # the CronSchedules that passed, by name
    problems: list[Problem]
    warnings: list[Problem] = field(default_factory=list)  # valid, but likely not what was meant
    notes: list[str] = field(default_factory=list)  # what was skipped, and why
    others: int = 0  # objects of other kinds, left alone

    def to_json(self) -> dict[str, Any]:
        return {"valid": self.schedules, "problems": [problem.to_json() for problem in self.problems],
                "warnings": [warning.to_json() for warning in self.warnings], "notes": self.notes,
                "skipped": self.others}


@dataclass(frozen=True)
class _Object:
    """One object of a file: where it is, what it is called, the object."""
    file: str
    label: str  # "CronSchedule 'nightly'", "document 2", "document 1 item 3"
    body: dict[str, Any]

    @property
    def kind(self) -> Any:
        return self.body.get("kind")

    def name(self) -> str | None:
        metadata = self.body.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        return name if isinstance(name, str) and name else None

    def key(self, runner: bool) -> tuple[Any, ...]:
        """Two objects with equal keys are one name defined twice."""
        metadata = self.body.get("metadata")
        namespace = metadata.get("namespace") if isinstance(metadata, dict) and not runner else None
        return self.kind, namespace, self.name()


@dataclass
class _Report:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    valid: list[str] = field(default_factory=list)
    others: int = 0


def lint(paths: list[Path], now: int, stdin: str | None = None, runner: bool = False) -> Linted:
    """The problems of the files (``-``: ``stdin``; a folder: its manifests, as ``cronctl local``
    reads them), each judged at ``now`` (minutes since 1970) as a cluster takes them, or as the
    runner does (``runner``)."""
    files, problems = _files(paths)
    report = _Report(problems=problems)
    seen: dict[tuple[Any, ...], str] = {}
    for path in files:
        for found in _objects(path, stdin, report):
            if found.kind not in (KIND, POOL_KIND):
                report.others += 1
                continue
            before = len(report.problems)
            report.problems += _judged(found, now, runner)
            report.problems += _duplicate(found, seen, runner)
            if found.kind == KIND and len(report.problems) == before:
                report.valid.append(found.name() or found.label)
                report.warnings += _bare_dollars(found)
    return Linted(report.valid, report.problems, report.warnings, report.notes, report.others)


def _duplicate(found: _Object, seen: dict[tuple[Any, ...], str], runner: bool) -> list[Problem]:
    key = found.key(runner)
    if found.name() is None:
        return []
    if key in seen:
        return [Problem(found.file, found.label, "metadata.name", f"already defined in {seen[key]}")]
    seen[key] = found.file
    return []


def _files(paths: list[Path]) -> tuple[list[Path], list[Problem]]:
    """The files to read: each path given, a folder's ``.yaml`` and ``.yml`` files in its place
    (not its subfolders'), and a problem for a folder with none."""
    files: list[Path] = []
    problems: list[Problem] = []
    for path in paths:
        if path == STDIN or not path.is_dir():
            files.append(path)
            continue
        try:
            found = manifest_files(path)
        except OSError as error:  # a folder it may not list
            problems.append(Problem(str(path), None, None, f"cannot read: {error.strerror or error}"))
            continue
        if not found:
            problems.append(Problem(str(path), None, None, "no .yaml or .yml manifest in this folder "
                                                           "(its subfolders are not read)"))
        files += found
    return files, problems


class _TooLarge(Exception):
    """A file larger than the API server takes in a request: not read."""


def _text(path: Path, stdin: str | None) -> str:
    """The file's text; raises OSError, UnicodeDecodeError or _TooLarge."""
    if path == STDIN:
        text = stdin or ""
    else:
        if path.stat().st_size > MAX_FILE_BYTES:  # refused unread: a cluster never takes it
            raise _TooLarge(f"{_mib(path.stat().st_size)}: larger than the API server takes in a request "
                             f"({_mib(MAX_FILE_BYTES)}); not read")
        text = path.read_text(encoding="utf-8")
    if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
        raise _TooLarge(f"larger than the API server takes in a request ({_mib(MAX_FILE_BYTES)}); not read")
    return text


def _objects(path: Path, stdin: str | None, report: _Report) -> Iterator[_Object]:
    """The objects of a file, what is not one noted in ``report`` (a problem where it cannot be read)."""
    try:
        text = _text(path, stdin)
    except (OSError, UnicodeDecodeError, _TooLarge) as error:
        report.problems.append(Problem(str(path), None, None, str(error) if isinstance(error, _TooLarge)
                                       else f"cannot read: {error}"))
        return
    try:
        documents: list[Any] | None = list(yaml.load_all(text, Loader=SAFE_LOADER))
    except yaml.YAMLError as error:
        documents, problem = None, f"not valid YAML: {yaml_problem(error)}"
    if documents is None and _TEMPLATE_ACTION.search(text):  # YAML cannot read a template's actions
        report.notes.append(f"{path}: a template ({{{{ }}}} actions), not a manifest: skipped ({_RENDER})")
        return
    if documents is None:
        report.problems.append(Problem(str(path), None, None, problem))
        return
    for number, document in enumerate(documents, start=1):
        yield from _document(str(path), f"document {number}", document, report)


def _document(file: str, where: str, document: Any, report: _Report) -> Iterator[_Object]:
    """A document's object (a List's items), or a note saying why it is none."""
    if document is None:  # an empty document, as between two "---"
        return
    if not isinstance(document, dict):
        shape = "a list" if isinstance(document, list) else "a single value"
        report.notes.append(f"{file}: {where}: {shape}, not a Kubernetes object: skipped")
        return
    kind = document.get("kind")
    if kind is None:
        report.notes.append(f"{file}: {where}: no kind, not a Kubernetes object: skipped")
    elif kind in _LIST_KINDS and isinstance(document.get("items"), list):
        for number, item in enumerate(document["items"], start=1):
            yield from _document(file, f"{where} item {number}", item, report)
    elif kind in (KIND, POOL_KIND) and _is_template(document):
        report.notes.append(f"{file}: {where}: a template ({{{{ }}}} actions in its values), not a manifest: "
                            f"skipped ({_RENDER})")
    else:
        name = _Object(file, where, document).name()
        yield _Object(file, f"{kind if isinstance(kind, str) else 'object'} {name!r}" if name else where, document)


def _is_template(document: dict[str, Any]) -> bool:
    """Whether a document that YAML reads is a template: ``{{ }}`` actions in its keys or values (a
    container's command, args and env values aside: a shell or a tool may mean them)."""
    return any(_TEMPLATE_ACTION.search(value) for value in _values(document, ()))


def _values(node: Any, path: tuple[Any, ...]) -> Iterator[str]:
    """The strings of a loaded document (keys too), but a container's command, args and env values."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            if not (key in ("command", "args") or (key == "value" and "env" in path)):
                yield from _values(value, (*path, key))
    elif isinstance(node, list):
        for item in node:
            yield from _values(item, path)
    elif isinstance(node, str):
        yield node


def _judged(found: _Object, now: int, runner: bool) -> list[Problem]:
    """Every problem of one CronSchedule or CronPool."""
    body = found.body
    problems: list[tuple[str | None, str]] = []
    if body.get("apiVersion") != API_VERSION:
        problems.append(("apiVersion", f"{body.get('apiVersion')!r} is not {API_VERSION}"))
    stored = len(json.dumps(body, default=str))
    if stored > MAX_OBJECT_BYTES:
        problems.append((None, f"{_mib(stored)} as JSON: larger than an object the API server stores "
                               f"({_mib(MAX_OBJECT_BYTES)})"))
    if found.kind == POOL_KIND:
        problems += [(each.field, each.reason) for each in pool_problems(body)]
    else:
        problems += _schedule_problems(body, now, jobs=not runner)
        if runner:
            problems += _runner_problems(body, {where for where, _ in problems})
    unique = list(dict.fromkeys(problems))
    return [Problem(found.file, found.label, where, message) for where, message in unique]


def _schedule_problems(body: dict[str, Any], now: int, jobs: bool) -> list[tuple[str | None, str]]:
    """A CronSchedule's problems: its schema's, the scheduler's, and (``jobs``: in a cluster, where
    its runs are Jobs) its Job template's."""
    problems: list[tuple[str | None, str]] = []
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if name is None:
        problems.append(("metadata.name", "is required"))
    elif not isinstance(name, str) or not _DNS_SUBDOMAIN.fullmatch(name):
        problems.append(("metadata.name", f"{name!r} must be lower-case letters, digits, '-' and '.', starting "
                                          "and ending with a letter or digit"))
    schema = schema_problems(body)
    problems += [(each.field, each.reason) for each in schema]
    problems += _scheduler_problems(body, now, {each.field for each in schema})
    return problems + (template_problems(body.get("spec")) if jobs else [])


_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _scheduler_problems(body: dict[str, Any], now: int, refused: set[str]) -> list[tuple[str | None, str]]:
    """What the scheduler refuses, every field of it: after each problem the field is set aside
    (a bad expression replaced, another field dropped) and the rest judged again. Fields the
    schema refused are set aside first; the schedule never firing is judged when all is well."""
    stored: dict[str, Any] = as_stored(body)
    spec = stored.get("spec")
    if not isinstance(spec, dict) or not all(_set_aside(spec, where) for where in refused if where.startswith("spec.")):
        return []
    stored["metadata"] = {"name": "linted"}  # its problems are the schema's
    problems: list[tuple[str | None, str]] = []
    for _ in range(_MAX_ROUNDS):
        try:
            job = read_spec(stored, now).job
        except SpecError as error:
            problems.append((error.field, str(error).removeprefix(f"{error.field}: ")))
            if not _set_aside(spec, error.field):
                break
            continue
        except (TypeError, ValueError, KeyError, AttributeError):  # a shape the schema's problems name
            break
        if not problems and not refused and not job.fires_from(job.created_at):
            problems.append(("spec.schedule" if "schedule" in spec else "spec.schedules", "never fires"))
        break
    return problems


_LISTED = re.compile(r"spec\.(schedules|schedule)(?:\[(\d+)\])?$")


def _set_aside(spec: dict[str, Any], where: str) -> bool:
    """``spec`` without the field at ``where`` (an expression: a placeholder in its place), so that
    the next reading gets past it; False where nothing is left to read."""
    expression = _LISTED.match(where)
    if expression is None:
        top = where.removeprefix("spec.").split(".")[0].split("[")[0]
        return where.startswith("spec.") and spec.pop(top, None) is not None
    name, index = expression.group(1), expression.group(2)
    if name == "schedule" and "schedules" not in spec:
        holder: Any = spec
        key: Any = "schedule"
        present = "schedule" in spec
    else:
        holder, key = spec.get("schedules"), None if index is None else int(index)
        present = isinstance(holder, list) and key is not None and key < len(holder)
    if not present:
        return False
    changed = bool(holder[key] != _PLACEHOLDER)
    holder[key] = _PLACEHOLDER
    return changed


def _runner_problems(body: dict[str, Any], reported: set[str | None]) -> list[tuple[str | None, str]]:
    """What the single-node runner refuses beyond a cluster, not said already: its first container's
    command and every literal-less env entry, then the rest of its reader's rules (it stops at the first)."""
    problems: list[tuple[str | None, str]] = []
    template = (((body.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    containers = (template.get("spec") or {}).get("containers") if isinstance(template, dict) else None
    first = containers[0] if isinstance(containers, list) and containers else None
    if isinstance(first, dict):
        if not first.get("command"):
            problems.append((f"{CONTAINER}.command", "missing (the local runner has no image entrypoint to fall "
                                                     "back on)" if first.get("command") is None else "empty"))
        env = first.get("env")
        problems += [(f"{CONTAINER}.env[{index}].valueFrom", "not supported by the local runner, which has no "
                                                             "cluster to read it from; give the value literally")
                     for index, entry in enumerate(env if isinstance(env, list) else [])
                     if isinstance(entry, dict) and "valueFrom" in entry]
    said = reported | {where for where, _ in problems} | {"apiVersion", "metadata.name"}
    loaded = load_text(json.dumps(body), STDIN)
    return problems + [(error.path, error.reason) for error in loaded.errors if error.path not in said]


def _bare_dollars(found: _Object) -> list[Problem]:
    """A warning for each part of a container's command and args with a bare ``$$``."""
    template = (((found.body.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    containers = (template.get("spec") or {}).get("containers") or []
    warnings = []
    for number, container in enumerate(containers):
        for where in ("command", "args"):
            for index, part in enumerate(container.get(where) or []):
                if isinstance(part, str) and _BARE_DOLLARS.search(part):
                    warnings.append(Problem(
                        found.file, found.label,
                        f"spec.jobTemplate.spec.template.spec.containers[{number}].{where}[{index}]",
                        "'$$' becomes '$' (Kubernetes expands $(VAR) and takes '$$' as an escaped '$'), so the "
                        "shell never sees '$$'; write '$$$$' for the shell's process id"))
    return warnings


def _mib(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MiB"
