"""Whether a CronSchedule is held while an import adopts its CronJob's active Jobs.

``kubectl cronctl import`` creates the CronSchedule, then makes the CronJob's active Jobs its own
(``plugin.importing``); the operator finds a schedule's runs by their owner, so between the two
writes it would see no run under way and could launch a due time beside one (Forbid twice, and
the adopted Job then taken for a leftover and deleted). The import marks the schedule
(``ADOPTING_ANNOTATION``, the time it began) and removes the mark once the Jobs are adopted;
while it stands the plan decides nothing: no launch, no status write, so a time that came due
meanwhile is still missed, and the missed-schedule rules decide it once the mark is gone, as
after a slow operator. A mark older than ``ADOPTING_SECONDS`` (an import that stopped half-way),
or one not a time, holds nothing: the schedule is planned as usual and a Warning says why, once
(at the first plan, which writes the status the hold kept unwritten). The hold writes no status,
so the loop also looks at the schedule as soon as the mark's removal is watched (a schedule with
no ``observedGeneration`` is always worth a look). Pure: the schedule and the second in, a ``Hold`` out.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from ..api import ADOPTING_ANNOTATION, ADOPTING_SECONDS
from .resource import parse_rfc3339_seconds

STALE_REASON = "AdoptionUnfinished"


class Hold(NamedTuple):
    held: bool  # True: decide nothing now
    wake_at: int | None = None  # while held: the minute the mark goes stale (besides its removal's watch event)
    stale: str | None = None  # not held though marked: the Warning's message


def hold(schedule: Mapping[str, Any], second: float) -> Hold | None:
    """The schedule's hold at ``second`` (seconds since 1970); None: it carries no mark."""
    metadata = schedule.get("metadata") or {}
    value = (metadata.get("annotations") or {}).get(ADOPTING_ANNOTATION)
    if value is None or metadata.get("deletionTimestamp"):  # a schedule being deleted does its cleanup at once
        return None
    began = parse_rfc3339_seconds(value)
    if began is None:
        return Hold(False, stale=f"{ADOPTING_ANNOTATION} is {value!r}, not a time: its Jobs are not known to be "
                                 "adopted; planned as usual (remove the annotation, or run the import again)")
    until = began + ADOPTING_SECONDS
    if began - ADOPTING_SECONDS <= second < until:  # a mark from the future is the importer's clock ahead
        return Hold(True, wake_at=-(-until // 60))
    return Hold(False, stale=f"{ADOPTING_ANNOTATION} {value} is more than {ADOPTING_SECONDS} s from now (an "
                             "import stopped before it adopted the CronJob's active Jobs?); planned as usual: "
                             "run the import again, or remove the annotation")
