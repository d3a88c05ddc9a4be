"""DSPy's `dspy.ReAct` under OpenInference gives the scenario's trajectory as DSPy runs it.

DSPy runs the scenario differently (`fixtures/frameworks/dspy/generate.py`), and every difference
is spelled out here as data:

- ReAct issues ONE tool per step, in text (`next_thought` / `next_tool_name` / `next_tool_args`,
  parsed by the ChatAdapter): response 1's two calls are two requests, and no call has an id;
- each run ends with ReAct's own `finish` tool (an output call: kept out of the scored calls), then
  one more request (the `extract` step) writes the answer: 9 requests, not 6, with their own tokens;
- `flaky`'s error reaches the model as ReAct's observation `Execution error in flaky: ` + a
  traceback (its frames name the generating machine's paths: compared by its first and last line);
- DSPy has no agent names: both runs are named after their module class, `ReAct`, the expert's
  path `('ReAct', 'ReAct')` from its nesting in the `ask_expert` call; so `agent='expert'` /
  `agent='orchestrator'` find nothing (the orchestrator alone is `include_subagents=False`);
- the `openinference` route (DSPy's instrumentor alone) records no tokens; `openinference-litellm`
  and its `acall` twin `openinference-litellm-async` (plus LiteLLM's instrumentor) record them on
  LiteLLM's `completion` / `acompletion` spans, model `openai/<model>`.

Tests on hand-built spans at the end cover what the fixtures do not hold.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_evals.otel.span_tree import SpanNode, SpanTree

import agentic_evals as ae
from agentic_evals import evaluate_traces_sync, extract_trajectory, read_traces
from agentic_evals.conventions import dspy
from agentic_evals.conventions import openinference as oi
from agentic_evals.conventions.family import IssuedCall
from agentic_evals.conventions.registry import REGISTRY
from agentic_evals.trajectory.run_metrics import span_tree_metrics

from ..factories import TreeBuilder, context
from . import test_scores
from .scenario import ANSWER, FIXTURES, PROMPT, Route, actual_calls, actual_requests, expected_calls

REACT = ('ReAct',)
EXPERT_REACT = ('ReAct', 'ReAct')
PATHS = {('orchestrator',): REACT, ('orchestrator', 'expert'): EXPERT_REACT}
FLAKY_FIRST_LINE = 'Execution error in flaky: '
FLAKY_LAST_LINE = 'ValueError: transient failure'
FLAKY = '<ReAct observation: traceback>'
"""Stands for the flaky call's result once its first and last lines are checked."""

ROUTES = {
    'openinference': Route(
        'dspy/openinference.otlp.jsonl',
        models=('orchestrator_model', 'expert_model'),
        flaky_result=FLAKY,
        call_ids=False,
        tokens=False,
    ),
    'openinference-litellm': Route(
        'dspy/openinference-litellm.otlp.jsonl',
        models=('openai/orchestrator_model', 'openai/expert_model'),
        flaky_result=FLAKY,
        call_ids=False,
    ),
    # `acall`: `ReAct.aforward`, `{tool}.acall`, `LM.acall` around LiteLLM's `acompletion`.
    'openinference-litellm-async': Route(
        'dspy/openinference-litellm-async.otlp.jsonl',
        models=('openai/orchestrator_model', 'openai/expert_model'),
        flaky_result=FLAKY,
        call_ids=False,
    ),
}
RUN_IO: dict[str, tuple[str | None, str | None]] = {route.file: (PROMPT, ANSWER) for route in ROUTES.values()}
"""The run's `input_args` (its one text field) and output (`answer`), from the outer ReAct span."""

# agent path, input tokens, output tokens, what the request chose: (tool, arguments) or None (the answer)
REQUESTS: tuple[tuple[tuple[str, ...], int, int, tuple[str, dict[str, Any]] | None], ...] = (
    (REACT, 100, 10, ('get_weather', {'city': 'Paris'})),
    (REACT, 105, 10, ('flaky', {'attempt': 1})),
    (REACT, 120, 12, ('book_trip', dict(test_scores.TRIP))),
    (REACT, 140, 14, ('ask_expert', {'question': 'what is otel?'})),
    (EXPERT_REACT, 50, 5, ('search_docs', {'query': 'otel'})),
    (EXPERT_REACT, 55, 5, ('finish', {})),
    (EXPERT_REACT, 60, 6, None),
    (REACT, 150, 15, ('finish', {})),
    (REACT, 160, 16, None),
)


def trajectory(route: Route) -> ae.Trajectory:
    (trace,) = read_traces(FIXTURES / route.file)
    return extract_trajectory(trace.tree)


def dspy_calls(route: Route) -> list[tuple[Any, ...]]:
    """The scenario's calls as ReAct makes them: agents renamed, each run's `finish` where it ran."""
    rows = []
    for name, arguments, result, status, stage, _, path, call_id in expected_calls(route):
        rows.append((name, arguments, result, status, stage, 'ReAct', PATHS[path], call_id))
    finish = ('finish', {}, 'Completed.', 'ok', None, 'ReAct')
    return [*rows, (*finish, EXPERT_REACT, None), (*finish, REACT, None)]


def flaky_shown(calls: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """`calls` with the flaky call's observation checked and replaced by `FLAKY`."""
    (flaky,) = [row for row in calls if row[0] == 'flaky']
    lines = flaky[2].splitlines()
    assert (lines[0], lines[1], lines[-1]) == (FLAKY_FIRST_LINE, 'Traceback (most recent call last):', FLAKY_LAST_LINE)
    return [(*row[:2], FLAKY, *row[3:]) if row is flaky else row for row in calls]


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_tool_calls(route: Route) -> None:
    found = trajectory(route)
    assert flaky_shown(actual_calls(found)) == dspy_calls(route)
    assert [call.is_output_function for call in found.tool_calls] == [False] * 5 + [True] * 2


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_model_requests(route: Route) -> None:
    orchestrator, expert = route.models
    expected = [
        (orchestrator if path == REACT else expert, *((i, o) if route.tokens else (0, 0)), path)
        for path, i, o, _ in REQUESTS
    ]
    assert actual_requests(trajectory(route)) == expected


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_each_request_issued_its_step(route: Route) -> None:
    (trace,) = read_traces(FIXTURES / route.file)
    requests = sorted((n for n in trace.tree if REGISTRY.is_model_request(n)), key=lambda n: n.start_timestamp)
    expected = [[] if step is None else [IssuedCall(None, step[0], json.dumps(step[1]))] for *_, step in REQUESTS]
    assert [REGISTRY.issued(node) for node in requests] == expected


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_agent_runs(route: Route) -> None:
    assert [(run.name, run.path) for run in trajectory(route).agents] == [('ReAct', REACT), ('ReAct', EXPERT_REACT)]


@pytest.mark.parametrize(('file', 'expected'), RUN_IO.items(), ids=RUN_IO.keys())
def test_run_inputs_and_output(file: str, expected: tuple[str | None, str | None]) -> None:
    (case,) = evaluate_traces_sync(read_traces(FIXTURES / file)).cases
    assert (case.inputs, case.output) == expected


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_requests_and_tokens_are_counted_once(route: Route) -> None:
    (trace,) = read_traces(FIXTURES / route.file)
    metrics = span_tree_metrics(trace.tree)
    counted = {k: v for k, v in metrics.items() if k in ('requests', 'input_tokens', 'output_tokens') and v}
    tokens = {'input_tokens': 940, 'output_tokens': 93} if route.tokens else {}
    assert counted == {'requests': len(REQUESTS), **tokens}


DIFFERENCES: dict[str, Any] = {
    'requests 6': False,  # 9 requests: one tool per step, `finish` and `extract`
    'expert only': 0.0,  # no agent is named `expert` (both are `ReAct`)
    'orchestrator alone': False,  # nor `orchestrator`
}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_every_evaluator_scores_as_pydantic_ai(route: Route) -> None:
    assert test_scores.scores(route.file) == {**test_scores.REFERENCE, **DIFFERENCES}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_the_outer_run_alone(route: Route) -> None:
    """What `agent='orchestrator', include_subagents=False` asks, as DSPy's names allow it."""
    (trace,) = read_traces(FIXTURES / route.file)
    ctx = context(trace.tree)
    own = test_scores.SCORED[:3]
    assert ae.ToolCorrectness(own, include_subagents=False).evaluate(ctx).value is True
    both = ae.TrajectoryMatch(test_scores.SCORED, order='exact', agent='ReAct', include_subagents=False)
    assert both.evaluate(ctx).value == 1.0  # both runs are `ReAct`: each one's own calls


# -- hand-built spans: what the fixtures do not hold ---------------------------------------------------


def tool(b: TreeBuilder, name: str, parent: SpanNode, arguments: dict[str, Any], **attributes: Any) -> SpanNode:
    attrs = {oi.SPAN_KIND: oi.TOOL, oi.INPUT_VALUE: json.dumps({'kwargs': arguments})}
    return b.span(f'{name}.__call__', parent, **attrs, **attributes)


def react(b: TreeBuilder, cls: str = 'ReAct', parent: SpanNode | None = None, **attributes: Any) -> SpanNode:
    inputs = {oi.SPAN_KIND: oi.CHAIN, oi.INPUT_VALUE: json.dumps({'input_args': {'question': 'q'}})}
    return b.span(f'{cls}.forward', parent, **inputs, **attributes)


def steps(*calls: tuple[str, dict[str, Any], Any], first: int = 0) -> str:
    trajectory: dict[str, Any] = {}
    for i, (name, arguments, observation) in enumerate(calls, first):
        trajectory |= {f'tool_name_{i}': name, f'tool_args_{i}': arguments, f'observation_{i}': observation}
    return json.dumps({'trajectory': trajectory, 'reasoning': 'r', 'answer': 'a'})


def test_a_subclass_of_react_names_its_runs() -> None:
    b = TreeBuilder()
    run = react(b, 'Orchestrator')
    call = tool(b, 'ask', run, {'q': 'x'}, **{oi.OUTPUT_VALUE: '"done"'})
    react(b, 'Expert', call)
    found = extract_trajectory(b.build())
    assert [(agent.name, agent.path) for agent in found.agents] == [
        ('Orchestrator', ('Orchestrator',)),
        ('Expert', ('Orchestrator', 'Expert')),
    ]
    assert [(c.name, c.arguments, c.result) for c in found.tool_calls] == [('ask', {'q': 'x'}, 'done')]


def test_other_modules_are_not_runs() -> None:
    b = TreeBuilder()
    b.span('ChainOfThought.forward', **{oi.SPAN_KIND: oi.CHAIN, oi.INPUT_VALUE: '{"question": "q"}'})
    b.span('Helper.forward', **{oi.SPAN_KIND: oi.CHAIN, oi.INPUT_VALUE: '{"input_args": "q"}'})
    assert extract_trajectory(b.build()).agents == ()


def test_a_failed_call_gets_its_observation_after_truncation() -> None:
    """ReAct drops its oldest steps when the context overflows; a step naming no tool ran no span."""
    b = TreeBuilder()
    recorded = steps(
        ('search', {'q': 2}, 'second'),
        ('nope', {}, 'Execution error in nope: KeyError'),
        ('search', {'q': 3}, 'Execution error in search: boom'),
        first=1,
    )
    run = react(b, **{oi.OUTPUT_VALUE: recorded})
    tool(b, 'search', run, {'q': 1}, **{oi.OUTPUT_VALUE: '"first"'})
    tool(b, 'search', run, {'q': 2}, **{oi.OUTPUT_VALUE: '"second"'})
    tool(b, 'search', run, {'q': 3}, status='error')
    found = extract_trajectory(b.build())
    assert [(c.result, c.status) for c in found.tool_calls] == [
        ('first', 'ok'),
        ('second', 'ok'),
        ('Execution error in search: boom', 'failed'),
    ]


def test_arguments_failing_the_tool_schema_fail_validation() -> None:
    b = TreeBuilder()
    run = react(b)
    invalid = {'exception.type': 'ValueError', 'exception.message': 'Arg q is invalid: 1 is not a string'}
    tool(b, 'search', run, {'q': 1}, status='error', **invalid)
    tool(b, 'search', run, {'x': 1}, status='error', **{'exception.message': "Arg x is not in the tool's args."})
    tool(b, 'search', run, {'q': 'a'}, status='error', **{'exception.message': 'Arg q is wrong'})
    stages = [c.failure_stage for c in extract_trajectory(b.build()).tool_calls]
    assert stages == ['validation', 'validation', 'raised']


def test_finish_outside_react_is_a_tool() -> None:
    b = TreeBuilder()
    run = react(b)
    tool(b, 'finish', run, {})
    tool(b, 'finish', b.span('Loop.forward', **{oi.SPAN_KIND: oi.CHAIN}), {})
    assert [c.is_output_function for c in extract_trajectory(b.build()).tool_calls] == [True, False]


def test_a_non_json_result_is_kept_as_recorded() -> None:
    b = TreeBuilder()
    node = tool(b, 'search', react(b), {}, **{oi.OUTPUT_VALUE: '{"a": 1}'})
    other = tool(b, 'search', react(b), {}, **{oi.OUTPUT_VALUE: 'not json'})
    assert (REGISTRY.result(node), REGISTRY.result(other)) == ('{"a": 1}', 'not json')


def test_an_llm_span_holding_another_is_not_a_request() -> None:
    b = TreeBuilder()
    outer = b.span('LM.__call__', **{oi.SPAN_KIND: oi.LLM, oi.OUTPUT_MESSAGE.format(0) + oi.ROLE: 'assistant'})
    inner = b.span('completion', outer, **{oi.SPAN_KIND: oi.LLM, oi.PROMPT_TOKENS: 7, oi.COMPLETION_TOKENS: 1})
    tree: SpanTree = b.build()
    assert (REGISTRY.is_model_request(outer), REGISTRY.is_model_request(inner)) == (False, True)
    assert [(r.input_tokens, r.output_tokens) for r in extract_trajectory(tree).model_requests] == [(7, 1)]


def test_the_family_recognises_its_spans() -> None:
    b = TreeBuilder()
    run = react(b)
    assert dspy.FAMILY.recognises(run) and dspy.FAMILY.recognises(tool(b, 'search', run, {}))
    assert not dspy.FAMILY.recognises(b.span('search', **{oi.SPAN_KIND: oi.TOOL, oi.TOOL_NAME: 'search'}))


def predicted(b: TreeBuilder, run: SpanNode, tool_name: str, arguments: dict[str, Any]) -> SpanNode:
    """One ReAct step's predictor and its LM request, which chose `tool_name`."""
    step = {'next_thought': 't', 'next_tool_name': tool_name, 'next_tool_args': arguments}
    predictor = b.span(
        'Predict(StringSignature).forward', run, **{oi.SPAN_KIND: oi.CHAIN, oi.OUTPUT_VALUE: json.dumps(step)}
    )
    reply = {oi.SPAN_KIND: oi.LLM, oi.MODEL_NAME: 'm', oi.OUTPUT_MESSAGE.format(0) + oi.ROLE: 'assistant'}
    return b.span('LM.__call__', predictor, **reply)


def test_a_request_issues_the_step_its_predictor_parsed() -> None:
    b = TreeBuilder()
    request = predicted(b, react(b), 'search', {'q': 'otel'})
    outside = b.span('LM.__call__', **{oi.SPAN_KIND: oi.LLM, oi.OUTPUT_MESSAGE.format(0) + oi.ROLE: 'assistant'})
    b.build()
    assert REGISTRY.issued(request) == [IssuedCall(None, 'search', '{"q": "otel"}')]
    assert REGISTRY.issued(outside) == []  # not ReAct's: nothing issued


def test_a_step_naming_no_tool_is_noted() -> None:
    """ReAct answers a tool name it does not have with an observation, running no span: the call
    the request issued was never run."""
    b = TreeBuilder()
    run = react(b)
    predicted(b, run, 'nope', {})
    predicted(b, run, 'search', {'q': 'otel'})
    tool(b, 'search', run, {'q': 'otel'}, **{oi.OUTPUT_VALUE: '"found"'})
    found = extract_trajectory(b.build())
    assert [c.name for c in found.tool_calls] == ['search']
    assert any('nope' in note for note in found.notes)


def test_a_run_with_several_fields_gives_them_all() -> None:
    b = TreeBuilder()
    inputs = json.dumps({'input_args': {'city': 'Paris', 'days': 2}})
    output = json.dumps({'trajectory': {}, 'reasoning': 'r', 'plan': 'p', 'cost': 3})
    run = b.span('Planner.forward', **{oi.SPAN_KIND: oi.CHAIN, oi.INPUT_VALUE: inputs, oi.OUTPUT_VALUE: output})
    b.build()
    assert REGISTRY.run_prompt(run) == '{"city": "Paris", "days": 2}'
    assert REGISTRY.run_output(run) == {'plan': 'p', 'cost': 3}
