"""Every framework fixture gives the scenario's trajectory exactly (see `scenario.py`)."""

from __future__ import annotations

import pytest

from .scenario import Route, actual_calls, actual_requests, expected_calls, expected_requests

REDACTED = 'An error occurred while running the tool. Please try again.'
"""What the OpenAI Agents SDK tells the model when a tool raises (the error itself is redacted)."""

ROUTES = {
    'pydantic-ai': Route(
        'pydantic_ai/scenario.otlp.jsonl',
        models=('main-model', 'expert-model'),
        # pydantic-ai ends the run on a plain exception: its scenario's flaky asks for a retry.
        failure_stage='retry',
        flaky_result='transient failure',
    ),
    'adk-v2-content': Route(
        'google_adk/v2-content.otlp.jsonl',
        models=('orchestrator-model', 'expert-model'),
        flaky_result='{"error": "transient failure"}',  # the error callback's answer
    ),
    'adk-v2-no-content': Route(
        'google_adk/v2-no-content.otlp.jsonl',
        models=('orchestrator-model', 'expert-model'),
        arguments=False,
        results_recorded=False,
    ),
    'adk-v1': Route(
        'google_adk/v1.otlp.jsonl',
        models=('orchestrator-model', 'expert-model'),
        flaky_result='{"error": "transient failure"}',
    ),
    'strands-default': Route(
        'strands/default.otlp.jsonl',
        models=('orchestrator_model', 'expert_model'),
        flaky_result='Error: transient failure',  # what Strands told the model
    ),
    'strands-latest': Route('strands/latest.otlp.jsonl', models=('orchestrator_model', 'expert_model')),
    'openai-agents-logfire': Route(
        'openai_agents/logfire.otlp.jsonl',
        models=('orchestrator_model', 'expert_model'),
        flaky_result=REDACTED,  # call ids: recovered from the issuing response's `output` JSON
    ),
    'openai-agents-openllmetry': Route(
        'openai_agents/openllmetry.otlp.jsonl',
        models=('orchestrator_model', 'expert_model'),
        flaky_result=REDACTED,
        call_ids=False,  # only in a later request's input messages
        tokens=False,  # the Chat Completions route records no usage
    ),
    'langgraph-langsmith': Route('langgraph/langsmith.otlp.jsonl', models=('orchestrator-model', 'expert-model')),
}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_tool_calls(route: Route) -> None:
    assert actual_calls(route.trajectory()) == expected_calls(route)


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_model_requests(route: Route) -> None:
    assert actual_requests(route.trajectory()) == expected_requests(route)
