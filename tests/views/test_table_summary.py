"""A run of many cases prints the failing cases' rows only (a capped number of them); `--all-rows` prints every row."""

from __future__ import annotations

import io

import pytest

from agentic_evals.reports.document import AssertionResult, CaseResult, ReportDocument, ScoreResult
from agentic_evals.reports.gates import Gates
from agentic_evals.reports.judge import check_gates
from agentic_evals.views.table import FAILING_CASES_SHOWN, SUMMARY_CASES, print_report
from agentic_evals.views.terminal import make_console

NOTE = '--all-rows shows every row'


def _document(cases: int, failing: set[int]) -> ReportDocument:
    return ReportDocument(
        name='big',
        cases=[
            CaseResult(
                f'case-{index:04d}',
                scores={'TrajectoryMatch': ScoreResult(0.5 if index in failing else 1.0, 'why')},
                assertions={'MaxToolCalls': AssertionResult(index not in failing, 'over budget')},
            )
            for index in range(cases)
        ],
    ).with_derived()


def _printed(document: ReportDocument, **options: bool) -> str:
    out = io.StringIO()
    print_report(document, Gates(), check_gates(document, Gates()), make_console(out), **options)
    return out.getvalue()


def _case_names(text: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines() if line.startswith('  case-')]


def test_a_small_run_prints_every_case_and_no_note() -> None:
    document = _document(SUMMARY_CASES, failing={3})
    text = _printed(document)
    assert _case_names(text) == [f'case-{i:04d}' for i in range(SUMMARY_CASES)]
    assert NOTE not in text
    assert text == _printed(document, all_rows=True)


def test_a_large_run_prints_only_the_failing_cases_rows() -> None:
    document = _document(SUMMARY_CASES + 1, failing={2, 40})
    text = _printed(document)
    assert _case_names(text) == ['case-0002', 'case-0040']
    assert 'big: 51 case(s), the rows of failing cases only' in text
    assert "--all-rows shows every row, the passing cases' too" in text
    # every row of a failing case, the passing ones too; the averages are whole
    assert text.count('MaxToolCalls') == 2 + 1 and '96.1% (49/51)' in text


def test_beyond_the_cap_the_other_failing_cases_are_counted() -> None:
    failing = set(range(0, 2 * FAILING_CASES_SHOWN + 10, 2))
    document = _document(200, failing)
    text = _printed(document)
    assert _case_names(text) == [f'case-{i:04d}' for i in sorted(failing)[:FAILING_CASES_SHOWN]]
    assert f'and {len(failing) - FAILING_CASES_SHOWN} more failing cases; --all-rows shows every row' in text


def test_a_large_run_without_failures_says_so() -> None:
    text = _printed(_document(1000, failing=set()))
    assert _case_names(text) == []
    assert 'no failing case among the 1,000 cases; --all-rows shows every row' in text
    assert '100.0% (1000/1000)' in text


@pytest.mark.parametrize('quiet', [False, True])
def test_all_rows_prints_every_case(quiet: bool) -> None:
    document = _document(120, failing={7})
    text = _printed(document, all_rows=True, quiet=quiet)
    assert _case_names(text) == ([f'case-{i:04d}' for i in range(120)] if not quiet else ['case-0007'])
    assert NOTE not in text


def test_quiet_in_a_summarised_run_prints_only_the_failing_rows() -> None:
    text = _printed(_document(120, failing={7, 9}), quiet=True)
    assert _case_names(text) == ['case-0007', 'case-0009']
    assert text.count('MaxToolCalls') == 2 + 1  # two failing rows and the averages' row
