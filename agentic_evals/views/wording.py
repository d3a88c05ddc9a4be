"""The phrases and figures the views share, so a verdict reads the same in every view.

Nothing here decides anything: the checks and gates come judged from `reports/judge.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..reports.gates import DURATION, format_duration, format_metric, format_number
from ..reports.verdict import AverageVerdict, Check, GateCheck

duration = format_duration
"""Every duration a view prints (`850 µs`, `12.3 ms`, `1.25 s`): the model's one format, which the gates'
details use too."""

PRECISE_METRICS = (DURATION, 'cost')
"""Metrics whose means are shown with their significant digits (`format_metric`), not as counts."""


def mean_figure(mean: float) -> str:
    """The mean of a count over cases: whole with thousands separators (`1,204`), else one decimal (`3.5`)."""
    return f'{mean:,.0f}' if float(mean).is_integer() else f'{mean:,.1f}'


def label_shares(shares: Mapping[str, float], cell: Callable[[str], str] = str) -> str:
    """A label's values with their shares (`high: 50%, low: 50%`), each value through `cell` (a view's
    escaping)."""
    return ', '.join(f'{cell(value)}: {share:.0%}' for value, share in shares.items())


def average_figure(row: AverageVerdict) -> str:
    """An average as the views show it: a score to three decimals (more beside a threshold it would look
    equal to), a pass rate with its tally (`75.0% (30/40)`), a metric's mean (`1,204`, `0.02848`, `1.2 s`)."""
    if row.kind == 'assertion':
        return f'{row.value:.1%} ({row.passed_cases}/{row.cases})'
    if row.kind == 'metric':
        return format_metric(row.name, row.value) if row.name in PRECISE_METRICS else mean_figure(row.value)
    threshold = next((g.bound for g in row.gates if g.gate == 'min-score'), None)
    return format_number(row.value, threshold)


def gate_phrase(row: AverageVerdict, gate: GateCheck) -> str:
    """What one gate on an average says, the same in every view: `>= 0.800`, `< 0.800`, `each >= 0.800`,
    `2 case(s) < 0.800, 1 missing`, `<= 5000`, `each <= 2 s`, `all pass`, `all must pass`, `failures allowed`."""
    held = gate.status == 'pass'
    if gate.gate == 'assertions':
        return 'all pass' if held else 'failures allowed' if gate.status == 'allowed' else 'all must pass'
    assert gate.bound is not None
    if gate.gate == 'min-score':
        bound = format_number(gate.bound, row.value)
        return f'>= {bound}' if held else f'< {bound}'
    if gate.gate == 'max-metric':
        bound = format_metric(row.name, gate.bound, row.value)
        return f'<= {bound}' if held else f'> {bound}'
    upper = gate.gate == 'max-case-metric'
    bound = format_metric(row.name, gate.bound) if upper else format_number(gate.bound)
    if held:
        return f'each {"<=" if upper else ">="} {bound}'
    return failing_count(gate, '>' if upper else '<', bound)


def failing_count(gate: GateCheck, op: str, bound: str) -> str:
    """What a per-case gate says of the cases failing it: `2 case(s) < 0.800, 1 missing`."""
    over = gate.failing - gate.missing
    parts = ([f'{over} case(s) {op} {bound}'] if over else []) + ([f'{gate.missing} missing'] if gate.missing else [])
    return ', '.join(parts)


def check_figure(check: Check) -> str:
    """A case's judged value as the views show it: the value, and against what when it fails or is below
    (`0.100 < 0.600`, `n/a < 0.600`, `4 > 3`, `missing`); a score no gate covers is just its value."""
    if check.kind in ('missing', 'run') or (check.kind == 'metric' and check.value is None):
        return 'missing'
    if check.kind == 'metric':
        assert check.value is not None
        if check.status == 'pass' or check.bound is None:
            return format_metric(check.name, check.value)
        measured, limit = check.value, check.bound
        return f'{format_metric(check.name, measured, limit)} > {format_metric(check.name, limit, measured)}'
    shown = 'n/a' if check.value is None else format_number(check.value, check.bound)
    if check.status in ('fail', 'below') and check.bound is not None:
        return f'{shown} < {format_number(check.bound, check.value)}'
    return shown
