"""A runner that starts one run and dies: by SIGKILL at a checkpoint of start(), or waits to be killed.

argv: BASE POINT REQUEST_JSON. POINT is after_mkdir, after_request, after_spawn, or
"none" (start() completes, "started" is printed, then the helper waits to be killed).
"""

import json
import os
import signal
import sys

from cronctl.runner.executor import Executor
from cronctl.runner.values import RunRequest

base, point, request = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])


def checkpoint(name: str) -> None:
    if name == point:
        os.kill(os.getpid(), signal.SIGKILL)


executor = Executor(base, checkpoint=checkpoint)
executor.start(RunRequest(**request))
print("started", flush=True)
sys.stdin.read()  # until killed
