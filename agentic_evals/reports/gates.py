"""Release gates: what `run` and `render` are asked to check (`Gates`), and how their numbers read.

The gates are checked, and every verdict computed, by `judge.py`. The gates (all must hold for exit status 0):

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

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import AgenticEvalsError
from .document import CaseResult

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


class UnknownResultError(AgenticEvalsError, ValueError):
    """A gate naming no score, assertion or metric: a usage error, not a failed gate."""


def case_metric(case: CaseResult, name: str) -> float | None:
    """Metric `name` of `case` (`duration` is its recorded run time), or `None` when it recorded none."""
    if name == DURATION:
        return case.duration
    return case.metrics.get(name)


def plural(count: int, noun: str) -> str:
    return f'{count} {noun}' + ('' if count == 1 else 's')


def format_number(value: float, other: float | None = None) -> str:
    """Three decimals, or as many more as it takes for `value` and a different `other` not to look equal.

    Call it both ways (`format_number(a, b)`, `format_number(b, a)`) and both get the same precision.
    """
    return f'{value:.{_digits(value, other, 3, 1)}f}'


def format_metric(name: str, value: float, other: float | None = None) -> str:
    """A metric as a reader expects it: counts whole, others with four significant digits (more if
    `value` and a different `other` would look equal); `duration` as `format_duration` writes it; a
    non-finite value (a hand-edited report may hold one) as `nan` or `inf`."""
    if name == DURATION:
        return format_duration(value, other)
    if not math.isfinite(value):
        return format_number(value)
    if float(value).is_integer():
        return f'{int(value)}'
    digits = max(4, len(f'{abs(int(value))}') + 1)
    while digits < 17 and other is not None and other != value and f'{value:.{digits}g}' == f'{other:.{digits}g}':
        digits += 1
    return f'{value:.{digits}g}'


def format_duration(seconds: float, other: float | None = None) -> str:
    """Seconds as a person reads them, in every view: `850 µs`, `12.3 ms`, `1.25 s` (three significant
    digits; more when a different `other` would otherwise look equal). The HTML pages' `AE.seconds`
    (`views/html_assets/page.js`) writes durations by the same rule."""
    if not math.isfinite(seconds):
        return format_number(seconds)
    unit, scale = ('µs', 1e6) if seconds < 0.001 else ('ms', 1e3) if seconds < 1 else ('s', 1.0)
    digits = 3
    while digits < 15 and other is not None and other != seconds and math.isfinite(other):
        if _significant(seconds * scale, digits, unit) != _significant(other * scale, digits, unit):
            break
        digits += 1
    return f'{_significant(seconds * scale, digits, unit)} {unit}'


def _significant(value: float, digits: int, unit: str) -> str:
    """`value` to `digits` significant digits without trailing zeros (whole microseconds at three)."""
    if unit == 'µs':
        decimals = digits - 3
        return f'{round(value)}' if decimals == 0 else f'{value:.{decimals}f}'.rstrip('0').rstrip('.')
    if value == 0:
        return '0'
    rounded = float(f'{value:.{digits}g}')
    decimals = max(digits - 1 - math.floor(math.log10(abs(rounded))), 0)
    text = f'{rounded:.{decimals}f}'
    return text.rstrip('0').rstrip('.') if '.' in text else text


def percent(value: float, other: float) -> str:
    """A fraction as a percentage, with as many decimals as it takes not to look equal to `other`."""
    return f'{value:.{_digits(value * 100, other * 100, 1, 1)}%}'


def _digits(value: float, other: float | None, digits: int, scale: float) -> int:
    if other is None or value == other:
        return digits
    while digits < 12 and f'{value * scale:.{digits}f}' == f'{other * scale:.{digits}f}':
        digits += 1
    return digits
