"""`agentic-evals-otel run`'s `requests` and token metrics count each route's requests once.

The metrics follow the trajectory's own model-request rule, so spans that repeat a run's totals
(Strands' `invoke_agent`, smolagents' `*.run`, LangSmith's `RunnableSequence`, ADK v1's `call_llm`,
the OpenAI Agents SDK's turn and task `usage`) never add to them.
"""

from __future__ import annotations

import pytest

from agentic_evals import read_traces
from agentic_evals.trajectory.run_metrics import span_tree_metrics

from . import test_openinference, test_routes
from .scenario import FIXTURES, REQUESTS, Route

ROUTES: dict[str, Route] = {
    **test_routes.ROUTES,
    **test_openinference.ROUTES,
    'smolagents': test_openinference.SMOLAGENTS,
}
INPUT_TOKENS = sum(i for _, i, _ in REQUESTS)
OUTPUT_TOKENS = sum(o for _, _, o in REQUESTS)


def expected(route: Route) -> dict[str, int]:
    if getattr(route, 'requests', True) is False:
        return {}  # CrewAI's default wrappers record no model span
    tokens = {'input_tokens': INPUT_TOKENS, 'output_tokens': OUTPUT_TOKENS} if route.tokens else {}
    return {'requests': len(REQUESTS), **tokens}


@pytest.mark.parametrize('key', ROUTES)
def test_requests_and_tokens_are_counted_once(key: str) -> None:
    route = ROUTES[key]
    (trace,) = read_traces(FIXTURES / route.file)
    metrics = span_tree_metrics(trace.tree)
    counted = {k: v for k, v in metrics.items() if k in ('requests', 'input_tokens', 'output_tokens') and v}
    assert counted == expected(route)
