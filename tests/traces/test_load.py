"""Sources, merging spans into traces, recoverable problems as warnings, and streaming order."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from pydantic_evals.otel.span_tree import SpanTree

from agentic_evals import FileError, LoadedTrace, load_traces, read_traces
from agentic_evals.traces import _readers

from . import TRACE_A, TRACE_B, TRACE_C, request, shape, span, write_lines


def test_spans_spread_over_lines_and_files_make_one_tree(tmp_path: Path) -> None:
    first = write_lines(
        tmp_path / 'a.jsonl', request(span('1', 'root')), request(span('3', 'grandchild', parent='2', start_us=2))
    )
    second = write_lines(tmp_path / 'b.jsonl', request(span('2', 'child', parent='1', start_us=1, end_us=5)))

    [trace] = read_traces(first, second)

    assert trace.sources == (first, second)
    assert trace.warnings == ()
    assert trace.name == 'a'
    assert shape(trace.tree) == [
        ('root', '0000000000000001', None, 'unset'),
        ('child', '0000000000000002', '0000000000000001', 'unset'),
        ('grandchild', '0000000000000003', '0000000000000002', 'unset'),
    ]
    [root] = trace.tree.roots
    assert [child.name for child in root.children] == ['child']


def test_one_request_may_hold_many_traces(tmp_path: Path) -> None:
    path = write_lines(tmp_path / 't.jsonl', request(span('1', 'a'), span('1', 'b', trace_id=TRACE_B)))

    traces = read_traces(path)

    assert [(trace.trace_id, [node.name for node in trace.tree]) for trace in traces] == [
        (TRACE_A, ['a']),
        (TRACE_B, ['b']),
    ]


def test_trace_ids_in_any_case_are_one_trace(tmp_path: Path) -> None:
    path = write_lines(tmp_path / 't.jsonl', request(span('1')), request(span('2', trace_id=TRACE_A.upper())))

    [trace] = read_traces(path)

    assert trace.trace_id == TRACE_A
    assert len(list(trace.tree)) == 2


def test_duplicate_span_id_keeps_the_first(tmp_path: Path) -> None:
    first = write_lines(tmp_path / 'a.jsonl', request(span('1', 'original')), request(span('1', 'again')))
    second = write_lines(tmp_path / 'b.jsonl', request(span('1', 'elsewhere')))

    [trace] = read_traces(first, second)

    assert [node.name for node in trace.tree] == ['original']
    assert trace.warnings == (
        f"{first}:2: duplicate span id 0000000000000001 ('again'); kept the first one, from {first}:1",
        f"{second}:1: duplicate span id 0000000000000001 ('elsewhere'); kept the first one, from {first}:1",
    )


def test_span_whose_parent_is_missing_becomes_a_root(tmp_path: Path) -> None:
    path = write_lines(tmp_path / 't.jsonl', request(span('1', 'root'), span('2', 'orphan', parent='99', start_us=3)))

    [trace] = read_traces(path)

    assert [node.name for node in trace.tree.roots] == ['root', 'orphan']
    assert trace.warnings == (
        f"{path}:1: span 0000000000000002 ('orphan') has parent 0000000000000099, which is not in the trace; it became a root",
    )


def test_child_starting_before_its_parent_is_kept(tmp_path: Path) -> None:
    path = write_lines(tmp_path / 't.jsonl', request(span('1', 'parent', start_us=10), span('2', 'early', parent='1')))

    [trace] = read_traces(path)

    assert shape(trace.tree) == [
        ('early', '0000000000000002', '0000000000000001', 'unset'),
        ('parent', '0000000000000001', None, 'unset'),
    ]
    assert [node.name for node in trace.tree.roots] == ['parent']
    assert trace.warnings == (
        f"{path}:1: span 0000000000000002 ('early') starts before its parent 0000000000000001 ('parent'); kept as recorded",
    )


def test_missing_end_time_is_taken_as_the_start(tmp_path: Path) -> None:
    unfinished = span('1', 'running')
    del unfinished['endTimeUnixNano']
    path = write_lines(tmp_path / 't.jsonl', request(unfinished))

    [trace] = read_traces(path)

    [node] = trace.tree
    assert node.end_timestamp == node.start_timestamp
    assert trace.warnings == (
        f"{path}:1: span 0000000000000001 ('running'): has no endTimeUnixNano; its end is taken as its start",
    )


def test_traces_are_yielded_as_soon_as_their_last_line_is_read(tmp_path: Path) -> None:
    """B ends on line 2 and comes out before line 3 is parsed; the broken line 5 only fails when reached."""
    path = write_lines(
        tmp_path / 'stream.jsonl',
        request(span('1', 'a-root')),
        request(span('1', 'b-root', trace_id=TRACE_B)),
        request(span('2', 'a-child', parent='1', start_us=2)),
        request(span('1', 'c-root', trace_id=TRACE_C)),
        '{"resourceSpans": [',
    )
    parsed: list[int] = []
    original_parse = _readers.parse_json

    def counting_parse(data: bytes) -> object:
        parsed.append(1)
        return original_parse(data)

    traces = load_traces(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_readers, 'parse_json', counting_parse)  # whichever decoder it uses: every unit goes through it
        first = next(traces)
        assert (first.trace_id, len(parsed)) == (TRACE_B, 2)
        second = next(traces)
        assert (second.trace_id, [node.name for node in second.tree], len(parsed)) == (
            TRACE_A,
            ['a-root', 'a-child'],
            3,
        )
        third = next(traces)
        assert (third.trace_id, len(parsed)) == (TRACE_C, 4)
        with pytest.raises(FileError, match=r'stream\.jsonl:5: invalid JSON'):
            next(traces)


def test_a_trace_spread_over_files_waits_for_the_later_file(tmp_path: Path) -> None:
    first = write_lines(tmp_path / '1.jsonl', request(span('1', 'a')), request(span('1', 'b', trace_id=TRACE_B)))
    second = write_lines(tmp_path / '2.jsonl', request(span('2', 'a2', parent='1')))

    traces = load_traces(first, second)

    assert next(traces).trace_id == TRACE_B
    trace_a = next(traces)
    assert (trace_a.trace_id, trace_a.sources) == (TRACE_A, (first, second))
    assert next(traces, None) is None


def make_tree(root: Path) -> dict[str, Path]:
    files = {
        'b': write_lines(root / 'b.otlp.jsonl', request(span('1', 'b', trace_id=TRACE_B))),
        'a': write_lines(root / 'a.jsonl.gz', request(span('1', 'a'))),
        'c': write_lines(root / 'nested' / 'deeper' / 'c.json', request(span('1', 'c', trace_id=TRACE_C))),
    }
    for skipped in (root / '.hidden.jsonl', root / '.cache' / 'x.jsonl', root / 'dataset.yaml', root / 'notes.md'):
        skipped.parent.mkdir(parents=True, exist_ok=True)
        skipped.write_text('not a trace')
    return files


def test_directory_is_read_recursively_sorted_without_hidden_or_non_trace_files(tmp_path: Path) -> None:
    files = make_tree(tmp_path)

    traces = read_traces(tmp_path)

    assert [(trace.name, trace.sources) for trace in traces] == [
        ('a', (files['a'],)),
        ('b', (files['b'],)),
        ('c', (files['c'],)),
    ]


def test_glob_patterns(tmp_path: Path) -> None:
    files = make_tree(tmp_path)

    assert [trace.name for trace in read_traces(f'{tmp_path}/*.jsonl*')] == ['a', 'b']
    assert [trace.sources for trace in read_traces(f'{tmp_path}/**/c.*')] == [(files['c'],)]
    assert [trace.name for trace in read_traces(f'{tmp_path}/nest*')] == ['c']  # a matched directory is read whole


def test_a_file_named_twice_is_read_once(tmp_path: Path) -> None:
    files = make_tree(tmp_path)

    traces = read_traces(files['b'], tmp_path, str(files['b']))

    assert [trace.name for trace in traces] == ['b', 'a', 'c']
    assert all(trace.warnings == () for trace in traces)


def test_hidden_files_named_explicitly_are_read(tmp_path: Path) -> None:
    path = write_lines(tmp_path / '.secret.jsonl', request(span('1')))
    assert [trace.trace_id for trace in read_traces(path)] == [TRACE_A]


def test_name_drops_every_extension() -> None:
    trace = LoadedTrace(trace_id=TRACE_A, tree=SpanTree(), sources=(Path('x/run1.otlp.json.gz'),))
    assert trace.name == 'run1'


def test_relative_paths_stay_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_lines(tmp_path / 'run.jsonl', request(span('1')))
    monkeypatch.chdir(tmp_path)

    [trace] = read_traces('run.jsonl')

    assert trace.sources == (Path('run.jsonl'),)
    assert os.fspath(trace.sources[0]) == 'run.jsonl'


def test_the_garbage_collector_is_left_as_it_was(tmp_path: Path) -> None:
    """Parsing pauses the collector; it must come back on, and stay off when the application turned it off."""
    path = write_lines(tmp_path / 't.jsonl', request(span('1')), request(span('2', parent='1', start_us=1)))
    assert gc.isenabled()
    read_traces(path)
    assert gc.isenabled()
    gc.disable()
    try:
        read_traces(path)
        assert not gc.isenabled()
    finally:
        gc.enable()
    bad = write_lines(tmp_path / 'bad.jsonl', request(span('1')), '{"resourceSpans": [')
    with pytest.raises(FileError):
        read_traces(bad)
    assert gc.isenabled()


def test_the_trace_file_api_is_exported_from_the_top_level() -> None:
    import types

    import agentic_evals
    from agentic_evals import traces

    offered = {
        name
        for name, value in vars(traces).items()
        if not name.startswith('_') and not isinstance(value, types.ModuleType)
    }
    assert offered <= set(agentic_evals.__all__)


def test_trees_are_linked_as_span_tree_add_spans_links_them(tmp_path: Path) -> None:
    """Trees are linked in one pass (`_assemble._linked_tree`): the same tree `SpanTree.add_spans` builds."""
    from pydantic_evals.otel.span_tree import SpanNode

    from agentic_evals.traces import _assemble

    assert _assemble.span_tree is _assemble._linked_tree  # the pinned pydantic-evals releases pass its check
    path = write_lines(
        tmp_path / 't.jsonl',
        request(span('5', 'late root', start_us=9), span('2', 'child', parent='5', start_us=10)),
        request(span('9', 'twin', parent='5', start_us=10), span('7', 'orphan', parent='42', start_us=1)),
        request(span('3', 'loop a', parent='4', start_us=3), span('4', 'loop b', parent='3', start_us=3)),
        request(span('8', 'first', start_us=0), span('6', 'grandchild', parent='2', start_us=11)),
    )

    [trace] = read_traces(path)

    copies = [
        SpanNode(
            name=node.name,
            trace_id=node.trace_id,
            span_id=node.span_id,
            parent_span_id=node.parent_span_id,
            start_timestamp=node.start_timestamp,
            end_timestamp=node.end_timestamp,
            attributes=node.attributes,
            status=node.status,
        )
        for node in trace.tree.nodes_by_id.values()
    ]
    rebuilt = SpanTree()
    rebuilt.add_spans(copies)
    assert _assemble._tree_shape(trace.tree) == _assemble._tree_shape(rebuilt)
    assert [node.name for node in trace.tree.roots] == ['first', 'orphan', 'loop a', 'late root']
