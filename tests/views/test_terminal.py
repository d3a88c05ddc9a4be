"""The terminal: the verdict wraps at word boundaries; output piped to a file has no trailing spaces."""

from __future__ import annotations

import io
import re

import pytest

from agentic_evals.reports.document import AssertionResult, CaseResult, ReportDocument, ScoreResult
from agentic_evals.reports.gates import Gates, MinScore
from agentic_evals.reports.judge import check_gates
from agentic_evals.views.table import print_report
from agentic_evals.views.terminal import make_console, print_verdict

from ..cli import DATASET, run_cli, traces

SUMMARY = (
    "FAIL: 3 of 13 assertions failed (ArgumentCorrectness on case 'refund', ToolCorrectness on case"
    " 'shipping_faq', ArgumentCorrectness on case 'damaged_escalation'); TrajectoryMatch average 0.556 < 0.900"
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize('width', [30, 47, 80])
def test_the_verdict_wraps_at_word_boundaries_on_a_narrow_terminal(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    monkeypatch.setenv('COLUMNS', str(width))
    monkeypatch.setenv('NO_COLOR', '1')
    out = _Terminal()
    print_verdict(make_console(out), SUMMARY, passed=False)
    lines = re.sub(r'\x1b\[[0-9;]*m', '', out.getvalue()).splitlines()  # without the bold
    assert len(lines) > 1
    assert all(len(line) <= width for line in lines)
    assert ' '.join(line.strip() for line in lines) == SUMMARY  # no word was cut


def test_the_verdict_is_one_line_when_piped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '40')
    out = io.StringIO()
    print_verdict(make_console(out), SUMMARY, passed=False)
    assert out.getvalue() == SUMMARY + '\n'


def test_tables_piped_to_a_file_have_no_trailing_spaces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('COLUMNS', raising=False)
    document = ReportDocument(
        name='short',
        cases=[
            CaseResult(
                'a', scores={'TrajectoryMatch': ScoreResult(0.5, 'x')}, assertions={'Long' * 5: AssertionResult(True)}
            ),
            CaseResult('bb', scores={'TrajectoryMatch': ScoreResult(1.0, 'y' * 300)}),
        ],
    ).with_derived()
    gates = Gates(min_scores=(MinScore('TrajectoryMatch', 0.8),))
    out = io.StringIO()
    console = make_console(out)
    print_report(document, gates, check_gates(document, gates), console, reasons=True)
    print_verdict(console, check_gates(document, gates).summary, passed=False)
    lines = re.sub(r'\x1b\[[0-9;]*m', '', out.getvalue()).splitlines()  # without the bold
    assert len(lines) > 10
    assert [line for line in lines if line != line.rstrip()] == []
    assert any(line.startswith('  a ') for line in lines)  # leading spaces (the table's own) stay


@pytest.mark.parametrize(
    'argv',
    [
        ['run', str(DATASET), 'regressed', '--reasons'],
        ['inspect', 'baseline'],
    ],
)
def test_every_command_piped_has_no_trailing_spaces(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    argv = [traces(a) if a in ('baseline', 'regressed') else a for a in argv]
    out = run_cli(capsys, *argv).out
    assert out.count('\n') > 5
    assert [line for line in out.splitlines() if line != line.rstrip()] == []
