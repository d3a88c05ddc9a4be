"""`agentic-evals-otel compare`: deltas of averages between two JSON reports, and the regression gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_evals.reports.compare import compare_documents
from agentic_evals.reports.document import AssertionResult, CaseFailure, CaseResult, ReportDocument, ScoreResult

from . import DATASET, run_cli, traces

REGRESSION = (
    'FAIL (tolerance 0.000): TrajectoryMatch average 1.000 -> 0.556 (-0.444);'
    ' support_trajectory average 1.000 -> 0.800 (-0.200); ArgumentCorrectness pass rate 1.000 -> 0.333 (-0.667);'
    ' ToolCorrectness pass rate 1.000 -> 0.000 (-1.000); fail rate 0.000 -> 0.750 (+0.750)'
)


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '250')


@pytest.fixture
def reports(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> dict[str, str]:
    paths = {}
    for variant in ('baseline', 'regressed'):
        path = tmp_path / f'{variant}.json'
        run_cli(capsys, 'run', str(DATASET), traces(variant), '--json', str(path), '--allow-failures')
        paths[variant] = str(path)
    return paths


def test_a_regression_fails(capsys: pytest.CaptureFixture[str], reports: dict[str, str], tmp_path: Path) -> None:
    markdown = tmp_path / 'compare.md'
    done = run_cli(capsys, 'compare', reports['baseline'], reports['regressed'], '--markdown', str(markdown))
    assert done.code == 1
    assert done.last_line == REGRESSION
    rows = [' '.join(line.split()) for line in done.out.splitlines()]
    assert 'TrajectoryMatch score 1.000 0.556 -0.444 REGRESSED' in rows
    assert 'MaxToolCalls pass rate 1.000 1.000 +0.000' in rows
    assert 'input_tokens metric 232.000 251.750 +19.750' in rows
    assert 'refund ArgumentCorrectness pass FAIL' in rows
    assert 'order_status TrajectoryMatch 1.000 0.500' in rows
    text = markdown.read_text(encoding='utf-8')
    assert text.startswith('## ❌ agentic-evals compare: support_agent (4 cases) -> support_agent (4 cases)\n')
    assert '| TrajectoryMatch | score | 1.000 | 0.556 | -0.444 | ❌ regressed |' in text
    assert '| refund | ArgumentCorrectness | pass | ❌ FAIL |' in text


def test_no_change_and_improvements_pass(capsys: pytest.CaptureFixture[str], reports: dict[str, str]) -> None:
    same = run_cli(capsys, 'compare', reports['baseline'], reports['baseline'])
    assert (same.code, same.last_line) == (
        0,
        'PASS: no score, pass rate or fail rate regressed by more than 0.000 (8 compared, 0 improved)',
    )
    assert 'Case changes' not in same.out
    better = run_cli(capsys, 'compare', reports['regressed'], reports['baseline'])
    assert (better.code, better.last_line) == (
        0,
        'PASS: no score, pass rate or fail rate regressed by more than 0.000 (8 compared, 5 improved)',
    )


def test_tolerance(capsys: pytest.CaptureFixture[str], reports: dict[str, str]) -> None:
    loose = run_cli(capsys, 'compare', reports['baseline'], reports['regressed'], '--tolerance', '0.7')
    assert (loose.code, loose.last_line) == (
        1,
        'FAIL (tolerance 0.700): ToolCorrectness pass rate 1.000 -> 0.000 (-1.000); fail rate 0.000 -> 0.750 (+0.750)',
    )
    assert run_cli(capsys, 'compare', reports['baseline'], reports['regressed'], '--tolerance', '1').code == 0


def _doc(name: str, *cases: CaseResult, failures: tuple[CaseFailure, ...] = ()) -> ReportDocument:
    return ReportDocument(name=name, cases=list(cases), failures=list(failures)).with_derived()


def test_a_removed_evaluator_counts_as_a_drop_and_a_new_one_does_not() -> None:
    baseline = _doc('b', CaseResult('a', scores={'old': ScoreResult(0.9)}))
    candidate = _doc('c', CaseResult('a', scores={'new': ScoreResult(0.1)}))
    comparison = compare_documents(baseline, candidate)
    assert [(a.name, a.regressed) for a in comparison.averages] == [
        ('new', False),
        ('old', True),
        ('(fail rate)', False),
    ]
    assert comparison.summary == 'FAIL (tolerance 0.000): old average missing in the candidate (baseline 0.900)'
    assert [(c.case, c.result, c.baseline, c.candidate, c.worse) for c in comparison.cases] == [
        ('a', 'new', '-', '0.100', False),
        ('a', 'old', '0.900', '-', True),
    ]


def test_case_level_changes() -> None:
    ok = AssertionResult(True)
    baseline = _doc(
        'b',
        CaseResult('kept', assertions={'x': ok}),
        CaseResult('dropped', assertions={'x': ok}),
        CaseResult('broke', assertions={'x': ok}),
    )
    candidate = _doc(
        'c',
        CaseResult('kept', assertions={'x': ok}),
        CaseResult('added', assertions={'x': ok}),
        failures=(CaseFailure('broke', 'no trace found'),),
    )
    comparison = compare_documents(baseline, candidate)
    assert [(c.case, c.result, c.baseline, c.candidate, c.worse) for c in comparison.cases] == [
        ('dropped', '(case)', 'ran', 'absent', True),
        ('broke', '(case)', 'ran', 'failed to run', True),
        ('added', '(case)', 'absent', 'ran', False),
    ]
    # the pass rate of x is unchanged (1/1 both), but a case failed to run: the fail rate catches it
    assert comparison.summary == 'FAIL (tolerance 0.000): fail rate 0.000 -> 0.333 (+0.333)'
