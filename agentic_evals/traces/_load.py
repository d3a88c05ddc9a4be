"""`load_traces`: expand sources into files, then stream their traces out one by one.

Two passes over the files. The first finds, per trace id, the last unit (line, or whole file)
that mentions it, without decoding JSON. The second decodes unit by unit and yields a trace as
soon as its last unit is in, so memory holds only the traces still open (for a JSON lines file
written trace by trace, one), not the file. Protobuf files and single JSON documents have no
smaller unit and are parsed whole. Problems in a unit surface when the second pass reaches it:
traces yielded before stay valid.
"""

from __future__ import annotations

import glob
from collections.abc import Iterator
from pathlib import Path

from ..errors import FileError
from ._assemble import Assembler, LoadedTrace
from ._detect import open_reader
from ._readers import Reader, Unit

_GLOB_CHARACTERS = frozenset('*?[')
_NOT_TRACES = frozenset({'.md', '.rst', '.py', '.yaml', '.yml', '.toml', '.ini', '.cfg', '.csv', '.html', '.xml'})
"""Suffixes of files skipped inside directories (datasets and notes often sit next to traces)."""


def _is_hidden(path: Path, root: Path) -> bool:
    return any(part.startswith('.') for part in path.relative_to(root).parts)


def _directory_files(directory: Path) -> list[Path]:
    return sorted(
        path
        for path in directory.rglob('*')
        if path.is_file() and not _is_hidden(path, directory) and path.suffix.lower() not in _NOT_TRACES
    )


def expand_sources(sources: tuple[str | Path, ...]) -> list[Path]:
    """Files, directories (every non-hidden file inside, recursively, sorted) and glob patterns.

    A file named twice (say, by a directory and by name) is read once, where it first appears.
    """
    files: dict[Path, None] = {}
    for source in sources:
        path = Path(source)
        if path.is_dir():
            found = _directory_files(path)
            if not found:
                raise FileError(path, 'no trace files in this directory')
        elif path.exists() or not _GLOB_CHARACTERS.intersection(str(source)):
            found = [path]
        else:
            found = []
            for match in sorted(glob.glob(str(source), recursive=True)):
                match_path = Path(match)
                found.extend(_directory_files(match_path) if match_path.is_dir() else [match_path])
            if not found:
                raise FileError(path, 'no files match this pattern')
        for file in found:
            files.setdefault(file, None)
    return list(files)


def load_traces(*sources: str | Path) -> Iterator[LoadedTrace]:
    """Each trace in the given files, directories or glob patterns, as soon as all its spans are read.

    Spans of one trace spread over lines or files are merged into one tree. Files are listed and
    their formats detected now, so a missing file or an unknown format raises `FileError`
    here; everything else is read as the iterator is consumed, and raises `FileError` there.
    """
    files = expand_sources(sources)
    readers = [open_reader(path, index) for index, path in enumerate(files)]
    return _stream(readers)


def read_traces(*sources: str | Path) -> list[LoadedTrace]:
    """All traces of the given sources in a list (`load_traces` without the streaming)."""
    return list(load_traces(*sources))


def _stream(readers: list[Reader]) -> Iterator[LoadedTrace]:
    last: dict[str, tuple[int, Unit]] = {}
    for reader in readers:
        for unit, trace_id in reader.scan():
            last[trace_id] = (reader.index, unit)
    due: dict[tuple[int, Unit], list[str]] = {}
    for trace_id, position in last.items():
        due.setdefault(position, []).append(trace_id)
    del last

    assembler = Assembler([reader.path for reader in readers])
    for reader in readers:
        index = reader.index
        for unit in reader.read(assembler):
            finished = due.pop((index, unit), None)
            if finished:
                for trace_id in finished:
                    trace = assembler.pop(trace_id)
                    if trace is not None:
                        yield trace
    # Only traces whose ids the first pass could not see (none in well-formed files) are left.
    yield from assembler.rest()
