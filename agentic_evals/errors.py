"""The errors agentic_evals raises on purpose: one base, and one type for a file that cannot be used.

Evaluations never raise (missing or unusable data is a failing `EvaluationReason`); these are for
the boundaries: a bad trace, dataset, evaluators or report file, a command line that cannot be
acted on, a gate naming no result. The CLI catches `AgenticEvalsError` and prints its one line.
"""

from __future__ import annotations

from pathlib import Path


class AgenticEvalsError(Exception):
    """Base of every error agentic_evals raises on purpose; `str(error)` is one line for a user."""


class FileError(AgenticEvalsError):
    """A file (trace, dataset, evaluators or report) that cannot be used, with where and why.

    `line` is 1-based and set for text formats; `offset` is a byte offset for binary or compressed
    data; at most one of them is set. `str(error)` is `path:line: message`, `path: byte N: message`
    or `path: message`.
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
        return _rebuild, (type(self), self.path, self.message, self.line, self.offset)


def os_reason(error: BaseException) -> str:
    """What a user can act on of an error reading or writing a file: the operating system's reason
    (`No such file or directory`) for an `OSError` that has one, else the error's text."""
    return (error.strerror if isinstance(error, OSError) else None) or str(error)


def _rebuild(cls: type[FileError], path: Path, message: str, line: int | None, offset: int | None) -> FileError:
    return cls(path, message, line=line, offset=offset)
