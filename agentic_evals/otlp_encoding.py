"""OTLP/JSON encoding: attribute values as `AnyValue`s and requests as JSON lines.

The one encoder of the trace writer (`traces/_writer.py`) and the evaluation events
(`views/otlp_export.py`). Values follow the OTLP/JSON mapping: int64 values are decimal strings, bytes
are base64, non-finite doubles are `"NaN"`/`"Infinity"`/`"-Infinity"`, mappings are `kvlistValue`s
and sequences `arrayValue`s; `None` is an empty `AnyValue`, as OpenTelemetry's own encoder writes a
`None` inside a sequence.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any


def double(value: float) -> float | str:
    """A double as OTLP/JSON writes it: finite as a number, else `"NaN"`, `"Infinity"` or `"-Infinity"`."""
    if math.isfinite(value):
        return value
    return 'NaN' if math.isnan(value) else ('Infinity' if value > 0 else '-Infinity')


def any_value(value: object) -> dict[str, Any]:
    """`value` as an OTLP/JSON `AnyValue` (anything else as its `str`)."""
    if value is None:
        return {}
    if isinstance(value, str):
        return {'stringValue': value}
    if isinstance(value, bool):
        return {'boolValue': value}
    if isinstance(value, int):
        return {'intValue': str(value)}
    if isinstance(value, float):
        return {'doubleValue': double(value)}
    if isinstance(value, (bytes, bytearray)):
        return {'bytesValue': base64.b64encode(value).decode('ascii')}
    if isinstance(value, Mapping):
        return {'kvlistValue': {'values': key_values(value)}}
    if isinstance(value, Sequence):
        return {'arrayValue': {'values': [any_value(item) for item in value]}}
    return {'stringValue': str(value)}


def key_values(attributes: Mapping[str, object] | None) -> list[dict[str, Any]]:
    """Attributes as OTLP/JSON `KeyValue`s, in their order."""
    return [{'key': key, 'value': any_value(value)} for key, value in (attributes or {}).items()]


def json_line(request: dict[str, Any]) -> str:
    """One request as a compact JSON line that UTF-8 can encode.

    Text as it is, except in a request holding a lone surrogate (any Python string may, and spans and
    reasons copy strings from anywhere): UTF-8 cannot encode one, so that line is written with
    `\\uXXXX` escapes, which JSON readers turn back into the same string.
    """
    text = json.dumps(request, separators=(',', ':'), ensure_ascii=False)
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        text = json.dumps(request, separators=(',', ':'))
    return text + '\n'
