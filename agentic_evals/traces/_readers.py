"""Read a trace file in the two passes `load_traces` makes, one reader class per kind of file.

`scan` is the cheap first pass: which trace ids occur in which unit (line, `ResourceSpans` of a
protobuf file, or the whole file for a document), found with a regular expression without
decoding JSON (protobuf: each `ResourceSpans` parsed, the spans' ids read). `read` decodes
unit by unit into the assembler and yields each unit once its spans are in. Each JSON line or
document is dispatched by its shape (`_shapes`).

Memory is bounded by the size of one unit, never by what a small compressed file expands to:
a line may hold at most `MAX_LINE` bytes and a file read whole (or one protobuf `ResourceSpans`)
`MAX_DOCUMENT` (after decompression), and reading stops at the limit with a `FileError`. Every `FileError` about the
content carries a line (JSON) or a byte offset (protobuf, gzip).
"""

from __future__ import annotations

import gc
import json
import re
from array import array
from collections.abc import Callable, Container, Iterator
from pathlib import Path
from typing import IO, Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ..errors import FileError, os_reason
from ._assemble import Assembler
from ._errors import BadData, NotTraces
from ._gzip import GzipError, open_gzip
from ._ids import base64_hex
from ._locate import deepest_line, line_of, repeated_key_line, start_line
from ._otlp_proto import NO_RESOURCE_SPANS, decode_proto, invalid, parse_proto, proto_trace_ids, unknown_request_field
from ._protowire import StreamProblem, offset_of, top_level_fields
from ._shapes import RepeatedKey, check_repeated_keys, decode_json

Unit = int | None
"""A line number (the number of a `ResourceSpans` in protobuf), or None for a file read as a whole."""

RESOURCE_SPANS = 1
"""`ExportTraceServiceRequest.resource_spans`, the field a protobuf file is read by."""

MAX_LINE = 64 * 2**20
"""The most bytes one line of a JSON lines file may hold (its newline included)."""
MAX_DOCUMENT = 64 * 2**20
"""The most bytes of a file read whole (a JSON document) or of one protobuf `ResourceSpans`, after decompression."""
_CHUNK = 2**20

_TRACE_ID = re.compile(rb'"trace[Ii][Dd]"\s*:\s*"([^"]*)"')
_WHITESPACE = frozenset(b' \t\r\n')
ERRORS = (OSError, GzipError)


def parse_json(data: bytes) -> Any:
    """`json.loads`, with orjson's speed where it gives the same value, and the garbage collector paused.

    Parsing a line builds thousands of containers, none of them garbage, and the collector would
    scan them several times over while they are being built: pausing it (unless the application
    paused it already) makes loading about 15 % faster. Only the parse is covered: decoding runs
    with the collector on, so the trees a caller has dropped are still collected at the usual pace
    and memory stays flat.
    """
    if not gc.isenabled():
        return _loads(data)
    gc.disable()
    try:
        return _loads(data)
    finally:
        gc.enable()


def _loads(data: bytes) -> Any:
    """orjson's value when it is certainly `json.loads`'s; else (and for every error) `json.loads` decides.

    orjson parses about three times as fast, but refuses some text `json` reads (NaN and
    Infinity, numbers beyond a double's range, lone surrogates, a byte order mark, nesting
    deeper than 1024) and reads integers beyond 64 bits as floats. So its errors are never
    reported (`json` parses again and raises its own, with its messages and columns), and a
    value it returns is kept only when `_as_json_reads` finds neither a float where such an
    integer may have been nor nesting deep enough that `json` might run out of recursion.
    """
    if _orjson_loads is not None:
        try:
            document = _orjson_loads(data)
        except ValueError:
            pass
        else:
            if _as_json_reads(document):
                return document
    return json.loads(data)


FAST_DEPTH = 64
"""Nesting (containers in containers) up to which orjson's value is kept; deeper, `json` parses again.

Far below `json`'s own limit (the recursion limit, 1000 by default, less the stack in use),
so a value kept is one `json` would have returned too; OTLP nests about 12 deep.
"""
_SAFE_FLOATS = (-9.2e18, 1.8e19)
"""Floats strictly inside this range cannot be orjson's reading of an integer beyond 64 bits (-2**63 .. 2**64)."""


def _as_json_reads(document: Any) -> bool:
    """Whether `document` (orjson's) is nested at most `FAST_DEPTH` deep and has no float outside `_SAFE_FLOATS`.

    Walked a level at a time with `gc.get_referents`, which lists the values of all the level's
    lists and dicts in C (str, int and float have none), so the walk costs a few percent of the parse.
    """
    low, high = _SAFE_FLOATS
    level = [document]
    for _ in range(FAST_DEPTH):
        for value in level:
            if type(value) is float and not low < value < high:
                return False
        level = _referents(*level)
        if not level:
            return True
    return False


def _orjson() -> Callable[[bytes], Any] | None:
    """`orjson.loads`, or None without orjson or where `gc.get_referents` would not list a container's values."""
    try:
        from orjson import loads
    except ImportError:  # pragma: no cover - a dependency; a platform without its wheel still loads, slower
        return None
    probe: dict[str, Any] = {'float': 0.5, 'list': [1]}
    if sorted(map(repr, _referents(probe))) != ['0.5', '[1]']:  # pragma: no cover - no CPython does this
        return None
    return loads


_referents = gc.get_referents
_orjson_loads = _orjson()


def _scan_key(raw: bytes) -> str:
    text = raw.decode('ascii', 'replace')
    return (base64_hex(text, 32) or text).lower().rjust(32, '0')


def _mib(size: int) -> str:
    return f'{size / 2**20:g} MiB'


class Reader:
    """One trace file, opened afresh (and decompressed) by each pass.

    `found` is set for a file found by walking a directory or a glob: if its content is no trace
    format at all, it is a stray file (notes, a report), which `load_traces` skips with a
    warning instead of failing.
    """

    format = 'unknown'

    def __init__(self, path: Path, index: int, gzipped: bool, *, found: bool = False) -> None:
        self.path = path
        self.index = index
        self.gzipped = gzipped
        self.found = found
        self.trace_id_keys = array('I')
        """Per unit (line, or the whole file), the trace id keys the first pass saw: see `decode`."""

    def open(self) -> IO[bytes]:
        if self.gzipped:
            return open_gzip(self.path)
        # A large buffer: `readline` of the default 8 KiB one copies a 100 KB line in pieces, 4x slower.
        return open(self.path, 'rb', buffering=_CHUNK)

    def scan(self) -> Iterator[tuple[Unit, str]]:
        raise NotImplementedError

    def read(self, assembler: Assembler, wanted: Container[Unit] | None = None) -> Iterator[Unit]:
        """Decode unit by unit into `assembler`, yielding each unit once it is in; with `wanted`, units
        not in it are yielded undecoded (a worker of a partitioned load skips other workers' spans)."""
        raise NotImplementedError

    def read_all(self) -> bytes:
        """The whole (decompressed) file, refused beyond `MAX_DOCUMENT`."""
        try:
            with self.open() as stream:
                # In chunks: `read(MAX_DOCUMENT + 1)` would allocate the whole limit for a small file.
                chunks: list[bytes] = []
                size = 0
                while size <= MAX_DOCUMENT and (chunk := stream.read(_CHUNK)):
                    chunks.append(chunk)
                    size += len(chunk)
                data = b''.join(chunks)
        except ERRORS as error:
            raise self.io_error(error, None) from None
        if len(data) > MAX_DOCUMENT:
            what = 'decompressed, ' if self.gzipped else ''
            message = (
                f'larger than {_mib(MAX_DOCUMENT)} ({what}the limit for a file read whole: a JSON document or protobuf)'
            )
            raise FileError(self.path, message, offset=MAX_DOCUMENT)
        return data

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(line number, line) of the (decompressed) file, each refused beyond `MAX_LINE` bytes."""
        number = 0
        try:
            with self.open() as stream:
                readline = stream.readline
                while line := readline(MAX_LINE + 1):
                    number += 1
                    if len(line) > MAX_LINE:
                        raise FileError(
                            self.path, f'line longer than {_mib(MAX_LINE)} (the limit for one line)', line=number
                        )
                    yield number, line
        except ERRORS as error:
            raise self.io_error(error, number) from None

    def io_error(self, error: BaseException, line: int | None) -> FileError:
        if isinstance(error, GzipError):
            return FileError(self.path, error.message, offset=error.offset)
        reason = os_reason(error)
        if line is not None:
            return FileError(self.path, f'cannot read: {reason}', line=line + 1)
        return FileError(self.path, f'cannot read: {reason}')

    def count_trace_id_keys(self, found: int) -> None:
        self.trace_id_keys.append(min(found, 2**32 - 1))

    def decode(self, document: Any, data: bytes, line: int | None, assembler: Assembler, *, first: bool) -> None:
        """Decode one parsed unit (`data` is its text); `BadData` becomes a `FileError` with the line.

        Checks that the decoders saw every object with a trace id key the first pass found in
        the text: `json` keeps only the last value of a key repeated in one object, so spans
        under an earlier `"spans"` (or any container key) would vanish without this. The count
        comes free with the first pass (4 bytes a line); the slow check (a parse that compares
        keys) runs only when the decoders saw fewer.
        """
        unit = (line or 1) - 1
        expected = self.trace_id_keys[unit] if unit < len(self.trace_id_keys) else 0
        try:
            seen = decode_json(document, (self.index, line), assembler)
            if seen < expected:
                check_repeated_keys(data)
        except BadData as error:
            if isinstance(error, NotTraces) and self.found and first and not any(error.path):  # nothing read yet
                raise Stray(self.path, f'skipped, not a trace file ({error.message})', line=line or 1) from None
            where = line or line_of(data, error.path) or start_line(data)
            raise FileError(self.path, error.message, line=where) from None
        except RepeatedKey as repeated:
            message = (
                f'the key {repeated.key!r} appears twice in one object: the spans under its first value would be lost'
            )
            where = line or repeated_key_line(data, repeated.key) or start_line(data)
            raise FileError(self.path, message, line=where) from None
        except RecursionError:  # lists in lists, as deep as the parser just managed
            raise FileError(self.path, 'JSON nested too deeply to read', line=line or deepest_line(data)) from None

    def json_error(self, error: ValueError | RecursionError, data: bytes, line: int | None) -> FileError:
        """Why `data` (a line without its newline, or a whole document when `line` is None) is not JSON, and where."""
        where = 1
        if isinstance(error, RecursionError):
            message = 'JSON nested too deeply to read'
            where = deepest_line(data)
        elif isinstance(error, json.JSONDecodeError):
            message = f'invalid JSON: {error.msg} (column {error.colno})'
            where = error.lineno
        elif isinstance(error, UnicodeDecodeError):
            message = (
                f'invalid JSON: not UTF-8 text ({error.reason}, byte {error.start + 1}{" of the line" if line else ""})'
            )
            where = data.count(b'\n', 0, error.start) + 1
        elif 'digits' in str(error):  # int's limit on the digits it converts
            message = 'invalid JSON: a number with more digits than can be read (4300)'
            found = re.search(rb'[0-9]{4300}', data)
            where = data.count(b'\n', 0, found.start()) + 1 if found else 1
        else:  # pragma: no cover - json raises no other ValueError
            message = f'invalid JSON: {error}'
        return FileError(self.path, message, line=line or where)


class Stray(FileError):
    """A file found by a directory walk or glob that holds no trace format: skipped with a warning."""


class JsonLinesReader(Reader):
    format = 'JSON lines'

    def scan(self) -> Iterator[tuple[Unit, str]]:
        count = self.count_trace_id_keys
        for number, line in self.lines():
            start = line.find(b'"trace')  # the pattern runs from the first candidate, and not at all without one
            if start < 0:
                count(0)
                continue
            found = _TRACE_ID.findall(line, start)
            count(len(found))
            for raw in dict.fromkeys(found):
                yield number, _scan_key(raw)

    def read(self, assembler: Assembler, wanted: Container[Unit] | None = None) -> Iterator[Unit]:
        first = True
        for number, line in self.lines():
            if line[0] in _WHITESPACE and not line.strip():
                continue
            if wanted is not None and number not in wanted:
                first = False
                yield number
                continue
            try:
                document = parse_json(line)
            except (ValueError, RecursionError) as error:
                raise self.line_error(line, error, number) from None
            self.decode(document, line, number, assembler, first=first)
            first = False
            yield number

    def line_error(self, line: bytes, error: ValueError | RecursionError, number: int) -> FileError:
        """`json_error` with the column counted within the line (its newline stripped, not counted)."""
        stripped = line.rstrip()
        try:
            json.loads(stripped)
        except json.JSONDecodeError as stripped_error:
            problem = self.json_error(stripped_error, stripped, number)
            if not line.endswith(b'\n'):
                problem = FileError(self.path, problem.message + ' - the data ends here: truncated file?', line=number)
            return problem
        except (ValueError, RecursionError) as other:
            return self.json_error(other, stripped, number)
        return self.json_error(error, stripped, number)  # pragma: no cover - only its newline differs


class JsonDocumentReader(Reader):
    format = 'JSON document'

    def scan(self) -> Iterator[tuple[Unit, str]]:
        found = _TRACE_ID.findall(self.read_all())
        self.count_trace_id_keys(len(found))
        for raw in dict.fromkeys(found):
            yield None, _scan_key(raw)

    def read(self, assembler: Assembler, wanted: Container[Unit] | None = None) -> Iterator[Unit]:
        if wanted is not None and None not in wanted:
            yield None
            return
        data = self.read_all()
        try:
            document = parse_json(data)
        except (ValueError, RecursionError) as error:
            problem = self.json_error(error, data, None)
            if isinstance(error, json.JSONDecodeError) and error.pos >= len(data.rstrip()):
                problem = FileError(
                    self.path, problem.message + ' - the data ends here: truncated file?', line=problem.line
                )
            raise problem from None
        self.decode(document, data, None, assembler, first=True)
        yield None


class ProtobufReader(Reader):
    """A binary `ExportTraceServiceRequest`, read one `ResourceSpans` at a time: its units are their numbers, from 1.

    Each one is a unit of at most `MAX_DOCUMENT` bytes, parsed as a request of its own, so memory
    holds one (and the traces still open), never the file; the first pass parses each one too.
    """

    format = 'OTLP protobuf'

    def _where(self, error: BadData, offset: int) -> FileError:
        where = ' (in the decompressed data)' if self.gzipped else ''
        if isinstance(error, NotTraces) and self.found:
            return Stray(self.path, f'skipped, not a trace file ({error.message})', offset=offset)
        return FileError(self.path, error.message + where, offset=offset)

    def entries(self, notes: list[str]) -> Iterator[tuple[int, int, bytes, ExportTraceServiceRequest]]:
        """(number, offset, bytes, parsed request) of each `resource_spans` field; unknown fields noted in `notes`."""
        count = 0
        try:
            with self.open() as stream:
                for number, wire, tag_at, size, data in top_level_fields(stream, MAX_DOCUMENT, RESOURCE_SPANS):
                    if data is None:
                        if wire == 2:
                            notes.append(unknown_request_field(number, size))
                        continue
                    try:
                        request = parse_proto(data)
                    except BadData as error:
                        raise self._where(error, tag_at + (error.offset or 0)) from None
                    count += 1
                    yield count, tag_at, data, request
        except StreamProblem as problem:
            if problem.too_long:
                what = 'decompressed, ' if self.gzipped else ''
                message = f'larger than {_mib(MAX_DOCUMENT)} ({what}the limit for one ResourceSpans of a protobuf file)'
                raise FileError(self.path, message, offset=problem.offset) from None
            raise self._where(BadData(invalid(problem.message)), problem.offset) from None
        except ERRORS as error:
            raise self.io_error(error, None) from None
        if not count:
            raise self._where(NotTraces(NO_RESOURCE_SPANS), 0)

    def scan(self) -> Iterator[tuple[Unit, str]]:
        for number, _, _, request in self.entries([]):
            for trace_id in proto_trace_ids(request):
                yield number, trace_id

    def read(self, assembler: Assembler, wanted: Container[Unit] | None = None) -> Iterator[Unit]:
        location = (self.index, None)
        request_notes: list[str] = []
        notes: list[str] = []
        for number, tag_at, data, request in self.entries(request_notes):
            if wanted is not None and number not in wanted:
                yield number
                continue
            try:
                decode_proto(request, location, assembler, notes)
            except BadData as error:
                offset = error.offset if error.offset is not None else offset_of(data, error.path)
                raise self._where(error, tag_at + (offset or 0)) from None
            yield number
        for note in request_notes + notes:
            assembler.note(location, note)
