"""LangGraph.js under OpenInference's LangChain.js instrumentation gives the scenario's trajectory.

`fixtures/frameworks/langgraph_js/` (see its NOTES.md): each route in both encodings, the JS SDK's
`JsonTraceSerializer` (`.sdk.`) and the Collector's file exporter (`.collector.`). The `openinference`
route is one trace; in `openinference-unpropagated` the expert graph, invoked without the tool's
config, is a trace of its own, so its agent path starts at `expert` and each trace is scored alone.

The rules these fixtures exercise are also pinned on hand-built spans at the end: the graph's
`metadata` JSON parsed (JavaScript writes it without spaces), the ToolMessage JSON of a LangChain.js
tool run, the call a ToolNode ran read from its messages state or `Send` input, and the calls an
LLM span issued with the ids only its LLMResult holds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_evals.otel.span_tree import SpanNode, SpanStatus

from agentic_evals import Trajectory, evaluate_traces_sync, extract_trajectory, read_traces
from agentic_evals.conventions import openinference as oi
from agentic_evals.conventions.family import IssuedCall
from agentic_evals.conventions.registry import REGISTRY
from agentic_evals.trajectory.run_metrics import span_tree_metrics

from ..factories import TreeBuilder, context
from .scenario import (
    ANSWER,
    CALLS,
    EXPERT,
    EXPERT_ANSWER,
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
from .test_scores import EVALUATORS, REFERENCE

FOLDER = 'langgraph_js'
ENCODINGS = ('sdk', 'collector')
MODELS = ('orchestrator-model', 'expert-model')
QUESTION = 'what is otel?'


def file(route: str, encoding: str) -> str:
    return f'{FOLDER}/{route}.{encoding}.otlp.jsonl'


# `flaky`'s TOOL span records no output: its result is None, as on the Python LangGraph route (the
# text the model saw, "Error: transient failure\n Please fix your mistakes.", is on the `tools` span).
ROUTES = {encoding: Route(file('openinference', encoding), models=MODELS) for encoding in ENCODINGS}
UNPROPAGATED = {encoding: file('openinference-unpropagated', encoding) for encoding in ENCODINGS}

RUN_IO: dict[str, tuple[str | None, str | None]] = {
    **{route.file: (PROMPT, ANSWER) for route in ROUTES.values()},
    # Two traces: the orchestrator's case, then the expert's, (QUESTION, EXPERT_ANSWER).
    **{path: (PROMPT, ANSWER) for path in UNPROPAGATED.values()},
}


# -- the one-trace route ---------------------------------------------------------------------------


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_tool_calls(encoding: str) -> None:
    assert actual_calls(ROUTES[encoding].trajectory()) == expected_calls(ROUTES[encoding])


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_model_requests(encoding: str) -> None:
    assert actual_requests(ROUTES[encoding].trajectory()) == expected_requests(ROUTES[encoding])


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_agent_runs(encoding: str) -> None:
    runs = [(run.name, run.path) for run in ROUTES[encoding].trajectory().agents]
    assert runs == [('orchestrator', ORCHESTRATOR), ('expert', EXPERT)]


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_the_expert_runs_inside_ask_expert(encoding: str) -> None:
    trajectory = ROUTES[encoding].trajectory()
    (ask,) = [call for call in trajectory.tool_calls if call.name == 'ask_expert']
    (expert,) = [run for run in trajectory.agents if run.name == 'expert']
    assert ask.call_id == 'call_4'
    assert ask.start <= expert.start and expert.end <= ask.end


@pytest.mark.parametrize('path', sorted(RUN_IO))
def test_run_inputs_and_output(path: str) -> None:
    cases = evaluate_traces_sync(read_traces(FIXTURES / path)).cases
    expected = [RUN_IO[path]]
    if path in UNPROPAGATED.values():
        expected.append((QUESTION, EXPERT_ANSWER))
    assert [(case.inputs, case.output) for case in cases] == expected


def counted(tree: Any) -> dict[str, Any]:
    metrics = span_tree_metrics(tree)
    return {k: v for k, v in metrics.items() if k in ('requests', 'input_tokens', 'output_tokens') and v}


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_requests_and_tokens_are_counted_once(encoding: str) -> None:
    (trace,) = read_traces(FIXTURES / ROUTES[encoding].file)
    assert counted(trace.tree) == {'requests': 6, 'input_tokens': 630, 'output_tokens': 63}


def scores(tree: Any) -> dict[str, Any]:
    ctx = context(tree)
    return {name: evaluator.evaluate(ctx).value for name, evaluator in EVALUATORS.items()}  # type: ignore[union-attr]


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_every_evaluator_scores_as_pydantic_ai(encoding: str) -> None:
    (trace,) = read_traces(FIXTURES / ROUTES[encoding].file)
    assert scores(trace.tree) == REFERENCE


def test_the_encodings_read_alike() -> None:
    sdk, collector = (ROUTES[encoding].trajectory() for encoding in ENCODINGS)
    assert sdk.tool_calls == collector.tool_calls
    assert sdk.model_requests == collector.model_requests
    assert sdk.agents == collector.agents


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_each_response_lists_the_calls_it_issued(encoding: str) -> None:
    """The LLM spans flatten each call's name and arguments but no id: the ids come from the LLMResult."""
    (trace,) = read_traces(FIXTURES / ROUTES[encoding].file)
    responses = sorted(
        (node for node in trace.tree if node.attributes.get(oi.SPAN_KIND) == oi.LLM), key=lambda n: n.start_timestamp
    )
    issued = [[(c.call_id, c.name, json.loads(c.arguments or 'null')) for c in REGISTRY.issued(n)] for n in responses]
    calls = {call_id: (call_id, name, arguments) for name, arguments, _, call_id, _ in CALLS}
    assert issued == [
        [calls['call_1'], calls['call_2']],
        [calls['call_3']],
        [calls['call_4']],
        [calls['call_5']],
        [],
        [],
    ]


# -- the expert in a trace of its own --------------------------------------------------------------


def unpropagated(encoding: str) -> tuple[Trajectory, Trajectory]:
    orchestrator, expert = (extract_trajectory(trace.tree) for trace in read_traces(FIXTURES / UNPROPAGATED[encoding]))
    return orchestrator, expert


ALONE = ('expert',)
"""The expert's agent path when its run is the root of its own trace."""


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_unpropagated_calls(encoding: str) -> None:
    orchestrator, expert = unpropagated(encoding)
    route = Route(UNPROPAGATED[encoding], models=MODELS)
    rows = expected_calls(route)
    assert actual_calls(orchestrator) == [row for row in rows if row[6] == ORCHESTRATOR]
    assert actual_calls(expert) == [(*row[:6], ALONE, row[7]) for row in rows if row[6] == EXPERT]


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_unpropagated_requests_and_runs(encoding: str) -> None:
    orchestrator, expert = unpropagated(encoding)
    rows = expected_requests(Route(UNPROPAGATED[encoding], models=MODELS))
    assert actual_requests(orchestrator) == [row for row in rows if row[3] == ORCHESTRATOR]
    assert actual_requests(expert) == [(*row[:3], ALONE) for row in rows if row[3] == EXPERT]
    assert [(run.name, run.path) for run in orchestrator.agents] == [('orchestrator', ORCHESTRATOR)]
    assert [(run.name, run.path) for run in expert.agents] == [('expert', ALONE)]


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_unpropagated_metrics(encoding: str) -> None:
    orchestrator, expert = (trace.tree for trace in read_traces(FIXTURES / UNPROPAGATED[encoding]))
    assert counted(orchestrator) == {'requests': 4, 'input_tokens': 520, 'output_tokens': 52}
    assert counted(expert) == {'requests': 2, 'input_tokens': 110, 'output_tokens': 11}


ORCHESTRATOR_ALONE = {
    # `search_docs` ran in the other trace: every expectation naming it misses here.
    'tools': False,
    'exact': 0.0,  # exact order wants the whole list
    'in_order': 0.8,  # both steps found, among three calls (F1)
    'any_order': 6 / 7,  # three of four expected calls (F1)
    'with failed': 0.0,
    'calls 4': True,  # three calls
    'requests 5': True,  # four requests
    'expert only': 0.0,
    'accuracy': 0.0,
}
EXPERT_ALONE = {
    'tools': False,
    'exact': 0.0,
    'in_order': 0.0,
    'any_order': 0.4,  # one of four expected calls (F1)
    'with failed': 0.0,
    'nested argument': False,  # no `book_trip` here
    'calls 4': True,
    'requests 5': True,  # two requests
    'orchestrator alone': False,
    'accuracy': 0.0,
}


@pytest.mark.parametrize('encoding', ENCODINGS)
def test_unpropagated_scores(encoding: str) -> None:
    orchestrator, expert = (trace.tree for trace in read_traces(FIXTURES / UNPROPAGATED[encoding]))
    assert scores(orchestrator) == {**REFERENCE, **ORCHESTRATOR_ALONE}
    assert scores(expert) == {**REFERENCE, **EXPERT_ALONE}


def test_the_scenario_names_what_these_tests_expect() -> None:
    assert [name for name, *_ in CALLS] == ['get_weather', 'flaky', 'book_trip', 'ask_expert', 'search_docs']
    assert sum(i for _, i, _ in REQUESTS) == 630


# -- the rules on hand-built spans -----------------------------------------------------------------


def chain(b: TreeBuilder, name: str, parent: SpanNode | None = None, **attributes: Any) -> SpanNode:
    return b.span(name, parent, **{oi.SPAN_KIND: oi.CHAIN, **attributes})


def tool(b: TreeBuilder, name: str, parent: SpanNode, *, status: SpanStatus = 'unset', **attributes: Any) -> SpanNode:
    return b.span(name, parent, status=status, **{oi.SPAN_KIND: oi.TOOL, oi.TOOL_NAME: name, **attributes})


def lc(cls: str, **fields: Any) -> dict[str, Any]:
    """A LangChain.js message as its runs serialise it."""
    return {'lc': 1, 'type': 'constructor', 'id': ['langchain_core', 'messages', cls], 'kwargs': fields}


def tool_output(content: Any, call_id: str, status: str = 'success') -> str:
    message = lc('ToolMessage', status=status, content=content, tool_call_id=call_id, name='t')
    return json.dumps({'output': message}, separators=(',', ':'))


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {'id': call_id, 'name': name, 'args': args, 'type': 'tool_call'}


@pytest.mark.parametrize('separators', [(',', ':'), (', ', ': ')], ids=['javascript', 'python'])
def test_a_graph_is_found_by_its_parsed_metadata(separators: tuple[str, str]) -> None:
    b = TreeBuilder()
    metadata = json.dumps({'ls_integration': 'langgraph'}, separators=separators)
    root = chain(b, 'planner', metadata=metadata)
    chain(b, 'agent', root, metadata=metadata)  # a node inside the graph: not a run
    assert [run.name for run in extract_trajectory(b.build()).agents] == ['planner']


def test_metadata_that_only_mentions_langgraph_is_no_graph() -> None:
    b = TreeBuilder()
    chain(b, 'runnable', metadata=json.dumps({'note': '"ls_integration": "langgraph"'}))
    chain(b, 'other', metadata='{"ls_integration":"langgraph"')  # not JSON
    assert extract_trajectory(b.build()).agents == ()


def test_a_langchain_js_tool_message_is_the_result_and_the_call_id() -> None:
    b = TreeBuilder()
    node = tool(b, 'search', chain(b, 'tools'), **{oi.OUTPUT_VALUE: tool_output('found', 'call_9')})
    b.build()
    assert (REGISTRY.result(node), REGISTRY.call_id(node)) == ('found', 'call_9')
    blocks = [{'type': 'text', 'text': 'a'}, {'type': 'text', 'text': 'b'}]
    other = tool(b, 'search', chain(b, 'tools'), **{oi.OUTPUT_VALUE: tool_output(blocks, 'call_8')})
    b.build()
    assert REGISTRY.result(other) == 'ab'


def tool_node(b: TreeBuilder, calls: list[dict[str, Any]], *, send: bool = False) -> SpanNode:
    """A ToolNode's CHAIN span whose input is the messages state (LangGraph.js `v1`) or a Send."""
    messages = [lc('HumanMessage', content='hi'), lc('AIMessage', content='', tool_calls=calls)]
    state: dict[str, Any] = {'messages': messages}
    if send:
        state['lg_tool_call'] = calls[0]
    attributes: dict[str, Any] = {oi.INPUT_VALUE: json.dumps(state), 'metadata': '{}'}
    return chain(b, 'tools', **attributes)


def test_a_bare_string_is_bound_by_the_call_in_the_messages_state() -> None:
    b = TreeBuilder()
    parent = tool_node(b, [call('get_weather', 'call_1', city='Paris'), call('flaky', 'call_2', attempt=1)])
    weather = tool(
        b, 'get_weather', parent, **{oi.INPUT_VALUE: 'Paris', oi.OUTPUT_VALUE: tool_output('Sunny', 'call_1')}
    )
    failed = tool(b, 'flaky', parent, status='error', **{oi.INPUT_VALUE: '{"attempt":1}'})
    b.build()
    assert REGISTRY.arguments(weather) == ({'city': 'Paris'}, 'Paris', None)
    assert REGISTRY.call_id(failed) == 'call_2'  # no output: the only `flaky` call of the response


def test_a_failed_call_gets_the_id_no_sibling_answered() -> None:
    b = TreeBuilder()
    parent = tool_node(b, [call('search', 'call_1', q='a'), call('search', 'call_2', q='b')])
    tool(b, 'search', parent, **{oi.INPUT_VALUE: 'a', oi.OUTPUT_VALUE: tool_output('x', 'call_1')})
    failed = tool(b, 'search', parent, status='error', **{oi.INPUT_VALUE: 'b'})
    b.build()
    assert REGISTRY.call_id(failed) == 'call_2'
    assert REGISTRY.arguments(failed) == ({'q': 'b'}, 'b', None)


def test_two_unanswered_calls_of_one_name_stay_unbound() -> None:
    b = TreeBuilder()
    parent = tool_node(b, [call('search', 'call_1', q='a'), call('search', 'call_2', q='b')])
    first = tool(b, 'search', parent, status='error', **{oi.INPUT_VALUE: 'a'})
    tool(b, 'search', parent, status='error', **{oi.INPUT_VALUE: 'b'})
    b.build()
    assert REGISTRY.call_id(first) is None
    assert REGISTRY.arguments(first) == (None, 'a', oi.BARE_STRING)


def test_a_send_input_names_its_call() -> None:
    b = TreeBuilder()
    parent = tool_node(b, [call('search', 'call_7', q='otel')], send=True)
    node = tool(b, 'search', parent, status='error', **{oi.INPUT_VALUE: 'otel'})
    b.build()
    assert (REGISTRY.call_id(node), REGISTRY.arguments(node).parsed) == ('call_7', {'q': 'otel'})


def test_a_json_string_literal_is_the_string_it_spells() -> None:
    b = TreeBuilder()
    schema = json.dumps({'type': 'object', 'properties': {'city': {'type': 'string'}}})
    attributes = {oi.INPUT_VALUE: '"Paris"', 'input.mime_type': 'application/json', oi.TOOL_PARAMETERS: schema}
    node = tool(b, 'get_weather', chain(b, 'tools'), **attributes)
    b.build()
    assert REGISTRY.arguments(node) == ({'city': 'Paris'}, '"Paris"', None)


def llm_span(
    b: TreeBuilder,
    *,
    flattened: list[tuple[str | None, str, str]],
    message: dict[str, Any],
    parent: SpanNode | None = None,
) -> SpanNode:
    attributes: dict[str, Any] = {oi.SPAN_KIND: oi.LLM, oi.MODEL_NAME: 'm', oi.PROMPT_TOKENS: 1}
    prefix = oi.OUTPUT_MESSAGE.format(0)
    attributes[prefix + oi.ROLE] = 'assistant'
    for n, (call_id, name, arguments) in enumerate(flattened):
        if call_id is not None:
            attributes[prefix + oi.TOOL_CALL_ID.format(n)] = call_id
        attributes[prefix + oi.TOOL_CALL_FUNCTION.format(n)] = name
        attributes[prefix + oi.TOOL_CALL_ARGUMENTS.format(n)] = arguments
    attributes[oi.OUTPUT_VALUE] = json.dumps({'generations': [[{'text': '', 'message': message}]]})
    return b.span('ChatModel', parent, **attributes)


AI = lc(
    'AIMessage',
    content='',
    tool_calls=[call('get_weather', 'call_1', city='Paris'), call('flaky', 'call_2', attempt=1)],
    additional_kwargs={
        'tool_calls': [
            {'id': 'call_1', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city":"Paris"}'}},
            {'id': 'call_2', 'type': 'function', 'function': {'name': 'flaky', 'arguments': '{"attempt":1}'}},
        ]
    },
)
ISSUED = [IssuedCall('call_1', 'get_weather', '{"city":"Paris"}'), IssuedCall('call_2', 'flaky', '{"attempt":1}')]


def test_issued_calls_take_their_ids_from_the_llm_result() -> None:
    b = TreeBuilder()
    flattened: list[tuple[str | None, str, str]] = [
        (None, 'get_weather', '{"city":"Paris"}'),
        (None, 'flaky', '{"attempt":1}'),
    ]
    node = llm_span(b, flattened=flattened, message=AI)
    b.build()
    assert REGISTRY.issued(node) == ISSUED
    assert REGISTRY.issued_call_ids(node) == ['call_1', 'call_2']
    assert REGISTRY.issued_calls(node) == [('call_1', 'get_weather'), ('call_2', 'flaky')]


def test_issued_calls_come_from_the_llm_result_when_none_are_flattened() -> None:
    b = TreeBuilder()
    node = llm_span(b, flattened=[], message=AI)
    bare = llm_span(b, flattened=[], message=lc('AIMessage', content='', tool_calls=[call('f', 'c1', x=1)]))
    b.build()
    assert REGISTRY.issued(node) == ISSUED
    assert REGISTRY.issued(bare) == [IssuedCall('c1', 'f', '{"x": 1}')]  # the parsed args, written back


def test_flattened_ids_are_kept() -> None:
    b = TreeBuilder()
    node = llm_span(b, flattened=[('id_a', 'get_weather', '{"city": "Paris"}')], message=lc('AIMessage', content=''))
    b.build()
    assert REGISTRY.issued(node) == [IssuedCall('id_a', 'get_weather', '{"city": "Paris"}')]


def test_a_bare_string_outside_a_tool_node_is_named_by_the_issuing_response() -> None:
    """A LangChain.js tool run by something other than a LangGraph ToolNode (an agent loop of one's
    own): the TOOL span's parent holds no call, so only the issuing LLM span names the parameter."""
    b = TreeBuilder()
    loop = chain(b, 'AgentExecutor')
    flattened: list[tuple[str | None, str, str]] = [
        (None, 'get_weather', '{"city":"Paris"}'),
        (None, 'flaky', '{"attempt":1}'),
    ]
    llm_span(b, flattened=flattened, message=AI, parent=loop)
    tool(b, 'get_weather', loop, **{oi.INPUT_VALUE: 'Paris', oi.OUTPUT_VALUE: 'Sunny'})
    tool(b, 'flaky', loop, status='error', **{oi.INPUT_VALUE: '{"attempt":1}'})
    calls = [(c.name, c.arguments, c.call_id) for c in extract_trajectory(b.build()).tool_calls]
    assert calls == [('get_weather', {'city': 'Paris'}, 'call_1'), ('flaky', {'attempt': 1}, 'call_2')]
