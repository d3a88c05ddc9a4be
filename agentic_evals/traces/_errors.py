"""Unusable content found while decoding; the reader turns it into a `FileError` with the path and line."""

from __future__ import annotations

from ..errors import AgenticEvalsError


class BadData(AgenticEvalsError, ValueError):
    """Unusable content inside a file; the reader adds the path and line and raises `FileError`."""
