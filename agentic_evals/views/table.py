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
from ..reports.gates import (
    DURATION,
    Gates,
    case_metric,
    cases_above,
    cases_below,
    format_metric,
    format_number,
    metric_mean,
)
from .terminal import data_text
from .terminal import make_console as make_console
from .wording import failing_count, mean_figure

SUMMARY_CASES = 50
"""Runs of more cases than this show only the failing cases' rows, unless every row is asked for."""
FAILING_CASES_SHOWN = 20
"""The failing cases a summarised table shows; the rest are counted."""


def print_report(
    document: ReportDocument,
    gates: Gates,
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
    table, hidden, counts = _results_table(document, gates, reasons=reasons, quiet=quiet, summarised=summarised)
    if table.row_count:
        console.print(table)
    if summarised:
        console.print(data_text(_summary_note(document, table.row_count, hidden)))
        console.print()
    averages = _averages_table(document, gates, counts)
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
) -> tuple[Table, int, dict[str, list[int]]]:
    """The table, how many failing cases it leaves out (summarised: beyond `FAILING_CASES_SHOWN`), and
    (passed, evaluated) per assertion for the averages table, counted on the way: a spooled report
    reads each pass over the cases from disk, so the table makes one."""
    counts: dict[str, list[int]] = {}
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
        for result, assertion in case.assertions.items():
            count = counts.setdefault(result, [0, 0])
            count[0] += assertion.value
            count[1] += 1
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
    return table, hidden, counts


def _summary_note(document: ReportDocument, rows: int, hidden: int) -> str:
    if hidden:
        return f'and {hidden:,} more failing cases; --all-rows shows every row'
    if not rows:
        return f'no failing case among the {len(document.cases):,} cases; --all-rows shows every row'
    return "--all-rows shows every row, the passing cases' too"


def _case_rows(case: CaseResult, gates: Gates, *, reasons: bool) -> list[tuple[str, Text, str, bool]]:
    """(result name, value cell, reason, passes) for each result of `case`, and for each metric a
    per-case gate names; a result a per-case gate needs and the case lacks is a row too."""
    rows: list[tuple[str, Text, str, bool]] = []
    for name, a in case.assertions.items():
        cell = Text('pass', style='green') if a.value else Text('FAIL', style='bold red')
        rows.append((name, cell, _reason(a.reason, reasons or not a.value), a.value))
    for name, s in case.scores.items():
        threshold = _failed_threshold(s.value, gates.threshold_for(name), gates.case_threshold_for(name))
        low = s.value is None or threshold is not None
        shown = 'n/a' if s.value is None else format_number(s.value, threshold)
        if threshold is not None and s.value is not None:
            shown += f' < {format_number(threshold, s.value)}'
        rows.append((name, Text(shown, style='bold red' if low else ''), _reason(s.reason, reasons or low), not low))
    for name, label in case.labels.items():
        rows.append((name, data_text(label.value), _reason(label.reason, reasons), True))
    for error in case.evaluator_errors:
        rows.append((error.name, Text('ERROR', style='bold red'), error.message, False))
    shown_names = {row[0] for row in rows}
    for gate in gates.min_case_scores:
        if gate.name not in shown_names and gates.expects(case.name, gate.name):
            shown_names.add(gate.name)
            rows.append((gate.name, Text('missing', style='bold red'), 'no result (--min-case-score)', False))
    for name in dict.fromkeys(m.name for m in gates.max_case_metrics):
        limit = gates.case_metric_limit_for(name)
        assert limit is not None
        value = case_metric(case, name)
        if value is None:
            rows.append((name, Text('missing', style='bold red'), 'not recorded (--max-case-metric)', False))
        elif value > limit:
            shown = f'{format_metric(name, value, limit)} > {format_metric(name, limit, value)}'
            rows.append((name, Text(shown, style='bold red'), '', False))
        else:
            rows.append((name, Text(format_metric(name, value)), '', True))
    return sorted(rows, key=lambda r: r[0])


def _failed_threshold(value: float | None, *thresholds: float | None) -> float | None:
    """The highest of the gates' thresholds that `value` is below (`None`: it is below none)."""
    failed = [t for t in thresholds if t is not None and value is not None and value < t]
    return max(failed) if failed else None


def _reason(reason: str | None, shown: bool) -> str:
    return (reason or '') if shown else ''


def _averages_table(document: ReportDocument, gates: Gates, counts: dict[str, list[int]]) -> Table:
    """The averages, gates beside them; `counts`: (passed, evaluated) per assertion."""
    table = Table(title='Averages', box=box.SIMPLE_HEAD, title_justify='left')
    for column in ('Result', 'Kind', 'Average', 'Gate'):
        table.add_column(column)
    averages = document.averages
    for name, value in averages.scores.items():
        threshold = gates.threshold_for(name)
        gate = _joined(_gate_cell(value, threshold), _case_gate_cell(document, gates, name))
        table.add_row(data_text(name), 'score', format_number(value, threshold), gate)
    for name, rate in averages.assertions.items():
        passed, total = counts.get(name, (0, 0))
        shown = f'{rate:.1%} ({passed}/{total})'
        threshold = gates.threshold_for(name)
        per_case = _case_gate_cell(document, gates, name)
        if threshold is not None or per_case.plain:
            gate = _joined(_gate_cell(rate, threshold), per_case)
        elif rate == 1.0:
            gate = Text('all pass', style='green')
        else:
            gate = Text('allowed' if gates.allow_failures else 'FAIL: all must pass', style='red')
        table.add_row(data_text(name), 'assertion', shown, gate)
    for name, shares in averages.labels.items():
        table.add_row(data_text(name), 'label', data_text(', '.join(f'{v}: {s:.0%}' for v, s in shares.items())), '')
    metrics = dict(averages.metrics)
    for name in gates.gated_metrics():
        mean = metric_mean(document, name) if name == DURATION else metrics.get(name)
        if mean is not None and name not in metrics:
            metrics[name] = mean
    for name, mean in metrics.items():
        shown = format_metric(name, mean) if name == DURATION else mean_figure(mean)
        table.add_row(data_text(name), 'metric', shown, _metric_gate_cell(document, gates, name, mean))
    return table


def _gate_cell(value: float, threshold: float | None) -> Text:
    if threshold is None:
        return Text('')
    if value >= threshold:
        return Text(f'>= {format_number(threshold, value)}: ok', style='green')
    return Text(f'FAIL: < {format_number(threshold, value)}', style='bold red')


def _case_gate_cell(document: ReportDocument, gates: Gates, name: str) -> Text:
    threshold = gates.case_threshold_for(name)
    if threshold is None:
        return Text('')
    failing = cases_below(document, gates, name, threshold)
    if not failing:
        return Text(f'each >= {format_number(threshold)}: ok', style='green')
    return Text(f'FAIL: {failing_count(failing, "<", format_number(threshold))}', style='bold red')


def _metric_gate_cell(document: ReportDocument, gates: Gates, name: str, mean: float) -> Text:
    cells: list[Text] = []
    limit = gates.metric_limit_for(name)
    if limit is not None:
        passed = mean <= limit
        bound = format_metric(name, limit, mean)
        cells.append(Text(f'<= {bound}: ok', style='green') if passed else Text(f'FAIL: > {bound}', style='bold red'))
    case_limit = gates.case_metric_limit_for(name)
    if case_limit is not None:
        failing = cases_above(document, name, case_limit)
        bound = format_metric(name, case_limit)
        if failing:
            cells.append(Text(f'FAIL: {failing_count(failing, ">", bound)}', style='bold red'))
        else:
            cells.append(Text(f'each <= {bound}: ok', style='green'))
    return _joined(*cells)


def _joined(*cells: Text) -> Text:
    return Text('; ').join(cell for cell in cells if cell.plain)
