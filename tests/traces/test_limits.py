"""Time proportional to the input, memory bounded by the size limits: cycles, long chains, many roots, bombs."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

from agentic_evals import FileError, read_traces
from agentic_evals.traces import _readers

from . import jaeger, jaeger_span, request, span, write_document, write_lines
from .test_formats import to_protobuf


def load_error(*sources: str | Path) -> FileError:
    with pytest.raises(FileError) as raised:
        read_traces(*sources)
    return raised.value


def walks_up(trace_tree: object) -> None:
    """Every span's ancestors, as an evaluator walks them: must end."""
    for node in trace_tree:  # type: ignore[attr-defined]
        seen = 0
        current = node.parent
        while current is not None:
            seen += 1
            assert seen < 100_000
            current = current.parent


CYCLES = {
    'own parent': [span('1', 'loop', parent='1')],
    'two spans': [span('1', 'a', parent='2'), span('2', 'b', parent='1', start_us=1)],
    'three and a tail': [
        span('1', 'a', parent='3', start_us=2),
        span('2', 'b', parent='1', start_us=3),
        span('3', 'c', parent='2', start_us=4),
        span('4', 'tail', parent='3', start_us=5),
    ],
}


@pytest.mark.parametrize('suffix', ['jsonl', 'json', 'pb'])
@pytest.mark.parametrize('name', list(CYCLES))
def test_a_parent_cycle_is_broken_at_its_earliest_span_with_a_warning(suffix: str, name: str, tmp_path: Path) -> None:
    spans = CYCLES[name]
    path = tmp_path / f't.{suffix}'
    if suffix == 'pb':
        path.write_bytes(to_protobuf(request(*spans)))
    elif suffix == 'json':
        write_document(path, request(*spans))
    else:
        write_lines(path, request(*spans))

    [trace] = read_traces(path)

    assert len(trace.tree.nodes_by_id) == len(spans)
    walks_up(trace.tree)
    earliest = min(spans, key=lambda encoded: int(encoded['startTimeUnixNano']))
    assert [f'{root.span_id:016x}' for root in trace.tree.roots] == [earliest['spanId']]
    [warning] = trace.warnings
    if name == 'own parent':
        assert warning.endswith("span 0000000000000001 ('loop') is its own parent; it became a root")
    else:
        size = 2 if name == 'two spans' else 3
        assert f'is in a parent cycle of {size} spans' in warning and warning.endswith('it became a root')


def test_a_jaeger_cycle_is_broken_too(tmp_path: Path) -> None:
    first = jaeger_span(
        '1',
        'a',
        references=[
            {'refType': 'CHILD_OF', 'traceID': '0af7651916cd43dd8448eb211c80319c', 'spanID': '0000000000000002'}
        ],
    )
    second = jaeger_span('2', 'b', parentSpanID='0000000000000001')
    path = write_document(tmp_path / 'j.json', jaeger(first, second))

    [trace] = read_traces(path)

    walks_up(trace.tree)
    assert len(trace.tree.roots) == 1


def test_a_long_chain_and_many_roots_load_in_linear_time(tmp_path: Path) -> None:
    def spans(count: int, chain: bool) -> list[dict[str, object]]:
        return [
            span(f'{number:x}', parent=f'{number - 1:x}' if chain and number > 1 else '', start_us=number)
            for number in range(1, count + 1)
        ]

    timings = {}
    for count in (2_000, 8_000):
        for chain in (True, False):
            path = write_lines(tmp_path / f'{count}-{chain}.jsonl', request(*spans(count, chain)))
            started = time.process_time()
            [trace] = read_traces(path)
            timings[count, chain] = time.process_time() - started
            assert len(trace.tree.nodes_by_id) == count
    for chain in (True, False):
        assert timings[8_000, chain] < 10 * timings[2_000, chain] + 0.5  # 4x the spans: not 16x the time


def test_equal_start_times_without_a_cycle_lose_nothing(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / 't.jsonl',
        request(span('1', 'root'), span('2', 'child', parent='1'), span('3', 'grandchild', parent='2')),
    )

    [trace] = read_traces(path)

    assert [root.name for root in trace.tree.roots] == ['root']
    assert trace.warnings == ()


def gzip_bomb(total: int, chunk: bytes) -> bytes:
    """A gzip file whose members decompress to `total` bytes of `chunk` (no newline: one line)."""
    member = gzip.compress(chunk, compresslevel=9)
    return member * (total // len(chunk))


def test_a_small_gzip_holding_one_huge_line_is_refused_quickly_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / 'bomb.jsonl.gz'
    data = gzip_bomb(2**30, b'{"resourceSpans": [' + b' ' * (2**20 - 19))
    path.write_bytes(data)
    assert len(data) < 2 * 2**20

    tracemalloc.start()
    started = time.perf_counter()
    try:
        error = load_error(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert time.perf_counter() - started < 20
    assert (error.line, error.message) == (1, 'line longer than 64 MiB (the limit for one line)')
    assert peak < 4 * _readers.MAX_LINE  # the limit, a copy and buffers: not the gigabyte


def test_a_small_gzip_holding_a_huge_document_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_readers, 'MAX_DOCUMENT', 2**20)
    path = tmp_path / 'bomb.json.gz'
    path.write_bytes(gzip.compress(b'{\n  "resourceSpans": [\n' + b' \n' * 2**20 + b']}\n'))

    error = load_error(path)

    assert (error.offset, error.message) == (
        2**20,
        'larger than 1 MiB (decompressed, the limit for a file read whole: a JSON document or protobuf)',
    )


def test_a_long_line_is_refused_with_its_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_readers, 'MAX_LINE', 5000)
    path = write_lines(tmp_path / 't.jsonl', request(span('1')), request(*[span(f'{n + 2:x}') for n in range(40)]))

    error = load_error(path)

    assert str(error) == f'{path}:2: line longer than 0.00476837 MiB (the limit for one line)'


def test_a_large_protobuf_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_readers, 'MAX_DOCUMENT', 1000)
    path = tmp_path / 't.pb'
    path.write_bytes(to_protobuf(request(*[span(f'{n + 1:x}') for n in range(40)])))

    error = load_error(path)

    assert error.offset == 1000 and error.message.startswith('larger than ')


def test_only_blank_space_in_a_gzip_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr('agentic_evals.traces._detect.MAX_DOCUMENT', 2**20)
    path = tmp_path / 'blank.jsonl.gz'
    path.write_bytes(gzip_bomb(2**24, b' ' * 2**16))

    error = load_error(path)

    assert error.message == 'nothing but blank space in the first 1 MiB'


def test_deflate_that_expands_a_thousandfold_is_read_a_buffer_at_a_time(tmp_path: Path) -> None:
    """A line under the limit, highly compressed: decompression never holds more than a buffer at once."""
    line = json.dumps(request(span('1', 'x' * (8 * 2**20)))).encode() + b'\n'
    path = tmp_path / 't.jsonl.gz'
    path.write_bytes(zlib.compress(line, 9)[:0] + gzip.compress(line, 9))

    [trace] = read_traces(path)

    assert [len(node.name) for node in trace.tree] == [8 * 2**20]
