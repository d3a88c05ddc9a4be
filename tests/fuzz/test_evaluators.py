"""Fuzzing the evaluators: hostile span trees and message lists never make one raise.

Hypothesis draws span trees with random names of any type, random parents (cycles included), deep
chains and attributes of every `AttributeValue` type (huge strings, deep JSON text, non-finite
numbers) under the keys extraction reads, and message lists of every supported shape with hostile
values. Every deterministic evaluator, `extract_trajectory`, `render_trajectory` and
`trajectory_from_messages` must return (or, for the last, raise only `ValueError`/`TypeError`), and
an evaluator's value is a bool or a float with a text reason.

`AGENTIC_EVALS_FUZZ_CASES` scales the number of examples (default `CASES`, about 15 seconds here;
`make fuzz` runs many more).
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_evals.otel import SpanTree
from pydantic_evals.otel.span_tree import SpanNode

import agentic_evals as ae
from agentic_evals import trajectory_from_messages
from agentic_evals.trajectory.extract import extract_trajectory
from agentic_evals.trajectory.rendering import render_trajectory

from ..factories import EPOCH, context

CASES = int(os.environ.get('AGENTIC_EVALS_FUZZ_CASES', '100'))
FUZZ = settings(
    max_examples=CASES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)

KEYS = [
    'gen_ai.tool.name', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.id', 'gen_ai.tool.call.result',
    'gen_ai.agent.name', 'gen_ai.operation.name', 'gen_ai.request.model', 'gen_ai.response.model',
    'gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens',
    'operation.cost', 'logfire.msg', 'agent_name', 'tool_arguments', 'tool_response', 'final_result',
    'pydantic_ai.all_messages', 'pydantic_ai.tool.deferral.name', 'pydantic_ai.tool.failure_stage',
    'pydantic_ai.tool.retry.cause',
    # the other families': OpenInference, LangSmith, OpenLLMetry, logfire's openai-agents, Strands, ADK
    'openinference.span.kind', 'tool.name', 'input.value', 'output.value', 'agent.name', 'graph.node.id',
    'llm.model_name', 'llm.token_count.prompt', 'llm.output_messages.0.message.tool_calls.0.tool_call.id',
    'llm.output_messages.0.message.tool_calls.0.tool_call.function.name', 'metadata',
    'langsmith.span.kind', 'langsmith.metadata.ls_integration', 'langsmith.span.tags', 'gen_ai.prompt',
    'gen_ai.completion', 'traceloop.span.kind', 'name', 'input', 'output', 'gen_ai.tool.status',
    'gen_ai.tool.message.content', 'gen_ai.choice.message', 'gen_ai.user.message.content', 'error.type',
    'gcp.vertex.agent.tool_call_args', 'gcp.vertex.agent.tool_response', 'gcp.vertex.agent.llm_response',
]  # fmt: skip
NAMES = ['invoke_agent main', 'invoke_agent expert', 'agent run', 'chat m', 'execute_tool a', 'execute_tool b',
         'running tool', 'running output function', 'x', 'Function: {name}', 'Agent run: {name!r}',
         'Chat completion with {gen_ai.request.model!r}', 'Step 1', 'expert.run', 'FunctionAgent.run',
         'BaseWorkflowAgent.call_tool', 'call_llm', 'tools']  # fmt: skip
TEXTS = ['a', 'b', 'main', 'chat', 'execute_tool', 'invoke_agent', 'validation', 'validation_error', 'model_retry',
         'running output function: a', 'invalid tool call: a', '{"x": 1}', '{}', '[1]', 'not json', '',
         '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]',
         '[{"parts": [{"type": "tool_call", "id": "c1", "name": "a"}]}]', 'c1', 'TOOL', 'LLM', 'AGENT', 'CHAIN',
         'tool', 'llm', 'chain', 'agent', 'langgraph', 'TOOL_ERROR', 'success', 'error', '{"kwargs": {"x": 1}}',
         '[{"text": "a"}]', '{"output": {"content": "a"}}', '[{"tool_calls": [{"id": "c1", "function": {"name": "a"}}]}]',
         '{"ls_integration": "langgraph"}']  # fmt: skip


def deep_json(depth: int) -> str:
    return '{"x": ' * depth + '1' + '}' * depth


scalars = st.one_of(
    st.sampled_from(TEXTS),
    st.text(max_size=20),
    st.integers(-(2**70), 2**70),
    st.just(10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.builds(lambda n: 'x' * n, st.sampled_from([10_000, 1_000_000])),
    st.builds(deep_json, st.sampled_from([150, 250, 3_000])),
    st.just('[' * 100_000 + ']' * 100_000),
)
attribute_values = st.one_of(
    scalars,
    st.lists(st.sampled_from(TEXTS), max_size=3).map(tuple),
    st.lists(st.integers(), max_size=3).map(tuple),
    st.lists(st.floats(), max_size=3).map(tuple),
    st.lists(st.booleans(), max_size=3).map(tuple),
)
span_names = st.one_of(st.sampled_from(NAMES), st.text(max_size=10), st.floats(), st.integers(), st.none())


@st.composite
def span_trees(draw: st.DrawFn) -> SpanTree:
    nodes: list[SpanNode] = []
    count = draw(st.integers(1, 25))
    chain = draw(st.sampled_from([0] * 8 + [300, 3_000]))  # a deep chain of agent runs above the rest
    for i in range(count + chain):
        deep = i < chain
        attributes: dict[str, Any] = (
            {'gen_ai.agent.name': 'main', 'gen_ai.operation.name': 'invoke_agent'}
            if deep
            else draw(st.dictionaries(st.sampled_from(KEYS), attribute_values, max_size=6))
        )
        parent = (i - 1 if i else None) if deep else draw(st.one_of(st.none(), st.integers(0, count + chain)))
        nodes.append(
            SpanNode(
                name='invoke_agent main' if deep else draw(span_names),  # type: ignore[arg-type]
                trace_id=1,
                span_id=i + 1,
                parent_span_id=None if parent is None else parent + 1,
                start_timestamp=EPOCH + timedelta(milliseconds=draw(st.integers(0, 50)) if not deep else -i),
                end_timestamp=EPOCH + timedelta(seconds=1),
                attributes=attributes,
                status=draw(st.sampled_from(['unset', 'ok', 'error'])),
            )
        )
    tree = SpanTree()
    tree.add_spans(nodes)
    return tree


def evaluators(**options: Any) -> list[Any]:
    return [
        ae.ToolCorrectness(['a', 'b'], **options),
        *(ae.TrajectoryMatch(['a', 'b'], order=order, **options) for order in ('exact', 'in_order', 'any_order')),
        ae.ArgumentCorrectness('a', {'x': 1}, **options),
        ae.ArgumentCorrectness('a', {'x': 1}, match_mode='exact', occurrence='last', **options),
        ae.MaxToolCalls(2, **options),
        ae.MaxModelRequests(2, **options),
        ae.ToolCallAccuracy([{'name': 'a', 'args': {'x': 1}}], **options),
        ae.ToolCallAccuracy([{'name': 'a', 'args': {}}], strict_order=False, **options),
        ae.ToolCallF1([{'name': 'a', 'args': {'x': 1}}], **options),
    ]


SCOPES: list[dict[str, Any]] = [{}, {'agent': 'main'}, {'agent': 'expert', 'include_subagents': False}]


def check(ctx: Any, options: dict[str, Any]) -> None:
    for evaluator in evaluators(**options):
        result = evaluator.evaluate(ctx)
        assert isinstance(result.value, (bool, float)), (evaluator, result)
        assert isinstance(result.reason, str), (evaluator, result)


requests_metrics = st.one_of(
    st.none(), st.integers(-5, 5), st.just(10**400), st.floats(allow_nan=True), st.text(max_size=3)
)


@FUZZ
@given(span_trees(), st.sampled_from(SCOPES), requests_metrics)
def test_span_trees(tree: SpanTree, scope: dict[str, Any], requests: Any) -> None:
    metrics = {} if requests is None else {'requests': requests}
    check(context(tree, metrics=metrics), scope)
    trajectory = extract_trajectory(tree)
    assert isinstance(render_trajectory(trajectory), str)
    for call in trajectory.tool_calls:
        assert isinstance(call.name, str)
    trajectory.requests()
    trajectory.agents  # noqa: B018
    assert all(isinstance(name, str) for name in trajectory.families)
    assert trajectory.unrecognised is None or isinstance(trajectory.unrecognised, str)


def deep_list(depth: int) -> list[Any]:
    top: list[Any] = []
    current = top
    for _ in range(depth):
        current.append([])
        current = current[0]
    return top


values = st.one_of(
    scalars,
    st.none(),
    st.builds(deep_list, st.sampled_from([10, 1_000, 100_000])),
    st.dictionaries(st.text(max_size=3), scalars, max_size=3),
)
openai_messages = st.fixed_dictionaries(
    {'role': st.sampled_from(['user', 'assistant', 'tool', 'system'])},
    optional={
        'content': values,
        'tool_calls': st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    'id': values,
                    'type': st.sampled_from(['function', 'x']),
                    'function': st.fixed_dictionaries({}, optional={'name': values, 'arguments': values}),
                },
            ),
            max_size=3,
        ),
        'tool_call_id': values,
    },
)
pydantic_ai_messages = st.fixed_dictionaries(
    {
        'kind': st.sampled_from(['request', 'response']),
        'parts': st.one_of(
            values,
            st.lists(
                st.fixed_dictionaries(
                    {'part_kind': st.sampled_from(['user-prompt', 'text', 'tool-call', 'tool-return', 'retry-prompt'])},
                    optional={'tool_name': values, 'args': values, 'tool_call_id': values, 'content': values},
                ),
                max_size=3,
            ),
        ),
    },
    optional={'usage': st.dictionaries(st.sampled_from(['input_tokens', 'output_tokens']), values, max_size=2)},
)
ragas_messages = st.fixed_dictionaries(
    {'type': st.sampled_from(['human', 'ai', 'tool', 'system'])},
    optional={
        'content': values,
        'tool_calls': st.one_of(
            values, st.lists(st.fixed_dictionaries({}, optional={'name': values, 'args': values}), max_size=3)
        ),
    },
)
message_lists = st.one_of(
    st.lists(st.one_of(openai_messages, pydantic_ai_messages, ragas_messages, values), max_size=5),
    st.lists(openai_messages, max_size=5),
    st.lists(pydantic_ai_messages, max_size=5),
    st.lists(ragas_messages, max_size=5),
    values,
)


@FUZZ
@given(message_lists, st.sampled_from(SCOPES))
def test_message_lists(messages: Any, scope: dict[str, Any]) -> None:
    ctx = context(SpanTree())
    ctx.output = messages
    check(ctx, {**scope, 'conversation': 'output'})
    try:
        trajectory = trajectory_from_messages(messages)
    except (ValueError, TypeError):
        return
    assert isinstance(render_trajectory(trajectory), str)
