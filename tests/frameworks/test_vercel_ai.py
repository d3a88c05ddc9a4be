"""The Vercel AI SDK fixtures (`fixtures/frameworks/vercel_ai*/`) give the scenario's trajectory exactly.

Three routes, each in both encodings (the JS SDK's `JsonTraceSerializer` and the Collector's file
exporter): ai 7's `otel` (the GenAI-convention `OpenTelemetry` integration of `@ai-sdk/otel`) and
`legacy` (its `LegacyOpenTelemetry`, the `ai.*` spans of ai 4 to 6), and ai 5's own
`experimental_telemetry` (`vercel_ai5/`). No route differs from the scenario in anything these
tests read: the SDK keeps the model's call ids, records every argument and result, and reports
the throwing `flaky` as a failed span without a result.

JavaScript span times have millisecond resolution and the two calls of the first response run
concurrently, so their spans often start in the same millisecond: then only the issuing response
tells their order, which the start-time order of the walk cannot (those tests wait on the
cross-check; the same tests must pass as they are on a run where the two starts differ).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentic_evals import evaluate_traces_sync, extract_trajectory, read_traces
from agentic_evals.conventions.registry import REGISTRY
from agentic_evals.trajectory.run_metrics import span_tree_metrics

from ..factories import context
from . import test_scores
from .scenario import (
    ANSWER,
    CALLS,
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

MODELS = ('orchestrator-model', 'expert-model')
ENCODINGS = ('sdk', 'collector')

FILES = {'vercel-ai-otel': 'vercel_ai/otel', 'vercel-ai-legacy': 'vercel_ai/legacy', 'vercel-ai5': 'vercel_ai5/legacy'}
ROUTES: dict[str, Route] = {
    f'{key}-{encoding}': Route(f'{file}.{encoding}.otlp.jsonl', models=MODELS)
    for key, file in FILES.items()
    for encoding in ENCODINGS
}
LEGACY = [key for key in ROUTES if 'otel' not in key]
"""The routes of `ai.*` spans: ai 7's `LegacyOpenTelemetry` and ai 5's built-in telemetry."""

RUN_IO: dict[str, tuple[str | None, str | None]] = {
    # otel: the `invoke_agent` span's input messages and the last `chat` span's output text;
    # legacy and ai 5: `ai.generateText`'s `ai.prompt` JSON and `ai.response.text`.
    route.file: (PROMPT, ANSWER)
    for route in ROUTES.values()
}


def tied(route: Route) -> bool:
    """Whether the two calls of the first response start at the same time in this fixture."""
    (trace,) = read_traces(FIXTURES / route.file)
    starts = {call.name: call.start for call in extract_trajectory(trace.tree).tool_calls}
    return starts['get_weather'] == starts['flaky']


def test_the_first_responses_calls_tie_on_the_clock_somewhere() -> None:
    """What the ordering is tested on: calls started in one millisecond, ordered by their response."""
    assert any(tied(route) for route in ROUTES.values())


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_tool_calls(route: Route) -> None:
    assert actual_calls(route.trajectory()) == expected_calls(route)


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_every_call_reads_right_whatever_the_order(route: Route) -> None:
    by_id = {row[-1]: row for row in actual_calls(route.trajectory())}
    assert by_id == {row[-1]: row for row in expected_calls(route)}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_model_requests(route: Route) -> None:
    assert actual_requests(route.trajectory()) == expected_requests(route)


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_agent_runs(route: Route) -> None:
    """`functionId` names each run: `gen_ai.agent.name` on `invoke_agent <model>`, `ai.telemetry.functionId`
    on `ai.generateText`; the expert runs inside `ask_expert`."""
    assert [(run.name, run.path) for run in route.trajectory().agents] == [
        ('orchestrator', ORCHESTRATOR),
        ('expert', EXPERT),
    ]


RESPONSES = [CALLS[0:2], CALLS[2:3], CALLS[3:4], CALLS[4:5], (), ()]
"""The calls each model response issued, the requests in start order (the last two answer with text)."""
ISSUED = [[(call_id, name) for name, _, _, call_id, _ in calls] for calls in RESPONSES]
ISSUING_REQUEST = {'call_1': 0, 'call_2': 0, 'call_3': 1, 'call_4': 2, 'call_5': 3}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_each_response_lists_the_calls_it_issued(route: Route) -> None:
    """`chat` spans' `gen_ai.output.messages`, `doGenerate` spans' `ai.response.toolCalls`: in issue
    order, and each call is joined to the response that issued it."""
    (trace,) = read_traces(FIXTURES / route.file)
    requests = sorted((n for n in trace.tree if REGISTRY.is_model_request(n)), key=lambda n: n.start_timestamp)
    assert [REGISTRY.issued_calls(node) for node in requests] == ISSUED
    trajectory = extract_trajectory(trace.tree)
    assert {call.call_id: call.issued_by for call in trajectory.tool_calls} == ISSUING_REQUEST


@pytest.mark.parametrize('key', LEGACY)
def test_legacy_responses_record_the_issued_arguments(key: str) -> None:
    """`ai.response.toolCalls`: each call's `input` an object (ai 7) or JSON text (ai 5)."""
    (trace,) = read_traces(FIXTURES / ROUTES[key].file)
    requests = sorted((n for n in trace.tree if REGISTRY.is_model_request(n)), key=lambda n: n.start_timestamp)
    issued = [[(c.call_id, c.name, json.loads(c.arguments or 'null')) for c in REGISTRY.issued(n)] for n in requests]
    assert issued == [[(call_id, name, arguments) for name, arguments, _, call_id, _ in calls] for calls in RESPONSES]


@pytest.mark.parametrize(('file', 'expected'), RUN_IO.items(), ids=RUN_IO.keys())
def test_run_inputs_and_output(file: str, expected: tuple[str | None, str | None]) -> None:
    (case,) = evaluate_traces_sync(read_traces(FIXTURES / file)).cases
    assert (case.inputs, case.output) == expected


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_requests_and_tokens_are_counted_once(route: Route) -> None:
    """Once per `chat` / `doGenerate` span: never the run totals `invoke_agent` and `ai.generateText` repeat."""
    (trace,) = read_traces(FIXTURES / route.file)
    metrics = span_tree_metrics(trace.tree)
    counted = {k: v for k, v in metrics.items() if k in ('requests', 'input_tokens', 'output_tokens') and v}
    assert counted == {
        'requests': len(REQUESTS),
        'input_tokens': sum(i for _, i, _ in REQUESTS),
        'output_tokens': sum(o for _, _, o in REQUESTS),
    }


ORDERED = 'with failed'
"""The one evaluator that reads the order of the first response's calls (`flaky` among them)."""


def scores(route: Route) -> dict[str, Any]:
    (trace,) = read_traces(FIXTURES / route.file)
    ctx = context(trace.tree)
    return {name: evaluator.evaluate(ctx).value for name, evaluator in test_scores.EVALUATORS.items()}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_every_evaluator_scores_as_on_pydantic_ai(route: Route) -> None:
    found = scores(route)
    del found[ORDERED]
    assert found == {k: v for k, v in test_scores.REFERENCE.items() if k != ORDERED}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_the_order_sensitive_evaluator_too(route: Route) -> None:
    assert scores(route)[ORDERED] == test_scores.REFERENCE[ORDERED]
