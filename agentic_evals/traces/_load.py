"""`load_traces`: expand sources into files, then stream their traces out one by one.

Two passes over the files. The first finds, per trace id, the last unit (line, protobuf
`ResourceSpans`, or whole file) that mentions it, without decoding JSON. The second decodes unit
by unit and yields a trace as soon as its last unit is in, so memory holds only the traces still
open (for a JSON lines file written trace by trace, one), not the file. A single JSON document
has no smaller unit and is parsed whole. Problems in a unit surface when the second pass reaches
it: traces yielded before stay valid. Only what stops the first pass too (a line over the size
limit, corrupt or truncated gzip data, an unreadable file) raises before the first trace.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

from ._assemble import Assembler, LoadedTrace
from ._detect import open_reader
from ._readers import Reader, Stray, Unit
from ._sources import expand_sources

_logger = logging.getLogger('agentic_evals.traces')


def _log(message: str) -> None:
    _logger.warning('%s', message)


def load_traces(*sources: str | Path, on_warning: Callable[[str], None] | None = None) -> Iterator[LoadedTrace]:
    """Each trace in the given files, directories or glob patterns, as soon as all its spans are read.

    Spans of one trace spread over lines or files are merged into one tree. Files are listed and
    their formats detected now, so a missing file or an unknown format raises `FileError`
    here; everything else is read as the iterator is consumed, and raises `FileError` there.

    Problems a trace survives are in its `warnings`. The others are passed to `on_warning` (one
    line each, naming the file), as they are found; without it they are logged (logger
    `agentic_evals.traces`, level WARNING): a file found in a directory or by a pattern that
    is not a trace (skipped), a symbolic link loop (skipped), a trace none of whose spans could
    be read.
    """
    warn = on_warning or _log
    return _stream(_readers(sources, warn), warn)


def read_traces(*sources: str | Path, on_warning: Callable[[str], None] | None = None) -> list[LoadedTrace]:
    """All traces of the given sources in a list (`load_traces` without the streaming)."""
    return list(load_traces(*sources, on_warning=on_warning))


def load_partition(
    *sources: str | Path, part: int, parts: int, on_warning: Callable[[str], None] | None = None
) -> Iterator[tuple[int, LoadedTrace]]:
    """The traces of one of `parts` partitions (by trace id), each with its place in `load_traces`' order.

    Each of `parts` workers reads every file's trace ids (the cheap first pass), so all agree on
    every trace's place, and decodes only the units that hold spans of its own traces.
    """
    warn = on_warning or _log
    places: dict[str, int] = {}
    stream = _stream(_readers(sources, warn), warn, (part, parts, places))
    return ((places.pop(trace.trace_id, -1), trace) for trace in stream)


def _readers(sources: tuple[str | Path, ...], warn: Callable[[str], None]) -> list[Reader]:
    """A reader for every file the sources expand to, its format detected; stray files skipped with a warning."""
    readers: list[Reader] = []
    for path, found in expand_sources(sources, warn):
        try:
            readers.append(open_reader(path, len(readers), found=found))
        except Stray as stray:
            warn(str(stray))
    return readers


def partition_of(trace_id: str, parts: int) -> int:
    """Which of `parts` partitions a (normalized) trace id belongs to, the same in every process.

    A checksum of the whole id, not its digits: generators that fix some bits (an odd id, say, so it
    is never zero) would put every trace in one partition.
    """
    return zlib.crc32(trace_id.encode()) % parts


def _stream(
    readers: list[Reader],
    warn: Callable[[str], None],
    partition: tuple[int, int, dict[str, int]] | None = None,
) -> Iterator[LoadedTrace]:
    last: dict[str, tuple[int, Unit]] = {}
    wanted: dict[int, set[Unit]] | None = None if partition is None else {r.index: set() for r in readers}
    for reader in readers:
        for unit, trace_id in reader.scan():
            last[trace_id] = (reader.index, unit)
            if wanted is not None and partition is not None and partition_of(trace_id, partition[1]) == partition[0]:
                wanted[reader.index].add(unit)
    due: dict[tuple[int, Unit], list[str]] = {}
    for trace_id, position in last.items():
        due.setdefault(position, []).append(trace_id)
    del last
    if partition is not None:  # every trace's place in the order `load_traces` yields them
        part, parts, places = partition
        place = 0
        for position in sorted(due, key=lambda p: (p[0], p[1] or 0)):
            for trace_id in due[position]:
                if partition_of(trace_id, parts) == part:
                    places[trace_id] = place
                place += 1

    assembler = Assembler([reader.path for reader in readers], warn)
    for reader in readers:
        index = reader.index
        try:
            units = reader.read(assembler) if wanted is None else reader.read(assembler, wanted[index])
            for unit in units:
                finished = due.pop((index, unit), None)
                if finished:
                    for trace_id in finished:
                        if partition is not None and partition_of(trace_id, partition[1]) != partition[0]:
                            assembler.drop(trace_id)
                            continue
                        trace = assembler.pop(trace_id)
                        if trace is not None:
                            yield trace
        except Stray as stray:
            warn(str(stray))
    # Only traces whose ids the first pass could not see (none in well-formed files) are left.
    for trace in assembler.rest():
        if partition is None or partition_of(trace.trace_id, partition[1]) == partition[0]:
            yield trace
