"""Haystack's fixtures give the scenario's trajectory as exactly as each trace records it.

`haystack3/` (haystack-ai 3.4.1) traces every call in a span of its own: with content tracing on it
reads completely (call ids from the issuing `step.llm` reply), without content it has every call
and request but no argument, result, call id, model or token. `haystack/` (haystack-ai 2.31.0) runs
all calls of one model response in one `ToolInvoker` span: the two calls of response 1 share a
span, read as two calls (each from its own `tool_call` and `tool_call_result`, in the reply's
order); without content no ToolInvoker span says which tools it ran, so that route has no call at
all. Every difference from the scenario is spelled out below.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentic_evals import evaluate_traces_sync, extract_trajectory, read_traces
from agentic_evals.trajectory.run_io import trace_inputs, trace_output
from agentic_evals.trajectory.run_metrics import span_tree_metrics
from agentic_evals.trajectory.walk import count

from ..factories import TreeBuilder
from .scenario import (
    ANSWER,
    EXPERT,
    FIXTURES,
    ORCHESTRATOR,
    PROMPT,
    REQUESTS,
    Route,
    actual_calls,
    actual_requests,
    expected_calls,
    expected_requests,
)
from .test_scores import REFERENCE, scores

MODELS = ('orchestrator_model', 'expert_model')
FLAKY_RESULT = "Failed to invoke Tool `flaky` with parameters {'attempt': 1}. Error: transient failure"
"""What Haystack's tool invoker gives the model (and records) when a tool raises."""

ROUTES = {
    'haystack3-otel': Route('haystack3/otel.otlp.jsonl', models=MODELS, flaky_result=FLAKY_RESULT),
    # Content tracing off: the tool spans hold the tool's name and error flag only, the model spans nothing.
    'haystack3-otel-no-content': Route(
        'haystack3/otel-no-content.otlp.jsonl',
        models=(None, None),
        arguments=False,
        results_recorded=False,
        call_ids=False,
        tokens=False,
    ),
    'haystack-otel': Route('haystack/otel.otlp.jsonl', models=MODELS, flaky_result=FLAKY_RESULT),
    'haystack-otel-no-content': Route(
        'haystack/otel-no-content.otlp.jsonl',
        models=(None, None),
        arguments=False,
        results_recorded=False,
        call_ids=False,
        tokens=False,
    ),
}

READ_CALLS: dict[str, list[str]] = {
    'haystack3-otel': ['get_weather', 'flaky', 'book_trip', 'ask_expert', 'search_docs'],
    'haystack3-otel-no-content': ['get_weather', 'flaky', 'book_trip', 'ask_expert', 'search_docs'],
    'haystack-otel': ['get_weather', 'flaky', 'book_trip', 'ask_expert', 'search_docs'],
    'haystack-otel-no-content': [],
}
"""The calls each route's trace lets the extraction read."""

NO_CONTENT = (
    "span 'haystack.component.run' (ToolInvoker 'tool_invoker') skipped: it records which tools it ran"
    ' only with content tracing on (HAYSTACK_CONTENT_TRACING_ENABLED=true)'
)
NOTES: dict[str, list[str]] = {
    'haystack3-otel': [],
    'haystack3-otel-no-content': [],
    'haystack-otel': [],
    'haystack-otel-no-content': [NO_CONTENT] * 4,
}

RUN_IO: dict[str, tuple[str | None, str | None]] = {
    'haystack3/otel.otlp.jsonl': (PROMPT, ANSWER),  # haystack.agent.input / haystack.agent.output
    # Content tracing off: the prompt only in the pipeline's input_data (a plain tag), the answer nowhere.
    'haystack3/otel-no-content.otlp.jsonl': (PROMPT, None),
    'haystack/otel.otlp.jsonl': (PROMPT, ANSWER),
    'haystack/otel-no-content.otlp.jsonl': (PROMPT, None),
}

DIFFERENCES: dict[str, dict[str, Any]] = {
    'haystack3-otel': {},
    # no content: no arguments to compare
    'haystack3-otel-no-content': {'nested argument': False, 'accuracy': 0.0},
    'haystack-otel': {},
    # no call at all
    'haystack-otel-no-content': {
        'tools': False,
        'exact': 0.0,
        'in_order': 0.0,
        'any_order': 0.0,
        'with failed': 0.0,
        'nested argument': False,
        'calls 5': False,  # no call could be read: no verdict on their number
        'calls 4': False,
        'expert only': 0.0,
        'orchestrator alone': False,
        'accuracy': 0.0,
    },
}


def _readable(key: str) -> list[tuple[Any, ...]]:
    """The scenario's calls as `key`'s route records them, less those its trace cannot list."""
    return [row for row in expected_calls(ROUTES[key]) if row[0] in READ_CALLS[key]]


@pytest.mark.parametrize('key', ROUTES)
def test_tool_calls(key: str) -> None:
    trajectory = ROUTES[key].trajectory()
    assert [call.name for call in trajectory.tool_calls] == READ_CALLS[key]
    assert actual_calls(trajectory) == _readable(key)
    assert list(trajectory.notes) == NOTES[key]


@pytest.mark.parametrize(
    'key',
    [
        'haystack3-otel',
        'haystack3-otel-no-content',
        'haystack-otel',
        pytest.param(
            'haystack-otel-no-content',
            marks=pytest.mark.xfail(
                reason='without content a Haystack 2.x ToolInvoker span records no tool name: nothing to read',
                strict=True,
            ),
        ),
    ],
)
def test_the_whole_trajectory(key: str) -> None:
    assert actual_calls(ROUTES[key].trajectory()) == expected_calls(ROUTES[key])


@pytest.mark.parametrize('key', ROUTES)
def test_model_requests(key: str) -> None:
    assert actual_requests(ROUTES[key].trajectory()) == expected_requests(ROUTES[key])


@pytest.mark.parametrize('key', ROUTES)
def test_agent_runs(key: str) -> None:
    runs = [(run.name, run.path) for run in ROUTES[key].trajectory().agents]
    assert runs == [('orchestrator', ORCHESTRATOR), ('expert', EXPERT)]


def test_issuing_responses() -> None:
    """With content, each 3.x call is tied to the `step.llm` reply that issued it (its call id comes from there)."""
    trajectory = ROUTES['haystack3-otel'].trajectory()
    assert [call.issued_by for call in trajectory.tool_calls] == [0, 0, 1, 2, 3]
    legacy = ROUTES['haystack-otel'].trajectory()
    assert [call.issued_by for call in legacy.tool_calls] == [0, 0, 1, 2, 3]


@pytest.mark.parametrize(('file', 'expected'), RUN_IO.items(), ids=RUN_IO.keys())
def test_run_inputs_and_output(file: str, expected: tuple[str | None, str | None]) -> None:
    (case,) = evaluate_traces_sync(read_traces(FIXTURES / file)).cases
    assert (case.inputs, case.output) == expected


@pytest.mark.parametrize('key', ROUTES)
def test_requests_and_tokens_are_counted_once(key: str) -> None:
    route = ROUTES[key]
    (trace,) = read_traces(FIXTURES / route.file)
    metrics = span_tree_metrics(trace.tree)
    counted = {k: v for k, v in metrics.items() if k in ('requests', 'input_tokens', 'output_tokens') and v}
    tokens = {'input_tokens': sum(i for _, i, _ in REQUESTS), 'output_tokens': sum(o for _, _, o in REQUESTS)}
    assert counted == {'requests': len(REQUESTS), **(tokens if route.tokens else {})}


@pytest.mark.parametrize('key', ROUTES)
def test_every_evaluator_scores_as_pydantic_ai(key: str) -> None:
    assert scores(ROUTES[key].file) == {**REFERENCE, **DIFFERENCES[key]}


# -- hand-built spans: what the fixtures do not show -----------------------------------------------


def _message(role: str, *parts: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {'role': role, 'meta': meta, 'name': None, 'content': list(parts)}


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {'tool_call': {'tool_name': name, 'arguments': arguments, 'id': call_id, 'extra': None}}


def _result(call: dict[str, Any], result: str, *, error: bool = False) -> dict[str, Any]:
    return {'tool_call_result': {'result': result, 'origin': call['tool_call'], 'error': error}}


USAGE = {'prompt_tokens': 7, 'completion_tokens': 3, 'prompt_tokens_details': {'cached_tokens': 2}}


def test_an_agent_in_a_component_tool_is_named_by_its_tool() -> None:
    """3.x: a ComponentTool wrapping an Agent runs it with no pipeline component around it."""
    b = TreeBuilder()
    outer = b.span('haystack.agent.run', **{'haystack.agent.max_steps': 5})
    step = b.span('haystack.agent.step', outer, **{'haystack.agent.step': 0})
    tool = b.span('haystack.agent.step.tool', step, **{'haystack.tool.name': 'researcher'})
    b.span('haystack.agent.run', tool, **{'haystack.agent.max_steps': 5})
    trajectory = extract_trajectory(b.build())
    assert [(run.name, run.path) for run in trajectory.agents] == [
        ('agent', ('agent',)),
        ('researcher', ('agent', 'researcher')),
    ]
    # content off: the step stands in for its model request, which holds no attribute
    assert [call.name for call in trajectory.tool_calls] == ['researcher']
    assert len(trajectory.model_requests) == 0  # no step.llm child: no request to stand in for


def test_a_generator_component_in_a_pipeline_is_a_model_request() -> None:
    """A chat generator as a pipeline component (2.x and 3.x), and one called inside another component (3.x)."""
    reply = _message('assistant', {'text': 'hi'}, model='m-1', usage=USAGE)
    output = json.dumps({'replies': [reply]})
    b = TreeBuilder()
    root = b.span('haystack.pipeline.run', **{'haystack.pipeline.max_runs_per_component': 100})
    b.span(
        'haystack.component.run',
        root,
        **{'haystack.component.name': 'llm', 'haystack.component.type': 'AnthropicChatGenerator'},
        **{'haystack.component.output': output},
    )
    b.span(
        'haystack.chat_generator.run',
        root,
        **{'haystack.component.name': 'chat_generator', 'haystack.component.type': 'OpenAIChatGenerator'},
    )
    b.span('haystack.component.run', root, **{'haystack.component.name': 'p', 'haystack.component.type': 'Builder'})
    requests = extract_trajectory(b.build()).model_requests
    assert [(r.model, r.input_tokens, r.output_tokens, r.cache_read_tokens) for r in requests] == [
        ('m-1', 7, 3, 2),
        (None, 0, 0, 0),
    ]


def test_a_tool_invoker_that_ran_one_call_is_that_call() -> None:
    """2.x: a ToolInvoker span holding one call gives its name, arguments, id, result and failure."""
    call = _call('c-9', 'lookup', key='a')
    b = TreeBuilder()
    agent = b.span('haystack.agent.run', **{'haystack.agent.max_steps': 5})
    b.span(
        'haystack.component.run',
        agent,
        **{'haystack.component.name': 'chat_generator', 'haystack.component.type': 'OpenAIChatGenerator'},
        **{'haystack.component.output': json.dumps({'replies': [_message('assistant', call, usage=USAGE)]})},
    )
    invoker = b.span(
        'haystack.component.run',
        agent,
        **{'haystack.component.name': 'tool_invoker', 'haystack.component.type': 'ToolInvoker'},
        **{'haystack.component.input': json.dumps({'messages': [_message('assistant', call)]})},
        **{
            'haystack.component.output': json.dumps(
                {'tool_messages': [_message('tool', _result(call, 'no', error=True))]}
            )
        },
    )
    b.span('haystack.agent.run', invoker, **{'haystack.agent.max_steps': 5})  # an Agent in a ComponentTool
    trajectory = extract_trajectory(b.build())
    assert actual_calls(trajectory) == [('lookup', {'key': 'a'}, 'no', 'failed', 'raised', 'agent', ('agent',), 'c-9')]
    assert [run.path for run in trajectory.agents] == [('agent',), ('agent', 'lookup')]
    assert trajectory.tool_calls[0].issued_by == 0


def test_a_tool_invoker_that_ran_several_calls_is_one_call_each_in_the_replys_order() -> None:
    """2.x: each `tool_call` of a ToolInvoker span is a call with its own arguments, id, result and
    status (its `tool_call_result` found by origin id, whatever order the results were recorded in);
    the calls share the span's times, so the reply that issued them orders them."""
    first, second, third = _call('c-1', 'lookup', key='a'), _call('c-2', 'fetch', n=2), _call('c-3', 'lookup', key='b')
    b = TreeBuilder()
    agent = b.span('haystack.agent.run', **{'haystack.agent.max_steps': 5})
    reply = _message('assistant', first, second, third, usage=USAGE)
    b.span(
        'haystack.component.run',
        agent,
        **{'haystack.component.name': 'chat_generator', 'haystack.component.type': 'OpenAIChatGenerator'},
        **{'haystack.component.output': json.dumps({'replies': [reply]})},
    )
    results = [_result(third, 'B'), _result(second, 'boom', error=True), _result(first, 'A')]
    b.span(
        'haystack.component.run',
        agent,
        status='error',
        **{'haystack.component.name': 'tool_invoker', 'haystack.component.type': 'ToolInvoker'},
        **{'haystack.component.input': json.dumps({'messages': [_message('assistant', first, second, third)]})},
        **{'haystack.component.output': json.dumps({'tool_messages': [_message('tool', r) for r in results]})},
    )
    tree = b.build()
    trajectory = extract_trajectory(tree)
    assert actual_calls(trajectory) == [
        ('lookup', {'key': 'a'}, 'A', 'ok', None, 'agent', ('agent',), 'c-1'),
        ('fetch', {'n': 2}, 'boom', 'failed', 'raised', 'agent', ('agent',), 'c-2'),
        ('lookup', {'key': 'b'}, 'B', 'ok', None, 'agent', ('agent',), 'c-3'),
    ]
    assert [call.issued_by for call in trajectory.tool_calls] == [0, 0, 0]
    assert list(trajectory.notes) == []
    # the count a budget makes without extracting agrees: 2 ok, 1 failed, 1 request
    assert tuple(count(tree.nodes_by_id.values())) == (2, 1, 1)


def test_a_tool_invoker_input_haystack_could_not_serialize_is_noted() -> None:
    b = TreeBuilder()
    b.span(
        'haystack.component.run',
        **{'haystack.component.name': 'tools', 'haystack.component.type': 'ToolInvoker'},
        **{'haystack.component.input': "{'messages': [ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>)]}"},
    )
    trajectory = extract_trajectory(b.build())
    assert trajectory.tool_calls == ()
    assert list(trajectory.notes) == [
        "span 'haystack.component.run' (ToolInvoker 'tools') skipped: its input is not JSON"
        ' (Haystack records the Python repr of an input it cannot serialize)'
    ]


def test_a_step_tool_span_with_no_text_name_is_noted() -> None:
    b = TreeBuilder()
    b.span('haystack.agent.step.tool', **{'haystack.tool.name': 3})
    trajectory = extract_trajectory(b.build())
    assert trajectory.tool_calls == ()
    assert list(trajectory.notes) == [
        "span 'haystack.agent.step.tool' skipped: haystack.tool.name is int 3, not a string"
    ]


def test_a_failed_3x_call_with_a_non_text_result() -> None:
    b = TreeBuilder()
    b.span(
        'haystack.agent.step.tool',
        status='error',
        **{'haystack.tool.name': 'fetch', 'haystack.agent.step.tool.input': '{"n": 1}'},
        **{'haystack.agent.step.tool.output': '{"rows": [1, 2]}'},
    )
    (call,) = extract_trajectory(b.build()).tool_calls
    assert (call.status, call.failure_stage, call.arguments, call.result) == (
        'failed',
        'raised',
        {'n': 1},
        '{"rows": [1, 2]}',
    )


def test_an_agent_component_without_an_agent_run_span_and_legacy_messages() -> None:
    """An Agent component span with no `haystack.agent.run` inside is the run; `_role`/`_content` fields
    (haystack-ai before 2.10) read as `role`/`content`."""
    prompt = {'_role': 'user', '_meta': {}, '_name': None, '_content': [{'text': 'hello'}]}
    answer = {
        '_role': 'assistant',
        '_meta': {'model': 'm', 'usage': USAGE},
        '_name': None,
        '_content': [{'text': 'bye'}],
    }
    b = TreeBuilder()
    agent = b.span(
        'haystack.component.run',
        **{'haystack.component.name': 'helper', 'haystack.component.type': 'Agent'},
        **{'haystack.component.input': json.dumps({'messages': [prompt]})},
        **{'haystack.component.output': json.dumps({'messages': [prompt, answer]})},
    )
    b.span(
        'haystack.component.run',
        agent,
        **{'haystack.component.name': 'chat_generator', 'haystack.component.type': 'OpenAIChatGenerator'},
        **{'haystack.component.output': json.dumps({'replies': [answer]})},
    )
    tree = b.build()
    trajectory = extract_trajectory(tree)
    assert [(run.name, run.path) for run in trajectory.agents] == [('helper', ('helper',))]
    assert actual_requests(trajectory) == [('m', 7, 3, ('helper',))]
    assert (trace_inputs(tree), trace_output(tree)) == ('hello', 'bye')
