"""The one error type for trace files that cannot be read."""

from __future__ import annotations

from pathlib import Path

__all__ = ('BadData', 'TraceFileError')


class TraceFileError(Exception):
    """A trace file (or source argument) that cannot be read, with where and why.

    `line` is 1-based and set for line-oriented formats; `offset` is a byte offset for binary or
    compressed data; at most one of them is set. `str(error)` is the one-line message a user sees.
    """

    def __init__(self, path: str | Path, message: str, *, line: int | None = None, offset: int | None = None) -> None:
        self.path = Path(path)
        self.message = message
        self.line = line
        self.offset = offset
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.line is not None:
            return f'{self.path}:{self.line}: {self.message}'
        if self.offset is not None:
            return f'{self.path}: byte {self.offset}: {self.message}'
        return f'{self.path}: {self.message}'

    def __reduce__(self) -> tuple[object, ...]:
        # Keeps the error picklable (multiprocessing, pytest-xdist) despite the keyword-only fields.
        return _rebuild, (self.path, self.message, self.line, self.offset)


def _rebuild(path: Path, message: str, line: int | None, offset: int | None) -> TraceFileError:
    return TraceFileError(path, message, line=line, offset=offset)


class BadData(ValueError):
    """Unusable content inside a file; the reader adds the path and line and raises `TraceFileError`."""
