"""What a report shows of a case's trace: its timeline, and each expectation aligned with what happened.

The report document is built from a pydantic-evals `EvaluationReport`, which keeps no spans; the
caller that still has a case's tree (the CLI as it scores, or `case_trees` over captured spans)
asks `case_details` for it, so the document carries what the HTML view draws and a report read
back from JSON draws the same.

Alignments are rebuilt from the results' evaluator specs: every evaluator with an expected
trajectory or expected arguments (`ToolCallMatch`, `TrajectoryMatch`, `ToolCallAccuracy`,
`ToolCallF1`, `ArgumentCorrectness`) is made again
from its spec and asked for its pairing, on the trajectory it scored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from pydantic_evals.evaluators import EvaluationResult
from pydantic_evals.otel.span_tree import SpanTree
from pydantic_evals.reporting import ReportCase

from ..conventions.pydantic_evals import TASK_SPAN
from ..conversations import trajectory_from_messages
from ..evaluators._base import TrajectoryEvaluator
from ..evaluators.order import TrajectoryMatch
from ..evaluators.reference_calls import ToolCallAccuracy, ToolCallF1
from ..evaluators.registry import EVALUATOR_TYPES
from ..evaluators.tool_call_match import ToolCallMatch
from ..evaluators.tools import ArgumentCorrectness
from ..scoring.call_matching import CallView, canonical_json
from ..scoring.sequences import short_repr
from ..scoring.tool_call_match import Expected, ToolCallMatchResult, parse_expected, show
from ..trajectory.extract import extract_trajectory
from ..trajectory.records import ToolCall
from ..trajectory.trajectory import Trajectory
from .document import AgentSpan, AlignedCall, Alignment, CallSpan, CaseDetails, RequestSpan, Timeline, known_id

TEXT_LIMIT = 2000
"""Characters kept of a call's arguments or result: enough to read, bounded for 10,000 cases."""
TIMELINE_LIMIT = 500
"""Calls and requests kept per case (each); a longer run notes how many it left out."""
ALIGNMENT_LIMIT = 500
"""Rows kept per alignment."""


def case_details(tree: SpanTree, case: ReportCase[Any, Any, Any]) -> CaseDetails:
    """The timeline of `tree` (the case's spans) and the alignment of each expectation in the case's results."""
    trajectory = extract_trajectory(tree)
    agents = trajectory.agents
    span_id = f'{agents[0].span_id:016x}' if agents else known_id(case.span_id)
    return CaseDetails(
        known_id(case.trace_id), span_id, timeline(tree, trajectory), alignments(case, trajectory), trajectory.account
    )


def case_trees(spans: Iterable[ReadableSpan]) -> Callable[[ReportCase[Any, Any, Any]], SpanTree | None]:
    """For in-process reports: each case's spans, found beneath its pydantic-evals case span by `span_id`.

    `spans` are what `capture()` recorded around `Dataset.evaluate`. pydantic-evals records its case
    span only when Logfire is configured (`logfire.configure(send_to_logfire=False)` is enough);
    otherwise the case has no span id and gets `None`. Only the task's spans are taken, never the
    evaluators' (an LLM judge's model requests are not the agent's).
    """
    children: dict[tuple[int, int], list[ReadableSpan]] = {}
    for span in spans:
        context, parent = span.context, span.parent
        if context is not None and parent is not None:
            children.setdefault((context.trace_id, parent.span_id), []).append(span)

    def tree_of(case: ReportCase[Any, Any, Any]) -> SpanTree | None:
        trace_id, span_id = _number(case.trace_id), _number(case.span_id)
        if trace_id is None or span_id is None:
            return None
        below = children.get((trace_id, span_id), [])
        tasks = [s for s in below if s.name == TASK_SPAN and s.context is not None]
        stack = [s.context.span_id for s in tasks if s.context is not None] if tasks else [span_id]
        found: list[ReadableSpan] = []
        while stack:
            for child in children.get((trace_id, stack.pop()), ()):
                found.append(child)
                if child.context is not None:
                    stack.append(child.context.span_id)
        if not found:
            return None
        tree = SpanTree()
        tree.add_readable_spans(found)
        return tree

    return tree_of


def _number(hex_id: str | None) -> int | None:
    if not hex_id:
        return None
    try:
        number = int(hex_id, 16)
    except ValueError:
        return None
    return number or None


# -- the timeline --------------------------------------------------------------------------------------


def timeline(tree: SpanTree, trajectory: Trajectory) -> Timeline:
    """Agents, calls and requests with their times as seconds since the trace started."""
    starts = [root.start_timestamp for root in tree.roots]
    if not starts:
        return Timeline()
    origin = min(starts)

    def at(moment: datetime) -> float:
        return round((moment - origin).total_seconds(), 6)

    calls, requests = trajectory.tool_calls, trajectory.model_requests
    return Timeline(
        agents=[
            AgentSpan(a.name, list(a.path), at(a.start), at(a.end), f'{a.span_id:016x}') for a in trajectory.agents
        ],
        calls=[
            CallSpan(
                name=c.name,
                status=c.status,
                agent_path=list(c.agent_path),
                start=at(c.start),
                end=at(c.end),
                arguments=_cut(c.raw_arguments),
                result=_cut(c.result),
                failure_stage=c.failure_stage,
                output_function=c.is_output_function,
            )
            for c in calls[:TIMELINE_LIMIT]
        ],
        requests=[
            RequestSpan(
                model=r.model,
                agent_path=list(r.agent_path),
                start=at(r.start),
                end=at(r.end),
                input_tokens=r.input_tokens,
                output_tokens=r.output_tokens,
                cost=r.cost,
            )
            for r in requests[:TIMELINE_LIMIT]
        ],
        omitted=max(0, len(calls) - TIMELINE_LIMIT) + max(0, len(requests) - TIMELINE_LIMIT),
    )


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_LIMIT:
        return text
    return f'{text[:TEXT_LIMIT]}... ({len(text) - TEXT_LIMIT} more characters)'


# -- alignments ----------------------------------------------------------------------------------------

_TYPES: dict[str, type[Any]] = {t.get_serialization_name(): t for t in EVALUATOR_TYPES}
_ALIGNED = (ToolCallMatch, TrajectoryMatch, ToolCallAccuracy, ToolCallF1, ArgumentCorrectness)
_ALIGNED_NAMES = frozenset(t.get_serialization_name() for t in _ALIGNED)


def alignments(case: ReportCase[Any, Any, Any], trajectory: Trajectory) -> list[Alignment]:
    """One alignment (or one per turn) for each evaluator of the case that has an expected trajectory."""
    found: list[Alignment] = []
    seen: set[int] = set()
    results: list[tuple[str, EvaluationResult[Any]]] = [*case.scores.items(), *case.assertions.items()]
    for name, result in results:
        source = result.source
        if id(source) in seen or source.name not in _ALIGNED_NAMES:
            continue
        seen.add(id(source))
        evaluator = _rebuilt(source.name, source.arguments)
        if evaluator is None:
            continue
        scored = _scored_trajectory(evaluator, trajectory, case)
        if scored is not None:
            found.extend(_aligned(evaluator, scored, name))
    return found


def _rebuilt(name: str, arguments: tuple[Any] | Mapping[str, Any] | None) -> TrajectoryEvaluator | None:
    """The evaluator again from its spec; `None` when the spec no longer builds one (another version wrote it)."""
    cls = _TYPES[name]  # one of `_ALIGNED_NAMES`
    try:
        if arguments is None:
            evaluator = cls()
        elif isinstance(arguments, tuple):
            evaluator = cls(*arguments)
        else:
            evaluator = cls(**arguments)
    except Exception:  # a spec another version wrote: no alignment, the result still shows
        return None
    return evaluator if isinstance(evaluator, _ALIGNED) else None


def _scored_trajectory(
    evaluator: TrajectoryEvaluator, trajectory: Trajectory, case: ReportCase[Any, Any, Any]
) -> Trajectory | None:
    """The trajectory the evaluator scored: the spans', or the conversation it was told to read."""
    if evaluator.conversation is None:
        return trajectory
    messages = getattr(case, evaluator.conversation)
    if callable(getattr(messages, 'all_messages', None)):
        messages = messages.all_messages()
    try:
        return trajectory_from_messages(messages, agent=evaluator.agent or 'main')
    except (ValueError, TypeError):
        return None


def _aligned(evaluator: TrajectoryEvaluator, trajectory: Trajectory, result: str) -> list[Alignment]:
    label = evaluator.get_serialization_name()
    if isinstance(evaluator, ToolCallMatch):
        aligned = _from_match(evaluator.match(trajectory), label, result)
        per_turn = parse_expected(evaluator.expected_calls)
        if isinstance(per_turn, tuple):
            aligned.extend(_unpaired_turns(evaluator, trajectory, per_turn, len(aligned), label, result))
        return aligned
    if isinstance(evaluator, (ToolCallAccuracy, ToolCallF1)):
        ordered = isinstance(evaluator, ToolCallAccuracy) and evaluator.strict_order
        reference = ToolCallMatch(
            evaluator.reference_tool_calls,
            mode='in_order' if ordered else 'unordered',
            include_failed=evaluator.include_failed,
            agent=evaluator.agent,
            include_subagents=evaluator.include_subagents,
        )
        return _from_match(reference.match(trajectory), label, result)
    if isinstance(evaluator, ArgumentCorrectness):
        return [Alignment(result, label, [_argument_row(evaluator, trajectory)])]
    assert isinstance(evaluator, TrajectoryMatch)
    names = trajectory.call_names(
        include_failed=evaluator.include_failed, agent=evaluator.agent, include_subagents=evaluator.include_subagents
    )
    expected = evaluator.expected_trajectory
    if expected and all(isinstance(turn, list) for turn in expected):
        turns = [
            t.call_names(
                include_failed=evaluator.include_failed,
                agent=evaluator.agent,
                include_subagents=evaluator.include_subagents,
            )
            for t in trajectory.turns()
        ]
        return [
            Alignment(result, label, _names_rows(list(want), got, evaluator.order), turn=number)
            for number, (want, got) in enumerate(_zip_longest(expected, turns), start=1)
        ]
    return [Alignment(result, label, _names_rows([str(n) for n in expected], names, evaluator.order))]


def _argument_row(evaluator: ArgumentCorrectness, trajectory: Trajectory) -> AlignedCall:
    """The checked call (the `occurrence` of the tool) against the expected arguments, key by key."""
    want = CallView(evaluator.tool_name, evaluator.expected_arguments)
    calls = trajectory.calls(
        include_failed=evaluator.include_failed,
        agent=evaluator.agent,
        include_subagents=evaluator.include_subagents,
        name=evaluator.tool_name,
    )
    occurrence = evaluator.occurrence
    index = 0 if occurrence == 'first' else -1 if occurrence == 'last' else int(occurrence)
    if not calls or not -len(calls) <= index < len(calls):
        return AlignedCall('missing', expected=show(want))
    call = calls[index]
    got = _view(call)
    if call.arguments is None:
        return AlignedCall('mismatch', show(want), show(got), differences=[f'arguments {call.arguments_problem}'])
    expected = evaluator.expected_arguments
    keys = [k for k in sorted(expected) if k not in call.arguments or call.arguments[k] != expected[k]]
    if evaluator.match_mode == 'exact':
        keys += sorted(k for k in call.arguments if k not in evaluator.expected_arguments)
    differences = [
        f'key {k!r}: expected {_shown(evaluator.expected_arguments, k)}, got {_shown(call.arguments, k)}' for k in keys
    ]
    return AlignedCall('mismatch' if keys else 'matched', show(want), show(got), keys, differences)


def _view(call: ToolCall) -> CallView:
    return CallView(call.name, call.arguments, call.arguments_problem)


def _shown(arguments: Mapping[str, Any], key: str) -> str:
    return short_repr(arguments[key]) if key in arguments else '(absent)'


def _zip_longest(expected: Sequence[Any], actual: Sequence[list[str]]) -> list[tuple[list[str], list[str]]]:
    count = max(len(expected), len(actual))
    return [
        ([str(n) for n in expected[i]] if i < len(expected) else [], actual[i] if i < len(actual) else [])
        for i in range(count)
    ]


def _unpaired_turns(
    evaluator: ToolCallMatch,
    trajectory: Trajectory,
    expected: tuple[Expected, ...],
    paired: int,
    label: str,
    result: str,
) -> list[Alignment]:
    """The turns past the shorter side: all missing (expected, never taken) or all extra (taken, not expected)."""
    turns = trajectory.turns()
    found: list[Alignment] = []
    for number in range(paired + 1, max(len(expected), len(turns)) + 1):
        if number <= len(expected):
            rows = [AlignedCall('missing', expected=show(call)) for call in expected[number - 1].calls]
        else:
            calls = turns[number - 1].calls(
                include_failed=evaluator.include_failed,
                agent=evaluator.agent,
                include_subagents=evaluator.include_subagents,
            )
            rows = [AlignedCall('extra', actual=show(_view(call))) for call in calls]
        found.append(Alignment(result, label, rows[:ALIGNMENT_LIMIT], turn=number))
    return found


def _from_match(match: ToolCallMatchResult, label: str, result: str) -> list[Alignment]:
    if match.turns:
        return [Alignment(result, label, _match_rows(turn), turn=number) for number, turn in enumerate(match.turns, 1)]
    return [Alignment(result, label, _match_rows(match))]


def _match_rows(match: ToolCallMatchResult) -> list[AlignedCall]:
    """Rows in the actual calls' order, each missing expectation placed after the row of its predecessor."""
    mismatched = {a: (e, problems) for e, a, problems in match.mismatches}
    wrong_expected = {e for e, _, _ in match.mismatches}
    by_actual: dict[int, tuple[int | None, AlignedCall]] = {}
    for e, a in match.pairs:
        by_actual[a] = (e, AlignedCall('matched', show(match.expected[e]), show(match.actual[a])))
    for a, (e, problems) in mismatched.items():
        want, got = match.expected[e], match.actual[a]
        row = AlignedCall('mismatch', show(want), show(got), _differing_keys(want, got, problems), list(problems))
        by_actual[a] = (e, row)
    for a in match.extra:
        if a not in mismatched:
            by_actual[a] = (None, AlignedCall('extra', actual=show(match.actual[a])))
    ordered = [by_actual[a] for a in sorted(by_actual)]
    rows: list[tuple[int | None, AlignedCall]] = list(ordered)
    for e in sorted(set(match.missing) - wrong_expected):
        place = 0
        for position, (expected_index, _) in enumerate(rows):
            if expected_index is not None and expected_index < e:
                place = position + 1
        rows.insert(place, (e, AlignedCall('missing', expected=show(match.expected[e]))))
    return [row for _, row in rows[:ALIGNMENT_LIMIT]]


def _differing_keys(expected: CallView, actual: CallView, problems: Sequence[str]) -> list[str]:
    """The top-level argument keys whose values differ, among those the problems name (all, if none is named)."""
    want, got = expected.args or {}, actual.args or {}
    differing = [k for k in sorted({*want, *got}) if canonical_json(want.get(k)) != canonical_json(got.get(k))]
    named = [k for k in differing if any(repr(k) in p for p in problems)]
    return named or differing


def _names_rows(expected: list[str], actual: list[str], order: str) -> list[AlignedCall]:
    """Tool names aligned: by position (`exact`), as multisets (`any_order`), else a longest common subsequence."""
    rows: list[AlignedCall] = []
    if order == 'exact':
        for i in range(max(len(expected), len(actual))):
            want = expected[i] if i < len(expected) else None
            got = actual[i] if i < len(actual) else None
            if want == got:
                rows.append(AlignedCall('matched', want, got))
            else:
                if want is not None:
                    rows.append(AlignedCall('missing', expected=want))
                if got is not None:
                    rows.append(AlignedCall('extra', actual=got))
    elif order == 'any_order':
        left = list(expected)
        for got in actual:
            if got in left:
                left.remove(got)
                rows.append(AlignedCall('matched', got, got))
            else:
                rows.append(AlignedCall('extra', actual=got))
        rows.extend(AlignedCall('missing', expected=want) for want in left)
    else:
        rows = _lcs_rows(expected, actual)
    return rows[:ALIGNMENT_LIMIT]


def _lcs_rows(expected: list[str], actual: list[str]) -> list[AlignedCall]:
    """A longest common subsequence as rows; quadratic, so only the first `ALIGNMENT_LIMIT` of each side."""
    a, b = expected[:ALIGNMENT_LIMIT], actual[:ALIGNMENT_LIMIT]
    n, m = len(a), len(b)
    lengths = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            lengths[i][j] = lengths[i + 1][j + 1] + 1 if a[i] == b[j] else max(lengths[i + 1][j], lengths[i][j + 1])
    rows: list[AlignedCall] = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            rows.append(AlignedCall('matched', a[i], b[j]))
            i, j = i + 1, j + 1
        elif lengths[i + 1][j] >= lengths[i][j + 1]:
            rows.append(AlignedCall('missing', expected=a[i]))
            i += 1
        else:
            rows.append(AlignedCall('extra', actual=b[j]))
            j += 1
    rows.extend(AlignedCall('missing', expected=want) for want in a[i:])
    rows.extend(AlignedCall('extra', actual=got) for got in b[j:])
    return rows
