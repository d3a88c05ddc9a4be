"""`TraceIndex`: where each trace id's spans end, kept on disk so a million ids cost no memory.

The loader's first pass records every (file, unit, trace id) it sees; the second pass needs,
unit by unit, which traces end there. Held in dictionaries that took about 0.5 KB per id, half
a gigabyte at a million traces in every worker. Here the ids go to a private temporary SQLite
database (the standard library's; deleted when closed) through a bounded page cache, and come
back sorted by SQLite's external sorter: memory stays a few megabytes however many ids there are.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

_BATCH = 10_000
"""Ids gathered in memory before they go to the database: a batch is about a megabyte."""

_CACHE_KIB = 16 * 1024
"""SQLite's page cache (and so its sorter's memory) for one index, in KiB."""


class TraceIndex:
    """The last unit of each trace id, and (for one partition of a load) the units worth decoding.

    Units are numbers within a file (a line, a protobuf `ResourceSpans`); a file read whole is
    unit 0. `add` must see the files in order and each file's units in increasing order, as the
    first pass reads them; `endings` then gives the traces in the order the second pass finishes
    them: by last unit, and within one unit by first appearance, which is what a dictionary
    updated in the same order would give.
    """

    def __init__(self) -> None:
        self._db = sqlite3.connect('', check_same_thread=False)  # '': private, on disk, gone on close
        self._db.executescript(
            f"""
            PRAGMA cache_size = -{_CACHE_KIB};
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            CREATE TABLE last (id TEXT PRIMARY KEY, file INTEGER, unit INTEGER, first INTEGER) WITHOUT ROWID;
            CREATE TABLE wanted (file INTEGER, unit INTEGER, PRIMARY KEY (file, unit)) WITHOUT ROWID;
            """
        )
        self._file = -1
        self._pending: dict[str, int] = {}  # trace id -> its latest unit in `_file`, in first-seen order
        self._wanted: list[tuple[int, int]] = []
        self._seen = 0  # ids flushed so far: the `first` of the next new one

    def add(self, file: int, unit: int, trace_id: str, wanted: bool = False) -> None:
        """A trace id seen in a unit; `wanted` if the unit is to be decoded in the second pass."""
        if file != self._file or len(self._pending) >= _BATCH:
            self._flush()
            self._file = file
        self._pending[trace_id] = unit
        if wanted and (not self._wanted or self._wanted[-1] != (file, unit)):
            self._wanted.append((file, unit))

    def _flush(self) -> None:
        if not self._pending:
            return
        file, seen = self._file, self._seen
        self._db.executemany(
            'INSERT INTO last VALUES (?, ?, ?, ?)'
            ' ON CONFLICT (id) DO UPDATE SET file = excluded.file, unit = excluded.unit',
            ((trace_id, file, unit, seen + k) for k, (trace_id, unit) in enumerate(self._pending.items())),
        )
        self._db.executemany('INSERT OR IGNORE INTO wanted VALUES (?, ?)', self._wanted)
        self._seen += len(self._pending)
        self._pending.clear()
        self._wanted.clear()

    def endings(self) -> Iterator[tuple[int, int, str]]:
        """(file, unit, trace id) of every id, in the order their last units come."""
        self._flush()
        return iter(self._db.execute('SELECT file, unit, id FROM last ORDER BY file, unit, first'))

    def wanted(self, file: int) -> Iterator[int]:
        """The units of a file marked wanted, in increasing order."""
        self._flush()
        return (unit for (unit,) in self._db.execute('SELECT unit FROM wanted WHERE file = ? ORDER BY unit', (file,)))

    def close(self) -> None:
        self._db.close()


class Ascending:
    """Membership in a sorted stream of units, for callers that ask about units in increasing order.

    The readers ask `unit in wanted` once per unit, in file order, so a cursor over the sorted
    units answers without holding them.
    """

    def __init__(self, units: Iterator[int]) -> None:
        self._units = units
        self._next: int | None = next(units, None)

    def __contains__(self, unit: object) -> bool:
        key = unit if isinstance(unit, int) else 0  # a file read whole is unit None, stored as 0
        while self._next is not None and self._next < key:
            self._next = next(self._units, None)
        return self._next == key
