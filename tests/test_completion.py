"""Shell completion of cronctl and kubectl-cronctl, made from their own parsers (shtab)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


def completions(module: str, command: str, words: list[str]) -> list[str]:
    """What bash offers for ``words`` (the last one being typed), with the script the command prints."""
    script = subprocess.run([sys.executable, "-m", module, "completion", "bash"], capture_output=True, text=True,
                            check=True, timeout=60).stdout
    function = f"_shtab_{command.replace('-', '_')}"
    probe = (f"{script}\nCOMP_WORDS=({command} {' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={len(words)}; "
             f"{function}; "
             'printf "%s\\n" "${COMPREPLY[@]}"')
    return subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60).stdout.split()


@pytest.mark.parametrize("module, command, words, offered", [
    ("cronctl", "cronctl", ["lo"], ["local", "logs"]),
    ("cronctl", "cronctl", ["local", "--ec"], ["--echo"]),
    ("cronctl", "cronctl", ["lint", "-o", ""], ["json", "text"]),
    ("cronctl.plugin", "kubectl-cronctl", ["des"], ["describe"]),
])
def test_bash_completes_commands_flags_and_choices(module: str, command: str, words: list[str],
                                                   offered: list[str]) -> None:
    assert sorted(completions(module, command, words)) == offered


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_a_script_for_each_supported_shell(shell: str) -> None:
    result = subprocess.run([sys.executable, "-m", "cronctl", "completion", shell], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "cronctl" in result.stdout and "local" in result.stdout
