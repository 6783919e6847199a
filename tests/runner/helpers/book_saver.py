"""Saves a large book over and over until killed: the crash test kills it mid-save.

Prints "ready", then "saved" after the first save of a book.
Every save is self-consistent (each entry carries the save's counter), so a
reader can tell a whole book from a mixture of two.
"""

import sys

from cronctl.runner.book import Book, Status

book = Book(sys.argv[1])
loaded = book.load()
counter = loaded.data.get("counter", 0) if loaded.status is Status.OK else 0
print("ready", flush=True)
while True:
    counter += 1
    book.save({"counter": counter, "runs": [{"n": counter, "text": "x" * 40} for _ in range(20000)]})
    if counter == 1:
        print("saved", flush=True)
