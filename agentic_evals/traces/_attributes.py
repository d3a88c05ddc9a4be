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

A value of an unknown type, with no value at all, of the wrong JSON type or nested too deeply
(beyond the recursion limit) is skipped with a warning instead of failing the file; so is an
attribute that is not a `{"key", "value"}` object with a string key. An empty value inside an
array or kvlist is null, as OpenTelemetry's encoder writes a None element.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic_evals.otel.span_tree import AttributeValue

from ..errors import AgenticEvalsError
from ._errors import kind as kind_of
from ._errors import preview

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


def one_line(error: BaseException) -> str:
    """An exception's message on one line, cut short: it goes into a warning."""
    text = ' '.join(str(error).split())
    return text if len(text) <= 200 else text[:197] + '...'


def text_field(raw: object, field: str, problems: list[str]) -> str:
    """A span's name (or Jaeger operation name): missing or null is '', another type its JSON text, with a warning."""
    if type(raw) is str:
        return raw
    if raw is None:
        return ''
    try:
        text = _compact_json(raw)
    except (ValueError, RecursionError):
        text = ''
    problems.append(f'its {field} is {kind_of(raw)}, not a string; kept as the text {preview(text)}')
    return text


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
    raise ValueError(f'{preview(raw)} is not a boolean')


def _json_str(raw: Any) -> str:
    if type(raw) is not str:
        raise ValueError(f'{preview(raw)} is not a string')
    return raw


def integer(raw: Any) -> int:
    """An int64 as JSON holds it (a number or a decimal string); `ValueError` says why not."""
    try:
        return int(raw)
    except (ValueError, TypeError, OverflowError):
        raise ValueError(f'{preview(raw)} is not an integer') from None


def double(raw: Any) -> float:
    """A double as JSON holds it (also `"NaN"`, `"Infinity"`); `ValueError` says why not."""
    try:
        return float(raw)
    except (ValueError, TypeError):
        raise ValueError(f'{preview(raw)} is not a number') from None


def _json_plain(value: Any) -> Any:
    """The plain Python value (lists and dicts for arrays and kvlists) of a JSON `AnyValue`.

    An empty value (`{}`, or none) inside an array or kvlist is null, as OTel's encoder writes None.
    """
    if value is None:
        return None
    if type(value) is not dict:
        raise ValueError(f'an element is {kind_of(value)}, not an object')
    for kind, raw in value.items():
        decode = _JSON_PLAIN.get(kind)
        if decode is None:
            raise UnknownValue(kind)
        return decode(raw)
    return None


def _elements(raw: Any, kind: str) -> list[Any]:
    if type(raw) is not dict:
        raise ValueError(f'{kind} is {kind_of(raw)}, not an object')
    values = raw.get('values')
    if type(values) is not list:
        if values is None:
            return []
        raise ValueError(f'{kind}.values is {kind_of(values)}, not a list')
    return values


def _json_array(raw: Any) -> list[Any]:
    return [_json_plain(item) for item in _elements(raw, 'arrayValue')]


def _json_kvlist(raw: Any) -> dict[str, Any]:
    plain: dict[str, Any] = {}
    for kv in _elements(raw, 'kvlistValue'):
        key = kv.get('key') if type(kv) is dict else None
        if type(key) is not str:
            raise ValueError(f'a kvlistValue entry is not an object with a string key: {preview(kv)}')
        plain[key] = _json_plain(kv.get('value'))
    return plain


_JSON_PLAIN: dict[str, Callable[[Any], Any]] = {
    'stringValue': _json_str,
    'boolValue': _json_bool,
    'intValue': integer,
    'doubleValue': double,
    'bytesValue': _json_str,
    'arrayValue': _json_array,
    'kvlistValue': _json_kvlist,
}
_JSON_ATTRIBUTE: dict[str, Callable[[Any], AttributeValue]] = {
    **_JSON_PLAIN,
    'arrayValue': lambda raw: sequence_attribute(_json_array(raw)),
    'kvlistValue': lambda raw: _compact_json(_json_kvlist(raw)),
}


def _json_value(key: str, value: Any, problems: list[str]) -> AttributeValue | None:
    """One attribute's value, or None (with the reason in `problems`) when it is skipped."""
    if type(value) is not dict:
        if value is None:
            problems.append(UnknownValue(None).describe(key))
        else:
            problems.append(f'attribute {key!r} has a value that is {kind_of(value)}, not an object; skipped')
        return None
    try:
        for value_kind, raw in value.items():
            decode = _JSON_ATTRIBUTE.get(value_kind)
            if decode is None:
                raise UnknownValue(value_kind)
            return decode(raw)
        raise UnknownValue(None)
    except UnknownValue as error:
        problems.append(error.describe(key))
    except RecursionError:
        problems.append(f'attribute {key!r} is nested too deeply to read; skipped')
    except (ValueError, TypeError, AttributeError, KeyError, OverflowError) as error:
        problems.append(f'attribute {key!r} has an invalid {value_kind} ({one_line(error)}); skipped')
    return None


def decode_json_attributes(key_values: Any, problems: list[str]) -> dict[str, AttributeValue]:
    """Decode an OTLP JSON `attributes` list; skipped attributes are described in `problems`.

    The loop is the fast path for well-formed lists (string values need no dispatch); anything
    odd in the list sends the whole list to the careful path, which skips what it cannot use, one
    warning each, and never raises.
    """
    if type(key_values) is not list:
        if key_values is not None:
            problems.append(f'attributes is {kind_of(key_values)}, not a list; skipped')
        return {}
    attributes: dict[str, AttributeValue] = {}
    try:
        for key_value in key_values:
            key = key_value['key']
            value = key_value['value']
            if 'stringValue' in value:  # the common case, without a dispatch (`in` is cheaper than `get`)
                raw = value['stringValue']
                if type(raw) is str and type(key) is str:
                    attributes[key] = raw
                    continue
            if type(key) is not str or len(value) != 1:
                raise TypeError(key)
            [(value_kind, raw)] = value.items()
            attributes[key] = _JSON_ATTRIBUTE[value_kind](raw)
    except (TypeError, KeyError, AttributeError, ValueError, OverflowError, RecursionError, UnknownValue):
        return _careful_json_attributes(key_values, problems)
    return attributes


def _careful_json_attributes(key_values: list[Any], problems: list[str]) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {}
    for key_value in key_values:
        if type(key_value) is not dict:
            problems.append(f'an attribute is {kind_of(key_value)}, not an object; skipped')
            continue
        key = key_value.get('key')
        if type(key) is not str:
            problems.append(f'an attribute key is {kind_of(key)} ({preview(key)}), not a string; skipped')
            continue
        decoded = _json_value(key, key_value.get('value'), problems)
        if decoded is not None:
            attributes[key] = decoded
    return attributes


# --------------------------------------------------------------------------------------------
# OTLP protobuf: `opentelemetry.proto.common.v1.common_pb2.AnyValue`
# --------------------------------------------------------------------------------------------


def _proto_plain(value: Any) -> Any:
    kind = value.WhichOneof('value')
    if kind is None:
        return None  # an empty element, as for JSON
    decode = _PROTO_PLAIN.get(kind)
    if decode is None:  # pragma: no cover - a newer proto's value type
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
        except RecursionError:
            problems.append(f'attribute {key_value.key!r} is nested too deeply to read; skipped')
    return attributes


def fold_event(
    attributes: dict[str, AttributeValue],
    event_attributes: Mapping[str, AttributeValue],
    keys: tuple[tuple[str, str], ...],
) -> None:
    """Copy an event's attributes onto its span as `keys` say, never over a key the span has.

    `SpanNode` has no events, so this is how the reason a span failed (the exception event) and
    content some frameworks record only in events survive loading (`registry.EVENT_FOLDS`).
    """
    for event_key, span_key in keys:
        if span_key not in attributes and event_key in event_attributes:
            attributes[span_key] = event_attributes[event_key]
