"""Decode Jaeger JSON, as the Jaeger UI's "Download JSON" and its `/api/traces` endpoint give it.

`{"data": [{"traceID", "spans": [...], "processes": {...}}]}`; a single trace object, or a list of
them, is accepted too. Timestamps are microseconds (exact in `SpanNode`). The parent is the first
`CHILD_OF` reference within the same trace (else a `parentSpanID` field); `FOLLOWS_FROM` references
are links, as OpenTelemetry's Jaeger translation writes them, and are ignored. Status comes from the
`otel.status_code` tag, else `error=true`. Tags that only encode OTel span fields in Jaeger
(`span.kind`, `otel.status_code`, `otel.scope.name`, ...) are dropped, so a Jaeger trace has the
same attributes as its OTLP original; processes (the resource) are dropped like OTLP resources.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from pydantic_evals.otel.span_tree import AttributeValue, SpanNode, SpanStatus

from ..conventions.otel import EXCEPTION_EVENT
from ._assemble import Assembler, Location
from ._attributes import fold_exception
from ._errors import BadData
from ._ids import optional_span_id, span_id, trace_id_key

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


def _bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if raw in ('true', 'false'):
        return bool(raw == 'true')
    raise ValueError(f'{raw!r} is not a boolean')


def _str(raw: Any) -> str:
    if type(raw) is not str:
        raise ValueError(f'{raw!r} is not a string')
    return raw


_TAG_TYPES: dict[str, Callable[[Any], AttributeValue]] = {
    'string': _str,
    'bool': _bool,
    'int64': int,
    'float64': float,
    'binary': _str,  # base64 text, as for OTLP bytesValue
}


def _tags(tags: Iterable[Mapping[str, Any]], problems: list[str]) -> dict[str, AttributeValue]:
    decoded: dict[str, AttributeValue] = {}
    for tag in tags:
        key = tag['key']
        kind = tag.get('type')
        decode = _TAG_TYPES.get(kind.lower() if isinstance(kind, str) else 'string')
        if decode is None:
            problems.append(f'tag {key!r} has an unknown type {kind!r}; skipped')
            continue
        try:
            decoded[key] = decode(tag.get('value'))
        except (ValueError, TypeError) as error:
            problems.append(f'tag {key!r} has an invalid {kind} value ({error}); skipped')
    return decoded


def _jaeger_trace_key(raw: object) -> str:
    return trace_id_key(raw, 'traceID', short_ok=True)


def _status(tags: dict[str, AttributeValue]) -> SpanStatus:
    code = tags.get('otel.status_code')
    if code == 'ERROR' or (code is None and tags.get('error') is True):
        return 'error'
    return 'ok' if code == 'OK' else 'unset'


def _parent(span: Mapping[str, Any], trace_id: str) -> int | None:
    for reference in span.get('references') or ():
        if reference.get('refType') == 'CHILD_OF' and _jaeger_trace_key(reference.get('traceID')) == trace_id:
            return span_id(reference.get('spanID'), 'references.spanID', short_ok=True)
    return optional_span_id(span.get('parentSpanID'), 'parentSpanID', short_ok=True)


def _fold_logs(logs: Iterable[Mapping[str, Any]], attributes: dict[str, AttributeValue], problems: list[str]) -> None:
    for log in logs:
        fields = _tags(log.get('fields') or (), problems)
        if fields.get('event') == EXCEPTION_EVENT:
            fold_exception(attributes, fields)
            return


def decode_jaeger_trace(trace: Mapping[str, Any], location: Location, assembler: Assembler) -> None:
    """Hand every span of one Jaeger trace object to the assembler."""
    aliases = assembler.aliases
    problems: list[str] = []
    for span in trace.get('spans') or ():
        raw_trace = span.get('traceID') or trace.get('traceID')
        builder = aliases.get(raw_trace) or assembler.builder_for(raw_trace, _jaeger_trace_key)
        name = span.get('operationName', '')
        tags = _tags(span.get('tags') or (), problems)
        status = _status(tags)
        attributes = {
            key: value
            for key, value in tags.items()
            if key not in _TRANSLATION_TAGS and not (key == 'error' and type(value) is bool)
        }
        logs = span.get('logs')
        if logs:
            _fold_logs(logs, attributes, problems)
        node_id = span_id(span.get('spanID'), 'spanID', short_ok=True)
        start_us = span.get('startTime')
        if start_us is None:
            raise BadData('span has no startTime')
        start = _EPOCH + timedelta(microseconds=int(start_us))
        node = SpanNode(
            name=name,
            trace_id=builder.trace_int,
            span_id=node_id,
            parent_span_id=_parent(span, builder.trace_id),
            start_timestamp=start,
            end_timestamp=start + timedelta(microseconds=int(span.get('duration') or 0)),
            attributes=attributes,
            status=status,
        )
        for problem in problems:
            builder.warn(location, f'span {node.span_id:016x} ({name!r}): {problem}')
        problems.clear()
        builder.add(node, location)
