"""The framework scenario (`fixtures/frameworks/SCENARIO.md`) as the trajectory every route must give.

A route's differences (what its framework records, how it reports the failing tool) are data in
its `Route`; the test of each fixture compares the whole extracted trajectory with
`expected_calls(route)` and `expected_requests(route)`, so a rule that misreads one field of one
call fails by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_evals import Trajectory, extract_trajectory, read_traces

FIXTURES = Path(__file__).resolve().parents[2] / 'fixtures' / 'frameworks'

ORCHESTRATOR = ('orchestrator',)
EXPERT = ('orchestrator', 'expert')
EXPERT_ANSWER = 'OpenTelemetry is an observability framework.'
PROMPT = 'Plan a trip to Paris.'
"""The user prompt of the scenario, as a run's inputs read it."""
ANSWER = 'Booked: Paris, sunny.'
"""The orchestrator's final answer, as a run's output reads it."""

# name, arguments, the text the tool returned (None: it raised), call id, agent path
CALLS: tuple[tuple[str, dict[str, Any], str | None, str, tuple[str, ...]], ...] = (
    ('get_weather', {'city': 'Paris'}, 'Sunny, 21 C', 'call_1', ORCHESTRATOR),
    ('flaky', {'attempt': 1}, None, 'call_2', ORCHESTRATOR),
    (
        'book_trip',
        {'trip': {'city': 'Paris', 'dates': {'from': '2026-05-01', 'to': '2026-05-03'}, 'travellers': 2}},
        'booked: BK-1',
        'call_3',
        ORCHESTRATOR,
    ),
    ('ask_expert', {'question': 'what is otel?'}, EXPERT_ANSWER, 'call_4', ORCHESTRATOR),
    ('search_docs', {'query': 'otel'}, 'OpenTelemetry is an observability framework', 'call_5', EXPERT),
)
# agent path, input tokens, output tokens, in start order
REQUESTS = (
    (ORCHESTRATOR, 100, 10),
    (ORCHESTRATOR, 120, 12),
    (ORCHESTRATOR, 140, 14),
    (EXPERT, 50, 5),
    (EXPERT, 60, 6),
    (ORCHESTRATOR, 160, 16),
)


@dataclass(frozen=True)
class Route:
    """One fixture file and what its framework and instrumentation record of the scenario."""

    file: str
    """Under `fixtures/frameworks/`."""
    models: tuple[str | None, str | None]
    """The model the orchestrator's and the expert's requests name."""
    failure_stage: str = 'raised'
    flaky_result: str | None = None
    """What the failed call's span records as its result (the error the model was shown, or None)."""
    results: dict[str, str | None] = field(default_factory=dict)
    """Results recorded differently from the tools' return values, by tool name."""
    arguments: bool = True
    """Whether the trace records arguments (content capture)."""
    results_recorded: bool = True
    call_ids: bool = True
    """Whether the trace holds the model's call ids (on the tool spans or the issuing response)."""
    tokens: bool = True
    """Whether the model requests record their token usage."""

    def trajectory(self) -> Trajectory:
        (trace,) = read_traces(FIXTURES / self.file)
        return extract_trajectory(trace.tree)


def expected_calls(route: Route) -> list[tuple[Any, ...]]:
    """(name, arguments, result, status, failure stage, agent, agent path, call id) of every attempt."""
    rows = []
    for name, arguments, result, call_id, path in CALLS:
        failed = name == 'flaky'
        recorded = route.results.get(name, route.flaky_result if failed else result)
        rows.append(
            (
                name,
                arguments if route.arguments else None,
                recorded if route.results_recorded else None,
                'failed' if failed else 'ok',
                route.failure_stage if failed else None,
                path[-1],
                path,
                call_id if route.call_ids else None,
            )
        )
    return rows


def actual_calls(trajectory: Trajectory) -> list[tuple[Any, ...]]:
    return [
        (c.name, c.arguments, c.result, c.status, c.failure_stage, c.agent, c.agent_path, c.call_id)
        for c in trajectory.tool_calls
    ]


def expected_requests(route: Route) -> list[tuple[Any, ...]]:
    """(model, input tokens, output tokens, agent path) of every model request, in start order."""
    orchestrator, expert = route.models
    return [
        (orchestrator if path == ORCHESTRATOR else expert, *((i, o) if route.tokens else (0, 0)), path)
        for path, i, o in REQUESTS
    ]


def actual_requests(trajectory: Trajectory) -> list[tuple[Any, ...]]:
    return [(r.model, r.input_tokens, r.output_tokens, r.agent_path) for r in trajectory.model_requests]
