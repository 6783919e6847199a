"""``cronctl lint``: CronSchedule and CronPool manifests checked as the runner and the API server read them.

Each file is read as the runner reads its folder (:func:`.definitions.load_file`: YAML, several
documents, the API server's size limits, the kind and apiVersion, the container), then each
CronSchedule as the operator reads it (:func:`cronctl.manifest.read_manifest`: the CRD's
schema, then the scheduler's rules), and a schedule that never fires is a problem too. A name
defined twice among the files is one. Other kinds of objects are left alone, so the command
can run over a repository's YAML as a pre-commit hook. Every problem names its file, its
document (the object, or its number) and its field.

A warning is a manifest that is valid but likely means something else than it says: a bare
``$$`` in a command or its args (a crontab habit, the shell's process id), which the kubelet,
and the runner as it does, turns into a single ``$`` (``$$`` is its escape; ``$$$$`` gives ``$$``).
Warnings do not change the exit status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..manifest import SpecError, read_manifest
from .definitions import CONTAINER, KIND, Definition, DefinitionError, combine, load_file, load_text, manifest_files

STDIN = Path("-")
# Exactly two $ not followed by "(": not the escape of a $(VAR) ($$(VAR)) nor of $$ ($$$$).
_BARE_DOLLARS = re.compile(r"(?<!\$)\$\$(?![$(])")


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

    def to_json(self) -> dict[str, Any]:
        return {"valid": self.schedules, "problems": [problem.to_json() for problem in self.problems],
                "warnings": [warning.to_json() for warning in self.warnings]}


def lint(paths: list[Path], now: int, stdin: str | None = None) -> Linted:
    """The problems of the files (``-``: ``stdin``; a folder: its manifests, as ``cronctl local``
    reads them), each judged at ``now`` (minutes since 1970)."""
    files, problems = _files(paths)
    loaded = combine([load_text(stdin or "", STDIN) if path == STDIN else load_file(path) for path in files])
    problems += [_problem(error) for error in loaded.errors]
    valid, warnings = [], []
    for definition in loaded.definitions:
        problem = _judged(definition.file, definition.name, definition.body, now)
        if problem is None:
            valid.append(definition.name)
            warnings += _bare_dollars(definition)
        else:
            problems.append(problem)
    return Linted(valid, problems, warnings)


def _bare_dollars(definition: Definition) -> list[Problem]:
    """A warning for each part of the command and args with a bare ``$$``."""
    parts = [("command", part) for part in definition.command] + [("args", part) for part in definition.args]
    found = []
    for index, (where, part) in enumerate(parts):
        if _BARE_DOLLARS.search(part):
            number = index if where == "command" else index - len(definition.command)
            found.append(Problem(str(definition.file), f"{KIND} {definition.name!r}", f"{CONTAINER}.{where}[{number}]",
                                 "'$$' becomes '$' (Kubernetes expands $(VAR) and takes '$$' as an escaped '$'), so "
                                 "the shell never sees '$$'; write '$$$$' for the shell's process id"))
    return found


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


def _problem(error: DefinitionError) -> Problem:
    return Problem(str(error.file), error.object, error.path, error.reason)


def _judged(file: Path, name: str, body: dict[str, Any], now: int) -> Problem | None:
    document = f"{KIND} {name!r}"
    try:
        spec = read_manifest(body, now).job
    except SpecError as error:
        message = str(error)
        return Problem(str(file), document, error.field, message.removeprefix(f"{error.field}: "))
    if not spec.fires_from(spec.created_at):
        return Problem(str(file), document, "spec.schedule", "never fires")
    return None

