"""Decode OTLP JSON `ExportTraceServiceRequest` objects (as the Collector's file exporter writes them).

Follows the OTLP/JSON mapping: hex ids, int64 timestamps as strings (numbers accepted), enums as
numbers (names accepted). The pre-1.0 `instrumentationLibrarySpans` key is read like `scopeSpans`.
Resource and scope attributes are dropped, and so are span kind, links and the status message:
`SpanNode` has no place for them (pydantic-evals' own `SpanNode.from_readable_span` drops them too).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode, SpanStatus

from ._assemble import Assembler, Location
from ._attributes import EXCEPTION_EVENT, decode_json_attributes, fold_exception
from ._errors import BadData
from ._ids import optional_span_id, span_id, trace_id_key

__all__ = ('STATUS', 'decode_request')

STATUS: dict[object, SpanStatus] = {
    2: 'error',
    1: 'ok',
    'STATUS_CODE_ERROR': 'error',
    'STATUS_CODE_OK': 'ok',
}
"""OTLP `Status.code` (number or enum name) -> `SpanNode.status`; anything else is 'unset'."""

_UTC = timezone.utc


def _timestamp(raw: object, field: str) -> datetime:
    if raw is None:
        raise BadData(f'span has no {field}')
    # The same conversion as pydantic-evals' `SpanNode.from_readable_span`, so a trace loaded from a
    # file equals the tree captured in-process from the same spans, to the microsecond.
    return datetime.fromtimestamp(int(raw) / 1e9, tz=_UTC)  # type: ignore[call-overload]


def decode_request(request: Mapping[str, Any], location: Location, assembler: Assembler) -> None:
    """Hand every span of one request to the assembler. Raises `BadData`, `KeyError`, `TypeError`..."""
    aliases = assembler.aliases
    problems: list[str] = []
    for resource_spans in request.get('resourceSpans') or ():
        scopes = resource_spans.get('scopeSpans') or resource_spans.get('instrumentationLibrarySpans') or ()
        for scope_spans in scopes:
            for span in scope_spans.get('spans') or ():
                raw_trace = span.get('traceId')
                builder = aliases.get(raw_trace) or assembler.builder_for(raw_trace, trace_id_key)
                name = span.get('name', '')
                attributes = decode_json_attributes(span['attributes'], problems) if 'attributes' in span else {}
                events = span.get('events')
                if events:
                    for event in events:
                        if event.get('name') == EXCEPTION_EVENT:
                            fold_exception(attributes, decode_json_attributes(event.get('attributes') or (), problems))
                            break
                status = span.get('status')
                start = _timestamp(span.get('startTimeUnixNano'), 'startTimeUnixNano')
                raw_end = span.get('endTimeUnixNano')
                node = SpanNode(
                    name=name,
                    trace_id=builder.trace_int,
                    span_id=span_id(span.get('spanId')),
                    parent_span_id=optional_span_id(span.get('parentSpanId')),
                    start_timestamp=start,
                    end_timestamp=start if raw_end is None else _timestamp(raw_end, 'endTimeUnixNano'),
                    attributes=attributes,
                    status=STATUS.get(status.get('code'), 'unset') if status else 'unset',
                )
                if raw_end is None:
                    problems.append('has no endTimeUnixNano; its end is taken as its start')
                if problems:
                    for problem in problems:
                        builder.warn(location, f'span {node.span_id:016x} ({name!r}): {problem}')
                    problems.clear()
                builder.add(node, location)
