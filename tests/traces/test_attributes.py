"""Attribute values of every OTLP type, status codes and exception events, in JSON and protobuf."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from agentic_evals import read_traces

from . import T0, TRACE_A, attribute, request, span, write_lines

JSON_VALUES: list[tuple[str, dict[str, Any], object]] = [
    ('string', {'stringValue': 'x'}, 'x'),
    ('empty string', {'stringValue': ''}, ''),
    ('bool', {'boolValue': True}, True),
    ('bool as text', {'boolValue': 'false'}, False),
    ('int as string', {'intValue': '-9007199254740993'}, -9007199254740993),
    ('int as number', {'intValue': 42}, 42),
    ('double', {'doubleValue': 0.5}, 0.5),
    ('double as integer number', {'doubleValue': 2}, 2.0),
    ('infinity', {'doubleValue': 'Infinity'}, math.inf),
    ('bytes stay base64 text', {'bytesValue': 'AAEC/w=='}, 'AAEC/w=='),
    ('string array', {'arrayValue': {'values': [{'stringValue': 'a'}, {'stringValue': 'b'}]}}, ('a', 'b')),
    ('int array', {'arrayValue': {'values': [{'intValue': '1'}, {'intValue': 2}]}}, (1, 2)),
    ('bool array', {'arrayValue': {'values': [{'boolValue': True}, {'boolValue': False}]}}, (True, False)),
    ('double array', {'arrayValue': {'values': [{'doubleValue': 1.5}]}}, (1.5,)),
    ('empty array', {'arrayValue': {}}, ()),
    ('mixed array becomes JSON', {'arrayValue': {'values': [{'intValue': '1'}, {'stringValue': 'a'}]}}, '[1,"a"]'),
    (
        'nested array becomes JSON',
        {'arrayValue': {'values': [{'arrayValue': {'values': [{'boolValue': True}]}}, {'kvlistValue': {}}]}},
        '[[true],{}]',
    ),
    (
        'kvlist becomes JSON',
        {
            'kvlistValue': {
                'values': [
                    attribute('city', {'stringValue': 'Paris'}),
                    attribute('days', {'intValue': '3'}),
                    attribute('tags', {'arrayValue': {'values': [{'stringValue': 'x'}]}}),
                    attribute('raw', {'bytesValue': 'AA=='}),
                ]
            }
        },
        '{"city":"Paris","days":3,"tags":["x"],"raw":"AA=="}',
    ),
    ('empty kvlist', {'kvlistValue': {}}, '{}'),
]


def load_attributes(tmp_path: Path, *values: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    attributes = [attribute(f'k{index}', value) for index, value in enumerate(values)]
    path = write_lines(tmp_path / 'attributes.jsonl', request(span('1', 'tool', attributes=attributes)))
    [trace] = read_traces(path)
    [node] = trace.tree
    return node.attributes, trace.warnings


@pytest.mark.parametrize(('value', 'expected'), [case[1:] for case in JSON_VALUES], ids=[c[0] for c in JSON_VALUES])
def test_json_value(value: dict[str, Any], expected: object, tmp_path: Path) -> None:
    attributes, warnings = load_attributes(tmp_path, value)

    assert attributes == {'k0': expected}
    assert type(attributes['k0']) is type(expected)
    assert warnings == ()


def test_json_nan(tmp_path: Path) -> None:
    attributes, _ = load_attributes(tmp_path, {'doubleValue': 'NaN'})

    assert math.isnan(attributes['k0'])


def test_unknown_empty_and_invalid_values_are_skipped_with_a_warning(tmp_path: Path) -> None:
    attributes, warnings = load_attributes(
        tmp_path,
        {'stringValue': 'kept'},
        {'fancyValue': 1},
        {},
        {'intValue': 'twelve'},
        {'arrayValue': {'values': [{'stringValue': 'a'}, {'mysteryValue': 2}]}},
    )

    assert attributes == {'k0': 'kept'}
    path = tmp_path / 'attributes.jsonl'
    assert warnings == (
        f"{path}:1: span 0000000000000001 ('tool'): attribute 'k1' has an unknown value type 'fancyValue'; skipped",
        f"{path}:1: span 0000000000000001 ('tool'): attribute 'k2' has no value; skipped",
        f"{path}:1: span 0000000000000001 ('tool'): attribute 'k3' has an invalid intValue ('twelve' is not an integer); skipped",
        f"{path}:1: span 0000000000000001 ('tool'): attribute 'k4' has an unknown value type 'mysteryValue'; skipped",
    )


PROTO_VALUES: list[tuple[str, AnyValue, object]] = [
    ('string', AnyValue(string_value='x'), 'x'),
    ('bool', AnyValue(bool_value=True), True),
    ('int', AnyValue(int_value=-(2**63)), -(2**63)),
    ('double', AnyValue(double_value=0.25), 0.25),
    ('bytes become base64 text', AnyValue(bytes_value=b'\x00\x01\x02\xff'), 'AAEC/w=='),
    ('int array', AnyValue(array_value=ArrayValue(values=[AnyValue(int_value=1), AnyValue(int_value=2)])), (1, 2)),
    (
        'mixed array becomes JSON',
        AnyValue(array_value=ArrayValue(values=[AnyValue(int_value=1), AnyValue(bool_value=False)])),
        '[1,false]',
    ),
    (
        'kvlist becomes JSON',
        AnyValue(
            kvlist_value=KeyValueList(
                values=[
                    KeyValue(key='a', value=AnyValue(double_value=1.5)),
                    KeyValue(key='b', value=AnyValue(array_value=ArrayValue(values=[AnyValue(string_value='x')]))),
                ]
            )
        ),
        '{"a":1.5,"b":["x"]}',
    ),
]


def proto_request(*attributes: KeyValue, status: int = 0, events: list[Span.Event] | None = None) -> bytes:
    encoded = Span(
        trace_id=bytes.fromhex(TRACE_A),
        span_id=(1).to_bytes(8, 'big'),
        name='tool',
        start_time_unix_nano=T0,
        end_time_unix_nano=T0 + 1000,
        attributes=list(attributes),
        events=events or [],
        status=Status(code=status),  # type: ignore[arg-type]
    )
    return bytes(
        ExportTraceServiceRequest(
            resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[encoded])])]
        ).SerializeToString()
    )


@pytest.mark.parametrize(('value', 'expected'), [case[1:] for case in PROTO_VALUES], ids=[c[0] for c in PROTO_VALUES])
def test_protobuf_value(value: AnyValue, expected: object, tmp_path: Path) -> None:
    path = tmp_path / 'trace.pb'
    path.write_bytes(proto_request(KeyValue(key='k', value=value)))

    [trace] = read_traces(path)

    [node] = trace.tree
    assert node.attributes == {'k': expected}
    assert trace.warnings == ()


def test_protobuf_empty_value_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / 'trace.pb'
    path.write_bytes(
        proto_request(KeyValue(key='k', value=AnyValue()), KeyValue(key='ok', value=AnyValue(int_value=1)))
    )

    [trace] = read_traces(path)

    [node] = trace.tree
    assert node.attributes == {'ok': 1}
    assert trace.warnings == (f"{path}: span 0000000000000001 ('tool'): attribute 'k' has no value; skipped",)


STATUSES: list[tuple[object, str]] = [
    (2, 'error'),
    (1, 'ok'),
    (0, 'unset'),
    ('STATUS_CODE_ERROR', 'error'),
    ('STATUS_CODE_OK', 'ok'),
    ('STATUS_CODE_UNSET', 'unset'),
    (None, 'unset'),
]


@pytest.mark.parametrize(('code', 'expected'), STATUSES)
def test_status(code: object, expected: str, tmp_path: Path) -> None:
    status = {} if code is None else {'code': code, 'message': 'why'}
    path = write_lines(tmp_path / 'status.jsonl', request(span('1', status=status)))

    [trace] = read_traces(path)

    assert [node.status for node in trace.tree] == [expected]


@pytest.mark.parametrize(('code', 'expected'), [(2, 'error'), (1, 'ok'), (0, 'unset')])
def test_protobuf_status(code: int, expected: str, tmp_path: Path) -> None:
    path = tmp_path / 'trace.pb'
    path.write_bytes(proto_request(status=code))

    [trace] = read_traces(path)

    assert [node.status for node in trace.tree] == [expected]


def exception_event(exception_type: str, message: str) -> dict[str, Any]:
    return {
        'timeUnixNano': str(T0),
        'name': 'exception',
        'attributes': [
            attribute('exception.type', {'stringValue': exception_type}),
            attribute('exception.message', {'stringValue': message}),
            attribute('exception.stacktrace', {'stringValue': 'Traceback ...'}),
        ],
    }


def test_first_exception_event_is_folded_into_attributes(tmp_path: Path) -> None:
    events = [
        {'timeUnixNano': str(T0), 'name': 'retry', 'attributes': []},
        exception_event('ValueError', 'first'),
        exception_event('KeyError', 'second'),
    ]
    own = [attribute('exception.type', {'stringValue': 'MyOwnType'})]
    path = write_lines(
        tmp_path / 'events.jsonl',
        request(span('1', 'a', events=events), span('2', 'b', events=events, attributes=own), span('3', 'c')),
    )

    [trace] = read_traces(path)

    assert [node.attributes for node in trace.tree] == [
        {'exception.type': 'ValueError', 'exception.message': 'first'},
        {'exception.type': 'MyOwnType', 'exception.message': 'first'},  # the span's own value wins
        {},
    ]


def test_protobuf_exception_event(tmp_path: Path) -> None:
    event = Span.Event(
        name='exception',
        attributes=[
            KeyValue(key='exception.type', value=AnyValue(string_value='ValueError')),
            KeyValue(key='exception.message', value=AnyValue(string_value='boom')),
        ],
    )
    path = tmp_path / 'trace.pb'
    path.write_bytes(proto_request(status=2, events=[event]))

    [trace] = read_traces(path)

    [node] = trace.tree
    assert (node.status, node.attributes) == ('error', {'exception.type': 'ValueError', 'exception.message': 'boom'})
