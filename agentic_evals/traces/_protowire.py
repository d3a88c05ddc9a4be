"""Protobuf wire data walked by hand, to say at which byte a protobuf trace file goes wrong.

The protobuf parser tells only that a message is invalid. When it refuses a file, `first_problem`
walks the same bytes along the message's schema (its descriptor) and names the first field it
cannot use: a varint or length running past its message, a wire type protobuf does not have,
text that is not UTF-8, messages nested deeper than the parser's limit. `offset_of` finds where the
n-th resource, scope or span starts, for problems found after parsing. Both are iterative, and
run only on the error path. `top_level_fields` walks a file's top-level fields as it reads them,
so a request is parsed one `ResourceSpans` at a time; its problems read as `first_problem`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from ..errors import AgenticEvalsError

MAX_DEPTH = 100
"""Message nesting the protobuf parser accepts (upb's default limit)."""

_TYPE_MESSAGE = 11
_TYPE_STRING = 9
_FIXED = {1: 8, 5: 4}


class _Broken(AgenticEvalsError):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    start = pos
    while True:
        if pos >= end:
            raise _Broken('a number runs past the end of its message (truncated?)', start)
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise _Broken('a number longer than 10 bytes', start)


def fields(data: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, offset of its tag, value start, value end) of each field in `data[pos:end]`."""
    while pos < end:
        tag_at = pos
        tag, pos = _varint(data, pos, end)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise _Broken('a field numbered 0', tag_at)
        if wire == 0:
            _, after = _varint(data, pos, end)
        elif wire in _FIXED:
            after = pos + _FIXED[wire]
        elif wire == 2:
            length, pos = _varint(data, pos, end)
            after = pos + length
        else:  # 3 and 4 are groups, which OTLP never uses; 6 and 7 do not exist
            raise _Broken(f'field {number} has wire type {wire}, which OTLP does not use', tag_at)
        if after > end:
            what = f'{after - pos} bytes where {end - pos} remain' if wire == 2 else f'{after - pos} bytes'
            raise _Broken(f'field {number} holds {what} in its message (truncated?)', tag_at)
        yield number, wire, tag_at, pos, after
        pos = after


def first_problem(data: bytes, descriptor: Any) -> tuple[int, str] | None:
    """(offset, what is wrong) for the first field of `data` a parser of `descriptor` would refuse."""
    stack = [(descriptor, fields(data, 0, len(data)))]
    try:
        while stack:
            message, walk = stack[-1]
            item = next(walk, None)
            if item is None:
                stack.pop()
                continue
            number, wire, tag_at, start, end = item
            field = message.fields_by_number.get(number)
            if field is None or wire != 2:
                continue  # unknown fields are kept, not refused
            if field.type == _TYPE_MESSAGE:
                if len(stack) >= MAX_DEPTH:
                    return tag_at, f'messages nested more than {MAX_DEPTH} deep'
                stack.append((field.message_type, fields(data, start, end)))
            elif field.type == _TYPE_STRING:
                try:
                    data[start:end].decode('utf-8')
                except UnicodeDecodeError as error:
                    return start + error.start, f'{message.name}.{field.name} is not UTF-8 text'
    except _Broken as error:
        return error.offset, error.message
    return None


def offset_of(data: bytes, path: tuple[int | str, ...]) -> int | None:
    """Where the field at `path` (field number, occurrence, field number, occurrence...) starts."""
    start, end, found = 0, len(data), 0
    try:
        for number, occurrence in zip(path[::2], path[1::2], strict=False):
            if not isinstance(occurrence, int):
                return None
            for field_number, wire, tag_at, value_start, value_end in fields(data, start, end):
                if field_number == number and wire == 2:
                    if occurrence == 0:
                        start, end, found = value_start, value_end, tag_at
                        break
                    occurrence -= 1
            else:
                return None
    except _Broken:
        return None
    return found


class StreamProblem(AgenticEvalsError):
    """Wire data that cannot be walked at `offset`, or a value longer than a caller's limit (`too_long`)."""

    def __init__(self, message: str, offset: int, *, too_long: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.too_long = too_long


_READ = 2**20


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    """`size` bytes, or fewer at the end of the data; read in pieces, so a false length allocates little."""
    if size <= _READ:
        return stream.read(size)
    pieces: list[bytes] = []
    while size > 0 and (piece := stream.read(min(size, _READ))):
        pieces.append(piece)
        size -= len(piece)
    return b''.join(pieces)


def _stream_varint(stream: IO[bytes], at: int) -> tuple[int, bytes]:
    """A varint and its bytes, read from `stream` (at offset `at`)."""
    result = shift = 0
    raw = bytearray()
    while True:
        byte = stream.read(1)
        if not byte:
            raise StreamProblem('a number runs past the end of its message (truncated?)', at)
        raw += byte
        result |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return result, bytes(raw)
        shift += 7
        if shift >= 70:
            raise StreamProblem('a number longer than 10 bytes', at)


def top_level_fields(stream: IO[bytes], limit: int, wanted: int) -> Iterator[tuple[int, int, int, int, bytes | None]]:
    """(field number, wire type, offset of its tag, value size, bytes) of each top-level field, read as it goes.

    The bytes are those of the whole field (tag, length and value: a message of that one field)
    for the length-delimited fields numbered `wanted`; other fields are skipped (None). A wanted field of more
    than `limit` bytes is `StreamProblem(too_long=True)` at the offset `limit` bytes into it.
    Problems read as `first_problem` says them, at the same offsets.
    """
    pos = 0
    while True:
        tag_at = pos
        first = stream.read(1)
        if not first:
            return
        if first[0] & 0x80:
            rest, rest_raw = _stream_varint(stream, tag_at)
            tag, tag_raw = (first[0] & 0x7F) | rest << 7, first + rest_raw
        else:
            tag, tag_raw = first[0], first
        pos += len(tag_raw)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise StreamProblem('a field numbered 0', tag_at)
        if wire == 0:
            _, raw = _stream_varint(stream, pos)
            pos += len(raw)
            yield number, wire, tag_at, len(raw), None
        elif wire in _FIXED:
            size = _FIXED[wire]
            if len(_read_exactly(stream, size)) < size:
                raise StreamProblem(f'field {number} holds {size} bytes in its message (truncated?)', tag_at)
            pos += size
            yield number, wire, tag_at, size, None
        elif wire == 2:
            length, length_raw = _stream_varint(stream, pos)
            pos += len(length_raw)
            header = len(tag_raw) + len(length_raw)
            if number == wanted:
                if header + length > limit:
                    value = _read_exactly(stream, limit - header + 1)
                    if header + len(value) > limit:
                        raise StreamProblem(f'larger than {limit} bytes', tag_at + limit, too_long=True)
                else:
                    value = _read_exactly(stream, length)
                if len(value) < length:
                    raise StreamProblem(_truncated(number, length, len(value)), tag_at)
                pos += length
                yield number, wire, tag_at, length, tag_raw + length_raw + value
            else:
                skipped = 0
                while skipped < length and (piece := stream.read(min(length - skipped, _READ))):
                    skipped += len(piece)
                if skipped < length:
                    raise StreamProblem(_truncated(number, length, skipped), tag_at)
                pos += length
                yield number, wire, tag_at, length, None
        else:
            raise StreamProblem(f'field {number} has wire type {wire}, which OTLP does not use', tag_at)


def _truncated(number: int, length: int, remain: int) -> str:
    return f'field {number} holds {length} bytes where {remain} remain in its message (truncated?)'
