"""Release gates over a report: which ones hold, and one line that says why the run passed or failed.

The gates (all must hold for exit status 0):

- every assertion passes, every case ran and no evaluator raised, unless `allow_failures`;
- each `MinScore`: the average of a score (or the pass rate of an assertion) is at least the threshold;
- `max_fail_rate`: the share of cases with a failed assertion, an evaluator error or a case failure
  is at most the limit.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..errors import AgenticEvalsError
from .document import ReportDocument

LISTED = 3
"""How many failing results a summary names before saying `and N more`."""


@dataclass(frozen=True)
class MinScore:
    name: str
    threshold: float


@dataclass(frozen=True)
class Gates:
    allow_failures: bool = False
    min_scores: tuple[MinScore, ...] = ()
    max_fail_rate: float | None = None

    def threshold_for(self, name: str) -> float | None:
        """The last `--min-score` given for `name` (a later flag overrides an earlier one)."""
        found = [m.threshold for m in self.min_scores if m.name == name]
        return found[-1] if found else None


@dataclass(frozen=True)
class GateResult:
    gate: str
    """`assertions`, `case failures`, `evaluator errors`, `min-score NAME` or `max-fail-rate`."""
    passed: bool
    detail: str


@dataclass(frozen=True)
class Verdict:
    results: tuple[GateResult, ...]
    summary: str

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)


class UnknownResultError(AgenticEvalsError, ValueError):
    """A `--min-score` naming no score or assertion: a usage error, not a failed gate."""


def check_gates(document: ReportDocument, gates: Gates, *, known_names: Collection[str] = ()) -> Verdict:
    """Evaluate `gates` on `document`.

    `known_names` are result names the evaluators would produce (their default evaluation names):
    a `--min-score` naming one that no case produced fails its gate, where a name nobody knows
    raises `UnknownResultError`.
    """
    results = [*_failure_gates(document, gates.allow_failures)]
    seen: dict[str, float] = {}
    for gate in gates.min_scores:
        seen[gate.name] = gate.threshold
    results += [_min_score(document, name, threshold, known_names) for name, threshold in seen.items()]
    if gates.max_fail_rate is not None:
        results.append(_max_fail_rate(document, gates.max_fail_rate))
    return Verdict(tuple(results), _summary(document, results))


def _failure_gates(document: ReportDocument, allow: bool) -> list[GateResult]:
    totals = document.totals
    allowed = ' (allowed)' if allow else ''
    results: list[GateResult] = []
    if totals.failed_assertions:
        failed = [(n, c.name) for c in document.cases for n, a in c.assertions.items() if not a.value]
        detail = f'{totals.failed_assertions} of {totals.assertions} assertions failed ({_which(failed)}){allowed}'
        results.append(GateResult('assertions', allow, detail))
    else:
        detail = (
            f'{totals.assertions} of {totals.assertions} assertions passed' if totals.assertions else 'no assertions'
        )
        results.append(GateResult('assertions', True, detail))
    if totals.case_failures:
        names = _names([repr(f.name) for f in document.failures])
        count = _plural(totals.case_failures, 'case')
        results.append(GateResult('case failures', allow, f'{count} failed to run ({names}){allowed}'))
    if totals.evaluator_errors:
        errors = [(e.name, c.name) for c in document.cases for e in c.evaluator_errors]
        count = _plural(totals.evaluator_errors, 'evaluator error')
        results.append(GateResult('evaluator errors', allow, f'{count} ({_which(errors)}){allowed}'))
    return results


def _min_score(document: ReportDocument, name: str, threshold: float, known: Collection[str]) -> GateResult:
    gate = f'min-score {name}'
    averages = document.averages
    if name in averages.scores:
        value, what = averages.scores[name], 'average'
    elif name in averages.assertions:
        value, what = averages.assertions[name], 'pass rate'
    else:
        names = document.result_names()
        if name in names['labels']:
            raise UnknownResultError(f'--min-score {name}: {name!r} is a label, not a score or an assertion')
        if name in names['scores'] or name in known:
            return GateResult(gate, False, f'{name}: no case produced a value (minimum {format_number(threshold)})')
        available = sorted(names['scores'] | names['assertions'] | set(known))
        listed = ', '.join(available) if available else 'none'
        raise UnknownResultError(f'--min-score {name}: no score or assertion is named {name!r} (available: {listed})')
    passed = value >= threshold
    op = '>=' if passed else '<'
    shown, limit = format_number(value, threshold), format_number(threshold, value)
    return GateResult(gate, passed, f'{name} {what} {shown} {op} {limit}')


def _max_fail_rate(document: ReportDocument, limit: float) -> GateResult:
    totals = document.totals
    passed = totals.fail_rate <= limit
    op = '<=' if passed else '>'
    detail = (
        f'fail rate {_percent(totals.fail_rate, limit)} ({totals.failed_cases} of {totals.cases} cases)'
        f' {op} {_percent(limit, totals.fail_rate)}'
    )
    return GateResult('max-fail-rate', passed, detail)


def _summary(document: ReportDocument, results: Sequence[GateResult]) -> str:
    failing = [r.detail for r in results if not r.passed]
    if failing:
        return 'FAIL: ' + '; '.join(failing)
    return 'PASS: ' + '; '.join([_plural(document.totals.cases, 'case'), *(r.detail for r in results)])


def _which(pairs: Sequence[tuple[str, str]]) -> str:
    return _names([f'{name} on case {case!r}' for name, case in pairs])


def _names(items: Sequence[str]) -> str:
    shown = ', '.join(items[:LISTED])
    return shown + (f', and {len(items) - LISTED} more' if len(items) > LISTED else '')


def _plural(count: int, noun: str) -> str:
    return f'{count} {noun}' + ('' if count == 1 else 's')


def format_number(value: float, other: float | None = None) -> str:
    """Three decimals, or as many more as it takes for `value` and a different `other` not to look equal.

    Call it both ways (`format_number(a, b)`, `format_number(b, a)`) and both get the same precision.
    """
    return f'{value:.{_digits(value, other, 3, 1)}f}'


def _percent(value: float, other: float) -> str:
    return f'{value:.{_digits(value * 100, other * 100, 1, 1)}%}'


def _digits(value: float, other: float | None, digits: int, scale: float) -> int:
    if other is None or value == other:
        return digits
    while digits < 12 and f'{value * scale:.{digits}f}' == f'{other * scale:.{digits}f}':
        digits += 1
    return digits
