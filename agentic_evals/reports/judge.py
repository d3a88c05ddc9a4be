"""Every verdict on a report, computed once: each case's checks, each gate, each average's gates.

The views (terminal, Markdown, JUnit, HTML) only format what this module decides, and the JSON report
carries it (`judged`), so a report read back gives the same answers:

- `case_verdict`: a case's checks under the gates (each assertion, score, evaluator error, a result a
  per-case gate asks for, a per-case metric) and whether the case passed;
- `check_gates`: one pass over the cases, the gates' outcomes, the one-line summary, and each average
  (score, pass rate, metric) with the gates on it.

"At least" and "at most" are `scoring.sequences.at_least` and `at_most` everywhere (gates, per-case
checks, `--max-fail-rate`, `compare`): a value a rounding error short of a threshold reaches it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Generic, Literal, TypeVar, overload

from ..scoring.sequences import at_least, at_most
from .document import CaseFailure, CaseResult, ExactSum, ReportDocument
from .gates import (
    DURATION,
    LISTED,
    STANDARD_METRICS,
    Gates,
    MaxMetric,
    MinScore,
    UnknownResultError,
    case_metric,
    format_metric,
    format_number,
    percent,
    plural,
)
from .verdict import AverageVerdict, CaseVerdict, Check, GateCheck, GateResult, GateStatus, Verdict

FAILED = ('fail', 'allowed')
"""The check statuses that make a case fail (`allowed`: the run may still pass)."""
RUN = '(case)'
"""The name of the check of a case that failed to run."""


def case_verdict(case: CaseResult, gates: Gates) -> CaseVerdict:
    """The checks of `case` under `gates`, in order: assertions, scores, evaluator errors, the results a
    per-case gate asks for and the case lacks, the per-case metrics."""
    checks: list[Check] = []
    allow = gates.allow_failures
    for name, assertion in sorted(case.assertions.items()):
        value = 1.0 if assertion.value else 0.0
        each = gates.case_threshold_for(name)
        if each is not None and not at_least(value, each):
            checks.append(Check(name, 'assertion', 'fail', 'min-case-score', each, value))
        elif not assertion.value:
            checks.append(Check(name, 'assertion', 'allowed' if allow else 'fail', 'assertions', None, value))
        else:
            checks.append(Check(name, 'assertion', 'pass', 'assertions', None, value))
    for name, score in sorted(case.scores.items()):
        checks.append(_score_check(name, score.value, gates))
    for error in case.evaluator_errors:
        checks.append(Check(error.name, 'error', 'allowed' if allow else 'fail', 'evaluator errors'))
    for name in _names_of(gates.min_case_scores):
        if name not in case.scores and name not in case.assertions and gates.expects(case.name, name):
            checks.append(Check(name, 'missing', 'fail', 'min-case-score', gates.case_threshold_for(name)))
    for name in _names_of(gates.max_case_metrics):
        limit = gates.case_metric_limit_for(name)
        assert limit is not None
        measured = case_metric(case, name)
        status: Literal['pass', 'fail'] = 'pass' if measured is not None and at_most(measured, limit) else 'fail'
        checks.append(Check(name, 'metric', status, 'max-case-metric', limit, measured))
    return CaseVerdict(_passed(checks), checks)


def _passed(checks: Sequence[Check]) -> bool | None:
    """False when a check failed (allowed or not), True when a gate decided something and it held, `None`
    when no gate judged anything (a case of scores no gate covers: it has scores, not a pass)."""
    if any(c.status in FAILED for c in checks):
        return False
    return True if any(c.status != 'none' for c in checks) else None


def _score_check(name: str, value: float | None, gates: Gates) -> Check:
    each, average = gates.case_threshold_for(name), gates.threshold_for(name)
    if each is not None and (value is None or not at_least(value, each)):
        return Check(name, 'score', 'fail', 'min-case-score', each, value)
    if average is not None and (value is None or not at_least(value, average)):
        return Check(name, 'score', 'below', 'min-score', average, value)
    if each is not None:
        return Check(name, 'score', 'pass', 'min-case-score', each, value)
    return Check(name, 'score', 'none', None, None, value)


def failure_verdict(failure: CaseFailure, gates: Gates) -> CaseVerdict:
    """A case that failed to run: allowed or not, and every per-case gate that asks it fails."""
    checks = [Check(RUN, 'run', 'allowed' if gates.allow_failures else 'fail', 'case failures')]
    for name in _names_of(gates.min_case_scores):
        if gates.expects(failure.name, name):
            checks.append(Check(name, 'missing', 'fail', 'min-case-score', gates.case_threshold_for(name)))
    for name in _names_of(gates.max_case_metrics):
        checks.append(Check(name, 'metric', 'fail', 'max-case-metric', gates.case_metric_limit_for(name)))
    return CaseVerdict(False, checks)


T = TypeVar('T', CaseResult, CaseFailure)


class Judged(Sequence[T], Generic[T]):
    """Cases (or case failures) with their verdicts set as they are read (`verdict`, in place): a pass
    over a spooled report reads each case once and judges it then."""

    def __init__(self, entries: Sequence[T], gates: Gates) -> None:
        self._entries: Sequence[T] = entries
        self._gates = gates

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return [self._judged(entry) for entry in self._entries[index]]
        return self._judged(self._entries[index])

    def __iter__(self) -> Iterator[T]:
        for entry in self._entries:
            yield self._judged(entry)

    def _judged(self, entry: T) -> T:
        if isinstance(entry, CaseResult):
            entry.verdict = case_verdict(entry, self._gates)
        else:
            entry.verdict = failure_verdict(entry, self._gates)
        return entry


def judged(document: ReportDocument, gates: Gates, verdict: Verdict) -> ReportDocument:
    """`document` carrying its verdicts: the run's, and each case's as the cases are read."""
    cases: Sequence[CaseResult] = Judged(document.cases, gates)
    failures: Sequence[CaseFailure] = Judged(document.failures, gates)
    return replace(document, cases=cases, failures=failures, verdict=verdict)


# -- the run ----------------------------------------------------------------------------------------


@dataclass
class Failing:
    """The cases that fail a per-case gate, counted as the report streams by: how many, how many of
    them for want of a value, and the first `LISTED` (what messages name), never a list of them all."""

    gate: Literal['min-case-score', 'max-case-metric']
    count: int = 0
    missing: int = 0
    first: list[str] = field(default_factory=list)
    """`'case name' what it has` of the first few, in report order."""
    asked: int = 0
    """The cases the gate asks (those that have the result, or should)."""
    extreme: float | None = None
    """The lowest score (`min-case-score`) or the highest metric (`max-case-metric`) among the cases."""

    def add(self, case: str, what: str, missing: bool) -> None:
        self.count += 1
        self.missing += missing
        if len(self.first) < LISTED:
            self.first.append(f'{case!r} {what}')

    def listed(self) -> str:
        return _shown(self.first, self.count)


class _Pass:
    """What the gates need from the cases, gathered in one pass over them (and the failures): each
    case's checks (`case_verdict`) counted per gate, the first failed assertions and errors named."""

    def __init__(self, document: ReportDocument, gates: Gates) -> None:
        self.gates = gates
        self.below = {name: Failing('min-case-score') for name in dict.fromkeys(g.name for g in gates.min_case_scores)}
        self.above = {
            name: Failing('max-case-metric') for name in dict.fromkeys(g.name for g in gates.max_case_metrics)
        }
        self.failed_assertions = _Named()
        self.errors = _Named()
        self.scores: dict[str, int] = {}
        """Score name -> cases with a value."""
        self.metrics: dict[str, int] = {}
        """Metric name -> cases that recorded it."""
        self.duration = ExactSum()
        for case in document.cases:
            self._case(case)
        for failure in document.failures:
            self._failure(failure)

    def _case(self, case: CaseResult) -> None:
        self.duration.add(case.duration)
        for name, score in case.scores.items():
            if score.value is not None:
                self.scores[name] = self.scores.get(name, 0) + 1
        for name in case.metrics:
            self.metrics[name] = self.metrics.get(name, 0) + 1
        for name, failing in self.below.items():
            value = case_score(case, name)
            if value is not None or self.gates.expects(case.name, name):
                failing.asked += 1
            if name in case.scores and value is not None:
                failing.extreme = value if failing.extreme is None else min(failing.extreme, value)
        for name, failing in self.above.items():
            failing.asked += 1
            value = case_metric(case, name)
            if value is not None:
                failing.extreme = value if failing.extreme is None else max(failing.extreme, value)
        for check in case_verdict(case, self.gates).checks:
            if check.kind == 'assertion' and check.value == 0.0:
                self.failed_assertions.add(f'{check.name} on case {case.name!r}')
            elif check.kind == 'error':
                self.errors.add(f'{check.name} on case {case.name!r}')
            if check.status == 'fail' and check.gate == 'min-case-score':
                self.below[check.name].add(case.name, _what(check), check.value is None)
            elif check.status == 'fail' and check.gate == 'max-case-metric':
                self.above[check.name].add(case.name, _what(check), check.value is None)

    def _failure(self, failure: CaseFailure) -> None:
        for check in failure_verdict(failure, self.gates).checks:
            failing = self.below.get(check.name) if check.gate == 'min-case-score' else self.above.get(check.name)
            if failing is not None:
                failing.asked += check.gate == 'min-case-score'  # (every case is asked for a metric: counted above)
                failing.add(failure.name, 'not run', True)
        for failing in self.above.values():
            failing.asked += 1


class _Named:
    """How many, and the first `LISTED` of them, in one pass that keeps only those."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []

    def add(self, item: str) -> None:
        self.count += 1
        if self.count <= LISTED:
            self.first.append(item)

    def listed(self) -> str:
        return _shown(self.first, self.count)


def case_score(case: CaseResult, name: str) -> float | None:
    """`name`'s value on `case` for a per-case gate: a score, an assertion as 1 or 0, else `None`."""
    if name in case.scores:
        return case.scores[name].value
    if name in case.assertions:
        return 1.0 if case.assertions[name].value else 0.0
    return None


def _what(check: Check) -> str:
    """What a failing case has, as a gate's detail names it: `0.300`, `n/a`, `no value`, `failed`, `4`."""
    if check.kind == 'metric':
        return 'not recorded' if check.value is None else format_metric(check.name, check.value, check.bound)
    if check.kind == 'missing':
        return 'no value'
    if check.kind == 'assertion':
        return 'failed'
    return 'n/a' if check.value is None else format_number(check.value, check.bound)


def check_gates(document: ReportDocument, gates: Gates, *, known_names: Collection[str] = ()) -> Verdict:
    """Evaluate `gates` on `document`: every gate's outcome, the summary line, each average's gates.

    `known_names` are result names the evaluators would produce (their default evaluation names):
    a `--min-score` naming one that no case produced fails its gate, where a name nobody knows
    raises `UnknownResultError`. Metrics are known when a case recorded them or they are one of
    `STANDARD_METRICS` (or `duration`).
    """
    for name in _names_of(gates.min_case_scores):
        _check_result_name(document, '--min-case-score', name, known_names)
    for name in _names_of(gates.max_metrics):
        _check_metric_name(document, '--max-metric', name)
    for name in _names_of(gates.max_case_metrics):
        _check_metric_name(document, '--max-case-metric', name)
    seen = _Pass(document, gates)
    results = [*_failure_gates(document, gates.allow_failures, seen)]
    thresholds = {gate.name: gate.threshold for gate in gates.min_scores}
    results += [_min_score(document, name, threshold, known_names) for name, threshold in thresholds.items()]
    per_case = {gate.name: gate.threshold for gate in gates.min_case_scores}
    results += [_min_case_score(name, threshold, seen.below[name]) for name, threshold in per_case.items()]
    if gates.max_fail_rate is not None:
        results.append(_max_fail_rate(document, gates.max_fail_rate))
    means = {gate.name: gate.limit for gate in gates.max_metrics}
    results += [_max_metric(document, name, limit, seen) for name, limit in means.items()]
    limits = {gate.name: gate.limit for gate in gates.max_case_metrics}
    results += [_max_case_metric(name, limit, seen.above[name]) for name, limit in limits.items()]
    passed = all(r.passed for r in results)
    averages = tuple(_averages(document, gates, seen))
    return Verdict(tuple(results), _summary(document, results), passed, averages)


def _failure_gates(document: ReportDocument, allow: bool, seen: _Pass) -> list[GateResult]:
    totals = document.totals
    allowed = ' (allowed)' if allow else ''
    results: list[GateResult] = []
    if totals.failed_assertions:
        failed = seen.failed_assertions.listed()
        detail = f'{totals.failed_assertions} of {totals.assertions} assertions failed ({failed}){allowed}'
        results.append(GateResult('assertions', allow, detail))
    else:
        detail = (
            f'{totals.assertions} of {totals.assertions} assertions passed' if totals.assertions else 'no assertions'
        )
        results.append(GateResult('assertions', True, detail))
    if totals.case_failures:
        names = _names(repr(f.name) for f in document.failures)
        count = plural(totals.case_failures, 'case')
        results.append(GateResult('case failures', allow, f'{count} failed to run ({names}){allowed}'))
    if totals.evaluator_errors:
        count = plural(totals.evaluator_errors, 'evaluator error')
        results.append(GateResult('evaluator errors', allow, f'{count} ({seen.errors.listed()}){allowed}'))
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


def _check_metric_name(document: ReportDocument, flag: str, name: str) -> None:
    recorded = {n for case in document.cases for n in case.metrics}
    if name in recorded or name == DURATION or name in STANDARD_METRICS:
        return
    available = ', '.join(sorted(recorded | {DURATION, *STANDARD_METRICS}))
    raise UnknownResultError(f'{flag} {name}: no metric is named {name!r} (available: {available})')


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


def _min_case_score(name: str, threshold: float, below: Failing) -> GateResult:
    gate = f'min-case-score {name}'
    lowest = below.extreme
    limit = format_number(threshold, lowest)
    if below.count:
        missing = ' or missing' if below.missing else ''
        detail = f'{name} < {limit}{missing} on {below.count} of {plural(below.asked, "case")} ({below.listed()})'
        return GateResult(gate, False, detail)
    detail = f'{name} >= {limit} on {_all(below.asked)}'
    if lowest is not None:
        detail += f' (lowest {format_number(lowest, threshold)})'
    return GateResult(gate, True, detail)


def _max_fail_rate(document: ReportDocument, limit: float) -> GateResult:
    totals = document.totals
    passed = at_most(totals.fail_rate, limit)
    op = '<=' if passed else '>'
    detail = (
        f'fail rate {percent(totals.fail_rate, limit)} ({totals.failed_cases} of {totals.cases} cases)'
        f' {op} {percent(limit, totals.fail_rate)}'
    )
    return GateResult('max-fail-rate', passed, detail)


def metric_mean(document: ReportDocument, name: str, seen: _Pass) -> tuple[float | None, int]:
    """The mean of metric `name` over the cases that recorded it (`None` when none did), and how many did."""
    if name == DURATION:
        return seen.duration.mean(), seen.duration.count
    return document.averages.metrics.get(name), seen.metrics.get(name, 0)


def _max_metric(document: ReportDocument, name: str, limit: float, seen: _Pass) -> GateResult:
    gate = f'max-metric {name}'
    mean, count = metric_mean(document, name, seen)
    if mean is None:
        return GateResult(gate, False, f'{name}: no case recorded a value (maximum {format_metric(name, limit)})')
    passed = at_most(mean, limit)
    op = '<=' if passed else '>'
    cases = len(document.cases)
    partial = f' ({count} of {cases} cases recorded it)' if count < cases else ''
    shown, bound = format_metric(name, mean, limit), format_metric(name, limit, mean)
    return GateResult(gate, passed, f'{name} average {shown}{partial} {op} {bound}')


def _max_case_metric(name: str, limit: float, above: Failing) -> GateResult:
    gate = f'max-case-metric {name}'
    highest = above.extreme
    bound = format_metric(name, limit, highest)
    if above.count:
        missing = ' or missing' if above.missing else ''
        detail = f'{name} > {bound}{missing} on {above.count} of {plural(above.asked, "case")} ({above.listed()})'
        return GateResult(gate, False, detail)
    detail = f'{name} <= {bound} on {_all(above.asked)}'
    if highest is not None:
        detail += f' (highest {format_metric(name, highest, limit)})'
    return GateResult(gate, True, detail)


def _summary(document: ReportDocument, results: Sequence[GateResult]) -> str:
    failing = [r.detail for r in results if not r.passed]
    if failing:
        return 'FAIL: ' + '; '.join(failing)
    return 'PASS: ' + '; '.join([plural(document.totals.cases, 'case'), *(r.detail for r in results)])


def _averages(document: ReportDocument, gates: Gates, seen: _Pass) -> Iterator[AverageVerdict]:
    """Each score's average, each assertion's pass rate and each metric's mean, with the gates on it."""
    averages = document.averages
    for name, value in averages.scores.items():
        checks = _score_gates(gates, name, value, seen)
        yield AverageVerdict(name, 'score', value, seen.scores.get(name, 0), None, checks)
    for name, rate in averages.assertions.items():
        passed, count = averages.assertion_tallies.get(name, (0, 0))
        checks = _score_gates(gates, name, rate, seen)
        if not checks:  # no gate names it: every assertion must pass (unless failures are allowed)
            status: GateStatus = 'pass' if passed == count else 'allowed' if gates.allow_failures else 'fail'
            checks = (GateCheck('assertions', status),)
        yield AverageVerdict(name, 'assertion', rate, count, passed, checks)
    for name in [*averages.metrics, *([DURATION] if document.cases else [])]:
        mean, count = metric_mean(document, name, seen)
        if mean is None:
            continue
        limit = gates.metric_limit_for(name)
        own = () if limit is None else (GateCheck('max-metric', 'pass' if at_most(mean, limit) else 'fail', limit),)
        checks = (*own, *_case_check(gates.case_metric_limit_for(name), seen.above.get(name)))
        yield AverageVerdict(name, 'metric', mean, count, None, checks)


def _score_gates(gates: Gates, name: str, value: float, seen: _Pass) -> tuple[GateCheck, ...]:
    threshold = gates.threshold_for(name)
    own = (
        ()
        if threshold is None
        else (GateCheck('min-score', 'pass' if at_least(value, threshold) else 'fail', threshold),)
    )
    return (*own, *_case_check(gates.case_threshold_for(name), seen.below.get(name)))


def _names_of(gates: Iterable[MinScore | MaxMetric]) -> list[str]:
    """The names the gates of one kind name, each once, in the order first given."""
    return list(dict.fromkeys(g.name for g in gates))


def _case_check(bound: float | None, failing: Failing | None) -> tuple[GateCheck, ...]:
    if bound is None or failing is None:
        return ()
    status: Literal['pass', 'fail'] = 'fail' if failing.count else 'pass'
    return (GateCheck(failing.gate, status, bound, failing.count, failing.missing),)


def _names(items: Iterable[str]) -> str:
    named = _Named()
    for item in items:
        named.add(item)
    return named.listed()


def _shown(first: Sequence[str], count: int) -> str:
    return ', '.join(first) + (f', and {count - LISTED} more' if count > LISTED else '')


def _all(count: int) -> str:
    """`1 case`, `all 2 cases`: what a per-case gate held on."""
    return plural(count, 'case') if count <= 1 else f'all {count} cases'
