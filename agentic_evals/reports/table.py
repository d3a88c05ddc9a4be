"""The terminal report: one row per case and result, the averages with their gates, the case failures.

pydantic-evals' own table puts every result of a case in one cell, which wraps long reasons into
unreadable columns on an 80-column CI log; one row per result keeps each reason on its own lines
and lets `--quiet` show just the rows that need attention. Words (`pass`, `FAIL`, `ERROR`), not
glyphs, so the table reads the same on any console encoding and greps well in CI logs. Every name
and reason is a `data_text` cell: shown as text, never as markup.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .document import CaseResult, ReportDocument
from .gates import Gates, format_number
from .terminal import data_text
from .terminal import make_console as make_console


def print_report(
    document: ReportDocument, gates: Gates, console: Console, *, reasons: bool = False, quiet: bool = False
) -> None:
    """Print the per-result table, the averages and the case failures.

    Reasons are shown for failing results (and for all with `reasons`); `quiet` leaves out the
    rows of results that pass.
    """
    table = _results_table(document, gates, reasons=reasons, quiet=quiet)
    if table.row_count:
        console.print(table)
    averages = _averages_table(document, gates)
    if averages.row_count:
        console.print(averages)
    if document.failures:
        failures = Table(title='Case failures', box=box.SIMPLE_HEAD, title_justify='left')
        failures.add_column('Case', style='bold')
        failures.add_column('Error', overflow='fold')
        for failure in document.failures:
            failures.add_row(data_text(failure.name), data_text(failure.error, 'red'))
        console.print(failures)


def _results_table(document: ReportDocument, gates: Gates, *, reasons: bool, quiet: bool) -> Table:
    title = data_text(f'{document.name}: {document.totals.cases} case(s)')
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify='left')
    table.add_column('Case', style='bold', overflow='fold')
    table.add_column('Result', overflow='fold')
    table.add_column('Value', no_wrap=True)
    table.add_column('Reason', overflow='fold', ratio=1)
    for case in document.cases:
        rows = [row for row in _case_rows(case, gates, reasons=reasons) if not (quiet and row[3])]
        for index, (name, value, reason, _) in enumerate(rows):
            case_cell = data_text(case.name if index == 0 else '')
            last = index == len(rows) - 1
            table.add_row(case_cell, data_text(name), value, data_text(reason), end_section=last)
    return table


def _case_rows(case: CaseResult, gates: Gates, *, reasons: bool) -> list[tuple[str, Text, str, bool]]:
    """(result name, value cell, reason, passes) for each result of `case`."""
    rows: list[tuple[str, Text, str, bool]] = []
    for name, a in case.assertions.items():
        cell = Text('pass', style='green') if a.value else Text('FAIL', style='bold red')
        rows.append((name, cell, _reason(a.reason, reasons or not a.value), a.value))
    for name, s in case.scores.items():
        threshold = gates.threshold_for(name)
        low = s.value is None or (threshold is not None and s.value < threshold)
        shown = 'n/a' if s.value is None else format_number(s.value, threshold)
        if threshold is not None and s.value is not None and low:
            shown += f' < {format_number(threshold, s.value)}'
        rows.append((name, Text(shown, style='bold red' if low else ''), _reason(s.reason, reasons or low), not low))
    for name, label in case.labels.items():
        rows.append((name, data_text(label.value), _reason(label.reason, reasons), True))
    for error in case.evaluator_errors:
        rows.append((error.name, Text('ERROR', style='bold red'), error.message, False))
    return sorted(rows, key=lambda r: r[0])


def _reason(reason: str | None, shown: bool) -> str:
    return (reason or '') if shown else ''


def _averages_table(document: ReportDocument, gates: Gates) -> Table:
    table = Table(title='Averages', box=box.SIMPLE_HEAD, title_justify='left')
    for column in ('Result', 'Kind', 'Average', 'Gate'):
        table.add_column(column)
    averages = document.averages
    for name, value in averages.scores.items():
        threshold = gates.threshold_for(name)
        table.add_row(data_text(name), 'score', format_number(value, threshold), _gate_cell(value, threshold))
    for name, rate in averages.assertions.items():
        counts = [c.assertions[name].value for c in document.cases if name in c.assertions]
        shown = f'{rate:.1%} ({sum(counts)}/{len(counts)})'
        threshold = gates.threshold_for(name)
        if threshold is not None:
            gate = _gate_cell(rate, threshold)
        elif rate == 1.0:
            gate = Text('all pass', style='green')
        else:
            gate = Text('allowed' if gates.allow_failures else 'FAIL: all must pass', style='red')
        table.add_row(data_text(name), 'assertion', shown, gate)
    for name, shares in averages.labels.items():
        table.add_row(data_text(name), 'label', data_text(', '.join(f'{v}: {s:.0%}' for v, s in shares.items())), '')
    for name, mean in averages.metrics.items():
        table.add_row(data_text(name), 'metric', _metric(mean), '')
    return table


def _gate_cell(value: float, threshold: float | None) -> Text:
    if threshold is None:
        return Text('')
    if value >= threshold:
        return Text(f'>= {format_number(threshold, value)}: ok', style='green')
    return Text(f'FAIL: < {format_number(threshold, value)}', style='bold red')


def _metric(value: float) -> str:
    return f'{value:,.0f}' if float(value).is_integer() else f'{value:,.1f}'
