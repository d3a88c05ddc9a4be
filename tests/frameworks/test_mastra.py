"""Mastra's traces of the scenario (`fixtures/frameworks/mastra/`), both routes in both encodings.

`otel-exporter` is `@mastra/otel-exporter` 1.4 (one `chat` span per model step, with its usage);
`otel-bridge` is `@mastra/otel-bridge` 1.5 (one `chat` span per generation, with its totals, over
per-step `model_inference` spans without usage). What Mastra does differently from the scenario:

- the expert is Mastra's sub-agent tool `agent-expert` with argument `prompt` (not `ask_expert` /
  `question`), and its result is Mastra's object, not the expert's text;
- on the bridge route the trace records tokens only per generation: the generation's `chat` span is
  read as its first step's request (with the generation's totals), each later step as a request
  with no tokens, so the totals are right and counted once, not each request's own.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from pydantic_evals.evaluators import Evaluator

from agentic_evals import evaluate_traces_sync, extract_trajectory, read_traces
from agentic_evals.conventions.mastra import prompt_of
from agentic_evals.conventions.registry import REGISTRY
from agentic_evals.trajectory.run_io import trace_inputs, trace_output
from agentic_evals.trajectory.run_metrics import span_tree_metrics

from ..factories import TreeBuilder, context
from .scenario import (
    ANSWER,
    EXPERT,
    EXPERT_ANSWER,
    FIXTURES,
    ORCHESTRATOR,
    PROMPT,
    REQUESTS,
    Route,
    actual_calls,
    actual_requests,
)
from .scenario import expected_calls as scenario_calls
from .scenario import expected_requests as scenario_requests
from .test_scores import EVALUATORS, REFERENCE

MODELS = ('orchestrator-model', 'expert-model')
SUB_AGENT_TOOL = 'agent-expert'
SUB_AGENT_ARGUMENTS = {'prompt': 'what is otel?'}
SUB_AGENT_RESULT = json.dumps(
    {
        'text': EXPERT_ANSWER,
        'subAgentThreadId': 'thread-11',  # Mastra's ids, from the generator's counting `idGenerator`
        'subAgentResourceId': 'generic-12',
        'subAgentToolResults': [
            {
                'toolName': 'search_docs',
                'toolCallId': 'call_5',
                'result': 'OpenTelemetry is an observability framework',
                'args': {'query': 'otel'},
            }
        ],
    },
    separators=(',', ':'),
)

ENCODINGS = ('sdk', 'collector')
EXPORTER = {e: Route(f'mastra/otel-exporter.{e}.otlp.jsonl', models=MODELS) for e in ENCODINGS}
BRIDGE = {e: Route(f'mastra/otel-bridge.{e}.otlp.jsonl', models=MODELS) for e in ENCODINGS}
ROUTES: dict[str, Route] = {
    **{f'otel-exporter-{e}': route for e, route in EXPORTER.items()},
    **{f'otel-bridge-{e}': route for e, route in BRIDGE.items()},
}

RUN_IO: dict[str, tuple[str | None, str | None]] = {
    # the prompt from `mastra.agent_run.input`, the answer from `mastra.agent_run.output`'s `text`
    route.file: (PROMPT, ANSWER)
    for route in ROUTES.values()
}


def expected_calls(route: Route) -> list[tuple[Any, ...]]:
    """The scenario's calls, with Mastra's sub-agent tool in place of `ask_expert`."""
    rows = []
    for row in scenario_calls(route):
        if row[0] == 'ask_expert':
            row = (SUB_AGENT_TOOL, SUB_AGENT_ARGUMENTS, SUB_AGENT_RESULT, *row[3:])
        rows.append(row)
    return rows


def expected_requests(route: Route) -> list[tuple[Any, ...]]:
    if route in EXPORTER.values():
        return scenario_requests(route)
    # The bridge: each generation's totals on its first request (orchestrator 520/52, expert 110/11).
    rows = []
    seen: set[tuple[str, ...]] = set()
    totals = {
        path: (sum(i for p, i, _ in REQUESTS if p == path), sum(o for p, _, o in REQUESTS if p == path))
        for path in (ORCHESTRATOR, EXPERT)
    }
    for model, _, _, path in scenario_requests(route):
        rows.append((model, *(totals[path] if path not in seen else (0, 0)), path))
        seen.add(path)
    return rows


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_tool_calls(route: Route) -> None:
    assert actual_calls(route.trajectory()) == expected_calls(route)


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_model_requests(route: Route) -> None:
    assert actual_requests(route.trajectory()) == expected_requests(route)


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_agent_runs(route: Route) -> None:
    assert [(a.name, a.path) for a in route.trajectory().agents] == [('orchestrator', ORCHESTRATOR), ('expert', EXPERT)]


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_issued_calls(route: Route) -> None:
    """Each request's issued calls (ids, names, arguments) are read from its step's output."""
    (trace,) = read_traces(FIXTURES / route.file)
    requests = [n for n in sorted(trace.tree, key=lambda n: n.start_timestamp) if REGISTRY.is_model_request(n)]
    issued = [[(c.call_id, c.name, json.loads(c.arguments or 'null')) for c in REGISTRY.issued(n)] for n in requests]
    calls = [(row[-1], row[0], row[1]) for row in expected_calls(route)]  # (call id, name, arguments)
    assert issued == [calls[:2], calls[2:3], calls[3:4], calls[4:5], [], []]


@pytest.mark.parametrize(('file', 'expected'), RUN_IO.items(), ids=RUN_IO.keys())
def test_run_inputs_and_output(file: str, expected: tuple[str | None, str | None]) -> None:
    (case,) = evaluate_traces_sync(read_traces(FIXTURES / file)).cases
    assert (case.inputs, case.output) == expected


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_requests_and_tokens_are_counted_once(route: Route) -> None:
    (trace,) = read_traces(FIXTURES / route.file)
    metrics = span_tree_metrics(trace.tree)
    counted = {k: v for k, v in metrics.items() if k in ('requests', 'input_tokens', 'output_tokens') and v}
    assert counted == {'requests': 6, 'input_tokens': 630, 'output_tokens': 63}


def scores(path: str, evaluators: dict[str, Evaluator[Any, Any, Any]]) -> dict[str, Any]:
    (trace,) = read_traces(FIXTURES / path)
    ctx = context(trace.tree)
    return {name: evaluator.evaluate(ctx).value for name, evaluator in evaluators.items()}


DIFFERENCES: dict[str, Any] = {
    # Every expectation naming `ask_expert` misses Mastra's `agent-expert`.
    'tools': False,
    'exact': 0.0,
    'in_order': 1 / 3,
    'any_order': 0.75,
    'with failed': 0.0,
    'orchestrator alone': False,
    'accuracy': 0.0,
}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_every_evaluator_scores_as_pydantic_ai(route: Route) -> None:
    assert scores(route.file, EVALUATORS) == {**REFERENCE, **DIFFERENCES}


def _mastra_names(value: Any) -> Any:
    """An evaluator's expectations with Mastra's name and argument for the sub-agent tool."""
    if value == 'ask_expert':
        return SUB_AGENT_TOOL
    if isinstance(value, dict):
        return {('prompt' if k == 'question' else k): _mastra_names(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mastra_names(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(
            value, **{f.name: _mastra_names(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        )
    return value


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_with_mastras_tool_name_every_evaluator_scores_as_pydantic_ai(route: Route) -> None:
    evaluators = {name: _mastra_names(evaluator) for name, evaluator in EVALUATORS.items()}
    assert scores(route.file, evaluators) == REFERENCE


# --- Shapes of other Mastra versions, hand-built ----------------------------------------------------

SPAN_TYPE = 'mastra.span.type'


def _generation(
    b: TreeBuilder, agent: Any, steps: list[dict[str, Any]], *, inference: bool, usage: tuple[int, int]
) -> None:
    """A generation recorded as one `chat` span with totals over its steps (otel-bridge, or an
    exporter without the model-inference feature); `steps` are each step's extra attributes."""
    generation = b.span(
        'chat m',
        agent,
        **{
            SPAN_TYPE: 'model_generation',
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'm',
            'gen_ai.usage.input_tokens': usage[0],
            'gen_ai.usage.output_tokens': usage[1],
        },
    )
    for n, extra in enumerate(steps):
        output = json.dumps({'text': '', 'toolCalls': [{'toolCallId': f'c{n}', 'toolName': 't', 'args': {'n': n}}]})
        step = b.span(
            'model_step a',
            generation,
            **{SPAN_TYPE: 'model_step', 'gen_ai.operation.name': 'model_step', 'mastra.model_step.output': output},
        )
        if inference:
            step = b.span(
                'model_inference a',
                step,
                **{SPAN_TYPE: 'model_inference', 'gen_ai.operation.name': 'model_inference', **extra},
            )
        else:
            step.attributes.update(extra)
        b.tool('t', step.parent if inference else step, arguments={'n': n}, call_id=f'c{n}')


@pytest.mark.parametrize('inference', [True, False], ids=['model_inference', 'model_step only'])
def test_a_generation_with_totals_is_one_request_per_step(inference: bool) -> None:
    b = TreeBuilder()
    _generation(b, b.agent('a'), [{}, {}, {}], inference=inference, usage=(30, 3))
    tree = b.build()
    trajectory = extract_trajectory(tree)
    assert [(r.model, r.input_tokens, r.output_tokens) for r in trajectory.model_requests] == [
        ('m', 30, 3),
        ('m', 0, 0),
        ('m', 0, 0),
    ]
    assert [c.call_id for c in trajectory.tool_calls] == ['c0', 'c1', 'c2']
    assert span_tree_metrics(tree) == {'requests': 3, 'input_tokens': 30, 'output_tokens': 3}


def test_steps_recording_their_own_usage_are_taken_off_the_totals() -> None:
    b = TreeBuilder()
    steps = [
        {},
        {'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 1},
        {'gen_ai.usage.input_tokens': 14, 'gen_ai.usage.output_tokens': 1},
    ]
    _generation(b, b.agent('a'), steps, inference=True, usage=(36, 3))
    tree = b.build()
    requests = extract_trajectory(tree).model_requests
    assert [(r.input_tokens, r.output_tokens) for r in requests] == [(10, 1), (12, 1), (14, 1)]
    assert span_tree_metrics(tree) == {'requests': 3, 'input_tokens': 36, 'output_tokens': 3}


def test_a_provider_span_under_a_step_is_the_request() -> None:
    """An instrumented provider's `chat` span inside a bridge step is the request, not the step too."""
    b = TreeBuilder()
    agent = b.agent('a')
    _generation(b, agent, [{}, {}], inference=True, usage=(20, 2))
    later = [n for n in b.nodes if n.attributes.get(SPAN_TYPE) == 'model_inference'][1]
    b.chat(later, **{'gen_ai.usage.input_tokens': 11, 'gen_ai.usage.output_tokens': 1})
    tree = b.build()
    assert [(r.input_tokens, r.output_tokens) for r in extract_trajectory(tree).model_requests] == [(9, 1), (11, 1)]


@pytest.mark.parametrize(
    ('raw', 'prompt'),
    [
        ('Plan a trip to Paris.', 'Plan a trip to Paris.'),
        ('[{"role":"user","content":"what is otel?"}]', 'what is otel?'),
        ('[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}]}]', 'hi'),
        ('{"role":"user","content":"one message"}', 'one message'),
        ('[1, 2]', '[1, 2]'),  # text that happens to be JSON stays text
        ('[{"role":"assistant","content":"no user"}]', None),
    ],
)
def test_the_prompt_an_agent_span_recorded(raw: str, prompt: str | None) -> None:
    assert prompt_of(raw) == prompt


def test_the_shape_of_otel_exporter_0_3() -> None:
    """`@mastra/otel-exporter` 0.3.3 with `@mastra/core` 0.24.9 (measured once, not a fixture):
    `agent.{id}` and `tool.execute {tool}` spans, ids only, content under `input` / `output` and
    `gen_ai.tool.input` / `.output`, no call ids on tool spans, a generation `chat` span with totals
    over `step: N` spans (`model_step`) with no inference span."""
    b = TreeBuilder()
    agent = b.span(
        'agent.orchestrator',
        **{
            SPAN_TYPE: 'agent_run',
            'gen_ai.operation.name': 'agent.run',
            'agent.id': 'orchestrator',
            'gen_ai.agent.id': 'orchestrator',
            'input': 'Plan a trip to Paris.',
            'output': '{"text":"Booked.","files":[]}',
        },
    )
    generation = b.span(
        'chat m',
        agent,
        **{
            SPAN_TYPE: 'model_generation',
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'm',
            'gen_ai.usage.input_tokens': 30,
            'gen_ai.usage.output_tokens': 3,
        },
    )
    calls = [
        {'toolCallId': 'c1', 'toolName': 'w', 'args': {'city': 'Paris'}},
        {'toolCallId': 'c2', 'toolName': 'w', 'args': {'city': 'Rome'}},
    ]
    first = b.span(
        'step: 0', generation, **{SPAN_TYPE: 'model_step', 'output': json.dumps({'text': '', 'toolCalls': calls})}
    )
    for city, status in (('Paris', 'ok'), ('Rome', 'error')):
        b.span(
            'tool.execute w',
            first,
            status='error' if status == 'error' else 'unset',
            **{
                SPAN_TYPE: 'tool_call',
                'gen_ai.operation.name': 'tool.execute',
                'gen_ai.tool.name': 'w',
                'gen_ai.tool.input': json.dumps({'city': city}),
                **({'gen_ai.tool.output': 'sunny'} if status == 'ok' else {}),
            },
        )
    b.span('step: 1', generation, **{SPAN_TYPE: 'model_step', 'output': '{"text":"Booked.","toolCalls":[]}'})
    tree = b.build()
    trajectory = extract_trajectory(tree)
    assert [
        (c.name, c.arguments, c.result, c.status, c.failure_stage, c.agent, c.call_id) for c in trajectory.tool_calls
    ] == [
        ('w', {'city': 'Paris'}, 'sunny', 'ok', None, 'orchestrator', 'c1'),
        ('w', {'city': 'Rome'}, None, 'failed', 'raised', 'orchestrator', 'c2'),
    ]
    assert [(r.model, r.input_tokens, r.output_tokens, r.agent) for r in trajectory.model_requests] == [
        ('m', 30, 3, 'orchestrator'),
        ('m', 0, 0, 'orchestrator'),
    ]
    assert (trace_inputs(tree), trace_output(tree)) == ('Plan a trip to Paris.', 'Booked.')
