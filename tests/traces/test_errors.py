"""Unusable input raises one `FileError` that names the file, the line (or byte offset) and the problem."""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import pytest

from agentic_evals import FileError, load_traces, read_traces

from . import TRACE_A, request, span, write_lines
from .test_formats import COLLECTOR, collector_requests, to_protobuf


def error_of(*sources: str | Path) -> FileError:
    with pytest.raises(FileError) as raised:
        read_traces(*sources)
    return raised.value


def test_message_forms() -> None:
    assert str(FileError('a.jsonl', 'bad', line=3)) == 'a.jsonl:3: bad'
    assert str(FileError('a.pb', 'bad', offset=10)) == 'a.pb: byte 10: bad'
    assert str(FileError('a.pb', 'bad')) == 'a.pb: bad'
    error = pickle.loads(pickle.dumps(FileError('a.jsonl', 'bad', line=3)))
    assert (error.path, error.line, error.offset, error.message) == (Path('a.jsonl'), 3, None, 'bad')


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / 'nope.jsonl'
    error = error_of(path)
    assert str(error) == f'{path}: no such file'
    assert (error.path, error.line, error.offset, error.message) == (path, None, None, 'no such file')


def test_missing_file_raises_when_called_not_when_iterated(tmp_path: Path) -> None:
    with pytest.raises(FileError):
        load_traces(tmp_path / 'nope.jsonl')


@pytest.mark.parametrize(('content', 'message'), [(b'', 'empty file'), (b'\n  \n\t', 'empty file')])
def test_empty_file(content: bytes, message: str, tmp_path: Path) -> None:
    path = tmp_path / 'empty.jsonl'
    path.write_bytes(content)
    assert str(error_of(path)) == f'{path}: {message}'


def test_empty_gzip(tmp_path: Path) -> None:
    path = tmp_path / 'empty.jsonl.gz'
    path.write_bytes(gzip.compress(b''))
    assert str(error_of(path)) == f'{path}: empty file (nothing inside the gzip data)'


def test_unknown_text_format(tmp_path: Path) -> None:
    path = tmp_path / 'dataset.txt'
    path.write_text('cases:\n  - name: weather\n')
    assert (
        str(error_of(path))
        == f"{path}:1: unknown format: text that is not JSON (it starts with 'cases:\\n  - name: weather\\n')"
    )


def test_unknown_binary_format(tmp_path: Path) -> None:
    path = tmp_path / 'image.png'
    path.write_bytes(b'\x89PNG\r\n\x1a\n' + bytes(100))
    assert str(error_of(path)) == f'{path}: byte 0: unknown format: binary data that is not an OTLP protobuf request'


def test_unknown_json_shape(tmp_path: Path) -> None:
    path = write_lines(tmp_path / 'other.json', {'name': 'x', 'events': []})
    assert str(error_of(path)) == (
        f"{path}:1: unknown format: a JSON object that is not an OTLP request or a Jaeger export (keys: 'events', 'name')"
    )


def test_invalid_json_line(tmp_path: Path) -> None:
    path = write_lines(tmp_path / 'bad.jsonl', request(span('1')), '{"resourceSpans": [}', request(span('2')))
    error = error_of(path)
    assert str(error) == f'{path}:2: invalid JSON: Expecting value (column 20)'
    assert error.line == 2


def test_invalid_first_line_of_json_lines(tmp_path: Path) -> None:
    """A broken first line is still reported by line when the second line shows the file is JSON lines."""
    path = write_lines(tmp_path / 'bad.jsonl', '{"resourceSpans": [', request(span('2')))
    assert str(error_of(path)) == f'{path}:1: invalid JSON: Expecting value (column 20)'


def test_truncated_json_lines(tmp_path: Path) -> None:
    text = COLLECTOR.read_text()
    path = tmp_path / 'cut.jsonl'
    path.write_text(text[: len(text) - 200])
    assert str(error_of(path)) == (
        f'{path}:3: invalid JSON: Unterminated string starting at (column 708) - the data ends here: truncated file?'
    )


def test_truncated_pretty_document(tmp_path: Path) -> None:
    text = json.dumps(request(span('1')), indent=2)
    path = tmp_path / 'cut.json'
    path.write_text(text[:-30])
    assert str(error_of(path)) == (
        f"{path}:32: invalid JSON: Expecting ',' delimiter (column 12) - the data ends here: truncated file?"
    )


def many_lines() -> bytes:
    return b''.join(json.dumps(request(span(f'{index + 1:x}'))).encode() + b'\n' for index in range(300))


def test_truncated_gzip(tmp_path: Path) -> None:
    data = gzip.compress(many_lines())
    path = tmp_path / 'cut.jsonl.gz'
    path.write_bytes(data[: len(data) // 2])
    error = error_of(path)
    assert str(error) == f'{path}: byte {len(data) // 2}: the gzip data ends early (truncated file?)'
    assert error.offset == len(data) // 2


def test_truncated_small_gzip(tmp_path: Path) -> None:
    data = gzip.compress(COLLECTOR.read_bytes())
    path = tmp_path / 'cut.jsonl.gz'
    path.write_bytes(data[:-12])
    assert str(error_of(path)) == f'{path}: byte {len(data) - 12}: the gzip data ends early (truncated file?)'


def test_corrupt_gzip(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(many_lines()))
    data[-8] ^= 0xFF  # the CRC
    path = tmp_path / 'crc.jsonl.gz'
    path.write_bytes(bytes(data))
    error = error_of(path)
    assert str(error) == f'{path}: byte {len(data) - 5}: corrupt gzip data (incorrect data check)'
    assert error.offset == len(data) - 5  # the CRC's last byte, where zlib checks it


def test_truncated_protobuf(tmp_path: Path) -> None:
    data = to_protobuf(collector_requests()[0])
    path = tmp_path / 'cut.pb'
    path.write_bytes(data[:-40])
    assert str(error_of(path)) == (
        f'{path}: byte 0: not a valid OTLP protobuf ExportTraceServiceRequest, or a truncated one '
        f'(field 1 holds {len(data) - 3} bytes where {len(data) - 43} remain in its message (truncated?))'
    )


SPAN_PROBLEMS = [
    ('missing traceId', {'traceId': None}, 'span has no traceId'),
    ('empty traceId', {'traceId': ''}, 'span has no traceId'),
    ('missing spanId', {'spanId': None}, 'span has no spanId'),
    ('non-hex traceId', {'traceId': 'z' * 32}, f"traceId '{'z' * 32}' is not 32 hex digits"),
    ('short traceId', {'traceId': TRACE_A[:16]}, f"traceId '{TRACE_A[:16]}' is not 32 hex digits"),
    (
        'base64 traceId of the wrong length',
        {'traceId': 'CvdlGRbNQ92ESOshHIAx=='},
        "traceId 'CvdlGRbNQ92ESOshHIAx==' is not 32 hex digits",
    ),
    ('non-hex spanId', {'spanId': '0x00000000000001'}, "spanId '0x00000000000001' is not 16 hex digits"),
    ('non-hex parentSpanId', {'parentSpanId': 'parent'}, "parentSpanId 'parent' is not 16 hex digits"),
    ('zero traceId', {'traceId': '0' * 32}, 'traceId is all zeros, which OpenTelemetry reserves for "no trace"'),
    ('missing start', {'startTimeUnixNano': None}, 'span has no startTimeUnixNano'),
    (
        'bad timestamp',
        {'startTimeUnixNano': 'soon'},
        "startTimeUnixNano 'soon' is not a whole number of nanoseconds",
    ),
    ('spans not a list', None, 'spans is a string, not a list'),
]


@pytest.mark.parametrize(('change', 'message'), [case[1:] for case in SPAN_PROBLEMS], ids=[c[0] for c in SPAN_PROBLEMS])
def test_bad_span(change: dict[str, object] | None, message: str, tmp_path: Path) -> None:
    bad = span('2')
    if change is None:
        document = request()
        document['resourceSpans'][0]['scopeSpans'][0]['spans'] = 'oops'
    else:
        for key, value in change.items():
            if value is None:
                del bad[key]
            else:
                bad[key] = value
        document = request(bad)
    path = write_lines(tmp_path / 'bad.jsonl', request(span('1')), document)

    error = error_of(path)

    assert str(error) == f'{path}:2: {message}'


def test_bad_jaeger_span(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / 'bad.json', {'data': [{'spans': [{'traceID': TRACE_A, 'spanID': 'xyz', 'startTime': 1}]}]}
    )
    assert str(error_of(path)) == f"{path}:1: spanID 'xyz' is not up to 16 hex digits"


def test_bad_span_in_a_pretty_document_has_the_line_where_the_span_starts(tmp_path: Path) -> None:
    bad = span('1')
    del bad['spanId']
    path = tmp_path / 'doc.json'
    text = json.dumps(request(span('2'), bad), indent=2)
    path.write_text(text)
    line = text.splitlines().index('            },') + 2  # the second span's opening brace
    assert str(error_of(path)) == f'{path}:{line}: span has no spanId'


def test_empty_directory_and_unmatched_glob(tmp_path: Path) -> None:
    (tmp_path / 'empty').mkdir()
    assert str(error_of(tmp_path / 'empty')) == f'{tmp_path / "empty"}: no trace files in this directory'
    assert str(error_of(f'{tmp_path}/*.jsonl')) == f'{tmp_path}/*.jsonl: no files match this pattern'
