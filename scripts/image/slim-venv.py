"""The operator's dependencies made small, in the Dockerfile's ``build`` stage once requirements.lock is
installed (cronctl itself is compiled in the next step): ``python slim-venv.py /opt/cronctl``.

- ``kubernetes/aio`` (the client's asyncio twin, which neither cronctl nor kopf imports) goes;
- ``kubernetes/client/api`` and ``kubernetes/client/models`` (the generated client, 33 MB of source
  that ``import kubernetes.client`` loads whole) are kept as bytecode only, beside where the source
  was: 57 MB of source and bytecode become 24 MB, the same code (asserts and docstrings kept);
- everything else is compiled beside its source (the root file system is read-only at run time).
"""

from __future__ import annotations

import compileall
import shutil
import sys
from pathlib import Path

GENERATED = ("kubernetes/client/api", "kubernetes/client/models")


def main(venv: Path) -> None:
    (site,) = venv.glob("lib/python3.*/site-packages")
    shutil.rmtree(site / "kubernetes" / "aio", ignore_errors=True)
    for folder in GENERATED:
        compileall.compile_dir(site / folder, quiet=1, legacy=True, stripdir=str(site), prependdir=str(site))
        for source in (site / folder).rglob("*.py"):
            source.unlink()
        for cache in (site / folder).rglob("__pycache__"):
            shutil.rmtree(cache)
    compileall.compile_dir(venv / "lib", quiet=1, workers=0)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
