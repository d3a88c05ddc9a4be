"""The report writers on a real pydantic-evals report: JSON round trip, JUnit XML, Markdown, gates."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext

from agentic_evals import MaxToolCalls, TrajectoryMatch, evaluate_traces_sync, read_traces
from agentic_evals.reports.document import (
    SCHEMA,
    AssertionResult,
    CaseFailure,
    CaseResult,
    ReportDocument,
    ScoreResult,
    document_from_report,
    dump_document,
    read_document,
)
from agentic_evals.reports.gates import Gates, MinScore, format_number
from agentic_evals.reports.judge import check_gates
from agentic_evals.views.junit import render_junit
from agentic_evals.views.markdown import markdown_cell, render_markdown

from ..cli import traces
from ..real_runs import VALIDATION_SPANS

ATTEMPTS = 14 if VALIDATION_SPANS else 12
"""Tool call attempts in the scenario (pydantic-ai before 2.27.1 left no span for invalid arguments)."""


@dataclass(repr=False)
class Unavailable(Evaluator[object, object, object]):
    """A judge whose backend is down: pydantic-evals records an evaluator failure."""

    def evaluate(self, ctx: EvaluatorContext[object, object, object]) -> bool:
        raise RuntimeError('judge backend unavailable')


@dataclass(repr=False)
class Risk(Evaluator[object, object, object]):
    """A label: a string result."""

    def evaluate(self, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return EvaluationReason(value='risky', reason='a tool raised')


@pytest.fixture(scope='module')
def document() -> ReportDocument:
    evaluators = [MaxToolCalls(10), TrajectoryMatch(['search', 'fetch']), Unavailable(), Risk()]
    report = evaluate_traces_sync(read_traces(traces('scenario')), evaluators=evaluators, name='nightly')
    return document_from_report(report)


def test_document_from_a_real_report(document: ReportDocument) -> None:
    assert document.schema == SCHEMA
    assert document.name == 'nightly'
    [case] = document.cases
    assert case.name == 'scenario'
    assert case.inputs == 'Write a short report on how tool calls appear in OpenTelemetry spans.'
    assert case.output == 'Tool spans: Arguments live on execute_tool spans.'
    assert case.assertions['MaxToolCalls'].value is False
    assert case.assertions['MaxToolCalls'].evaluator == 'MaxToolCalls'
    assert case.scores['TrajectoryMatch'].value == pytest.approx(1 / 3)
    assert case.labels['Risk'].value == 'risky'
    assert [(e.name, e.message) for e in case.evaluator_errors] == [
        ('Unavailable', 'RuntimeError: judge backend unavailable')
    ]
    assert case.metrics['requests'] == 14
    assert document.averages.labels == {'Risk': {'risky': 1.0}}
    totals = document.totals
    assert (totals.cases, totals.failed_cases, totals.assertions, totals.failed_assertions) == (1, 1, 1, 1)
    assert (totals.evaluator_errors, totals.fail_rate) == (1, 1.0)


def test_json_round_trip(document: ReportDocument, tmp_path: Path) -> None:
    path = tmp_path / 'report.json'
    path.write_text(dump_document(document), encoding='utf-8')
    raw = json.loads(path.read_text(encoding='utf-8'))
    assert list(raw) == ['schema', 'name', 'cases', 'failures', 'averages', 'totals', 'verdict']
    assert raw['cases'][0]['metrics']['requests'] == 14  # ints stay ints
    assert read_document(path) == document


def test_readers_recompute_averages_and_totals(document: ReportDocument, tmp_path: Path) -> None:
    path = tmp_path / 'edited.json'
    path.write_text(dump_document(document), encoding='utf-8')
    raw = json.loads(path.read_text(encoding='utf-8'))
    raw['averages']['scores']['TrajectoryMatch'] = 1.0
    raw['totals'] = {}
    path.write_text(json.dumps(raw), encoding='utf-8')
    again = read_document(path)
    assert again.averages.scores['TrajectoryMatch'] == pytest.approx(1 / 3)
    assert again.totals == document.totals


def test_gates_on_evaluator_errors_and_labels(document: ReportDocument) -> None:
    verdict = check_gates(document, Gates())
    assert verdict.summary == (
        "FAIL: 1 of 1 assertions failed (MaxToolCalls on case 'scenario'); 1 evaluator error (Unavailable on case 'scenario')"
    )
    with pytest.raises(ValueError, match="--min-score Risk: 'Risk' is a label, not a score or an assertion"):
        check_gates(document, Gates(min_scores=(MinScore('Risk', 0.5),)))


def _junit(text: str) -> ET.Element:
    """Parse JUnit XML and check what CI systems rely on: structure, required attributes, consistent counts."""
    root = ET.fromstring(text)
    assert root.tag == 'testsuites'
    totals = {'tests': 0, 'failures': 0, 'errors': 0}
    for suite in root:
        assert suite.tag == 'testsuite'
        assert suite.get('name')
        cases = suite.findall('testcase')
        assert len(cases) == len(suite)
        counts = {
            'tests': len(cases),
            'failures': sum(len(c.findall('failure')) for c in cases),
            'errors': sum(len(c.findall('error')) for c in cases),
        }
        for key, value in counts.items():
            assert int(suite.get(key, '-1')) == value, key
            totals[key] += value
        assert int(suite.get('skipped', '-1')) == sum(len(c.findall('skipped')) for c in cases)
        float(suite.get('time', 'x'))
        for case in cases:
            assert case.get('classname') and case.get('name')
            float(case.get('time', 'x'))
            for outcome in [*case.findall('failure'), *case.findall('error')]:
                assert outcome.get('message') and outcome.get('type')
            assert len(case.findall('failure')) + len(case.findall('error')) + len(case.findall('skipped')) <= 1
    for key, value in totals.items():
        assert int(root.get(key, '-1')) == value, key
    return root


def test_junit(document: ReportDocument) -> None:
    gates = Gates(min_scores=(MinScore('TrajectoryMatch', 0.5),))
    root = _junit(render_junit(document, gates, check_gates(document, gates)))
    results, gate_suite = root
    assert results.get('name') == 'nightly'
    outcomes = {
        case.get('name'): (case[0].tag, case[0].get('type'), case[0].get('message')) for case in results if len(case)
    }
    assert outcomes == {
        'MaxToolCalls': ('failure', 'AssertionFailed', f'{ATTEMPTS} tool call(s), budget=10'),
        # a score never fails by itself: its gate is on the average (in the gates suite below)
        'TrajectoryMatch': ('system-out', None, None),
        'Risk': ('system-out', None, None),
        'Unavailable': ('error', 'EvaluatorError', 'RuntimeError: judge backend unavailable'),
    }
    [score] = [c for c in results if c.get('name') == 'TrajectoryMatch']
    assert (score[0].text or '').startswith('TrajectoryMatch = 0.333 (below 0.500; the gate is on the average): LCS=2')
    assert {c.get('classname') for c in results} == {'scenario'}
    assert [(c.get('name'), len(c.findall('failure'))) for c in gate_suite] == [
        ('assertions', 1),
        ('evaluator errors', 1),
        ('min-score TrajectoryMatch', 1),
    ]


def test_junit_agrees_with_the_exit_status_when_failures_are_allowed(document: ReportDocument) -> None:
    """With --allow-failures and passing gates the run exits 0, so nothing in the XML may fail."""
    gates = Gates(allow_failures=True, min_scores=(MinScore('TrajectoryMatch', 0.2),))
    verdict = check_gates(document, gates)
    assert verdict.passed
    root = _junit(render_junit(document, gates, verdict))
    assert (root.get('failures'), root.get('errors'), root.get('skipped')) == ('0', '0', '2')
    skipped = {c.get('name'): c.find('skipped').get('message') for c in root[0] if c.find('skipped') is not None}  # type: ignore[union-attr]
    assert skipped == {
        'MaxToolCalls': f'allowed failure: {ATTEMPTS} tool call(s), budget=10',
        'Unavailable': 'allowed error: RuntimeError: judge backend unavailable',
    }


def test_junit_case_failures_and_unsafe_text() -> None:
    document = ReportDocument(
        name='odd <names> & "quotes"',
        cases=[CaseResult('a\x00b', assertions={'x': AssertionResult(False, 'bad\x1bchars\nsecond line')})],
        failures=[CaseFailure('missing', 'no trace found')],
    ).with_derived()
    root = _junit(render_junit(document, Gates(), check_gates(document, Gates())))
    results = root[0]
    assert results.get('name') == 'odd <names> & "quotes"'
    first, missing = results
    assert first.get('classname') == 'a\\x00b'
    assert first[0].get('message') == 'bad\\x1bchars'  # the first line only, control characters escaped
    assert first[0].text == 'bad\\x1bchars\nsecond line'
    assert (missing.get('classname'), missing.get('name'), missing[0].tag, missing[0].text) == (
        'missing',
        '(case)',
        'error',
        'no trace found',
    )


def test_markdown(document: ReportDocument) -> None:
    gates = Gates(min_scores=(MinScore('TrajectoryMatch', 0.5),))
    text = render_markdown(document, gates, check_gates(document, gates))
    lines = text.splitlines()
    assert lines[0] == '## ❌ agentic-evals: nightly — FAIL'
    assert '| TrajectoryMatch | score | 0.333 | ❌ < 0.500 |' in lines
    assert '| MaxToolCalls | assertion | 0.0% (0/1) | ❌ all must pass |' in lines
    assert '| Risk | label | risky: 100% |  |' in lines
    assert '| requests | metric | 14 |  |' in lines
    assert '### Needs attention (3)' in lines
    assert '| scenario | Unavailable | ⚠️ error | RuntimeError: judge backend unavailable |' in lines
    assert '| Case | MaxToolCalls | Risk | TrajectoryMatch | Unavailable |' in lines
    assert '| scenario | ❌ | risky | 0.333 | ⚠️ |' in lines


def test_markdown_cells_cannot_break_the_table() -> None:
    assert markdown_cell('a | b\n<script>&') == 'a \\| b<br>&lt;script>&amp;'


def test_numbers_never_look_equal_when_they_differ() -> None:
    assert format_number(0.61) == '0.610'
    assert format_number(0.7996, 0.8) == '0.7996'
    assert format_number(0.8, 0.7996) == '0.8000'
    document = ReportDocument(name='r', cases=[CaseResult('a', scores={'s': ScoreResult(0.7996)})]).with_derived()
    verdict = check_gates(document, Gates(min_scores=(MinScore('s', 0.8),)))
    assert verdict.summary == 'FAIL: s average 0.7996 < 0.8000'


def test_readers_accept_keys_added_within_the_same_version(document: ReportDocument, tmp_path: Path) -> None:
    path = tmp_path / 'newer.json'
    path.write_text(dump_document(document), encoding='utf-8')
    raw = json.loads(path.read_text(encoding='utf-8'))
    raw['generator'] = 'agentic-evals 9.9'
    raw['cases'][0]['tags'] = ['nightly']
    raw['cases'][0]['scores']['TrajectoryMatch']['version'] = 'v2'
    path.write_text(json.dumps(raw), encoding='utf-8')
    assert read_document(path) == document
