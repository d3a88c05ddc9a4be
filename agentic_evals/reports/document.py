"""The versioned JSON report (`agentic-evals/report@1`): what `run --json` writes and `compare` reads.

A pydantic-evals `EvaluationReport` holds Python objects (evaluator specs, arbitrary inputs) and
has no stable serialized form, so a report is converted once into this plain document; the
terminal table, JUnit, Markdown, gates and `compare` all read the document, which keeps them
consistent with each other and with a report loaded back from disk.

`averages` and `totals` are derived from `cases` and `failures`; readers recompute them
(`read_document`), so a hand-edited or foreign file cannot disagree with itself.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Strict, TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python
from pydantic_evals.reporting import EvaluationReport, ReportCase, ReportCaseFailure

from ..errors import FileError, os_reason
from ..files import decode, parse_json, read_limited
from ..trajectory.account import TraceAccount
from .verdict import CaseVerdict, Verdict

SCHEMA: Literal['agentic-evals/report@1'] = 'agentic-evals/report@1'
"""Bumped (`@2`) only for changes that break readers; new optional fields keep `@1`."""

Number = Annotated[int, Strict()] | Annotated[float, Strict()]
"""A metric: ints stay ints (token counts); bools and numeric strings are rejected."""
Score = Annotated[float, Strict()]
"""A score: ints are accepted (as floats); bools and numeric strings are rejected."""


@dataclass
class ScoreResult:
    """A numeric result; `value` is `null` when the evaluator returned a non-finite number."""

    value: Score | None
    reason: str | None = None
    evaluator: str | None = None
    """The evaluator that produced the result (its YAML name); the result's key may differ."""


@dataclass
class AssertionResult:
    value: Annotated[bool, Strict()]
    reason: str | None = None
    evaluator: str | None = None


@dataclass
class LabelResult:
    value: Annotated[str, Strict()]
    reason: str | None = None
    evaluator: str | None = None


@dataclass
class EvaluatorError:
    """An evaluator that raised on a case (its results are missing from that case)."""

    name: str
    message: str
    evaluator: str | None = None


CallStatus = Literal['ok', 'failed', 'deferred']


@dataclass
class AgentSpan:
    """One agent run in a case's timeline; `path` is the enclosing runs, outermost first, ending with it."""

    name: str
    path: list[str]
    start: float
    """Seconds since the case's trace started."""
    end: float
    span_id: str | None = None


@dataclass
class CallSpan:
    """One tool call attempt in a case's timeline."""

    name: str
    status: CallStatus
    agent_path: list[str]
    start: float
    end: float
    arguments: str | None = None
    """The arguments as recorded (JSON text, or the model's invalid text), cut at `case_trace.TEXT_LIMIT`."""
    result: str | None = None
    """The result or error text as recorded, cut at `case_trace.TEXT_LIMIT`."""
    failure_stage: str | None = None
    output_function: bool = False
    """An output function: it ran through the tool machinery but produced the run's output."""


@dataclass
class RequestSpan:
    """One model request in a case's timeline."""

    model: str | None
    agent_path: list[str]
    start: float
    end: float
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None


@dataclass
class Timeline:
    """What the agent did in one case, for views that draw it: agents, tool calls, model requests.

    Long runs keep their first `case_trace.TIMELINE_LIMIT` calls and requests; `omitted` counts the rest.
    """

    agents: list[AgentSpan] = field(default_factory=list)
    calls: list[CallSpan] = field(default_factory=list)
    requests: list[RequestSpan] = field(default_factory=list)
    omitted: int = 0


AlignmentStatus = Literal['matched', 'missing', 'extra', 'mismatch']


@dataclass
class AlignedCall:
    """One row of expected against actual: a paired call, a missing or extra one, or a pair whose
    arguments differ (`keys` names the differing arguments, `differences` says how)."""

    status: AlignmentStatus
    expected: str | None = None
    actual: str | None = None
    keys: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)


@dataclass
class Alignment:
    """An evaluator's expected trajectory against the actual one, row by row in order."""

    result: str
    """The name of the case result (score or assertion) this alignment explains."""
    evaluator: str
    rows: list[AlignedCall] = field(default_factory=list)
    turn: int | None = None
    """The turn (from 1) of a case scored turn by turn; `None` for the whole case."""


@dataclass
class CaseDetails:
    """What `document_from_report` adds to a case: where its trace is, its timeline, its alignments."""

    trace_id: str | None = None
    span_id: str | None = None
    timeline: Timeline | None = None
    alignments: list[Alignment] = field(default_factory=list)
    account: TraceAccount | None = None


@dataclass
class CaseResult:
    name: str
    inputs: Any = None
    metadata: Any = None
    expected_output: Any = None
    output: Any = None
    scores: dict[str, ScoreResult] = field(default_factory=dict)
    assertions: dict[str, AssertionResult] = field(default_factory=dict)
    labels: dict[str, LabelResult] = field(default_factory=dict)
    metrics: dict[str, Number] = field(default_factory=dict)
    evaluator_errors: list[EvaluatorError] = field(default_factory=list)
    duration: float = 0.0
    """Seconds the recorded run took: its root spans' extent."""
    trace_id: str | None = None
    """The evaluated trace (32 hex digits), when known."""
    span_id: str | None = None
    """The span the case's results belong to (16 hex digits): the outermost agent run when there is
    one, else the trace's root (offline) or pydantic-evals' case span (in-process)."""
    timeline: Timeline | None = None
    """What the agent did; `None` when the spans were not available to the report."""
    alignments: list[Alignment] = field(default_factory=list)
    account: TraceAccount | None = None
    """What the case's trace held and where each fact came from; `None` when its spans were not at hand."""
    expected_results: list[str] | None = None
    """The result names the case's evaluators report by default (the dataset's and its own), so a
    per-case gate checked later asks the case only for those; `None` without a dataset."""
    verdict: CaseVerdict | None = None
    """The case's verdict under the gates of the run that wrote the report; `None` when not judged."""

    @property
    def failed(self) -> bool:
        """A failed assertion or an evaluator error: the case does not pass."""
        return bool(self.evaluator_errors) or any(not a.value for a in self.assertions.values())


@dataclass
class CaseFailure:
    """A case whose task failed (most often: no trace was found for it); nothing was evaluated."""

    name: str
    error: str
    inputs: Any = None
    metadata: Any = None
    expected_output: Any = None
    expected_results: list[str] | None = None
    """As in `CaseResult`."""
    verdict: CaseVerdict | None = None
    """As in `CaseResult`."""


@dataclass
class Averages:
    scores: dict[str, float] = field(default_factory=dict)
    """Mean of each score over the cases that have it (non-finite values skipped)."""
    assertions: dict[str, float] = field(default_factory=dict)
    """Pass rate (0..1) of each assertion over the cases that have it."""
    assertion_tallies: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Each assertion's (cases passing it, cases that have it)."""
    labels: dict[str, dict[str, float]] = field(default_factory=dict)
    """Share (0..1) of each value of each label."""
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class Totals:
    cases: int = 0
    """Cases evaluated plus case failures."""
    case_failures: int = 0
    failed_cases: int = 0
    """Cases with a failed assertion, an evaluator error, or a case failure."""
    assertions: int = 0
    failed_assertions: int = 0
    evaluator_errors: int = 0
    fail_rate: float = 0.0
    """`failed_cases / cases` (0 when there are no cases)."""


@dataclass
class ReportDocument:
    schema: Literal['agentic-evals/report@1'] = field(default=SCHEMA, kw_only=True)
    name: str
    # A list, or (`run`) the cases spooled on disk (`reports.stream`): iterate, do not index.
    cases: Sequence[CaseResult] = field(default_factory=list)
    failures: Sequence[CaseFailure] = field(default_factory=list)
    averages: Averages = field(default_factory=Averages)
    totals: Totals = field(default_factory=Totals)
    verdict: Verdict | None = None
    """The verdict of the run that wrote the report, under its gates; `None` when not judged."""

    def with_derived(self) -> ReportDocument:
        """This document with `averages` and `totals` recomputed from its cases and failures."""
        aggregates = Aggregates()
        for case in self.cases:
            aggregates.add(case)
        for failure in self.failures:
            aggregates.add(failure)
        return replace(self, averages=aggregates.averages(), totals=aggregates.totals())

    def expected_results(self) -> dict[str, frozenset[str]] | None:
        """Case name -> the result names its evaluators report (`Gates.expected`); `None` when not recorded."""
        entries: list[CaseResult | CaseFailure] = [*self.cases, *self.failures]
        recorded = {c.name: frozenset(c.expected_results) for c in entries if c.expected_results is not None}
        return recorded or None

    def result_names(self) -> dict[str, set[str]]:
        """Every result name per kind (`scores`, `assertions`, `labels`) across the cases."""
        names: dict[str, set[str]] = {'scores': set(), 'assertions': set(), 'labels': set()}
        for case in self.cases:
            names['scores'].update(case.scores)
            names['assertions'].update(case.assertions)
            names['labels'].update(case.labels)
        return names


_ADAPTER = TypeAdapter(ReportDocument)


def document_from_report(
    report: EvaluationReport[Any, Any, Any],
    details: Callable[[ReportCase[Any, Any, Any]], CaseDetails | None] | None = None,
    expected: Mapping[str, Collection[str]] | None = None,
) -> ReportDocument:
    """Convert a pydantic-evals report into the versioned document (with averages and totals).

    `details` gives a case's timeline and alignments (`case_trace.case_details`) when its spans were
    kept; without it, or for a case it has nothing for, the case carries only its trace id.
    `expected` (`Suite.expected_results`) is recorded per case, for gates checked on the file later.
    """
    cases = [_case(c, details(c) if details is not None else None) for c in report.cases]
    failures = [_failure(f) for f in report.failures]
    if expected is not None:
        for item in cases:
            item.expected_results = sorted(expected[item.name]) if item.name in expected else None
        for failure in failures:
            failure.expected_results = sorted(expected[failure.name]) if failure.name in expected else None
    return ReportDocument(name=report.name, cases=cases, failures=failures).with_derived()


def entry_of(
    result: ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any], details: CaseDetails | None = None
) -> CaseResult | CaseFailure:
    """One case of a pydantic-evals report as the document's entry (what `run` streams case by case)."""
    return _case(result, details) if isinstance(result, ReportCase) else _failure(result)


def _case(case: ReportCase[Any, Any, Any], details: CaseDetails | None) -> CaseResult:
    return CaseResult(
        name=case.name,
        inputs=_jsonable(case.inputs),
        metadata=_jsonable(case.metadata),
        expected_output=_jsonable(case.expected_output),
        output=_jsonable(case.output),
        scores={k: ScoreResult(_finite(r.value), r.reason, r.source.name) for k, r in sorted(case.scores.items())},
        assertions={
            k: AssertionResult(bool(r.value), r.reason, r.source.name) for k, r in sorted(case.assertions.items())
        },
        labels={k: LabelResult(str(r.value), r.reason, r.source.name) for k, r in sorted(case.labels.items())},
        metrics={k: v for k, v in sorted(case.metrics.items()) if _finite(v) is not None},
        evaluator_errors=[EvaluatorError(f.name, f.error_message, f.source.name) for f in case.evaluator_failures],
        duration=case.task_duration,
        trace_id=details.trace_id if details is not None else known_id(case.trace_id),
        span_id=details.span_id if details is not None else known_id(case.span_id),
        timeline=details.timeline if details is not None else None,
        alignments=details.alignments if details is not None else [],
        account=details.account if details is not None else None,
    )


def known_id(hex_id: str | None) -> str | None:
    """The id, or `None` for none or for the all-zero id pydantic-evals reports for a span never recorded
    (Logfire not configured): a zero trace id would parent results to nothing."""
    if not hex_id or not hex_id.strip('0'):
        return None
    return hex_id


def _failure(failure: ReportCaseFailure[Any, Any, Any]) -> CaseFailure:
    return CaseFailure(
        name=failure.name,
        error=failure.error_message,
        inputs=_jsonable(failure.inputs),
        metadata=_jsonable(failure.metadata),
        expected_output=_jsonable(failure.expected_output),
    )


def _jsonable(value: object) -> Any:
    try:
        return to_jsonable_python(value, serialize_unknown=True)
    except Exception:  # a value pydantic cannot serialize (too deep, say): keep something readable
        try:
            return repr(value)
        except Exception:  # deeper than even repr can go
            return f'<{type(value).__name__} that cannot be shown>'


def _finite(value: float | int) -> float | int | None:
    if isinstance(value, bool):
        return int(value)
    return value if math.isfinite(value) else None


class ExactSum:
    """A running sum of floats without rounding error (Shewchuk's partials, as `math.fsum`), so the
    order cases arrive in never shows."""

    __slots__ = ('count', 'partials')

    def __init__(self) -> None:
        self.partials: list[float] = []
        self.count = 0

    def add(self, value: float) -> None:
        self.count += 1
        x = float(value)
        kept = 0
        for y in self.partials:
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low:
                self.partials[kept] = low
                kept += 1
            x = high
        self.partials[kept:] = [x]

    def mean(self) -> float | None:
        return math.fsum(self.partials) / self.count if self.count else None


class Aggregates:
    """The averages and totals of a report, folded in one entry at a time (`ReportBuilder` folds them as
    cases arrive, `with_derived` over a document's cases): the one place they are computed."""

    def __init__(self) -> None:
        self._scores: dict[str, ExactSum] = {}
        self._assertions: dict[str, list[int]] = {}
        self._labels: dict[str, dict[str, int]] = {}
        self._metrics: dict[str, ExactSum] = {}
        self._totals = Totals()

    def add(self, entry: CaseResult | CaseFailure) -> None:
        totals = self._totals
        totals.cases += 1
        if isinstance(entry, CaseFailure):
            totals.case_failures += 1
            totals.failed_cases += 1
            return
        totals.failed_cases += entry.failed
        totals.assertions += len(entry.assertions)
        totals.evaluator_errors += len(entry.evaluator_errors)
        for name, score in entry.scores.items():
            total = self._scores.setdefault(name, ExactSum())
            if score.value is not None:
                total.add(score.value)
        for name, assertion in entry.assertions.items():
            counts = self._assertions.setdefault(name, [0, 0])
            counts[0] += assertion.value
            counts[1] += 1
            totals.failed_assertions += not assertion.value
        for name, label in entry.labels.items():
            values = self._labels.setdefault(name, {})
            values[label.value] = values.get(label.value, 0) + 1
        for name, value in entry.metrics.items():
            self._metrics.setdefault(name, ExactSum()).add(value)

    def averages(self) -> Averages:
        averages = Averages()
        for name in sorted(self._scores):
            mean = self._scores[name].mean()
            if mean is not None:
                averages.scores[name] = mean
        for name in sorted(self._assertions):
            passed, count = self._assertions[name]
            averages.assertions[name] = passed / count
            averages.assertion_tallies[name] = (passed, count)
        for name in sorted(self._labels):
            values = self._labels[name]
            count = sum(values.values())
            averages.labels[name] = {v: values[v] / count for v in sorted(values)}
        for name in sorted(self._metrics):
            mean = self._metrics[name].mean()
            if mean is not None:
                averages.metrics[name] = mean
        return averages

    def totals(self) -> Totals:
        totals = replace(self._totals)
        totals.fail_rate = totals.failed_cases / totals.cases if totals.cases else 0.0
        return totals


def dump_document(document: ReportDocument) -> str:
    """The document as indented JSON text, keys in a stable order (`document_chunks`, joined).

    Text from traces may hold lone surrogates, which UTF-8 cannot encode (pydantic's JSON writer
    refuses them); JSON carries them as `\\ud800` escapes, which read back as the same text.
    """
    return ''.join(document_chunks(document))


def document_chunks(document: ReportDocument) -> Iterator[str]:
    """`dump_document`'s text a piece at a time, one piece per case: a report of a million cases is
    written without its cases (or its text) in memory at once.

    The top level is written key by key as `json.dumps(..., indent=2)` lays it out; each case (and
    failure) is dumped alone and indented into place, which is safe line by line because a JSON string
    never holds a raw newline.
    """
    head = _null_non_finite(_ADAPTER.dump_python(replace(document, cases=[], failures=[])))
    streamed: dict[str, tuple[Iterable[Any], TypeAdapter[Any]]] = {
        'cases': (document.cases, _CASE_ADAPTER),
        'failures': (document.failures, _FAILURE_ADAPTER),
    }
    separator = '{\n'
    for key, value in head.items():
        yield f'{separator}  {_json_text(key, "")}: '
        separator = ',\n'
        if key not in streamed:
            yield _json_text(value, '\n  ')
            continue
        items, adapter = streamed[key]
        opening = '[\n    '
        for item in items:
            yield opening + _json_text(_null_non_finite(adapter.dump_python(item)), '\n    ')
            opening = ',\n    '
        yield '[]' if opening == '[\n    ' else '\n  ]'
    yield '\n}\n'


_CASE_ADAPTER = TypeAdapter(CaseResult)
_FAILURE_ADAPTER = TypeAdapter(CaseFailure)


def _json_text(value: Any, newline: str) -> str:
    """`value` as indented JSON with every line break replaced by `newline` (its indentation in the
    document), lone surrogates escaped."""
    text = json.dumps(value, indent=2, ensure_ascii=False).replace('\n', newline)
    return _SURROGATE.sub(lambda m: f'\\u{ord(m[0]):04x}', text)


def _null_non_finite(data: dict[str, Any]) -> dict[str, Any]:
    """Non-finite floats (in inputs or outputs) as `null`, as pydantic writes them: `NaN` is not JSON."""
    stack: list[Any] = [data]
    while stack:
        value = stack.pop()
        for key, item in value.items() if isinstance(value, dict) else enumerate(value):
            if isinstance(item, float) and not math.isfinite(item):
                value[key] = None
            elif isinstance(item, dict | list):
                stack.append(item)
    return data


_SURROGATE = re.compile('[\ud800-\udfff]')


def read_document(path: Path) -> ReportDocument:
    """Read and validate a report written by `run --json`; raises `FileError` saying what is wrong.

    Read with the dataset files' limits (size, integer digits, nesting Python can parse).
    """
    try:
        text = decode(read_limited(path))
    except (OSError, ValueError) as e:  # ValueError: not UTF-8, or a NUL byte in the path
        raise FileError(path, f'cannot read: {os_reason(e)}') from None
    if not text.strip():
        raise FileError(path, 'the file is empty')
    raw = parse_json(path, text)
    if not isinstance(raw, Mapping):
        raise FileError(path, f'expected a JSON object with "schema": "{SCHEMA}", got {type(raw).__name__}')
    schema = raw.get('schema')
    if schema != SCHEMA:
        raise FileError(path, f'expected "schema": "{SCHEMA}", got {schema!r} (write reports with `run --json`)')
    try:
        document = _ADAPTER.validate_python(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = '.'.join(str(p) for p in first['loc'])
        more = f' (and {e.error_count() - 1} more)' if e.error_count() > 1 else ''
        raise FileError(path, f'{where}: {first["msg"]}{more}') from None
    return document.with_derived()
