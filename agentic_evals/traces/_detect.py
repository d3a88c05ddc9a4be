"""Detect a trace file's format from its content, not its name, and pick the reader for it.

In order: gzip magic bytes (the rest then applies to the decompressed data); binary data (control
bytes, which JSON text cannot hold) starting like an OTLP request is protobuf; text starting with
`{` or `[` is JSON, read as JSON lines when its first line is a whole JSON value (or, when that
line is broken, the next lines are), else as one document. Anything else is an unknown format.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import IO

from ..errors import FileError
from ._readers import ERRORS, JsonDocumentReader, JsonLinesReader, ProtobufReader, Reader

_HEAD = 4096
_CONTROL = re.compile(rb'[\x00-\x08\x0b\x0c\x0e-\x1f]')
_BOM = b'\xef\xbb\xbf'


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _json_reader(stream: IO[bytes], path: Path, index: int, gzipped: bool) -> Reader:
    """JSON lines when the first non-blank line is a whole JSON value, else a document.

    A broken first line still means JSON lines when the next two lines (or the only next one) are
    whole values, so the error is reported by line: in a multi-line document, lines between the
    first and the last are never whole values (they end with a comma or an unclosed bracket).
    """
    stream.seek(0)
    lines = (line for line in stream if line.strip())
    first = next(lines, b'')
    if _parses(first):
        return JsonLinesReader(path, index, gzipped)
    second, third = next(lines, None), next(lines, None)
    if second is not None and _parses(second) and (third is None or _parses(third)):
        return JsonLinesReader(path, index, gzipped)
    return JsonDocumentReader(path, index, gzipped)


def open_reader(path: Path, index: int) -> Reader:
    """The reader for a file's format, detected from its content; raises `FileError`."""
    try:
        with open(path, 'rb') as raw:
            gzipped = raw.read(2) == b'\x1f\x8b'
    except FileNotFoundError:
        raise FileError(path, 'no such file') from None
    except OSError as error:
        raise FileError(path, f'cannot read: {error.strerror or error}') from None
    probe = Reader(path, index, gzipped)
    try:
        with probe.open() as stream:
            head = stream.read(_HEAD).removeprefix(_BOM)
            while head.isspace() and len(head) >= _HEAD:
                head = stream.read(_HEAD)
            text = head.lstrip()
            if not text:
                raise FileError(path, 'empty file' + (' (nothing inside the gzip data)' if gzipped else ''))
            if _CONTROL.search(head):
                if head[0] == 0x0A:  # field 1 (resource_spans), length-delimited: an OTLP request
                    return ProtobufReader(path, index, gzipped)
                raise FileError(path, 'unknown format: binary data that is not an OTLP protobuf request')
            if text[:1] in (b'{', b'['):
                return _json_reader(stream, path, index, gzipped)
    except ERRORS as error:
        raise probe.io_error(error, None) from None
    start = text[:40].decode('utf-8', 'replace')
    raise FileError(path, f'unknown format: text that is not JSON (it starts with {start!r})')
