"""Every deterministic metric as a plain function: no `Dataset`, no `EvaluatorContext`, no spans.

For notebooks and other frameworks. Each function takes what the agent did, as a `Trajectory` (from
spans or from a conversation), a list of tool names, or a list of `{"name": ..., "args": {...}}`
dicts, and returns a `MetricResult` with the value and reason the evaluator of the same name reports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..trajectory.records import ToolCall
from ..trajectory.trajectory import Trajectory
from .call_matching import CallView, accuracy, compare, counts, listing, near_misses, sections
from .sequences import F1Score, diff_arguments, lcs_score, multiset_score, short_repr
from .turns import score_turns

Calls = Trajectory | Sequence[str] | Sequence[Mapping[str, Any]]
"""What the agent did: a `Trajectory`, tool names in call order, or `{"name", "args"}` dicts in call order."""


@dataclass(frozen=True)
class MetricResult:
    """A metric's value (`bool`, or a `float` in [0, 1]) and the reason that explains it."""

    value: bool | float
    reason: str


# -- inputs ------------------------------------------------------------------------------------------


def scope_suffix(agent: str | None, include_subagents: bool) -> str:
    if agent is None:
        return '' if include_subagents else ' (top-level agent only)'
    return f' (agent {agent!r}{"" if include_subagents else ", sub-agents excluded"})'


def missing_agent(trajectory: Trajectory, agent: str | None) -> str | None:
    """Why a scope naming `agent` has nothing to score, or `None` when the agent is in the trajectory."""
    if agent is None or trajectory.has_agent(agent):
        return None
    return f'agent {agent!r} not found in the trace; agents seen: {trajectory.agent_names!r}'


@dataclass(frozen=True)
class NothingToScore:
    """Why a metric has no calls to score (the scoped agent is not in the trajectory): its failing reason."""

    reason: str


def _observed(
    actual: Calls,
    include_failed: bool,
    agent: str | None,
    include_subagents: bool,
) -> list[CallView] | NothingToScore:
    """The calls to score, or why there are none."""
    if isinstance(actual, Trajectory):
        if (missing := missing_agent(actual, agent)) is not None:
            return NothingToScore(missing)
        scope: dict[str, Any] = {
            'include_failed': include_failed,
            'agent': agent,
            'include_subagents': include_subagents,
        }
        return [_view(c) for c in actual.calls(**scope)]
    return _given_calls(actual)


def _given_calls(actual: Sequence[str] | Sequence[Mapping[str, Any]]) -> list[CallView]:
    """Calls passed as `{"name", "args"}` dicts (no agents: nothing is ever missing)."""
    if isinstance(actual, (str, bytes)) or not isinstance(actual, Sequence):
        raise TypeError(f'expected a Trajectory or a list of calls, got {type(actual).__name__}')
    if any(isinstance(item, str) for item in actual):
        raise TypeError('this metric compares arguments: pass a Trajectory or {"name", "args"} dicts, not tool names')
    return [_parse_call(item, i) for i, item in enumerate(actual)]


def _observed_names(
    actual: Calls, include_failed: bool, agent: str | None, include_subagents: bool
) -> list[str] | NothingToScore:
    """The names of the calls to score (no records made), or why there are none."""
    if isinstance(actual, Trajectory):
        if (missing := missing_agent(actual, agent)) is not None:
            return NothingToScore(missing)
        return actual.call_names(include_failed=include_failed, agent=agent, include_subagents=include_subagents)
    return _given_names(actual)


def _given_names(actual: Sequence[str] | Sequence[Mapping[str, Any]]) -> list[str]:
    """Tool names, or the names of `{"name", "args"}` dicts, passed in call order."""
    if isinstance(actual, (str, bytes)) or not isinstance(actual, Sequence):
        raise TypeError(f'expected a Trajectory or a list of calls, got {type(actual).__name__}')
    return [item if isinstance(item, str) else _parse_call(item, i).name for i, item in enumerate(actual)]


def _view(call: ToolCall) -> CallView:
    return CallView(call.name, call.arguments, call.arguments_problem)


def _parse_call(item: object, index: int) -> CallView:
    """A `{"name": str, "args": dict}` mapping, or any object with those attributes (ragas' `ToolCall`)."""
    if isinstance(item, Mapping):
        name, args = item.get('name'), item.get('args')
    else:
        name, args = getattr(item, 'name', None), getattr(item, 'args', None)
    if not isinstance(name, str):
        raise ValueError(f'call {index}: expected a {{"name": str, "args": dict}} mapping, got {item!r}')
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ValueError(f'call {index} ({name!r}): args must be a mapping, got {args!r}')
    return CallView(name, dict(args))


def parse_reference_calls(calls: Sequence[Mapping[str, Any]]) -> list[CallView]:
    """Validate reference calls; `ValueError` naming the bad item (evaluators call this at construction)."""
    if isinstance(calls, (str, bytes, Mapping)) or not isinstance(calls, Sequence):
        raise ValueError(f'reference_tool_calls must be a list of {{"name", "args"}} mappings, got {calls!r}')
    return [_parse_call(item, i) for i, item in enumerate(calls)]


# -- name-based metrics (the pydantic-evals built-ins' semantics) -------------------------------------


def tool_correctness(
    actual: Calls,
    expected_tools: Sequence[str],
    *,
    allow_extra: bool = False,
    include_failed: bool = False,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when the called tool names equal `expected_tools` as a multiset (see `ToolCorrectness`)."""
    called = _observed_names(actual, include_failed, agent, include_subagents)
    if isinstance(called, NothingToScore):
        return MetricResult(False, called.reason)
    want, got = Counter(expected_tools), Counter(called)
    missing, extra = want - got, got - want
    scope = scope_suffix(agent, include_subagents)
    problems: list[str] = []
    if missing:
        problems.append(f'missing tools: {counts(missing)}')
    if extra and not allow_extra:
        problems.append(f'unexpected tools: {counts(extra)}')
    if problems:
        return MetricResult(False, '; '.join(problems) + scope)
    summary = counts(got) if called else 'no tools'
    return MetricResult(True, f'called {summary}{scope}')


def trajectory_match(
    actual: Calls,
    expected_trajectory: Sequence[str] | Sequence[Sequence[str]],
    *,
    order: Literal['exact', 'in_order', 'any_order'] = 'in_order',
    include_failed: bool = False,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """F1 of the tool-name sequence against `expected_trajectory` (see `TrajectoryMatch`).

    A list of name lists is one expected trajectory per turn (`actual` must then be a `Trajectory`):
    the value is the mean of the turns' scores.
    """
    if expected_trajectory and all(isinstance(turn, (list, tuple)) for turn in expected_trajectory):
        if not isinstance(actual, Trajectory):
            raise TypeError('expected trajectories per turn need a Trajectory, not a list of calls')
        if (missing := missing_agent(actual, agent)) is not None:
            return MetricResult(0.0, missing)
        options: dict[str, Any] = {'order': order, 'include_failed': include_failed, 'agent': agent}

        def score_turn(turn: Trajectory, expected: Sequence[str]) -> MetricResult:
            if agent is not None and not turn.has_agent(agent):
                return trajectory_match([], expected, order=order)  # the agent sat this turn out
            return trajectory_match(turn, expected, include_subagents=include_subagents, **options)

        mean, reason, _ = score_turns(actual, expected_trajectory, score_turn)
        return MetricResult(mean, reason + scope_suffix(agent, include_subagents))
    called = _observed_names(actual, include_failed, agent, include_subagents)
    if isinstance(called, NothingToScore):
        return MetricResult(0.0, called.reason)
    expected = list(expected_trajectory)
    scope = scope_suffix(agent, include_subagents)
    if order == 'exact':
        if called == expected:
            return MetricResult(1.0, f'actual trajectory matches expected: {called!r}{scope}')
        return MetricResult(0.0, f'actual trajectory {called!r} does not equal expected {expected!r}{scope}')
    if not called and not expected:
        return MetricResult(1.0, f'both actual and expected trajectories are empty{scope}')
    if order == 'any_order':
        result, label = multiset_score(expected, called), 'multiset overlap'
    else:
        result, label = lcs_score(expected, called), 'LCS'
    return MetricResult(result.value, f'{result.describe(label)} (expected: {expected!r}, actual: {called!r}){scope}')


def max_tool_calls(
    actual: Calls,
    max_calls: int,
    *,
    include_failed: bool = True,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when at most `max_calls` tools were called, failed attempts included (see `MaxToolCalls`)."""
    if isinstance(actual, Trajectory):
        if (missing := missing_agent(actual, agent)) is not None:
            return MetricResult(False, missing)
        count = actual.call_count(include_failed=include_failed, agent=agent, include_subagents=include_subagents)
    else:
        count = len(_given_names(actual))
    reason = f'{count} tool call(s), budget={max_calls}{scope_suffix(agent, include_subagents)}'
    return MetricResult(count <= max_calls, reason)


def max_model_requests(
    trajectory: Trajectory,
    max_requests: int,
    *,
    agent: str | None = None,
    include_subagents: bool = True,
    source: str = 'span tree',
) -> MetricResult:
    """`True` when at most `max_requests` model requests were made (see `MaxModelRequests`).

    `source` names where the requests were counted, for the reason.
    """
    if (missing := missing_agent(trajectory, agent)) is not None:
        return MetricResult(False, missing)
    count = trajectory.request_count(agent=agent, include_subagents=include_subagents)
    return MetricResult(count <= max_requests, budget_reason(count, source, max_requests, agent, include_subagents))


def budget_reason(count: int, source: str, budget: int, agent: str | None, include_subagents: bool) -> str:
    """The `MaxModelRequests` reason, shared with the evaluator's metric-based path."""
    return f'{count} model request(s) (from {source}), budget={budget}{scope_suffix(agent, include_subagents)}'


def argument_correctness(
    actual: Calls,
    tool_name: str,
    expected_arguments: Mapping[str, Any],
    *,
    match_mode: Literal['exact', 'subset'] = 'subset',
    occurrence: Literal['first', 'last'] | int = 'first',
    include_failed: bool = False,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when one call of `tool_name` got `expected_arguments` (see `ArgumentCorrectness`)."""
    matches: Sequence[ToolCall] | Sequence[CallView]
    if isinstance(actual, Trajectory):
        if (missing := missing_agent(actual, agent)) is not None:
            return MetricResult(False, missing)
        # A lazy sequence: picking the last of 200 calls makes (and parses) one record.
        matches = actual.calls(
            include_failed=include_failed, agent=agent, include_subagents=include_subagents, name=tool_name
        )
    else:
        matches = [call for call in _given_calls(actual) if call.name == tool_name]
    scope = scope_suffix(agent, include_subagents)
    if not matches:
        return MetricResult(False, f'No calls to tool {tool_name!r} were recorded.{scope}')
    picked: ToolCall | CallView | None = None
    if occurrence == 'first':
        picked = matches[0]
    elif occurrence == 'last':
        picked = matches[-1]
    elif isinstance(occurrence, int) and 0 <= occurrence < len(matches):
        picked = matches[occurrence]
    call = _view(picked) if isinstance(picked, ToolCall) else picked
    if call is None:
        return MetricResult(
            False,
            f'Tool {tool_name!r} was called {len(matches)} time(s); occurrence={occurrence!r} does not select any'
            " of them (must be 'first', 'last', or a 0-based index; negative ints are not supported)." + scope,
        )
    if call.args is None:
        return MetricResult(False, f'Tool {tool_name!r} arguments {call.problem}{scope}')
    problems = diff_arguments(call.args, expected_arguments, match_mode)
    if problems:
        return MetricResult(False, f'Tool {tool_name!r} argument mismatch: {"; ".join(problems)}{scope}')
    return MetricResult(True, f'Tool {tool_name!r} called with {short_repr(call.args)}{scope}')


# -- ragas' argument-aware metrics ---------------------------------------------------------------------


def tool_call_accuracy(
    actual: Calls,
    reference_tool_calls: Sequence[Mapping[str, Any]],
    *,
    strict_order: bool = True,
    include_failed: bool = False,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """ragas' ToolCallAccuracy: the calls' argument accuracy when their names line up with the reference, else 0.

    With `strict_order` the name sequences must be equal; without, equal after sorting both lists (by
    name, then argument names and values), which also decides which calls are compared. Each compared
    pair scores the share of the reference call's arguments it got right (1.0 when neither has any,
    0.0 when only the call has some); the sum is divided by the number of reference calls. Both lists
    empty scores 1.0, one empty 0.0. Values compare as `canonical_json`.
    """
    reference = parse_reference_calls(reference_tool_calls)
    observed = _observed(actual, include_failed, agent, include_subagents)
    if isinstance(observed, NothingToScore):
        return MetricResult(0.0, observed.reason)
    value, reason = accuracy(observed, reference, strict_order)
    return MetricResult(value, reason + scope_suffix(agent, include_subagents))


def tool_call_f1(
    actual: Calls,
    reference_tool_calls: Sequence[Mapping[str, Any]],
    *,
    include_failed: bool = False,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """ragas' ToolCallF1 on multisets: a call matches a reference call with the same name and arguments.

    Precision = matched / calls, recall = matched / reference calls, the value their F1. A call made
    twice must be expected twice (ragas collapses repeats); both lists empty scores 1.0 (ragas: 0.0).
    """
    reference = parse_reference_calls(reference_tool_calls)
    observed = _observed(actual, include_failed, agent, include_subagents)
    if isinstance(observed, NothingToScore):
        return MetricResult(0.0, observed.reason)
    scope = scope_suffix(agent, include_subagents)
    if not observed and not reference:
        return MetricResult(1.0, f'both reference and actual calls are empty{scope}')
    matched, missing, extra = compare(observed, reference)
    score = F1Score(len(matched), len(observed), len(reference))
    reason = score.describe('matched calls') + sections(
        ('matched', listing(matched)),
        ('missing', listing(missing)),
        ('extra', listing(extra)),
        ('argument mismatches', '; '.join(near_misses(missing, extra))),
    )
    return MetricResult(score.value, reason + scope)
