"""A Markdown report for a pull-request comment or a CI job summary (GitHub-flavoured tables).

Ordered for a reviewer: the verdict line first, then the averages with their gates, then only the
results that need attention with their reasons, and the full case-by-result matrix folded away
in a `<details>` block so a large run does not flood the page.

A run of more than `SUMMARY_CASES` cases is summarised, as the terminal table is: the attention table
and the matrix show only the first `FAILING_CASES_SHOWN` failing cases, each followed by a sentence
saying how many more there are (the JSON and HTML reports have every case). A pull-request comment
holds 65,536 characters, and a matrix of ten thousand rows helps nobody.

The text is made a piece at a time (`markdown_chunks`), in a few passes over the cases, so a run of a
million cases is written without its cases, or its text, in memory at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ..reports.document import CaseFailure, CaseResult, ReportDocument
from ..reports.gates import DURATION, Gates, format_number
from ..reports.judge import case_verdict
from ..reports.verdict import AverageVerdict, Check, Verdict
from .text import visible
from .wording import average_figure, check_figure, gate_phrase, label_shares

PASS, FAIL, ERROR, BELOW = '✅', '❌', '⚠️', '⚠️'


SUMMARY_CASES = 50
"""Runs of more cases than this list only the first `FAILING_CASES_SHOWN` failing cases (as `table.py` does)."""
FAILING_CASES_SHOWN = 20
"""The failing cases a summarised run lists, in the attention table and in the matrix; the rest are counted."""
OTHER_REPORTS = 'the JSON (--json) and HTML (--html) reports have every case'


def render_markdown(document: ReportDocument, gates: Gates, verdict: Verdict) -> str:
    return ''.join(markdown_chunks(document, gates, verdict))


def markdown_chunks(document: ReportDocument, gates: Gates, verdict: Verdict) -> Iterator[str]:
    """`render_markdown`'s text a piece at a time: a first pass over the cases counts what the headings
    and the averages say, then the attention rows and the matrix rows are written as the cases are read
    again (a summarised run stops reading once it has listed its failing cases)."""
    survey = _Survey(document, gates)
    status = 'PASS' if verdict.passed else 'FAIL'
    icon = PASS if verdict.passed else FAIL
    yield f'## {icon} agentic-evals: {markdown_cell(document.name)} — {status}\n\n{markdown_cell(verdict.summary)}'
    averages = _averages_rows(document, verdict)
    if averages:
        yield '\n\n' + markdown_table(['Result', 'Kind', 'Average', 'Gate'], averages)
    limit = FAILING_CASES_SHOWN if survey.summarised else None
    if survey.attention:
        yield f'\n\n### Needs attention ({survey.attention})\n\n' + markdown_table(
            ['Case', 'Result', 'Value', 'Reason'], []
        )
        for rows in _failing(_attention(document, gates), limit):
            yield ''.join('\n' + _table_row(row) for row in rows)
        if limit is not None and survey.failing > limit:
            shown = f'{limit} of {survey.failing}'
            yield f'\n\nThe results of the first {shown} failing cases are listed: {OTHER_REPORTS}.'
    if survey.names or document.failures:
        total = document.totals.cases
        if limit is None:
            yield f'\n\n<details><summary>All results: {total} case(s)</summary>\n\n'
        else:
            listed = min(limit, survey.failing)
            yield f"\n\n<details><summary>The failing cases' results: {listed} of {total} case(s)</summary>\n\n"
        if limit is None or survey.failing:
            names = sorted(survey.names)
            yield markdown_table(['Case', *(markdown_cell(n) for n in names)], [])
            cases = _matrix_rows(document, gates, names, failing_only=limit is not None)
            for rows in _failing(cases, limit):
                yield ''.join('\n' + _table_row(row) for row in rows)
            if limit is not None:
                yield '\n\n'
        if limit is not None:
            yield _matrix_note(total, survey.failing, min(limit, survey.failing))
        yield '\n</details>'
    yield '\n'


def _matrix_note(total: int, failing: int, listed: int) -> str:
    """What a summarised matrix leaves out."""
    if not failing:
        return f'None of the {total} cases needs attention, so none is listed here: {OTHER_REPORTS}.'
    if listed == failing:
        return f'Only the {failing} failing cases (of {total}) are listed here: {OTHER_REPORTS}.'
    return f'The first {listed} of the {failing} failing cases (of {total}) are listed here: {OTHER_REPORTS}.'


class _Survey:
    """What the pieces before the rows need, counted in one pass: the attention rows and failing cases,
    and the matrix's result names."""

    def __init__(self, document: ReportDocument, gates: Gates) -> None:
        self.summarised = len(document.cases) > SUMMARY_CASES
        self.attention = 0
        """Rows of the attention table (a summarised run lists only some of them)."""
        self.failing = 0
        """Cases with a row in the attention table, case failures included."""
        self.names: set[str] = set()
        for case in document.cases:
            rows = len(_case_attention(case, gates))
            self.attention += rows
            self.failing += bool(rows)
            self.names.update(case.assertions, case.scores, case.labels, _errors(case))
        self.attention += len(document.failures)  # one row each
        self.failing += len(document.failures)


def _failing(cases: Iterator[list[list[str]]], limit: int | None) -> Iterator[list[list[str]]]:
    """Each case's rows; with a `limit`, only the first `limit` cases that have rows (then it stops reading)."""
    listed = 0
    for rows in cases:
        if limit is not None and rows:
            if listed == limit:
                return
            listed += 1
        yield rows


def _table_row(cells: Sequence[str]) -> str:
    return '| ' + ' | '.join(cells) + ' |'


def markdown_cell(text: str) -> str:
    """Text from data, safe inside a table cell or a heading: shown as written, never as Markdown or HTML.

    Controls are escaped (`visible`); `&` and `<` become entities (no HTML, no autolinks); the
    punctuation that starts links, images, emphasis, code, strikethrough and math is backslash-escaped
    (`![x](http://host/t.png)` shows as written, fetching nothing); `|` cannot break the column;
    newlines become `<br>`. `_` inside a word is left alone: it never emphasizes there. `>`, `#`,
    `-` and digits only matter at the start of a line, where text here never stands.
    """
    escaped = _MARKDOWN_PUNCTUATION.sub(r'\\\g<0>', visible(text).replace('&', '&amp;').replace('<', '&lt;'))
    return '<br>'.join(escaped.rstrip('\n').split('\n'))


_MARKDOWN_PUNCTUATION = re.compile(r'[\\`*~\[\]|$]|(?<![^\W_])_|_(?![^\W_])')
"""Backslash, code, emphasis, strikethrough, link and image brackets, table pipes, math; `_` off a word."""


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ['| ' + ' | '.join(header) + ' |', '|' + ' --- |' * len(header)]
    lines += [_table_row(row) for row in rows]
    return '\n'.join(lines)


def _averages_rows(document: ReportDocument, verdict: Verdict) -> list[list[str]]:
    """The averages with their gates, as the verdict judged them; the labels' shares; the metrics recorded
    (and `duration` when a gate names it)."""
    rows: list[list[str]] = []
    judged = [row for row in verdict.averages if row.kind != 'metric']
    for row in judged:
        rows.append([markdown_cell(row.name), row.kind, average_figure(row), _gate_cell(row)])
    for name, shares in document.averages.labels.items():
        shown = label_shares(shares, markdown_cell)
        rows.append([markdown_cell(name), 'label', shown, ''])
    for row in verdict.averages:
        if row.kind == 'metric' and (row.name != DURATION or row.gates):
            rows.append([markdown_cell(row.name), 'metric', average_figure(row), _gate_cell(row)])
    return rows


def _gate_cell(row: AverageVerdict) -> str:
    cells = []
    for gate in row.gates:
        phrase = gate_phrase(row, gate)
        cells.append(phrase if gate.status == 'allowed' else f'{PASS if gate.status == "pass" else FAIL} {phrase}')
    return '; '.join(cells)


def _attention(document: ReportDocument, gates: Gates) -> Iterator[list[list[str]]]:
    """The attention table's rows, case by case (a case with nothing to attend to has none), then the case failures'."""
    for case in document.cases:
        yield _case_attention(case, gates)
    for failure in document.failures:
        yield [_failure_attention(failure)]


def _case_attention(case: CaseResult, gates: Gates) -> list[list[str]]:
    """A row per check of the case that needs attention: what failed (allowed or not), a score below its
    average's gate, an evaluator error, a result or metric a per-case gate finds missing or over."""
    return [_attention_row(case, check) for check in case_verdict(case, gates).checks if check.status in _ATTENTION]


_ATTENTION = ('fail', 'allowed', 'below')


def _attention_row(case: CaseResult, check: Check) -> list[str]:
    case_cell, name_cell = markdown_cell(case.name), markdown_cell(check.name)
    if check.kind == 'assertion':
        said = case.assertions[check.name].reason or ''
        return [case_cell, name_cell, f'{FAIL} fail', markdown_cell(said)]
    if check.kind == 'error':
        message = next(e.message for e in case.evaluator_errors if e.name == check.name)
        return [case_cell, name_cell, f'{ERROR} error', markdown_cell(message)]
    if check.kind == 'missing':
        return [case_cell, name_cell, f'{FAIL} missing', 'no result (min-case-score)']
    if check.kind == 'metric':
        why = 'not recorded (max-case-metric)' if check.value is None else 'max-case-metric'
        return [case_cell, name_cell, f'{FAIL} {check_figure(check)}', why]
    icon = BELOW if check.status == 'below' else FAIL
    result = case.scores.get(check.name) or case.assertions.get(check.name)
    reason = result.reason if result is not None else None
    return [case_cell, name_cell, f'{icon} {check_figure(check)}', markdown_cell(reason or '')]


def _failure_attention(failure: CaseFailure) -> list[str]:
    return [markdown_cell(failure.name), '(case)', f'{ERROR} error', markdown_cell(failure.error)]


def _matrix_rows(
    document: ReportDocument, gates: Gates, names: list[str], *, failing_only: bool
) -> Iterator[list[list[str]]]:
    """The matrix's row of each case (in a list, empty for a passing case when only failing ones are listed)."""
    for case in document.cases:
        listed = not failing_only or bool(_case_attention(case, gates))
        yield [[markdown_cell(case.name), *(_matrix_cell(case, n) for n in names)]] if listed else []
    for failure in document.failures:
        yield [[markdown_cell(failure.name), *([f'{ERROR} not run'] * len(names))]]


def _errors(case: CaseResult) -> list[str]:
    return [e.name for e in case.evaluator_errors]


def _matrix_cell(case: CaseResult, name: str) -> str:
    if name in case.assertions:
        return PASS if case.assertions[name].value else FAIL
    if name in case.scores:
        value = case.scores[name].value
        return 'n/a' if value is None else format_number(value)
    if name in case.labels:
        return markdown_cell(case.labels[name].value)
    if any(e.name == name for e in case.evaluator_errors):
        return ERROR
    return '—'
