"""The loader's on-disk trace index: the same order a dictionary gives, and memory that does not grow with trace ids."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc
from pathlib import Path

import pytest

from agentic_evals import load_traces
from agentic_evals.traces import _index
from agentic_evals.traces._index import Ascending, TraceIndex
from agentic_evals.traces._load import load_partition

from . import request, span, write_lines


def dictionary_endings(seen: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """What the index must give: each id at its last (file, unit), ties in order of first appearance."""
    last: dict[str, tuple[int, int]] = {}
    for file, unit, trace_id in seen:
        last[trace_id] = (file, unit)
    return sorted(((*position, trace_id) for trace_id, position in last.items()), key=lambda e: e[:2])


@pytest.mark.parametrize('batch', [1, 3, 50_000])
def test_endings_are_by_last_unit_then_first_appearance(batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_index, '_BATCH', batch)
    rng = random.Random(batch)
    ids = [f'{n:032x}' for n in rng.sample(range(10**6), 40)]
    seen = [
        (file, unit, rng.choice(ids)) for file in range(3) for unit in range(1, 60) for _ in range(rng.randint(0, 3))
    ]
    index = TraceIndex()
    try:
        for file, unit, trace_id in seen:
            index.add(file, unit, trace_id)
        assert list(index.endings()) == dictionary_endings(seen)
    finally:
        index.close()


def test_wanted_units_come_back_per_file_in_order_once_each(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_index, '_BATCH', 2)
    index = TraceIndex()
    try:
        for file, unit, wanted in [
            (0, 1, True),
            (0, 1, True),
            (0, 2, False),
            (0, 3, True),
            (1, 0, True),
            (2, 5, False),
        ]:
            index.add(file, unit, f'{file}{unit}'.rjust(32, '0'), wanted=wanted)
        assert [list(index.wanted(file)) for file in range(3)] == [[1, 3], [0], []]
    finally:
        index.close()


def test_ascending_membership_answers_increasing_questions() -> None:
    wanted = Ascending(iter([2, 5, 6]))
    assert [unit in wanted for unit in (1, 2, 3, 4, 5, 6, 7)] == [False, True, False, False, True, True, False]
    assert None in Ascending(iter([0]))  # a file read whole is unit 0
    assert None not in Ascending(iter([]))


def interleaved(tmp_path: Path, traces: int) -> list[Path]:
    """Two files where each trace's spans are scattered over lines of both, as rotation writes them."""
    rng = random.Random(traces)
    lines: list[list[dict[str, object]]] = [[], []]
    for n in range(traces):
        trace_id = f'{n + 1:032x}'
        lines[rng.randrange(2)].append(request(span('1', 'root', trace_id=trace_id)))
        lines[rng.randrange(2)].append(request(span('2', 'child', trace_id=trace_id, parent='1', start_us=1)))
    for spans in lines:
        rng.shuffle(spans)
    return [write_lines(tmp_path / f'{i}.jsonl', *spans) for i, spans in enumerate(lines)]


def test_batches_do_not_change_the_load_nor_the_partitions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = interleaved(tmp_path, 60)
    whole = [(t.trace_id, [node.name for node in t.tree]) for t in load_traces(*files)]
    assert len(whole) == 60 and all(names == ['root', 'child'] for _, names in whole)
    monkeypatch.setattr(_index, '_BATCH', 4)
    assert [(t.trace_id, [node.name for node in t.tree]) for t in load_traces(*files)] == whole
    placed = [(place, t.trace_id) for part in range(3) for place, t in load_partition(*files, part=part, parts=3)]
    assert [trace_id for _, trace_id in sorted(placed)] == [trace_id for trace_id, _ in whole]


def load_peak(files: list[Path]) -> int:
    """Peak traced memory while loading every trace and dropping it."""
    gc.collect()
    tracemalloc.start()
    try:
        for _ in load_traces(*files):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_number_of_trace_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten times the traces, each on its own line: the peak stays put (a dictionary per id grew ~4 MB here).

    A batch smaller than either file, so the constant the batch costs is in both peaks.
    """
    monkeypatch.setattr(_index, '_BATCH', 500)

    def one_line_traces(name: str, count: int) -> list[Path]:
        path = tmp_path / name
        with path.open('w') as out:
            for n in range(count):
                out.write(json.dumps(request(span('1', 'root', trace_id=f'{n + 1:032x}'))) + '\n')
        return [path]

    small = load_peak(one_line_traces('small.jsonl', 2_000))
    large = load_peak(one_line_traces('large.jsonl', 20_000))
    assert large < small + 1_000_000, (small, large)
