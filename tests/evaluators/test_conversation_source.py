"""Every deterministic evaluator pointed at a conversation in the case's output or inputs."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_evals.evaluators import Evaluator
from scenario import run_scenario

from agentic_evals import (
    ArgumentCorrectness,
    MaxModelRequests,
    MaxToolCalls,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCorrectness,
    TrajectoryMatch,
    capture,
    evaluator_context,
)

OWN_CALLS = [
    'search',
    'fetch',
    'check_status',
    'compute',
    'search',
    'fetch',
    'ask_expert',
    'run_report_job',
    'delete_draft',
]


def evaluators(source: Any) -> list[Evaluator[object, object, object]]:
    """The main agent's own calls: a message history holds no sub-agent's."""
    scope: dict[str, Any] = {'agent': 'main', 'include_subagents': False, 'conversation': source}
    return [
        ToolCorrectness(OWN_CALLS, **scope),
        TrajectoryMatch(['search', 'fetch', 'compute', 'ask_expert'], **scope),
        TrajectoryMatch(OWN_CALLS, order='exact', **scope),
        ArgumentCorrectness('compute', {'a': 2, 'b': 3}, **scope),
        MaxToolCalls(12, include_failed=False, **scope),
        ToolCallAccuracy([{'name': 'search', 'args': {'query': 'opentelemetry genai tool spans'}}], **scope),
        ToolCallF1([{'name': 'compute', 'args': {'a': 2, 'b': 3}}], **scope),
    ]


@pytest.fixture(scope='module')
def scenario() -> tuple[Any, Any]:
    provider = TracerProvider()
    with capture(provider) as captured:
        run = run_scenario(version=5, tracer_provider=provider)
    return captured.tree, run.messages


@pytest.mark.parametrize('source', ['output', 'inputs'])
def test_a_conversation_scores_like_the_spans_of_the_same_run(scenario: tuple[Any, Any], source: str) -> None:
    tree, messages = scenario
    from_spans = [e.evaluate(evaluator_context(tree)) for e in evaluators(None)]
    ctx = evaluator_context(tree, **{source: messages})
    from_messages = [e.evaluate(ctx) for e in evaluators(source)]
    # The one difference (docs/conversations.md): run_report_job, deferred with CallDeferred and its
    # result supplied later, is deferred in the spans but an answered, ok call in the messages,
    # answered after delete_draft. Evaluators that do not look at it agree exactly.
    assert [r.value for r in from_spans] == [False, 2 * 0.5 / 1.5, 0.0, True, True, 0.0, 2 * 0.125 / 1.125]
    assert [r.value for r in from_messages] == [
        True,
        2 * (4 / 9) / (1 + 4 / 9),
        0.0,
        True,
        True,
        0.0,
        2 * (1 / 9) / (1 + 1 / 9),
    ]
    assert from_spans[0].reason == "missing tools: 'run_report_job' (x1) (agent 'main', sub-agents excluded)"
    assert (
        from_messages[3].reason
        == from_spans[3].reason
        == "Tool 'compute' called with {'a': 2, 'b': 3} (agent 'main', sub-agents excluded)"
    )
    assert from_messages[4].reason == "9 tool call(s), budget=12 (agent 'main', sub-agents excluded)"


def test_model_requests_come_from_the_conversation(scenario: tuple[Any, Any]) -> None:
    tree, messages = scenario
    result = MaxModelRequests(5, conversation='output').evaluate(evaluator_context(tree, output=messages))
    assert (result.value, result.reason) == (False, '10 model request(s) (from ctx.output), budget=5')


def test_a_run_result_is_read_through_all_messages(scenario: tuple[Any, Any]) -> None:
    _, messages = scenario

    class Result:
        def all_messages(self) -> list[Any]:
            return messages

    result = ToolCorrectness(['search'], allow_extra=True, conversation='output').evaluate(
        evaluator_context(None, output=Result())  # type: ignore[arg-type]
    )
    assert result.value is True


@pytest.mark.parametrize(
    ('output', 'reason'),
    [
        (None, 'no conversation to score: ctx.output is None'),
        (42, 'ctx.output is not a conversation: '),
        ([{'role': 'user'}, {'type': 'ai'}], 'ctx.output is not a conversation: '),
    ],
)
def test_no_or_malformed_conversation_fails_with_the_reason(output: Any, reason: str) -> None:
    for evaluator in evaluators('output'):
        result = evaluator.evaluate(evaluator_context(None, output=output))  # type: ignore[arg-type]
        assert result.value in (False, 0.0)
        assert (result.reason or '').startswith(reason), (evaluator, result.reason)
