"""Which schedules of a folder's load fire and which do not.

:class:`Judge` gives the verdict on a folder's load: which schedules are
valid, and which are invalid and so do not fire (each with its one-line
message: file, schedule, field, reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..manifest import ScheduleSpec, SpecError, read_manifest
from .definitions import CONTAINER, KIND, Definition, DefinitionError, LoadedDefinitions


@dataclass
class Verdict:
    """Which schedules of a folder's load fire and which do not (see :class:`Judge`)."""

    valid: dict[str, tuple[Definition, ScheduleSpec]] = field(default_factory=dict)
    # schedule -> (file, the one-line message: file, schedule, field, reason); it does not fire
    invalid: dict[str, tuple[Path, str]] = field(default_factory=dict)
    others: list[DefinitionError] = field(default_factory=list)  # problems that hold no schedule


class Judge:
    """Each definition read with :func:`cronctl.manifest.read_manifest` (the CRD's schema,
    then the core's checks), once per record: a record the folder's scan kept (the same
    object) keeps its verdict."""

    def __init__(self) -> None:
        self._read: dict[str, tuple[Definition, ScheduleSpec | SpecError]] = {}

    def __call__(self, loaded: LoadedDefinitions, known: dict[str, str | None], files: set[str]) -> Verdict:
        """The verdict on ``loaded``. ``known`` names the schedules the runner has, each with
        the file (name) it was last read from, and ``files`` the folder's manifest files now.

        A known schedule that the load does not define is invalid, not gone, while its file
        is still there with a problem that names no schedule (it does not parse; a document
        lost its name), so that a half-saved edit does not retire it.
        """
        verdict = Verdict()
        for definition in loaded.definitions:
            read = self._judged(definition)
            if isinstance(read, SpecError):
                verdict.invalid[definition.name] = (definition.file, f"{definition.file}: {KIND} "
                                                                     f"{definition.name!r}: {read.message}")
            else:
                verdict.valid[definition.name] = (definition, read)
        defined = {definition.name for definition in loaded.definitions}
        self._read = {name: read for name, read in self._read.items() if name in defined}
        unnamed: dict[str, list[DefinitionError]] = {}
        for error in loaded.errors:
            if error.schedule is not None and error.schedule not in verdict.valid:
                verdict.invalid.setdefault(error.schedule, (error.file, str(error)))
            elif error.schedule is None:
                unnamed.setdefault(error.file.name, []).append(error)
            else:
                verdict.others.append(error)  # a second definition of a schedule defined before
        used: set[str] = set()
        for name, file in known.items():
            if name in verdict.valid or name in verdict.invalid or file not in files or file not in unnamed:
                continue
            verdict.invalid[name] = (unnamed[file][0].file, "; ".join(str(e) for e in unnamed[file]))
            used.add(file)
        verdict.others += [error for file, errors in unnamed.items() if file not in used for error in errors]
        return verdict

    def _judged(self, definition: Definition) -> ScheduleSpec | SpecError:
        cached = self._read.get(definition.name)
        if cached is not None and cached[0] is definition:
            return cached[1]
        result: ScheduleSpec | SpecError
        try:
            result = read_manifest(definition.body, 0)
        except SpecError as error:
            result = error
        else:
            if not definition.command:  # not reached: the schema refuses what hides the container
                result = SpecError(f"{CONTAINER}.command", "missing", "InvalidManifest")
        self._read[definition.name] = (definition, result)
        return result
