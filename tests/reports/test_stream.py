"""`ReportBuilder`'s spool: entries in key order as tuples sort, and memory that does not grow with the cases."""

from __future__ import annotations

import gc
import random
import tracemalloc

import pytest

from agentic_evals.reports import stream
from agentic_evals.reports.document import AssertionResult, CaseFailure, CaseResult, ScoreResult
from agentic_evals.reports.gates import Gates, MaxMetric, MinScore
from agentic_evals.reports.judge import check_gates
from agentic_evals.reports.stream import Key, ReportBuilder
from agentic_evals.views.markdown import markdown_chunks


def test_entries_come_in_the_order_their_keys_sort_in_ties_by_arrival() -> None:
    keys: list[Key] = [(3,), (-1,), (2**40, 0), (1, 5, 2), (1,), (1, 5), (0, 2**62), (1, 5)]
    with ReportBuilder('r') as builder:
        for n, key in enumerate(keys):
            builder.add(key, CaseResult(name=f'c{n}'))
        names = [case.name for case in builder.document().cases]
    arrival = sorted(range(len(keys)), key=keys.__getitem__)  # a stable sort: equal keys keep their arrival
    assert names == [f'c{n}' for n in arrival]


def test_a_document_holds_the_entries_added_before_it() -> None:
    with ReportBuilder('r') as builder:
        builder.add((2,), CaseResult(name='b'))
        builder.add((5,), CaseFailure(name='lost', error='gone'))
        earlier = builder.document()
        builder.add((1,), CaseResult(name='a'))
        builder.add((0,), CaseFailure(name='also lost', error='gone'))
        later = builder.document()
        assert ([c.name for c in earlier.cases], [f.name for f in earlier.failures]) == (['b'], ['lost'])
        assert ([c.name for c in later.cases], [f.name for f in later.failures]) == (['a', 'b'], ['also lost', 'lost'])
        assert (len(earlier.cases), len(later.cases), len(later.failures)) == (1, 2, 2)


def test_repeated_names_are_told_apart_in_key_order_whatever_the_arrival() -> None:
    names = ['a', 'b', 'a', 'c', 'a', 'b']
    with ReportBuilder('r', rename=True) as builder:
        for n in reversed(range(len(names))):
            builder.add((n,), CaseResult(name=names[n], trace_id=f'{n:08x}' * 4))
        builder.add((-1,), CaseFailure(name='a', error='gone'))  # failures keep their names
        document = builder.document()
        assert [c.name for c in document.cases] == ['a', 'b', 'a (00000002)', 'c', 'a (00000004)', 'b (00000005)']
        assert [f.name for f in document.failures] == ['a']


def spool_peak(count: int, **kwargs: bool) -> int:
    """Peak traced memory while adding `count` cases in a random order and reading them all back in order
    (each case its own name and a failed assertion, which every gate and view then goes over)."""
    keys = list(range(count))
    random.Random(count).shuffle(keys)
    gates = Gates(
        min_scores=(MinScore('s', 0.9),),
        min_case_scores=(MinScore('s', 0.9), MinScore('ok', 1)),
        max_metrics=(MaxMetric('requests', 1),),
        max_case_metrics=(MaxMetric('requests', 1),),
    )
    gc.collect()
    tracemalloc.start()
    try:
        with ReportBuilder('r', rename=True) as builder:
            for key in keys:
                case = CaseResult(
                    name=f'case {key:08d}',
                    scores={'s': ScoreResult(0.5)},
                    assertions={'ok': AssertionResult(False)},
                    metrics={'requests': 2},
                )
                builder.add((key,), case)
            document = builder.document()
            for _ in document.cases:
                pass
            if kwargs.get('views'):
                verdict = check_gates(document, gates)
                for _ in markdown_chunks(document, gates, verdict):
                    pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten times the cases: the peak stays put (keys and offsets in memory, sorted there, grew ~3 MB here).

    A batch of keys smaller than either run, so the batch is in both peaks.
    """
    monkeypatch.setattr(stream, '_BATCH', 500)
    keys_alone = 18_000 * 8 * 2  # what 16 bytes a case, no sorting, would add
    small, large = spool_peak(2_000), spool_peak(20_000)
    assert large < small + keys_alone, (small, large)


@pytest.mark.slow  # about 35 s: every gate reads every case again, under tracemalloc
def test_gates_and_views_of_failing_cases_do_not_grow_with_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case fails every gate: the gates and the Markdown (whose cells the table and HTML share) count
    them and name the first few, holding no list of them (lists of the failures grew ~2 MB here)."""
    monkeypatch.setattr(stream, '_BATCH', 250)
    small, large = spool_peak(1_000, views=True), spool_peak(10_000, views=True)
    assert large < small + 9_000 * 16, (small, large)
