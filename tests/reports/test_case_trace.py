"""What a case's spans add to the report: its timeline, and each expectation aligned with what happened.

The trees are the real support-agent traces (a support agent with a billing sub-agent), baseline
and regressed; the alignments are checked row by row for every evaluator that has an expectation.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic_evals import Case
from pydantic_evals.evaluators import Evaluator
from pydantic_evals.reporting import ReportCase

from agentic_evals import (
    ArgumentCorrectness,
    MaxToolCalls,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCallMatch,
    TrajectoryMatch,
    read_traces,
)
from agentic_evals.offline.evaluate import score_case
from agentic_evals.offline.matching import group_conversations
from agentic_evals.reports import case_trace
from agentic_evals.reports.case_trace import case_details
from agentic_evals.reports.document import AlignedCall, known_id

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / 'fixtures' / 'support'
CHATS = ROOT / 'fixtures' / 'conversations' / 'chats.otlp.jsonl'


def _trace(variant: str, case: str) -> Any:
    traces = read_traces(SUPPORT / f'{variant}.otlp.jsonl')
    return next(t for t in traces if t.tree.roots[0].attributes.get('case_name') == case)


def _scored(trace: Any, *evaluators: Evaluator[Any, Any, Any]) -> ReportCase[Any, Any, Any]:
    result = asyncio.run(score_case(Case(name='c', inputs=None), trace, list(evaluators)))
    assert isinstance(result, ReportCase)
    return result


def _rows(rows: list[AlignedCall]) -> list[tuple[str, str | None, str | None, list[str]]]:
    return [(r.status, r.expected, r.actual, r.keys) for r in rows]


def test_the_timeline_has_every_agent_call_and_request_in_trace_time() -> None:
    trace = _trace('regressed', 'refund')
    details = case_details(trace.tree, _scored(trace, MaxToolCalls(10)))
    timeline = details.timeline
    assert timeline is not None
    assert [(a.name, a.path) for a in timeline.agents] == [
        ('support', ['support']),
        ('billing', ['support', 'billing']),
    ]
    assert [(c.name, c.agent_path, c.status) for c in timeline.calls] == [
        ('lookup_order', ['support'], 'ok'),
        ('ask_billing', ['support'], 'ok'),
        ('get_payment', ['support', 'billing'], 'ok'),
        ('issue_refund', ['support', 'billing'], 'ok'),
    ]
    refund = timeline.calls[3]
    assert refund.arguments == '{"order_id":"A100","amount":250.0}'
    assert refund.result == 'refund of 250.00 EUR issued for A100'
    assert all(0 <= c.start <= c.end for c in timeline.calls)
    assert timeline.agents[0].start <= timeline.calls[0].start and timeline.calls[-1].end <= timeline.agents[0].end
    assert [r.model for r in timeline.requests][:1] == ['support_model']
    assert sum(r.input_tokens for r in timeline.requests) > 0 and timeline.omitted == 0
    # the results belong to the outermost agent run's span, on the evaluated trace
    assert details.span_id == timeline.agents[0].span_id and details.trace_id == trace.trace_id


def test_long_text_and_long_runs_are_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(case_trace, 'TEXT_LIMIT', 10)
    monkeypatch.setattr(case_trace, 'TIMELINE_LIMIT', 2)
    trace = _trace('regressed', 'refund')
    timeline = case_details(trace.tree, _scored(trace)).timeline
    assert timeline is not None
    assert [c.name for c in timeline.calls] == ['lookup_order', 'ask_billing']
    assert timeline.omitted == 2 + (6 - 2)  # two calls and four of the six requests left out
    assert timeline.calls[0].arguments == '{"order_id... (9 more characters)'


def test_trajectory_match_aligns_names_in_each_order_mode() -> None:
    trace = _trace('regressed', 'refund')  # support's own calls: lookup_order, ask_billing
    expected = ['lookup_order', 'check_refund_policy', 'ask_billing']
    scoped = {'agent': 'support', 'include_subagents': False}
    in_order = TrajectoryMatch(expected, **scoped)  # type: ignore[arg-type]
    exact = TrajectoryMatch(expected, order='exact', evaluation_name='exact', **scoped)  # type: ignore[arg-type]
    any_order = TrajectoryMatch(['ask_billing', 'escalate'], order='any_order', evaluation_name='any', **scoped)  # type: ignore[arg-type]
    alignments = {a.result: a for a in case_details(trace.tree, _scored(trace, in_order, exact, any_order)).alignments}
    assert _rows(alignments['TrajectoryMatch'].rows) == [
        ('matched', 'lookup_order', 'lookup_order', []),
        ('missing', 'check_refund_policy', None, []),
        ('matched', 'ask_billing', 'ask_billing', []),
    ]
    assert _rows(alignments['exact'].rows) == [
        ('matched', 'lookup_order', 'lookup_order', []),
        ('missing', 'check_refund_policy', None, []),
        ('extra', None, 'ask_billing', []),
        ('missing', 'ask_billing', None, []),
    ]
    assert _rows(alignments['any'].rows) == [
        ('extra', None, 'lookup_order', []),
        ('matched', 'ask_billing', 'ask_billing', []),
        ('missing', 'escalate', None, []),
    ]
    assert {a.evaluator for a in alignments.values()} == {'TrajectoryMatch'} and all(
        a.turn is None for a in alignments.values()
    )


def test_tool_call_match_rows_follow_the_actual_calls_with_missing_ones_in_place() -> None:
    trace = _trace('regressed', 'refund')
    match = ToolCallMatch(
        [
            {'name': 'lookup_order', 'arguments': {'order_id': 'A100'}},
            {'name': 'check_refund_policy'},
            {'name': 'issue_refund', 'arguments': {'order_id': 'A100', 'amount': 25.0}},
        ],
        mode='superset',
        agent=None,
    )
    [alignment] = case_details(trace.tree, _scored(trace, match)).alignments
    assert alignment.evaluator == 'ToolCallMatch' and alignment.result == 'ToolCallMatch'
    assert _rows(alignment.rows) == [
        ('matched', "lookup_order(order_id='A100')", "lookup_order(order_id='A100')", []),
        ('missing', 'check_refund_policy(...)', None, []),
        ('extra', None, "ask_billing(request='refund order A100, 250.00 EUR')", []),
        ('extra', None, "get_payment(order_id='A100')", []),
        (
            'mismatch',
            "issue_refund(amount=25.0, order_id='A100')",
            "issue_refund(amount=250.0, order_id='A100')",
            ['amount'],
        ),
    ]
    assert alignment.rows[-1].differences and 'amount' in alignment.rows[-1].differences[0]


def test_reference_calls_and_argument_correctness_are_aligned_too() -> None:
    trace = _trace('regressed', 'refund')
    reference = [
        {'name': 'get_payment', 'args': {'order_id': 'A100'}},
        {'name': 'issue_refund', 'args': {'order_id': 'A100', 'amount': 25.0}},
    ]
    evaluators: list[Evaluator[Any, Any, Any]] = [
        ToolCallAccuracy(reference, agent='billing'),
        ToolCallF1(reference, agent='billing'),
        ArgumentCorrectness('issue_refund', {'order_id': 'A100', 'amount': 25.0}),
        ArgumentCorrectness('issue_refund', {'order_id': 'A100'}, match_mode='exact', evaluation_name='exact'),
        ArgumentCorrectness('escalate', {'order_id': 'A100'}, evaluation_name='absent'),
    ]
    alignments = {a.result: a for a in case_details(trace.tree, _scored(trace, *evaluators)).alignments}
    assert set(alignments) == {'ToolCallAccuracy', 'ToolCallF1', 'ArgumentCorrectness', 'exact', 'absent'}
    for name in ('ToolCallAccuracy', 'ToolCallF1'):
        assert [(r.status, r.keys) for r in alignments[name].rows] == [('matched', []), ('mismatch', ['amount'])]
    [wrong] = alignments['ArgumentCorrectness'].rows
    assert (wrong.status, wrong.keys, wrong.differences) == (
        'mismatch',
        ['amount'],
        ["key 'amount': expected 25.0, got 250.0"],
    )
    [extra_key] = alignments['exact'].rows
    assert (extra_key.status, extra_key.keys) == ('mismatch', ['amount'])
    assert extra_key.differences == ["key 'amount': expected (absent), got 250.0"]
    assert _rows(alignments['absent'].rows) == [('missing', "escalate(order_id='A100')", None, [])]


def test_a_passing_run_aligns_as_matched() -> None:
    trace = _trace('baseline', 'refund')
    matched = ArgumentCorrectness('issue_refund', {'order_id': 'A100', 'amount': 25.0})
    [alignment] = case_details(trace.tree, _scored(trace, matched)).alignments
    assert [(r.status, r.keys, r.differences) for r in alignment.rows] == [('matched', [], [])]


def test_per_turn_expectations_align_turn_by_turn_including_turns_only_one_side_has() -> None:
    [chat] = [t for t in group_conversations(read_traces(CHATS)) if 'search_faq' in str(t.tree.roots)] or [
        next(iter(group_conversations(read_traces(CHATS))))
    ]
    turns = [[{'name': 'search_faq'}], [{'name': 'refund'}, {'name': 'escalate'}]]
    evaluators = [ToolCallMatch(turns, mode='unordered'), TrajectoryMatch([['search_faq'], ['refund'], ['escalate']])]
    details = case_details(chat.tree, _scored(chat, *evaluators))
    by_turn = {(a.evaluator, a.turn): [r.status for r in a.rows] for a in details.alignments}
    assert by_turn[('ToolCallMatch', 2)] == ['missing', 'missing']
    assert by_turn[('TrajectoryMatch', 3)] == ['missing']
    assert {turn for evaluator, turn in by_turn if evaluator == 'TrajectoryMatch'} == {1, 2, 3}


def test_evaluators_without_an_expectation_or_a_spec_that_no_longer_builds_have_no_alignment() -> None:
    trace = _trace('regressed', 'refund')
    case = _scored(trace, MaxToolCalls(3), TrajectoryMatch(['lookup_order']))
    for result in case.scores.values():  # a report written by another version: the spec does not build
        result.source = type(result.source)(name='TrajectoryMatch', arguments={'no_such_field': 1})
    assert case_details(trace.tree, case).alignments == []


def test_an_all_zero_id_is_no_id() -> None:
    # pydantic-evals reports zeros for a case span it did not record (Logfire not configured)
    assert [known_id(i) for i in ('0' * 32, '0' * 16, None, '', '00ab')] == [None, None, None, None, '00ab']
