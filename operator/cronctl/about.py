"""What cronctl says of itself: its version, from the installed package's metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    """The installed cronctl's version (``0.1.0``), or ``unknown`` when run from a tree not installed."""
    try:
        return version("cronctl")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def version_line(command: str) -> str:
    return f"{command} {package_version()}"
