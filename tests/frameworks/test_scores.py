"""Every evaluator scores each framework's trace of the scenario as it scores pydantic-ai's.

The scenario's trajectory is the same on every route (`scenario.py`), so each evaluator must give
the value it gives on the pydantic-ai fixture, except where a route cannot record what the
evaluator reads (arguments without content capture, requests where there are no model spans):
those differences are spelled out per route below. smolagents is left out: its run of the scenario
delegates through a managed agent named `expert` and ends each agent with a `final_answer` call
(`test_openinference.py` asserts that trajectory).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_evals.evaluators import Evaluator

import agentic_evals as ae
from agentic_evals import read_traces

from ..factories import context
from . import test_openinference, test_routes
from .scenario import CALLS, FIXTURES, Route

SCORED = [name for name, *_ in CALLS if name != 'flaky']
TRIP = dict(CALLS[2][1])

EVALUATORS: dict[str, Evaluator[Any, Any, Any]] = {
    'tools': ae.ToolCorrectness(SCORED),
    'exact': ae.TrajectoryMatch(SCORED, order='exact'),
    'in_order': ae.TrajectoryMatch(['get_weather', 'ask_expert'], order='in_order'),
    'any_order': ae.TrajectoryMatch(list(reversed(SCORED)), order='any_order'),
    'with failed': ae.TrajectoryMatch([name for name, *_ in CALLS], order='exact', include_failed=True),
    'nested argument': ae.ArgumentCorrectness('book_trip', TRIP, match_mode='exact'),
    'calls 5': ae.MaxToolCalls(5),
    'calls 4': ae.MaxToolCalls(4),
    'requests 6': ae.MaxModelRequests(6),
    'requests 5': ae.MaxModelRequests(5),
    'expert only': ae.TrajectoryMatch(['search_docs'], order='exact', agent='expert'),
    'orchestrator alone': ae.ToolCorrectness(SCORED[:3], agent='orchestrator', include_subagents=False),
    'accuracy': ae.ToolCallAccuracy(
        [{'name': name, 'args': arguments} for name, arguments, *_ in CALLS if name != 'flaky']
    ),
}

ROUTES: dict[str, Route] = {
    **{k: v for k, v in test_routes.ROUTES.items() if k != 'pydantic-ai'},
    **test_openinference.ROUTES,
}
DIFFERENCES: dict[str, dict[str, Any]] = {
    # no content capture: no arguments to compare
    'adk-v2-no-content': {'nested argument': False, 'accuracy': 0.0},
    # CrewAI's default wrappers record no model span: no verdict on requests it cannot count
    'crewai': {'requests 6': False},
}


def scores(path: str) -> dict[str, Any]:
    (trace,) = read_traces(FIXTURES / path)
    ctx = context(trace.tree)
    return {name: evaluator.evaluate(ctx).value for name, evaluator in EVALUATORS.items()}


REFERENCE = scores('pydantic_ai/scenario.otlp.jsonl')


def test_the_reference_scores_what_the_scenario_did() -> None:
    assert REFERENCE == {
        'tools': True,
        'exact': 1.0,
        'in_order': 2 / 3,  # both steps found in order, among four calls (an F1 score)
        'any_order': 1.0,
        'with failed': 1.0,
        'nested argument': True,
        'calls 5': True,
        'calls 4': False,
        'requests 6': True,
        'requests 5': False,
        'expert only': 1.0,
        'orchestrator alone': True,
        'accuracy': 1.0,
    }


@pytest.mark.parametrize('key', ROUTES)
def test_every_route_scores_as_pydantic_ai(key: str) -> None:
    assert scores(ROUTES[key].file) == {**REFERENCE, **DIFFERENCES.get(key, {})}
