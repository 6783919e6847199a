"""``kubectl_complete-cronctl``: what ``kubectl cronctl <TAB>`` completes.

kubectl (1.26 and later) completes a plugin's words by running the executable
``kubectl_complete-<plugin>`` it finds on PATH beside the plugin, as
``kubectl_complete-cronctl __complete WORD... PARTIAL`` (the words after
``kubectl cronctl``, the last one the word being typed, empty for a new one),
and reads cobra's answer: one candidate a line (``candidate<TAB>description``),
then ``:N``, the directive (4: no file names). pip installs this module's
:func:`main` under that name with the plugin.

The candidates are read off the plugin's own parser (:func:`.cli._parser`), so
they cannot drift from it: the commands, each command's flags, a flag's
choices (``-o``), and the names a command takes, asked of the cluster through
kubectl itself (``kubectl get cronschedules``, ``cronjobs``, namespaces,
contexts), with the ``-n``, ``--context`` and ``--kubeconfig`` already typed.
kubectl is there: it is what runs this. A cluster that does not answer within
a few seconds completes no name, and no file name either.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Sequence

from .cli import _parser

NO_FILE_COMPLETION = 4  # cobra's ShellCompDirectiveNoFileComp
DEFAULT = 0  # cobra's ShellCompDirectiveDefault: the shell completes file names
ASK_SECONDS = 5
TARGET_FLAGS = {"-n": "--namespace", "--namespace": "--namespace", "--context": "--context",
                "--kubeconfig": "--kubeconfig"}

# Names from the cluster: (kubectl's arguments, the -n/--context/--kubeconfig typed) -> the names.
Ask = Callable[[Sequence[str], Sequence[str]], list[str]]


@dataclass
class _Reading:
    """Where the words typed before the last one leave the command line."""

    parser: argparse.ArgumentParser
    command: str | None = None
    positionals: int = 0
    pending: argparse.Action | None = None  # a flag whose value is the word being typed
    target: list[str] = field(default_factory=list)  # -n, --context, --kubeconfig as typed, for kubectl


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["__complete"]:
        words = words[1:]
    candidates, directive = completions(words, ask_kubectl)
    for candidate in candidates:
        print(candidate)
    print(f":{directive}")
    return 0


def completions(words: Sequence[str], ask: Ask) -> tuple[list[str], int]:
    """(the candidates for the last of ``words``, cobra's directive); ``ask(kubectl_args, target_flags)``
    gives names from the cluster."""
    done, partial = list(words[:-1]), (words[-1] if words else "")
    reading = _read(done)
    if reading.pending is not None:
        return _value(reading, partial, ask)
    if partial.startswith("-"):
        return _matching(_flags(reading.parser), partial), NO_FILE_COMPLETION
    if reading.command is None:
        return _matching(_commands(reading.parser), partial), NO_FILE_COMPLETION
    return _matching(_positional(reading, ask), partial), NO_FILE_COMPLETION


def _read(done: list[str]) -> _Reading:
    top = _parser()
    commands = _subcommands(top)
    reading = _Reading(top)
    for word in done:
        if reading.pending is not None:
            if reading.pending.dest in ("namespace", "context", "kubeconfig"):
                reading.target += [f"--{reading.pending.dest}", word]
            reading.pending = None
        elif word.startswith("-"):
            _flag(reading, word)
        elif reading.command is None and word in commands:
            reading.parser, reading.command = commands[word], word
        else:
            reading.positionals += 1
    return reading


def _flag(reading: _Reading, word: str) -> None:
    """A flag typed: its value is the next word, unless given with ``=`` or it takes none."""
    name, given, value = word.partition("=")
    action = _option(reading.parser, name)
    if action is None or action.nargs == 0:
        return
    if given:
        if name in TARGET_FLAGS:
            reading.target += [TARGET_FLAGS[name], value]
    else:
        reading.pending = action


def _option(parser: argparse.ArgumentParser, name: str) -> argparse.Action | None:
    return next((action for action in parser._actions if name in action.option_strings), None)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    """Each command with its summary, as kubectl shows them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return [f"{choice.dest}\t{choice.help}" if choice.help else choice.dest
                    for choice in action._choices_actions]
    return []


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    return [f"{option}\t{action.help}" if action.help and action.help != argparse.SUPPRESS else option
            for action in parser._actions for option in action.option_strings if option.startswith("--")
            or len(action.option_strings) == 1]


def _value(reading: _Reading, partial: str, ask: Ask) -> tuple[list[str], int]:
    """The value of the flag before the word being typed."""
    action = reading.pending
    assert action is not None
    if action.choices:
        return _matching([str(choice) for choice in action.choices], partial), NO_FILE_COMPLETION
    if action.dest == "namespace":
        return _matching(ask(["get", "namespaces"], reading.target), partial), NO_FILE_COMPLETION
    if action.dest == "context":
        return _matching(ask(["config", "get-contexts", "-o", "name"], []), partial), NO_FILE_COMPLETION
    if action.dest == "kubeconfig":
        return [], DEFAULT  # a file: the shell's own completion
    return [], NO_FILE_COMPLETION  # free text (--reason) or a time (--from)


def _positional(reading: _Reading, ask: Ask) -> list[str]:
    """A command's operands: a CronSchedule's name, a CronJob for import, a shell."""
    operands = [action for action in reading.parser._actions if not action.option_strings]
    if not operands:
        return []
    operand = operands[0]
    if operand.choices:
        return [str(choice) for choice in operand.choices] if reading.positionals == 0 else []
    if reading.command == "import":
        return [f"cronjob/{name}" for name in ask(["get", "cronjobs"], reading.target)]
    return ask(["get", "cronschedules"], reading.target) if reading.positionals == 0 else []


def _matching(candidates: list[str], partial: str) -> list[str]:
    return [candidate for candidate in candidates if candidate.startswith(partial)]


def ask_kubectl(args: Sequence[str], target: Sequence[str]) -> list[str]:
    """The names kubectl lists (``get``: each object's name), or none when it does not answer."""
    command = ["kubectl", *args, *target]
    if args[:1] == ["get"]:
        command += ["-o", "custom-columns=:metadata.name", "--no-headers"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=ASK_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []


if __name__ == "__main__":
    sys.exit(main())
