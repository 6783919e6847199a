"""Seed 001's order of waiting work, and how much of it a pool of workers admits: pure.

Waiting runs are served by nominal time, then by schedule name as Java's
``String.compareTo`` orders it (UTF-16 code units, which for names outside
the Basic Multilingual Plane differs from Python's code point order), then by
attempt. The dispatcher of seed 001 (``dispatch.py``), the runner's worker
slots and a ``CronPool`` take waiting work in this one order; a pool of
``workers`` with ``busy`` of them running admits the first ``workers - busy``.
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


def java_order(text: str) -> bytes:
    """A key that orders (and identifies) strings as Java does: their UTF-16 code units."""
    return text.encode("utf-16-be", "surrogatepass")


def seed_order(nominal: int, schedule: str, attempt: int = 1) -> tuple[int, bytes, int]:
    """The place of a waiting run: nominal time, then schedule name (Java order), then attempt."""
    return nominal, java_order(schedule), attempt


def admitted(workers: int, busy: int, waiting: Sequence[T],
             place: Callable[[T], tuple[int, bytes, int]]) -> list[T]:
    """The waiting runs a pool starts now, in seed 001's order: as many as it has free workers."""
    free = max(0, workers - busy)
    return sorted(waiting, key=place)[:free] if free else []


__all__ = ["admitted", "java_order", "seed_order"]
