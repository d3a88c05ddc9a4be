"""Decode Jaeger JSON, as the Jaeger UI's "Download JSON" and its `/api/traces` endpoint give it.

`{"data": [{"traceID", "spans": [...], "processes": {...}}]}`; a single trace object, or a list of
them, is accepted too. Timestamps are microseconds (exact in `SpanNode`). The parent is the first
`CHILD_OF` reference within the same trace (else a `parentSpanID` field); `FOLLOWS_FROM` references
are links, as OpenTelemetry's Jaeger translation writes them, and are ignored. Status comes from the
`otel.status_code` tag, else `error=true`. Tags that only encode OTel span fields in Jaeger
(`span.kind`, `otel.status_code`, `otel.scope.name`, ...) are dropped, so a Jaeger trace has the
same attributes as its OTLP original; processes (the resource) are dropped like OTLP resources.

Errors and warnings follow the OTLP JSON decoder's rule: ids, the start time and containers of the
wrong JSON type are errors; a non-string operation name, an unusable duration, tags and logs of
the wrong shape are warnings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from pydantic_evals.otel.span_tree import AttributeValue, SpanNode, SpanStatus

from ..conventions.registry import EVENT_FOLDS
from ._assemble import Assembler, Location
from ._attributes import double, fold_event, integer, one_line, text_field
from ._errors import BadData, kind, preview
from ._ids import optional_span_id, span_id, trace_id_key
from ._otlp_json import as_list
from ._unknown import unknown_keys

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_TRANSLATION_TAGS = frozenset({
    'span.kind',
    'otel.status_code',
    'otel.status_description',
    'otel.scope.name',
    'otel.scope.version',
    'otel.library.name',
    'otel.library.version',
    'internal.span.format',
})  # fmt: skip


JAEGER_EXPORT_KEYS = frozenset({'data', 'total', 'limit', 'offset', 'errors'})
"""The keys of a Jaeger API response (`/api/traces`)."""
_TRACE_KEYS = frozenset({'traceID', 'spans', 'processes', 'warnings'})


def _bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if raw in ('true', 'false'):
        return bool(raw == 'true')
    raise ValueError(f'{preview(raw)} is not a boolean')


def _str(raw: Any) -> str:
    if type(raw) is not str:
        raise ValueError(f'{preview(raw)} is not a string')
    return raw


_TAG_TYPES: dict[str, Callable[[Any], AttributeValue]] = {
    'string': _str,
    'bool': _bool,
    'int64': integer,
    'float64': double,
    'binary': _str,  # base64 text, as for OTLP bytesValue
}


def _tags(tags: Any, what: str, problems: list[str]) -> dict[str, AttributeValue]:
    """Jaeger tags (or log fields) as attributes; a tag of the wrong shape is skipped with a warning."""
    decoded: dict[str, AttributeValue] = {}
    if type(tags) is not list:
        if tags:
            problems.append(f'its {what} are {kind(tags)}, not a list; skipped')
        return decoded
    for tag in tags:
        if type(tag) is not dict:
            problems.append(f'a tag is {kind(tag)}, not an object; skipped')
            continue
        key = tag.get('key')
        if type(key) is not str:
            problems.append(f'a tag key is {kind(key)} ({preview(key)}), not a string; skipped')
            continue
        tag_type = tag.get('type')
        type_name = tag_type.lower() if isinstance(tag_type, str) else 'string'
        decode = _TAG_TYPES.get(type_name)
        if decode is None:
            problems.append(f'tag {key!r} has an unknown type {preview(tag_type)}; skipped')
            continue
        try:
            decoded[key] = decode(tag.get('value'))
        except ValueError as error:
            problems.append(f'tag {key!r} has an invalid {type_name} value ({one_line(error)}); skipped')
    return decoded


def jaeger_trace_key(raw: object) -> str:
    return trace_id_key(raw, 'traceID', short_ok=True)


def _status(tags: dict[str, AttributeValue]) -> SpanStatus:
    code = tags.get('otel.status_code')
    if code == 'ERROR' or (code is None and tags.get('error') is True):
        return 'error'
    return 'ok' if code == 'OK' else 'unset'


def _parent(span: Mapping[str, Any], trace_id: str) -> int | None:
    references = span.get('references')
    if type(references) is not list and references is not None:
        raise BadData(f'references is {kind(references)}, not a list', ('references',))
    for index, reference in enumerate(references or ()):
        if type(reference) is not dict:
            raise BadData(f'a reference is {kind(reference)}, not an object', ('references', index))
        try:
            if reference.get('refType') == 'CHILD_OF' and jaeger_trace_key(reference.get('traceID')) == trace_id:
                return span_id(reference.get('spanID'), 'references.spanID', short_ok=True)
        except BadData as error:
            raise error.within('references', index) from None
    return optional_span_id(span.get('parentSpanID'), 'parentSpanID', short_ok=True)


def _fold_logs(logs: Any, attributes: dict[str, AttributeValue], problems: list[str]) -> None:
    if type(logs) is not list:
        problems.append(f'its logs are {kind(logs)}, not a list; skipped')
        return
    for log in logs:
        if type(log) is not dict:
            problems.append(f'a log is {kind(log)}, not an object; skipped')
            continue
        fields = _tags(log.get('fields'), 'log fields', problems)
        name = fields.get('event')
        keys = EVENT_FOLDS.get(name) if type(name) is str else None
        if keys is not None:
            fold_event(attributes, fields, keys)


def _microseconds(raw: object, field: str) -> int:
    """A number of microseconds (a number, or a decimal string); `BadData` says what is wrong with it."""
    if type(raw) is int:
        return raw
    if type(raw) is float and math.isfinite(raw):
        return int(raw)
    if type(raw) is str:
        digits = raw.strip().lstrip('+-')
        if digits.isascii() and digits.isdigit() and len(digits) < 30:
            return int(raw)
    raise BadData(f'{field} {preview(raw)} is not a whole number of microseconds')


def _times(span: Mapping[str, Any], problems: list[str]) -> tuple[datetime, datetime]:
    raw_start = span.get('startTime')
    if raw_start is None:
        raise BadData('span has no startTime')
    try:
        start = _EPOCH + timedelta(microseconds=_microseconds(raw_start, 'startTime'))
    except OverflowError:
        raise BadData(
            f'startTime {preview(raw_start)} is out of range (microseconds since 1970, before the year 10000)'
        ) from None
    raw_duration = span.get('duration')
    if not raw_duration:
        return start, start
    try:
        return start, start + timedelta(microseconds=_microseconds(raw_duration, 'duration'))
    except BadData as error:
        problems.append(f'{error.message}; its end is taken as its start')
    except OverflowError:
        problems.append(f'duration {preview(raw_duration)} is out of range; its end is taken as its start')
    return start, start


def decode_jaeger_export(export: Mapping[str, Any], location: Location, assembler: Assembler) -> int:
    """Every trace of a Jaeger export (`{"data": [...]}`); returns the trace id keys seen.

    Its other keys are checked by the caller, which knows which other formats the object has.
    """
    seen = 0
    for index, trace in enumerate(as_list(export.get('data'), 'data')):
        try:
            if type(trace) is not dict:
                raise BadData(f'an entry of data is {kind(trace)}, not an object')
            seen += decode_jaeger_trace(trace, location, assembler)
        except BadData as error:
            raise error.within('data', index) from None
    return seen


def decode_jaeger_trace(trace: Mapping[str, Any], location: Location, assembler: Assembler) -> int:
    """Hand every span of one Jaeger trace object to the assembler; returns the trace id keys seen.

    An upper bound: the trace, its spans and their references, each of which may have one.
    """
    problems: list[str] = []
    spans = as_list(trace.get('spans'), 'spans')
    seen = len(spans) + ('traceID' in trace)
    for index, span in enumerate(spans):
        try:
            seen += _decode_span(span, trace, location, assembler, problems)
        except BadData as error:
            raise error.within('spans', index) from None
    if not trace.keys() <= _TRACE_KEYS:
        seen += unknown_keys(trace, _TRACE_KEYS, location, assembler, jaeger_trace_key)
    return seen


def _decode_span(
    span: Any, trace: Mapping[str, Any], location: Location, assembler: Assembler, problems: list[str]
) -> int:
    """One Jaeger span into the assembler; returns its references (trace id keys beside its own)."""
    if type(span) is not dict:
        raise BadData(f'a span is {kind(span)}, not an object')
    raw_trace = span.get('traceID') or trace.get('traceID')
    trace_key = jaeger_trace_key(raw_trace)
    builder = assembler.builder_for(raw_trace, jaeger_trace_key)
    node_id = span_id(span.get('spanID'), 'spanID', short_ok=True)
    name = text_field(span.get('operationName'), 'operationName', problems)
    tags = _tags(span.get('tags'), 'tags', problems)
    attributes = {
        key: value
        for key, value in tags.items()
        if key not in _TRANSLATION_TAGS and not (key == 'error' and type(value) is bool)
    }
    logs = span.get('logs')
    if logs:
        _fold_logs(logs, attributes, problems)
    start, end = _times(span, problems)
    node = SpanNode(
        name=name,
        trace_id=builder.trace_int,
        span_id=node_id,
        parent_span_id=_parent(span, trace_key),
        start_timestamp=start,
        end_timestamp=end,
        attributes=attributes,
        status=_status(tags),
    )
    for problem in problems:
        builder.warn(location, f'span {node.span_id:016x} ({name!r}): {problem}')
    problems.clear()
    builder.add(node, location)
    references = span.get('references')
    return len(references) if type(references) is list else 0
