"""Read a trace file in the two passes `load_traces` makes, one reader class per kind of file.

`scan` is the cheap first pass: which trace ids occur in which unit (line, or the whole file for a
document or protobuf), found with a regular expression, without decoding JSON. `read` decodes
unit by unit into the assembler and yields each unit once its spans are in. Each JSON line or
document is an OTLP request (`resourceSpans`), a Jaeger export (`data`), a Jaeger trace (`spans`),
or a list of those.
"""

from __future__ import annotations

import gc
import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

from ..errors import FileError
from ._assemble import Assembler, Location
from ._errors import BadData
from ._jaeger import decode_jaeger_trace
from ._otlp_json import decode_request
from ._otlp_proto import decode_proto, parse_proto, proto_trace_ids

Unit = int | None
"""A line number, or None for a file read as a whole."""

_TRACE_ID = re.compile(rb'"trace[Ii][Dd]"\s*:\s*"([^"]*)"')
_WHITESPACE = frozenset(b' \t\r\n')
ERRORS = (OSError, EOFError, zlib.error)


def parse_json(data: bytes) -> Any:
    """`json.loads` with the cyclic garbage collector paused (unless the application paused it already).

    Parsing a line builds thousands of containers, none of them garbage, and the collector would
    scan them several times over while they are being built: pausing it makes loading about 15 %
    faster. Only the parse is covered: decoding runs with the collector on, so the trees a caller
    has dropped are still collected at the usual pace and memory stays flat.
    """
    if not gc.isenabled():
        return json.loads(data)
    gc.disable()
    try:
        return json.loads(data)
    finally:
        gc.enable()


def _scan_key(raw: bytes) -> str:
    return raw.decode('ascii', 'replace').lower().rjust(32, '0')


def decode_json(document: Any, location: Location, assembler: Assembler) -> None:
    """Dispatch one parsed JSON value by its shape."""
    if isinstance(document, dict):
        if 'resourceSpans' in document:
            return decode_request(document, location, assembler)
        if 'data' in document:
            for trace in document['data'] or ():
                decode_jaeger_trace(trace, location, assembler)
            return None
        if 'spans' in document:
            return decode_jaeger_trace(document, location, assembler)
        if not document:
            return None  # `{}`: an OTLP request with no spans, as proto3 JSON writes it
        keys = ', '.join(sorted(map(repr, document))[:5])
        raise BadData(f'unknown format: a JSON object that is not an OTLP request or a Jaeger export (keys: {keys})')
    if isinstance(document, list):
        for item in document:
            decode_json(item, location, assembler)
        return None
    raise BadData(f'unknown format: a JSON {type(document).__name__}, not an OTLP request or a Jaeger export')


class Reader:
    """One trace file, opened afresh (and decompressed) by each pass."""

    format = 'unknown'

    def __init__(self, path: Path, index: int, gzipped: bool) -> None:
        self.path = path
        self.index = index
        self.gzipped = gzipped

    def open(self) -> IO[bytes]:
        if self.gzipped:
            return cast(IO[bytes], gzip.open(self.path, 'rb'))
        return open(self.path, 'rb')

    def scan(self) -> Iterator[tuple[Unit, str]]:
        raise NotImplementedError

    def read(self, assembler: Assembler) -> Iterator[Unit]:
        raise NotImplementedError

    def read_all(self) -> bytes:
        try:
            with self.open() as stream:
                return stream.read()
        except ERRORS as error:
            raise self.io_error(error, None) from None

    def io_error(self, error: BaseException, line: int | None) -> FileError:
        after = f' after line {line}' if line else ''
        if isinstance(error, EOFError):
            size = self.path.stat().st_size
            # Decompression reads ahead, so the last line read says little: the offset is exact.
            return FileError(self.path, 'the gzip data ends early (truncated file?)', offset=size)
        if isinstance(error, (gzip.BadGzipFile, zlib.error)):
            return FileError(self.path, f'corrupt gzip data{after}: {error}')
        return FileError(self.path, f'cannot read{after}: {getattr(error, "strerror", None) or error}')

    def decode(self, document: Any, line: int | None, assembler: Assembler) -> None:
        try:
            decode_json(document, (self.index, line), assembler)
        except BadData as error:
            raise FileError(self.path, str(error), line=line) from None
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as error:
            message = f'malformed span data ({type(error).__name__}: {error})'
            raise FileError(self.path, message, line=line) from None


def _json_error(error: ValueError, ends_early: bool) -> str:
    if isinstance(error, json.JSONDecodeError):
        message = f'invalid JSON: {error.msg} (column {error.colno})'
    else:
        message = f'invalid JSON: {error}'
    return message + (' - the data ends here: truncated file?' if ends_early else '')


def _line_error(line: bytes) -> str:
    """Why a line is not JSON, with the column within the line (its newline stripped, not counted)."""
    try:
        json.loads(line.rstrip())
    except ValueError as error:
        return _json_error(error, ends_early=not line.endswith(b'\n'))
    return _json_error(ValueError('unreadable line'), ends_early=False)  # pragma: no cover - only its newline differs


class JsonLinesReader(Reader):
    format = 'JSON lines'

    def scan(self) -> Iterator[tuple[Unit, str]]:
        line_number = 0
        try:
            with self.open() as stream:
                for line_number, line in enumerate(stream, 1):
                    found = _TRACE_ID.findall(line)
                    if found:
                        for raw in dict.fromkeys(found):
                            yield line_number, _scan_key(raw)
        except ERRORS as error:
            raise self.io_error(error, line_number) from None

    def read(self, assembler: Assembler) -> Iterator[Unit]:
        line_number = 0
        try:
            with self.open() as stream:
                for line_number, line in enumerate(stream, 1):
                    if line[0] in _WHITESPACE and not line.strip():
                        continue
                    try:
                        document = parse_json(line)
                    except ValueError:
                        raise FileError(self.path, _line_error(line), line=line_number) from None
                    self.decode(document, line_number, assembler)
                    yield line_number
        except ERRORS as error:
            raise self.io_error(error, line_number) from None


class JsonDocumentReader(Reader):
    format = 'JSON document'

    def scan(self) -> Iterator[tuple[Unit, str]]:
        for raw in dict.fromkeys(_TRACE_ID.findall(self.read_all())):
            yield None, _scan_key(raw)

    def read(self, assembler: Assembler) -> Iterator[Unit]:
        data = self.read_all()
        try:
            document = parse_json(data)
        except json.JSONDecodeError as error:
            ends_early = error.pos >= len(error.doc.rstrip())
            raise FileError(self.path, _json_error(error, ends_early), line=error.lineno) from None
        except ValueError as error:
            raise FileError(self.path, _json_error(error, False)) from None
        del data
        self.decode(document, None, assembler)
        yield None


class ProtobufReader(Reader):
    format = 'OTLP protobuf'

    def _parse(self) -> Any:
        try:
            return parse_proto(self.read_all())
        except BadData as error:
            raise FileError(self.path, str(error)) from None

    def scan(self) -> Iterator[tuple[Unit, str]]:
        for trace_id in proto_trace_ids(self._parse()):
            yield None, trace_id

    def read(self, assembler: Assembler) -> Iterator[Unit]:
        request = self._parse()
        try:
            decode_proto(request, (self.index, None), assembler)
        except BadData as error:
            raise FileError(self.path, str(error)) from None
        yield None
