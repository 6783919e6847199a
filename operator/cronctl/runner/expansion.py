"""Kubernetes' ``$(VAR)`` expansion, so that a manifest means locally what it means on a cluster.

A container's ``command`` and ``args`` may name its environment variables as
``$(VAR)``, and each ``env`` value those defined before it; the kubelet
expands them (``k8s.io/kubernetes/third_party/forked/golang/expansion``) by
these rules, kept here exactly:

- ``$(VAR)`` is VAR's value when VAR is defined, else stays as written;
- ``$$`` is a literal ``$`` (so ``$$(VAR)`` is the text ``$(VAR)``);
- ``$`` followed by anything else, or a ``$(`` never closed, stays as written.

Each ``env`` value sees the entries before it, and is expanded once, when the
manifest is read. ``command`` and ``args`` see the container's whole
environment as the operator's Job gives it: its ``env``, then the ``CRONCTL_*``
facts of the run (:func:`run_variables`; an ``env`` entry of the same name
wins, as the operator leaves it in the Job), so they are expanded at each
start, not when the manifest is read. The runner's own environment is not
looked at (as on a cluster without Service links).
"""

from __future__ import annotations

from typing import Mapping, Sequence


def run_facts(schedule: str, nominal_time: str, reason: str, attempt: int) -> dict[str, str]:
    """The ``CRONCTL_*`` variables of a run, as the operator puts them in its Job's env (and
    the wrapper in the command's)."""
    return {"CRONCTL_SCHEDULE": schedule, "CRONCTL_NOMINAL_TIME": nominal_time,
            "CRONCTL_REASON": reason, "CRONCTL_ATTEMPT": str(attempt)}


def run_variables(env: Mapping[str, str], facts: Mapping[str, str]) -> dict[str, str]:
    """What a run's ``$(VAR)`` may name: the ``CRONCTL_*`` facts of the run, under the
    container's ``env`` (the operator adds only the facts the template does not set)."""
    return {**facts, **env}


def expand_each(parts: Sequence[str], variables: Mapping[str, str]) -> list[str]:
    """Each of ``parts`` (a command, its args) expanded, as the kubelet expands them."""
    return [expand(part, variables) for part in parts]


def expand(text: str, variables: Mapping[str, str]) -> str:
    """``text`` with each ``$(VAR)`` of ``variables`` replaced, by the kubelet's rules."""
    if "$" not in text:
        return text
    out: list[str] = []
    checkpoint = cursor = 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            read, is_variable, advance = _variable(text, cursor + 1)
            out.append(variables.get(read, f"$({read})") if is_variable else read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


def _variable(text: str, start: int) -> tuple[str, bool, int]:
    """(what ``$`` at ``start - 1`` reads as, whether it names a variable, how far it reaches)."""
    first = text[start]
    if first == "$":
        return "$", False, 1  # an escaped $
    if first == "(":
        end = text.find(")", start + 1)
        if end >= 0:
            return text[start + 1:end], True, end - start + 1
        return "$(", False, 1  # never closed: as written
    return "$" + first, False, 1
