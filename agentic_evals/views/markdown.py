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
from ..reports.gates import (
    DURATION,
    Gates,
    Verdict,
    case_metric,
    cases_above,
    cases_below,
    format_metric,
    format_number,
    metric_mean,
)
from .text import visible
from .wording import failing_count, mean_figure

PASS, FAIL, ERROR = '✅', '❌', '⚠️'


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
    averages = _averages_rows(document, gates, survey.assertions)
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
    the matrix's result names, and each assertion's passes."""

    def __init__(self, document: ReportDocument, gates: Gates) -> None:
        self.summarised = len(document.cases) > SUMMARY_CASES
        self.attention = 0
        """Rows of the attention table (a summarised run lists only some of them)."""
        self.failing = 0
        """Cases with a row in the attention table, case failures included."""
        self.names: set[str] = set()
        self.assertions: dict[str, list[int]] = {}
        """Assertion name -> [cases passing it, cases that have it]."""
        for case in document.cases:
            rows = len(_case_attention(case, gates))
            self.attention += rows
            self.failing += bool(rows)
            self.names.update(case.assertions, case.scores, case.labels, _errors(case))
            for name, assertion in case.assertions.items():
                counts = self.assertions.setdefault(name, [0, 0])
                counts[0] += assertion.value
                counts[1] += 1
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


def _averages_rows(document: ReportDocument, gates: Gates, passes: dict[str, list[int]]) -> list[list[str]]:
    rows: list[list[str]] = []
    averages = document.averages
    for name, value in averages.scores.items():
        threshold = gates.threshold_for(name)
        gate = _joined(_gate(value, threshold), _case_gate(document, gates, name))
        rows.append([markdown_cell(name), 'score', format_number(value, threshold), gate])
    for name, rate in averages.assertions.items():
        passed, total = passes.get(name, (0, 0))
        threshold = gates.threshold_for(name)
        per_case = _case_gate(document, gates, name)
        if threshold is not None or per_case:
            gate = _joined(_gate(rate, threshold), per_case)
        elif rate == 1.0:
            gate = f'{PASS} all pass'
        else:
            gate = 'allowed' if gates.allow_failures else f'{FAIL} all must pass'
        rows.append([markdown_cell(name), 'assertion', f'{rate:.1%} ({passed}/{total})', gate])
    for name, shares in averages.labels.items():
        shown = ', '.join(f'{markdown_cell(v)}: {s:.0%}' for v, s in shares.items())
        rows.append([markdown_cell(name), 'label', shown, ''])
    metrics = dict(averages.metrics)
    for name in gates.gated_metrics():
        mean = metric_mean(document, name) if name == DURATION else metrics.get(name)
        if mean is not None and name not in metrics:
            metrics[name] = mean
    for name, mean in metrics.items():
        shown = format_metric(name, mean) if name == DURATION else mean_figure(mean)
        rows.append([markdown_cell(name), 'metric', shown, _metric_gate(document, gates, name, mean)])
    return rows


def _gate(value: float, threshold: float | None) -> str:
    if threshold is None:
        return ''
    if value >= threshold:
        return f'{PASS} >= {format_number(threshold, value)}'
    return f'{FAIL} < {format_number(threshold, value)}'


def _case_gate(document: ReportDocument, gates: Gates, name: str) -> str:
    threshold = gates.case_threshold_for(name)
    if threshold is None:
        return ''
    failing = cases_below(document, gates, name, threshold)
    if not failing:
        return f'{PASS} each >= {format_number(threshold)}'
    return f'{FAIL} {failing_count(failing, "<", format_number(threshold))}'


def _metric_gate(document: ReportDocument, gates: Gates, name: str, mean: float) -> str:
    cells: list[str] = []
    limit = gates.metric_limit_for(name)
    if limit is not None:
        bound = format_metric(name, limit, mean)
        cells.append(f'{PASS} <= {bound}' if mean <= limit else f'{FAIL} > {bound}')
    case_limit = gates.case_metric_limit_for(name)
    if case_limit is not None:
        failing = cases_above(document, name, case_limit)
        bound = format_metric(name, case_limit)
        cells.append(f'{PASS} each <= {bound}' if not failing else f'{FAIL} {failing_count(failing, ">", bound)}')
    return _joined(*cells)


def _joined(*cells: str) -> str:
    return '; '.join(cell for cell in cells if cell)


def _attention(document: ReportDocument, gates: Gates) -> Iterator[list[list[str]]]:
    """The attention table's rows, case by case (a case with nothing to attend to has none), then the case failures'."""
    for case in document.cases:
        yield _case_attention(case, gates)
    for failure in document.failures:
        yield [_failure_attention(failure)]


def _case_attention(case: CaseResult, gates: Gates) -> list[list[str]]:
    rows: list[list[str]] = []
    case_cell = markdown_cell(case.name)
    for name, assertion in sorted(case.assertions.items()):
        if not assertion.value:
            rows.append([case_cell, markdown_cell(name), f'{FAIL} fail', markdown_cell(assertion.reason or '')])
    for name, score in sorted(case.scores.items()):
        thresholds = [t for t in (gates.threshold_for(name), gates.case_threshold_for(name)) if t is not None]
        failed = [t for t in thresholds if score.value is None or score.value < t]
        if failed:
            threshold = max(failed)
            value = 'n/a' if score.value is None else format_number(score.value, threshold)
            shown = f'{FAIL} {value} < {format_number(threshold, score.value)}'
            rows.append([case_cell, markdown_cell(name), shown, markdown_cell(score.reason or '')])
    for error in case.evaluator_errors:
        rows.append([case_cell, markdown_cell(error.name), f'{ERROR} error', markdown_cell(error.message)])
    rows += _case_gate_rows(case, gates)
    return rows


def _failure_attention(failure: CaseFailure) -> list[str]:
    return [markdown_cell(failure.name), '(case)', f'{ERROR} error', markdown_cell(failure.error)]


def _case_gate_rows(case: CaseResult, gates: Gates) -> list[list[str]]:
    """What a case fails of the per-case gates beyond its own results: a missing result, a metric over its limit."""
    rows: list[list[str]] = []
    case_cell = markdown_cell(case.name)
    present = {*case.scores, *case.assertions, *(e.name for e in case.evaluator_errors)}
    for name in dict.fromkeys(g.name for g in gates.min_case_scores):
        if name not in present and gates.expects(case.name, name):
            rows.append([case_cell, markdown_cell(name), f'{FAIL} missing', 'no result (min-case-score)'])
    for name in dict.fromkeys(g.name for g in gates.max_case_metrics):
        limit = gates.case_metric_limit_for(name)
        value = case_metric(case, name)
        if limit is None or (value is not None and value <= limit):
            continue
        if value is None:
            rows.append([case_cell, markdown_cell(name), f'{FAIL} missing', 'not recorded (max-case-metric)'])
        else:
            shown = f'{FAIL} {format_metric(name, value, limit)} > {format_metric(name, limit, value)}'
            rows.append([case_cell, markdown_cell(name), shown, 'max-case-metric'])
    return rows


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
