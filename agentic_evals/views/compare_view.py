"""Rendering a `Comparison`: a terminal table and Markdown for a pull-request comment (names shown as text)."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..reports.compare import AverageChange, Comparison, signed
from ..reports.gates import format_number
from .markdown import FAIL, PASS, markdown_cell, markdown_table
from .terminal import data_text


def _title(comparison: Comparison) -> str:
    b, c = comparison.baseline, comparison.candidate
    return f'{b.name} ({b.totals.cases} cases) -> {c.name} ({c.totals.cases} cases)'


def print_comparison(comparison: Comparison, console: Console) -> None:
    table = Table(title=data_text(f'Averages: {_title(comparison)}'), box=box.SIMPLE_HEAD, title_justify='left')
    for column in ('Result', 'Kind', 'Baseline', 'Candidate', 'Delta', 'Status'):
        table.add_column(column)
    for change in comparison.averages:
        table.add_row(data_text(change.name), change.kind, *_values(change), _status(change))
    console.print(table)
    if comparison.cases:
        cases = Table(title='Case changes', box=box.SIMPLE_HEAD, title_justify='left')
        for column in ('Case', 'Result', 'Baseline', 'Candidate'):
            cases.add_column(column, overflow='fold')
        for case in comparison.cases:
            style = 'red' if case.worse else ''
            cases.add_row(
                data_text(case.case), data_text(case.result), data_text(case.baseline), data_text(case.candidate, style)
            )
        console.print(cases)


def _values(change: AverageChange) -> tuple[str, str, str]:
    delta = change.delta
    return _number(change.baseline), _number(change.candidate), '' if delta is None else signed(delta)


def _number(value: float | None) -> str:
    return '-' if value is None else format_number(value)


def _status(change: AverageChange) -> Text:
    if change.regressed:
        return Text('REGRESSED', style='bold red')
    if change.improved:
        return Text('improved', style='green')
    return Text('')


def render_comparison_markdown(comparison: Comparison) -> str:
    icon = PASS if comparison.passed else FAIL
    rows = [
        [
            markdown_cell(c.name),
            c.kind,
            *_values(c),
            f'{FAIL} regressed' if c.regressed else f'{PASS} improved' if c.improved else '',
        ]
        for c in comparison.averages
    ]
    parts = [
        f'## {icon} agentic-evals compare: {markdown_cell(_title(comparison))}',
        markdown_cell(comparison.summary),
        markdown_table(['Result', 'Kind', 'Baseline', 'Candidate', 'Delta', 'Status'], rows),
    ]
    if comparison.cases:
        case_rows = [
            [
                markdown_cell(c.case),
                markdown_cell(c.result),
                markdown_cell(c.baseline),
                (f'{FAIL} ' if c.worse else '') + markdown_cell(c.candidate),
            ]
            for c in comparison.cases
        ]
        table = markdown_table(['Case', 'Result', 'Baseline', 'Candidate'], case_rows)
        parts.append(f'<details><summary>Case changes ({len(case_rows)})</summary>\n\n{table}\n</details>')
    return '\n\n'.join(parts) + '\n'
