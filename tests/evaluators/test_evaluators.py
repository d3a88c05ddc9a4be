"""Every evaluator's value and whole reason on hand-built trees, including each degraded case."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_evals.evaluators import EvaluationReason

from agentic_evals import ArgumentCorrectness, MaxModelRequests, MaxToolCalls, ToolCorrectness, TrajectoryMatch

from ..factories import TreeBuilder, context, tree_of_tools


def run(evaluator: object, tree: object, **kwargs: object) -> tuple[object, str | None]:
    result = evaluator.evaluate(context(tree, **kwargs))  # type: ignore[attr-defined,arg-type]
    assert isinstance(result, EvaluationReason)
    return result.value, result.reason


def delegation_tree() -> object:
    """main calls search, then ask_expert, whose sub-agent expert calls lookup twice (one failing)."""
    b = TreeBuilder()
    main = b.agent('main')
    b.chat(main)
    b.tool('search', main, arguments={'q': 'x'})
    ask = b.tool('ask_expert', main, arguments={'question': 'why'})
    expert = b.agent('expert', ask)
    b.chat(expert)
    b.tool('lookup', expert, arguments={'key': 'a'})
    b.tool('lookup', expert, arguments={'key': 'b'}, status='error')
    b.chat(expert)
    b.chat(main)
    return b.build()


def test_tool_correctness_reasons() -> None:
    tree = tree_of_tools('search', 'search', 'extra')
    assert run(ToolCorrectness(['search', 'fetch']), tree) == (
        False,
        "missing tools: 'fetch' (x1); unexpected tools: 'extra' (x1), 'search' (x1)",
    )
    assert run(ToolCorrectness(['search', 'search'], allow_extra=True), tree) == (
        True,
        "called 'extra' (x1), 'search' (x2)",
    )
    assert run(ToolCorrectness([]), tree_of_tools()) == (True, 'called no tools')


def test_trajectory_match_reasons() -> None:
    tree = tree_of_tools('a', 'x', 'c')
    assert run(TrajectoryMatch(['a', 'b', 'c']), tree) == (
        2 / 3,
        "LCS=2, precision=2/3=0.667, recall=2/3=0.667, F1=0.667 (expected: ['a', 'b', 'c'], actual: ['a', 'x', 'c'])",
    )
    assert run(TrajectoryMatch(['c', 'a'], order='any_order'), tree) == (
        0.8,
        "multiset overlap=2, precision=2/3=0.667, recall=2/2=1.000, F1=0.800 (expected: ['c', 'a'], actual: ['a', 'x', 'c'])",
    )
    assert run(TrajectoryMatch(['a'], order='exact'), tree) == (
        0.0,
        "actual trajectory ['a', 'x', 'c'] does not equal expected ['a']",
    )
    assert run(TrajectoryMatch([]), tree_of_tools()) == (1.0, 'both actual and expected trajectories are empty')
    assert run(TrajectoryMatch(['a']), tree_of_tools())[0] == 0.0


def test_argument_correctness_reasons() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('search', root, arguments={'q': 'x', 'n': 1})
    b.tool('search', root, arguments={'q': 'y'})
    b.tool('hidden', root)
    b.tool('broken', root, arguments='{"q"')
    b.tool('listed', root, arguments='["q"]')
    tree = b.build()
    assert run(ArgumentCorrectness('search', {'q': 'x'}), tree) == (
        True,
        "Tool 'search' called with {'q': 'x', 'n': 1}",
    )
    assert run(ArgumentCorrectness('search', {'q': 'x'}, occurrence='last'), tree) == (
        False,
        "Tool 'search' argument mismatch: key 'q': expected 'x', got 'y'",
    )
    assert run(ArgumentCorrectness('search', {'q': 'x'}, match_mode='exact'), tree) == (
        False,
        "Tool 'search' argument mismatch: unexpected key 'n' with value 1",
    )
    assert run(ArgumentCorrectness('search', {}, occurrence=5), tree) == (
        False,
        "Tool 'search' was called 2 time(s); occurrence=5 does not select any of them "
        "(must be 'first', 'last', or a 0-based index; negative ints are not supported).",
    )
    assert run(ArgumentCorrectness('never', {}), tree) == (False, "No calls to tool 'never' were recorded.")
    assert run(ArgumentCorrectness('hidden', {}), tree) == (
        False,
        "Tool 'hidden' arguments not available in span (`include_content` may be disabled).",
    )
    assert run(ArgumentCorrectness('broken', {}), tree) == (
        False,
        "Tool 'broken' arguments could not be parsed as JSON: Expecting ':' delimiter: line 1 column 5 (char 4)",
    )
    assert run(ArgumentCorrectness('listed', {}), tree) == (
        False,
        "Tool 'listed' arguments are not a JSON object: ['q']",
    )


def test_budget_reasons() -> None:
    tree = delegation_tree()
    assert run(MaxToolCalls(3), tree) == (False, '4 tool call(s), budget=3')
    assert run(MaxToolCalls(3, include_failed=False), tree) == (True, '3 tool call(s), budget=3')
    assert run(MaxModelRequests(4), tree) == (True, '4 model request(s) (from span tree), budget=4')
    assert run(MaxModelRequests(4), tree, metrics={'requests': 9}) == (
        False,
        "9 model request(s) (from ctx.metrics['requests']), budget=4",
    )


def test_agent_scoping() -> None:
    tree = delegation_tree()
    assert run(TrajectoryMatch(['lookup'], agent='expert'), tree) == (
        1.0,
        "LCS=1, precision=1/1=1.000, recall=1/1=1.000, F1=1.000 (expected: ['lookup'], actual: ['lookup'])"
        " (agent 'expert')",
    )
    assert run(ToolCorrectness(['search', 'ask_expert'], include_subagents=False), tree) == (
        True,
        "called 'ask_expert' (x1), 'search' (x1) (top-level agent only)",
    )
    assert run(ToolCorrectness(['search', 'ask_expert'], agent='main', include_subagents=False), tree)[0] is True
    assert run(ToolCorrectness(['search', 'ask_expert'], agent='main'), tree) == (
        False,
        "unexpected tools: 'lookup' (x1) (agent 'main')",
    )
    assert run(MaxToolCalls(1, agent='expert'), tree) == (False, "2 tool call(s), budget=1 (agent 'expert')")
    # scoped request counts ignore the metric, which cannot tell agents apart
    assert run(MaxModelRequests(1, agent='expert'), tree, metrics={'requests': 4}) == (
        False,
        "2 model request(s) (from span tree), budget=1 (agent 'expert')",
    )
    assert run(ArgumentCorrectness('lookup', {'key': 'a'}, agent='expert', include_subagents=False), tree) == (
        True,
        "Tool 'lookup' called with {'key': 'a'} (agent 'expert', sub-agents excluded)",
    )


def test_unknown_agent_fails_with_the_agents_seen() -> None:
    tree = delegation_tree()
    reason = "agent 'critic' not found in the trace; agents seen: ['expert', 'main']"
    assert run(TrajectoryMatch(['a'], agent='critic'), tree) == (0.0, reason)
    assert run(MaxToolCalls(9, agent='critic'), tree) == (False, reason)


@pytest.mark.parametrize(
    ('build', 'message'),
    [
        (
            lambda: TrajectoryMatch(['a'], order='sideways'),
            "TrajectoryMatch: order must be one of 'in_order', 'exact', 'any_order'; got 'sideways'",
        ),  # type: ignore[arg-type]
        (
            lambda: ToolCorrectness('lookup_order'),
            "ToolCorrectness: expected_tools must be a list of tool names, got 'lookup_order'",
        ),  # type: ignore[arg-type]
        (lambda: ToolCorrectness(['a', 1]), 'ToolCorrectness: expected_tools must hold tool names (strings), got 1'),  # type: ignore[list-item]
        (
            lambda: ToolCorrectness(['a'], conversation='outputs'),
            "ToolCorrectness: conversation must be one of 'output', 'inputs'; got 'outputs'",
        ),  # type: ignore[arg-type]
        (
            lambda: ArgumentCorrectness('a', [1]),
            'ArgumentCorrectness: expected_arguments must be a mapping of argument names to values, got [1]',
        ),  # type: ignore[arg-type]
        (
            lambda: ArgumentCorrectness('a', {}, occurrence='middle'),
            "ArgumentCorrectness: occurrence must be 'first', 'last' or an index, got 'middle'",
        ),  # type: ignore[arg-type]
        (
            lambda: ArgumentCorrectness('a', {}, match_mode='fuzzy'),
            "ArgumentCorrectness: match_mode must be one of 'subset', 'exact'; got 'fuzzy'",
        ),  # type: ignore[arg-type]
        (lambda: MaxToolCalls(-3), 'MaxToolCalls: max_calls must be a whole number >= 0, got -3'),
        (lambda: MaxModelRequests(2.5), 'MaxModelRequests: max_requests must be a whole number >= 0, got 2.5'),  # type: ignore[arg-type]
        (
            lambda: MaxToolCalls(3, agent=7, include_subagents='no'),
            "MaxToolCalls: agent must be a string or None, got 7; include_subagents must be true or false, got 'no'",
        ),  # type: ignore[arg-type]
    ],
)
def test_bad_configuration_fails_at_construction(build: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        build()
    assert str(raised.value) == message


def test_an_index_out_of_range_is_not_a_configuration_error() -> None:
    """How often a tool is called varies per run: a missing occurrence fails the evaluation, as in pydantic-evals."""
    assert ArgumentCorrectness('a', {}, occurrence=-1).occurrence == -1
