"""Which trace format a parsed JSON value is, and the check that no repeated key hid spans.

A JSON line or document is an OTLP request (`resourceSpans`), a Grafana Tempo trace (`batches`),
a Jaeger export (`data`), a Jaeger trace (`spans`), or a list of those; a value of none of these
shapes is `NotTraces` (a stray file, when a directory walk found it). `json` keeps only the last
value of a key repeated in one object, so `check_repeated_keys` parses again, comparing keys, when
a unit holds more trace id keys than its decoders saw.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import AgenticEvalsError
from ._assemble import Assembler, Location
from ._errors import BadData, NotTraces, kind, preview
from ._ids import trace_id_key
from ._jaeger import JAEGER_EXPORT_KEYS, decode_jaeger_export, decode_jaeger_trace, jaeger_trace_key
from ._otlp_json import decode_resource_spans
from ._unknown import unknown_keys

_OTLP_KEYS = frozenset({'resourceSpans', 'batches'})
_CONTAINER_KEYS = frozenset({'resourceSpans', 'batches', 'data'})


def _trace_shapes(document: dict[str, Any], location: Location, assembler: Assembler) -> int | None:
    """Decode a JSON object by the trace formats whose keys it has; None when it has none of them."""
    if 'spans' in document and not _CONTAINER_KEYS & document.keys():
        return decode_jaeger_trace(document, location, assembler)
    seen = None
    known: frozenset[str] = frozenset()
    for key in ('resourceSpans', 'batches'):  # an OTLP request; Grafana Tempo's trace
        if key in document:
            seen = (seen or 0) + decode_resource_spans(document[key], key, location, assembler)
            known |= _OTLP_KEYS
    if 'data' in document:
        seen = (seen or 0) + decode_jaeger_export(document, location, assembler)
        known |= JAEGER_EXPORT_KEYS
    if seen is not None and not document.keys() <= known:
        trace_key = jaeger_trace_key if 'data' in document else trace_id_key
        seen += unknown_keys(document, known, location, assembler, trace_key)
    return seen


def decode_json(document: Any, location: Location, assembler: Assembler) -> int:
    """Dispatch one parsed JSON value by its shape; returns the trace id keys it held (see `Reader.decode`)."""
    if type(document) is dict:
        seen = _trace_shapes(document, location, assembler)
        if seen is not None:
            return seen
        if not document:
            return 0  # `{}`: an OTLP request with no spans, as proto3 JSON writes it
        keys = ', '.join(sorted(preview(key, 40) for key in document)[:5])
        raise NotTraces(f'unknown format: a JSON object that is not an OTLP request or a Jaeger export (keys: {keys})')
    if type(document) is list:
        seen = 0
        for index, item in enumerate(document):
            try:
                seen += decode_json(item, location, assembler)
            except BadData as error:
                raise error.within(index) from None
        return seen
    raise NotTraces(f'unknown format: {kind(document)}, not an OTLP request or a Jaeger export')


def _repeated_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` refusing a key whose earlier value, which `json` would drop, holds spans."""
    result = dict(pairs)
    if len(result) < len(pairs):
        last = {key: index for index, (key, _) in enumerate(pairs)}
        for index, (key, value) in enumerate(pairs):
            if last[key] != index and _holds_spans(value):
                raise RepeatedKey(key)
    return result


def _holds_spans(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            if 'spanId' in item or 'spanID' in item:
                return True
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return False


class RepeatedKey(AgenticEvalsError):
    """A key repeated in one object, whose dropped value held spans."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def check_repeated_keys(data: bytes) -> None:
    """Raise `RepeatedKey` for a key of one object whose earlier value, which `json` drops, holds spans."""
    json.loads(data, object_pairs_hook=_repeated_key)
