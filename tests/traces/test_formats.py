"""Every supported format (and its gzipped variant) is detected from content and decoded the same way."""

from __future__ import annotations

import base64
import copy
import gzip
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentic_evals import LoadedTrace, read_traces

from . import TRACE_A, TRACE_B, request, shape, span, write_lines

DATA = Path(__file__).parent / 'data'
COLLECTOR = DATA / 'collector.jsonl'
UTC = timezone.utc


def to_protobuf(document: dict[str, Any]) -> bytes:
    """The binary form of an OTLP JSON request: the JSON mapping spells ids in hex, protobuf's in base64."""
    document = copy.deepcopy(document)
    for resource_spans in document['resourceSpans']:
        for scope_spans in resource_spans['scopeSpans']:
            for encoded in scope_spans['spans']:
                for key in ('traceId', 'spanId', 'parentSpanId'):
                    encoded[key] = base64.b64encode(bytes.fromhex(encoded.get(key, ''))).decode()
    return bytes(json_format.ParseDict(document, ExportTraceServiceRequest()).SerializeToString())


def collector_requests() -> list[dict[str, Any]]:
    return [json.loads(line) for line in COLLECTOR.read_text().splitlines()]


def details(trace: LoadedTrace) -> list[tuple[Any, ...]]:
    return [
        (
            node.name,
            node.span_id,
            node.parent_span_id,
            node.start_timestamp,
            node.end_timestamp,
            node.attributes,
            node.status,
        )
        for node in trace.tree
    ]


def test_collector_file_exporter_lines() -> None:
    helper, main = read_traces(COLLECTOR)  # the helper trace ends on line 2, before main's last line 3

    assert (helper.trace_id, main.trace_id) == (TRACE_B, TRACE_A)
    assert main.name == 'collector'
    assert main.sources == (COLLECTOR,)
    assert main.warnings == ()
    assert shape(main.tree) == [
        ('invoke_agent main', 'b7ad6b7169203331', None, 'unset'),
        ('chat model-x', 'c0ffee0000000001', 'b7ad6b7169203331', 'ok'),
        ('execute_tool get_weather', '00f067aa0ba902b7', 'b7ad6b7169203331', 'error'),
    ]
    root, chat, tool = main.tree
    assert root.start_timestamp == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert tool.duration == timedelta(microseconds=1250)
    assert chat.attributes == {'gen_ai.request.model': 'model-x', 'gen_ai.usage.input_tokens': 120}
    # The exception event is folded into the span's attributes: SpanNode has no events.
    assert tool.attributes == {
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.arguments': '{"city":"Paris"}',
        'exception.type': 'ModelRetry',
        'exception.message': 'city not found',
    }


def test_pretty_document_with_legacy_keys_and_enum_names() -> None:
    """Pre-1.0 `instrumentationLibrarySpans`, enum names and numeric int64s read like the current form."""
    legacy = read_traces(DATA / 'legacy_pretty.json')
    current = read_traces(COLLECTOR)

    assert [trace.trace_id for trace in legacy] == [TRACE_A, TRACE_B]  # a document: first-seen order
    by_id = {trace.trace_id: details(trace) for trace in current}
    assert [details(trace) for trace in legacy] == [by_id[TRACE_A], by_id[TRACE_B]]


def test_protobuf_decodes_like_json(tmp_path: Path) -> None:
    path = tmp_path / 'export.bin'
    path.write_bytes(b''.join(to_protobuf(document) for document in collector_requests()))

    from_protobuf = {trace.trace_id: details(trace) for trace in read_traces(path)}

    assert from_protobuf == {trace.trace_id: details(trace) for trace in read_traces(COLLECTOR)}


def test_jaeger_ui_export() -> None:
    [trace] = read_traces(DATA / 'jaeger_ui.json')

    assert trace.trace_id == TRACE_A
    assert shape(trace.tree) == [
        ('invoke_agent main', 'b7ad6b7169203331', None, 'unset'),
        ('chat model-x', 'c0ffee0000000001', 'b7ad6b7169203331', 'ok'),
        ('execute_tool get_weather', '00f067aa0ba902b7', 'b7ad6b7169203331', 'error'),
    ]
    root, chat, tool = trace.tree
    # Tags that only spell OTel span fields in Jaeger (scope, kind, status) are not attributes.
    assert root.attributes == {'gen_ai.agent.name': 'main', 'gen_ai.operation.name': 'invoke_agent'}
    assert chat.attributes == {'gen_ai.request.model': 'model-x', 'gen_ai.usage.input_tokens': 120}
    assert tool.attributes == {
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.arguments': '{"city":"Paris"}',
        'attempt': 2,
        'score': 0.25,
        'cached': False,
        'payload': 'AAEC',
        'exception.type': 'ModelRetry',
        'exception.message': 'city not found',
    }
    assert tool.start_timestamp == datetime(2023, 11, 14, 22, 13, 20, 500000, tzinfo=UTC)
    assert tool.duration == timedelta(microseconds=1250)


def test_jaeger_and_otlp_agree_on_the_same_trace() -> None:
    [jaeger] = read_traces(DATA / 'jaeger_ui.json')
    [otlp] = [trace for trace in read_traces(COLLECTOR) if trace.trace_id == TRACE_A]

    assert shape(jaeger.tree) == shape(otlp.tree)
    assert [(node.start_timestamp, node.end_timestamp) for node in jaeger.tree] == [
        (node.start_timestamp, node.end_timestamp) for node in otlp.tree
    ]


def test_jaeger_variants(tmp_path: Path) -> None:
    """64-bit trace ids, a bare trace object, a list of them, `parentSpanID`, and one document per line."""
    trace = {
        'traceID': 'b7ad6b7169203331',
        'spans': [
            {'traceID': 'b7ad6b7169203331', 'spanID': '1', 'operationName': 'root', 'startTime': 5, 'duration': 3},
            {'spanID': '2', 'parentSpanID': '1', 'operationName': 'child', 'startTime': 6, 'duration': 1},
        ],
    }
    bare = write_lines(tmp_path / 'bare.json', trace)
    listed = write_lines(tmp_path / 'listed.json', json.dumps([trace], indent=1))
    lines = write_lines(tmp_path / 'lines.jsonl', {'data': [trace]}, {'data': []})

    for path in (bare, listed, lines):
        [loaded] = read_traces(path)
        assert loaded.trace_id == '0000000000000000b7ad6b7169203331'
        assert shape(loaded.tree) == [
            ('root', '0000000000000001', None, 'unset'),
            ('child', '0000000000000002', '0000000000000001', 'unset'),
        ]


@pytest.mark.parametrize('source', ['collector.jsonl', 'legacy_pretty.json', 'jaeger_ui.json', 'protobuf'])
def test_gzip_and_misleading_names(source: str, tmp_path: Path) -> None:
    """Content decides the format: a gzipped file named `.txt` and a plain one named `.gz` both load."""
    if source == 'protobuf':
        data = b''.join(to_protobuf(document) for document in collector_requests())
        expected = {trace.trace_id: details(trace) for trace in read_traces(COLLECTOR)}
    else:
        data = (DATA / source).read_bytes()
        expected = {trace.trace_id: details(trace) for trace in read_traces(DATA / source)}
    zipped = tmp_path / 'zipped.txt'
    zipped.write_bytes(gzip.compress(data))
    plain = tmp_path / 'plain.json.gz'
    plain.write_bytes(data)

    for path in (zipped, plain):
        assert {trace.trace_id: details(trace) for trace in read_traces(path)} == expected


def test_multi_member_gzip(tmp_path: Path) -> None:
    """Appending to a `.gz` file adds a gzip member; all members are read."""
    path = tmp_path / 'trace.jsonl.gz'
    path.write_bytes(
        gzip.compress(json.dumps(request(span('1'))).encode() + b'\n')
        + gzip.compress(json.dumps(request(span('2', parent='1'))).encode() + b'\n')
    )

    [trace] = read_traces(path)

    assert trace.name == 'trace'
    assert [node.name for node in trace.tree] == ['span', 'span']


def test_numbers_for_int64_and_blank_lines(tmp_path: Path) -> None:
    spans = span('1', startTimeUnixNano=1_700_000_000_000_001_000, endTimeUnixNano=1_700_000_000_000_002_000)
    path = write_lines(tmp_path / 't.jsonl', '', request(spans), '   ', '{}')

    [trace] = read_traces(path)

    [node] = trace.tree
    assert node.start_timestamp == datetime(2023, 11, 14, 22, 13, 20, 1, tzinfo=UTC)
    assert node.duration == timedelta(microseconds=1)


def test_utf8_bom_and_unicode(tmp_path: Path) -> None:
    path = tmp_path / 't.json'
    path.write_bytes(b'\xef\xbb\xbf' + json.dumps(request(span('1', 'caf\u00e9 \u2615'))).encode())

    [trace] = read_traces(path)

    assert [node.name for node in trace.tree] == ['caf\u00e9 \u2615']


def test_document_whose_second_line_is_a_whole_value(tmp_path: Path) -> None:
    """A Jaeger export with its one trace on the second line is a document, not JSON lines."""
    trace = json.loads((DATA / 'jaeger_ui.json').read_text())['data'][0]
    path = tmp_path / 'export.json'
    path.write_text('{"data": [\n' + json.dumps(trace) + '\n]}\n')

    [loaded] = read_traces(path)

    assert loaded.trace_id == TRACE_A


def test_a_trace_split_over_a_protobuf_and_a_json_lines_file(tmp_path: Path) -> None:
    first, second, third = collector_requests()
    binary = tmp_path / 'part1.pb'
    binary.write_bytes(to_protobuf(first))
    lines = write_lines(tmp_path / 'part2.jsonl', second, third)

    traces = read_traces(binary, lines)

    by_id = {trace.trace_id: trace for trace in traces}
    assert by_id[TRACE_A].sources == (binary, lines)
    assert details(by_id[TRACE_A]) == next(
        details(trace) for trace in read_traces(COLLECTOR) if trace.trace_id == TRACE_A
    )


TEMPO = DATA / 'tempo.json'


@pytest.mark.parametrize('suffix', ['json', 'json.gz', 'jsonl'])
def test_grafana_tempo_trace_export(suffix: str, tmp_path: Path) -> None:
    """Tempo's `/api/traces/<id>`: `batches` of resource spans, base64 ids, enum names, both scope keys."""
    path = tmp_path / f'tempo.{suffix}'
    document = json.loads(TEMPO.read_text())
    text = json.dumps(document, indent=None if suffix == 'jsonl' else 2) + '\n'
    path.write_bytes(gzip.compress(text.encode()) if suffix.endswith('.gz') else text.encode())

    [trace] = read_traces(path)

    assert trace.trace_id == TRACE_A
    assert trace.warnings == ()
    assert shape(trace.tree) == [
        ('invoke_agent support', 'b7ad6b7169203331', None, 'unset'),
        ('chat model-x', 'c0ffee0000000001', 'b7ad6b7169203331', 'ok'),
        ('execute_tool lookup_order', '00f067aa0ba902b7', 'b7ad6b7169203331', 'error'),
    ]
    tool = trace.tree.roots[0].children[1]
    assert tool.attributes['exception.message'] == 'order not found'
