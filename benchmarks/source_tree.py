"""Which cronctl a benchmark measures: the repo's operator/ (the source root) first on
sys.path, or the tree CRONCTL_OPERATOR_DIR names (e.g. an exported older commit, to
compare before and after a change). Importing this module sets the path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

OPERATOR_DIR = (os.environ.get("CRONCTL_OPERATOR_DIR")
                or str(Path(__file__).resolve().parent.parent / "operator"))
sys.path.insert(0, OPERATOR_DIR)


def source_label() -> str:
    """Where cronctl was imported from, with the git commit (and -dirty) when known."""
    where = Path(sys.modules["cronctl"].__file__).resolve().parent
    try:
        described = subprocess.run(["git", "-C", str(where), "describe", "--always", "--dirty"],
                                   capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        described = ""
    return f"{where}" + (f" (git {described})" if described else "")
