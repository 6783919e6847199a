"""Kubernetes' ``$(VAR)`` expansion, so that a manifest means locally what it means on a cluster.

A container's ``command`` and ``args`` may name its environment variables as
``$(VAR)``, and each ``env`` value those defined before it; the kubelet
expands them (``k8s.io/kubernetes/third_party/forked/golang/expansion``) by
these rules, kept here exactly:

- ``$(VAR)`` is VAR's value when VAR is defined, else stays as written;
- ``$$`` is a literal ``$`` (so ``$$(VAR)`` is the text ``$(VAR)``);
- ``$`` followed by anything else, or a ``$(`` never closed, stays as written.

Only the container's own ``env`` is looked at (as on a cluster without
Service links), not the runner's environment nor the ``CRONCTL_*`` it adds.
"""

from __future__ import annotations

from typing import Mapping


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
