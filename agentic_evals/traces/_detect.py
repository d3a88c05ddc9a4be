"""Detect a trace file's format from its content, not its name, and pick the reader for it.

In order: gzip magic bytes (the rest then applies to the decompressed data); binary data (control
bytes, which JSON text cannot hold) starting like an OTLP request is protobuf; text starting with
`{` or `[` is JSON, read as JSON lines when its first line is a whole JSON value (or, when that
line is broken, the next lines are), else as one document. Anything else is an unknown format:
a `FileError`, or for a file found by walking a directory or glob, a `Stray` (skipped with a
warning). Detection reads at most the size limits of `_readers`, whatever the file expands to.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import FileError, os_reason
from ._readers import (
    ERRORS,
    MAX_DOCUMENT,
    MAX_LINE,
    JsonDocumentReader,
    JsonLinesReader,
    ProtobufReader,
    Reader,
    Stray,
    parse_json,
)

_HEAD = 4096
_CONTROL = re.compile(rb'[\x00-\x08\x0b\x0c\x0e-\x1f]')
_BOM = b'\xef\xbb\xbf'


def _parses(line: bytes) -> bool:
    if len(line) > MAX_LINE:
        return True  # a line too long to read: JSON lines, whose reader says so
    try:
        parse_json(line)  # the readers' parse (orjson's speed on a long first line), so the same text is JSON
    except (ValueError, RecursionError):
        return False
    return True


def _json_reader(probe: Reader) -> Reader:
    """JSON lines when the first non-blank line is a whole JSON value, else a document.

    A broken first line still means JSON lines when the next two lines (or the only next one) are
    whole values, so the error is reported by line: in a multi-line document, lines between the
    first and the last are never whole values (they end with a comma or an unclosed bracket).
    """
    with probe.open() as stream:
        lines = (line for line in iter(lambda: stream.readline(MAX_LINE + 1), b'') if line.strip())
        first = next(lines, b'')
        lines_reader = _parses(first)
        if not lines_reader:
            second, third = next(lines, None), next(lines, None)
            lines_reader = second is not None and _parses(second) and (third is None or _parses(third))
    kind = JsonLinesReader if lines_reader else JsonDocumentReader
    return kind(probe.path, probe.index, probe.gzipped, found=probe.found)


def open_reader(path: Path, index: int, *, found: bool = False) -> Reader:
    """The reader for a file's format, detected from its content; raises `FileError` (or `Stray`)."""
    try:
        with open(path, 'rb') as raw:
            gzipped = raw.read(2) == b'\x1f\x8b'
    except FileNotFoundError:
        raise FileError(path, 'no such file') from None
    except OSError as error:
        raise FileError(path, f'cannot read: {os_reason(error)}') from None
    problem = FileError if not found else Stray
    probe = Reader(path, index, gzipped, found=found)
    try:
        with probe.open() as stream:
            head = stream.read(_HEAD).removeprefix(_BOM)
            blank_lines = skipped = 0
            while head.isspace() and len(head) >= _HEAD and skipped < MAX_DOCUMENT:
                blank_lines += head.count(b'\n')
                skipped += len(head)
                head = stream.read(_HEAD)
            text = head.lstrip()
            if not text:
                what = 'empty file' + (' (nothing inside the gzip data)' if gzipped else '')
                if skipped >= MAX_DOCUMENT:
                    what = f'nothing but blank space in the first {MAX_DOCUMENT // 2**20} MiB'
                raise problem(path, what if not found else f'skipped, not a trace file ({what})')
            if _CONTROL.search(head):
                if head[0] == 0x0A:  # field 1 (resource_spans), length-delimited: an OTLP request
                    return ProtobufReader(path, index, gzipped, found=found)
                what = 'unknown format: binary data that is not an OTLP protobuf request'
                raise problem(path, what if not found else f'skipped, not a trace file ({what})', offset=0)
        if text[:1] in (b'{', b'['):
            return _json_reader(probe)
    except ERRORS as error:
        raise probe.io_error(error, None) from None
    line = blank_lines + head[: len(head) - len(text)].count(b'\n') + 1
    start = text[:40].decode('utf-8', 'replace')
    what = f'unknown format: text that is not JSON (it starts with {start!r})'
    raise problem(path, what if not found else f'skipped, not a trace file ({what})', line=line)
