"""Trace files read one file at a time into per-trace parts, and the parts of a trace joined again.

For engines that read files on many machines (Ray): no process sees every file, so each file
becomes *parts*, one per trace id it holds, that are picklable and small enough to shuffle; the
engine groups them by trace id and `join` turns a trace's parts into exactly the `LoadedTrace`
`load_traces` gives: the same tree, `sources` and warnings, with duplicate span ids and missing
parents judged on the whole trace, because the spans are replayed into the same `Assembler` in the
same order as a single reader would have handed them over.

A file is read with the same readers as `load_traces` (detection, the first pass that counts trace
id keys, the decoding pass), so errors are the same `FileError` lines. Object-store files
(`s3://`, `gs://`, anything pyarrow's `FileSystem.from_uri` knows) are copied to a local temporary
file first; their errors and warnings name the URI.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, cast

from pydantic_evals.otel.span_tree import SpanNode

from ..errors import FileError
from ._assemble import Assembler, LoadedTrace, Location, TraceBuilder
from ._detect import open_reader
from ._readers import Reader, Stray, Unit
from ._sources import _GLOB_CHARACTERS, _NOT_TRACES, expand_sources

Key = tuple[int, ...]
"""Where a trace sorts among the traces of a load: the order `load_traces` yields them in."""


def is_uri(source: str | Path) -> bool:
    """Whether a source names an object in a store (`s3://bucket/key`) rather than a local path."""
    return isinstance(source, str) and '://' in source and not source.startswith('file://')


class ObjectPath(PurePosixPath):
    """An object-store URI that keeps its `//` when shown (a `Path` would print `s3:/bucket`)."""

    uri: str

    def __new__(cls, uri: str, *rest: str) -> ObjectPath:
        self = super().__new__(cls, uri, *rest)
        self.uri = uri
        return self

    def __str__(self) -> str:
        return self.uri

    def __repr__(self) -> str:
        return f'ObjectPath({self.uri!r})'

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.uri,)


class ObjectFileError(FileError):
    """A `FileError` about an object-store file, naming it by its URI."""

    def __init__(self, path: str | Path, message: str, *, line: int | None = None, offset: int | None = None) -> None:
        super().__init__(path, message, line=line, offset=offset)
        self.path = cast(Path, ObjectPath(str(path)))
        self.args = (str(self),)


def _shown(name: str) -> Path:
    return cast(Path, ObjectPath(name)) if is_uri(name) else Path(name)


def _file_error(name: str, error: FileError) -> FileError:
    """`error` (raised about a local copy, or already about `name`) naming `name`."""
    kind = ObjectFileError if is_uri(name) else FileError
    return kind(name, error.message, line=error.line, offset=error.offset)


@dataclass(frozen=True)
class FileSpec:
    """One file of a load, as a worker needs it.

    `index` is its place in the expanded, sorted source list; `shown` is how messages name it (the
    path as the user gave it, or the URI); `location` is where a worker reads it (an absolute
    path, or the URI); `found` is set when a walk or pattern found it (a stray file is skipped).
    """

    index: int
    shown: str
    location: str
    found: bool


def expand_files(sources: Iterable[str | Path], warn: Callable[[str], None]) -> list[FileSpec]:
    """Every file the sources name, in the order `load_traces` reads them; object-store URIs listed too.

    Local sources expand as `load_traces` expands them (one list, so the order is the same);
    URIs are listed with pyarrow's filesystems: a prefix ending in `/` (or naming a directory)
    is every object below it, a glob pattern is matched against a listing of its fixed prefix.
    """
    specs: list[FileSpec] = []
    local: list[str | Path] = []
    ordered: list[tuple[str, str, bool]] = []

    def flush() -> None:
        for path, found in expand_sources(tuple(local), warn):
            ordered.append((str(path), os.path.abspath(path), found))
        local.clear()

    for source in sources:
        if is_uri(source):
            flush()
            ordered.extend((uri, uri, found) for uri, found in _list_uri(str(source)))
        else:
            local.append(source)
    flush()
    seen: set[str] = set()
    for shown, location, found in ordered:
        if location in seen:
            continue
        seen.add(location)
        specs.append(FileSpec(len(specs), shown, location, found))
    return specs


def _filesystem(uri: str) -> tuple[Any, str]:
    try:
        from pyarrow import fs
    except ImportError:  # pragma: no cover - the engines' extra brings it
        raise FileError(uri, 'reading object storage needs pyarrow: pip install "agentic-evals-otel[ray]"') from None
    try:
        filesystem, path = fs.FileSystem.from_uri(uri)
    except (OSError, ValueError) as error:
        raise ObjectFileError(uri, f'cannot open: {_first_line(error)}') from None
    return filesystem, str(path)


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def _list_uri(uri: str) -> list[tuple[str, bool]]:
    """(URI, found) of the objects a URI names: itself, everything under a prefix, or a pattern's matches."""
    from pyarrow import fs

    scheme, _, rest = uri.partition('://')
    query = ''
    if '?' in rest:
        rest, _, query = rest.partition('?')
    suffix = f'?{query}' if query else ''
    pattern = _GLOB_CHARACTERS.intersection(rest)
    parts = rest.split('/')
    fixed = len(parts)
    if pattern:
        fixed = next(index for index, part in enumerate(parts) if _GLOB_CHARACTERS.intersection(part))
    base = '/'.join(parts[:fixed]).rstrip('/')
    filesystem, root = _filesystem(f'{scheme}://{base}{suffix}')
    try:
        if not pattern:
            info = filesystem.get_file_info(root)
            if info.type == fs.FileType.File and not rest.endswith('/'):
                return [(uri, False)]
            if info.type == fs.FileType.NotFound and not rest.endswith('/'):
                raise ObjectFileError(uri, 'no such file')
        infos = filesystem.get_file_info(fs.FileSelector(root, recursive=True, allow_not_found=True))
    except OSError as error:
        raise ObjectFileError(uri, f'cannot list: {_first_line(error)}') from None
    files: list[tuple[str, bool]] = []
    for info in sorted(infos, key=lambda info: str(info.path)):
        if info.type != fs.FileType.File:
            continue
        relative = str(info.path)[len(root) :].lstrip('/')
        names = relative.split('/')
        if any(name.startswith('.') for name in names):
            continue
        if pattern:
            wanted = parts[fixed:]
            if not _matches(names, wanted):
                continue
        elif PurePosixPath(names[-1]).suffix.lower() in _NOT_TRACES:
            continue
        files.append((f'{scheme}://{base}/{relative}{suffix}', True))
    if not files:
        what = 'no files match this pattern' if pattern else 'no trace files under this prefix'
        raise ObjectFileError(uri, what)
    return files


def _matches(names: list[str], pattern: list[str]) -> bool:
    """Glob matching by path components, `**` standing for any number of them."""
    if not pattern:
        return not names
    if pattern[0] == '**':
        return any(_matches(names[skip:], pattern[1:]) for skip in range(len(names) + 1))
    return bool(names) and fnmatch.fnmatchcase(names[0], pattern[0]) and _matches(names[1:], pattern[1:])


Event = tuple['int | None', 'SpanNode | str']
"""A span handed over (with its line), or a warning about the trace (with its line), in reading order."""


@dataclass
class Part:
    """What one file holds of one trace: its spans and warnings in reading order, and where the trace sits.

    `first` is (unit, ordinal) of the trace id's first mention in the file's first pass and `last`
    its last unit there (None when the first pass did not see it); `reached` says whether reading
    got to `last` (a stray file stops early); `opened` is the order its first span came in.
    """

    trace_id: str
    file: int
    shown: str
    events: list[Event] = field(default_factory=list)
    first: tuple[int, int] | None = None
    last: int | None = None
    reached: bool = False
    opened: int = -1


@dataclass
class FileOutcome:
    """How reading one file ended: the warnings that belong to no trace, and the error that stopped it.

    `stage` orders errors as `load_traces` meets them: every file is detected (0), then scanned
    (1), before any is decoded (2); the error of the earliest stage, then file, is the one raised.
    """

    index: int
    warnings: list[str] = field(default_factory=list)
    error: FileError | None = None
    stage: int = 0


class _Recorder(TraceBuilder):
    """A builder that keeps every span and warning in order, for the join to replay."""

    __slots__ = ('events', 'opened')

    def __init__(self, assembler: Assembler, trace_id: str) -> None:
        super().__init__(assembler, trace_id)
        self.events: list[Event] = []
        self.opened = len(assembler.builders)

    def add(self, node: SpanNode, location: Location) -> None:
        self.events.append((location[1], node))

    def warn(self, location: Location, message: str) -> None:
        self.events.append((location[1], message))


class _RecordingAssembler(Assembler):
    def __init__(self, paths: list[Path], on_warning: Callable[[str], None]) -> None:
        super().__init__(paths, on_warning)
        self.opened = 0

    def builder(self, trace_id: str) -> TraceBuilder:
        builder = self.builders.get(trace_id)
        if builder is None:
            recorder = _Recorder(self, trace_id)
            recorder.opened = self.opened
            self.opened += 1
            builder = self.builders[trace_id] = recorder
        return builder

    def take(self, trace_id: str) -> _Recorder | None:
        builder = self.builders.pop(trace_id, None)
        if builder is None:
            return None
        for raw in builder.raw_ids:
            self.aliases.pop(raw, None)
        return cast(_Recorder, builder)


def _unit(unit: Unit) -> int:
    return 0 if unit is None else unit


def read_file(spec: FileSpec) -> Iterator[Part | FileOutcome]:
    """The parts of one file, each as soon as its trace's last unit in the file is read, then its outcome."""
    outcome = FileOutcome(spec.index)
    local = spec.location
    copy: str | None = None
    try:
        if is_uri(spec.location):
            try:
                copy = local = _download(spec.location)
            except FileError as error:
                outcome.error = error
                yield outcome
                return
        yield from _read_local(spec, Path(local), outcome)
    finally:
        if copy is not None:
            os.unlink(copy)
    yield outcome


def _download(uri: str) -> str:
    """A local copy of an object (compressed as stored: detection reads gzip itself)."""
    filesystem, path = _filesystem(uri)
    handle, name = tempfile.mkstemp(prefix='agentic-evals-', suffix='.part')
    try:
        with os.fdopen(handle, 'wb') as out, filesystem.open_input_stream(path, compression=None) as stream:
            shutil.copyfileobj(stream, out, 2**20)
    except FileNotFoundError:
        os.unlink(name)
        raise ObjectFileError(uri, 'no such file') from None
    except OSError as error:
        os.unlink(name)
        raise ObjectFileError(uri, f'cannot read: {_first_line(error)}') from None
    return name


def _read_local(spec: FileSpec, path: Path, outcome: FileOutcome) -> Iterator[Part]:
    shown = _shown(spec.shown)
    try:
        reader: Reader = open_reader(path, 0, found=spec.found)
    except Stray as stray:
        outcome.warnings.append(str(_file_error(spec.shown, stray)))
        return
    except FileError as error:
        outcome.error = _file_error(spec.shown, error)
        return
    outcome.stage = 1
    scanned: dict[str, Part] = {}
    last: dict[str, Unit] = {}
    try:
        for unit, trace_id in reader.scan():
            part = scanned.get(trace_id)
            if part is None:
                part = scanned[trace_id] = Part(trace_id, spec.index, spec.shown, first=(_unit(unit), len(scanned)))
            part.last = _unit(unit)
            last[trace_id] = unit
    except FileError as error:
        outcome.error = _file_error(spec.shown, error)
        return
    due: dict[Unit, list[str]] = {}
    for trace_id, unit in last.items():
        due.setdefault(unit, []).append(trace_id)
    del last
    outcome.stage = 2
    assembler = _RecordingAssembler([shown], outcome.warnings.append)
    try:
        for unit in reader.read(assembler):
            for trace_id in due.pop(unit, ()):
                part = scanned.pop(trace_id)
                part.reached = True
                _fill(part, assembler.take(trace_id))
                yield part
    except Stray as stray:
        outcome.warnings.append(str(_file_error(spec.shown, stray)))
    except FileError as error:
        outcome.error = _file_error(spec.shown, error)
        return
    for trace_id, part in scanned.items():  # not reached: the file stopped early
        _fill(part, assembler.take(trace_id))
        yield part
    for trace_id in list(assembler.builders):  # spans of ids the first pass did not see
        part = Part(trace_id, spec.index, spec.shown)
        _fill(part, assembler.take(trace_id))
        yield part


def _fill(part: Part, recorder: _Recorder | None) -> None:
    if recorder is not None:
        part.events = recorder.events
        part.opened = recorder.opened


def trace_key(parts: list[Part], files: int) -> Key:
    """The trace's place in the order `load_traces` yields: when its last unit is read, then its first mention.

    A trace whose last unit was never reached (or that the first pass did not see) comes at the
    end, as `load_traces` yields it after every file, in the order of its first span.
    """
    scanned = [part for part in parts if part.last is not None and part.first is not None]
    if scanned:
        final = max(scanned, key=lambda part: (part.file, part.last or 0))
        if final.reached:
            start = min(scanned, key=lambda part: part.file)
            first = start.first or (0, 0)
            return (final.file, final.last or 0, start.file, first[0], first[1])
    opened = [part for part in parts if part.opened >= 0]
    start = min(opened or parts, key=lambda part: part.file)
    return (files, 0, start.file, start.opened, 0)


def join(parts: Iterable[Part], on_warning: Callable[[str], None]) -> LoadedTrace | None:
    """The `LoadedTrace` of one trace's parts (any order), as `load_traces` would give it.

    None when no part holds a span; the warnings of such a trace go to `on_warning`, as locally.
    """
    ordered = sorted(parts, key=lambda part: part.file)
    if not ordered:
        return None
    trace_id = ordered[0].trace_id
    assembler = Assembler([_shown(part.shown) for part in ordered], on_warning)
    builder = assembler.builder(trace_id)
    for index, part in enumerate(ordered):
        add, warn = builder.add, builder.warn
        for line, item in part.events:
            if isinstance(item, str):
                warn((index, line), item)
            else:
                add(item, (index, line))
    return assembler.pop(trace_id)


def first_error(outcomes: Iterable[FileOutcome]) -> FileError | None:
    """The error `load_traces` would raise over the same files: of the earliest stage, then file."""
    failed = [outcome for outcome in outcomes if outcome.error is not None]
    if not failed:
        return None
    return min(failed, key=lambda outcome: (outcome.stage, outcome.index)).error


def file_warnings(outcomes: Iterable[FileOutcome]) -> list[str]:
    """The files' warnings in the order `load_traces` gives them: skipped files first, then by file."""
    ordered = sorted(outcomes, key=lambda outcome: (outcome.stage != 0, outcome.index))
    return [warning for outcome in ordered for warning in outcome.warnings]
