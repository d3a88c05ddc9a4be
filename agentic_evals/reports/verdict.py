"""The verdicts a report carries: each case's checks, each gate's outcome, each average's gates.

Plain data, written in the JSON report (`document.py` holds them) and read by the views; `judge.py`
computes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

CheckStatus = Literal['pass', 'fail', 'allowed', 'below', 'none']
"""`pass`: a gate covers it and it holds; `fail`: it fails the case (a failed assertion, an evaluator
error, a per-case gate); `allowed`: it failed and `--allow-failures` lets the run pass; `below`: a score
under its average's `--min-score` (the gate is on the average: the case does not fail by it); `none`: no
gate covers it (a score is shown as a score, never as passing)."""
CheckKind = Literal['assertion', 'score', 'error', 'missing', 'metric', 'run']


@dataclass
class Check:
    """One verdict on a case: a result against the gates that cover it, or what a per-case gate asks of it."""

    name: str
    """The result, metric or (`run`) `(case)` judged."""
    kind: CheckKind
    """`missing`: a result a `--min-case-score` asks for that the case lacks; `metric`: a `--max-case-metric`;
    `run`: a case that failed to run."""
    status: CheckStatus
    gate: str | None = None
    """The gate that decided the status: `assertions`, `evaluator errors`, `case failures`, `min-score`,
    `min-case-score` or `max-case-metric`; `None` for a score no gate covers."""
    bound: float | None = None
    """The threshold (at least) or limit (at most) the value was judged against."""
    value: float | None = None
    """The value judged (a score, an assertion as 1 or 0, a metric); `None` when there was none."""


@dataclass
class CaseVerdict:
    """A case's verdict under the run's gates, from its checks."""

    passed: bool | None
    """`False` when a check failed (or failed and was allowed), `True` when every check a gate decided
    passed, `None` when no gate judged anything in the case (its scores are scores, not passes)."""
    checks: list[Check] = field(default_factory=list)


@dataclass(frozen=True)
class GateResult:
    gate: str
    """`assertions`, `case failures`, `evaluator errors`, `min-score NAME`, `min-case-score NAME`,
    `max-fail-rate`, `max-metric NAME` or `max-case-metric NAME`."""
    passed: bool
    detail: str


GateStatus = Literal['pass', 'fail', 'allowed']


@dataclass(frozen=True)
class GateCheck:
    """One gate on an average row: an average's own (`min-score`, `max-metric`, `assertions`: all must pass),
    or a per-case gate on the same name (`min-case-score`, `max-case-metric`) with the cases failing it."""

    gate: str
    status: GateStatus
    bound: float | None = None
    failing: int = 0
    """Cases failing a per-case gate (those without a value included)."""
    missing: int = 0
    """Of `failing`, the cases that had no value."""


@dataclass(frozen=True)
class AverageVerdict:
    """An average, a pass rate or a metric mean, with the gates on it and their outcome."""

    name: str
    kind: Literal['score', 'assertion', 'metric']
    value: float
    """The mean score, the pass rate (0..1) or the mean metric."""
    cases: int
    """The cases it is over: with a value (scores), with the assertion, that recorded the metric."""
    passed_cases: int | None = None
    """Assertions: the cases that pass it."""
    gates: tuple[GateCheck, ...] = ()

    @property
    def status(self) -> GateStatus | None:
        """The worst of its gates' statuses; `None` when no gate covers it."""
        statuses = {g.status for g in self.gates}
        if 'fail' in statuses:
            return 'fail'
        if 'allowed' in statuses:
            return 'allowed'
        return 'pass' if statuses else None


@dataclass(frozen=True)
class Verdict:
    """The run's verdict: every gate's outcome, one line saying why, and each average's gates."""

    results: tuple[GateResult, ...]
    summary: str
    passed: bool
    averages: tuple[AverageVerdict, ...] = ()
