"""Run a pydantic-evals Dataset's evaluators over captured traces instead of calling a task.

Each case is scored on its trace's `SpanTree` directly: the `EvaluatorContext` holds the loaded
tree, the output read from the trace, the duration of the recorded run and the metrics pydantic-evals
would have counted from the same spans, so every evaluator (ours, the built-ins, `HasMatchingSpan`,
users' own) sees what it sees on a live case. Nothing is re-run or re-emitted, and the result is a
regular pydantic-evals `EvaluationReport`.

Which trace a case is scored on is decided in `matching`, and so is which traces make one
conversation (`group_by='conversation'`): a conversation is scored as one case, its output the last
turn's, its metrics summed over the turns, its duration the sum of the turns' (the time the agent
worked, not the hours a user may take between turns).
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

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

from ..trajectory.run_io import trace_output
from ..trajectory.run_metrics import span_tree_metrics
from .matching import TraceLike, TraceMatcher, case_from_trace, group_conversations, without_side_traces

GroupBy = Literal['conversation']


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
        # Worded like the exception pydantic-evals would report, so the report reads the same.
        message = f'MissingTraceError: no trace found for case {name!r}: {why}'
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
    duration = _recorded_duration(tree)
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


def _recorded_duration(tree: SpanTree) -> float:
    """Seconds the recorded run took: its root spans' extent, summed per trace (a conversation's turns)."""
    extents: dict[int, tuple[datetime, datetime]] = {}
    for root in tree.roots:
        start, end = extents.get(root.trace_id, (root.start_timestamp, root.end_timestamp))
        extents[root.trace_id] = (min(start, root.start_timestamp), max(end, root.end_timestamp))
    return sum((end - start).total_seconds() for start, end in extents.values())


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
    group_by: GroupBy | None = None,
    on_scored: Callable[[ReportCase[Any, Any, Any], TraceLike], None] | None = None,
) -> AsyncIterator[ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any]]:
    """Each case's result as soon as it is scored; what `evaluate_traces` collects.

    `on_trace` is called with every trace as it is loaded; `unmatched`, when given, receives the
    names of traces no case of the dataset matched. `group_by='conversation'` scores the traces of
    one conversation as one case (see `matching.group_conversations`). `on_scored` is called with
    each scored case and its trace before the case is yielded, while the trace is still at hand
    (the report's timelines are drawn from it).
    """
    traces = without_side_traces(_announced(traces, on_trace))
    if group_by == 'conversation':
        traces = group_conversations(traces)
    if dataset is None:
        seen: dict[str, int] = {}
        for trace in traces:
            case = case_from_trace(trace)
            seen[case.name or ''] = seen.get(case.name or '', 0) + 1
            if seen[case.name or ''] > 1:
                case = case_from_trace(trace, name=f'{case.name} ({trace.trace_id[:8]})')
            yield _announce_scored(await score_case(case, trace, evaluators), trace, on_scored)
        return
    matcher = TraceMatcher(dataset.cases)
    for trace in traces:
        matcher.offer(trace)
    if unmatched is not None:
        unmatched.extend(matcher.unmatched)
    for match in matcher.matches():
        result = await score_case(match.case, match.trace, [*dataset.evaluators, *evaluators], why=match.why)
        yield _announce_scored(result, match.trace, on_scored)


def _announce_scored(
    result: ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any],
    trace: TraceLike | None,
    on_scored: Callable[[ReportCase[Any, Any, Any], TraceLike], None] | None,
) -> ReportCase[Any, Any, Any] | ReportCaseFailure[Any, Any, Any]:
    if on_scored is not None and trace is not None and isinstance(result, ReportCase):
        on_scored(result, trace)
    return result


def _announced(traces: Iterable[TraceLike], on_trace: Callable[[TraceLike], None] | None) -> Iterator[TraceLike]:
    for trace in traces:
        if on_trace is not None:
            on_trace(trace)
        yield trace


async def evaluate_traces(
    traces: Iterable[TraceLike],
    *,
    dataset: Dataset[Any, Any, Any] | None = None,
    evaluators: Sequence[Evaluator[Any, Any, Any]] = (),
    name: str | None = None,
    group_by: GroupBy | None = None,
) -> EvaluationReport[Any, Any, Any]:
    """Score `traces` with a dataset's evaluators (plus `evaluators`), or with `evaluators` alone.

    With a dataset, each case is paired with its trace (see the module docstring); the case's
    inputs, metadata and expected output come from the dataset, its output from the trace.
    Without one, every trace is a case named after its root's `case_name` or its file, with inputs
    and output read from the trace. Raises `AmbiguousTraceError` when a case matches two traces.
    `group_by='conversation'` makes the traces of one conversation one trace (and case).
    """
    cases: list[ReportCase[Any, Any, Any]] = []
    failures: list[ReportCaseFailure[Any, Any, Any]] = []
    async for result in scored_cases(traces, dataset=dataset, evaluators=evaluators, group_by=group_by):
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
    group_by: GroupBy | None = None,
) -> EvaluationReport[Any, Any, Any]:
    """`evaluate_traces` for code that is not async (not callable inside a running event loop)."""
    return asyncio.run(evaluate_traces(traces, dataset=dataset, evaluators=evaluators, name=name, group_by=group_by))
