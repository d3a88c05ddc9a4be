"""The phrases and figures the views share, so a figure reads the same in every view."""

from __future__ import annotations

from ..reports.gates import Failing


def mean_figure(mean: float) -> str:
    """The mean of a count over cases: whole with thousands separators (`1,204`), else one decimal (`3.5`)."""
    return f'{mean:,.0f}' if float(mean).is_integer() else f'{mean:,.1f}'


def failing_count(failing: Failing, op: str, bound: str) -> str:
    """What a per-case gate's cell in a view says of the cases failing it: `2 case(s) < 0.800, 1 missing`."""
    missing = failing.missing
    over = failing.count - missing
    parts = ([f'{over} case(s) {op} {bound}'] if over else []) + ([f'{missing} missing'] if missing else [])
    return ', '.join(parts)
