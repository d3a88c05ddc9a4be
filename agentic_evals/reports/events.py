"""A report's results as OpenTelemetry `gen_ai.evaluation.result` events: the event model.

One event per result of every case (scores, assertions, labels) and per evaluator error, with the
evaluated trace's id and its agent span's id, as the GenAI semantic conventions parent the event to
the span it judged. How the events leave the process (OTLP JSON lines, a live OTLP export) is
`views/otlp_export.py`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from opentelemetry._logs import SeverityNumber

from ..conventions import genai
from .document import CaseResult, ReportDocument

_INFO = SeverityNumber.INFO
_ERROR = SeverityNumber.ERROR
_TRACE_ID = re.compile('[0-9a-f]{32}')
_SPAN_ID = re.compile('[0-9a-f]{16}')
_ERROR_TYPE = re.compile(r'[A-Za-z_][\w.]*')
_ERROR_TYPE_OTHER = '_OTHER'
"""`error.type` when the error's type is not known (the conventions' fallback value)."""
_KIND_SCORE, _KIND_ASSERTION, _KIND_LABEL, _KIND_ERROR = 'score', 'assertion', 'label', 'evaluator_error'

Attribute = str | float | bool


@dataclass(frozen=True)
class EvaluationEvent:
    """One `gen_ai.evaluation.result` event: what a log record carries, independent of the SDK version."""

    attributes: dict[str, Attribute]
    """Every attribute, `event.name` included (older SDKs and protocols have no event name field)."""
    trace_id: str | None = None
    """The evaluated trace (32 lowercase hex digits); `None`: the record has no trace context."""
    span_id: str | None = None
    """The agent span (16 lowercase hex digits), only with a trace id."""
    severity: SeverityNumber = _INFO
    """INFO for a result, ERROR for an evaluator that raised."""
    name: str = genai.EVALUATION_RESULT_EVENT


def evaluation_events(document: ReportDocument) -> list[EvaluationEvent]:
    """One event per result of every case (scores, assertions, labels) and per evaluator error.

    Cases that failed before evaluation (`document.failures`) have no results and no event.
    """
    return list(iter_evaluation_events(document))


def iter_evaluation_events(document: ReportDocument) -> Iterator[EvaluationEvent]:
    """`evaluation_events` one at a time, case by case: the writers never hold a million cases' events."""
    for case in document.cases:
        yield from _case_events(document.name, case)


def event_count(document: ReportDocument) -> int:
    """How many events `iter_evaluation_events` gives, counted without making them."""
    return sum(len(c.scores) + len(c.assertions) + len(c.labels) + len(c.evaluator_errors) for c in document.cases)


def _case_events(dataset: str, case: CaseResult) -> Iterator[EvaluationEvent]:
    trace_id, span_id = _trace_context(case)

    def event(
        kind: str,
        name: str,
        evaluator: str | None,
        *,
        value: float | None = None,
        label: str | None = None,
        explanation: str | None = None,
        error_type: str | None = None,
    ) -> EvaluationEvent:
        attributes: dict[str, Attribute] = {
            genai.EVENT_NAME: genai.EVALUATION_RESULT_EVENT,
            genai.EVALUATION_NAME: name,
        }
        if value is not None:
            attributes[genai.EVALUATION_SCORE_VALUE] = float(value)
        if label is not None:
            attributes[genai.EVALUATION_SCORE_LABEL] = label
        if explanation:
            attributes[genai.EVALUATION_EXPLANATION] = explanation
        if error_type is not None:
            attributes[genai.ERROR_TYPE] = error_type
        attributes[genai.EVALS_DATASET] = dataset
        attributes[genai.EVALS_CASE] = case.name
        if evaluator:
            attributes[genai.EVALS_EVALUATOR] = evaluator
        attributes[genai.EVALS_RESULT_KIND] = kind
        severity = _ERROR if error_type is not None else _INFO
        return EvaluationEvent(attributes, trace_id, span_id, severity)

    for name, score in case.scores.items():
        # A non-finite score is stored as null: the event still says the evaluation ran, without a value.
        value = score.value if score.value is not None and math.isfinite(score.value) else None
        yield event(_KIND_SCORE, name, score.evaluator, value=value, explanation=score.reason)
    for name, assertion in case.assertions.items():
        passed = assertion.value
        label = genai.EVALUATION_PASS if passed else genai.EVALUATION_FAIL
        value = 1.0 if passed else 0.0
        yield event(_KIND_ASSERTION, name, assertion.evaluator, value=value, label=label, explanation=assertion.reason)
    for name, result in case.labels.items():
        yield event(_KIND_LABEL, name, result.evaluator, label=result.value, explanation=result.reason)
    for error in case.evaluator_errors:
        yield event(
            _KIND_ERROR, error.name, error.evaluator, explanation=error.message, error_type=_error_type(error.message)
        )


def _trace_context(case: CaseResult) -> tuple[str | None, str | None]:
    """The case's ids when they are valid W3C ids (a hand-edited report may hold anything)."""
    trace_id = (case.trace_id or '').lower()
    if not _TRACE_ID.fullmatch(trace_id) or not int(trace_id, 16):
        return None, None
    span_id = (case.span_id or '').lower()
    return trace_id, span_id if _SPAN_ID.fullmatch(span_id) and int(span_id, 16) else None


def _error_type(message: str) -> str:
    """pydantic-evals records an evaluator's exception as `Type: message`; the type is low-cardinality."""
    head, separator, _ = message.partition(':')
    return head if separator and _ERROR_TYPE.fullmatch(head) else _ERROR_TYPE_OTHER
