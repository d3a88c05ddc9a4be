"""Decode OTLP JSON `ExportTraceServiceRequest` objects (as the Collector's file exporter writes them).

Follows the OTLP/JSON mapping: hex ids (base64 ids, as the standard protobuf JSON mapping writes
them, are read too), int64 timestamps as strings (numbers accepted), enums as numbers (names
accepted). Spans under `scopeSpans` and under the pre-1.0 `instrumentationLibrarySpans` are both
read; Grafana Tempo's `{"batches": [...]}` holds the same resource spans. Resource and scope
attributes are dropped, and so are span kind, links and the status message: `SpanNode` has no
place for them (pydantic-evals' own `SpanNode.from_readable_span` drops them too).

What a span cannot be placed without (its trace and span ids, its start time) and containers of
the wrong JSON type are errors (`BadData`, with the path to the value). Everything else is
recovered from with a warning on the trace: a name that is not a string (kept as its JSON
text), an end time that is missing or unusable (the start is taken), an unusable status
('unset'), events or attributes of the wrong shape (skipped).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode, SpanStatus

from ..conventions.registry import EVENT_FOLDS
from ._assemble import Assembler, Location, TraceBuilder
from ._attributes import decode_json_attributes, fold_event, text_field
from ._errors import BadData, kind, preview
from ._ids import optional_span_id, span_id, trace_id_key
from ._unknown import unknown_keys

STATUS: dict[object, SpanStatus] = {
    2: 'error',
    1: 'ok',
    'STATUS_CODE_ERROR': 'error',
    'STATUS_CODE_OK': 'ok',
}
"""OTLP `Status.code` (number or enum name) -> `SpanNode.status`; anything else is 'unset'."""

_UTC = timezone.utc
_from_timestamp = datetime.fromtimestamp
# The same conversion as pydantic-evals' `SpanNode.from_readable_span` (nanoseconds / 1e9), so a trace
# loaded from a file equals the tree captured in-process from the same spans, to the microsecond.
_fromhex = bytes.fromhex
_from_bytes = int.from_bytes
_ODD = (TypeError, ValueError, AttributeError, KeyError, OverflowError, OSError, RecursionError)
"""What the fast path raises on data of an unexpected shape; the careful path then says what is wrong."""

_RESOURCE_KEYS = frozenset({'resource', 'scopeSpans', 'instrumentationLibrarySpans', 'schemaUrl'})
_SCOPE_KEYS = frozenset({'scope', 'instrumentationLibrary', 'spans', 'schemaUrl'})
_SCOPE_LISTS = ('scopeSpans', 'instrumentationLibrarySpans')


def as_list(value: Any, key: str) -> list[Any]:
    """A container field's list (null or missing: empty); anything else is `BadData` at `key`."""
    if type(value) is list:
        return value
    if value is None:
        return []
    raise BadData(f'{key} is {kind(value)}, not a list', (key,))


def decode_resource_spans(items: Any, key: str, location: Location, assembler: Assembler) -> int:
    """The spans of a list of OTLP `ResourceSpans` (a request's `resourceSpans`, or Tempo's `batches`).

    Returns the trace id keys seen (spans, links), for the repeated-key check of `Reader.decode`.
    """
    seen = 0
    for index, resource_spans in enumerate(as_list(items, key)):
        try:
            if type(resource_spans) is not dict:
                raise BadData(f'an entry of {key} is {kind(resource_spans)}, not an object')
            if not resource_spans.keys() <= _RESOURCE_KEYS:
                seen += unknown_keys(resource_spans, _RESOURCE_KEYS, location, assembler, trace_id_key)
            for scopes_key in _SCOPE_LISTS:
                for scope_index, scope_spans in enumerate(as_list(resource_spans.get(scopes_key), scopes_key)):
                    try:
                        seen += _decode_scope(scope_spans, scopes_key, location, assembler)
                    except BadData as error:
                        raise error.within(scopes_key, scope_index) from None
        except BadData as error:
            raise error.within(key, index) from None
    return seen


def _decode_scope(scope_spans: Any, key: str, location: Location, assembler: Assembler) -> int:
    if type(scope_spans) is not dict:
        raise BadData(f'an entry of {key} is {kind(scope_spans)}, not an object')
    seen = 0
    if not scope_spans.keys() <= _SCOPE_KEYS:
        seen += unknown_keys(scope_spans, _SCOPE_KEYS, location, assembler, trace_id_key)
    spans = as_list(scope_spans.get('spans'), 'spans')
    try:
        return seen + decode_spans(spans, location, assembler)
    except BadData as error:
        raise error.within('spans') from None


def decode_spans(spans: list[Any], location: Location, assembler: Assembler) -> int:
    """Hand a list of OTLP JSON spans to the assembler. Raises `BadData`; returns the trace id keys seen.

    Written for speed (about a million spans in a few seconds): one pass over each span's fields,
    with the validating helpers only on the rare path: anything unexpected in a span sends that
    span to `_careful_span`, which recovers what it can and names what it cannot.
    """
    aliases = assembler.aliases
    problems: list[str] = []
    seen = len(spans)
    for index, span in enumerate(spans):
        try:
            try:
                raw_trace = span.get('traceId')
                builder = aliases.get(raw_trace) or assembler.builder_for(raw_trace, trace_id_key)
                raw_id = span.get('spanId')
                raw_parent = span.get('parentSpanId')
                if (
                    type(raw_id) is str
                    and len(raw_id) == 16
                    and (not raw_parent or (type(raw_parent) is str and len(raw_parent) == 16))
                ):
                    node_id = _hex_id(raw_id) or span_id(raw_id)  # all zeros: let span_id say why
                    parent_id = _hex_id(raw_parent) or None if raw_parent else None
                else:
                    node_id, parent_id = _ids(span)
                start = span.get('startTimeUnixNano')
                end = span.get('endTimeUnixNano')
                if type(start) is str and type(end) is str:
                    start_time = _from_timestamp(int(start) / 1e9, _UTC)
                    end_time = _from_timestamp(int(end) / 1e9, _UTC)
                else:
                    start_time, end_time = _times(span, problems)
                name = span.get('name', '')
                if type(name) is not str:
                    raise TypeError(name)
                attributes = decode_json_attributes(span['attributes'], problems) if 'attributes' in span else {}
                events = span.get('events')
                if events:
                    for event in events:
                        event_name = event.get('name')
                        keys = EVENT_FOLDS.get(event_name) if type(event_name) is str else None
                        if keys is not None:
                            fold_event(attributes, decode_json_attributes(event.get('attributes'), problems), keys)
                status = span.get('status')
                node = SpanNode(
                    name=name,
                    trace_id=builder.trace_int,
                    span_id=node_id,
                    parent_span_id=parent_id,
                    start_timestamp=start_time,
                    end_timestamp=end_time,
                    attributes=attributes,
                    status=STATUS.get(status.get('code'), 'unset') if status else 'unset',
                )
            except _ODD:
                problems.clear()
                builder, node = _careful_span(span, assembler, problems)
            links = span.get('links')
        except BadData as error:
            raise error.within(index) from None
        if type(links) is list:
            seen += len(links)
        if problems:
            for problem in problems:
                builder.warn(location, f'span {node.span_id:016x} ({node.name!r}): {problem}')
            problems.clear()
        builder.add(node, location)
    return seen


def _hex_id(raw: str) -> int:
    """The value of 16 characters that are hex digits; `ValueError` for any others (then the careful path says why).

    `bytes.fromhex` is three times as fast as `int(raw, 16)` and takes no sign, `0x` or underscore;
    the whitespace it skips between digit pairs would leave fewer than 8 bytes.
    """
    packed = _fromhex(raw)
    if len(packed) != 8:
        raise ValueError(raw)
    return _from_bytes(packed, 'big')


def _ids(span: Mapping[str, Any]) -> tuple[int, int | None]:
    """The span and parent ids, validated (the slow path, which also explains what is wrong)."""
    return span_id(span.get('spanId')), optional_span_id(span.get('parentSpanId'))


def _whole_number(raw: object) -> int | None:
    """An integer field as OTLP JSON may write it (a decimal string or a whole number), else None."""
    if type(raw) is int:
        return raw
    if type(raw) is float:
        return int(raw) if raw.is_integer() else None
    if type(raw) is str:
        try:
            return int(raw)
        except ValueError:
            digits = raw.strip().lstrip('+-')
            return _TOO_MANY_DIGITS if digits.isascii() and digits.isdigit() else None
    return None


_TOO_MANY_DIGITS = 2**100
"""Stands for a decimal string longer than `int` reads: out of any timestamp's range."""


def _nanoseconds(raw: object, field: str) -> datetime:
    """A timestamp field (nanoseconds since 1970); `BadData` says what is wrong with it."""
    value = _whole_number(raw)
    if value is None:
        raise BadData(f'{field} {preview(raw)} is not a whole number of nanoseconds')
    try:
        return _from_timestamp(value / 1e9, _UTC)
    except (ValueError, OverflowError, OSError):
        raise BadData(
            f'{field} {preview(raw)} is out of range (nanoseconds since 1970, before the year 10000)'
        ) from None


def _times(span: Mapping[str, Any], problems: list[str]) -> tuple[datetime, datetime]:
    start = span.get('startTimeUnixNano')
    if start is None:
        raise BadData('span has no startTimeUnixNano')
    start_time = _nanoseconds(start, 'startTimeUnixNano')
    end = span.get('endTimeUnixNano')
    if end is None:
        problems.append('has no endTimeUnixNano; its end is taken as its start')
        return start_time, start_time
    try:
        return start_time, _nanoseconds(end, 'endTimeUnixNano')
    except BadData as error:
        problems.append(f'{error.message}; its end is taken as its start')
        return start_time, start_time


def _status(raw: object, problems: list[str]) -> SpanStatus:
    if not raw:
        return 'unset'
    if type(raw) is not dict:
        problems.append(f'its status is {kind(raw)}, not an object; taken as unset')
        return 'unset'
    code = raw.get('code')
    if code is None or type(code) is int or type(code) is str:
        return STATUS.get(code, 'unset')
    problems.append(f'its status code {preview(code)} is not a number or a name; taken as unset')
    return 'unset'


def _exception(raw: object, attributes: dict[str, Any], problems: list[str]) -> None:
    """Fold the events `EVENT_FOLDS` names into `attributes`, skipping events of the wrong shape."""
    if not raw:
        return
    if type(raw) is not list:
        problems.append(f'its events are {kind(raw)}, not a list; skipped')
        return
    for event in raw:
        if type(event) is not dict:
            problems.append(f'an event is {kind(event)}, not an object; skipped')
        elif type(name := event.get('name')) is str and (keys := EVENT_FOLDS.get(name)) is not None:
            fold_event(attributes, decode_json_attributes(event.get('attributes'), problems), keys)


def _careful_span(span: Any, assembler: Assembler, problems: list[str]) -> tuple[TraceBuilder, SpanNode]:
    """One span, validated field by field: `BadData` for what it cannot be placed without, else warnings."""
    if type(span) is not dict:
        raise BadData(f'a span is {kind(span)}, not an object')
    raw_trace = span.get('traceId')
    trace_id_key(raw_trace)  # says what is wrong with it before it is used as a key
    builder = assembler.builder_for(raw_trace, trace_id_key)
    node_id, parent_id = _ids(span)
    start_time, end_time = _times(span, problems)
    attributes = decode_json_attributes(span.get('attributes'), problems)
    _exception(span.get('events'), attributes, problems)
    node = SpanNode(
        name=text_field(span.get('name'), 'name', problems),
        trace_id=builder.trace_int,
        span_id=node_id,
        parent_span_id=parent_id,
        start_timestamp=start_time,
        end_timestamp=end_time,
        attributes=attributes,
        status=_status(span.get('status'), problems),
    )
    return builder, node
