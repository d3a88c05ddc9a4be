"""A trace with spans of which none is recognised says so, and budgets fail instead of passing on 0."""

from __future__ import annotations

import pytest

import agentic_evals as ae
from agentic_evals import extract_trajectory

from ..factories import TreeBuilder, context


def unknown_tree():  # type: ignore[no-untyped-def]
    """Spans of an instrumentation no family reads (a made-up one)."""
    b = TreeBuilder()
    root = b.span('workflow', None, **{'acme.kind': 'workflow'})
    b.span('step', root, **{'acme.kind': 'tool', 'acme.tool': 'search'})
    b.span('step', root, **{'acme.kind': 'llm', 'acme.model': 'm'})
    return b.build()


def test_the_trajectory_says_what_the_spans_look_like() -> None:
    trajectory = extract_trajectory(unknown_tree())
    assert trajectory.tool_calls == () and trajectory.model_requests == ()
    assert trajectory.unrecognised == (
        "no agent run, tool call or model request recognised in 3 span(s) (span names: 'step' x2,"
        " 'workflow' x1; attribute namespaces: acme.*): this instrumentation is probably not one"
        ' agentic_evals reads (see docs/frameworks.md)'
    )
    assert trajectory.notes == (trajectory.unrecognised,)


@pytest.mark.parametrize(
    'evaluator',
    [ae.MaxToolCalls(5), ae.MaxModelRequests(5)],
    ids=['MaxToolCalls', 'MaxModelRequests'],
)
@pytest.mark.parametrize('metrics', [{}, {'requests': 0}], ids=['no metric', 'a requests metric of 0'])
def test_budgets_fail_instead_of_passing_on_nothing(evaluator: ae.MaxToolCalls, metrics: dict[str, int]) -> None:
    result = evaluator.evaluate(context(unknown_tree(), metrics=metrics))
    assert result.value is False
    assert result.reason is not None and result.reason.count('no agent run, tool call or model request recognised') == 1


def test_failing_scores_name_the_likely_cause() -> None:
    result = ae.ToolCorrectness(['search']).evaluate(context(unknown_tree()))
    assert result.value is False
    assert result.reason is not None and result.reason.endswith('(see docs/frameworks.md)')


def test_a_recognised_run_with_nothing_in_it_passes_budgets_as_before() -> None:
    b = TreeBuilder()
    b.agent('main')
    tree = b.build()
    assert extract_trajectory(tree).unrecognised is None
    assert ae.MaxToolCalls(5).evaluate(context(tree)).value is True
    assert ae.MaxModelRequests(5).evaluate(context(tree, metrics={'requests': 0})).value is True
