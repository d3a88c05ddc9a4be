"""The Langfuse fixture gives the scenario's trajectory exactly, and the langfuse family's rules hold
on hand-built observations for what the fixture does not record (other SDKs' and integrations' shapes)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_evals.otel.span_tree import SpanNode, SpanStatus

from agentic_evals import evaluate_traces_sync, extract_trajectory, read_traces
from agentic_evals.conventions import langfuse as lf
from agentic_evals.conventions.family import IssuedCall
from agentic_evals.conventions.registry import REGISTRY
from agentic_evals.trajectory.run_io import trace_inputs, trace_output
from agentic_evals.trajectory.run_metrics import span_tree_metrics

from ..factories import TreeBuilder, context
from . import test_scores
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

ROUTES = {
    # @observe on a hand-written loop: the tool observations carry no call id (recovered from the
    # generation's OpenAI-format output), and flaky's raise leaves no output on its observation.
    'langfuse-observe': Route('langfuse/observe.otlp.jsonl', models=('orchestrator_model', 'expert_model')),
    # The LangChain callback handler on LangGraph: call ids from the tool runs' metadata, results from
    # the ToolMessage outputs; flaky's error leaves no output (LangGraph's error message is the
    # `tools` node's). The two calls of response 1 run as concurrent tasks: this file has them in
    # issue order (see test_parallel_tasks_that_do_not_overlap_take_the_issue_order).
    'langfuse-langchain': Route('langfuse/langchain.otlp.jsonl', models=('orchestrator_model', 'expert_model')),
}
RUN_IO: dict[str, tuple[str | None, str | None]] = {
    # The orchestrator's only argument (`@observe` records {"args": [prompt], "kwargs": {}}) and its output.
    'langfuse/observe.otlp.jsonl': (PROMPT, ANSWER),
    # The graph's input state's user message is a LangChain `(role, text)` pair; the answer is its
    # output state's last (AI) message.
    'langfuse/langchain.otlp.jsonl': (PROMPT, ANSWER),
}
DIFFERENCES: dict[str, dict[str, Any]] = {'langfuse-observe': {}, 'langfuse-langchain': {}}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_tool_calls(route: Route) -> None:
    assert actual_calls(route.trajectory()) == expected_calls(route)


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_model_requests(route: Route) -> None:
    assert actual_requests(route.trajectory()) == expected_requests(route)


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_agent_runs(route: Route) -> None:
    assert [(run.name, run.path) for run in route.trajectory().agents] == [
        ('orchestrator', ORCHESTRATOR),
        ('expert', EXPERT),
    ]


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_calls_are_issued_by_their_generation(route: Route) -> None:
    trajectory = route.trajectory()
    issuers = [call.issued_by for call in trajectory.tool_calls]
    assert issuers == [0, 0, 1, 2, 3]


@pytest.mark.parametrize(('file', 'expected'), RUN_IO.items(), ids=RUN_IO.keys())
def test_run_inputs_and_output(file: str, expected: tuple[str | None, str | None]) -> None:
    (case,) = evaluate_traces_sync(read_traces(FIXTURES / file)).cases
    assert (case.inputs, case.output) == expected


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_requests_and_tokens_are_counted_once(route: Route) -> None:
    (trace,) = read_traces(FIXTURES / route.file)
    metrics = span_tree_metrics(trace.tree)
    assert metrics == {
        'requests': len(REQUESTS),
        'input_tokens': sum(i for _, i, _ in REQUESTS),
        'output_tokens': sum(o for _, _, o in REQUESTS),
    }


@pytest.mark.parametrize('key', ROUTES)
def test_every_evaluator_scores_as_on_pydantic_ai(key: str) -> None:
    (trace,) = read_traces(FIXTURES / ROUTES[key].file)
    ctx = context(trace.tree)
    scores = {name: evaluator.evaluate(ctx).value for name, evaluator in test_scores.EVALUATORS.items()}
    assert scores == {**test_scores.REFERENCE, **DIFFERENCES[key]}


def test_the_issued_calls_are_read_with_their_arguments() -> None:
    (trace,) = read_traces(FIXTURES / ROUTES['langfuse-observe'].file)
    first = min((n for n in trace.tree if n.attributes.get(lf.OBSERVATION_TYPE) == lf.GENERATION), key=_start)
    assert REGISTRY.issued(first) == [
        IssuedCall('call_1', 'get_weather', '{"city": "Paris"}'),
        IssuedCall('call_2', 'flaky', '{"attempt": 1}'),
    ]


def _start(node: SpanNode) -> Any:
    return node.start_timestamp


# -- hand-built observations ---------------------------------------------------------------------------


def observation(
    b: TreeBuilder,
    kind: str,
    name: str,
    parent: SpanNode | None = None,
    *,
    status: SpanStatus = 'unset',
    input: Any = None,
    output: Any = None,
    **attributes: Any,
) -> SpanNode:
    """A span as the Python SDK writes one: a string as itself, anything else as JSON."""
    attrs: dict[str, Any] = {lf.OBSERVATION_TYPE: kind}
    for key, value in ((lf.OBSERVATION_INPUT, input), (lf.OBSERVATION_OUTPUT, output)):
        if value is not None:
            attrs[key] = value if isinstance(value, str) else json.dumps(value)
    attrs.update(attributes)
    return b.span(name, parent, status=status, **attrs)


def arguments_of(recorded: Any) -> tuple[Any, ...]:
    return tuple(REGISTRY.arguments(observation(TreeBuilder(), lf.TOOL, 'search', input=recorded)))


def test_keyword_arguments_of_the_decorator() -> None:
    raw = '{"args": [], "kwargs": {"query": "otel"}}'
    assert arguments_of(raw) == ({'query': 'otel'}, raw, None)


def test_positional_arguments_are_not_named() -> None:
    raw = '{"args": ["otel"], "kwargs": {}}'
    assert arguments_of(raw) == (
        None,
        raw,
        "were recorded as positional values ['otel'], and the trace does not record the parameter names",
    )


def test_an_object_input_is_the_arguments() -> None:
    # A JavaScript `observe` of a one-object function, or `start_observation(input={...})`.
    assert arguments_of({'query': 'otel'})[0] == {'query': 'otel'}
    assert arguments_of({'args': [], 'kwargs': {}, 'other': 1})[0] == {'args': [], 'kwargs': {}, 'other': 1}


@pytest.mark.parametrize(
    ('recorded', 'problem'),
    [
        ('otel', "were recorded as text 'otel', and the trace does not record the parameter names"),
        (['otel', 2], "were recorded as list ['otel', 2], and the trace does not record the parameter names"),
    ],
)
def test_inputs_that_are_not_an_object_say_so(recorded: Any, problem: str) -> None:
    assert arguments_of(recorded)[2] == problem


def test_no_input_is_not_recorded() -> None:
    assert REGISTRY.arguments(observation(TreeBuilder(), lf.TOOL, 'search')).parsed is None


def test_a_failed_tool_by_level_or_status() -> None:
    b = TreeBuilder()
    run = observation(b, lf.AGENT, 'main')
    observation(b, lf.TOOL, 'by_level', run, **{lf.OBSERVATION_LEVEL: 'ERROR', lf.OBSERVATION_STATUS_MESSAGE: 'x'})
    observation(b, lf.TOOL, 'by_status', run, status='error')
    observation(b, lf.TOOL, 'warned', run, output='fine', **{lf.OBSERVATION_LEVEL: 'WARNING'})
    observation(b, 'span', 'not_a_tool', run)
    calls = extract_trajectory(b.build()).tool_calls
    assert [(c.name, c.status, c.failure_stage, c.result, c.agent) for c in calls] == [
        ('by_level', 'failed', 'raised', None, 'main'),
        ('by_status', 'failed', 'raised', None, 'main'),
        ('warned', 'ok', None, 'fine', 'main'),
    ]


def usage_of(usage_details: Any, cost_details: Any = None) -> dict[str, int | float]:
    attrs = {lf.USAGE_DETAILS: json.dumps(usage_details)}
    if cost_details is not None:
        attrs[lf.COST_DETAILS] = json.dumps(cost_details)
    return REGISTRY.usage(observation(TreeBuilder(), lf.GENERATION, 'chat', **attrs))


def test_usage_as_langfuse_counts_it() -> None:
    assert usage_of({'input': 100, 'output': 10, 'total': 110}) == {'input_tokens': 100, 'output_tokens': 10}
    # LangChain's callback handler: `input` less the cached tokens, which get a type of their own.
    cached = {'input': 70, 'input_cache_read': 30, 'output': 10, 'output_reasoning': 4, 'total': 114}
    assert usage_of(cached) == {'input_tokens': 100, 'output_tokens': 14, 'cache_read.input_tokens': 30}
    anthropic = {
        'input_tokens': 10,
        'cache_read_input_tokens': 80,
        'cache_creation_input_tokens': 5,
        'output_tokens': 3,
    }
    assert usage_of(anthropic) == {
        'input_tokens': 95,
        'output_tokens': 3,
        'cache_read.input_tokens': 80,
        'cache_creation.input_tokens': 5,
    }


def test_usage_as_openai_reports_it() -> None:
    chat = {
        'prompt_tokens': 100,
        'completion_tokens': 10,
        'total_tokens': 110,
        'prompt_tokens_details': {'cached_tokens': 40},
        'completion_tokens_details': {'reasoning_tokens': 2},
    }
    assert usage_of(chat) == {'input_tokens': 100, 'output_tokens': 10, 'cache_read.input_tokens': 40}
    responses = {'input_tokens': 100, 'output_tokens': 10, 'input_tokens_details': {'cached_tokens': 40}}
    assert usage_of(responses) == {'input_tokens': 100, 'output_tokens': 10, 'cache_read.input_tokens': 40}


def test_cost_is_the_total_else_the_sum() -> None:
    assert usage_of({'input': 1}, {'input': 0.25, 'output': 0.5, 'total': 0.75})['cost'] == 0.75
    assert usage_of({'input': 1}, {'input': 0.25, 'output': 0.5})['cost'] == 0.75


def test_bad_usage_values_are_not_counted() -> None:
    assert usage_of({'input': -1, 'output': 'ten', 'input_x': True, 'input_big': 10**400}) == {
        'input_tokens': 0,
        'output_tokens': 0,
    }
    assert usage_of('not an object') == {}


def issued_of(output: Any) -> list[IssuedCall]:
    return REGISTRY.issued(observation(TreeBuilder(), lf.GENERATION, 'chat', output=output))


def test_issued_calls_in_every_recorded_format() -> None:
    openai_chat = {
        'role': 'assistant',
        'content': None,
        'tool_calls': [{'id': 'a', 'type': 'function', 'function': {'name': 'f', 'arguments': '{"x": 1}'}}],
    }
    assert issued_of(openai_chat) == [IssuedCall('a', 'f', '{"x": 1}')]
    assert issued_of([openai_chat, {'role': 'assistant', 'content': 'hi'}]) == [IssuedCall('a', 'f', '{"x": 1}')]
    responses = [
        {'type': 'reasoning', 'summary': []},
        {'type': 'function_call', 'call_id': 'b', 'name': 'g', 'arguments': '{}'},
    ]
    assert issued_of(responses) == [IssuedCall('b', 'g', '{}')]
    anthropic = {
        'role': 'assistant',
        'content': [{'type': 'text', 'text': 'ok'}, {'type': 'tool_use', 'id': 'c', 'name': 'h', 'input': {'y': 2}}],
    }
    assert issued_of(anthropic) == [IssuedCall('c', 'h', '{"y": 2}')]
    langchain = {'content': '', 'tool_calls': [{'name': 'k', 'args': {'z': 3}, 'id': 'd', 'type': 'tool_call'}]}
    assert issued_of(langchain) == [IssuedCall('d', 'k', '{"z": 3}')]
    assert issued_of('plain text') == []
    assert REGISTRY.issued(observation(TreeBuilder(), lf.TOOL, 'f', output=openai_chat)) == []


def test_call_ids_come_from_the_issuing_generation() -> None:
    b = TreeBuilder()
    run = observation(b, lf.AGENT, 'main')
    calls = [{'id': f'id_{n}', 'function': {'name': 'f', 'arguments': '{}'}} for n in (1, 2)]
    observation(b, lf.GENERATION, 'chat', run, output={'role': 'assistant', 'tool_calls': calls})
    observation(b, lf.TOOL, 'f', run, input={'args': [], 'kwargs': {}}, output='one')
    observation(b, lf.TOOL, 'f', run, input={'args': [], 'kwargs': {}}, output='two')
    assert [(c.call_id, c.result, c.issued_by) for c in extract_trajectory(b.build()).tool_calls] == [
        ('id_1', 'one', 0),
        ('id_2', 'two', 0),
    ]


def test_positional_arguments_are_named_by_the_issuing_call() -> None:
    b = TreeBuilder()
    run = observation(b, lf.AGENT, 'main')
    call = {'id': 'c1', 'function': {'name': 'get_weather', 'arguments': '{"city": "Paris"}'}}
    observation(b, lf.GENERATION, 'chat', run, output={'role': 'assistant', 'tool_calls': [call]})
    observation(b, lf.TOOL, 'get_weather', run, input={'args': ['Paris'], 'kwargs': {}}, output='Sunny')
    (found,) = extract_trajectory(b.build()).tool_calls
    assert (found.arguments, found.call_id) == ({'city': 'Paris'}, 'c1')


def test_run_prompt_and_answer_shapes() -> None:
    b = TreeBuilder()
    run = observation(b, lf.AGENT, 'main', input={'args': [], 'kwargs': {'user': 'u1', 'query': 'hi'}})
    observation(
        b,
        lf.GENERATION,
        'chat',
        run,
        input=[{'role': 'system', 'content': 's'}, {'role': 'user', 'content': [{'type': 'text', 'text': 'hi there'}]}],
        output=[{'type': 'message', 'role': 'assistant', 'content': [{'type': 'output_text', 'text': 'done'}]}],
    )
    tree = b.build()
    # Two arguments: which is the prompt is not recorded, so the generation's user message is.
    assert (trace_inputs(tree), trace_output(tree)) == ('hi there', 'done')


def test_a_structured_agent_output_is_parsed() -> None:
    b = TreeBuilder()
    observation(b, lf.AGENT, 'main', input='plan', output={'city': 'Paris'})
    tree = b.build()
    assert (trace_inputs(tree), trace_output(tree)) == ('plan', {'city': 'Paris'})


def test_a_tool_observation_without_a_name_is_noted() -> None:
    notes: list[str] = []
    b = TreeBuilder()
    assert lf.classify_call(observation(b, lf.TOOL, ''), notes) is not None
    assert notes == ["span '' skipped: a Langfuse tool observation without a name"]


# -- the LangChain callback handler's shapes -------------------------------------------------------------

LANGGRAPH = {lf.INTEGRATION_METADATA: '"langgraph"'}


def test_langgraph_graphs_are_the_agent_runs_not_their_agent_nodes() -> None:
    b = TreeBuilder()
    graph = observation(b, lf.CHAIN, 'orchestrator', **LANGGRAPH)
    node = observation(b, lf.AGENT, 'agent', graph, **LANGGRAPH, **{lf.LANGGRAPH_NODE_METADATA: '"agent"'})
    observation(b, lf.CHAIN, 'call_model', node, **LANGGRAPH, **{lf.LANGGRAPH_NODE_METADATA: '"agent"'})
    tools = observation(b, lf.CHAIN, 'tools', graph, **LANGGRAPH, **{lf.LANGGRAPH_NODE_METADATA: '"tools"'})
    ask = observation(b, lf.TOOL, 'ask', tools)
    # A graph invoked inside a tool inherits the calling node's metadata: its parent decides.
    observation(b, lf.CHAIN, 'expert', ask, **LANGGRAPH, **{lf.LANGGRAPH_NODE_METADATA: '"tools"'})
    observation(b, lf.AGENT, 'AgentExecutor', ask)  # a LangChain agent: an agent run
    observation(b, lf.CHAIN, 'plain_chain', ask)  # not LangGraph's
    agents = extract_trajectory(b.build()).agents
    assert [(run.name, run.path) for run in agents] == [
        ('orchestrator', ('orchestrator',)),
        ('expert', ('orchestrator', 'expert')),
        ('AgentExecutor', ('orchestrator', 'AgentExecutor')),
    ]


def test_tool_message_outputs_give_the_result_and_the_call_id() -> None:
    b = TreeBuilder()
    message = {'content': 'Sunny', 'type': 'tool', 'name': 'f', 'tool_call_id': 'c9', 'status': 'success'}
    node = observation(b, lf.TOOL, 'f', input={'city': 'Paris'}, output=message)
    assert (REGISTRY.result(node), REGISTRY.call_id(node)) == ('Sunny', 'c9')
    blocks = observation(b, lf.TOOL, 'f', output={**message, 'content': [{'type': 'text', 'text': 'a'}]})
    assert REGISTRY.result(blocks) == 'a'
    # The run's metadata is asked first; an SDK before 5 wrote a text metadata value as itself.
    tagged = observation(b, lf.TOOL, 'f', output=message, **{lf.TOOL_CALL_ID_METADATA: 'c1'})
    assert REGISTRY.call_id(tagged) == 'c1'
    assert REGISTRY.call_id(observation(b, lf.TOOL, 'f', output='text')) is None


def test_a_graph_runs_prompt_and_answer_are_its_states_messages() -> None:
    b = TreeBuilder()
    state_in = {'messages': [['user', 'hi']]}
    answered = {'messages': [{'type': 'human', 'content': 'hi'}, {'type': 'ai', 'content': 'hello'}]}
    observation(b, lf.CHAIN, 'graph', input=state_in, output=answered, **LANGGRAPH)
    tree = b.build()
    assert (trace_inputs(tree), trace_output(tree)) == ('hi', 'hello')
    b = TreeBuilder()
    graph = observation(
        b, lf.CHAIN, 'graph', input=state_in, output={'messages': [{'type': 'tool', 'content': 'x'}]}, **LANGGRAPH
    )
    observation(b, lf.GENERATION, 'chat', graph, output={'role': 'assistant', 'content': 'from the model'})
    assert trace_output(b.build()) == 'from the model'  # the state does not end with an answer


def test_parallel_tasks_that_do_not_overlap_take_the_issue_order() -> None:
    # LangGraph runs a response's calls as `tools` tasks on threads: the second call's tool can start
    # (and end) before the first's when its thread wins; the tool spans then do not overlap.
    b = TreeBuilder()
    graph = observation(b, lf.CHAIN, 'main', **LANGGRAPH)
    calls = [{'name': name, 'args': {}, 'id': i, 'type': 'tool_call'} for i, name in (('c1', 'a'), ('c2', 'b'))]
    observation(b, lf.GENERATION, 'chat', graph, output={'role': 'assistant', 'content': '', 'tool_calls': calls})
    first, second = (observation(b, lf.CHAIN, 'tools', graph, start=10 + n) for n in range(2))
    observation(b, lf.TOOL, 'b', second, start=20, input={}, **{lf.TOOL_CALL_ID_METADATA: '"c2"'})
    observation(b, lf.TOOL, 'a', first, start=30, input={}, **{lf.TOOL_CALL_ID_METADATA: '"c1"'})
    assert [c.call_id for c in extract_trajectory(b.build()).tool_calls] == ['c1', 'c2']
