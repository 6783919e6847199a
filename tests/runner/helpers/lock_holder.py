"""Takes the runner lock, optionally starts a long child in its own session, then waits to be killed.

Prints "acquired <pid>" (and "child <pid>" when asked to start a child).
"""

import subprocess
import sys

from cronctl.runner.lock import RunnerLock

lock = RunnerLock(sys.argv[1])
if not lock.try_acquire():
    print("busy", flush=True)
    sys.exit(1)
print(f"acquired {lock.identity['pid']}", flush=True)
if "--child" in sys.argv:
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    print(f"child {child.pid}", flush=True)
sys.stdin.read()  # until killed
