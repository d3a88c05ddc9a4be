"""Compare two JSON reports (baseline, candidate): a release regression gate.

Gated, per result name: the average of each score and the pass rate of each assertion must not
drop by more than the tolerance (at least the baseline less the tolerance, by the gates' own rule,
`scoring.sequences.at_least`), and the fail rate (share of cases with a failed assertion, an
evaluator error or a case failure) must not rise by more than it. Pass rates and fail rates are
fractions (0..1), so one tolerance applies to all. A result the baseline has and the candidate
lacks counts as a drop: a gate must not pass because an evaluator was removed. Metric averages
(tokens, requests) and per-case changes are shown, not gated: the averages already carry them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..scoring.sequences import at_least, at_most
from .document import CaseResult, ReportDocument
from .gates import format_number

Kind = Literal['score', 'pass rate', 'fail rate', 'metric']
FAIL_RATE = '(fail rate)'


@dataclass(frozen=True)
class AverageChange:
    name: str
    kind: Kind
    baseline: float | None
    candidate: float | None
    regressed: bool

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline

    @property
    def improved(self) -> bool:
        old, new = self.baseline, self.candidate
        if old is None or new is None or self.kind == 'metric':
            return False
        # the gates' rule: a change a rounding error wide is no change
        return not at_least(new, old) if self.kind == 'fail rate' else not at_most(new, old)

    def describe(self) -> str:
        """One phrase for the summary line, e.g. `TrajectoryMatch average 0.800 -> 0.610 (-0.190)`."""
        what = {'score': 'average', 'pass rate': 'pass rate', 'fail rate': '', 'metric': 'average'}[self.kind]
        label = 'fail rate' if self.kind == 'fail rate' else f'{self.name} {what}'
        if self.candidate is None:
            return f'{label} missing in the candidate (baseline {_value(self.baseline)})'
        if self.baseline is None:
            return f'{label} new in the candidate ({_value(self.candidate)})'
        return f'{label} {_value(self.baseline)} -> {_value(self.candidate)} ({signed(self.delta)})'


@dataclass(frozen=True)
class CaseChange:
    case: str
    result: str
    """A result name, or `(case)` for the case as a whole (added, removed, failed to run)."""
    baseline: str
    candidate: str
    worse: bool


@dataclass(frozen=True)
class Comparison:
    baseline: ReportDocument
    candidate: ReportDocument
    tolerance: float
    averages: tuple[AverageChange, ...]
    cases: tuple[CaseChange, ...]

    @property
    def regressions(self) -> list[AverageChange]:
        return [a for a in self.averages if a.regressed]

    @property
    def passed(self) -> bool:
        return not self.regressions

    @property
    def summary(self) -> str:
        tolerance = f'tolerance {format_number(self.tolerance)}'
        if self.regressions:
            return f'FAIL ({tolerance}): ' + '; '.join(a.describe() for a in self.regressions)
        gated = [a for a in self.averages if a.kind != 'metric']
        improved = sum(a.improved for a in gated)
        return (
            f'PASS: no score, pass rate or fail rate regressed by more than {format_number(self.tolerance)}'
            f' ({len(gated)} compared, {improved} improved)'
        )


def compare_documents(baseline: ReportDocument, candidate: ReportDocument, tolerance: float = 0.0) -> Comparison:
    b, c = baseline.averages, candidate.averages
    changes: list[AverageChange] = []
    for name in sorted(b.scores.keys() | c.scores.keys()):
        changes.append(_change(name, 'score', b.scores.get(name), c.scores.get(name), tolerance))
    for name in sorted(b.assertions.keys() | c.assertions.keys()):
        changes.append(_change(name, 'pass rate', b.assertions.get(name), c.assertions.get(name), tolerance))
    changes.append(_change(FAIL_RATE, 'fail rate', baseline.totals.fail_rate, candidate.totals.fail_rate, tolerance))
    for name in sorted(b.metrics.keys() | c.metrics.keys()):
        changes.append(_change(name, 'metric', b.metrics.get(name), c.metrics.get(name), tolerance))
    return Comparison(baseline, candidate, tolerance, tuple(changes), tuple(_case_changes(baseline, candidate)))


def _change(name: str, kind: Kind, old: float | None, new: float | None, tolerance: float) -> AverageChange:
    if kind == 'metric' or old is None:
        regressed = False
    elif new is None:
        regressed = True
    elif kind == 'fail rate':
        regressed = not at_most(new, old + tolerance)
    else:
        regressed = not at_least(new, old - tolerance)
    return AverageChange(name, kind, old, new, regressed)


def _case_changes(baseline: ReportDocument, candidate: ReportDocument) -> list[CaseChange]:
    old_cases = {c.name: c for c in baseline.cases}
    new_cases = {c.name: c for c in candidate.cases}
    old_failed = {f.name: f.error for f in baseline.failures}
    new_failed = {f.name: f.error for f in candidate.failures}
    names = [*old_cases, *(n for n in old_failed if n not in old_cases)]
    names += [n for n in [*new_cases, *new_failed] if n not in old_cases and n not in old_failed]
    changes: list[CaseChange] = []
    for name in dict.fromkeys(names):
        old_state = 'ran' if name in old_cases else 'failed to run' if name in old_failed else 'absent'
        new_state = 'ran' if name in new_cases else 'failed to run' if name in new_failed else 'absent'
        if old_state == new_state == 'ran':
            changes += _result_changes(old_cases[name], new_cases[name])
        elif old_state != new_state:
            worse = new_state != 'ran'
            changes.append(CaseChange(name, '(case)', old_state, new_state, worse))
    return changes


def _result_changes(old: CaseResult, new: CaseResult) -> list[CaseChange]:
    changes: list[CaseChange] = []
    before, after = _cells(old), _cells(new)
    for result in sorted(before.keys() | after.keys()):
        was, now = before.get(result), after.get(result)
        if was == now:
            continue
        changes.append(
            CaseChange(old.name, result, _text(was), _text(now), _worse(was, now) if was and now else was is not None)
        )
    return changes


Cell = tuple[str, float | str | None]


def _cells(case: CaseResult) -> dict[str, Cell]:
    cells: dict[str, Cell] = {}
    for name, a in case.assertions.items():
        cells[name] = ('assertion', 1.0 if a.value else 0.0)
    for name, s in case.scores.items():
        cells[name] = ('score', s.value)
    for name, label in case.labels.items():
        cells[name] = ('label', label.value)
    for error in case.evaluator_errors:
        cells[error.name] = ('error', error.message)
    return cells


def _text(cell: Cell | None) -> str:
    if cell is None:
        return '-'
    kind, value = cell
    if kind == 'assertion':
        return 'pass' if value else 'FAIL'
    if kind == 'error':
        return 'ERROR'
    if isinstance(value, float | int):
        return format_number(value)
    return 'n/a' if value is None else value


def _worse(was: Cell, now: Cell) -> bool:
    if now[0] == 'error':
        return was[0] != 'error'
    old_value, new_value = was[1], now[1]
    if was[0] == now[0] and isinstance(old_value, float | int) and isinstance(new_value, float | int):
        return not at_least(new_value, old_value)
    return False


def _value(value: float | None) -> str:
    return 'n/a' if value is None else format_number(value)


def signed(delta: float | None) -> str:
    """A change with its sign (`+0.100`, `-0.190`), `n/a` without one: how every view shows a delta."""
    return 'n/a' if delta is None else ('+' if delta >= 0 else '-') + format_number(abs(delta))
