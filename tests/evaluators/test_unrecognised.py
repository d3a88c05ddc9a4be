"""No verdict on nothing: a check that would pass on an absence fails when the trace cannot show the absence.

Every check that passes when nothing happened (the budgets, `NoLoops`, `ToolPermission`,
`assert_trajectory`) fails, naming the likely cause and the fix, on: a tree with no span (an agent that
was never instrumented, or `capture()` given another provider), a tree in which nothing is recognised,
and a trace whose model responses issued calls while no tool span was recognised. A budget on model
requests, tokens or cost fails on a trace that records no model-request span. A pydantic-ai run that
recorded its spans keeps the built-ins' values.
"""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel
from pydantic_evals.evaluators import Evaluator
from pydantic_evals.otel import SpanTree

import agentic_evals as ae
from agentic_evals import assert_trajectory, capture, extract_trajectory

from ..factories import TreeBuilder, context

# Each passes on a run that made no call and no request, when the trace can show that.
ABSENCE_PASSES: dict[str, Evaluator[Any, Any, Any]] = {
    'MaxToolCalls': ae.MaxToolCalls(5),
    'MaxFailedCalls': ae.MaxFailedCalls(0),
    'NoLoops': ae.NoLoops(),
    'ToolPermission': ae.ToolPermission(forbidden=['rm']),
    'MaxModelRequests': ae.MaxModelRequests(5),
    'MaxTokens': ae.MaxTokens(1000),
    'MaxCost': ae.MaxCost(1.0),
    'MaxDuration': ae.MaxDuration(60),
}
ON_REQUESTS = {'MaxModelRequests', 'MaxTokens', 'MaxCost'}


def unknown_tree() -> SpanTree:
    """Spans of an instrumentation no family reads (a made-up one)."""
    b = TreeBuilder()
    root = b.span('workflow', None, **{'acme.kind': 'workflow'})
    b.span('step', root, **{'acme.kind': 'tool', 'acme.tool': 'search'})
    b.span('step', root, **{'acme.kind': 'llm', 'acme.model': 'm'})
    return b.build()


def issued_but_unread_tree() -> SpanTree:
    """An agent run whose responses issued calls, with tool spans in a shape nothing reads."""
    b = TreeBuilder()
    root = b.agent('main')
    b.chat(root, issued=['call_1'], **{'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 1})
    b.span('acme tool', root, **{'acme.tool': 'search'})
    b.chat(root, **{'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 2})
    return b.build()


def no_model_spans_tree() -> SpanTree:
    """An agent run and its tool calls with no model-request span (AutoGen's own tracing records none)."""
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('search', root, arguments={'q': 'x'})
    return b.build()


def uninstrumented_capture() -> SpanTree:
    provider = TracerProvider()
    agent = Agent(TestModel(), name='helper')  # never instrumented

    @agent.tool_plain
    def search(query: str) -> str:
        return query

    with capture(provider) as captured:
        agent.run_sync('find something')
    return captured.tree


def capture_of_another_provider() -> SpanTree:
    agent = Agent(TestModel(), name='helper')
    agent.instrument = InstrumentationSettings(tracer_provider=TracerProvider())  # the agent's own provider

    @agent.tool_plain
    def search(query: str) -> str:
        return query

    with capture(TracerProvider()) as captured:  # another one
        agent.run_sync('find something')
    return captured.tree


def recorded_run_without_tools() -> SpanTree:
    provider = TracerProvider()
    agent = Agent(TestModel(), name='helper')
    agent.instrument = InstrumentationSettings(tracer_provider=provider)
    with capture(provider) as captured:
        agent.run_sync('say hello')
    return captured.tree


NOTHING = {
    'empty tree': (lambda: TreeBuilder().build(), 'the trace holds no span'),
    'nothing recognised': (unknown_tree, 'no agent run, tool call or model request recognised in 3 span(s)'),
    'uninstrumented pydantic-ai agent': (uninstrumented_capture, 'the agent is probably not instrumented'),
    'capture() of another provider': (capture_of_another_provider, 'was given another tracer provider'),
}


@pytest.mark.parametrize('key', ABSENCE_PASSES)
@pytest.mark.parametrize('case', NOTHING, ids=NOTHING.keys())
def test_no_check_passes_on_nothing(case: str, key: str) -> None:
    make, cause = NOTHING[case]
    tree = make()
    for metrics in ({}, {'requests': 0}):
        result = ABSENCE_PASSES[key].evaluate(context(tree, metrics=metrics))
        assert result.value is False, (case, key, result)
        assert result.reason is not None and result.reason.count(cause) == 1, result.reason


@pytest.mark.parametrize('case', NOTHING, ids=NOTHING.keys())
def test_assert_trajectory_fails_on_nothing(case: str) -> None:
    make, cause = NOTHING[case]
    with pytest.raises(AssertionError, match='MaxToolCalls') as raised:
        assert_trajectory(make(), ae.MaxToolCalls(5))
    assert cause in str(raised.value)


@pytest.mark.parametrize('key', sorted(set(ABSENCE_PASSES) - ON_REQUESTS - {'MaxDuration'}))
def test_calls_issued_but_no_tool_span_read(key: str) -> None:
    result = ABSENCE_PASSES[key].evaluate(context(issued_but_unread_tree()))
    assert result.value is False
    assert result.reason is not None and (
        "the model responses issued 1 tool call(s) ('x') but no tool span was recognised" in result.reason
    )


def test_a_failing_score_says_the_calls_were_not_read() -> None:
    result = ae.ToolCorrectness(['search']).evaluate(context(issued_but_unread_tree()))
    assert result.value is False
    assert result.reason is not None and 'no tool span was recognised' in result.reason


@pytest.mark.parametrize('key', sorted(ON_REQUESTS))
def test_a_budget_on_requests_fails_when_no_model_span_is_recorded(key: str) -> None:
    result = ABSENCE_PASSES[key].evaluate(context(no_model_spans_tree(), metrics={'requests': 0}))
    assert result.value is False
    assert result.reason is not None and result.reason.startswith(
        'no model request counted: the trace records no model-request span (1 tool call(s) and 1 agent run(s)'
        ' recognised): instrument the model client too'
    )


def test_the_calls_of_a_trace_without_model_spans_still_count() -> None:
    assert ae.MaxToolCalls(5).evaluate(context(no_model_spans_tree())).value is True


def test_the_trajectory_says_what_the_spans_look_like() -> None:
    trajectory = extract_trajectory(unknown_tree())
    assert trajectory.tool_calls == () and trajectory.model_requests == ()
    assert trajectory.unrecognised == (
        "no agent run, tool call or model request recognised in 3 span(s) (span names: 'step' x2,"
        " 'workflow' x1; attribute namespaces: acme.*): the agent itself is probably not instrumented (only"
        ' spans around it were recorded), or this instrumentation is not one agentic_evals reads (see'
        ' docs/frameworks.md)'
    )
    assert trajectory.notes == (trajectory.unrecognised,)


def test_a_pydantic_ai_run_that_recorded_its_spans_keeps_the_builtins_values() -> None:
    from pydantic_evals.evaluators import MaxModelRequests as BuiltinMaxModelRequests
    from pydantic_evals.evaluators import MaxToolCalls as BuiltinMaxToolCalls

    tree = recorded_run_without_tools()
    trajectory = extract_trajectory(tree)
    assert trajectory.unrecorded('tool calls') is None and trajectory.unrecorded('model requests') is None
    ctx = context(tree)
    assert ae.MaxToolCalls(0).evaluate(ctx).value is BuiltinMaxToolCalls(0).evaluate(ctx).value is True
    assert ae.MaxModelRequests(1).evaluate(ctx).value is BuiltinMaxModelRequests(1).evaluate(ctx).value is True
    assert_trajectory(tree, ae.MaxToolCalls(0), ae.NoLoops(), ae.MaxFailedCalls(0))


def test_the_built_in_values_that_differ_are_the_documented_ones() -> None:
    """On an empty tree the built-ins pass their budgets ("0 tool call(s)"); ours fail (docs/index.md)."""
    from pydantic_evals.evaluators import MaxToolCalls as BuiltinMaxToolCalls

    ctx = context(TreeBuilder().build())
    assert BuiltinMaxToolCalls(5).evaluate(ctx).value is True
    assert ae.MaxToolCalls(5).evaluate(ctx).value is False
