"""The terminal report: one row per case and result, the averages with their gates, the case failures.

pydantic-evals' own table puts every result of a case in one cell, which wraps long reasons into
unreadable columns on an 80-column CI log; one row per result keeps each reason on its own lines
and lets `--quiet` show just the rows that need attention. Words (`pass`, `FAIL`, `ERROR`), not
glyphs, so the table reads the same on any console encoding and greps well in CI logs. Every name
and reason is a `data_text` cell: shown as text, never as markup.

A run of more than `SUMMARY_CASES` cases is summarised: the table shows the rows of the failing cases
only, the first `FAILING_CASES_SHOWN` of them, and says how many more fail (`all_rows` shows every
row); the averages and gates are always whole. Ten thousand rows drawn by rich would take longer
than scoring them, and nobody reads them in a CI log.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..reports.document import CaseResult, ReportDocument
from ..reports.gates import DURATION, Gates
from ..reports.judge import case_verdict
from ..reports.verdict import AverageVerdict, Verdict
from .terminal import data_text
from .terminal import make_console as make_console
from .wording import average_figure, check_figure, gate_phrase, label_shares

SUMMARY_CASES = 50
"""Runs of more cases than this show only the failing cases' rows, unless every row is asked for."""
FAILING_CASES_SHOWN = 20
"""The failing cases a summarised table shows; the rest are counted."""


def print_report(
    document: ReportDocument,
    gates: Gates,
    verdict: Verdict,
    console: Console,
    *,
    reasons: bool = False,
    quiet: bool = False,
    all_rows: bool = False,
) -> None:
    """Print the per-result table, the averages and the case failures.

    Reasons are shown for failing results (and for all with `reasons`); `quiet` leaves out the
    rows of results that pass. Beyond `SUMMARY_CASES` cases only failing cases have rows, and at
    most `FAILING_CASES_SHOWN` of them, unless `all_rows`.
    """
    summarised = not all_rows and len(document.cases) > SUMMARY_CASES
    table, hidden = _results_table(document, gates, reasons=reasons, quiet=quiet, summarised=summarised)
    if table.row_count:
        console.print(table)
    if summarised:
        console.print(data_text(_summary_note(document, table.row_count, hidden)))
        console.print()
    averages = _averages_table(document, verdict)
    if averages.row_count:
        console.print(averages)
    if document.failures:
        failures = Table(title='Case failures', box=box.SIMPLE_HEAD, title_justify='left')
        failures.add_column('Case', style='bold')
        failures.add_column('Error', overflow='fold')
        for failure in document.failures:
            failures.add_row(data_text(failure.name), data_text(failure.error, 'red'))
        console.print(failures)


def _results_table(
    document: ReportDocument, gates: Gates, *, reasons: bool, quiet: bool, summarised: bool = False
) -> tuple[Table, int]:
    """The table, and how many failing cases it leaves out (summarised: beyond `FAILING_CASES_SHOWN`)."""
    title = f'{document.name}: {document.totals.cases} case(s)'
    if summarised:
        title += ', the rows of failing cases only'
    table = Table(title=data_text(title), box=box.SIMPLE_HEAD, title_justify='left')
    table.add_column('Case', style='bold', overflow='fold')
    table.add_column('Result', overflow='fold')
    table.add_column('Value', no_wrap=True)
    table.add_column('Reason', overflow='fold', ratio=1)
    shown = hidden = 0
    for case in document.cases:
        rows = _case_rows(case, gates, reasons=reasons)
        if summarised:
            if all(row[3] for row in rows):
                continue
            if shown == FAILING_CASES_SHOWN:
                hidden += 1
                continue
            shown += 1
        rows = [row for row in rows if not (quiet and row[3])]
        for index, (name, value, reason, _) in enumerate(rows):
            case_cell = data_text(case.name if index == 0 else '')
            last = index == len(rows) - 1
            table.add_row(case_cell, data_text(name), value, data_text(reason), end_section=last)
    return table, hidden


def _summary_note(document: ReportDocument, rows: int, hidden: int) -> str:
    if hidden:
        return f'and {hidden:,} more failing cases; --all-rows shows every row'
    if not rows:
        return f'no failing case among the {len(document.cases):,} cases; --all-rows shows every row'
    return "--all-rows shows every row, the passing cases' too"


def _case_rows(case: CaseResult, gates: Gates, *, reasons: bool) -> list[tuple[str, Text, str, bool]]:
    """(result name, value cell, reason, passes) for each check of `case` (`case_verdict`) and each label:
    a result a per-case gate needs and the case lacks is a row too, and so is each per-case metric."""
    rows: list[tuple[str, Text, str, bool]] = []
    for check in case_verdict(case, gates).checks:
        low = check.status in ('fail', 'allowed', 'below')
        if check.kind == 'assertion':
            said = case.assertions[check.name].reason
            cell = Text('FAIL', style='bold red') if check.value == 0.0 else Text('pass', style='green')
            rows.append((check.name, cell, _reason(said, reasons or low), not low))
        elif check.kind == 'score':
            said = case.scores[check.name].reason
            low = low or check.value is None
            cell = Text(check_figure(check), style='bold red' if low else '')
            rows.append((check.name, cell, _reason(said, reasons or low), not low))
        elif check.kind == 'error':
            message = next(e.message for e in case.evaluator_errors if e.name == check.name)
            rows.append((check.name, Text('ERROR', style='bold red'), message, False))
        elif check.kind == 'missing':
            rows.append((check.name, Text('missing', style='bold red'), 'no result (--min-case-score)', False))
        elif check.value is None:
            rows.append((check.name, Text('missing', style='bold red'), 'not recorded (--max-case-metric)', False))
        else:
            rows.append((check.name, Text(check_figure(check), style='bold red' if low else ''), '', not low))
    for name, label in case.labels.items():
        rows.append((name, data_text(label.value), _reason(label.reason, reasons), True))
    return sorted(rows, key=lambda r: r[0])


def _reason(reason: str | None, shown: bool) -> str:
    return (reason or '') if shown else ''


def _averages_table(document: ReportDocument, verdict: Verdict) -> Table:
    """The averages with their gates, as the verdict judged them; the labels' shares; the metrics."""
    table = Table(title='Averages', box=box.SIMPLE_HEAD, title_justify='left')
    for column in ('Result', 'Kind', 'Average', 'Gate'):
        table.add_column(column)
    for row in verdict.averages:
        if row.kind != 'metric':
            table.add_row(data_text(row.name), row.kind, average_figure(row), _gate_cell(row))
    for name, shares in document.averages.labels.items():
        table.add_row(data_text(name), 'label', data_text(label_shares(shares)), '')
    for row in verdict.averages:
        if row.kind == 'metric' and (row.name != DURATION or row.gates):
            table.add_row(data_text(row.name), 'metric', average_figure(row), _gate_cell(row))
    return table


def _gate_cell(row: AverageVerdict) -> Text:
    cells: list[Text] = []
    for gate in row.gates:
        phrase = gate_phrase(row, gate)
        if gate.status == 'pass':
            cells.append(Text(phrase if gate.gate == 'assertions' else f'{phrase}: ok', style='green'))
        elif gate.status == 'allowed':
            cells.append(Text(phrase, style='red'))
        else:
            cells.append(Text(f'FAIL: {phrase}', style='bold red'))
    return Text('; ').join(cells)
