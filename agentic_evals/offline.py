"""Run a pydantic-evals Dataset's evaluators over captured traces instead of calling a task.

Each case's task *replays* its trace: the recorded spans are emitted again, with their names,
attributes, status and timestamps, inside the case, and the case's output is read from the
trace. pydantic-evals then records that span tree for the case exactly as it records a live run,
so every evaluator (ours, the built-ins, `HasMatchingSpan`, users' own), the request and token
metrics, the report's rendering, averages and comparisons all work unchanged. Nothing is re-run.

Which trace belongs to which case, in order:

1. a root span whose `case_name` attribute equals the case name (pydantic-evals' case spans
   carry it, so a trace exported from a pydantic-evals run matches itself);
2. a trace whose file name without extensions equals the case name;
3. a trace id in the case's metadata: `metadata['trace_id']` or `metadata.trace_id`
   (32 hex characters, case-insensitive).

A case with no trace becomes a failure in the report (with the rules it tried), not a crash.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import Evaluator
from pydantic_evals.otel.span_tree import SpanNode, SpanTree
from pydantic_evals.reporting import EvaluationReport

from .capture import ensure_global_provider
from .conventions import genai
from .conventions.spans import is_agent_span

__all__ = (
    'MissingTraceError',
    'TraceLike',
    'cases_from_traces',
    'evaluate_traces',
    'evaluate_traces_sync',
    'match_traces',
    'trace_inputs',
    'trace_output',
)

CASE_NAME_ATTRIBUTE = 'case_name'
# pydantic-ai agent spans (instrumentation version 2+): the whole conversation and the run's output.
ALL_MESSAGES = 'pydantic_ai.all_messages'
FINAL_RESULT = 'final_result'
INPUT_MESSAGES = 'gen_ai.input.messages'


class TraceLike(Protocol):
    """What scoring needs of a loaded trace (`agentic_evals.traces.LoadedTrace` is one)."""

    @property
    def trace_id(self) -> str: ...

    @property
    def tree(self) -> SpanTree: ...

    @property
    def name(self) -> str: ...


class MissingTraceError(LookupError):
    """A case for which no trace was found; pydantic-evals reports it as the case's failure."""


@dataclass(frozen=True)
class _Match:
    case: Case[Any, Any, Any]
    trace: TraceLike | None
    why: str


def match_traces(cases: Sequence[Case[Any, Any, Any]], traces: Sequence[TraceLike]) -> list[_Match]:
    """Pair each case with its trace by the rules in the module docstring (first rule that matches)."""
    by_case_name: dict[str, TraceLike] = {}
    by_file_name: dict[str, TraceLike] = {}
    by_id: dict[str, TraceLike] = {}
    for t in traces:
        for root in t.tree.roots:
            value = root.attributes.get(CASE_NAME_ATTRIBUTE)
            if isinstance(value, str):
                by_case_name.setdefault(value, t)
        by_file_name.setdefault(t.name, t)
        by_id.setdefault(t.trace_id.lower(), t)
    matches: list[_Match] = []
    for index, case in enumerate(cases):
        name = case.name or f'Case {index + 1}'
        wanted_id = _metadata_trace_id(case.metadata)
        if name in by_case_name:
            matches.append(_Match(case, by_case_name[name], 'case_name attribute'))
        elif name in by_file_name:
            matches.append(_Match(case, by_file_name[name], 'file name'))
        elif wanted_id is not None and wanted_id in by_id:
            matches.append(_Match(case, by_id[wanted_id], 'metadata trace_id'))
        else:
            tried = f'no root span with case_name={name!r}, no trace file named {name!r}'
            tried += f', no trace with id {wanted_id!r}' if wanted_id else ', no trace_id in the metadata'
            matches.append(_Match(case, None, tried))
    return matches


def _metadata_trace_id(metadata: object) -> str | None:
    value = metadata.get('trace_id') if isinstance(metadata, Mapping) else getattr(metadata, 'trace_id', None)
    return value.lower() if isinstance(value, str) else None


def _outer_agent_spans(tree: SpanTree) -> list[SpanNode]:
    """Agent runs not nested in another agent run, in start order."""
    found: list[SpanNode] = []
    for node in sorted(tree, key=lambda n: n.start_timestamp):
        if is_agent_span(node) and not any(is_agent_span(a) for a in node.ancestors):
            found.append(node)
    return found


def trace_inputs(tree: SpanTree) -> Any:
    """The first user prompt of the first outermost agent run, or `None` when not recorded.

    Read from `pydantic_ai.all_messages` on the agent span, else from the first model request's
    `gen_ai.input.messages`; text parts of the first user message, joined by newlines.
    """
    agents = _outer_agent_spans(tree)
    candidates = [a.attributes.get(ALL_MESSAGES) for a in agents[:1]]
    candidates += [n.attributes.get(INPUT_MESSAGES) for n in sorted(tree, key=lambda n: n.start_timestamp)]
    for raw in candidates:
        text = _first_user_text(raw)
        if text is not None:
            return text
    return None


def trace_output(tree: SpanTree) -> Any:
    """The output of the last outermost agent run that recorded one, or `None`.

    `final_result` when present (parsed when it is a JSON object or array, as pydantic-ai records
    structured output), else the text parts of the run's last `gen_ai.output.messages`.
    """
    for agent in reversed(_outer_agent_spans(tree)):
        value = agent.attributes.get(FINAL_RESULT)
        if isinstance(value, str):
            if value[:1] in ('{', '['):
                try:
                    return json.loads(value)
                except json.JSONDecodeError:
                    return value
            return value
        text = _last_assistant_text(agent)
        if text is not None:
            return text
    return None


def _messages(raw: object) -> list[dict[str, Any]]:
    if not isinstance(raw, str):
        return []
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return []
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def _text_of(message: dict[str, Any]) -> str | None:
    parts = message.get('parts')
    texts = [
        str(p.get('content'))
        for p in (parts if isinstance(parts, list) else ())
        if isinstance(p, dict) and p.get('type') == 'text' and p.get('content') is not None
    ]
    return '\n'.join(texts) if texts else None


def _first_user_text(raw: object) -> str | None:
    for message in _messages(raw):
        if message.get('role') == 'user':
            text = _text_of(message)
            if text is not None:
                return text
    return None


def _last_assistant_text(agent: SpanNode) -> str | None:
    requests = [
        n for n in agent.descendants if n.attributes.get(genai.OPERATION_NAME) in genai.MODEL_REQUEST_OPERATIONS
    ]
    for node in sorted(requests, key=lambda n: n.start_timestamp, reverse=True):
        for message in reversed(_messages(node.attributes.get(genai.OUTPUT_MESSAGES))):
            text = _text_of(message)
            if text is not None:
                return text
    return None


def replay(tree: SpanTree) -> None:
    """Emit the spans of `tree` again, under the current span, with their recorded timestamps.

    Parents are emitted before children (the trees are walked from their roots), so every replayed
    span has its recorded parent; a recorded root becomes a child of the current span.
    """
    tracer = trace.get_tracer('agentic_evals.replay')

    def emit(node: SpanNode, parent: trace.Span | None) -> None:
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = tracer.start_span(
            node.name,
            context=context,
            attributes=dict(node.attributes),
            start_time=_nanoseconds(node.start_timestamp),
        )
        if node.status == 'error':
            span.set_status(Status(StatusCode.ERROR))
        elif node.status == 'ok':
            span.set_status(Status(StatusCode.OK))
        for child in sorted(node.children, key=lambda n: n.start_timestamp):
            emit(child, span)
        span.end(end_time=_nanoseconds(node.end_timestamp))

    for root in tree.roots:
        emit(root, None)


def _nanoseconds(moment: Any) -> int:
    # SpanNode timestamps are aware datetimes with microsecond precision.
    return int(moment.timestamp() * 1_000_000) * 1000


def cases_from_traces(traces: Sequence[TraceLike]) -> list[Case[Any, Any, Any]]:
    """One case per trace, for scoring without a dataset: named after the trace, inputs from its agent span.

    The name is the root's `case_name` attribute, else the trace's file name; a repeated name gets the
    first 8 characters of the trace id appended. The metadata holds the `trace_id`.
    """
    cases: list[Case[Any, Any, Any]] = []
    seen: dict[str, int] = {}
    for t in traces:
        base = next(
            (v for r in t.tree.roots if isinstance(v := r.attributes.get(CASE_NAME_ATTRIBUTE), str)),
            t.name,
        )
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f'{base} ({t.trace_id[:8]})'
        cases.append(Case(name=name, inputs=trace_inputs(t.tree), metadata={'trace_id': t.trace_id}))
    return cases


async def evaluate_traces(
    traces: Iterable[TraceLike],
    *,
    dataset: Dataset[Any, Any, Any] | None = None,
    evaluators: Sequence[Evaluator[Any, Any, Any]] = (),
    name: str | None = None,
) -> EvaluationReport[Any, Any, Any]:
    """Score `traces` with a dataset's evaluators (plus `evaluators`), or with `evaluators` alone.

    With a dataset, each case is paired with its trace (see the module docstring); the case's
    inputs, metadata and expected output come from the dataset, its output from the trace.
    Without one, every trace is a case named after its file (or its root's `case_name`), with
    inputs and output read from the trace. Returns a regular pydantic-evals `EvaluationReport`.
    """
    loaded = list(traces)
    if dataset is None:
        matches = [_Match(c, t, 'trace') for c, t in zip(cases_from_traces(loaded), loaded, strict=True)]
        all_evaluators = list(evaluators)
        report_name = name or 'traces'
    else:
        matches = match_traces(dataset.cases, loaded)
        all_evaluators = [*dataset.evaluators, *evaluators]
        report_name = name or dataset.name or 'traces'
    # pydantic-evals records each case's spans through the global provider.
    ensure_global_provider()
    cases, failures = [], []
    for match in matches:
        single = Dataset[Any, Any, Any](name=report_name, cases=[match.case], evaluators=all_evaluators)
        report = await single.evaluate(_task_for(match), name=report_name, progress=False)
        cases.extend(report.cases)
        failures.extend(report.failures)
    return EvaluationReport(name=report_name, cases=cases, failures=failures)


def evaluate_traces_sync(
    traces: Iterable[TraceLike],
    *,
    dataset: Dataset[Any, Any, Any] | None = None,
    evaluators: Sequence[Evaluator[Any, Any, Any]] = (),
    name: str | None = None,
) -> EvaluationReport[Any, Any, Any]:
    """`evaluate_traces` for code that is not async (not callable inside a running event loop)."""
    return asyncio.run(evaluate_traces(traces, dataset=dataset, evaluators=evaluators, name=name))


def _task_for(match: _Match) -> Any:
    def replay_trace(inputs: object) -> object:
        if match.trace is None:
            raise MissingTraceError(f'no trace found for case {match.case.name!r}: {match.why}')
        replay(match.trace.tree)
        return trace_output(match.trace.tree)

    return replay_trace
