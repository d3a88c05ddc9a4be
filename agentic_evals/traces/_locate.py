"""Where in a JSON document a problem is: the line of a value found by its path, of a repeated key, of the nesting.

A document is parsed whole, so a decoder's error knows the path to the bad value (keys and
indices) but not its line. These helpers find it in the raw text, only on the error path:
`line_of` steps along the path with the JSON scanner (siblings are skipped at C speed); the two
structure walks (repeated keys, nesting depth) loop over the brackets alone (strings and values
removed by byte operations first), so no document is too deep or too large for them.
"""

from __future__ import annotations

import json
import re

from ._errors import PathStep

_scan_value = json.JSONDecoder().raw_decode
_WHITESPACE = re.compile(r'[ \t\n\r]*')
_KEY = b'\x01'
_DELETE = bytes(sorted(set(range(256)) - set(b'[]{}\n"\x01')))
_QUOTED = re.compile(rb'"[^"]*"')
_OPENING = frozenset(b'[{')


def _text(data: bytes) -> str | None:
    try:
        return data.decode(json.detect_encoding(data))
    except (UnicodeDecodeError, LookupError):
        return None


def _line(data: bytes, offset: int) -> int:
    return data.count(b'\n', 0, offset) + 1


def _skip(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _member(text: str, pos: int, key: str) -> int | None:
    """The start of `key`'s value in the object at `pos` (its last occurrence, as `json.loads` keeps)."""
    found = None
    pos = _skip(text, pos + 1)
    while text.startswith('"', pos):
        name, pos = _scan_value(text, pos)
        pos = _skip(text, pos)
        if not text.startswith(':', pos):
            return found
        pos = _skip(text, pos + 1)
        if name == key:
            found = pos
        pos = _skip(text, _scan_value(text, pos)[1])
        if not text.startswith(',', pos):
            return found
        pos = _skip(text, pos + 1)
    return found


def _element(text: str, pos: int, index: int) -> int | None:
    pos = _skip(text, pos + 1)
    for _ in range(index):
        pos = _skip(text, _scan_value(text, pos)[1])
        if not text.startswith(',', pos):
            return None
        pos = _skip(text, pos + 1)
    return None if text.startswith(']', pos) else pos


def line_of(data: bytes, path: tuple[PathStep, ...]) -> int | None:
    """The line where the value at `path` starts, or None when the path leads nowhere."""
    text = _text(data)
    if text is None:
        return None
    pos: int | None = _skip(text, 1 if text.startswith('\ufeff') else 0)
    try:
        for step in path:
            assert pos is not None
            if isinstance(step, int):
                pos = _element(text, pos, step) if text.startswith('[', pos) else None
            else:
                pos = _member(text, pos, step) if text.startswith('{', pos) else None
            if pos is None:
                return None
    except (ValueError, RecursionError):
        return None
    assert pos is not None
    return text.count('\n', 0, pos) + 1


def _structure(data: bytes, key: str | None = None) -> bytes:
    """The document's brackets and newlines only (and `_KEY` where `key` is an object's key), strings removed.

    Byte operations do the work, so a large document is reduced at C speed: escaped backslashes
    and quotes are dropped, then everything but brackets, quotes and newlines, then strings
    (empty ones first, the common case; two adjacent strings merging is harmless, as all go).
    JSON strings hold no raw newline, so line numbers survive.
    """
    if key is not None:
        data = re.sub(re.escape(json.dumps(key).encode()) + rb'\s*:', _KEY, data)
    unescaped = data.replace(b'\\\\', b'').replace(b'\\"', b'')  # escapes pair from the left, as JSON reads them
    return _QUOTED.sub(b'', unescaped.translate(None, _DELETE).replace(b'""', b''))


def repeated_key_line(data: bytes, key: str) -> int | None:
    """The line where `key` appears a second time in one object."""
    line = 1
    stack: list[bool] = []  # per open bracket: has `key` been seen in this object?
    for byte in _structure(data, key):
        if byte == 10:
            line += 1
        elif byte in _OPENING:
            stack.append(False)
        elif byte == _KEY[0]:
            if stack and stack[-1]:
                return line
            if stack:
                stack[-1] = True
        elif stack:
            stack.pop()
    return None


def deepest_line(data: bytes) -> int:
    """The line where the nesting is deepest (first reached there): where a too-deep document fails."""
    line = where = 1
    depth = deepest = 0
    for byte in _structure(data):
        if byte == 10:
            line += 1
        elif byte in _OPENING:
            depth += 1
            if depth > deepest:
                deepest, where = depth, line
        else:
            depth -= 1
    return where


def start_line(data: bytes) -> int:
    """The line where the document's first value starts (after blank lines)."""
    stripped = data.lstrip(b'\xef\xbb\xbf').lstrip()
    return _line(data, len(data) - len(stripped))
