"""The plain-function metrics: invariants, inputs, and the same results as the evaluators of the same name."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_evals.evaluators import EvaluationReason

from agentic_evals import (
    ArgumentCorrectness,
    MaxModelRequests,
    MaxToolCalls,
    MetricResult,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCorrectness,
    TrajectoryMatch,
    argument_correctness,
    canonical_json,
    extract_trajectory,
    max_model_requests,
    max_tool_calls,
    tool_call_accuracy,
    tool_call_f1,
    tool_correctness,
    trajectory_match,
)

from ..factories import TreeBuilder, context

# Upper-case text never collides with the JSON text of a number, bool, null, list or object, so two
# values with the same sort key are equal: the flexible-order pairing then cannot depend on input order.
scalars = st.one_of(st.integers(-3, 3), st.sampled_from(['A', 'B', 'AB']), st.booleans(), st.none(), st.just(0.5))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from('xy'), inner, max_size=2), max_leaves=4)  # fmt: skip
calls = st.lists(
    st.fixed_dictionaries(
        {'name': st.sampled_from(['search', 'fetch', 'ping']), 'args': st.dictionaries(st.sampled_from('abc'), values, max_size=3)}
    ),
    max_size=5,
)  # fmt: skip


@given(calls, calls)
def test_scores_are_in_the_unit_interval(actual: list[dict[str, Any]], reference: list[dict[str, Any]]) -> None:
    for result in (
        tool_call_accuracy(actual, reference),
        tool_call_accuracy(actual, reference, strict_order=False),
        tool_call_f1(actual, reference),
        trajectory_match(actual, [c['name'] for c in reference]),
    ):
        assert 0.0 <= result.value <= 1.0


@given(calls)
def test_identical_calls_score_one(actual: list[dict[str, Any]]) -> None:
    assert tool_call_accuracy(actual, actual).value == 1.0
    assert tool_call_accuracy(actual, actual, strict_order=False).value == 1.0
    assert tool_call_f1(actual, actual).value == 1.0
    assert tool_correctness(actual, [c['name'] for c in actual]).value is True


@given(calls, calls)
def test_f1_is_symmetric(actual: list[dict[str, Any]], reference: list[dict[str, Any]]) -> None:
    assert tool_call_f1(actual, reference).value == pytest.approx(tool_call_f1(reference, actual).value)


@given(calls, calls, st.randoms(use_true_random=False))
def test_flexible_order_ignores_the_order_of_calls(
    actual: list[dict[str, Any]], reference: list[dict[str, Any]], rng: random.Random
) -> None:
    shuffled = list(actual)
    rng.shuffle(shuffled)
    assert tool_call_accuracy(shuffled, reference, strict_order=False) == tool_call_accuracy(
        actual, reference, strict_order=False
    )
    assert tool_call_f1(shuffled, reference).value == tool_call_f1(actual, reference).value


@given(calls, calls)
def test_aligned_in_order_means_aligned_in_any_order(
    actual: list[dict[str, Any]], reference: list[dict[str, Any]]
) -> None:
    if tool_call_accuracy(actual, reference).reason.startswith('tool names aligned'):
        assert tool_call_accuracy(actual, reference, strict_order=False).reason.startswith('tool names aligned')


@given(values, values)
def test_canonical_json_is_equality_up_to_key_order_and_number_type(a: Any, b: Any) -> None:
    assert canonical_json(a) == canonical_json(a)
    if canonical_json(a) == canonical_json(b):
        assert _loosely_equal(a, b)


def _loosely_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_loosely_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_loosely_equal(x, y) for x, y in zip(a, b, strict=True))
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
    return (type(a) is type(b) or numbers) and a == b


def test_canonical_json() -> None:
    assert canonical_json({'b': 2, 'a': [1.0, {'d': None, 'c': True}]}) == '{"a":[1,{"c":true,"d":null}],"b":2}'
    assert len({canonical_json(v) for v in (1, '1', True, 1.5)}) == 4
    assert canonical_json(1) == canonical_json(1.0)


# -- the functions give what the evaluators give -------------------------------------------------------


NAMES = ['search', 'fetch', 'lookup']


def random_tree(seed: int) -> object:
    """main and a sub-agent making random calls, some failing, some with unreadable arguments."""
    rng = random.Random(seed)
    b = TreeBuilder()
    main = b.agent('main')
    parents = [main]
    for _ in range(rng.randint(0, 8)):
        if rng.random() < 0.15:
            parents.append(b.agent('expert', b.tool('ask', parents[-1], arguments={})))
        name = rng.choice(NAMES)
        args: Any = {'q': rng.choice('xy'), 'n': rng.randint(1, 2)} if rng.random() < 0.85 else '{"q": '
        b.tool(name, rng.choice(parents), arguments=args, status='error' if rng.random() < 0.2 else 'unset')
    return b.build()


def evaluator_pairs(seed: int) -> list[tuple[Any, Any]]:
    rng = random.Random(seed)
    expected = [rng.choice(NAMES) for _ in range(rng.randint(0, 4))]
    reference = [{'name': name, 'args': {'q': rng.choice('xy')}} for name in expected]
    flags: dict[str, Any] = {
        'include_failed': rng.random() < 0.5,
        'agent': rng.choice([None, 'main', 'expert', 'nobody']),
        'include_subagents': rng.random() < 0.5,
    }
    occurrence = rng.choice(['first', 'last', 0, 1, 3])
    mode = rng.choice(['exact', 'subset'])
    order = rng.choice(['exact', 'in_order', 'any_order'])
    strict = rng.random() < 0.5
    budget = rng.randint(0, 4)
    return [
        (ToolCorrectness(expected, allow_extra=strict, **flags), lambda t: tool_correctness(t, expected, allow_extra=strict, **flags)),
        (TrajectoryMatch(expected, order=order, **flags), lambda t: trajectory_match(t, expected, order=order, **flags)),
        (ArgumentCorrectness('search', {'q': 'x'}, match_mode=mode, occurrence=occurrence, **flags),
         lambda t: argument_correctness(t, 'search', {'q': 'x'}, match_mode=mode, occurrence=occurrence, **flags)),
        (ToolCallAccuracy(reference, strict_order=strict, **flags), lambda t: tool_call_accuracy(t, reference, strict_order=strict, **flags)),
        (ToolCallF1(reference, **flags), lambda t: tool_call_f1(t, reference, **flags)),
        (MaxToolCalls(budget, **flags), lambda t: max_tool_calls(t, budget, **flags)),
        (MaxModelRequests(budget, agent=flags['agent'], include_subagents=flags['include_subagents']),
         lambda t: max_model_requests(t, budget, agent=flags['agent'], include_subagents=flags['include_subagents'])),
    ]  # fmt: skip


@pytest.mark.parametrize('seed', range(200))
def test_functions_report_what_the_evaluators_report(seed: int) -> None:
    tree = random_tree(seed)
    trajectory = extract_trajectory(tree)  # type: ignore[arg-type]
    ctx = context(tree)  # type: ignore[arg-type]
    for evaluator, function in evaluator_pairs(seed):
        result = evaluator.evaluate(ctx)
        assert isinstance(result, EvaluationReason)
        assert function(trajectory) == MetricResult(result.value, result.reason or ''), evaluator


# -- inputs --------------------------------------------------------------------------------------------


def test_plain_lists() -> None:
    assert tool_correctness(['a', 'b'], ['b', 'a']) == MetricResult(True, "called 'a' (x1), 'b' (x1)")
    assert max_tool_calls(['a', {'name': 'b', 'args': {}}], 1) == MetricResult(False, '2 tool call(s), budget=1')
    assert trajectory_match([{'name': 'a', 'args': {}}], ['a'], order='exact') == MetricResult(
        1.0, "actual trajectory matches expected: ['a']"
    )
    assert argument_correctness([{'name': 'a', 'args': {'x': 1}}], 'a', {'x': 1.0}) == MetricResult(
        True, "Tool 'a' called with {'x': 1}"
    )

    class RagasToolCall:  # ragas' ToolCall, duck-typed
        def __init__(self, name: str, args: dict[str, Any]) -> None:
            self.name, self.args = name, args

    result = tool_call_f1([RagasToolCall('a', {'x': 1})], [{'name': 'a', 'args': {'x': 1}}])  # type: ignore[list-item]
    assert result == MetricResult(
        1.0, 'matched calls=1, precision=1/1=1.000, recall=1/1=1.000, F1=1.000; matched: a(x=1)'
    )
    assert tool_call_accuracy([{'name': 'a'}], [{'name': 'a', 'args': None}]).value == 1.0  # no args means {}


@pytest.mark.parametrize(
    ('call', 'error'),
    [
        (lambda: tool_call_accuracy(['a'], []), TypeError),
        (lambda: argument_correctness(['a'], 'a', {}), TypeError),
        (lambda: tool_correctness('ab', []), TypeError),  # a string is not a list of names
        (lambda: tool_call_f1([{'args': {}}], []), ValueError),
        (lambda: tool_call_f1([], [{'name': 'a', 'args': 'x=1'}]), ValueError),
    ],
)
def test_bad_inputs(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call()
