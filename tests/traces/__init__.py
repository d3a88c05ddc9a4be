"""Tests of `agentic_evals.traces`; the helpers below build OTLP JSON the way the Collector writes it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from pydantic_evals.otel.span_tree import SpanTree

TRACE_A = '0af7651916cd43dd8448eb211c80319c'
TRACE_B = '4bf92f3577b34da6a3ce929d0e0e4736'
TRACE_C = '5b8efff798038103d269b633813fc60c'
T0 = 1_700_000_000_000_000_000
"""A start time in Unix nanoseconds; span times in the helpers are microseconds after it."""


def attribute(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {'key': key, 'value': value}


def span(
    span_id: str,
    name: str = 'span',
    *,
    trace_id: str = TRACE_A,
    parent: str = '',
    start_us: int = 0,
    end_us: int | None = None,
    attributes: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """One OTLP JSON span; ids are padded to their length with zeros, as in `span('1')`."""
    encoded: dict[str, Any] = {
        'traceId': trace_id,
        'spanId': span_id.rjust(16, '0'),
        'parentSpanId': parent.rjust(16, '0') if parent else '',
        'name': name,
        'kind': 1,
        'startTimeUnixNano': str(T0 + start_us * 1000),
        'endTimeUnixNano': str(T0 + (start_us + 10 if end_us is None else end_us) * 1000),
        'attributes': attributes or [],
        'status': {},
    }
    encoded.update(fields)
    return encoded


def request(*spans: dict[str, Any]) -> dict[str, Any]:
    """An `ExportTraceServiceRequest` holding the spans under one resource and scope."""
    return {
        'resourceSpans': [
            {
                'resource': {'attributes': [attribute('service.name', {'stringValue': 'agent'})]},
                'scopeSpans': [{'scope': {'name': 'pydantic-ai', 'version': '2.62.0'}, 'spans': list(spans)}],
            }
        ]
    }


def write_lines(path: Path, *lines: dict[str, Any] | str) -> Path:
    """JSON lines (dicts are dumped, strings written as they are); `.gz` paths are gzipped."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = ''.join((line if isinstance(line, str) else json.dumps(line)) + '\n' for line in lines)
    if path.suffix == '.gz':
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def shape(tree: SpanTree) -> list[tuple[str, str, str | None, str]]:
    """(name, span id, parent span id, status) per node, in the tree's order: what a comparison needs."""
    return [
        (
            node.name,
            f'{node.span_id:016x}',
            None if node.parent is None else f'{node.parent.span_id:016x}',
            node.status,
        )
        for node in tree
    ]


def write_document(path: Path, document: Any, *, indent: int | None = 2) -> Path:
    """One JSON document (pretty-printed by default); `.gz` paths are gzipped."""
    text = json.dumps(document, indent=indent)
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == '.gz' else text.encode())
    return path


def jaeger_span(span_id: str, name: str = 'span', *, trace_id: str = TRACE_A, **fields: Any) -> dict[str, Any]:
    """One Jaeger span, ids padded like `span`'s."""
    encoded: dict[str, Any] = {
        'traceID': trace_id,
        'spanID': span_id.rjust(16, '0'),
        'operationName': name,
        'references': [],
        'startTime': T0 // 1000,
        'duration': 10,
        'tags': [],
    }
    encoded.update(fields)
    return encoded


def jaeger(*spans: dict[str, Any]) -> dict[str, Any]:
    """A Jaeger export of one trace."""
    return {'data': [{'traceID': TRACE_A, 'spans': list(spans), 'processes': {}}]}
