"""What the scripted scenario (fixtures/scenario.py) must extract to and score, per pydantic-ai release.

Shared by the in-process tests (plain OpenTelemetry SDK provider) and the Logfire subprocess.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from pydantic_evals.evaluators import Evaluator

from agentic_evals import (
    ArgumentCorrectness,
    MaxModelRequests,
    MaxToolCalls,
    ToolCorrectness,
    Trajectory,
    TrajectoryMatch,
)


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split('.')[:3] if p.isdigit())


PYDANTIC_AI = _release(version('pydantic-ai-slim'))
# 2.27.1 added spans for calls whose arguments fail validation; before, such calls left no span.
VALIDATION_SPANS = PYDANTIC_AI >= (2, 27, 1)
# 2.60 added `pydantic_ai.tool.retry.cause`; before it, only the recorded retry prompt shows a retry.
RETRY_CAUSE = PYDANTIC_AI >= (2, 60)


def expected_calls(
    content: bool, *, validation_spans: bool = VALIDATION_SPANS, retry_cause: bool = RETRY_CAUSE
) -> list[tuple[Any, ...]]:
    """(name, status, failure stage, agent path, arguments, output function, issuing response) per tool span."""
    main, expert, crasher = ('main',), ('main', 'expert'), ('crasher',)
    retry_stage = 'retry' if content or retry_cause else 'raised'  # nothing else marks a retry then
    report = {'title': 'Tool spans', 'summary': 'Arguments live on execute_tool spans.'}
    rows: list[tuple[Any, ...]] = [
        ('search', 'ok', None, main, {'query': 'opentelemetry genai tool spans'}, False, 0),
        ('fetch', 'ok', None, main, {'url': 'https://example.com/genai-spans'}, False, 1),
        ('check_status', 'failed', retry_stage, main, {'service': 'tracing'}, False, 2),
        ('check_status', 'ok', None, main, {'service': 'tracing'}, False, 3),
        ('compute', 'failed', 'validation', main, {'a': 'two', 'b': 3}, False, 4),
        ('compute', 'ok', None, main, {'a': 2, 'b': 3}, False, 5),
        # one response, three calls: issued in this order, though the failed one's span starts first
        ('search', 'ok', None, main, {'query': 'span ordering'}, False, 6),
        ('fetch', 'ok', None, main, {'url': 'https://example.com/ordering'}, False, 6),
        ('compute', 'failed', 'validation', main, None, False, 6),  # the model sent invalid JSON
        ('ask_expert', 'ok', None, main, {'question': 'Which attribute holds tool arguments?'}, False, 7),
        ('lookup', 'ok', None, expert, {'term': 'gen_ai.tool.call.arguments'}, False, 8),
        ('lookup', 'ok', None, expert, {'term': 'execute_tool'}, False, 9),
        ('run_report_job', 'deferred', None, main, {'report': 'weekly'}, False, 11),
        # approved in the resumed run; issued by the same response as run_report_job
        ('delete_draft', 'ok', None, main, {'path': 'drafts/old.md'}, False, 11),
        ('submit_report', 'ok', None, main, report, True, 12),
        ('explode', 'failed', 'raised', crasher, {'target': 'cache'}, False, 13),
    ]
    if not validation_spans:
        rows = [row for row in rows if row[2] != 'validation']
    if not content:
        rows = [(*row[:4], None, *row[5:]) for row in rows]
    return rows


def calls_of(trajectory: Trajectory) -> list[tuple[Any, ...]]:
    return [
        (c.name, c.status, c.failure_stage, c.agent_path, c.arguments, c.is_output_function, c.issued_by)
        for c in trajectory.tool_calls
    ]


def requests_of(trajectory: Trajectory) -> list[tuple[str | None, tuple[str, ...]]]:
    return [(r.model, r.agent_path) for r in trajectory.model_requests]


EXPECTED_REQUESTS = (
    [('main_model', ('main',))] * 8
    + [('expert_model', ('main', 'expert'))] * 3
    + [('main_model', ('main',))] * 2
    + [('crasher_model', ('crasher',))]
)

OK_CALLS = ['search', 'fetch', 'check_status', 'compute', 'search', 'fetch', 'ask_expert', 'lookup', 'lookup']


def evaluators_and_results(content: bool) -> list[tuple[Evaluator[object, object, object], Any, str]]:
    """Each evaluator on the scenario's tree with its exact value and reason."""
    attempts = 14 if VALIDATION_SPANS else 12
    no_args = "Tool 'compute' arguments not available in span (`include_content` may be disabled)."
    first_compute: tuple[Any, str]
    if not content:
        first_compute = (False, no_args)
    elif VALIDATION_SPANS:
        first_compute = (False, "Tool 'compute' argument mismatch: key 'a': expected 2, got 'two'")
    else:
        first_compute = (True, "Tool 'compute' called with {'a': 2, 'b': 3}")
    rows: list[tuple[Evaluator[object, object, object], Any, str]] = [
        (
            ToolCorrectness([*OK_CALLS, 'delete_draft']),
            True,
            "called 'ask_expert' (x1), 'check_status' (x1), 'compute' (x1), 'delete_draft' (x1), 'fetch' (x2),"
            " 'lookup' (x2), 'search' (x2)",
        ),
        (
            ToolCorrectness(['search', 'fetch', 'lookup'], agent='main', include_subagents=False),
            False,
            "missing tools: 'lookup' (x1); unexpected tools: 'ask_expert' (x1), 'check_status' (x1), 'compute' (x1),"
            " 'delete_draft' (x1), 'fetch' (x1), 'search' (x1) (agent 'main', sub-agents excluded)",
        ),
        (
            TrajectoryMatch(['search', 'fetch', 'check_status', 'compute', 'ask_expert', 'delete_draft']),
            2 * 0.6 * 1.0 / (0.6 + 1.0),  # F1 exactly as computed, not the rounded 0.75
            'LCS=6, precision=6/10=0.600, recall=6/6=1.000, F1=0.750'
            " (expected: ['search', 'fetch', 'check_status', 'compute', 'ask_expert', 'delete_draft'],"
            " actual: ['search', 'fetch', 'check_status', 'compute', 'search', 'fetch', 'ask_expert', 'lookup',"
            " 'lookup', 'delete_draft'])",
        ),
        (
            TrajectoryMatch(['lookup', 'lookup'], order='exact', agent='expert'),
            1.0,
            "actual trajectory matches expected: ['lookup', 'lookup'] (agent 'expert')",
        ),
        (
            TrajectoryMatch(['explode', 'check_status'], order='any_order', include_failed=True),
            2 * (2 / attempts) / (2 / attempts + 1),
            f'multiset overlap=2, precision=2/{attempts}={2 / attempts:.3f}, recall=2/2=1.000,'
            f" F1={2 * (2 / attempts) / (2 / attempts + 1):.3f} (expected: ['explode', 'check_status'],"
            f' actual: {[n for n, s, *_ in expected_calls(True) if s != "deferred" and n != "submit_report"]!r})',
        ),
        (
            ArgumentCorrectness('compute', {'a': 2, 'b': 3}),
            *((True, "Tool 'compute' called with {'a': 2, 'b': 3}") if content else (False, no_args)),
        ),
        (ArgumentCorrectness('compute', {'a': 2}, include_failed=True), *first_compute),
        (
            ArgumentCorrectness('lookup', {'term': 'execute_tool'}, occurrence='last', agent='expert'),
            *(
                (True, "Tool 'lookup' called with {'term': 'execute_tool'} (agent 'expert')")
                if content
                else (
                    False,
                    "Tool 'lookup' arguments not available in span (`include_content` may be disabled). (agent 'expert')",
                )
            ),
        ),
        (MaxToolCalls(12), attempts <= 12, f'{attempts} tool call(s), budget=12'),
        (MaxModelRequests(14), True, '14 model request(s) (from span tree), budget=14'),
        (MaxModelRequests(2, agent='expert'), False, "3 model request(s) (from span tree), budget=2 (agent 'expert')"),
    ]
    return rows
