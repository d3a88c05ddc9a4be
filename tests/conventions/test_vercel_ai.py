"""The Vercel AI SDK's `ai.*` spans as other versions write them (ai 3 and 4 key names, `args` as
JSON text, streamText), built by hand: the fixtures are ai 7's `LegacyOpenTelemetry`."""

from __future__ import annotations

import json

import pytest

from agentic_evals import extract_trajectory
from agentic_evals.conventions.registry import REGISTRY
from agentic_evals.conventions.vercel_ai import unquoted
from agentic_evals.trajectory.run_io import trace_inputs, trace_output
from agentic_evals.trajectory.run_metrics import span_tree_metrics

from ..factories import TreeBuilder


@pytest.mark.parametrize(
    ('raw', 'text'),
    [
        ('"Sunny, 21 C"', 'Sunny, 21 C'),
        ('{"temp": 21}', '{"temp": 21}'),  # an object result stays JSON text
        ('21', '21'),
        ('not json', 'not json'),
        ('"unterminated', '"unterminated'),
    ],
)
def test_results_are_unquoted_only_when_a_json_string(raw: str, text: str) -> None:
    assert unquoted(raw) == text


def ai4_stream_run() -> TreeBuilder:
    """`ai.streamText` as ai 4 records it: `args` JSON text, `promptTokens` / `completionTokens`,
    `gen_ai.usage.input_tokens`, tool spans under the function's span, no function id."""
    b = TreeBuilder()
    run = b.span(
        'ai.streamText',
        **{
            'ai.operationId': 'ai.streamText',
            'ai.model.id': 'gpt-4o',
            'ai.prompt': json.dumps({'system': 'Be brief.', 'prompt': 'Plan a trip.'}),
            'ai.response.text': 'Done.',
            'ai.usage.promptTokens': 30,
            'ai.usage.completionTokens': 3,
        },
    )
    calls = [
        {'toolCallType': 'function', 'toolCallId': 'c1', 'toolName': 'lookup', 'args': '{"q": "a"}'},
        {'toolCallType': 'function', 'toolCallId': 'c2', 'toolName': 'lookup', 'args': '{"q": "b"}'},
    ]
    b.span(
        'ai.streamText.doStream',
        run,
        **{
            'ai.operationId': 'ai.streamText.doStream',
            'ai.model.id': 'gpt-4o',
            'gen_ai.system': 'openai.chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.response.model': 'gpt-4o-2024-08-06',
            'ai.prompt.messages': json.dumps([{'role': 'user', 'content': [{'type': 'text', 'text': 'Plan a trip.'}]}]),
            'ai.response.text': '',
            'ai.response.toolCalls': json.dumps(calls),
            'gen_ai.usage.input_tokens': 10,
            'gen_ai.usage.output_tokens': 1,
            'ai.usage.promptTokens': 10,
            'ai.usage.completionTokens': 1,
        },
    )
    tool = {'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': 'lookup'}
    b.span(
        'ai.toolCall',
        run,
        **tool,
        **{'ai.toolCall.id': 'c1', 'ai.toolCall.args': '{"q": "a"}', 'ai.toolCall.result': '"found"'},
    )
    b.span('ai.toolCall', run, status='error', **tool, **{'ai.toolCall.id': 'c2', 'ai.toolCall.args': '{"q": "b"}'})
    b.span(
        'ai.streamText.doStream',
        run,
        **{
            'ai.operationId': 'ai.streamText.doStream',
            'ai.model.id': 'gpt-4o',
            'ai.response.text': 'Done.',
            # ai 3: only the old names, no `gen_ai.*` at all
            'ai.usage.promptTokens': 20,
            'ai.usage.completionTokens': 2,
        },
    )
    return b


def test_an_ai4_stream_run_reads_whole() -> None:
    tree = ai4_stream_run().build()
    trajectory = extract_trajectory(tree)
    assert [
        (c.name, c.arguments, c.result, c.status, c.failure_stage, c.call_id, c.agent_path)
        for c in trajectory.tool_calls
    ] == [
        ('lookup', {'q': 'a'}, 'found', 'ok', None, 'c1', ('gpt-4o',)),
        ('lookup', {'q': 'b'}, None, 'failed', 'raised', 'c2', ('gpt-4o',)),
    ]
    assert [(r.model, r.input_tokens, r.output_tokens) for r in trajectory.model_requests] == [
        ('gpt-4o-2024-08-06', 10, 1),
        ('gpt-4o', 20, 2),
    ]
    assert [run.name for run in trajectory.agents] == ['gpt-4o']  # no functionId: the model names the run
    assert span_tree_metrics(tree) == {'requests': 2, 'input_tokens': 30, 'output_tokens': 3}
    assert (trace_inputs(tree), trace_output(tree)) == ('Plan a trip.', 'Done.')
    (first, _) = sorted((n for n in tree if REGISTRY.is_model_request(n)), key=lambda n: n.start_timestamp)
    assert [(c.call_id, c.name, c.arguments) for c in REGISTRY.issued(first)] == [
        ('c1', 'lookup', '{"q": "a"}'),
        ('c2', 'lookup', '{"q": "b"}'),
    ]
    assert REGISTRY.issue_positions(first, ['c2', 'c1']) == {'c1': 0, 'c2': 1}


def test_a_tool_span_without_a_name_is_noted() -> None:
    b = TreeBuilder()
    run = b.span('ai.generateText', **{'ai.operationId': 'ai.generateText', 'ai.telemetry.functionId': 'main'})
    b.span('ai.toolCall', run, **{'ai.operationId': 'ai.toolCall', 'ai.toolCall.id': 'c1'})
    trajectory = extract_trajectory(b.build())
    assert list(trajectory.tool_calls) == []
    assert any('ai.toolCall.name' in note for note in trajectory.notes)
