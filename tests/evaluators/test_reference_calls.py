"""ToolCallAccuracy and ToolCallF1: the same numbers as ragas where ragas is right, ours where it is not.

`tests/evaluators/data/ragas_reference.json` holds ragas 0.4.3's own scores, computed by `scripts/ragas_reference.py`
in a separate environment (ragas is not a dependency).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EvaluationReason

from agentic_evals import (
    ToolCallAccuracy,
    ToolCallF1,
    Trajectory,
    tool_call_accuracy,
    tool_call_f1,
    trajectory_from_messages,
)

from ..factories import TreeBuilder, context

TABLE = json.loads((Path(__file__).parent / 'data' / 'ragas_reference.json').read_text(encoding='utf-8'))
WELL_DEFINED: list[dict[str, Any]] = TABLE['well_defined']
DEFECTS: dict[str, dict[str, Any]] = {case['id']: case for case in TABLE['defects']}


def ours(actual: Trajectory | list[dict[str, Any]], reference: list[dict[str, Any]]) -> dict[str, float]:
    return {
        'accuracy_strict': tool_call_accuracy(actual, reference).value,
        'accuracy_flexible': tool_call_accuracy(actual, reference, strict_order=False).value,
        'f1': tool_call_f1(actual, reference).value,
    }


def predicted(conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [call for message in conversation if message['type'] == 'ai' for call in message.get('tool_calls', [])]


def test_the_table_is_ragas_0_4() -> None:
    assert TABLE['ragas_version'].startswith('0.4.')
    assert len(WELL_DEFINED) == 400
    assert len({json.dumps(c['ragas'], sort_keys=True) for c in WELL_DEFINED}) > 50  # many distinct outcomes


@pytest.mark.parametrize('case', WELL_DEFINED, ids=[c['id'] for c in WELL_DEFINED])
def test_same_scores_as_ragas_where_ragas_is_well_defined(case: dict[str, Any]) -> None:
    theirs = case['ragas']
    for actual in (trajectory_from_messages(case['conversation']), predicted(case['conversation'])):
        mine = ours(actual, case['reference'])
        assert mine['accuracy_strict'] == theirs['accuracy_strict']
        assert mine['accuracy_flexible'] == theirs['accuracy_flexible']
        assert round(mine['f1'], 4) == theirs['f1']  # ragas rounds F1 to 4 places; we do not


F = 2 / 3
OUR_DEFECT_VALUES = {
    # id: (ragas strict, ragas flexible, ragas F1), (ours strict, ours flexible, ours F1)
    'int-vs-string': ((1.0, 1.0, 0.0), (0.0, 0.0, 0.0)),
    'bool-vs-string': ((1.0, 1.0, 0.0), (0.0, 0.0, 0.0)),
    'none-vs-string': ((1.0, 1.0, 0.0), (0.0, 0.0, 0.0)),
    'nested-key-order': ((0.0, 0.0, 1.0), (1.0, 1.0, 1.0)),
    'int-vs-float': ((0.0, 0.0, 1.0), (1.0, 1.0, 1.0)),
    'bool-vs-int': ((0.0, 0.0, 1.0), (0.0, 0.0, 0.0)),
    'duplicate-expected': ((0.0, 0.0, 1.0), (0.0, 0.0, F)),
    'duplicate-actual': ((0.0, 0.0, 1.0), (0.0, 0.0, F)),
    'duplicate-with-others': ((0.0, 0.0, 0.5), (0.0, 0.0, 0.4)),
    'both-empty': ((1.0, 1.0, 0.0), (1.0, 1.0, 1.0)),
}


@pytest.mark.parametrize('case_id', sorted(OUR_DEFECT_VALUES))
def test_where_ragas_is_wrong_we_follow_the_documented_formula(case_id: str) -> None:
    case = DEFECTS[case_id]
    recorded, documented = OUR_DEFECT_VALUES[case_id]
    assert tuple(case['ragas'].values()) == recorded
    for actual in (trajectory_from_messages(case['conversation']), case['actual']):
        assert tuple(ours(actual, case['reference']).values()) == documented


def test_every_defect_case_is_documented() -> None:
    assert set(DEFECTS) == set(OUR_DEFECT_VALUES)
    page = (Path(__file__).parents[2] / 'docs' / 'ragas.md').read_text(encoding='utf-8')
    assert all(f'`{case_id}`' in page for case_id in DEFECTS)


# -- evaluators on spans ------------------------------------------------------------------------------


def tree() -> object:
    """main: search(q='otel'), fetch(url='a'), fetch(url='b') failing, and an expert sub-agent's lookup."""
    b = TreeBuilder()
    main = b.agent('main')
    b.tool('search', main, arguments={'q': 'otel', 'limit': 5})
    b.tool('fetch', main, arguments={'url': 'a'})
    b.tool('fetch', main, arguments={'url': 'b'}, status='error')
    ask = b.tool('ask', main, arguments={})
    expert = b.agent('expert', ask)
    b.tool('lookup', expert, arguments={'term': 'x'})
    b.tool('broken', main, arguments='{"q": ')
    b.tool('hidden', main)
    return b.build()


def run(evaluator: ToolCallAccuracy | ToolCallF1, span_tree: object = None) -> tuple[object, str | None]:
    result = evaluator.evaluate(context(span_tree or tree()))  # type: ignore[arg-type]
    assert isinstance(result, EvaluationReason)
    return result.value, result.reason


REFERENCE = [
    {'name': 'search', 'args': {'q': 'otel'}},
    {'name': 'fetch', 'args': {'url': 'b'}},
    {'name': 'ask', 'args': {}},
]
SCOPE = {'agent': 'main', 'include_subagents': False}


def test_accuracy_reasons() -> None:
    assert run(ToolCallAccuracy(REFERENCE, **SCOPE)) == (0.0, (
        "tool names not aligned (strict order): expected ['search', 'fetch', 'ask'],"
        " actual ['search', 'fetch', 'ask', 'broken', 'hidden']; unexpected tools: 'broken' (x1), 'hidden' (x1)"
        " (agent 'main', sub-agents excluded)"
    ))  # fmt: skip
    three = TreeBuilder()
    root = three.agent('main')
    three.tool('ask', root, arguments={'x': 1})
    three.tool('search', root, arguments={'q': 'otel', 'limit': 5})
    three.tool('fetch', root, arguments={'url': 'a'})
    assert run(ToolCallAccuracy(REFERENCE, strict_order=False), three.build()) == (1 / 3, (
        "tool names aligned (any order), argument accuracy=1/3=0.333; matched: search(q='otel'); argument"
        " mismatches: ask() vs ask(x=1): expected no arguments, got {'x': 1}; fetch(url='b') vs fetch(url='a'):"
        " key 'url': expected 'b', got 'a'"
    ))  # fmt: skip
    assert run(ToolCallAccuracy(REFERENCE), three.build()) == (0.0, (
        "tool names not aligned (strict order): expected ['search', 'fetch', 'ask'], actual ['ask', 'search', 'fetch']"
    ))  # fmt: skip
    assert run(ToolCallAccuracy([], agent='expert')) == (
        0.0,
        "0 reference call(s), 1 actual call(s); extra: lookup(term='x') (agent 'expert')",
    )
    assert run(ToolCallAccuracy([], agent='nobody')) == (
        0.0,
        "agent 'nobody' not found in the trace; agents seen: ['expert', 'main']",
    )
    assert run(ToolCallAccuracy([]), TreeBuilder().build()) == (1.0, 'both reference and actual calls are empty')


def test_failed_attempts_and_unreadable_arguments() -> None:
    reference = [{'name': 'fetch', 'args': {'url': 'a'}}, {'name': 'fetch', 'args': {'url': 'b'}}]
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('fetch', root, arguments={'url': 'a'})
    b.tool('fetch', root, arguments={'url': 'b'}, status='error')
    assert run(ToolCallAccuracy(reference), b.build())[0] == 0.0
    assert run(ToolCallAccuracy(reference, include_failed=True), b.build()) == (
        1.0,
        "tool names aligned (strict order), argument accuracy=2/2=1.000; matched: fetch(url='a'), fetch(url='b')",
    )
    assert run(ToolCallF1(reference), b.build()) == (
        2 / 3,
        "matched calls=1, precision=1/1=1.000, recall=1/2=0.500, F1=0.667; matched: fetch(url='a'); missing: fetch(url='b')",
    )
    unreadable = TreeBuilder()
    root = unreadable.agent('main')
    unreadable.tool('fetch', root, arguments='{"url": ')
    unreadable.tool('fetch', root)
    assert run(ToolCallAccuracy(reference), unreadable.build()) == (0.0, (
        "tool names aligned (strict order), argument accuracy=0/2=0.000; argument mismatches: fetch(url='a') vs"
        " fetch(<arguments could not be parsed as JSON: Expecting value: line 1 column 9 (char 8)>): arguments could"
        " not be parsed as JSON: Expecting value: line 1 column 9 (char 8); fetch(url='b') vs fetch(<arguments not"
        " available in span (`include_content` may be disabled).>): arguments not available in span"
        " (`include_content` may be disabled)."
    ))  # fmt: skip
    value, reason = run(ToolCallF1(reference), unreadable.build())
    assert value == 0.0
    assert reason is not None and reason.startswith('matched calls=0, precision=0/2=0.000, recall=0/2=0.000, F1=0.000;')


def test_f1_reasons() -> None:
    assert run(ToolCallF1(REFERENCE, **SCOPE)) == (0.25, (
        "matched calls=1, precision=1/5=0.200, recall=1/3=0.333, F1=0.250; matched: ask(); missing: fetch(url='b'),"
        " search(q='otel'); extra: broken(<arguments could not be parsed as JSON: Expecting value: line 1 column 7"
        " (char 6)>), fetch(url='a'), hidden(<arguments not available in span (`include_content` may be disabled).>),"
        " search(limit=5, q='otel'); argument mismatches: fetch(url='b') vs fetch(url='a'): key 'url': expected 'b',"
        " got 'a'; search(q='otel') vs search(limit=5, q='otel'): unexpected key 'limit' (agent 'main', sub-agents"
        " excluded)"
    ))  # fmt: skip
    assert run(ToolCallF1([]), TreeBuilder().build()) == (1.0, 'both reference and actual calls are empty')
    repeated = TreeBuilder()
    root = repeated.agent('main')
    for _ in range(3):
        repeated.tool('search', root, arguments={'q': 'otel'})
    assert run(ToolCallF1([{'name': 'search', 'args': {'q': 'otel'}}]), repeated.build()) == (
        0.5,
        "matched calls=1, precision=1/3=0.333, recall=1/1=1.000, F1=0.500; matched: search(q='otel');"
        " extra: search(q='otel') (x2)",
    )


@pytest.mark.parametrize(
    ('reference', 'error'),
    [
        ('search', 'reference_tool_calls must be a list of {"name", "args"} mappings, got \'search\''),
        ([{'args': {}}], 'call 0: expected a {"name": str, "args": dict} mapping, got {\'args\': {}}'),
        ([{'name': 'a'}, {'name': 'b', 'args': [1]}], "call 1 ('b'): args must be a mapping, got [1]"),
    ],
)
def test_bad_reference_calls_fail_at_construction(reference: Any, error: str) -> None:
    for evaluator in (ToolCallAccuracy, ToolCallF1):
        with pytest.raises(ValueError) as info:
            evaluator(reference)
        assert str(info.value) == f'{evaluator.__name__}: {error}'


def test_yaml_round_trip(tmp_path: Path) -> None:
    evaluators = [
        ToolCallAccuracy([{'name': 'search', 'args': {'q': 'x', 'n': [1, 2]}}]),
        ToolCallAccuracy([{'name': 'a', 'args': {}}], strict_order=False, include_failed=True, agent='main'),
        ToolCallF1([{'name': 'a', 'args': {'k': {'nested': True}}}], evaluation_name='f1', include_subagents=False),
    ]
    path = tmp_path / 'dataset.yaml'
    dataset = Dataset[object, object, object](name='d', cases=[Case(name='c', inputs='x')], evaluators=evaluators)
    dataset.to_file(path, custom_evaluator_types=[ToolCallAccuracy, ToolCallF1])
    assert '- ToolCallAccuracy:\n  - name: search\n' in path.read_text()
    loaded = Dataset[object, object, object].from_file(path, custom_evaluator_types=[ToolCallAccuracy, ToolCallF1])
    assert loaded.evaluators == evaluators
