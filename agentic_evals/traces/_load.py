"""`load_traces`: expand sources into files, then stream their traces out one by one.

Two passes over the files. The first finds, per trace id, the last unit (line, protobuf
`ResourceSpans`, or whole file) that mentions it, without decoding JSON, into a `TraceIndex` on
disk. The second decodes unit by unit and yields a trace as soon as its last unit is in, so
memory holds only the traces still open (for a JSON lines file written trace by trace, one), not
the file nor an entry per trace id. A single JSON document
has no smaller unit and is parsed whole. Problems in a unit surface when the second pass reaches
it: traces yielded before stay valid. Only what stops the first pass too (a line over the size
limit, corrupt or truncated gzip data, an unreadable file) raises before the first trace.
"""

from __future__ import annotations

import logging
import math
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

from ._assemble import Assembler, LoadedTrace
from ._detect import open_reader
from ._index import Ascending, TraceIndex
from ._readers import Reader, Stray
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
    return (trace for _, trace in _stream(_readers(sources, warn), warn))


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
    return _stream(_readers(sources, warn), warn, (part, parts))


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
    readers: list[Reader], warn: Callable[[str], None], partition: tuple[int, int] | None = None
) -> Iterator[tuple[int, LoadedTrace]]:
    """(place, trace) of each trace (of one partition, if given), place counting every partition's traces."""
    index = TraceIndex()
    try:
        for reader in readers:
            file = reader.index
            for unit, trace_id in reader.scan():
                index.add(file, unit or 0, trace_id, wanted=partition is not None and _mine(trace_id, partition))
        yield from _second_pass(readers, warn, partition, index)
    finally:
        index.close()


def _second_pass(
    readers: list[Reader], warn: Callable[[str], None], partition: tuple[int, int] | None, index: TraceIndex
) -> Iterator[tuple[int, LoadedTrace]]:
    assembler = Assembler([reader.path for reader in readers], warn)
    endings = index.endings()
    ending = next(endings, None)
    place = 0
    late: dict[str, int] = {}  # places of traces whose last unit the second pass never reached

    def settle(here: tuple[int, float]) -> Iterator[tuple[int, LoadedTrace]]:
        """The traces whose last unit is `here` (finished) or before it (never reached, so late)."""
        nonlocal ending, place
        while ending is not None and ending[:2] <= here:
            trace_id = ending[2]
            if not _mine(trace_id, partition):
                if ending[:2] == here:
                    assembler.drop(trace_id)
            elif ending[:2] < here:
                late[trace_id] = place
            elif (trace := assembler.pop(trace_id)) is not None:
                yield place, trace
            place += 1
            ending = next(endings, None)

    for reader in readers:
        file = reader.index
        try:
            wanted = None if partition is None else Ascending(index.wanted(file))
            for unit in reader.read(assembler, wanted):
                yield from settle((file, unit or 0))
        except Stray as stray:
            warn(str(stray))
        yield from settle((file, math.inf))  # the file's traces ending in units never read: late
    # Only traces whose last units were never reached, or whose ids the first pass could not see, are left.
    for trace in assembler.rest():
        if _mine(trace.trace_id, partition):
            yield late.pop(trace.trace_id, -1), trace


def _mine(trace_id: str, partition: tuple[int, int] | None) -> bool:
    """Whether a trace is in the partition (any trace, without one)."""
    return partition is None or partition_of(trace_id, partition[1]) == partition[0]
