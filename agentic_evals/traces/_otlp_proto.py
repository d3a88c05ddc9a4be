"""Decode binary OTLP protobuf `ExportTraceServiceRequest`s (the body of an OTLP/HTTP export).

A protobuf file has no lines, but a request is a list of `ResourceSpans` (its field 1), so the
reader walks the wire data and parses one `ResourceSpans` at a time, as a request of its own
(`_protowire.top_level_fields`): memory holds one of them, not the file. Concatenated requests
read as one, which protobuf defines as their merge. Same decoding rules as OTLP JSON. Spans
under the pre-1.0 `instrumentation_library_spans` (field 1000 of `ResourceSpans`, gone from
today's schema) are read like `scope_spans`; other unknown length-delimited fields of a request,
resource or scope (where spans could hide) are named in a warning. Errors carry the path of
field numbers to the bad span (see `_protowire.offset_of`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

from google.protobuf import unknown_fields  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans
from pydantic_evals.otel.span_tree import SpanNode

from ..conventions.registry import EVENT_FOLDS
from ._assemble import Assembler, Location
from ._attributes import decode_proto_attributes, fold_event
from ._errors import BadData, preview
from ._otlp_json import STATUS
from ._protowire import first_problem

_UTC = timezone.utc
_LEGACY_SCOPES = 1000
"""`ResourceSpans.instrumentation_library_spans`, wire-compatible with `ScopeSpans`."""
_SCOPE_SPANS = 2
_RESOURCE_SPANS = 1
_SPANS = 2


def parse_proto(data: bytes) -> ExportTraceServiceRequest:
    """Parse a request (one `resource_spans` field of a file); `BadData` (offset in `data`) if it is invalid."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except Exception:  # protobuf's DecodeError; its package ships no type stubs
        offset, problem = first_problem(data, ExportTraceServiceRequest.DESCRIPTOR) or (0, 'the parser refused it')
        raise BadData(invalid(problem), offset=offset) from None
    return request


def invalid(problem: str) -> str:
    return f'not a valid OTLP protobuf ExportTraceServiceRequest, or a truncated one ({problem})'


NO_RESOURCE_SPANS = 'unknown format: binary data that holds no OTLP protobuf resource spans'


def _trace_key(raw: object) -> str:
    if not isinstance(raw, bytes) or len(raw) != 16:
        raise BadData(f'trace_id must be 16 bytes, not {preview(raw)}')
    if not any(raw):
        raise BadData('trace_id is all zeros, which OpenTelemetry reserves for "no trace"')
    return raw.hex()


def _span_id(raw: bytes) -> int:
    if len(raw) != 8:
        raise BadData(f'span_id must be 8 bytes, not {preview(raw)}')
    value = int.from_bytes(raw, 'big')
    if not value:
        raise BadData('span_id is all zeros, which OpenTelemetry reserves for "no span"')
    return value


def _parent_span_id(raw: bytes) -> int | None:
    if not raw:
        return None
    if len(raw) != 8:
        raise BadData(f'parent_span_id must be empty or 8 bytes, not {preview(raw)}')
    return int.from_bytes(raw, 'big') or None


def _unknown(message: object) -> list[tuple[int, int]]:
    """(field number, bytes) of the unknown length-delimited fields of a message."""
    return [
        (field.field_number, len(field.data))
        for field in unknown_fields.UnknownFieldSet(message)
        if field.wire_type == 2
    ]


def scopes(resource_spans: ResourceSpans, notes: list[str] | None = None) -> Iterator[tuple[int, int, ScopeSpans]]:
    """(field number, occurrence, scope) of every `ScopeSpans` of a resource, legacy ones included.

    Unknown fields (other than the legacy one) are described in `notes`, when given.
    """
    for index, scope in enumerate(resource_spans.scope_spans):
        yield _SCOPE_SPANS, index, scope
    legacy = 0
    for field in unknown_fields.UnknownFieldSet(resource_spans):
        if field.field_number == _LEGACY_SCOPES and field.wire_type == 2:
            scope = ScopeSpans()
            try:
                scope.ParseFromString(field.data)
            except Exception:  # DecodeError: the parser skipped this field unread, as unknown to it
                _, problem = first_problem(field.data, ScopeSpans.DESCRIPTOR) or (0, 'the parser refused it')
                message = f'instrumentation_library_spans is not a valid ScopeSpans ({problem})'
                raise BadData(message).within(_LEGACY_SCOPES, legacy) from None
            yield _LEGACY_SCOPES, legacy, scope
            legacy += 1
        elif notes is not None and field.wire_type == 2:
            notes.extend(_describe([(field.field_number, len(field.data))], 'a ResourceSpans'))


def proto_trace_ids(request: ExportTraceServiceRequest) -> list[str]:
    """The normalized trace ids in a request, in order of first span (decoding reports invalid ones)."""
    found: dict[str, None] = {}
    for resource_spans in request.resource_spans:
        try:
            for _, _, scope_spans in scopes(resource_spans):
                found.update((span.trace_id.hex(), None) for span in scope_spans.spans if len(span.trace_id) == 16)
        except BadData:
            continue  # decoding reports it
    return list(found)


def decode_proto(
    request: ExportTraceServiceRequest, location: Location, assembler: Assembler, notes: list[str]
) -> None:
    """Hand a request's spans to the assembler; the unknown fields met are described in `notes`."""
    notes.extend(_describe(_unknown(request), 'the ExportTraceServiceRequest'))
    for index, resource_spans in enumerate(request.resource_spans):
        try:
            for number, occurrence, scope_spans in scopes(resource_spans, notes):
                notes.extend(_describe(_unknown(scope_spans), 'a ScopeSpans'))
                try:
                    _decode_spans(scope_spans, location, assembler)
                except BadData as error:
                    raise error.within(number, occurrence) from None
        except BadData as error:
            raise error.within(_RESOURCE_SPANS, index) from None


def unknown_request_field(number: int, size: int) -> str:
    """The note on an unknown length-delimited field of a request (where spans could hide)."""
    return _describe([(number, size)], 'the ExportTraceServiceRequest')[0]


def _describe(unknown: list[tuple[int, int]], message: str) -> list[str]:
    return [f'an unknown protobuf field {number} of {message} ({size} bytes) was not read' for number, size in unknown]


def _decode_spans(scope_spans: ScopeSpans, location: Location, assembler: Assembler) -> None:
    aliases = assembler.aliases
    problems: list[str] = []
    for index, span in enumerate(scope_spans.spans):
        try:
            raw_trace = span.trace_id
            builder = aliases.get(raw_trace) or assembler.builder_for(raw_trace, _trace_key)
            attributes = decode_proto_attributes(span.attributes, problems)
            for event in span.events:
                keys = EVENT_FOLDS.get(event.name)
                if keys is not None:
                    fold_event(attributes, decode_proto_attributes(event.attributes, problems), keys)
            node = SpanNode(
                name=span.name,
                trace_id=builder.trace_int,
                span_id=_span_id(span.span_id),
                parent_span_id=_parent_span_id(span.parent_span_id),
                # fixed64 nanoseconds end in the year 2554: always a valid datetime
                start_timestamp=datetime.fromtimestamp(span.start_time_unix_nano / 1e9, tz=_UTC),
                end_timestamp=datetime.fromtimestamp(span.end_time_unix_nano / 1e9, tz=_UTC),
                attributes=attributes,
                status=STATUS.get(span.status.code, 'unset'),
            )
        except BadData as error:
            raise error.within(_SPANS, index) from None
        for problem in problems:
            builder.warn(location, f'span {node.span_id:016x} ({span.name!r}): {problem}')
        problems.clear()
        builder.add(node, location)
