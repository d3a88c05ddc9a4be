"""Unusable content found while decoding; the reader turns it into a `FileError` with the path and place."""

from __future__ import annotations

import json

from ..errors import AgenticEvalsError

PathStep = str | int
"""A key of a JSON object (a field number in protobuf), or an index in a list."""


class BadData(AgenticEvalsError, ValueError):
    """Unusable content inside a file; the reader adds the path and line (or offset) and raises `FileError`.

    `path` leads from the unit's top value to the offending one (keys and indices; field numbers
    and indices in protobuf), filled in by each enclosing decoder on the way out, so a whole
    document can still point at the line or byte where the problem is.
    """

    def __init__(self, message: str, path: tuple[PathStep, ...] = (), *, offset: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.offset = offset
        """The byte offset, when the decoder knows it (protobuf parse errors) rather than a path."""

    def within(self, *steps: PathStep) -> BadData:
        """This error, one level further out: `steps` lead to where the path started."""
        self.path = steps + self.path
        return self


class NotTraces(BadData):
    """A JSON value that is no trace format at all (a `package.json`, a report): a stray file."""


def kind(value: object) -> str:
    """The JSON type of a decoded value, with its article: 'a string', 'an object', 'null'."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'a boolean'
    if isinstance(value, (int, float)):
        return 'a number'
    if isinstance(value, str):
        return 'a string'
    if isinstance(value, list):
        return 'a list'
    if isinstance(value, dict):
        return 'an object'
    return f'a {type(value).__name__}'


def preview(value: object, limit: int = 60) -> str:
    """A short quoted form of a value for a one-line message (long or deep values are cut)."""
    try:
        text = repr(value) if isinstance(value, (str, bytes)) else json.dumps(value)
    except (ValueError, TypeError, RecursionError):
        text = f'({kind(value)})'
    return text if len(text) <= limit else text[: limit - 3] + '...'
