"""What cronctl says of itself: its version (from the installed package's metadata) and its shell
completion (from its own argument parsers)."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    """The installed cronctl's version (``0.1.0``), or ``unknown`` when run from a tree not installed."""
    try:
        return version("cronctl")
    except PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def version_line(command: str) -> str:
    return f"{command} {package_version()}"


SHELLS = ("bash", "zsh", "tcsh")


def completion_script(parser: argparse.ArgumentParser, command: str, shell: str) -> str:
    """The shell's completion script for ``command`` (its subcommands, flags and choices), by shtab
    from the command's own parser, so that it cannot drift from it."""
    import shtab

    parser.prog = command
    return str(shtab.complete(parser, shell=shell))
