"""A report built one case at a time, in memory that does not grow with the cases.

`run` scores a million traces; holding every case for the report would take gigabytes. A
`ReportBuilder` takes each case's entry as it is scored (`add`, in any order: workers finish out of
order), pickles it to a temporary file and folds it into running aggregates. `document()` then gives
a `ReportDocument` whose `cases` and `failures` are `Spooled` sequences: each pass over them reads
the file again, one entry at a time, in the order of the entries' keys, so every view of the report
(gates, table, JSON, JUnit, Markdown) is the same as for a document held in memory, and costs one
entry's memory: the keys and offsets that give the order are in a temporary SQLite table.

Averages are exact sums (`math.fsum` partials), so they do not depend on the order cases arrive in:
one worker or many, local or on a cluster, give the same report.
"""

from __future__ import annotations

import itertools
import os
import pickle
import sqlite3
import struct
import tempfile
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import IO, Any, Generic, TypeVar, overload

from .document import (
    Aggregates,
    AssertionResult,
    CaseFailure,
    CaseResult,
    LabelResult,
    ReportDocument,
    ScoreResult,
)

Key = tuple[int, ...]
"""Where an entry sorts in the report: `(case index,)` with a dataset, the trace's arrival otherwise."""
Row = tuple[Key, 'CaseResult | CaseFailure']
"""One case's entry with its key: what workers send back."""

T = TypeVar('T', CaseResult, CaseFailure)


class Spooled(Sequence[T], Generic[T]):
    """Entries pickled in a file, read back one at a time in key order (one file read per pass).

    With `rename`, an entry whose name an earlier one (in key order) has gets a ` (trace id prefix)`
    suffix. Indexing works, but each access reads the keys again: the views iterate.
    """

    def __init__(
        self, file: IO[bytes], keys: _Keys, failures: bool, count: int, added: int, rename: bool = False
    ) -> None:
        self._file = file
        self._keys = keys
        self._failures = failures
        self._count = count
        self._added = added  # entries of both kinds when the document was made: later ones are not in it
        self._rename = rename

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return list(itertools.islice(self, *index.indices(len(self))))
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(index)
        return next(itertools.islice(self, position, None))

    def __iter__(self) -> Iterator[T]:
        for offset, repeat in self._keys.offsets(self._failures, self._added, self._rename):
            self._file.seek(offset)
            entry: T = pickle.load(self._file)
            if repeat > 1 and isinstance(entry, CaseResult):
                entry.name = f'{entry.name} ({(entry.trace_id or "")[:8]})'
            yield entry


_BATCH = 10_000
"""Keys gathered in memory before they go to the table."""


class _Keys:
    """Each entry's key and offset in the spool, in a temporary SQLite table that sorts them on disk.

    A key and an offset are only 16 bytes, but a million cases are still 16 MB, and sorting them in
    Python takes twice that again; SQLite's sorter works in a bounded page cache.
    """

    def __init__(self) -> None:
        self._db = sqlite3.connect('', check_same_thread=False)  # '': private, on disk, gone on close
        self._db.executescript(
            """
            PRAGMA cache_size = -8192;
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            CREATE TABLE entries (failure INTEGER, key BLOB, offset INTEGER, name BLOB);
            """
        )
        self._batch: list[tuple[bool, bytes, int, bytes]] = []

    def add(self, failure: bool, key: Key, offset: int, name: str) -> None:
        # Big-endian, shifted to unsigned: bytes compare as the tuples do (a shorter prefix first).
        # The name as bytes: only compared for equality, and a lone surrogate is no UTF-8 text.
        packed = struct.pack(f'>{len(key)}Q', *(k + 2**63 for k in key))
        self._batch.append((failure, packed, offset, name.encode('utf-8', 'surrogatepass')))
        if len(self._batch) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._batch:
            self._db.executemany('INSERT INTO entries VALUES (?, ?, ?, ?)', self._batch)
            self._batch.clear()

    def offsets(self, failures: bool, added: int, rename: bool) -> Iterator[tuple[int, int]]:
        """(offset, how many entries up to it have its name) of one kind of entry among the first `added`
        (what a document saw), in key order, ties by arrival; without `rename` the count is always 1."""
        self._flush()
        repeat = 'ROW_NUMBER() OVER (PARTITION BY name ORDER BY key, rowid)' if rename else '1'
        query = f'SELECT offset, {repeat} FROM entries WHERE failure = ? AND rowid <= ? ORDER BY key, rowid'
        return iter(self._db.execute(query, (failures, added)))

    def close(self) -> None:
        self._db.close()


class ReportBuilder:
    """Collects case entries one by one: spooled to a temporary file, folded into aggregates.

    `rename` (used without a dataset, where cases are named after their traces' files) gives a
    case whose name an earlier case (in key order) already has a ` (trace id prefix)` suffix.
    `expected` (`Suite.expected_results`) is recorded on each entry, as `document_from_report` does.
    """

    def __init__(
        self,
        name: str,
        *,
        expected: Mapping[str, Collection[str]] | None = None,
        rename: bool = False,
        directory: str | None = None,
    ) -> None:
        self.name = name
        self._expected = expected
        self._rename = rename
        self._file = tempfile.TemporaryFile(dir=directory)  # noqa: SIM115 - closed by `close`
        self._keys = _Keys()
        self._counts = [0, 0]  # cases, failures
        self._aggregates = Aggregates()

    def add(self, key: Key, entry: CaseResult | CaseFailure) -> None:
        if self._expected is not None:
            names = self._expected.get(entry.name)
            entry.expected_results = sorted(names) if names is not None else None
        self._file.seek(0, os.SEEK_END)
        offset = self._file.tell()
        pickle.dump(entry, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        failure = isinstance(entry, CaseFailure)
        self._keys.add(failure, key, offset, entry.name)
        self._counts[failure] += 1
        self._aggregates.add(entry)

    def document(self) -> ReportDocument:
        """The report so far: its entries read from the spool, its averages and totals from the aggregates."""
        self._file.flush()
        added = sum(self._counts)
        cases: Sequence[CaseResult] = Spooled(self._file, self._keys, False, self._counts[0], added, self._rename)
        failures: Sequence[CaseFailure] = Spooled(self._file, self._keys, True, self._counts[1], added)
        averages, totals = self._aggregates.averages(), self._aggregates.totals()
        return ReportDocument(name=self.name, cases=cases, failures=failures, averages=averages, totals=totals)

    def close(self) -> None:
        self._file.close()
        self._keys.close()

    def __enter__(self) -> ReportBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def result_records(entry: CaseResult | CaseFailure) -> Iterator[dict[str, Any]]:
    """One JSON-able record per result of a case (and one for a case that failed before scoring):
    the lines of `run --results`, which a query engine reads without the whole report."""
    base: dict[str, Any] = {'case': entry.name}
    if isinstance(entry, CaseFailure):
        yield {**base, 'trace_id': None, 'kind': 'case_failure', 'name': None, 'evaluator': None, 'value': None,
               'reason': entry.error}  # fmt: skip
        return
    base['trace_id'] = entry.trace_id
    kinds: tuple[tuple[str, Mapping[str, ScoreResult | AssertionResult | LabelResult]], ...] = (
        ('assertion', entry.assertions),
        ('score', entry.scores),
        ('label', entry.labels),
    )
    for kind, results in kinds:
        for name, result in results.items():
            yield {**base, 'kind': kind, 'name': name, 'evaluator': result.evaluator, 'value': result.value,
                   'reason': result.reason}  # fmt: skip
    for error in entry.evaluator_errors:
        yield {**base, 'kind': 'evaluator_error', 'name': error.name, 'evaluator': error.evaluator, 'value': None,
               'reason': error.message}  # fmt: skip
