"""Run a pydantic-evals Dataset's evaluators over captured traces instead of calling a task.

Each case is scored on its trace's `SpanTree` directly: the `EvaluatorContext` holds the loaded
tree, the output read from the trace, the duration of the recorded run and the metrics pydantic-evals
would have counted from the same spans, so every evaluator (ours, the built-ins, `HasMatchingSpan`,
users' own) sees what it sees on a live case. Nothing is re-run or re-emitted, and the result is a
regular pydantic-evals `EvaluationReport`.

Which trace belongs to which case, in order of preference:

1. a root span whose `case_name` attribute equals the case name (pydantic-evals' case spans
   carry it, so a trace exported from a pydantic-evals run matches itself);
2. a trace whose file name without extensions equals the case name;
3. a trace id in the case's metadata: `metadata['trace_id']` or `metadata.trace_id`
   (32 hex characters, case-insensitive).

The first rule that finds any trace decides; two traces found by it make the case ambiguous, an
`AmbiguousTraceError` (scoring one of them silently could hide the other, a regression, say). A
case with no trace becomes a failure in the report, with the rules it tried.

Traces stream: without a dataset each is scored as soon as it is loaded and then dropped; with
one, only traces that match a case are kept until they are scored.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import (
    EvaluationReason,
    EvaluationResult,
    Evaluator,
    EvaluatorContext,
    EvaluatorFailure,
)
from pydantic_evals.otel.span_tree import SpanTree
from pydantic_evals.reporting import EvaluationReport, ReportCase, ReportCaseFailure

from .run_io import trace_inputs, trace_output

__all__ = (
    'AmbiguousTraceError',
    'CaseMatch',
    'MissingTraceError',
    'TraceLike',
    'TraceMatcher',
    'case_from_trace',
    'evaluate_traces',
    'evaluate_traces_sync',
    'match_traces',
    'score_case',
    'scored_cases',
    'span_tree_metrics',
    'trace_inputs',
    'trace_output',
)

CASE_NAME_ATTRIBUTE = 'case_name'
_RULES = ('case_name attribute', 'file name', 'metadata trace_id')


class TraceLike(Protocol):
    """What scoring needs of a loaded trace (`agentic_evals.traces.LoadedTrace` is one)."""

    @property
    def trace_id(self) -> str: ...

    @property
    def tree(self) -> SpanTree: ...

    @property
    def name(self) -> str: ...


class MissingTraceError(LookupError):
    """A case for which no trace was found; reported as the case's failure."""


class AmbiguousTraceError(ValueError):
    """Cases that each match more than one trace by the same rule; `str()` lists them all."""


@dataclass(frozen=True)
class CaseMatch:
    """A case and its trace (`None` when none was found), with the rule that paired them."""

    case: Case[Any, Any, Any]
    trace: TraceLike | None
    why: str


@dataclass
class TraceMatcher:
    """Pairs streamed traces with a dataset's cases, keeping only traces that match one.

    `offer` each trace as it is loaded, then `matches()`; `unmatched` names the traces no case
    wanted (their trees are not kept).
    """

    cases: Sequence[Case[Any, Any, Any]]
    unmatched: list[str] = field(default_factory=list[str])
    """`'name (trace id)'` of every offered trace that matches no case."""

    def __post_init__(self) -> None:
        self._names = [case.name or f'Case {i + 1}' for i, case in enumerate(self.cases)]
        self._by_name: dict[str, int] = {name: i for i, name in enumerate(self._names)}
        self._by_id: dict[str, int] = {}
        for index, case in enumerate(self.cases):
            wanted = _metadata_trace_id(case.metadata)
            if wanted is not None:
                self._by_id.setdefault(wanted, index)
        # case index -> rule rank -> the traces that rule found for it
        self._found: dict[int, dict[int, list[TraceLike]]] = {}

    def offer(self, trace: TraceLike) -> bool:
        """Keep `trace` if it matches a case (by any rule); returns whether it was kept."""
        hits: list[tuple[int, int]] = []
        for root in trace.tree.roots:
            value = root.attributes.get(CASE_NAME_ATTRIBUTE)
            if isinstance(value, str) and value in self._by_name:
                hits.append((self._by_name[value], 0))
        if trace.name in self._by_name:
            hits.append((self._by_name[trace.name], 1))
        if trace.trace_id.lower() in self._by_id:
            hits.append((self._by_id[trace.trace_id.lower()], 2))
        for case_index, rank in dict.fromkeys(hits):
            self._found.setdefault(case_index, {}).setdefault(rank, []).append(trace)
        if not hits:
            self.unmatched.append(f'{trace.name} ({trace.trace_id})')
        return bool(hits)

    def matches(self) -> list[CaseMatch]:
        """Every case with its trace, in case order; raises `AmbiguousTraceError` first if any is ambiguous."""
        result: list[CaseMatch] = []
        ambiguous: list[str] = []
        for index, case in enumerate(self.cases):
            found = self._found.get(index, {})
            if not found:
                result.append(CaseMatch(case, None, self._tried(index)))
                continue
            rank = min(found)
            traces = found[rank]
            if len(traces) > 1:
                listed = ', '.join(f'{t.name} ({t.trace_id})' for t in traces)
                ambiguous.append(
                    f'case {self._names[index]!r} matches {len(traces)} traces by {_RULES[rank]}: {listed}'
                )
            result.append(CaseMatch(case, traces[0], _RULES[rank]))
        if ambiguous:
            raise AmbiguousTraceError('; '.join(ambiguous))
        return result

    def _tried(self, index: int) -> str:
        name = self._names[index]
        wanted = _metadata_trace_id(self.cases[index].metadata)
        tried = f'no root span with case_name={name!r}, no trace file named {name!r}'
        return tried + (f', no trace with id {wanted!r}' if wanted else ', no trace_id in the metadata')


def match_traces(cases: Sequence[Case[Any, Any, Any]], traces: Iterable[TraceLike]) -> list[CaseMatch]:
    """Pair each case with its trace by the rules in the module docstring."""
    matcher = TraceMatcher(cases)
    for trace in traces:
        matcher.offer(trace)
    return matcher.matches()


def _metadata_trace_id(metadata: object) -> str | None:
    value = metadata.get('trace_id') if isinstance(metadata, Mapping) else getattr(metadata, 'trace_id', None)
    return value.lower() if isinstance(value, str) else None


def case_from_trace(trace: TraceLike, *, name: str | None = None) -> Case[Any, Any, Any]:
    """The case a trace stands for without a dataset: named after its root's `case_name` (else its file),
    inputs from its agent span, its trace id in the metadata."""
    if name is None:
        roots = trace.tree.roots
        name = next((v for r in roots if isinstance(v := r.attributes.get(CASE_NAME_ATTRIBUTE), str)), trace.name)
    return Case(name=name, inputs=trace_inputs(trace.tree), metadata={'trace_id': trace.trace_id})


def span_tree_metrics(tree: SpanTree) -> dict[str, int | float]:
    """The metrics pydantic-evals counts from a live case's spans: `requests`, tokens, `cost`.

    Same rules as pydantic-evals' own (model-request spans with `gen_ai.request.model`; `chat`
    operations count as requests; numeric `gen_ai.usage.*` and `operation.cost` are summed), so a
    captured case reports what the live case did.
    """
    metrics: dict[str, int | float] = {}
    for node in tree:
        attributes = node.attributes
        if 'gen_ai.request.model' not in attributes:
            continue
        for key, value in attributes.items():
            if key == 'gen_ai.operation.name' and value == 'chat':
                metrics['requests'] = metrics.get('requests', 0) + 1
            elif not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            elif key == 'operation.cost':
                metrics['cost'] = metrics.get('cost', 0) + value
            elif key.startswith('gen_ai.usage.details.'):
                name = key.removeprefix('gen_ai.usage.details.')
                metrics[name] = metrics.get(name, 0) + value
            elif key.startswith('gen_ai.usage.'):
                name = key.removeprefix('gen_ai.usage.')
                metrics[name] = metrics.get(name, 0) + value
    return metrics


async def score_case(
    case: Case[Any, Any, Any],
    trace: TraceLike | None,
    evaluators: Sequence[Evaluator[Any, Any, Any]],
    *,
    why: str = '',
) -> ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any]:
    """Run `evaluators` (and the case's own) on the case's trace, as pydantic-evals runs them on a task's run.

    The output is read from the trace; the task duration is the recorded run's (its root spans'
    extent). A case without a trace is a `ReportCaseFailure` whose message says which rules were tried.
    """
    name = case.name or 'case'
    if trace is None:
        message = f'{MissingTraceError.__name__}: no trace found for case {name!r}: {why}'
        return ReportCaseFailure(
            name=name,
            inputs=case.inputs,
            metadata=case.metadata,
            expected_output=case.expected_output,
            error_message=message,
            error_stacktrace='',
        )
    tree = trace.tree
    roots = tree.roots
    duration = (
        (max(r.end_timestamp for r in roots) - min(r.start_timestamp for r in roots)).total_seconds() if roots else 0.0
    )
    ctx: EvaluatorContext[Any, Any, Any] = EvaluatorContext(
        name=name,
        inputs=case.inputs,
        metadata=case.metadata,
        expected_output=case.expected_output,
        output=trace_output(tree),
        duration=duration,
        _span_tree=tree,
        attributes={},
        metrics=span_tree_metrics(tree),
    )
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(_run_evaluator(e, ctx) for e in [*evaluators, *case.evaluators]))
    results = [r for outcome in outcomes if isinstance(outcome, list) for r in outcome]
    assertions, scores, labels = _grouped(results)
    return ReportCase(
        name=name,
        inputs=case.inputs,
        metadata=case.metadata,
        expected_output=case.expected_output,
        output=ctx.output,
        metrics=ctx.metrics,
        attributes={},
        scores=scores,
        labels=labels,
        assertions=assertions,
        task_duration=duration,
        total_duration=duration + time.perf_counter() - started,
        trace_id=trace.trace_id,
        span_id=f'{roots[0].span_id:016x}' if roots else None,
        evaluator_failures=[o for o in outcomes if isinstance(o, EvaluatorFailure)],
    )


async def _run_evaluator(
    evaluator: Evaluator[Any, Any, Any], ctx: EvaluatorContext[Any, Any, Any]
) -> list[EvaluationResult[Any]] | EvaluatorFailure:
    """One evaluator's results, or its failure: what pydantic-evals records for it on a live case."""
    name = evaluator.get_default_evaluation_name()
    source = evaluator.as_spec()
    version = evaluator.get_evaluator_version()
    try:
        output = await evaluator.evaluate_async(ctx)
        named = output if isinstance(output, Mapping) else {name: output}
        results: list[EvaluationResult[Any]] = []
        for key, item in named.items():
            value, reason = (item.value, item.reason) if isinstance(item, EvaluationReason) else (item, None)
            if not isinstance(value, (bool, int, float, str)):
                raise ValueError(f'{evaluator!r}.evaluate returned a value of an invalid type: {output!r}.')
            results.append(
                EvaluationResult(name=key, value=value, reason=reason, source=source, evaluator_version=version)
            )
        return results
    except Exception as e:
        return EvaluatorFailure(
            name=name,
            error_message=f'{type(e).__name__}: {e}',
            error_stacktrace=traceback.format_exc(),
            source=source,
            error_type=type(e).__name__,
            evaluator_version=version,
        )


def _grouped(
    results: list[EvaluationResult[Any]],
) -> tuple[dict[str, EvaluationResult[Any]], dict[str, EvaluationResult[Any]], dict[str, EvaluationResult[Any]]]:
    """Assertions (bool), scores (numbers), labels (str); a repeated name gets `_2`, `_3`, ... as in pydantic-evals."""
    assertions: dict[str, EvaluationResult[Any]] = {}
    scores: dict[str, EvaluationResult[Any]] = {}
    labels: dict[str, EvaluationResult[Any]] = {}
    seen: set[str] = set()
    for result in results:
        name = result.name
        if name in seen:
            suffix = 2
            while f'{name}_{suffix}' in seen:
                suffix += 1
            name = f'{name}_{suffix}'
        seen.add(name)
        if isinstance(result.value, bool):
            assertions[name] = result
        elif isinstance(result.value, (int, float)):
            scores[name] = result
        else:
            labels[name] = result
    return assertions, scores, labels


async def scored_cases(
    traces: Iterable[TraceLike],
    *,
    dataset: Dataset[Any, Any, Any] | None = None,
    evaluators: Sequence[Evaluator[Any, Any, Any]] = (),
    on_trace: Callable[[TraceLike], None] | None = None,
    unmatched: list[str] | None = None,
) -> AsyncIterator[ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any]]:
    """Each case's result as soon as it is scored; what `evaluate_traces` collects.

    `on_trace` is called with every trace as it is loaded; `unmatched`, when given, receives the
    names of traces no case of the dataset matched.
    """
    if dataset is None:
        seen: dict[str, int] = {}
        for trace in traces:
            if on_trace is not None:
                on_trace(trace)
            case = case_from_trace(trace)
            seen[case.name or ''] = seen.get(case.name or '', 0) + 1
            if seen[case.name or ''] > 1:
                case = case_from_trace(trace, name=f'{case.name} ({trace.trace_id[:8]})')
            yield await score_case(case, trace, evaluators)
        return
    matcher = TraceMatcher(dataset.cases)
    for trace in traces:
        if on_trace is not None:
            on_trace(trace)
        matcher.offer(trace)
    if unmatched is not None:
        unmatched.extend(matcher.unmatched)
    for match in matcher.matches():
        yield await score_case(match.case, match.trace, [*dataset.evaluators, *evaluators], why=match.why)


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
    Without one, every trace is a case named after its root's `case_name` or its file, with inputs
    and output read from the trace. Raises `AmbiguousTraceError` when a case matches two traces.
    """
    cases: list[ReportCase[Any, Any, Any]] = []
    failures: list[ReportCaseFailure[Any, Any, Any]] = []
    async for result in scored_cases(traces, dataset=dataset, evaluators=evaluators):
        if isinstance(result, ReportCase):
            cases.append(result)
        else:
            failures.append(result)
    report_name = name or (dataset.name if dataset is not None and dataset.name else None) or 'traces'
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
