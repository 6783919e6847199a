"""Backfill requests: how ``cronctl backfill NAME --from --to`` asks the runner, and how a backfill reads.

A backfill (``core/backfill.py``) runs every schedule time of a past range,
oldest first, one at a time, through the concurrency policy. On the runner
it is asked for as a manual firing is: one file, ``DIR/backfills/<name>.<ns>
.json`` (``{"schedule": NAME, "from": "YYYY-MM-DDTHH:MM", "to": ...}``, UTC,
both ends included), written crash-safely (:func:`.files.atomic_write_json`:
a reader sees it whole or not at all). The running engine takes it at its
next step, a stopped one when it starts. Its identity, the request id, is
its name and modification time (as a trigger's), which the core keeps as
the backfill's ``request``: a file consumed again after a crash (the book
that records its backfill was not saved) is asked again, one whose backfill
the book has already is only deleted. The file is deleted once that book is
saved. A new request for a schedule replaces the backfill under way (the
core does that); a request the core refuses, or a file that is no request,
is moved aside as ``<name>.refused`` or ``<name>.broken``.

The runs of one backfill have an executor folder of their own,
``DIR/backfill/<request id>/`` (as a manual firing's are in ``DIR/manual/``),
so a backfill run never shares its key (schedule, nominal time, attempt)
with the scheduled run of that minute, nor with another backfill's run of it.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Collection

from ..core.backfill import finished, running_run
from ..core.state import Backfill
from ..core.times import format_time, parse_time
from ..core.zones import AnyZone
from .files import atomic_write_json, fsync_dir, read_json
from .firing import BACKFILL_DIR, both_times
from .values import Request

BACKFILLS_DIR = "backfills"  # backfills asked for by ``cronctl backfill``: one file each
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

__all__ = ["BACKFILLS_DIR", "BACKFILL_DIR", "Request", "RequestError", "describe", "finished", "progress_json",
           "read_request", "request_id", "running_run", "write_request"]


class RequestError(ValueError):
    """A file in ``backfills/`` that is not a backfill request; the message says why."""


def request_id(path: Path, mtime_ns: int) -> str:
    """A request file's identity: its name and modification time, so that a file consumed again
    after a crash is the same request and a file made again under a used name is not."""
    stem = _UNSAFE.sub("-", path.stem).lstrip(".") or "backfill"
    return f"{stem}.{mtime_ns}"


def write_request(folder: Path, request: Request) -> Path:
    """Ask the runner of ``folder`` for a backfill; raises OSError as the file system does."""
    requests = folder / BACKFILLS_DIR
    if not requests.is_dir():
        requests.mkdir(exist_ok=True)
        fsync_dir(folder)
    path = requests / f"{request.schedule}.{time.time_ns()}.json"
    atomic_write_json(path, {"schedule": request.schedule, "from": format_time(request.start),
                             "to": format_time(request.end)})
    return path


def read_request(path: Path) -> Request:
    """The request in ``path``; RequestError when it is not one, FileNotFoundError when it is gone."""
    try:
        body = read_json(path)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as error:
        raise RequestError(f"not a backfill request ({error})") from None
    if body is None:
        raise FileNotFoundError(path)
    shape = 'it should be {"schedule": "NAME", "from": "YYYY-MM-DDTHH:MM", "to": "YYYY-MM-DDTHH:MM"}'
    if not isinstance(body, dict) or not isinstance(body.get("schedule"), str):
        raise RequestError(f"not a backfill request ({shape})")
    ends = [parse_time(body.get(key)) for key in ("from", "to")]
    for key, minute in zip(("from", "to"), ends):
        if minute is None:
            raise RequestError(f"{key}: {body.get(key)!r} is not a UTC time YYYY-MM-DDTHH:MM ({shape})")
    start, end = ends
    assert start is not None and end is not None
    return Request(body["schedule"], start, end)


def progress_json(backfill: Backfill, active: Collection[str], waits: str | None = None) -> dict[str, Any]:
    """``cronctl status --json``'s ``backfill``: times RFC 3339 UTC."""
    return {"request": backfill.request, "state": "complete" if finished(backfill, active) else "running",
            "from": _rfc3339(backfill.start), "to": _rfc3339(backfill.end), "total": backfill.total,
            "launched": backfill.launched, "next": None if backfill.next is None else _rfc3339(backfill.next),
            "running": running_run(backfill, active), "waits": None if backfill.done else waits}


def describe(backfill: Backfill, active: Collection[str], zone: AnyZone, waits: str | None = None) -> str:
    """One line for people: ``backfill 2024-02-29 22:00 UTC to ...: 1/2 launched, next ...``."""
    text = (f"backfill {both_times(backfill.start, zone)} to {both_times(backfill.end, zone)}: "
            f"{backfill.launched}/{backfill.total} launched")
    running = running_run(backfill, active)
    if finished(backfill, active):
        return f"{text}, complete"
    if backfill.next is not None:
        text += f", next {both_times(backfill.next, zone)}"
    if running is not None:
        text += f" (running {running})" if backfill.next is not None else f", the last one running ({running})"
    if waits is not None and backfill.next is not None:
        text += f"; {waits}"
    return text


def _rfc3339(minute: int) -> str:
    return f"{format_time(minute)}:00Z"
