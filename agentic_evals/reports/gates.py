"""Release gates over a report: which ones hold, and one line that says why the run passed or failed.

The gates (all must hold for exit status 0):

- every assertion passes, every case ran and no evaluator raised, unless `allow_failures`;
- each `MinScore`: the average of a score (or the pass rate of an assertion) is at least the threshold;
- each per-case `MinScore` (`min_case_scores`): every case's score (an assertion counting 1 or 0) is
  at least the threshold; a case without the result (not produced, its evaluator raised, the case
  did not run) fails it, as a missing score is no evidence of a good one, unless `expected` says
  the case's evaluators do not report it (a case-level evaluator that other cases lack);
- `max_fail_rate`: the share of cases with a failed assertion, an evaluator error or a case failure
  is at most the limit;
- each `MaxMetric`: the mean of a run metric (`requests`, `input_tokens`, `cost`, ..., or
  `duration`) over the cases that recorded it is at most the limit (`max_metrics`), or every case's
  value is (`max_case_metrics`; a case that did not record it fails, as for scores).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import AgenticEvalsError
from ..scoring.sequences import at_least, at_most
from .document import CaseResult, ReportDocument

LISTED = 3
"""How many failing results a summary names before saying `and N more`."""
DURATION = 'duration'
"""The metric name of a case's recorded run time in seconds (`CaseResult.duration`, not in `metrics`)."""
STANDARD_METRICS = ('requests', 'input_tokens', 'output_tokens', 'total_tokens', 'cost')
"""Metrics pydantic-evals and the trace readers record when the spans carry them: a gate naming one
that no case recorded fails, where any other unrecorded name is a usage error (a typo)."""


@dataclass(frozen=True)
class MinScore:
    name: str
    threshold: float


@dataclass(frozen=True)
class MaxMetric:
    name: str
    limit: float


@dataclass(frozen=True)
class Gates:
    allow_failures: bool = False
    min_scores: tuple[MinScore, ...] = ()
    max_fail_rate: float | None = None
    min_case_scores: tuple[MinScore, ...] = ()
    max_metrics: tuple[MaxMetric, ...] = ()
    max_case_metrics: tuple[MaxMetric, ...] = ()
    expected: Mapping[str, Collection[str]] | None = field(default=None, compare=False)
    """Case name -> the result names its evaluators report by default (a dataset's, with each case's
    own): a per-case gate does not ask a case for a result none of its evaluators gives. `None`, or a
    case not in it: every case is asked."""

    def expects(self, case: str, name: str) -> bool:
        """Whether a per-case gate on result `name` asks case `case` for it."""
        return self.expected is None or case not in self.expected or name in self.expected[case]

    def threshold_for(self, name: str) -> float | None:
        """The last `--min-score` given for `name` (a later flag overrides an earlier one)."""
        return _last([(m.name, m.threshold) for m in self.min_scores], name)

    def case_threshold_for(self, name: str) -> float | None:
        """The last `--min-case-score` given for `name`."""
        return _last([(m.name, m.threshold) for m in self.min_case_scores], name)

    def metric_limit_for(self, name: str) -> float | None:
        """The last `--max-metric` given for `name`."""
        return _last([(m.name, m.limit) for m in self.max_metrics], name)

    def case_metric_limit_for(self, name: str) -> float | None:
        """The last `--max-case-metric` given for `name`."""
        return _last([(m.name, m.limit) for m in self.max_case_metrics], name)

    def gated_metrics(self) -> list[str]:
        """Every metric a gate names, in the order first given."""
        return list(dict.fromkeys(m.name for m in (*self.max_metrics, *self.max_case_metrics)))


def _last(pairs: Sequence[tuple[str, float]], name: str) -> float | None:
    found = [value for key, value in pairs if key == name]
    return found[-1] if found else None


@dataclass(frozen=True)
class GateResult:
    gate: str
    """`assertions`, `case failures`, `evaluator errors`, `min-score NAME`, `min-case-score NAME`,
    `max-fail-rate`, `max-metric NAME` or `max-case-metric NAME`."""
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
    """A gate naming no score, assertion or metric: a usage error, not a failed gate."""


def check_gates(document: ReportDocument, gates: Gates, *, known_names: Collection[str] = ()) -> Verdict:
    """Evaluate `gates` on `document`.

    `known_names` are result names the evaluators would produce (their default evaluation names):
    a `--min-score` naming one that no case produced fails its gate, where a name nobody knows
    raises `UnknownResultError`. Metrics are known when a case recorded them or they are one of
    `STANDARD_METRICS` (or `duration`).
    """
    results = [*_failure_gates(document, gates.allow_failures)]
    seen = {gate.name: gate.threshold for gate in gates.min_scores}
    results += [_min_score(document, name, threshold, known_names) for name, threshold in seen.items()]
    per_case = {gate.name: gate.threshold for gate in gates.min_case_scores}
    for name, threshold in per_case.items():
        _check_result_name(document, '--min-case-score', name, known_names)
        results.append(_min_case_score(document, gates, name, threshold))
    if gates.max_fail_rate is not None:
        results.append(_max_fail_rate(document, gates.max_fail_rate))
    means = {gate.name: gate.limit for gate in gates.max_metrics}
    results += [_max_metric(document, name, limit) for name, limit in means.items()]
    limits = {gate.name: gate.limit for gate in gates.max_case_metrics}
    results += [_max_case_metric(document, name, limit) for name, limit in limits.items()]
    return Verdict(tuple(results), _summary(document, results))


def _failure_gates(document: ReportDocument, allow: bool) -> list[GateResult]:
    totals = document.totals
    allowed = ' (allowed)' if allow else ''
    results: list[GateResult] = []
    if totals.failed_assertions:
        failed = ((n, c.name) for c in document.cases for n, a in c.assertions.items() if not a.value)
        detail = f'{totals.failed_assertions} of {totals.assertions} assertions failed ({_which(failed)}){allowed}'
        results.append(GateResult('assertions', allow, detail))
    else:
        detail = (
            f'{totals.assertions} of {totals.assertions} assertions passed' if totals.assertions else 'no assertions'
        )
        results.append(GateResult('assertions', True, detail))
    if totals.case_failures:
        names = _names(repr(f.name) for f in document.failures)
        count = _plural(totals.case_failures, 'case')
        results.append(GateResult('case failures', allow, f'{count} failed to run ({names}){allowed}'))
    if totals.evaluator_errors:
        errors = ((e.name, c.name) for c in document.cases for e in c.evaluator_errors)
        count = _plural(totals.evaluator_errors, 'evaluator error')
        results.append(GateResult('evaluator errors', allow, f'{count} ({_which(errors)}){allowed}'))
    return results


def _check_result_name(document: ReportDocument, flag: str, name: str, known: Collection[str]) -> bool:
    """Whether any case has `name` as a score or assertion; raises for a label or a name nobody knows."""
    names = document.result_names()
    if name in names['scores'] or name in names['assertions']:
        return True
    if name in names['labels']:
        raise UnknownResultError(f'{flag} {name}: {name!r} is a label, not a score or an assertion')
    if name in known:
        return False
    available = sorted(names['scores'] | names['assertions'] | set(known))
    listed = ', '.join(available) if available else 'none'
    raise UnknownResultError(f'{flag} {name}: no score or assertion is named {name!r} (available: {listed})')


def _min_score(document: ReportDocument, name: str, threshold: float, known: Collection[str]) -> GateResult:
    gate = f'min-score {name}'
    averages = document.averages
    if name in averages.scores:
        value, what = averages.scores[name], 'average'
    elif name in averages.assertions:
        value, what = averages.assertions[name], 'pass rate'
    else:
        _check_result_name(document, '--min-score', name, known)
        return GateResult(gate, False, f'{name}: no case produced a value (minimum {format_number(threshold)})')
    passed = at_least(value, threshold)
    op = '>=' if passed else '<'
    shown, limit = format_number(value, threshold), format_number(threshold, value)
    return GateResult(gate, passed, f'{name} {what} {shown} {op} {limit}')


def case_score(case: CaseResult, name: str) -> float | None:
    """`name`'s value on `case` for a per-case gate: a score, an assertion as 1 or 0, else `None`."""
    if name in case.scores:
        return case.scores[name].value
    if name in case.assertions:
        return 1.0 if case.assertions[name].value else 0.0
    return None


def gated_cases(document: ReportDocument, gates: Gates, name: str) -> int:
    """How many cases a per-case gate on result `name` asks (those that have it, or should)."""
    asked = sum(1 for c in document.cases if case_score(c, name) is not None or gates.expects(c.name, name))
    return asked + sum(1 for f in document.failures if gates.expects(f.name, name))


@dataclass
class Failing:
    """The cases that fail a per-case gate, counted as the report streams by: how many, how many of
    them for want of a value, and the first `LISTED` (what messages name), never a list of them all."""

    count: int = 0
    missing: int = 0
    first: list[str] = field(default_factory=list)
    """`'case name' what it has` of the first few, in report order."""

    def add(self, case: str, what: str) -> None:
        self.count += 1
        self.missing += what in _MISSING
        if len(self.first) < LISTED:
            self.first.append(f'{case!r} {what}')

    def __len__(self) -> int:
        return self.count

    def listed(self) -> str:
        return _shown(self.first, self.count)


def cases_below(document: ReportDocument, gates: Gates, name: str, threshold: float) -> Failing:
    """The cases that fail a per-case gate on `name` (with what each has), in report order."""
    below = Failing()
    for case in document.cases:
        value = case_score(case, name)
        if value is None and name in case.scores:
            below.add(case.name, 'n/a')
        elif value is None and gates.expects(case.name, name):
            below.add(case.name, 'no value')
        elif value is not None and not at_least(value, threshold):
            below.add(case.name, 'failed' if name in case.assertions else format_number(value, threshold))
    for failure in document.failures:
        if gates.expects(failure.name, name):
            below.add(failure.name, 'not run')
    return below


def _min_case_score(document: ReportDocument, gates: Gates, name: str, threshold: float) -> GateResult:
    gate = f'min-case-score {name}'
    total = gated_cases(document, gates, name)
    below = cases_below(document, gates, name, threshold)
    scores = (v for c in document.cases if name in c.scores and (v := c.scores[name].value) is not None)
    lowest = min(scores, default=None)
    limit = format_number(threshold, lowest)
    if below:
        missing = ' or missing' if below.missing else ''
        return GateResult(
            gate, False, f'{name} < {limit}{missing} on {len(below)} of {_plural(total, "case")} ({below.listed()})'
        )
    detail = f'{name} >= {limit} on {_all(total)}'
    if lowest is not None:
        detail += f' (lowest {format_number(lowest, threshold)})'
    return GateResult(gate, True, detail)


_MISSING = ('n/a', 'no value', 'not run', 'not recorded')


def _max_fail_rate(document: ReportDocument, limit: float) -> GateResult:
    totals = document.totals
    passed = totals.fail_rate <= limit
    op = '<=' if passed else '>'
    detail = (
        f'fail rate {_percent(totals.fail_rate, limit)} ({totals.failed_cases} of {totals.cases} cases)'
        f' {op} {_percent(limit, totals.fail_rate)}'
    )
    return GateResult('max-fail-rate', passed, detail)


def case_metric(case: CaseResult, name: str) -> float | None:
    """Metric `name` of `case` (`duration` is its recorded run time), or `None` when it recorded none."""
    if name == DURATION:
        return case.duration
    return case.metrics.get(name)


def metric_mean(document: ReportDocument, name: str) -> float | None:
    """The mean of metric `name` over the cases that recorded it (`None` when none did)."""
    total, count = _sum_recorded(document, name)
    return total / count if count else None


def _sum_recorded(document: ReportDocument, name: str) -> tuple[float, int]:
    """The sum (`sum`'s, in report order) and count of metric `name` over the cases that recorded it, in one pass."""
    count = 0

    def values() -> Iterator[float]:
        nonlocal count
        for case in document.cases:
            if (value := case_metric(case, name)) is not None:
                count += 1
                yield value

    total = sum(values())
    return total, count


def cases_above(document: ReportDocument, name: str, limit: float) -> Failing:
    """The cases that fail a per-case gate on metric `name` (with what each has), in report order."""
    above = Failing()
    for case in document.cases:
        value = case_metric(case, name)
        if value is None:
            above.add(case.name, 'not recorded')
        elif not at_most(value, limit):
            above.add(case.name, format_metric(name, value, limit))
    for failure in document.failures:
        above.add(failure.name, 'not run')
    return above


def _check_metric_name(document: ReportDocument, flag: str, name: str) -> None:
    recorded = {n for case in document.cases for n in case.metrics}
    if name in recorded or name == DURATION or name in STANDARD_METRICS:
        return
    available = ', '.join(sorted(recorded | {DURATION, *STANDARD_METRICS}))
    raise UnknownResultError(f'{flag} {name}: no metric is named {name!r} (available: {available})')


def _max_metric(document: ReportDocument, name: str, limit: float) -> GateResult:
    gate = f'max-metric {name}'
    _check_metric_name(document, '--max-metric', name)
    total, count = _sum_recorded(document, name)
    if not count:
        return GateResult(gate, False, f'{name}: no case recorded a value (maximum {format_metric(name, limit)})')
    mean = total / count
    passed = at_most(mean, limit)
    op = '<=' if passed else '>'
    partial = f' ({count} of {len(document.cases)} cases recorded it)' if count < len(document.cases) else ''

    shown, bound = format_metric(name, mean, limit), format_metric(name, limit, mean)
    return GateResult(gate, passed, f'{name} average {shown}{partial} {op} {bound}')


def _max_case_metric(document: ReportDocument, name: str, limit: float) -> GateResult:
    gate = f'max-case-metric {name}'
    _check_metric_name(document, '--max-case-metric', name)
    total = len(document.cases) + len(document.failures)
    above = cases_above(document, name, limit)
    highest = max((v for case in document.cases if (v := case_metric(case, name)) is not None), default=None)
    bound = format_metric(name, limit, highest)
    if above:
        missing = ' or missing' if above.missing else ''
        return GateResult(
            gate, False, f'{name} > {bound}{missing} on {len(above)} of {_plural(total, "case")} ({above.listed()})'
        )
    detail = f'{name} <= {bound} on {_all(total)}'
    if highest is not None:
        detail += f' (highest {format_metric(name, highest, limit)})'
    return GateResult(gate, True, detail)


def _summary(document: ReportDocument, results: Sequence[GateResult]) -> str:
    failing = [r.detail for r in results if not r.passed]
    if failing:
        return 'FAIL: ' + '; '.join(failing)
    return 'PASS: ' + '; '.join([_plural(document.totals.cases, 'case'), *(r.detail for r in results)])


def _which(pairs: Iterable[tuple[str, str]]) -> str:
    return _names(f'{name} on case {case!r}' for name, case in pairs)


def _names(items: Iterable[str]) -> str:
    """The first `LISTED` items and how many more, in one pass that keeps only those."""
    first: list[str] = []
    count = 0
    for item in items:
        count += 1
        if count <= LISTED:
            first.append(item)
    return _shown(first, count)


def _shown(first: Sequence[str], count: int) -> str:
    return ', '.join(first) + (f', and {count - LISTED} more' if count > LISTED else '')


def _plural(count: int, noun: str) -> str:
    return f'{count} {noun}' + ('' if count == 1 else 's')


def _all(count: int) -> str:
    """`1 case`, `all 2 cases`: what a per-case gate held on."""
    return _plural(count, 'case') if count <= 1 else f'all {count} cases'


def format_number(value: float, other: float | None = None) -> str:
    """Three decimals, or as many more as it takes for `value` and a different `other` not to look equal.

    Call it both ways (`format_number(a, b)`, `format_number(b, a)`) and both get the same precision.
    """
    return f'{value:.{_digits(value, other, 3, 1)}f}'


def format_metric(name: str, value: float, other: float | None = None) -> str:
    """A metric as a reader expects it: counts whole, others with four significant digits (more if
    `value` and a different `other` would look equal); `duration` in seconds, with its unit."""
    if float(value).is_integer():
        shown = f'{int(value)}'
    else:
        digits = max(4, len(f'{abs(int(value))}') + 1)
        while digits < 17 and other is not None and other != value and f'{value:.{digits}g}' == f'{other:.{digits}g}':
            digits += 1
        shown = f'{value:.{digits}g}'
    return f'{shown}s' if name == DURATION else shown


def _percent(value: float, other: float) -> str:
    return f'{value:.{_digits(value * 100, other * 100, 1, 1)}%}'


def _digits(value: float, other: float | None, digits: int, scale: float) -> int:
    if other is None or value == other:
        return digits
    while digits < 12 and f'{value * scale:.{digits}f}' == f'{other * scale:.{digits}f}':
        digits += 1
    return digits
