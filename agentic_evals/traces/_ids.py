"""Trace and span ids: validate the text (or bytes) a file holds and turn it into what `SpanNode` keeps."""

from __future__ import annotations

import re

from ._errors import BadData

_HEX_DIGITS = {
    (16, False): re.compile('[0-9a-fA-F]{16}').fullmatch,
    (32, False): re.compile('[0-9a-fA-F]{32}').fullmatch,
    (16, True): re.compile('[0-9a-fA-F]{1,16}').fullmatch,
    (32, True): re.compile('[0-9a-fA-F]{1,32}').fullmatch,
}


def _check(raw: object, field: str, digits: int, short_ok: bool) -> str:
    if raw is None or raw == '':
        raise BadData(f'span has no {field}')
    if type(raw) is not str or not _HEX_DIGITS[digits, short_ok](raw):
        hint = f'up to {digits}' if short_ok else f'{digits}'
        raise BadData(f'{field} {raw!r} is not {hint} hex digits')
    return raw


def trace_id_key(raw: object, field: str = 'traceId', *, short_ok: bool = False) -> str:
    """The trace id as 32 lowercase hex digits; `short_ok` accepts Jaeger's 64-bit (16-digit) ids."""
    text = _check(raw, field, 32, short_ok).lower().rjust(32, '0')
    if text == '0' * 32:
        raise BadData(f'{field} is all zeros, which OpenTelemetry reserves for "no trace"')
    return text


def span_id(raw: object, field: str = 'spanId', *, short_ok: bool = False) -> int:
    value = int(_check(raw, field, 16, short_ok), 16)
    if value == 0:
        raise BadData(f'{field} is all zeros, which OpenTelemetry reserves for "no span"')
    return value


def optional_span_id(raw: object, field: str = 'parentSpanId', *, short_ok: bool = False) -> int | None:
    """A parent span id; empty, missing or all zeros means none (exporters write each of these)."""
    if raw is None or raw == '':
        return None
    return int(_check(raw, field, 16, short_ok), 16) or None
