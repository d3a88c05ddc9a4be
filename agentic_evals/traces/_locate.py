"""Where in a JSON document a problem is: the line of a value found by its path, of a repeated key, of the nesting.

A document is parsed whole, so a decoder's error knows the path to the bad value (keys and
indices) but not its line. These helpers find it in the raw text, only on the error path:
`line_of` steps along the path with the JSON scanner (siblings are skipped at C speed); the two
token walks (repeated keys, nesting depth) are plain loops over a regular expression, so no
document is too deep for them.
"""

from __future__ import annotations

import json
import re

from ._errors import PathStep

_scan_value = json.JSONDecoder().raw_decode
_WHITESPACE = re.compile(r'[ \t\n\r]*')
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_TOKENS = re.compile(rb'(' + _STRING + rb')\s*:|' + _STRING + rb'|[\[\]{}]')


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


def repeated_key_line(data: bytes, key: str) -> int | None:
    """The line where `key` appears a second time in one object."""
    stack: list[set[str] | None] = []  # the keys of each open object; None for a list
    for match in _TOKENS.finditer(data):
        token = match.group()
        if token in (b'{', b'['):
            stack.append(set() if token == b'{' else None)
        elif token in (b'}', b']'):
            if stack:
                stack.pop()
        elif match.group(1) is not None and stack and stack[-1] is not None:
            try:
                name = json.loads(match.group(1))
            except ValueError:
                continue
            if name in stack[-1] and name == key:
                return _line(data, match.start())
            stack[-1].add(name)
    return None


def deepest_line(data: bytes) -> int:
    """The line where the nesting is deepest (first reached there): where a too-deep document fails."""
    depth = deepest = 0
    where = 0
    for match in _TOKENS.finditer(data):
        token = match.group()
        if token in (b'{', b'['):
            depth += 1
            if depth > deepest:
                deepest, where = depth, match.start()
        elif token in (b'}', b']'):
            depth -= 1
    return _line(data, where)


def start_line(data: bytes) -> int:
    """The line where the document's first value starts (after blank lines)."""
    stripped = data.lstrip(b'\xef\xbb\xbf').lstrip()
    return _line(data, len(data) - len(stripped))
