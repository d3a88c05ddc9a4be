"""AutoGen's traces of the scenario (`fixtures/frameworks/autogen/`) give its trajectory exactly.

AutoGen runs the sub-agent as `AgentTool(expert)`: the orchestrator's tool is `expert` with the
argument `task`, not `ask_expert{"question": ...}`. AutoGen's own tool spans record no arguments and
no results, and it records no model span: the `core` route has neither arguments nor requests, and
the `openai-v2` route (the OpenAI instrumentation's `chat` spans added) has the arguments only in
each issuing response's `gen_ai.output.messages`. Each file holds three traces: one `create_agent`
span per agent built, each a trace of its own, and the run's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic_evals.evaluators import Evaluator

import agentic_evals as ae
from agentic_evals import LoadedTrace, Trajectory, evaluate_traces_sync, extract_trajectory, read_traces
from agentic_evals.conventions.family import NOT_RECORDED, IssuedCall
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

TASK = {'task': 'what is otel?'}


@dataclass(frozen=True)
class AutoGenRoute(Route):
    """A route whose file holds the run's trace beside one `create_agent` trace per agent built."""

    requests: bool = True
    """Whether the trace has model spans (AutoGen's own tracing records none)."""

    def traces(self) -> list[LoadedTrace]:
        return read_traces(FIXTURES / self.file)

    def run_trace(self) -> LoadedTrace:
        (run,) = [t for t in self.traces() if any(REGISTRY.agent_run(node) for node in t.tree)]
        return run

    def trajectory(self) -> Trajectory:
        return extract_trajectory(self.run_trace().tree)


ROUTES = {
    # AutoGen's own tracing: tool spans with ids, no arguments, no results, no model spans.
    'core': AutoGenRoute(
        'autogen/core.otlp.jsonl',
        models=(None, None),
        arguments=False,
        results_recorded=False,
        tokens=False,
        requests=False,
    ),
    # + opentelemetry-instrumentation-openai-v2: the arguments are in the issuing chat span only.
    'openai-v2': AutoGenRoute(
        'autogen/openai-v2.otlp.jsonl',
        models=('orchestrator_model', 'expert_model'),
        results_recorded=False,  # the results are only in the next request's input messages
    ),
}
SPANS = {'core': 7, 'openai-v2': 13}
"""Spans in the run's trace (beside it, two one-span `create_agent` traces)."""

RUN_IO: dict[str, tuple[str | None, str | None]] = {
    'autogen/core.otlp.jsonl': (None, None),  # no span records a message
    'autogen/openai-v2.otlp.jsonl': (PROMPT, ANSWER),  # the chat spans' input and output messages
}
"""File -> (prompt, answer) of the run's case."""


def autogen_calls(route: Route) -> list[tuple[Any, ...]]:
    """The scenario's calls with AutoGen's agent-as-tool: `expert{"task": ...}` for `ask_expert`."""
    return [
        ('expert', TASK if route.arguments else None, *row[2:]) if row[0] == 'ask_expert' else row
        for row in expected_calls(route)
    ]


def without_arguments(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [(row[0], *row[2:]) for row in rows]


@pytest.mark.parametrize('key', ROUTES)
def test_calls_apart_from_arguments(key: str) -> None:
    """Names, results, statuses, stages, agents and ids, whatever the cross-check adds."""
    route = ROUTES[key]
    assert without_arguments(actual_calls(route.trajectory())) == without_arguments(autogen_calls(route))


def test_core_calls() -> None:
    route = ROUTES['core']
    trajectory = route.trajectory()
    assert actual_calls(trajectory) == autogen_calls(route)
    # Nothing records them and AutoGen has no switch for it: the reason must not send the user to
    # a content setting (pydantic-ai's `include_content`).
    for call in trajectory.tool_calls:
        assert call.raw_arguments is None
        assert call.arguments_problem is not None and 'include_content' not in call.arguments_problem
        assert "AutoGen's tool spans never hold arguments" in call.arguments_problem


def test_openai_v2_calls() -> None:
    """The arguments come from the issuing chat span's `gen_ai.output.messages`, joined by call id."""
    route = ROUTES['openai-v2']
    assert actual_calls(route.trajectory()) == autogen_calls(route)


def test_openai_v2_issued_calls() -> None:
    """Each chat span lists the calls its response issued: id, name and the arguments as JSON text."""
    tree = ROUTES['openai-v2'].run_trace().tree
    responses = [REGISTRY.issued(node) for node in tree if REGISTRY.is_model_request(node)]
    trip = '{"trip":{"city":"Paris","dates":{"from":"2026-05-01","to":"2026-05-03"},"travellers":2}}'
    assert responses == [
        [
            IssuedCall('call_1', 'get_weather', '{"city":"Paris"}'),
            IssuedCall('call_2', 'flaky', '{"attempt":1}'),
        ],
        [IssuedCall('call_3', 'book_trip', trip)],
        [IssuedCall('call_4', 'expert', '{"task":"what is otel?"}')],
        [IssuedCall('call_5', 'search_docs', '{"query":"otel"}')],
        [],
        [],
    ]
    # the arguments decode to the scenario's
    issued = [json.loads(call.arguments or 'null') for response in responses for call in response]
    assert issued == [TASK if name == 'ask_expert' else arguments for name, arguments, *_ in CALLS]


@pytest.mark.parametrize('key', ROUTES)
def test_model_requests(key: str) -> None:
    route = ROUTES[key]
    expected = expected_requests(route) if route.requests else []
    assert actual_requests(route.trajectory()) == expected


def test_calls_name_their_issuing_request() -> None:
    trajectory = ROUTES['openai-v2'].trajectory()
    assert [call.issued_by for call in trajectory.tool_calls] == [0, 0, 1, 2, 3]
    assert [call.issued_by for call in ROUTES['core'].trajectory().tool_calls] == [None] * 5


@pytest.mark.parametrize('key', ROUTES)
def test_agent_runs(key: str) -> None:
    runs = [(run.name, run.path) for run in ROUTES[key].trajectory().agents]
    assert runs == [('orchestrator', ORCHESTRATOR), ('expert', EXPERT)]


@pytest.mark.parametrize('key', ROUTES)
def test_create_agent_is_no_run(key: str) -> None:
    """Three traces per file: one `create_agent <name>` span per agent built, then the run's."""
    route = ROUTES[key]
    traces = route.traces()
    run = route.run_trace()
    sides = [t for t in traces if t.trace_id != run.trace_id]
    assert len(traces) == 3 and len(list(run.tree)) == SPANS[key]
    assert sorted(node.name for t in sides for node in t.tree) == ['create_agent expert', 'create_agent orchestrator']
    for side in sides:
        (node,) = side.tree
        assert REGISTRY.agent_run(node) is None
        trajectory = extract_trajectory(side.tree)
        assert (trajectory.agents, trajectory.tool_calls, trajectory.model_requests) == ((), (), ())
        assert span_tree_metrics(side.tree) == {}


@pytest.mark.parametrize('key', ROUTES)
def test_run_inputs_and_output(key: str) -> None:
    route = ROUTES[key]
    (case,) = evaluate_traces_sync([route.run_trace()]).cases
    assert (case.inputs, case.output) == RUN_IO[route.file]


@pytest.mark.parametrize('key', ROUTES)
def test_the_file_is_one_case(key: str) -> None:
    route = ROUTES[key]
    (case,) = evaluate_traces_sync(route.traces()).cases
    assert (case.inputs, case.output) == RUN_IO[route.file]


@pytest.mark.parametrize('key', ROUTES)
def test_requests_and_tokens_are_counted_once(key: str) -> None:
    route = ROUTES[key]
    metrics = span_tree_metrics(route.run_trace().tree)
    counted = {k: v for k, v in metrics.items() if k in ('requests', 'input_tokens', 'output_tokens') and v}
    totals = {'input_tokens': sum(i for _, i, _ in REQUESTS), 'output_tokens': sum(o for _, _, o in REQUESTS)}
    assert counted == ({'requests': len(REQUESTS), **totals} if route.requests else {})


# -- scores ------------------------------------------------------------------------------------

SCORED = ['get_weather', 'book_trip', 'expert', 'search_docs']
TRIP = dict(CALLS[2][1])
RENAMED: dict[str, Evaluator[Any, Any, Any]] = {
    'tools': ae.ToolCorrectness(SCORED),
    'exact': ae.TrajectoryMatch(SCORED, order='exact'),
    'in_order': ae.TrajectoryMatch(['get_weather', 'expert'], order='in_order'),
    'any_order': ae.TrajectoryMatch(list(reversed(SCORED)), order='any_order'),
    'with failed': ae.TrajectoryMatch(['get_weather', 'flaky', *SCORED[1:]], order='exact', include_failed=True),
    'nested argument': ae.ArgumentCorrectness('book_trip', TRIP, match_mode='exact'),
    'calls 5': ae.MaxToolCalls(5),
    'calls 4': ae.MaxToolCalls(4),
    'requests 6': ae.MaxModelRequests(6),
    'requests 5': ae.MaxModelRequests(5),
    'expert only': ae.TrajectoryMatch(['search_docs'], order='exact', agent='expert'),
    'orchestrator alone': ae.ToolCorrectness(SCORED[:3], agent='orchestrator', include_subagents=False),
    'accuracy': ae.ToolCallAccuracy(
        [
            {'name': 'expert' if name == 'ask_expert' else name, 'args': TASK if name == 'ask_expert' else arguments}
            for name, arguments, *_ in CALLS
            if name != 'flaky'
        ]
    ),
}
"""`test_scores.EVALUATORS` with AutoGen's name for the sub-agent's call (`expert{"task": ...}`)."""

NAME_DIFFERENCES: dict[str, Any] = {
    # `ask_expert` is never called: AutoGen's call is `expert`
    'tools': False,
    'exact': 0.0,
    'in_order': 1 / 3,  # get_weather found, ask_expert not (precision 1/4, recall 1/2)
    'any_order': 0.75,
    'with failed': 0.0,
    'orchestrator alone': False,
    'accuracy': 0.0,  # the names do not align
}
# What a route cannot record: (evaluator -> value, and the marks of values waiting on the cross-check).
RECORDING_DIFFERENCES: dict[str, dict[str, tuple[Any, pytest.MarkDecorator | None]]] = {
    'core': {
        'nested argument': (False, None),  # no arguments anywhere in the trace
        'requests 6': (False, None),  # no model span: no verdict on a budget of requests
        'requests 5': (False, None),
    },
    'openai-v2': {'nested argument': (True, None)},
}
RENAMED_DIFFERENCES: dict[str, dict[str, tuple[Any, pytest.MarkDecorator | None]]] = {
    'core': {**RECORDING_DIFFERENCES['core'], 'accuracy': (0.0, None)},  # the arguments cannot match
    'openai-v2': {**RECORDING_DIFFERENCES['openai-v2'], 'accuracy': (1.0, None)},
}


def _cases(
    evaluators: dict[str, Evaluator[Any, Any, Any]],
    reference: dict[str, Any],
    differences: dict[str, dict[str, tuple[Any, pytest.MarkDecorator | None]]],
) -> list[Any]:
    cases = []
    for key in ROUTES:
        for name in evaluators:
            expected, mark = differences[key].get(name, (reference[name], None))
            cases.append(pytest.param(key, name, expected, id=f'{key}-{name}', marks=() if mark is None else mark))
    return cases


def _score(key: str, evaluator: Evaluator[Any, Any, Any]) -> Any:
    return evaluator.evaluate(context(ROUTES[key].run_trace().tree)).value


def test_renamed_evaluators_are_the_shared_ones() -> None:
    assert RENAMED.keys() == EVALUATORS.keys()


@pytest.mark.parametrize(
    ('key', 'name', 'expected'),
    _cases(EVALUATORS, {**REFERENCE, **NAME_DIFFERENCES}, RECORDING_DIFFERENCES),
)
def test_scores_as_pydantic_ai(key: str, name: str, expected: Any) -> None:
    """`test_scores.EVALUATORS` give the pydantic-ai reference, except for the sub-agent call's name
    and what the route cannot record."""
    assert _score(key, EVALUATORS[name]) == expected


@pytest.mark.parametrize(('key', 'name', 'expected'), _cases(RENAMED, REFERENCE, RENAMED_DIFFERENCES))
def test_renamed_scores_as_pydantic_ai(key: str, name: str, expected: Any) -> None:
    """Named as AutoGen names the sub-agent's call, every evaluator scores as on the reference,
    except what the route cannot record."""
    assert _score(key, RENAMED[name]) == expected


def test_results_are_only_in_the_next_request() -> None:
    """The tool spans record no result; the orchestrator's next request has them all as
    `tool_call_response` parts (the `expert` tool's is the expert's last message)."""
    tree = ROUTES['openai-v2'].run_trace().tree
    last = [node for node in tree if REGISTRY.is_model_request(node)][-1]
    raw = last.attributes['gen_ai.input.messages']
    assert isinstance(raw, str)
    responses = {
        part['id']: part['response']
        for message in json.loads(raw)
        for part in message['parts']
        if part['type'] == 'tool_call_response'
    }
    assert responses == {
        'call_1': 'Sunny, 21 C',
        'call_2': 'transient failure',  # the workbench's error text
        'call_3': 'booked: BK-1',
        'call_4': EXPERT_ANSWER,
    }


# -- the rules on hand-built spans (other versions and routes) ------------------------------------


def test_issued_reads_every_tool_call_part() -> None:
    """Arguments as an object (util-genai) or as the model's text; a missing id or arguments is
    `None`; a part without a text name, or of another type, is no call."""
    parts = [
        {'type': 'text', 'content': 'Checking.'},
        {'type': 'tool_call', 'id': 'a', 'name': 'get_weather', 'arguments': {'city': 'Zürich'}},
        {'type': 'tool_call', 'id': 'b', 'name': 'flaky', 'arguments': '{"attempt": 1}'},
        {'type': 'tool_call', 'name': 'no_id'},
        {'type': 'tool_call', 'id': 'c', 'name': 7, 'arguments': {}},
        {'type': 'tool_call_response', 'id': 'a', 'response': 'Sunny'},
    ]
    b = TreeBuilder()
    chat = b.chat(**{'gen_ai.output.messages': json.dumps([{'role': 'assistant', 'parts': parts}])})
    assert REGISTRY.issued(chat) == [
        IssuedCall('a', 'get_weather', '{"city":"Zürich"}'),
        IssuedCall('b', 'flaky', '{"attempt": 1}'),
        IssuedCall(None, 'no_id', None),
    ]
    assert REGISTRY.issued(b.chat(**{'gen_ai.output.messages': 'not JSON'})) == []
    assert REGISTRY.issued(b.chat()) == []


def test_create_agent_is_never_a_run() -> None:
    b = TreeBuilder()
    built = b.span('create_agent helper', **{'gen_ai.operation.name': 'create_agent', 'gen_ai.agent.name': 'helper'})
    odd = b.span('invoke_agent helper', **{'gen_ai.operation.name': 'create_agent', 'gen_ai.agent.name': 'helper'})
    run = b.span('run', **{'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'helper'})
    assert [REGISTRY.agent_run(node) for node in (built, odd, run)] == [None, None, 'helper']


def test_autogen_tool_spans() -> None:
    """An AutoGen failure is `raised` (it has no retry), even with a result recorded; arguments a
    later version records are read; a span of another system keeps the generic reason."""
    b = TreeBuilder()
    autogen = {'gen_ai.system': 'autogen'}
    failed = b.tool('flaky', status='error', call_id='c1', **{**autogen, 'gen_ai.tool.call.result': 'boom'})
    recorded = b.tool('get_weather', arguments={'city': 'Paris'}, **{'gen_ai.provider.name': 'autogen'})
    other = b.tool('get_weather')
    assert REGISTRY.failure_stage(failed) == 'raised'
    assert REGISTRY.failure_stage(other) == 'raised'  # no result: the conventions' reading
    assert REGISTRY.arguments(recorded).parsed == {'city': 'Paris'}
    problem = REGISTRY.arguments(failed).problem
    assert problem is not None and problem.startswith("not recorded: AutoGen's tool spans")
    assert REGISTRY.arguments(other).parsed is None and REGISTRY.not_recorded(other).problem == NOT_RECORDED
    assert [f for f in REGISTRY.families_in([failed, recorded, other]) if f == 'autogen'] == ['autogen']
