"""A Markdown report for a pull-request comment or a CI job summary (GitHub-flavoured tables).

Ordered for a reviewer: the verdict line first, then the averages with their gates, then only the
results that need attention with their reasons, and the full case-by-result matrix folded away
in a `<details>` block so a large run does not flood the page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .document import CaseResult, ReportDocument
from .gates import Gates, Verdict, format_number
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
        rows.append([markdown_cell(name), 'score', format_number(value, threshold), _gate(value, threshold)])
    for name, rate in averages.assertions.items():
        values = [c.assertions[name].value for c in document.cases if name in c.assertions]
        threshold = gates.threshold_for(name)
        if threshold is not None:
            gate = _gate(rate, threshold)
        elif rate == 1.0:
            gate = f'{PASS} all pass'
        else:
            gate = 'allowed' if gates.allow_failures else f'{FAIL} all must pass'
        rows.append([markdown_cell(name), 'assertion', f'{rate:.1%} ({sum(values)}/{len(values)})', gate])
    for name, shares in averages.labels.items():
        shown = ', '.join(f'{markdown_cell(v)}: {s:.0%}' for v, s in shares.items())
        rows.append([markdown_cell(name), 'label', shown, ''])
    for name, mean in averages.metrics.items():
        shown = f'{mean:,.0f}' if float(mean).is_integer() else f'{mean:,.1f}'
        rows.append([markdown_cell(name), 'metric', shown, ''])
    return rows


def _gate(value: float, threshold: float | None) -> str:
    if threshold is None:
        return ''
    if value >= threshold:
        return f'{PASS} >= {format_number(threshold, value)}'
    return f'{FAIL} < {format_number(threshold, value)}'


def _attention_rows(document: ReportDocument, gates: Gates) -> list[list[str]]:
    rows: list[list[str]] = []
    for case in document.cases:
        case_cell = markdown_cell(case.name)
        for name, assertion in sorted(case.assertions.items()):
            if not assertion.value:
                rows.append([case_cell, markdown_cell(name), f'{FAIL} fail', markdown_cell(assertion.reason or '')])
        for name, score in sorted(case.scores.items()):
            threshold = gates.threshold_for(name)
            if threshold is not None and (score.value is None or score.value < threshold):
                value = 'n/a' if score.value is None else format_number(score.value, threshold)
                shown = f'{FAIL} {value} < {format_number(threshold, score.value)}'
                rows.append([case_cell, markdown_cell(name), shown, markdown_cell(score.reason or '')])
        for error in case.evaluator_errors:
            rows.append([case_cell, markdown_cell(error.name), f'{ERROR} error', markdown_cell(error.message)])
    for failure in document.failures:
        rows.append([markdown_cell(failure.name), '(case)', f'{ERROR} error', markdown_cell(failure.error)])
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
