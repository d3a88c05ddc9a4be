"""Save OTel SDK spans as OTLP JSON lines, the format the Collector's file exporter writes.

One line per trace: an `ExportTraceServiceRequest` holding that trace's spans, grouped by resource
and instrumentation scope. Ids are hex, int64 values are strings, enums are numbers, bytes are
base64 and non-finite doubles are `"NaN"`/`"Infinity"`, as the OTLP/JSON mapping specifies; any
OTLP reader (the Collector, `load_traces`) reads it back. Every field OpenTelemetry's own OTLP
encoder writes is written (span flags and trace state, dropped counts, link flags, events,
status messages, resource and scope attributes and schema URLs): a test compares the two.
"""

from __future__ import annotations

import gzip
import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO, cast

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanContext, StatusCode

from ..otlp_encoding import json_line, key_values

_logger = logging.getLogger(__name__)
_STATUS_CODES = {StatusCode.UNSET: 0, StatusCode.OK: 1, StatusCode.ERROR: 2}
_HAS_IS_REMOTE = 0x100
_IS_REMOTE = 0x200
"""`SpanFlags`: whether the parent (or a link's target) is known to be remote, and whether it is."""


def _flags(parent: SpanContext | None) -> int:
    return _HAS_IS_REMOTE | (_IS_REMOTE if parent is not None and parent.is_remote else 0)


def _dropped(encoded: dict[str, Any], key: str, count: int) -> None:
    if count:
        encoded[key] = count


def _span(span: ReadableSpan) -> dict[str, Any]:
    context = span.get_span_context()
    assert context is not None, 'an SDK span always has a context'
    encoded: dict[str, Any] = {'traceId': f'{context.trace_id:032x}', 'spanId': f'{context.span_id:016x}'}
    if context.trace_state:
        encoded['traceState'] = ','.join(f'{key}={value}' for key, value in context.trace_state.items())
    if span.parent is not None:
        encoded['parentSpanId'] = f'{span.parent.span_id:016x}'
    encoded['flags'] = _flags(span.parent)
    encoded['name'] = span.name
    encoded['kind'] = span.kind.value + 1  # the SDK counts from INTERNAL = 0, OTLP from UNSPECIFIED = 0
    if span.start_time is not None:
        encoded['startTimeUnixNano'] = str(span.start_time)
    if span.end_time is not None:
        encoded['endTimeUnixNano'] = str(span.end_time)
    if span.attributes:
        encoded['attributes'] = key_values(span.attributes)
    _dropped(encoded, 'droppedAttributesCount', span.dropped_attributes)
    if span.events:
        encoded['events'] = []
        for event in span.events:
            encoded_event = {
                'timeUnixNano': str(event.timestamp),
                'name': event.name,
                'attributes': key_values(event.attributes),
            }
            _dropped(encoded_event, 'droppedAttributesCount', event.dropped_attributes)
            encoded['events'].append(encoded_event)
    _dropped(encoded, 'droppedEventsCount', span.dropped_events)
    if span.links:
        encoded['links'] = []
        for link in span.links:
            encoded_link = {
                'traceId': f'{link.context.trace_id:032x}',
                'spanId': f'{link.context.span_id:016x}',
                'attributes': key_values(link.attributes),
                'flags': _flags(link.context),
            }
            _dropped(encoded_link, 'droppedAttributesCount', link.dropped_attributes)
            encoded['links'].append(encoded_link)
    _dropped(encoded, 'droppedLinksCount', span.dropped_links)
    status: dict[str, Any] = {}
    if span.status.status_code is not StatusCode.UNSET:
        status['code'] = _STATUS_CODES[span.status.status_code]
    if span.status.description:
        status['message'] = span.status.description
    encoded['status'] = status
    return encoded


def _requests(spans: Iterable[ReadableSpan]) -> Iterable[tuple[int, dict[str, Any]]]:
    """(span count, request) per trace, in order of each trace's first span."""
    traces: dict[int, dict[int, tuple[Any, dict[Any, list[dict[str, Any]]]]]] = {}
    for span in spans:
        context = span.get_span_context()
        assert context is not None, 'an SDK span always has a context'
        by_resource = traces.setdefault(context.trace_id, {})
        _, by_scope = by_resource.setdefault(id(span.resource), (span.resource, {}))
        by_scope.setdefault(span.instrumentation_scope, []).append(_span(span))
    for by_resource in traces.values():
        resource_spans = []
        count = 0
        for resource, by_scope in by_resource.values():
            scope_spans = []
            for scope, encoded in by_scope.items():
                count += len(encoded)
                entry: dict[str, Any] = {'scope': {}, 'spans': encoded}
                if scope is not None:
                    entry['scope'] = {'name': scope.name}
                    if scope.version:
                        entry['scope']['version'] = scope.version
                    if scope.attributes:
                        entry['scope']['attributes'] = key_values(scope.attributes)
                    if scope.schema_url:
                        entry['schemaUrl'] = scope.schema_url
                scope_spans.append(entry)
            resource_entry: dict[str, Any] = {
                'resource': {'attributes': key_values(resource.attributes)},
                'scopeSpans': scope_spans,
            }
            if resource.schema_url:
                resource_entry['schemaUrl'] = resource.schema_url
            resource_spans.append(resource_entry)
        yield count, {'resourceSpans': resource_spans}


def _open_text(path: Path, append: bool) -> TextIO:
    mode = 'at' if append else 'wt'
    if path.suffix == '.gz':
        return cast(TextIO, gzip.open(path, mode, encoding='utf-8'))
    return cast(TextIO, open(path, mode, encoding='utf-8'))


def write_otlp_json(spans: Iterable[ReadableSpan], path: str | Path, *, append: bool = False) -> int:
    """Write finished spans to `path` as OTLP JSON lines, one request per trace; returns the span count.

    A `.gz` suffix writes gzip (appending adds a gzip member, which readers handle). Pass
    `Capture.spans`, an `InMemorySpanExporter`'s finished spans, or any `ReadableSpan`s.
    """
    path = Path(path)
    written = 0
    with _open_text(path, append) as stream:
        for count, request in _requests(spans):
            stream.write(json_line(request))
            written += count
    return written


class OtlpJsonFileExporter(SpanExporter):
    """A span exporter that appends every batch to an OTLP JSON lines file (`.gz`: gzipped).

    Use it in any SDK pipeline, e.g. `provider.add_span_processor(BatchSpanProcessor(exporter))`.
    A batch holds spans of several traces and a trace spans several batches; `load_traces` merges
    them back. The file is emptied when the exporter is created, unless `append=True`. Like every
    exporter it never raises into the application: a failed write is logged and reported as
    `SpanExportResult.FAILURE`.
    """

    def __init__(self, path: str | Path, *, append: bool = False) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._shut_down = False
        if not append:
            write_otlp_json((), self.path)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shut_down:
            return SpanExportResult.FAILURE
        try:
            with self._lock:
                write_otlp_json(spans, self.path, append=True)
        except Exception:
            _logger.exception('could not write %d spans to %s', len(spans), self.path)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._shut_down = True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every export is written and closed before it returns
