"""What ``cronctl status``, ``history``, ``next``, ``trigger``, ``backfill``, ``suspend`` and ``resume``
show or do for a runner's folder: the names of :mod:`.folder_view`, :mod:`.status_view`,
:mod:`.history_view` and :mod:`.asking`, in one place for the CLI and the plugin.
"""

from __future__ import annotations

from .asking import (Asked, BackfillPlan, Paused, Triggered, ask_backfill, backfill_plan, backfill_preview_lines,
                     resume, suspend, trigger)
from .folder_view import (EXIT_USAGE, OVERDUE_AFTER, Decoded, FolderView, Invalid, Manifests, ScheduleView, ViewError,
                          actual_time, backfill_waits, book_data, book_suspension, check_folder, decode, defined,
                          describe_schedule, expressions, folder_view, load_book, manifest_spec, manifest_suspension,
                          pause_records, read_manifests, rfc3339, rules_of, suspended_line, timeline_of,
                          unknown_schedule, unstarted_view, wall_minute)
from .history_view import (HISTORY_COLUMNS, Exit, HistoryRow, HistoryView, NextTimes, exit_of, history, history_lines,
                           history_view, next_lines, next_times)
from .status_view import status, status_lines

__all__ = [
    "Asked", "BackfillPlan", "Decoded", "EXIT_USAGE", "Exit", "FolderView", "HISTORY_COLUMNS", "HistoryRow",
    "HistoryView", "Invalid", "Manifests", "NextTimes", "OVERDUE_AFTER", "Paused", "ScheduleView",
    "Triggered", "ViewError", "actual_time", "ask_backfill", "backfill_plan", "backfill_preview_lines",
    "backfill_waits", "book_data", "book_suspension", "check_folder", "decode", "defined",
    "describe_schedule", "exit_of", "expressions", "folder_view", "history", "history_lines", "history_view",
    "load_book", "manifest_spec", "manifest_suspension", "next_lines", "next_times", "pause_records",
    "read_manifests", "resume", "rfc3339", "rules_of", "status", "status_lines", "suspend", "suspended_line",
    "timeline_of", "trigger", "unknown_schedule", "unstarted_view", "wall_minute",
]
