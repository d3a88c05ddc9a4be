"""Every error about a file's content carries its place: a line in JSON, a byte offset in protobuf and gzip."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentic_evals import FileError, read_traces

from . import jaeger, jaeger_span, request, span, write_document, write_lines
from .test_formats import to_protobuf


def error_of(path: Path) -> FileError:
    with pytest.raises(FileError) as raised:
        read_traces(path)
    assert '\n' not in str(raised.value)
    return raised.value


def line_with(text: str, needle: str, occurrence: int = 0) -> int:
    return [number for number, line in enumerate(text.splitlines(), 1) if needle in line][occurrence]


def test_a_repeated_key_that_would_lose_spans_is_an_error_on_its_line(tmp_path: Path) -> None:
    """`json` keeps the last of two `"spans"`; the first one's spans would vanish without a word."""
    text = json.dumps(request(span('1'), span('2')), indent=2)
    text = text.replace('"spans": [', '"spans": [],\n          "spans": [', 1)
    lines_path, document_path = tmp_path / 't.jsonl', tmp_path / 't.json'
    document_path.write_text(text)
    lines_path.write_text(json.dumps(request(span('9'))) + '\n' + ''.join(text.split()) + '\n')
    text_with_spans_first = text.replace('"spans": [],\n', f'"spans": [{json.dumps(span("3"))}],\n', 1)
    (tmp_path / 'first.json').write_text(text_with_spans_first)

    assert read_traces(document_path)  # an empty first value loses nothing: json's rule applies
    error = error_of(tmp_path / 'first.json')

    assert error.message == "the key 'spans' appears twice in one object: the spans under its first value would be lost"
    assert error.line == line_with(text_with_spans_first, '"spans"', 1)


def test_a_repeated_key_in_a_json_line(tmp_path: Path) -> None:
    line = json.dumps(request(span('1'))).replace('"spans": [', f'"spans": [{json.dumps(span("2"))}], "spans": [')
    path = tmp_path / 't.jsonl'
    path.write_text(json.dumps(request(span('9'))) + '\n' + line + '\n')

    assert error_of(path).line == 2


def test_a_document_that_is_no_trace_format_names_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / 'other.json'
    path.write_text('\n\n{\n  "name": "x",\n  "version": "1"\n}\n')

    assert str(error_of(path)) == (
        f"{path}:3: unknown format: a JSON object that is not an OTLP request or a Jaeger export (keys: 'name', 'version')"
    )


def test_a_jaeger_document_error_is_on_the_span_line(tmp_path: Path) -> None:
    document = jaeger(jaeger_span('1'), jaeger_span('2'), jaeger_span('3', spanID='zz'))
    path = write_document(tmp_path / 'j.json', document)

    error = error_of(path)

    assert error.message == "spanID 'zz' is not up to 16 hex digits"
    assert error.line == line_with(path.read_text(), '"spanID": "zz"') - 2  # the span's '{'


def test_a_list_of_documents_error_is_on_the_span_line(tmp_path: Path) -> None:
    bad = span('2', startTimeUnixNano='never')
    path = write_document(tmp_path / 'many.json', [request(span('1')), request(bad)])

    error = error_of(path)

    assert error.message == "startTimeUnixNano 'never' is not a whole number of nanoseconds"
    assert error.line == line_with(path.read_text(), '"spanId": "0000000000000002"') - 2


def test_invalid_utf8_in_json_is_located(tmp_path: Path) -> None:
    line = json.dumps(request(span('1', 'name'))).encode().replace(b'"name"', b'"na\xffme"', 1)
    lines = tmp_path / 't.jsonl'
    lines.write_bytes(json.dumps(request(span('9'))).encode() + b'\n' + line + b'\n')
    document = tmp_path / 't.json'
    document.write_bytes(
        json.dumps(request(span('1', 'name')), indent=2).encode().replace(b'"name": "name"', b'"name": "na\xffme"')
    )

    lines_error, document_error = error_of(lines), error_of(document)

    assert lines_error.line == 2
    assert lines_error.message.startswith('invalid JSON: not UTF-8 text (invalid start byte, byte ')
    assert document_error.line == line_with(document.read_bytes().decode('latin-1'), '"na\xffme"')


def protobuf_request(*spans: dict[str, object]) -> ExportTraceServiceRequest:
    request_ = ExportTraceServiceRequest()
    request_.ParseFromString(to_protobuf(request(*spans)))
    return request_


def test_a_protobuf_span_error_is_at_the_span_offset(tmp_path: Path) -> None:
    message = protobuf_request(span('1'), span('2'), span('3'))
    message.resource_spans[0].scope_spans[0].spans[2].trace_id = b'\x01' * 15
    data = message.SerializeToString()
    path = tmp_path / 't.pb'
    path.write_bytes(data)
    third = message.resource_spans[0].scope_spans[0].spans[2].SerializeToString()

    error = error_of(path)

    assert error.message.startswith('trace_id must be 16 bytes')
    # the span's tag and length come just before its bytes
    assert data[error.offset :].index(third) in (2, 3)


def test_a_protobuf_string_that_is_not_utf8_is_at_its_offset(tmp_path: Path) -> None:
    data = protobuf_request(span('1', 'abcdef')).SerializeToString()
    bad = data.replace(b'abcdef', b'abc\xffef')
    path = tmp_path / 't.pb'
    path.write_bytes(bad)

    error = error_of(path)

    assert error.offset == bad.index(b'\xff')
    assert error.message.endswith('(Span.name is not UTF-8 text)')


def test_a_gzipped_protobuf_error_says_the_offset_is_in_the_decompressed_data(tmp_path: Path) -> None:
    data = protobuf_request(span('1', 'abcdef')).SerializeToString().replace(b'abcdef', b'abc\xffef')
    path = tmp_path / 't.pb.gz'
    path.write_bytes(gzip.compress(data))

    error = error_of(path)

    assert error.offset == data.index(b'\xff')
    assert error.message.endswith('(in the decompressed data)')


def test_corrupt_deflate_data_is_at_the_byte_where_zlib_stops(tmp_path: Path) -> None:
    content = b''.join(json.dumps(request(span(f'{n + 1:x}', f'n{n}'))).encode() + b'\n' for n in range(2000))
    data = bytearray(gzip.compress(content))
    middle = len(data) // 2
    data[middle : middle + 40] = bytes(40)  # a run of zeros inside the compressed stream
    path = tmp_path / 't.jsonl.gz'
    path.write_bytes(bytes(data))

    decompressor = zlib.decompressobj(31)
    stops = next(
        position for position in range(len(data)) if _fails(decompressor, bytes(data[position : position + 1]))
    )

    error = error_of(path)

    assert error.offset == stops
    assert error.message.startswith('corrupt gzip data (')


def _fails(decompressor: zlib._Decompress, byte: bytes) -> bool:
    try:
        decompressor.decompress(byte)
    except zlib.error:
        return True
    return False


def test_trailing_garbage_after_gzip_data_is_at_its_offset(tmp_path: Path) -> None:
    data = gzip.compress(json.dumps(request(span('1'))).encode() + b'\n')
    path = tmp_path / 't.jsonl.gz'
    path.write_bytes(data + b'\x00\x00garbage')

    error = error_of(path)

    assert (error.offset, error.message) == (len(data) + 2, 'trailing data after the gzip data that is not gzip')


def test_zero_padding_after_gzip_data_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl.gz'
    path.write_bytes(gzip.compress(json.dumps(request(span('1'))).encode() + b'\n') + bytes(100))

    assert len(read_traces(path)) == 1


def test_a_corrupt_gzip_header_is_at_offset_zero_or_close(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(b'{}\n'))
    data[2] = 99  # compression method: not deflate
    path = tmp_path / 't.jsonl.gz'
    path.write_bytes(bytes(data))

    error = error_of(path)

    assert error.offset is not None and error.offset < 10
    assert 'gzip' in error.message


def test_raw_deflate_without_gzip_is_an_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl'
    path.write_bytes(zlib.compress(b'{}\n' * 100))

    error = error_of(path)

    assert (error.offset, error.message) == (0, 'unknown format: binary data that is not an OTLP protobuf request')


BAD_LINES = [
    '{"resourceSpans": 5}',
    '{"data": [{"spans": [{"spanID": "1"}]}]}',
    '[1, 2]',
    '"text"',
    '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "x"}]}]}]}',
]


@pytest.mark.parametrize('bad', BAD_LINES)
@pytest.mark.parametrize('suffix', ['jsonl', 'jsonl.gz', 'json', 'json.gz'])
def test_every_content_error_has_a_line(bad: str, suffix: str, tmp_path: Path) -> None:
    path = tmp_path / f't.{suffix}'
    if 'jsonl' in suffix:
        write_lines(path, request(span('1')), bad)
    else:
        write_document(path, json.loads(bad))

    error = error_of(path)

    assert error.line is not None
    assert str(error).startswith(f'{path}:{error.line}: ')


def test_a_tempo_document_error_is_on_the_span_line(tmp_path: Path) -> None:
    document = {'batches': request(span('1'), span('2', spanId='nope'))['resourceSpans']}
    path = write_document(tmp_path / 'tempo.json', document)

    error = error_of(path)

    assert error.message == "spanId 'nope' is not 16 hex digits"
    assert error.line == line_with(path.read_text(), '"spanId": "nope"') - 2  # the span's '{'


TRICKY_STRINGS = [
    'a "quoted" [bracket] {brace}',
    'ends in a backslash \\',
    '\\"',
    '\\\\"]',
    '',
    'line\nbreak',
    '"spans": ',
]


def test_document_locations_ignore_brackets_quotes_and_escapes_inside_strings(tmp_path: Path) -> None:
    tricky = span('1', 'x', attributes=[{'key': text, 'value': {'stringValue': text}} for text in TRICKY_STRINGS])
    text = json.dumps(request(tricky, span('2')), indent=2)
    deep = text.replace('"attributes": []', '"attributes": ' + '[' * 3000 + ']' * 3000)
    repeated = text.replace('"spans": [', f'"spans": [{json.dumps(span("3"))}],\n"spans": [', 1)
    (tmp_path / 'deep.json').write_text(deep)
    (tmp_path / 'repeated.json').write_text(repeated)

    assert error_of(tmp_path / 'deep.json').line == line_with(deep, '[[[[')
    assert error_of(tmp_path / 'repeated.json').line == line_with(repeated, '"spans": [', 1)
