"""Every OpenInference fixture gives the scenario's trajectory exactly (see `scenario.py`).

Routes whose framework runs the scenario differently (smolagents' managed agent and `final_answer`
calls, CrewAI's default wrappers without model spans) spell out the whole difference here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from .scenario import (
    EXPERT,
    EXPERT_ANSWER,
    ORCHESTRATOR,
    Route,
    actual_calls,
    actual_requests,
    expected_calls,
    expected_requests,
)


@dataclass(frozen=True)
class OpenInferenceRoute(Route):
    """A route with the scenario's requests, unless `requests` says there are none."""

    requests: bool = True
    """Whether the trace has model spans (CrewAI's default wrappers record none)."""


OPENAI_REDACTED = 'An error occurred while running the tool. Please try again.'

ROUTES = {
    # openai-agents tool spans carry no call id: each is recovered from the issuing response.
    'openai-agents-chat': OpenInferenceRoute(
        'openai_agents/openinference-chat.otlp.jsonl',
        models=('orchestrator_model', 'expert_model'),
        flaky_result=OPENAI_REDACTED,
    ),
    'openai-agents-responses': OpenInferenceRoute(
        'openai_agents/openinference-responses.otlp.jsonl',
        models=('orchestrator_model', 'expert_model'),
        flaky_result=OPENAI_REDACTED,
    ),
    'langgraph': OpenInferenceRoute(
        'langgraph/openinference.otlp.jsonl', models=('orchestrator-model', 'expert-model')
    ),
    'llamaindex': OpenInferenceRoute(
        'llamaindex/openinference.otlp.jsonl', models=('orchestrator_model', 'expert_model')
    ),
    'crewai': OpenInferenceRoute(
        'crewai/openinference.otlp.jsonl', models=(None, None), call_ids=False, requests=False
    ),
    'crewai-events': OpenInferenceRoute(
        'crewai/openinference-events.otlp.jsonl', models=('gpt-4o', 'gpt-4o'), call_ids=False
    ),
    'crewai-litellm': OpenInferenceRoute(
        'crewai/openinference-litellm.otlp.jsonl', models=('openai/gpt-4o', 'openai/gpt-4o')
    ),
    # pydantic-ai's orchestrator (GenAI spans) around a LangGraph expert (OpenInference spans).
    'mixed-langgraph': OpenInferenceRoute(
        'pydantic_ai/mixed-langgraph.otlp.jsonl',
        models=('main-model', 'expert-model'),
        failure_stage='retry',
        flaky_result='transient failure',
    ),
}


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_tool_calls(route: OpenInferenceRoute) -> None:
    assert actual_calls(route.trajectory()) == expected_calls(route)


@pytest.mark.parametrize('route', ROUTES.values(), ids=ROUTES.keys())
def test_model_requests(route: OpenInferenceRoute) -> None:
    expected = expected_requests(route) if route.requests else []
    assert actual_requests(route.trajectory()) == expected


def test_agent_runs() -> None:
    for name, route in ROUTES.items():
        runs = [(run.name, run.path) for run in route.trajectory().agents]
        assert runs == [('orchestrator', ORCHESTRATOR), ('expert', EXPERT)], name


SMOLAGENTS = Route('smolagents/openinference.otlp.jsonl', models=('orchestrator_model', 'expert_model'))
"""smolagents calls the managed agent `expert{"task": ...}` (no TOOL span: its `Step 3` is the call) and
ends each run with a `final_answer` call; its tool spans carry no call id (the managed call's id is
read from the step's own response)."""

REPORT = f"Here is the final answer from your managed agent 'expert':\n{EXPERT_ANSWER}"


def test_smolagents_calls() -> None:
    trajectory = SMOLAGENTS.trajectory()
    expected: list[tuple[Any, ...]] = [row for row in expected_calls(SMOLAGENTS) if row[0] != 'ask_expert']
    expected.insert(
        3, ('expert', {'task': 'what is otel?'}, REPORT, 'ok', None, 'orchestrator', ORCHESTRATOR, 'call_4')
    )
    final = ('final_answer', {'answer': EXPERT_ANSWER}, EXPERT_ANSWER, 'ok', None, 'expert', EXPERT, 'call_6')
    done = ('final_answer', {'answer': 'Booked: Paris, sunny.'}, 'Booked: Paris, sunny.', 'ok', None)
    expected += [final, (*done, 'orchestrator', ORCHESTRATOR, 'call_7')]
    assert actual_calls(trajectory) == expected
    assert [call.is_output_function for call in trajectory.tool_calls] == [False] * 5 + [True] * 2


def test_smolagents_requests() -> None:
    trajectory = SMOLAGENTS.trajectory()
    assert actual_requests(trajectory) == expected_requests(SMOLAGENTS)
    assert [(run.name, run.path) for run in trajectory.agents] == [('orchestrator', ORCHESTRATOR), ('expert', EXPERT)]
