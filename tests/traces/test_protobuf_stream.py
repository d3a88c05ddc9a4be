"""Protobuf files read one `ResourceSpans` at a time: bounded memory, traces as soon as they are complete, located errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentic_evals import FileError, load_traces, read_traces
from agentic_evals.traces import _readers

from . import TRACE_A, TRACE_B, TRACE_C, request, span
from .test_formats import to_protobuf


def entries(*documents: dict[str, object]) -> list[bytes]:
    """Each request's wire bytes: one `resource_spans` field each, concatenated they are one request."""
    return [to_protobuf(document) for document in documents]


def error_of(path: Path) -> FileError:
    with pytest.raises(FileError) as raised:
        read_traces(path)
    return raised.value


def test_a_file_larger_than_the_limit_is_read_when_each_resource_spans_is_within_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = entries(*(request(span(f'{n + 1:x}', f'n{n}', start_us=n)) for n in range(40)))
    monkeypatch.setattr(_readers, 'MAX_DOCUMENT', 2 * max(len(part) for part in parts))
    path = tmp_path / 't.pb'
    path.write_bytes(b''.join(parts))
    assert path.stat().st_size > _readers.MAX_DOCUMENT

    [trace] = read_traces(path)

    assert [node.name for node in trace.tree] == [f'n{n}' for n in range(40)]


def test_one_resource_spans_over_the_limit_is_refused_at_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, big = entries(request(span('1')), request(*[span(f'{n + 2:x}') for n in range(40)]))
    monkeypatch.setattr(_readers, 'MAX_DOCUMENT', len(small) + 10)
    path = tmp_path / 't.pb'
    path.write_bytes(small + big)

    error = error_of(path)

    assert error.offset == len(small) + len(small) + 10
    assert error.message == (
        f'larger than {_readers._mib(len(small) + 10)} (the limit for one ResourceSpans of a protobuf file)'
    )


def test_traces_are_yielded_as_soon_as_their_last_resource_spans_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B is complete after the second `ResourceSpans` and comes out before the third is parsed."""
    path = tmp_path / 'stream.pb'
    path.write_bytes(
        b''.join(
            entries(
                request(span('1', 'a-root')),
                request(span('1', 'b-root', trace_id=TRACE_B)),
                request(span('2', 'a-child', parent='1', start_us=2)),
                request(span('1', 'c-root', trace_id=TRACE_C)),
            )
        )
    )
    parsed: list[int] = []
    original = _readers.parse_proto

    def counting(data: bytes) -> ExportTraceServiceRequest:
        parsed.append(1)
        return original(data)

    traces = load_traces(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_readers, 'parse_proto', counting)
        first = next(traces)
        assert (first.trace_id, len(parsed)) == (TRACE_B, 4 + 2)  # the first pass parses all four
        second = next(traces)
        assert (second.trace_id, [node.name for node in second.tree], len(parsed)) == (
            TRACE_A,
            ['a-root', 'a-child'],
            4 + 3,
        )
        assert [trace.trace_id for trace in traces] == [TRACE_C]


def test_a_problem_in_a_later_resource_spans_is_at_its_offset(tmp_path: Path) -> None:
    first, second = entries(request(span('1')), request(span('2', 'abcdef')))
    path = tmp_path / 't.pb.gz'
    data = first + second.replace(b'abcdef', b'abc\xffef')
    path.write_bytes(gzip.compress(data))

    error = error_of(path)

    assert error.offset == data.index(b'\xff')
    assert error.message.endswith('(Span.name is not UTF-8 text) (in the decompressed data)')


def test_a_truncated_later_resource_spans_is_at_its_tag(tmp_path: Path) -> None:
    first, second = entries(request(span('1')), request(span('2')))
    path = tmp_path / 't.pb'
    path.write_bytes(first + second[:-5])

    error = error_of(path)

    assert error.offset == len(first)
    assert error.message == (
        'not a valid OTLP protobuf ExportTraceServiceRequest, or a truncated one '
        f'(field 1 holds {len(second) - 2} bytes where {len(second) - 7} remain in its message (truncated?))'
    )


def test_unknown_fields_between_resource_spans_are_skipped_and_named(tmp_path: Path) -> None:
    first, second = entries(request(span('1', trace_id=TRACE_A)), request(span('1', trace_id=TRACE_B)))
    path = tmp_path / 't.pb'
    # field 2 length-delimited (3 bytes), field 3 varint, field 4 fixed64
    path.write_bytes(first + b'\x12\x03abc' + b'\x18\x96\x01' + b'\x21' + bytes(8) + second)
    notes: list[str] = []

    traces = read_traces(path, on_warning=notes.append)

    assert [trace.trace_id for trace in traces] == [TRACE_A, TRACE_B]
    assert notes == [f'{path}: an unknown protobuf field 2 of the ExportTraceServiceRequest (3 bytes) was not read']


def test_a_trace_spread_over_resource_spans_is_one_tree_with_no_duplicate(tmp_path: Path) -> None:
    path = tmp_path / 't.pb'
    path.write_bytes(
        b''.join(
            entries(request(span('1', 'root')), request(span('2', 'child', parent='1')), request(span('1', 'again')))
        )
    )

    [trace] = read_traces(path)

    assert [node.name for node in trace.tree] == ['root', 'child']
    assert trace.warnings == (f"{path}: duplicate span id 0000000000000001 ('again'); kept the first one, from {path}",)
