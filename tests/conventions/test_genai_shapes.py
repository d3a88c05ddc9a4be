"""GenAI-convention shapes beyond the fixtures' frameworks: newer operations, and spans that carry more
than the plain rules expect (each found in a real instrumentation, built here by hand)."""

from __future__ import annotations

import json

from pydantic_evals.otel import SpanTree

from agentic_evals import evaluate_traces_sync, extract_trajectory
from agentic_evals.trajectory.walk import count, requests_of, walk

from ..factories import TreeBuilder


def _requests_everywhere(tree: SpanTree) -> tuple[int, int, int]:
    nodes = list(tree.nodes_by_id.values())
    return len(walk(nodes).requests), count(nodes).requests, len(requests_of(nodes))


def test_a_chat_span_naming_the_tools_it_issued_is_a_request() -> None:
    """OpenLIT records the calls a response issued on its `chat` span, `gen_ai.tool.name` included."""
    b = TreeBuilder()
    run = b.agent('main')
    issued = [{'role': 'assistant', 'parts': [{'type': 'tool_call', 'id': 'c1', 'name': 'search', 'arguments': {}}]}]
    b.chat(
        run,
        **{
            'gen_ai.tool.name': 'search',
            'gen_ai.tool.call.id': 'c1',
            'gen_ai.output.messages': json.dumps(issued),
            'gen_ai.usage.input_tokens': 10,
        },
    )
    b.tool('search', run, call_id='c1', arguments={'q': 'x'})
    b.chat(run, **{'gen_ai.usage.input_tokens': 12})
    tree = b.build()
    assert _requests_everywhere(tree) == (2, 2, 2)
    trajectory = extract_trajectory(tree)
    assert [(c.name, c.issued_by) for c in trajectory.tool_calls] == [('search', 0)]


def test_a_request_naming_only_the_response_model_is_counted() -> None:
    """OpenLLMetry's OpenAI Agents Responses spans: `chat`, `gen_ai.response.model`, no request model."""
    b = TreeBuilder()
    run = b.agent('main')
    for tokens in (100, 120):
        b.span(
            'openai.response',
            run,
            **{'gen_ai.operation.name': 'chat', 'gen_ai.response.model': 'gpt-x', 'gen_ai.usage.input_tokens': tokens},
        )
    tree = b.build()
    assert _requests_everywhere(tree) == (2, 2, 2)
    assert [(r.model, r.input_tokens) for r in extract_trajectory(tree).model_requests] == [
        ('gpt-x', 100),
        ('gpt-x', 120),
    ]


def test_an_unnamed_invoke_agent_span_is_a_turn_not_an_agent() -> None:
    """OpenLIT wraps every turn in an `invoke_agent` span that names no agent."""
    b = TreeBuilder()
    run = b.agent('planner')
    turn = b.span('invoke_agent', run, **{'gen_ai.operation.name': 'invoke_agent'})
    b.tool('search', turn, arguments={'q': 'x'})
    trajectory = extract_trajectory(b.build())
    assert [run.name for run in trajectory.agents] == ['planner']
    assert [call.agent_path for call in trajectory.tool_calls] == [('planner',)]


def test_workflow_plan_and_create_agent_spans_are_none_of_a_runs_records() -> None:
    """The conventions' newer operations: `invoke_workflow` (named by `gen_ai.workflow.name`) holds
    the agents; `plan` and `create_agent` are steps beside them, never runs, calls or requests."""
    b = TreeBuilder()
    workflow = b.span(
        'invoke_workflow trip', None, **{'gen_ai.operation.name': 'invoke_workflow', 'gen_ai.workflow.name': 'trip'}
    )
    b.span(
        'create_agent main',
        workflow,
        **{'gen_ai.operation.name': 'create_agent', 'gen_ai.agent.name': 'main', 'gen_ai.request.model': 'm'},
    )
    run = b.agent('main', workflow)
    b.span('plan main', run, **{'gen_ai.operation.name': 'plan', 'gen_ai.agent.name': 'main'})
    b.chat(run, **{'gen_ai.usage.input_tokens': 5})
    b.tool('search', run, arguments={'q': 'x'})
    trajectory = extract_trajectory(b.build())
    assert [(run.name, run.path) for run in trajectory.agents] == [('main', ('main',))]
    assert [call.name for call in trajectory.tool_calls] == ['search']
    assert len(trajectory.model_requests) == 1
    assert trajectory.unrecorded('tool calls') is None and trajectory.unrecorded('model requests') is None


def test_side_traces_are_no_cases() -> None:
    """AutoGen and OpenLIT write each `create_agent` span in a trace of its own: the file scores as one case."""
    from pathlib import Path

    from agentic_evals.traces import LoadedTrace

    def trace(builder: TreeBuilder, name: str) -> LoadedTrace:
        return LoadedTrace(trace_id=f'{builder.trace_id:032x}', tree=builder.build(), sources=(Path(name),))

    side = TreeBuilder(trace_id=2)
    side.span('create_agent helper', None, **{'gen_ai.operation.name': 'create_agent', 'gen_ai.agent.name': 'helper'})
    run = TreeBuilder(trace_id=3)
    root = run.agent('helper')
    run.chat(root)
    run.tool('search', root, arguments={'q': 'x'})
    report = evaluate_traces_sync([trace(side, 'run.jsonl'), trace(run, 'run.jsonl')])
    assert len(report.cases) == 1 and not report.failures
    note = extract_trajectory(side.build()).unrecognised
    assert note is not None and note.startswith('only 1 create_agent span(s)')
