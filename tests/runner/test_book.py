"""The book: whole atomic writes, a newer version refused untouched, a broken one moved aside."""

from __future__ import annotations

import json
import os
import random
import time
from datetime import datetime, timezone

import pytest

from cronctl.runner.book import BOOK_NAME, SCHEMA_VERSION, Book, BookRefused, Status

FIXED_NOW = datetime(2024, 1, 14, 2, 0, 5, tzinfo=timezone.utc)


def test_a_saved_book_loads_back_as_it_was(tmp_path):
    data = {"schedules": {"nightly": {"last": 28000000, "history": [{"outcome": "succeeded"}]}},
            "enabled": True, "note": "Zürich"}
    Book(tmp_path).save(data)
    on_disk = json.loads((tmp_path / BOOK_NAME).read_text(encoding="utf-8"))
    assert on_disk["version"] == SCHEMA_VERSION == 1
    loaded = Book(tmp_path).load()
    assert loaded.status is Status.OK and loaded.may_fire
    assert loaded.data == data and loaded.version == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [BOOK_NAME]  # no temporary file left


def test_each_save_replaces_the_whole_file(tmp_path):
    book = Book(tmp_path)
    book.save({"a": 1, "b": [1, 2, 3]})
    book.save({"c": 2})
    assert book.load().data == {"c": 2}


def test_no_book_starts_empty(tmp_path):
    loaded = Book(tmp_path).load()
    assert loaded.status is Status.MISSING and loaded.data == {} and loaded.may_fire


def test_a_book_of_a_newer_version_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / BOOK_NAME
    path.write_text('{"version": 2, "schedules": {"nightly": {"new_field": true}}}\n', encoding="utf-8")
    old = datetime(2023, 5, 1, tzinfo=timezone.utc).timestamp()
    os.utime(path, (old, old))
    before = (path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(tmp_path)))
    book = Book(tmp_path, now=lambda: FIXED_NOW)
    loaded = book.load()
    assert loaded.status is Status.NEWER and not loaded.may_fire and loaded.version == 2
    assert "version 2" in loaded.message and "nothing fires" in loaded.message
    with pytest.raises(BookRefused):
        book.save({"schedules": {}})
    assert (path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(tmp_path))) == before


@pytest.mark.parametrize("content, reason", [
    (b'{"version": 1, "schedules": {', "not JSON"),
    (b"", "not JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[1, 2, 3]", "not a JSON object"),
    (b'{"schedules": {}}', "no version"),
    (b'{"version": "1"}', "not a whole number"),
    (b'{"version": 0}', "not a whole number"),
])
def test_a_broken_book_is_moved_aside_and_the_runner_starts_empty(tmp_path, content, reason):
    (tmp_path / BOOK_NAME).write_bytes(content)
    loaded = Book(tmp_path, now=lambda: FIXED_NOW).load()
    assert loaded.status is Status.BROKEN and loaded.data == {} and loaded.may_fire
    moved = tmp_path / "cronctl.json.broken-20240114T020005Z"
    assert loaded.moved_to == moved and moved.read_bytes() == content
    assert not (tmp_path / BOOK_NAME).exists()
    assert reason in loaded.message and moved.name in loaded.message and "empty" in loaded.message


def test_two_broken_books_in_one_second_both_stay(tmp_path):
    book = Book(tmp_path, now=lambda: FIXED_NOW)
    for content in (b"first", b"second"):
        (tmp_path / BOOK_NAME).write_bytes(content)
        book.load()
    assert (tmp_path / "cronctl.json.broken-20240114T020005Z").read_bytes() == b"first"
    assert (tmp_path / "cronctl.json.broken-20240114T020005Z-2").read_bytes() == b"second"


def test_a_reader_that_may_not_write_leaves_a_broken_book_in_place(tmp_path):
    (tmp_path / BOOK_NAME).write_bytes(b"{")
    loaded = Book(tmp_path).load(move_broken=False)
    assert loaded.status is Status.BROKEN and loaded.moved_to is None
    assert (tmp_path / BOOK_NAME).read_bytes() == b"{"


def test_stale_temporary_files_are_cleaned_by_the_holder(tmp_path):
    (tmp_path / f".{BOOK_NAME}.tmp-abc").write_bytes(b'{"version": 1, "half')
    (tmp_path / "unrelated.txt").write_text("keep")
    removed = Book(tmp_path).remove_stale_temps()
    assert [p.name for p in removed] == [f".{BOOK_NAME}.tmp-abc"]
    assert sorted(os.listdir(tmp_path)) == ["unrelated.txt"]


def test_a_process_killed_while_saving_never_leaves_a_partial_book(tmp_path, helpers):
    """SIGKILL a process that saves a 1.5 MB book in a loop, many times at random moments.

    Afterwards the book is always the old one or the new one: it parses, and every
    entry carries the counter of one save. (A kill does not lose the page cache, so
    this tests the rename; the fsyncs are for power loss.)
    """
    rng = random.Random(4)
    counters, interrupted = [], 0
    for attempt in range(24):
        saver = helpers("book_saver.py", str(tmp_path))
        assert saver.readline() == "ready"
        if attempt == 0:
            assert saver.readline() == "saved"  # so that there is a book to keep whole
        elif attempt % 2:
            time.sleep(rng.uniform(0.0, 0.25))  # anywhere: building, writing, renaming
        else:
            deadline = time.monotonic() + 5  # right when a temporary file shows: mid-write
            while not _temps(tmp_path) and time.monotonic() < deadline:
                pass
        saver.kill()
        interrupted += bool(_temps(tmp_path))
        loaded = Book(tmp_path).load(move_broken=False)
        assert loaded.status in (Status.OK, Status.MISSING), loaded.message
        if loaded.status is Status.OK:
            counter = loaded.data["counter"]
            assert len(loaded.data["runs"]) == 20000
            assert all(run["n"] == counter for run in loaded.data["runs"])
            counters.append(counter)
    assert len(counters) == 24 and counters == sorted(counters), counters
    assert interrupted > 0, "no kill landed in the middle of a save"


def _temps(folder) -> list[str]:
    return [name for name in os.listdir(folder) if name.startswith(f".{BOOK_NAME}.tmp-")]
