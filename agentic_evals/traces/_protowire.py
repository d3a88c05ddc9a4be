"""Protobuf wire data walked by hand, to say at which byte a protobuf trace file goes wrong.

The protobuf parser tells only that a message is invalid. When it refuses a file, `first_problem`
walks the same bytes along the message's schema (its descriptor) and names the first field it
cannot use: a varint or length running past its message, a wire type protobuf does not have,
text that is not UTF-8, messages nested deeper than the parser's limit. `offset_of` finds where the
n-th resource, scope or span starts, for problems found after parsing. Both are iterative, and
run only on the error path.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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
