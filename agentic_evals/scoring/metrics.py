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
from .sequences import F1Score, diff_arguments, f1_figures, lcs_length, short_repr
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


_SORTED_UP_TO = 256
"""The most names `NameList.same_multiset` compares sorted (a sort grows faster than a count)."""


class NameList:
    """Tool names in call order, with what reasons and multiset scores read of them made once each.

    The called names of a trajectory are shared through `Trajectory.memo` by every evaluator of the
    case, and an evaluator keeps its expected names: on a small tree, counting and printing the
    same few names again per evaluator costs more than extracting them.
    """

    __slots__ = ('_counts', '_ordered', '_summary', '_text', 'names', 'texts')

    def __init__(self, names: list[str], texts: bool = False) -> None:
        self.names = names
        self.texts = texts  # every name is known to be a `str` (an evaluator's checked names)
        self._text: str | None = None
        self._counts: Counter[str] | None = None
        self._summary: str | None = None
        self._ordered: list[str] | None = None

    def same_multiset(self, called: list[str]) -> bool:
        """Whether `called` holds these names, as often each (of the same length, the caller checks).

        A few names known to be text are compared sorted (one sort in C, cheaper than counting);
        others, or a `called` that does not sort, are counted as `matched` does (linear in them).
        """
        if self.texts and len(called) <= _SORTED_UP_TO:
            if self._ordered is None:
                self._ordered = sorted(self.names)
            try:
                return sorted(called) == self._ordered
            except TypeError:  # not all text: counted below
                pass
        return self.matched(called) == len(self.names)

    @property
    def text(self) -> str:
        """`repr(names)`, as reasons show the list."""
        if self._text is None:
            self._text = repr(self.names)
        return self._text

    @property
    def counts(self) -> Counter[str]:
        if self._counts is None:
            self._counts = Counter(self.names)
        return self._counts

    @property
    def summary(self) -> str:
        """The counts as reasons list them: `'a' (x2), 'b' (x1)`."""
        if self._summary is None:
            self._summary = counts(self.counts)
        return self._summary

    def matched(self, called: list[str]) -> int:
        """The size of the multiset intersection of these names and `called`, counting only these
        (kept by an evaluator, so counted once): each called name takes one of its kind left."""
        remaining = dict(self.counts)
        matched = 0
        for name in called:
            left = remaining.get(name)
            if left:
                remaining[name] = left - 1
                matched += 1
        return matched


def _observed_names(
    actual: Calls, include_failed: bool, agent: str | None, include_subagents: bool
) -> NameList | NothingToScore:
    """The names of the calls to score (no records made), or why there are none."""
    if isinstance(actual, Trajectory):
        if agent is not None and (missing := missing_agent(actual, agent)) is not None:
            return NothingToScore(missing)
        key = (NameList, include_failed, agent, include_subagents)
        found = actual.memoised(key)  # every evaluator but the first finds it: no closure made
        if found is not None:
            return found  # type: ignore[no-any-return]
        return actual.memo(
            key,
            lambda: NameList(
                actual.call_names(include_failed=include_failed, agent=agent, include_subagents=include_subagents)
            ),
        )
    return NameList(_given_names(actual))


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
    expected = NameList(list(expected_tools))
    return MetricResult(*tool_correctness_of(actual, expected, allow_extra, include_failed, agent, include_subagents))


def tool_correctness_of(
    actual: Calls,
    expected: NameList,
    allow_extra: bool,
    include_failed: bool,
    agent: str | None,
    include_subagents: bool,
) -> tuple[bool, str]:
    """`tool_correctness`'s value and reason, for expected tools prepared once (an evaluator's)."""
    called = _observed_names(actual, include_failed, agent, include_subagents)
    if isinstance(called, NothingToScore):
        return False, called.reason
    scope = '' if agent is None and include_subagents else scope_suffix(agent, include_subagents)
    size = len(expected.names)
    if len(called.names) == size and expected.same_multiset(called.names):
        # The same multiset: nothing missing or extra, and the called counts read as the expected.
        return True, f'called {expected.summary if size else "no tools"}{scope}'
    want, got = expected.counts, called.counts
    missing, extra = want - got, got - want
    problems: list[str] = []
    if missing:
        problems.append(f'missing tools: {counts(missing)}')
    if extra and not allow_extra:
        problems.append(f'unexpected tools: {counts(extra)}')
    if problems:
        return False, '; '.join(problems) + scope
    return True, f'called {called.summary if called.names else "no tools"}{scope}'


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
    expected = NameList(list(expected_trajectory))  # type: ignore[arg-type]  # names, not turns, here
    return MetricResult(*trajectory_match_of(actual, expected, order, include_failed, agent, include_subagents))


def trajectory_match_of(
    actual: Calls,
    expected: NameList,
    order: Literal['exact', 'in_order', 'any_order'],
    include_failed: bool,
    agent: str | None,
    include_subagents: bool,
) -> tuple[float, str]:
    """`trajectory_match`'s value and reason for one expected name list (an evaluator keeps its own)."""
    called = _observed_names(actual, include_failed, agent, include_subagents)
    if isinstance(called, NothingToScore):
        return 0.0, called.reason
    scope = '' if agent is None and include_subagents else scope_suffix(agent, include_subagents)
    same = called.names == expected.names
    actual_text = expected.text if same else called.text  # equal lists print alike: printed once
    if order == 'exact':
        if same:
            return 1.0, f'actual trajectory matches expected: {actual_text}{scope}'
        return 0.0, f'actual trajectory {actual_text} does not equal expected {expected.text}{scope}'
    if not called.names and not expected.names:
        return 1.0, f'both actual and expected trajectories are empty{scope}'
    if order == 'any_order':
        matched, label = expected.matched(called.names), 'multiset overlap'
    else:
        matched, label = lcs_length(called.names, expected.names), 'LCS'  # as `lcs_score` counts it
    value, figures = f1_figures(matched, len(called.names), len(expected.names), label)
    return value, f'{figures} (expected: {expected.text}, actual: {actual_text}){scope}'


def max_tool_calls(
    actual: Calls,
    max_calls: int,
    *,
    include_failed: bool = True,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when at most `max_calls` tools were called, failed attempts included (see `MaxToolCalls`)."""
    return MetricResult(*max_tool_calls_of(actual, max_calls, include_failed, agent, include_subagents))


def max_tool_calls_of(
    actual: Calls, max_calls: int, include_failed: bool, agent: str | None, include_subagents: bool
) -> tuple[bool, str]:
    """`max_tool_calls`' value and reason."""
    if isinstance(actual, Trajectory):
        if agent is not None and (missing := missing_agent(actual, agent)) is not None:
            return False, missing
        if actual.call_count(include_failed=True) == 0 and (note := actual.unrecorded('tool calls')) is not None:
            return False, f'no tool call counted: {note}'
        count = actual.call_count(include_failed=include_failed, agent=agent, include_subagents=include_subagents)
    else:
        count = len(_given_names(actual))
    return count <= max_calls, calls_budget_reason(count, max_calls, agent, include_subagents)


def calls_budget_reason(count: int, max_calls: int, agent: str | None = None, include_subagents: bool = True) -> str:
    """The `MaxToolCalls` reason, shared with the evaluator's unscoped path."""
    return f'{count} tool call(s), budget={max_calls}{scope_suffix(agent, include_subagents)}'


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
    if trajectory.request_count() == 0 and (note := trajectory.unrecorded('model requests')) is not None:
        return MetricResult(False, f'no model request counted: {note}')
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
    return MetricResult(
        *argument_correctness_of(
            actual, tool_name, expected_arguments, match_mode, occurrence, include_failed, agent, include_subagents
        )
    )


def argument_correctness_of(
    actual: Calls,
    tool_name: str,
    expected_arguments: Mapping[str, Any],
    match_mode: Literal['exact', 'subset'],
    occurrence: Literal['first', 'last'] | int,
    include_failed: bool,
    agent: str | None,
    include_subagents: bool,
) -> tuple[bool, str]:
    """`argument_correctness`'s value and reason (what the evaluator reports, without a `MetricResult`)."""
    matches: list[int] | list[CallView]
    if isinstance(actual, Trajectory):
        if agent is not None and (missing := missing_agent(actual, agent)) is not None:
            return False, missing
        # Positions, not records: checking the last of 200 calls parses one span's arguments.
        matches = actual.call_positions(include_failed, agent, include_subagents, tool_name)
    else:
        matches = [call for call in _given_calls(actual) if call.name == tool_name]
    scope = '' if agent is None and include_subagents else scope_suffix(agent, include_subagents)
    if not matches:
        return False, f'No calls to tool {tool_name!r} were recorded.{scope}'
    position: int | None = None
    if occurrence == 'first':
        position = 0
    elif occurrence == 'last':
        position = len(matches) - 1
    elif isinstance(occurrence, int) and 0 <= occurrence < len(matches):
        position = occurrence
    if position is None:
        return (
            False,
            f'Tool {tool_name!r} was called {len(matches)} time(s); occurrence={occurrence!r} does not select any'
            " of them (must be 'first', 'last', or a 0-based index; negative ints are not supported)." + scope,
        )
    if isinstance(actual, Trajectory):
        args, problem = actual.call_arguments(matches[position])  # type: ignore[arg-type]  # positions here
    else:
        call = matches[position]
        assert isinstance(call, CallView)
        args, problem = call.args, call.problem
    if args is None:
        return False, f'Tool {tool_name!r} arguments {problem}{scope}'
    problems = diff_arguments(args, expected_arguments, match_mode)
    if problems:
        return False, f'Tool {tool_name!r} argument mismatch: {"; ".join(problems)}{scope}'
    return True, f'Tool {tool_name!r} called with {short_repr(args)}{scope}'


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
