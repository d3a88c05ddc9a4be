"""Decode OTLP `AnyValue`s (JSON and protobuf) into values a `SpanNode` attribute can hold.

OTel span attributes hold scalars and homogeneous scalar sequences only, and so does `SpanNode`.
Decoding rules, for every OTLP value type:

- `stringValue`, `boolValue`, `intValue` (a JSON string or number), `doubleValue` (also `"NaN"`,
  `"Infinity"`): the Python scalar;
- `bytesValue`: its base64 text, as OTLP JSON writes it (protobuf bytes are base64-encoded), so
  attributes stay JSON-serializable;
- `arrayValue`: a tuple when every element is a scalar of one type (the shape the OTel SDK gives);
  otherwise (mixed types, nested arrays or kvlists) the compact JSON text of the list;
- `kvlistValue`: the compact JSON text of the object (pydantic-evals' `has_attributes` matches a
  dict against such JSON text, as it does for Logfire's JSON attributes).

A value of an unknown type (or with no value at all) raises `UnknownValue`; loaders skip the
attribute with a warning instead of failing the file.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic_evals.otel.span_tree import AttributeValue

from ..conventions.otel import EXCEPTION_KEYS
from ..errors import AgenticEvalsError

_SCALARS = (str, bool, int, float)


class UnknownValue(AgenticEvalsError):
    """An `AnyValue` of a type this loader does not know (its key), or with no value (None)."""

    def __init__(self, kind: str | None) -> None:
        super().__init__(kind)
        self.kind = kind

    def describe(self, key: str) -> str:
        what = 'has no value' if self.kind is None else f'has an unknown value type {self.kind!r}'
        return f'attribute {key!r} {what}; skipped'


def _compact_json(value: object) -> str:
    return json.dumps(value, separators=(',', ':'), ensure_ascii=False)


def sequence_attribute(values: list[Any]) -> AttributeValue:
    """A tuple of homogeneous scalars, else the JSON text of the list (see the module docstring)."""
    if not values:
        return ()
    first = type(values[0])
    if first in _SCALARS and all(type(value) is first for value in values):
        return tuple(values)
    return _compact_json(values)


# --------------------------------------------------------------------------------------------
# OTLP JSON: `{"stringValue": "x"}`, `{"arrayValue": {"values": [...]}}`, ...
# --------------------------------------------------------------------------------------------


def _json_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if raw in ('true', 'false'):
        return bool(raw == 'true')
    raise ValueError(f'boolValue {raw!r} is not a boolean')


def _json_str(raw: Any) -> str:
    if type(raw) is not str:
        raise ValueError(f'{raw!r} is not a string')
    return raw


def _json_plain(value: Mapping[str, Any]) -> Any:
    """The plain Python value (lists and dicts for arrays and kvlists) of a JSON `AnyValue`."""
    for kind, raw in value.items():
        decode = _JSON_PLAIN.get(kind)
        if decode is None:
            raise UnknownValue(kind)
        return decode(raw)
    raise UnknownValue(None)


def _json_kvlist(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {kv['key']: _json_plain(kv.get('value') or {}) for kv in raw.get('values') or ()}


_JSON_PLAIN: dict[str, Callable[[Any], Any]] = {
    'stringValue': _json_str,
    'boolValue': _json_bool,
    'intValue': int,
    'doubleValue': float,
    'bytesValue': _json_str,
    'arrayValue': lambda raw: [_json_plain(item) for item in raw.get('values') or ()],
    'kvlistValue': _json_kvlist,
}
_JSON_ATTRIBUTE: dict[str, Callable[[Any], AttributeValue]] = {
    **_JSON_PLAIN,
    'arrayValue': lambda raw: sequence_attribute([_json_plain(item) for item in raw.get('values') or ()]),
    'kvlistValue': lambda raw: _compact_json(_json_kvlist(raw)),
}


def decode_json_attributes(key_values: Iterable[Mapping[str, Any]], problems: list[str]) -> dict[str, AttributeValue]:
    """Decode an OTLP JSON `attributes` list; skipped attributes are described in `problems`."""
    attributes: dict[str, AttributeValue] = {}
    for key_value in key_values:
        value = key_value.get('value') or {}
        raw = value.get('stringValue')
        if raw is not None and type(raw) is str:  # the common case, without a dispatch
            attributes[key_value['key']] = raw
            continue
        try:
            for kind, raw in value.items():
                decode = _JSON_ATTRIBUTE.get(kind)
                if decode is None:
                    raise UnknownValue(kind)
                attributes[key_value['key']] = decode(raw)
                break
            else:
                raise UnknownValue(None)
        except UnknownValue as error:
            problems.append(error.describe(key_value['key']))
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            problems.append(f'attribute {key_value["key"]!r} has an invalid value ({error}); skipped')
    return attributes


# --------------------------------------------------------------------------------------------
# OTLP protobuf: `opentelemetry.proto.common.v1.common_pb2.AnyValue`
# --------------------------------------------------------------------------------------------


def _proto_plain(value: Any) -> Any:
    kind = value.WhichOneof('value')
    decode = _PROTO_PLAIN.get(kind)
    if decode is None:
        raise UnknownValue(kind)
    return decode(value)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode('ascii')


_PROTO_PLAIN: dict[str | None, Callable[[Any], Any]] = {
    'string_value': lambda value: value.string_value,
    'bool_value': lambda value: value.bool_value,
    'int_value': lambda value: value.int_value,
    'double_value': lambda value: value.double_value,
    'bytes_value': lambda value: _b64(value.bytes_value),
    'array_value': lambda value: [_proto_plain(item) for item in value.array_value.values],
    'kvlist_value': lambda value: {kv.key: _proto_plain(kv.value) for kv in value.kvlist_value.values},
}
_PROTO_ATTRIBUTE: dict[str | None, Callable[[Any], AttributeValue]] = {
    **_PROTO_PLAIN,
    'array_value': lambda value: sequence_attribute([_proto_plain(item) for item in value.array_value.values]),
    'kvlist_value': lambda value: _compact_json({kv.key: _proto_plain(kv.value) for kv in value.kvlist_value.values}),
}


def decode_proto_attributes(key_values: Iterable[Any], problems: list[str]) -> dict[str, AttributeValue]:
    """Decode repeated protobuf `KeyValue`s; skipped attributes are described in `problems`."""
    attributes: dict[str, AttributeValue] = {}
    for key_value in key_values:
        value = key_value.value
        try:
            decode = _PROTO_ATTRIBUTE.get(value.WhichOneof('value'))
            if decode is None:
                raise UnknownValue(value.WhichOneof('value'))
            attributes[key_value.key] = decode(value)
        except UnknownValue as error:
            problems.append(error.describe(key_value.key))
    return attributes


def fold_exception(attributes: dict[str, AttributeValue], event_attributes: Mapping[str, AttributeValue]) -> None:
    """Copy an exception event's type and message onto its span, unless the span has its own.

    `SpanNode` has no events, so this is the only way the reason a span failed survives loading.
    """
    for key in EXCEPTION_KEYS:
        if key not in attributes and key in event_attributes:
            attributes[key] = event_attributes[key]
