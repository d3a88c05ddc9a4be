"""Decode binary OTLP protobuf `ExportTraceServiceRequest`s (the body of an OTLP/HTTP export).

A protobuf file has no lines or record boundaries, so it is parsed whole (concatenated requests
parse as one, which protobuf defines as their merge). Same decoding rules as OTLP JSON.
"""

from __future__ import annotations

from datetime import datetime, timezone

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from pydantic_evals.otel.span_tree import SpanNode

from ..conventions.otel import EXCEPTION_EVENT
from ._assemble import Assembler, Location
from ._attributes import decode_proto_attributes, fold_exception
from ._errors import BadData
from ._otlp_json import STATUS

_UTC = timezone.utc


def parse_proto(data: bytes) -> ExportTraceServiceRequest:
    """Parse a whole file; raises `BadData` when it is not a (complete) request."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except Exception as error:  # protobuf's DecodeError; its package ships no type stubs
        raise BadData(f'not a valid OTLP protobuf ExportTraceServiceRequest, or a truncated one ({error})') from None
    if not request.resource_spans:
        raise BadData('unknown format: binary data that holds no OTLP protobuf resource spans')
    return request


def _trace_key(raw: object) -> str:
    if not isinstance(raw, bytes) or len(raw) != 16:
        raise BadData(f'trace_id must be 16 bytes, not {raw!r}')
    if not any(raw):
        raise BadData('trace_id is all zeros, which OpenTelemetry reserves for "no trace"')
    return raw.hex()


def _span_id(raw: bytes) -> int:
    if len(raw) != 8:
        raise BadData(f'span_id must be 8 bytes, not {raw!r}')
    value = int.from_bytes(raw, 'big')
    if not value:
        raise BadData('span_id is all zeros, which OpenTelemetry reserves for "no span"')
    return value


def _parent_span_id(raw: bytes) -> int | None:
    if not raw:
        return None
    if len(raw) != 8:
        raise BadData(f'parent_span_id must be empty or 8 bytes, not {raw!r}')
    return int.from_bytes(raw, 'big') or None


def proto_trace_ids(request: ExportTraceServiceRequest) -> list[str]:
    """The normalized trace ids in a request, in order of first span (decoding reports invalid ones)."""
    found = dict.fromkeys(
        span.trace_id.hex()
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
        if len(span.trace_id) == 16
    )
    return list(found)


def decode_proto(request: ExportTraceServiceRequest, location: Location, assembler: Assembler) -> None:
    aliases = assembler.aliases
    problems: list[str] = []
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                raw_trace = span.trace_id
                builder = aliases.get(raw_trace) or assembler.builder_for(raw_trace, _trace_key)
                attributes = decode_proto_attributes(span.attributes, problems)
                for event in span.events:
                    if event.name == EXCEPTION_EVENT:
                        fold_exception(attributes, decode_proto_attributes(event.attributes, problems))
                        break
                node = SpanNode(
                    name=span.name,
                    trace_id=builder.trace_int,
                    span_id=_span_id(span.span_id),
                    parent_span_id=_parent_span_id(span.parent_span_id),
                    start_timestamp=datetime.fromtimestamp(span.start_time_unix_nano / 1e9, tz=_UTC),
                    end_timestamp=datetime.fromtimestamp(span.end_time_unix_nano / 1e9, tz=_UTC),
                    attributes=attributes,
                    status=STATUS.get(span.status.code, 'unset'),
                )
                for problem in problems:
                    builder.warn(location, f'span {node.span_id:016x} ({span.name!r}): {problem}')
                problems.clear()
                builder.add(node, location)
