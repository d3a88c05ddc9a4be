"""Evaluators never raise: deep trees, deep JSON, out-of-contract values each fail with a reason.

One regression test per defect class found by fuzzing (issue 8); `tests/fuzz/test_evaluators.py`
draws random ones.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pydantic_evals.evaluators import Evaluator

import agentic_evals as ae
from agentic_evals import trajectory_from_messages
from agentic_evals.trajectory.agents import MAX_AGENT_DEPTH
from agentic_evals.trajectory.extract import extract_trajectory
from agentic_evals.trajectory.rendering import render_trajectory

from ..factories import EPOCH, TreeBuilder, context

DEPTH = 10_000
DEEP_JSON = '[' * 100_000 + ']' * 100_000
CHAT = {'gen_ai.request.model': 'm', 'gen_ai.operation.name': 'chat'}


def evaluators(**scope: Any) -> list[Evaluator[object, object, object]]:
    return [
        ae.ToolCorrectness(['a'], **scope),
        *(ae.TrajectoryMatch(['a'], order=order, **scope) for order in ('exact', 'in_order', 'any_order')),
        ae.ArgumentCorrectness('a', {'x': 1}, **scope),
        ae.MaxToolCalls(3, **scope),
        ae.MaxModelRequests(3, **scope),
        ae.ToolCallAccuracy([{'name': 'a', 'args': {'x': 1}}], **scope),
        ae.ToolCallF1([{'name': 'a', 'args': {'x': 1}}], **scope),
    ]


def results(ctx: Any, **scope: Any) -> dict[str, Any]:
    found = {}
    for evaluator in evaluators(**scope):
        result = evaluator.evaluate(ctx)
        assert isinstance(result.value, (bool, float)) and isinstance(result.reason, str)
        found[evaluator.get_default_evaluation_name()] = result
    return found


@pytest.mark.parametrize('reverse', [False, True], ids=['in-order', 'children-first'])
def test_agent_runs_nested_ten_thousand_deep(reverse: bool) -> None:
    b = TreeBuilder()
    parent = None
    for _ in range(DEPTH):
        parent = b.agent('main', parent)
    b.chat(parent)
    b.tool('a', parent, arguments={'x': 1})
    if reverse:  # every parent starts after its child: the agent resolver climbs the whole chain
        for i, node in enumerate(b.nodes):
            node.start_timestamp = EPOCH + timedelta(seconds=len(b.nodes) - i)
    tree = b.build()
    for scope in ({}, {'agent': 'main', 'include_subagents': False}):
        assert results(context(tree), **scope)['ToolCorrectness'].value is True
    trajectory = extract_trajectory(tree)
    # Paths are capped, so the structure grows with the number of runs, not its square.
    path = trajectory.calls()[0].agent_path
    assert len(path) == MAX_AGENT_DEPTH and path[-1] == 'main'
    assert sum(len(run.path) for run in trajectory.agents) <= DEPTH * MAX_AGENT_DEPTH
    assert sorted(len(run.path) for run in trajectory.agents)[:3] == [1, 2, 3]
    assert 'a' in render_trajectory(trajectory)


def test_a_parent_cycle_ends() -> None:
    b = TreeBuilder()
    first = b.agent('main')
    second = b.agent('expert', first)
    b.tool('a', second)
    first.parent, first.parent_span_id = second, second.span_id
    tree = b.build()
    for node in tree.nodes_by_id.values():  # pydantic-evals links the cycle
        node.parent = second if node is first else node.parent
    results(context(tree), agent='main')
    render_trajectory(extract_trajectory(tree))


def test_arguments_nested_too_deeply_fail_with_a_reason() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('a', root, arguments=DEEP_JSON)
    b.tool('a', root, arguments='{"x": ' + DEEP_JSON + '}')
    found = results(context(b.build()))
    assert 'arguments could not be parsed as JSON: nested too deeply' in found['ArgumentCorrectness'].reason
    assert found['ToolCallAccuracy'].value == 0.0


def test_output_messages_nested_too_deeply_are_no_messages() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    root.attributes.update({'pydantic_ai.all_messages': DEEP_JSON, 'final_result': DEEP_JSON})
    chat = b.span('chat m', root, **CHAT, **{'gen_ai.output.messages': DEEP_JSON, 'gen_ai.input.messages': DEEP_JSON})
    # tool spans under the model span: their issuer is found by call id in the output messages
    b.tool('a', chat, call_id='c1', status='error', **{'pydantic_ai.tool.failure_stage': 'validation'})
    b.tool('a', chat, call_id='c2', arguments={'x': 1})
    tree = b.build()
    results(context(tree))
    assert [c.issued_by for c in extract_trajectory(tree).calls(include_failed=True)] == [None, None]
    render_trajectory(extract_trajectory(tree))


@pytest.mark.parametrize('name', [1.5, None, 3, True, ('a',)])
def test_a_span_name_that_is_not_text_is_no_call(name: Any) -> None:
    b = TreeBuilder()
    root = b.agent('main')
    for node in (b.tool('a', root), b.agent('x', root), b.span('chat m', root, **CHAT)):
        node.name = name
    found = results(context(b.build()))
    assert found['MaxToolCalls'].value is True and 'ToolCorrectness' in found
    render_trajectory(extract_trajectory(b.build()))


@pytest.mark.parametrize('value', [1.5, 3, True, ('a', 'b'), (1, 2), float('nan'), float('inf'), 10**400])
def test_attribute_values_of_other_types_are_absent(value: Any) -> None:
    keys = {
        'agent': ['gen_ai.agent.name', 'agent_name', 'pydantic_ai.all_messages', 'final_result'],
        'chat': ['gen_ai.output.messages', 'gen_ai.input.messages', 'gen_ai.usage.input_tokens', 'operation.cost'],
        'tool': ['gen_ai.tool.call.arguments', 'gen_ai.tool.call.id', 'gen_ai.tool.call.result', 'logfire.msg'],
    }
    b = TreeBuilder()
    root = b.span('invoke_agent main', None, **dict.fromkeys(keys['agent'], value))
    b.span('chat m', root, **CHAT, **dict.fromkeys(keys['chat'], value))
    b.span('execute_tool a', root, **{'gen_ai.tool.name': 'a'}, **dict.fromkeys(keys['tool'], value))
    b.span('running tool', root, **{'gen_ai.tool.name': value})
    tree = b.build()
    results(context(tree))
    trajectory = extract_trajectory(tree)
    assert all(isinstance(r.input_tokens, int) for r in trajectory.requests())
    render_trajectory(trajectory)


@pytest.mark.parametrize('metric', ['x', float('nan'), float('inf'), -float('inf'), None, 10**400])
def test_a_requests_metric_that_is_not_a_count(metric: Any) -> None:
    b = TreeBuilder()
    b.chat(b.agent('main'))
    result = ae.MaxModelRequests(3).evaluate(context(b.build(), metrics={'requests': metric}))
    assert isinstance(result.value, bool) and isinstance(result.reason, str)
    if metric != 10**400:  # not a count: the spans are counted instead
        assert result.value is True and result.reason.startswith('1 ')


def deep_list(depth: int) -> list[Any]:
    top: list[Any] = []
    current = top
    for _ in range(depth):
        current.append([])
        current = current[0]
    return top


@pytest.mark.parametrize(
    'messages',
    [
        DEEP_JSON,
        deep_list(100_000),
        [deep_list(100_000)],
        [{'role': 'user', 'content': deep_list(100_000)}],
        [{'kind': 'request', 'parts': deep_list(100_000)}],
        [{'role': 'assistant', 'tool_calls': [{'function': {'name': 'a', 'arguments': DEEP_JSON}}]}],
        [{'role': 'assistant', 'tool_calls': [{'function': {'name': 'a', 'arguments': {'x': deep_list(100_000)}}}]}],
        [{'type': 'ai', 'content': '', 'tool_calls': [{'name': 'a', 'args': {'x': deep_list(100_000)}}]}],
    ],
    ids=['json', 'list', 'item', 'content', 'parts', 'json-arguments', 'dict-arguments', 'ragas-arguments'],
)
def test_deep_message_lists(messages: Any) -> None:
    ctx = context(TreeBuilder().build())
    ctx.output = messages
    results(ctx, conversation='output')
    try:
        trajectory_from_messages(messages)
    except ValueError as e:
        assert 'nested too deeply' in str(e) or 'message' in str(e)


def test_deep_arguments_in_a_conversation_fail_with_a_reason() -> None:
    messages = [{'role': 'assistant', 'tool_calls': [{'function': {'name': 'a', 'arguments': {'x': deep_list(500)}}}]}]
    call = trajectory_from_messages(messages).tool_calls[0]
    assert call.arguments is None and call.arguments_problem == 'are nested too deeply (more than 200 levels)'


def test_a_running_tool_span_is_a_call_whatever_its_message() -> None:
    """The built-ins decide `running tool` by its name alone (their v2 rule), so do we."""
    b = TreeBuilder()
    b.span('running tool', b.agent('main'), **{'gen_ai.tool.name': 'a', 'logfire.msg': 'running output function: a'})
    tree = b.build()
    assert extract_trajectory(tree).call_names() == ['a']
    assert ae.MaxToolCalls(0).evaluate(context(tree)).value is False
