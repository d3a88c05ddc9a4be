"""`assert_trajectory` on real captured runs of a scripted pydantic-ai agent."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_evals.evaluators import HasMatchingSpan
from pydantic_evals.otel.span_tree import SpanQuery

from agentic_evals import (
    Capture,
    MaxToolCalls,
    ToolCallMatch,
    ToolCorrectness,
    TrajectoryMatch,
    assert_trajectory,
    capture,
)


def _script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    step = sum(isinstance(m, ModelResponse) for m in messages)
    if step == 0:
        return ModelResponse(parts=[ToolCallPart('lookup_order', {'order_id': 'A1'})])
    if step == 1:
        return ModelResponse(parts=[ToolCallPart('refund', {'order_id': 'A1', 'amount': 12})])
    return ModelResponse(parts=[TextPart('refunded')])


@pytest.fixture(scope='module')
def run() -> tuple[Capture, list[ModelMessage]]:
    provider = TracerProvider()
    agent = Agent(FunctionModel(_script), name='support')
    agent.instrument = InstrumentationSettings(tracer_provider=provider)

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, float]:
        return {'total': 12.0}

    @agent.tool_plain
    def refund(order_id: str, amount: float) -> str:
        return 'ok'

    with capture(tracer_provider=provider) as captured:
        result = agent.run_sync('Refund order A1')
    return captured, result.all_messages()


EXPECTED = [{'name': 'lookup_order'}, {'name': 'refund', 'arguments': {'order_id': 'A1', 'amount': 12}}]


def test_passes_silently(run: tuple[Capture, list[ModelMessage]]) -> None:
    captured, messages = run
    assert_trajectory(captured, ToolCallMatch(EXPECTED, mode='in_order'), MaxToolCalls(2))
    assert_trajectory(captured.tree, ToolCorrectness(['lookup_order', 'refund']))
    assert_trajectory(messages, ToolCallMatch(EXPECTED, mode='strict'))


def test_failure_names_the_check_and_diffs_the_calls(run: tuple[Capture, list[ModelMessage]]) -> None:
    captured, _ = run
    wrong = [
        {'name': 'lookup_order'},
        {'name': 'refund', 'arguments': {'order_id': 'A1', 'amount': 10}},
        {'name': 'notify'},
    ]
    with pytest.raises(AssertionError) as raised:
        assert_trajectory(captured, ToolCallMatch(wrong, mode='in_order'), MaxToolCalls(5))
    lines = str(raised.value).splitlines()
    assert lines[0] == 'trajectory check failed:'
    assert lines[1].startswith(
        'ToolCallMatch: False: no match (in_order, arguments exact): 2 of 3 expected call(s) not made'
    )
    assert lines[2:] == [
        '  = lookup_order(...)',
        "  - refund(amount=10, order_id='A1')",
        "  + refund(amount=12, order_id='A1')",
        "  ~   key 'amount': expected 10, got 12",
        '  - notify(...)',
    ]


def test_every_failing_evaluator_is_listed(run: tuple[Capture, list[ModelMessage]]) -> None:
    captured, _ = run
    with pytest.raises(AssertionError) as raised:
        assert_trajectory(captured, MaxToolCalls(1), ToolCorrectness(['refund']), MaxToolCalls(9))
    text = str(raised.value)
    assert 'MaxToolCalls: False: 2 tool call(s), budget=1' in text
    assert "ToolCorrectness: False: unexpected tools: 'lookup_order' (x1)" in text
    assert 'budget=9' not in text


def test_scores_fail_below_one_or_their_threshold(run: tuple[Capture, list[ModelMessage]]) -> None:
    captured, _ = run
    with pytest.raises(AssertionError, match=r'TrajectoryMatch: 0\.8'):
        assert_trajectory(captured, TrajectoryMatch(['lookup_order', 'refund', 'notify']))
    assert_trajectory(captured, TrajectoryMatch(['lookup_order', 'refund', 'notify'], threshold=0.8))
    with pytest.raises(AssertionError, match=r'TrajectoryMatch_pass: False: 0\.800 < threshold 0\.9'):
        assert_trajectory(captured, TrajectoryMatch(['lookup_order', 'refund', 'notify'], threshold=0.9))


def test_other_pydantic_evals_evaluators_run_too(run: tuple[Capture, list[ModelMessage]]) -> None:
    captured, _ = run
    assert_trajectory(captured, HasMatchingSpan(SpanQuery(name_contains='refund')))
    with pytest.raises(AssertionError, match='HasMatchingSpan'):
        assert_trajectory(captured, HasMatchingSpan(SpanQuery(name_contains='escalate')))


def test_a_message_history_cannot_feed_span_only_evaluators(run: tuple[Capture, list[ModelMessage]]) -> None:
    _, messages = run
    with pytest.raises(TypeError, match='cannot score a message history'):
        assert_trajectory(messages, HasMatchingSpan(SpanQuery(name_contains='refund')))
    with pytest.raises(TypeError, match='at least one evaluator'):
        assert_trajectory(messages)


def test_the_diff_folds_long_runs_and_stays_short() -> None:
    calls = [
        {'id': str(i), 'type': 'function', 'function': {'name': 'step', 'arguments': f'{{"i": {i}}}'}}
        for i in range(300)
    ]
    messages = [{'role': 'user', 'content': 'go'}, {'role': 'assistant', 'tool_calls': calls}]
    messages += [{'role': 'tool', 'tool_call_id': str(i), 'content': 'ok'} for i in range(300)]
    expected = [{'name': 'step', 'arguments': {'i': i}} for i in range(300)] + [{'name': 'finish'}]
    with pytest.raises(AssertionError) as raised:
        assert_trajectory(messages, ToolCallMatch(expected, mode='unordered'))
    lines = str(raised.value).splitlines()[2:]
    assert lines == ['  = step(i=0)', '  = ... 298 more paired call(s)', '  = step(i=299)', '  - finish(...)']
    many = [{'name': 'other', 'arguments': {'i': i}} for i in range(100)]
    with pytest.raises(AssertionError) as raised:
        assert_trajectory(messages, ToolCallMatch(many, mode='superset'))
    lines = str(raised.value).splitlines()[2:]
    assert len(lines) == 41 and lines[-1] == '  ... and 360 more line(s)'


def test_the_diff_reads_the_conversation_the_evaluator_scored(run: tuple[Capture, list[ModelMessage]]) -> None:
    captured, messages = run
    evaluator = ToolCallMatch([{'name': 'refund'}], mode='strict', conversation='output')
    with pytest.raises(AssertionError) as raised:
        assert_trajectory(captured, evaluator, output=messages[:3])  # the run up to the first call's answer
    assert str(raised.value).splitlines()[2:] == ['  - refund(...)', "  + lookup_order(order_id='A1')"]
