"""Decode OTLP JSON `ExportTraceServiceRequest` objects (as the Collector's file exporter writes them).

Follows the OTLP/JSON mapping: hex ids, int64 timestamps as strings (numbers accepted), enums as
numbers (names accepted). The pre-1.0 `instrumentationLibrarySpans` key is read like `scopeSpans`.
Resource and scope attributes are dropped, and so are span kind, links and the status message:
`SpanNode` has no place for them (pydantic-evals' own `SpanNode.from_readable_span` drops them too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode, SpanStatus

from ..conventions.otel import EXCEPTION_EVENT
from ._assemble import Assembler, Location
from ._attributes import decode_json_attributes, fold_exception
from ._errors import BadData
from ._ids import optional_span_id, span_id, trace_id_key

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
_hex16 = re.compile('[0-9a-fA-F]{16}').fullmatch


def _ids(span: Mapping[str, Any]) -> tuple[int, int | None]:
    """The span and parent ids, validated (the slow path, which also explains what is wrong)."""
    return span_id(span.get('spanId')), optional_span_id(span.get('parentSpanId'))


def _times(span: Mapping[str, Any], problems: list[str]) -> tuple[datetime, datetime]:
    start = span.get('startTimeUnixNano')
    if start is None:
        raise BadData('span has no startTimeUnixNano')
    end = span.get('endTimeUnixNano')
    if end is None:
        problems.append('has no endTimeUnixNano; its end is taken as its start')
        end = start
    return _from_timestamp(int(start) / 1e9, _UTC), _from_timestamp(int(end) / 1e9, _UTC)


def decode_request(request: Mapping[str, Any], location: Location, assembler: Assembler) -> None:
    """Hand every span of one request to the assembler. Raises `BadData`, `KeyError`, `TypeError`...

    Written for speed (about a million spans in a few seconds): one pass over each span's fields,
    with the validating helpers only on the rare path.
    """
    aliases = assembler.aliases
    problems: list[str] = []
    for resource_spans in request.get('resourceSpans') or ():
        scopes = resource_spans.get('scopeSpans') or resource_spans.get('instrumentationLibrarySpans') or ()
        for scope_spans in scopes:
            for span in scope_spans.get('spans') or ():
                raw_trace = span.get('traceId')
                builder = aliases.get(raw_trace) or assembler.builder_for(raw_trace, trace_id_key)
                raw_id = span.get('spanId')
                raw_parent = span.get('parentSpanId')
                if type(raw_id) is str and _hex16(raw_id) and (not raw_parent or _hex16(raw_parent)):
                    node_id = int(raw_id, 16) or span_id(raw_id)  # all zeros: let span_id say why
                    parent_id = int(raw_parent, 16) or None if raw_parent else None
                else:
                    node_id, parent_id = _ids(span)
                start = span.get('startTimeUnixNano')
                end = span.get('endTimeUnixNano')
                if start is not None and end is not None:
                    start_time = _from_timestamp(int(start) / 1e9, _UTC)
                    end_time = _from_timestamp(int(end) / 1e9, _UTC)
                else:
                    start_time, end_time = _times(span, problems)
                attributes = decode_json_attributes(span['attributes'], problems) if 'attributes' in span else {}
                events = span.get('events')
                if events:
                    for event in events:
                        if event.get('name') == EXCEPTION_EVENT:
                            fold_exception(attributes, decode_json_attributes(event.get('attributes') or (), problems))
                            break
                status = span.get('status')
                name = span.get('name', '')
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
                if problems:
                    for problem in problems:
                        builder.warn(location, f'span {node_id:016x} ({name!r}): {problem}')
                    problems.clear()
                builder.add(node, location)
