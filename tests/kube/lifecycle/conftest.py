"""A whole cluster's Job lifecycle (``ControlPlane(lifecycle=True)``): the job controller,
kube-scheduler and kwok's simulated Nodes and Pods, so that no test writes a Job's status.

It overrides ``control_plane`` and ``crd`` for the tests here, so tests/kube's
``namespace``, ``cluster`` and ``operator`` fixtures run on this control plane, a
second one beside the session's plain one. The operator's clock starts at the real
minute (the job controller stamps its conditions with the real time, and the operator
counts an outcome once its clock has reached it) and moves only forward.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Iterator

import pytest

from ..controlplane import ControlPlane
from ..helpers import Operator, binaries, install_crd


@pytest.fixture(scope="session")
def control_plane(request: pytest.FixtureRequest) -> Iterator[ControlPlane]:
    with ControlPlane(bin_dir=binaries(request), lifecycle=True) as cp:
        print(f"\nlifecycle control plane: {cp.url} ready in {cp.start_seconds:.1f}s with the job controller, "
              f"kube-scheduler and kwok (logs in {cp.tmp_dir}/logs)", file=sys.stderr)
        yield cp


@pytest.fixture(scope="session")
def crd(control_plane: ControlPlane) -> None:
    install_crd(control_plane)


class Clock:
    """The operator's clock file, in minutes from the real minute the test began at
    (``at``: seconds from it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.start = dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0)
        self.at = 0

    def text(self, minutes: int) -> str:
        return (self.start + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M")

    def minute_of_hour(self, minutes: int) -> int:
        return (self.start + dt.timedelta(minutes=minutes)).minute

    def minute(self, minutes: int) -> int:
        """The clock's ``minutes`` as minutes since 1970 (the core's time)."""
        return int(self.start.timestamp()) // 60 + minutes

    def set(self, minutes: int) -> None:
        self._write(minutes * 60, self.text(minutes))

    def set_second(self, second: int) -> None:
        """``second`` since 1970, for what starts within a minute (a jittered firing)."""
        at = dt.datetime.fromtimestamp(second, dt.timezone.utc)
        self._write(second - int(self.start.timestamp()), at.strftime("%Y-%m-%dT%H:%M:%S"))

    def _write(self, seconds: int, text: str) -> None:
        assert seconds >= self.at, "the clock only moves forward"
        self.at = seconds
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(self.path)


@pytest.fixture
def clock(tmp_path: Path) -> Clock:
    clock = Clock(tmp_path / "clock")
    clock.set(0)
    return clock


@pytest.fixture
def operator(control_plane: ControlPlane, namespace: str, tmp_path: Path, clock: Clock,
             operator_env: dict[str, str]) -> Iterator[Operator]:
    op = Operator(control_plane, namespace, tmp_path, extra_env=operator_env)
    assert op.clock_file == clock.path
    op.start()
    yield op
    op.stop()
    print(op.log()[-6000:])


@pytest.fixture
def operator_on_the_wall_clock(control_plane: ControlPlane, namespace: str, tmp_path: Path) -> Iterator[Operator]:
    """The operator firing by the wall clock, as the CronJob controller beside it does."""
    op = Operator(control_plane, namespace, tmp_path, extra_env={"CRONCTL_CLOCK_FILE": ""})
    op.start()
    yield op
    op.stop()
    print(op.log()[-6000:])
