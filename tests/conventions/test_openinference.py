"""The OpenInference family's rules on hand-built spans: the edge cases the fixtures do not hold."""

from __future__ import annotations

import json
from typing import Any

from pydantic_evals.otel.span_tree import SpanNode, SpanStatus

from agentic_evals import extract_trajectory
from agentic_evals.conventions import openinference as oi
from agentic_evals.conventions.registry import REGISTRY

from ..factories import TreeBuilder


def tool(
    b: TreeBuilder, name: Any, parent: SpanNode | None = None, *, status: SpanStatus = 'unset', **attributes: Any
) -> SpanNode:
    return b.span(str(name), parent, status=status, **{oi.SPAN_KIND: oi.TOOL, oi.TOOL_NAME: name}, **attributes)


def llm(b: TreeBuilder, parent: SpanNode | None = None, *, issued: tuple[str, ...] = (), **attributes: Any) -> SpanNode:
    attrs: dict[str, Any] = {oi.SPAN_KIND: oi.LLM, oi.MODEL_NAME: 'm'}
    prefix = oi.OUTPUT_MESSAGE.format(0)
    if issued:
        attrs[prefix + oi.ROLE] = 'assistant'
    for n, call_id in enumerate(issued):
        attrs[prefix + oi.TOOL_CALL_ID.format(n)] = call_id
        attrs[prefix + oi.TOOL_CALL_FUNCTION.format(n)] = 'f'
    attrs.update(attributes)
    return b.span('ChatModel', parent, **attrs)


def arguments_of(input_value: Any, *, parent: SpanNode | None = None, b: TreeBuilder | None = None, **attrs: Any):  # type: ignore[no-untyped-def]
    b = b or TreeBuilder()
    return REGISTRY.arguments(tool(b, 'search', parent, **{oi.INPUT_VALUE: input_value}, **attrs))


def test_json_object_arguments() -> None:
    assert arguments_of('{"query": "otel"}').parsed == {'query': 'otel'}


def test_kwargs_wrappers_are_unwrapped() -> None:
    assert arguments_of('{"kwargs": {"query": "otel"}}').parsed == {'query': 'otel'}  # LlamaIndex
    smolagents = '{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"query": "otel"}}'
    assert arguments_of(smolagents).parsed == {'query': 'otel'}


def test_a_parameter_named_kwargs_is_kept() -> None:
    schema = json.dumps({'properties': {'kwargs': {'type': 'object'}}})
    found = arguments_of('{"kwargs": {"a": 1}}', **{oi.TOOL_PARAMETERS: schema})
    assert found.parsed == {'kwargs': {'a': 1}}


def test_positional_arguments_cannot_be_named() -> None:
    raw = '{"args": ["otel"], "sanitize_inputs_outputs": true, "kwargs": {}}'
    assert arguments_of(raw) == (None, raw, "include positional arguments the trace does not name: ['otel']")


def test_a_bare_string_is_bound_by_the_langgraph_wrapper() -> None:
    b = TreeBuilder()
    call = {'name': 'search', 'args': {'query': 'otel'}, 'id': 'call_5', 'type': 'tool_call'}
    wrapper_input = json.dumps({'__type': 'tool_call_with_context', 'tool_call': call, 'state': {}})
    wrapper = b.span('tools', None, **{oi.SPAN_KIND: oi.CHAIN, oi.INPUT_VALUE: wrapper_input})
    node = tool(b, 'search', wrapper, status='error', **{oi.INPUT_VALUE: 'otel'})
    b.build()  # links parents
    assert REGISTRY.arguments(node) == ({'query': 'otel'}, 'otel', None)
    assert REGISTRY.call_id(node) == 'call_5'  # a failed call has no ToolMessage: the wrapper has the id


def test_a_bare_string_is_bound_by_a_one_parameter_schema() -> None:
    schema = json.dumps({'properties': {'query': {'type': 'string'}}, 'type': 'object'})
    assert arguments_of('otel', **{oi.TOOL_PARAMETERS: schema}).parsed == {'query': 'otel'}


def test_a_bare_string_nothing_names_is_kept_raw() -> None:
    assert arguments_of('otel') == (None, 'otel', oi.BARE_STRING)
    two = json.dumps({'properties': {'a': {}, 'b': {}}})
    assert arguments_of('otel', **{oi.TOOL_PARAMETERS: two}) == (None, 'otel', oi.BARE_STRING)


def test_malformed_and_non_text_input() -> None:
    found = arguments_of('{"query": ')
    assert found.parsed is None and found.raw == '{"query": '
    assert found.problem is not None and found.problem.startswith('could not be parsed as JSON')
    assert arguments_of(7) == (None, None, 'were recorded as int 7, not as text.')


def test_results_unwrap_one_text_envelopes() -> None:
    b = TreeBuilder()
    message = json.dumps({'type': 'tool', 'data': {'content': 'Sunny', 'tool_call_id': 'call_1'}})
    langgraph = tool(b, 'w', **{oi.OUTPUT_VALUE: message})
    output = json.dumps({'blocks': [{'text': 'Sun'}, {'text': 'ny'}], 'tool_name': 'w', 'raw_output': 'Sunny'})
    llamaindex = tool(b, 'w', **{oi.OUTPUT_VALUE: output})
    other = tool(b, 'w', **{oi.OUTPUT_VALUE: '{"weather": "Sunny"}'})
    assert [REGISTRY.result(n) for n in (langgraph, llamaindex, other)] == ['Sunny', 'Sunny', '{"weather": "Sunny"}']
    assert REGISTRY.call_id(langgraph) == 'call_1'


def test_llamaindex_call_id_from_the_call_tool_repr() -> None:
    b = TreeBuilder()
    repr_ = "ToolCall(tool_name='w', tool_kwargs={'note': \"tool_id='x'\"}, tool_id='call_9')"
    step = b.span(
        'BaseWorkflowAgent.call_tool', None, **{oi.SPAN_KIND: oi.CHAIN, oi.INPUT_VALUE: json.dumps({'ev': repr_})}
    )
    ran, other = tool(b, 'w', step), tool(b, 'other', step)
    b.build()
    assert REGISTRY.call_id(ran) == 'call_9'
    assert REGISTRY.call_id(other) is None  # the step ran another tool


def test_non_text_tool_name_is_a_note() -> None:
    b = TreeBuilder()
    tool(b, 3)
    trajectory = extract_trajectory(b.build())
    assert trajectory.tool_calls == ()
    assert trajectory.notes == (f"span '3' skipped: {oi.TOOL_NAME} is int 3, not a string",)


def test_a_failing_wrapper_adds_no_failure() -> None:
    b = TreeBuilder()
    step = b.span('Step 1', None, status='error', **{oi.SPAN_KIND: oi.CHAIN})
    tool(b, 'w', step, **{oi.INPUT_VALUE: '{}'})
    tool(b, 'x', step, status='error', **{oi.INPUT_VALUE: '{}'})
    calls = extract_trajectory(b.build()).tool_calls
    assert [(c.name, c.status, c.failure_stage) for c in calls] == [('w', 'ok', None), ('x', 'failed', 'raised')]


def test_requests_are_llm_spans_with_a_response() -> None:
    b = TreeBuilder()
    step = b.span('run_agent_step', None, **{oi.SPAN_KIND: oi.CHAIN})
    llm(b, step)  # LlamaIndex's `_prepare_chat_with_tools`: a model name, no response
    tokens = {oi.PROMPT_TOKENS: 100, oi.COMPLETION_TOKENS: 10, oi.CACHE_READ_TOKENS: 40, oi.COST_TOTAL: 0.5}
    sent = llm(b, step, issued=('call_2', 'call_1'), **tokens)
    b.span('agent.run', None, **{oi.SPAN_KIND: oi.AGENT, oi.PROMPT_TOKENS: 100})  # repeated totals
    (request,) = extract_trajectory(b.build()).model_requests
    assert (request.model, request.input_tokens, request.output_tokens, request.cache_read_tokens, request.cost) == (
        'm',
        100,
        10,
        40,
        0.5,
    )
    assert REGISTRY.usage(sent) == {
        'input_tokens': 100,
        'output_tokens': 10,
        'cache_read.input_tokens': 40,
        'cost': 0.5,
    }
    assert REGISTRY.issued_call_ids(sent) == ['call_2', 'call_1']


def test_agent_runs_by_framework() -> None:
    b = TreeBuilder()
    graph = b.span('planner', None, **{oi.SPAN_KIND: oi.CHAIN, oi.METADATA: '{"ls_integration": "langgraph"}'})
    node = b.span('agent', graph, **{oi.SPAN_KIND: oi.AGENT, oi.METADATA: '{"ls_integration": "langgraph"}'})
    inner = b.span('call_model', node, **{oi.SPAN_KIND: oi.CHAIN, oi.METADATA: '{"ls_integration": "langgraph"}'})
    named = b.span('x', None, **{oi.SPAN_KIND: oi.AGENT, oi.AGENT_NAME: 'triage'})
    unnamed = b.span('Agent workflow', None, **{oi.SPAN_KIND: oi.AGENT})
    smol = b.span('helper.run', None, **{oi.SPAN_KIND: oi.AGENT, oi.SMOLAGENTS_RUN_KEYS[1]: 20})
    run = b.span('FunctionAgent.run', None, **{oi.SPAN_KIND: oi.CHAIN})
    b.span(
        'BaseWorkflowAgent.init_run', run, **{oi.OUTPUT_VALUE: "AgentInput(input=[...], current_agent_name='writer')"}
    )
    b.build()
    found = [REGISTRY.agent_run(n) for n in (graph, node, inner, named, unnamed, smol, run)]
    assert found == ['planner', None, None, 'triage', None, 'helper', 'writer']
