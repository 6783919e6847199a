"""Bounded history: which finished runs a job keeps.

Finished runs fall into two classes, succeeded and failed (failed and
timed_out). Each class keeps only its newest ``keep`` runs, newest meaning a
later finish, ties broken by the higher launch number. Keeping the newest k
of a growing set gives the same result whether it is applied after every
finish or once at the end, so drivers may prune lazily.
"""

from __future__ import annotations

from bisect import insort
from typing import NamedTuple

SUCCEEDED_CLASS = "succeeded"
FAILED_CLASS = "failed"


class Finished(NamedTuple):
    finished_at: int
    number: int
    run_id: str


def retention_class(state: str) -> str:
    return SUCCEEDED_CLASS if state == "succeeded" else FAILED_CLASS


def keep_newest(kept: list[Finished], finished: Finished, keep: int) -> list[Finished]:
    """Add a finished run to an oldest-first list and return the runs dropped from it."""
    insort(kept, finished)
    excess = len(kept) - keep
    if excess <= 0:
        return []
    dropped = kept[:excess]
    del kept[:excess]
    return dropped


def history_order(*classes: list[Finished]) -> list[Finished]:
    """All retained runs of a job, oldest first by (finished_at, launch number)."""
    return sorted(run for kept in classes for run in kept)
