"""One verdict, computed once: every view of one document agrees with it, at and around every threshold.

Each scenario is a document and a gate a rounding error either side of its bound. The verdict
(`check_gates`) decides; the terminal table, the Markdown, the JUnit XML, the HTML payload, the
comparison and the exit status of `render` on the JSON report must all say the same, and the JSON
report read back must carry (and give again) the same verdicts.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.console import Console

from agentic_evals.cli import main
from agentic_evals.reports.compare import compare_documents
from agentic_evals.reports.document import (
    AssertionResult,
    CaseResult,
    ReportDocument,
    ScoreResult,
    document_chunks,
    read_document,
)
from agentic_evals.reports.gates import Gates, MaxMetric, MinScore
from agentic_evals.reports.judge import case_verdict, check_gates, judged
from agentic_evals.reports.verdict import Verdict
from agentic_evals.views.html import payload
from agentic_evals.views.junit import render_junit
from agentic_evals.views.markdown import render_markdown
from agentic_evals.views.table import print_report
from agentic_evals.views.terminal import make_console, print_verdict

EXACT = 0.8
JUST_BELOW = 0.8 - 1e-12
"""A rounding error short of 0.8: reaches a threshold of 0.8 (`at_least`'s tolerance is 1e-9)."""


def _document(scores: list[float], *, requests: list[int] | None = None, failed: int = 0) -> ReportDocument:
    cases = []
    for index, value in enumerate(scores):
        metrics = {'requests': requests[index]} if requests is not None else {}
        assertions = {'ok': AssertionResult(index >= failed, 'checked')}
        cases.append(
            CaseResult(
                f'case {index}', scores={'X': ScoreResult(value, 'scored')}, assertions=assertions, metrics=metrics
            )
        )
    return ReportDocument(name='verdicts', cases=cases).with_derived()


@dataclass(frozen=True)
class Scenario:
    name: str
    document: ReportDocument
    gates: Gates
    flags: tuple[str, ...]
    passed: bool
    gated: str
    """The averages row the gate is on."""


def _scenarios() -> list[Scenario]:
    three = [0.6, 1.0, 0.8]  # the case: the mean is 0.7999999999999999
    found: list[Scenario] = []
    for label, scores, threshold, passed in [
        ('issue example', three, 0.8, True),
        ('mean a hair under', [JUST_BELOW], EXACT, True),
        ('mean exact', [EXACT], EXACT, True),
        ('threshold a hair over', three, 0.8 + 1e-12, True),
        ('mean 0.79', [0.79], EXACT, False),
        ('threshold 0.81', three, 0.81, False),
    ]:
        gates = Gates(min_scores=(MinScore('X', threshold),))
        found.append(
            Scenario(f'min-score: {label}', _document(scores), gates, ('--min-score', f'X={threshold!r}'), passed, 'X')
        )
    for label, scores, passed in [
        ('each a hair under', [JUST_BELOW, 0.9], True),
        ('one at 0.79', [0.79, 0.9], False),
    ]:
        gates = Gates(min_case_scores=(MinScore('X', EXACT),))
        flags = ('--min-case-score', f'X={EXACT!r}')
        found.append(Scenario(f'min-case-score: {label}', _document(scores), gates, flags, passed, 'X'))
    for label, limit, passed in [
        ('at the limit', 3.0, True),
        ('a hair under it', 3 - 1e-12, True),
        ('under', 2.99, False),
    ]:
        document = _document([1.0, 1.0, 1.0], requests=[3, 3, 3])
        gates = Gates(max_metrics=(MaxMetric('requests', limit),))
        flags = ('--max-metric', f'requests={limit!r}')
        found.append(Scenario(f'max-metric: {label}', document, gates, flags, passed, 'requests'))
        gates = Gates(max_case_metrics=(MaxMetric('requests', limit),))
        flags = ('--max-case-metric', f'requests={limit!r}')
        found.append(Scenario(f'max-case-metric: {label}', document, gates, flags, passed, 'requests'))
    for label, limit, passed in [('a hair under a third', 1 / 3 - 1e-12, True), ('0.33', 0.33, False)]:
        gates = Gates(allow_failures=True, max_fail_rate=limit)
        flags = ('--allow-failures', '--max-fail-rate', f'{limit!r}')
        found.append(Scenario(f'max-fail-rate: {label}', _document(three, failed=1), gates, flags, passed, 'ok'))
    return found


SCENARIOS = _scenarios()


@pytest.fixture(params=SCENARIOS, ids=[s.name for s in SCENARIOS])
def scenario(request: pytest.FixtureRequest) -> Scenario:
    return request.param  # type: ignore[no-any-return]


def test_the_verdict_is_the_expected_one(scenario: Scenario) -> None:
    verdict = check_gates(scenario.document, scenario.gates)
    assert verdict.passed is scenario.passed, verdict.summary
    assert verdict.summary.startswith('PASS' if scenario.passed else 'FAIL')


def _terminal(scenario: Scenario, verdict: Verdict) -> str:
    out = io.StringIO()
    console = make_console(out)
    print_report(scenario.document, scenario.gates, verdict, console)
    print_verdict(console, verdict.summary, passed=verdict.passed)
    return out.getvalue()


def test_the_terminal_agrees(scenario: Scenario) -> None:
    verdict = check_gates(scenario.document, scenario.gates)
    lines = _terminal(scenario, verdict).rstrip().splitlines()
    assert lines[-1].startswith('PASS' if scenario.passed else 'FAIL')
    if scenario.gated != 'ok':  # the fail rate has no averages row: its gate is in the verdict line
        row = next(
            line for line in lines if line.split()[:2] in ([scenario.gated, 'score'], [scenario.gated, 'metric'])
        )
        assert row.endswith(': ok') is scenario.passed, row
        assert ('FAIL:' in row) is not scenario.passed, row


def test_the_markdown_agrees(scenario: Scenario) -> None:
    verdict = check_gates(scenario.document, scenario.gates)
    text = render_markdown(scenario.document, scenario.gates, verdict)
    assert text.splitlines()[0].endswith('— PASS' if scenario.passed else '— FAIL')
    row = next(line for line in text.splitlines() if line.startswith(f'| {scenario.gated} |'))
    if scenario.gated != 'ok':  # the fail rate has no averages row: its gate is in the verdict line
        assert ('❌' not in row) is scenario.passed, row


def test_the_junit_agrees(scenario: Scenario) -> None:
    verdict = check_gates(scenario.document, scenario.gates)
    root = ET.fromstring(render_junit(scenario.document, scenario.gates, verdict))
    gates_suite = next(s for s in root.iter('testsuite') if s.get('name') == 'gates')
    assert (gates_suite.get('failures') == '0') is scenario.passed
    per_case = scenario.gates.min_case_scores or scenario.gates.max_case_metrics
    if per_case:  # the cases' own testcases fail exactly when the per-case gate does
        results = next(s for s in root.iter('testsuite') if s.get('name') == 'verdicts')
        assert (results.get('failures') == '0') is scenario.passed


def test_the_html_agrees(scenario: Scenario) -> None:
    verdict = check_gates(scenario.document, scenario.gates)
    data = payload(scenario.document, scenario.gates, verdict)
    assert data['verdict']['passed'] is scenario.passed
    assert all(passed for _, passed, _ in data['verdict']['gates']) is scenario.passed
    rows = {row[0]: row for row in data['averages']}
    if scenario.gated in rows and scenario.gated != 'ok':
        assert rows[scenario.gated][4] == int(scenario.passed)
    if scenario.gates.min_case_scores or scenario.gates.max_case_metrics:
        assert all(case['s'] == 'pass' for case in data['cases']) is scenario.passed


def test_the_exit_status_and_the_json_agree(scenario: Scenario, tmp_path: Path) -> None:
    verdict = check_gates(scenario.document, scenario.gates)
    report = tmp_path / 'report.json'
    report.write_text(''.join(document_chunks(judged(scenario.document, scenario.gates, verdict))), encoding='utf-8')
    raw = json.loads(report.read_text(encoding='utf-8'))
    assert raw['verdict']['passed'] is scenario.passed
    assert [c['verdict']['passed'] for c in raw['cases']] == [
        case_verdict(c, scenario.gates).passed for c in scenario.document.cases
    ]
    back = read_document(report)
    assert back.verdict == verdict  # carried as written
    assert check_gates(back, scenario.gates) == verdict  # and the same answers when judged again
    status = main(['render', str(report), '--html', str(tmp_path / 'report.html'), *scenario.flags])
    assert status == (0 if scenario.passed else 1)


@pytest.mark.parametrize(
    ('candidate', 'regressed'),
    [([0.6, 1.0, 0.8], False), ([JUST_BELOW], False), ([EXACT], False), ([0.79], True)],
    ids=['same mean', 'a hair under', 'exact', '0.79'],
)
def test_compare_reads_a_rounding_error_as_no_change(candidate: list[float], regressed: bool) -> None:
    comparison = compare_documents(_document([EXACT]), _document(candidate))
    change = next(c for c in comparison.averages if c.name == 'X')
    assert change.regressed is regressed
    assert comparison.passed is not regressed
    assert not change.improved


def test_a_score_no_gate_covers_is_a_score_never_a_pass() -> None:
    """A case whose only result is a `TrajectoryMatch` of 0.5, no gate on it: every view shows 0.5."""
    document = ReportDocument(
        name='ungated', cases=[CaseResult('only', scores={'TrajectoryMatch': ScoreResult(0.5, 'half')})]
    ).with_derived()
    gates = Gates()
    verdict = check_gates(document, gates)
    judged_case = case_verdict(document.cases[0], gates)
    assert judged_case.passed is None
    assert [(c.name, c.status) for c in judged_case.checks] == [('TrajectoryMatch', 'none')]
    html = payload(document, gates, verdict)
    assert html['cases'][0]['s'] == 'scored'
    assert html['cases'][0]['R'][0][5] == 0  # no mark: neither failed nor passed
    out = io.StringIO()
    print_report(document, gates, verdict, Console(file=out, width=120, color_system=None), reasons=True)
    row = next(line for line in out.getvalue().splitlines() if 'TrajectoryMatch' in line and 'half' in line)
    assert row.split()[-2:] == ['0.500', 'half'] and 'pass' not in row.lower()
    markdown = render_markdown(document, gates, verdict)
    assert '| only | 0.500 |' in markdown and '✅' not in markdown.split('<details>')[1]
    junit = ET.fromstring(render_junit(document, gates, verdict))
    testcase = next(t for t in junit.iter('testcase') if t.get('name') == 'TrajectoryMatch')
    assert testcase.findtext('system-out') == 'TrajectoryMatch = 0.500: half'
