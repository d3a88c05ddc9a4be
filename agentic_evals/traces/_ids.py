"""Trace and span ids: validate the text (or bytes) a file holds and turn it into what `SpanNode` keeps.

OTLP JSON ids are hex (the OTLP spec); the standard protobuf JSON mapping writes them in base64
instead (Grafana Tempo, `json_format.MessageToDict`), which is read too: a base64 id has a length
(24 or 12 characters, padded) that no hex id has, so the two never collide. Jaeger ids are hex and
may be shorter than the full width.
"""

from __future__ import annotations

import base64
import binascii
import re

from ._errors import BadData, preview

_HEX_DIGITS = {
    (16, False): re.compile('[0-9a-fA-F]{16}').fullmatch,
    (32, False): re.compile('[0-9a-fA-F]{32}').fullmatch,
    (16, True): re.compile('[0-9a-fA-F]{1,16}').fullmatch,
    (32, True): re.compile('[0-9a-fA-F]{1,32}').fullmatch,
}
_BASE64 = {
    16: re.compile('[A-Za-z0-9+/]{10}[AEIMQUYcgkosw048]=').fullmatch,
    32: re.compile('[A-Za-z0-9+/]{21}[AQgw]==').fullmatch,
}
"""Base64 of exactly 8 or 16 bytes (the last digit carries only the bits those lengths leave)."""


def base64_hex(raw: str, digits: int) -> str | None:
    """The hex form of a base64 id of `digits` hex digits, or None when `raw` is not one."""
    if not _BASE64[digits](raw):
        return None
    try:
        return base64.b64decode(raw, validate=True).hex()
    except (binascii.Error, ValueError):  # pragma: no cover - the pattern admits only valid base64
        return None


def _check(raw: object, field: str, digits: int, short_ok: bool) -> str:
    if raw is None or raw == '':
        raise BadData(f'span has no {field}')
    if type(raw) is str:
        if _HEX_DIGITS[digits, short_ok](raw):
            return raw
        if not short_ok:
            converted = base64_hex(raw, digits)
            if converted is not None:
                return converted
    hint = f'up to {digits}' if short_ok else f'{digits}'
    raise BadData(f'{field} {preview(raw)} is not {hint} hex digits')


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
