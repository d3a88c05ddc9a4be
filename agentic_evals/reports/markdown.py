"""A Markdown report for a pull-request comment or a CI job summary (GitHub-flavoured tables).

Ordered for a reviewer: the verdict line first, then the averages with their gates, then only the
results that need attention with their reasons, and the full case-by-result matrix folded away
in a `<details>` block so a large run does not flood the page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .document import CaseResult, ReportDocument
from .gates import (
    DURATION,
    Gates,
    Verdict,
    case_metric,
    cases_above,
    cases_below,
    failing_count,
    format_metric,
    format_number,
    metric_mean,
)
from .text import visible

PASS, FAIL, ERROR = '✅', '❌', '⚠️'


def render_markdown(document: ReportDocument, gates: Gates, verdict: Verdict) -> str:
    status = 'PASS' if verdict.passed else 'FAIL'
    icon = PASS if verdict.passed else FAIL
    parts = [
        f'## {icon} agentic-evals: {markdown_cell(document.name)} — {status}',
        markdown_cell(verdict.summary),
    ]
    averages = _averages_rows(document, gates)
    if averages:
        parts.append(markdown_table(['Result', 'Kind', 'Average', 'Gate'], averages))
    attention = _attention_rows(document, gates)
    if attention:
        parts.append(f'### Needs attention ({len(attention)})')
        parts.append(markdown_table(['Case', 'Result', 'Value', 'Reason'], attention))
    matrix = _matrix(document)
    if matrix:
        summary = f'All results: {document.totals.cases} case(s)'
        parts.append(f'<details><summary>{summary}</summary>\n\n{matrix}\n</details>')
    return '\n\n'.join(parts) + '\n'


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
    lines += ['| ' + ' | '.join(row) + ' |' for row in rows]
    return '\n'.join(lines)


def _averages_rows(document: ReportDocument, gates: Gates) -> list[list[str]]:
    rows: list[list[str]] = []
    averages = document.averages
    for name, value in averages.scores.items():
        threshold = gates.threshold_for(name)
        gate = _joined(_gate(value, threshold), _case_gate(document, gates, name))
        rows.append([markdown_cell(name), 'score', format_number(value, threshold), gate])
    for name, rate in averages.assertions.items():
        values = [c.assertions[name].value for c in document.cases if name in c.assertions]
        threshold = gates.threshold_for(name)
        per_case = _case_gate(document, gates, name)
        if threshold is not None or per_case:
            gate = _joined(_gate(rate, threshold), per_case)
        elif rate == 1.0:
            gate = f'{PASS} all pass'
        else:
            gate = 'allowed' if gates.allow_failures else f'{FAIL} all must pass'
        rows.append([markdown_cell(name), 'assertion', f'{rate:.1%} ({sum(values)}/{len(values)})', gate])
    for name, shares in averages.labels.items():
        shown = ', '.join(f'{markdown_cell(v)}: {s:.0%}' for v, s in shares.items())
        rows.append([markdown_cell(name), 'label', shown, ''])
    metrics = dict(averages.metrics)
    for name in gates.gated_metrics():
        mean = metric_mean(document, name) if name == DURATION else metrics.get(name)
        if mean is not None and name not in metrics:
            metrics[name] = mean
    for name, mean in metrics.items():
        if name == DURATION:
            shown = format_metric(name, mean)
        else:
            shown = f'{mean:,.0f}' if float(mean).is_integer() else f'{mean:,.1f}'
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


def _attention_rows(document: ReportDocument, gates: Gates) -> list[list[str]]:
    rows: list[list[str]] = []
    for case in document.cases:
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
    for failure in document.failures:
        rows.append([markdown_cell(failure.name), '(case)', f'{ERROR} error', markdown_cell(failure.error)])
    return rows


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


def _matrix(document: ReportDocument) -> str:
    names = sorted({n for c in document.cases for n in (*c.assertions, *c.scores, *c.labels, *_errors(c))})
    if not names and not document.failures:
        return ''
    rows = [[markdown_cell(c.name), *(_matrix_cell(c, n) for n in names)] for c in document.cases]
    rows += [[markdown_cell(f.name), *([f'{ERROR} not run'] * len(names))] for f in document.failures]
    return markdown_table(['Case', *(markdown_cell(n) for n in names)], rows)


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
