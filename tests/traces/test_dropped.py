"""Nothing is dropped without a word: every span of the input is loaded, or a warning says why not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentic_evals import read_traces

from . import TRACE_B, jaeger, jaeger_span, request, span, write_document, write_lines
from .test_formats import to_protobuf


def both_scope_keys() -> dict[str, Any]:
    document = request(span('1', 'new'), span('2', 'newer', parent='1', start_us=1))
    resource = document['resourceSpans'][0]
    resource['instrumentationLibrarySpans'] = [
        {'instrumentationLibrary': {'name': 'old'}, 'spans': [span('3', 'legacy', parent='1', start_us=2)]}
    ]
    return document


@pytest.mark.parametrize('suffix', ['jsonl', 'json', 'jsonl.gz'])
def test_spans_under_both_scope_keys_of_one_resource_are_read(suffix: str, tmp_path: Path) -> None:
    path = tmp_path / f't.{suffix}'
    write_lines(path, both_scope_keys()) if 'jsonl' in suffix else write_document(path, both_scope_keys())

    [trace] = read_traces(path)

    assert sorted(node.name for node in trace.tree) == ['legacy', 'new', 'newer']
    assert trace.warnings == ()


def legacy_protobuf() -> bytes:
    """A request whose resource holds spans under field 1000, `instrumentation_library_spans` before OTLP 1.0."""
    modern = ExportTraceServiceRequest()
    modern.ParseFromString(to_protobuf(request(span('1', 'new'), span('3', 'legacy', parent='1', start_us=1))))
    scope = modern.resource_spans[0].scope_spans[0]
    legacy_scope = type(scope)()
    legacy_scope.CopyFrom(scope)
    del scope.spans[1]
    del legacy_scope.spans[0]
    legacy_bytes = legacy_scope.SerializeToString()
    field_1000 = bytes([0xC2, 0x3E]) + _varint(len(legacy_bytes)) + legacy_bytes  # tag (1000 << 3) | 2
    resource_bytes = modern.resource_spans[0].SerializeToString() + field_1000
    return bytes(b'\x0a' + _varint(len(resource_bytes)) + resource_bytes)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def test_protobuf_spans_under_the_legacy_field_are_read(tmp_path: Path) -> None:
    path = tmp_path / 't.pb'
    path.write_bytes(legacy_protobuf())

    [trace] = read_traces(path)

    assert [node.name for node in trace.tree] == ['new', 'legacy']


def test_an_unknown_protobuf_field_that_could_hold_spans_is_named(tmp_path: Path) -> None:
    data = to_protobuf(request(span('1')))
    path = tmp_path / 't.pb'
    path.write_bytes(data + b'\x12\x03abc')  # field 2 of the request: unknown, length-delimited
    notes: list[str] = []

    [trace] = read_traces(path, on_warning=notes.append)

    assert len(trace.tree.nodes_by_id) == 1
    assert notes == [f'{path}: an unknown protobuf field 2 of the ExportTraceServiceRequest (3 bytes) was not read']


@pytest.mark.parametrize('suffix', ['jsonl', 'json'])
def test_spans_under_a_misspelt_key_are_named_in_a_warning_on_their_trace(suffix: str, tmp_path: Path) -> None:
    document = request(span('1', 'read'))
    document['resourceSpans'][0]['scopeSpan'] = [{'spans': [span('2', 'lost'), span('3', 'lost too')]}]
    path = tmp_path / f't.{suffix}'
    write_lines(path, document) if suffix == 'jsonl' else write_document(path, document)

    [trace] = read_traces(path)

    assert [node.name for node in trace.tree] == ['read']
    where = f'{path}:1' if suffix == 'jsonl' else f'{path}'
    assert trace.warnings == (
        f"{where}: 2 span(s) of this trace under the unknown key 'scopeSpan' were not read (a misspelt key?)",
    )


def test_a_trace_all_of_whose_spans_are_under_a_misspelt_key_is_named_to_on_warning(tmp_path: Path) -> None:
    document = request(span('1', 'read'))
    document['resourceSpans'][0]['scopeSpans'][0]['span'] = [span('2', 'lost', trace_id=TRACE_B)]
    path = write_lines(tmp_path / 't.jsonl', document)
    notes: list[str] = []

    [trace] = read_traces(path, on_warning=notes.append)

    assert [node.name for node in trace.tree] == ['read']
    assert notes == [
        f"{path}:1: 1 span(s) of this trace under the unknown key 'span' were not read (a misspelt key?)"
        f' (trace {TRACE_B}, which has no other spans)'
    ]


def test_spans_without_a_usable_trace_id_under_a_misspelt_key_are_named_to_on_warning(tmp_path: Path) -> None:
    document = {'resourceSpans': [], 'resourceSpan': [{'scopeSpans': [{'spans': [span('2', trace_id='x')]}]}]}
    path = write_lines(tmp_path / 't.jsonl', request(span('1')), document)
    notes: list[str] = []

    read_traces(path, on_warning=notes.append)

    assert notes == [f"{path}:2: 1 span(s) under the unknown key 'resourceSpan' were not read (a misspelt key?)"]


def test_jaeger_spans_under_a_misspelt_key_are_named(tmp_path: Path) -> None:
    document = jaeger(jaeger_span('1', 'read'))
    document['data'][0]['span'] = [jaeger_span('2', 'lost')]
    path = write_document(tmp_path / 'j.json', document)

    [trace] = read_traces(path)

    assert trace.warnings == (
        f"{path}: 1 span(s) of this trace under the unknown key 'span' were not read (a misspelt key?)",
    )


def test_links_and_unknown_keys_without_spans_are_not_warned_about(tmp_path: Path) -> None:
    linked = span('2', 'linked', links=[{'traceId': TRACE_B, 'spanId': '0000000000000009'}])
    document = request(span('1'), linked)
    document['resourceSpans'][0]['extra'] = {'note': 'no spans here'}
    path = write_lines(tmp_path / 't.jsonl', document)

    [trace] = read_traces(path)

    assert (len(trace.tree.nodes_by_id), trace.warnings) == (2, ())


def test_duplicate_span_ids_in_jaeger_are_warned_about(tmp_path: Path) -> None:
    path = write_document(tmp_path / 'j.json', jaeger(jaeger_span('1', 'first'), jaeger_span('1', 'again')))

    [trace] = read_traces(path)

    assert [node.name for node in trace.tree] == ['first']
    assert trace.warnings == (f"{path}: duplicate span id 0000000000000001 ('again'); kept the first one, from {path}",)


def test_a_repeated_key_whose_first_value_has_no_spans_is_json_as_usual(tmp_path: Path) -> None:
    line = json.dumps(request(span('1'))).replace('"resourceSpans": [', '"resourceSpans": [], "resourceSpans": [')
    path = tmp_path / 't.jsonl'
    path.write_text(line + '\n')

    [trace] = read_traces(path)

    assert len(trace.tree.nodes_by_id) == 1
