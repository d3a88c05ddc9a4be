"""Every deterministic metric as a plain function: no `Dataset`, no `EvaluatorContext`, no spans.

For notebooks and other frameworks. Each function takes what the agent did, as a `Trajectory` (from
spans or from a conversation), a list of tool names, or a list of `{"name": ..., "args": {...}}`
dicts, and returns a `MetricResult` with the value and reason the evaluator of the same name reports.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .scoring import F1Score, diff_arguments, lcs_score, multiset_diff, multiset_score
from .trajectory import Trajectory

__all__ = (
    'Calls',
    'MetricResult',
    'argument_correctness',
    'canonical_json',
    'tool_call_accuracy',
    'tool_call_f1',
    'tool_correctness',
    'trajectory_match',
)

Calls = Trajectory | Sequence[str] | Sequence[Mapping[str, Any]]
"""What the agent did: a `Trajectory`, tool names in call order, or `{"name", "args"}` dicts in call order."""


@dataclass(frozen=True)
class MetricResult:
    """A metric's value (`bool`, or a `float` in [0, 1]) and the reason that explains it."""

    value: bool | float
    reason: str


@dataclass(frozen=True)
class _Call:
    """One call as the metrics see it; `args` is `None` when unknown, and `problem` then says why."""

    name: str
    args: dict[str, Any] | None
    problem: str | None = None


# -- inputs ------------------------------------------------------------------------------------------


def _scope_suffix(agent: str | None, include_subagents: bool) -> str:
    if agent is None:
        return '' if include_subagents else ' (top-level agent only)'
    return f' (agent {agent!r}{"" if include_subagents else ", sub-agents excluded"})'


def _observed(
    actual: Calls, include_failed: bool, agent: str | None, include_subagents: bool, *, need_args: bool
) -> list[_Call] | str:
    """The calls to score, or why there is nothing to score (the agent is not in the trajectory)."""
    if isinstance(actual, Trajectory):
        if agent is not None and not actual.has_agent(agent):
            return f'agent {agent!r} not found in the trace; agents seen: {actual.agent_names!r}'
        scope: dict[str, Any] = {
            'include_failed': include_failed,
            'agent': agent,
            'include_subagents': include_subagents,
        }
        if not need_args:  # names only: the trajectory need not build its call records
            return [_Call(name, None, 'not needed') for name in actual.call_names(**scope)]
        return [_Call(c.name, c.arguments, c.arguments_problem) for c in actual.calls(**scope)]
    if isinstance(actual, (str, bytes)) or not isinstance(actual, Sequence):
        raise TypeError(f'expected a Trajectory or a list of calls, got {type(actual).__name__}')
    if need_args and any(isinstance(item, str) for item in actual):
        raise TypeError('this metric compares arguments: pass a Trajectory or {"name", "args"} dicts, not tool names')
    return [
        _Call(item, None, 'not given') if isinstance(item, str) else _parse_call(item, i)
        for i, item in enumerate(actual)
    ]


def _parse_call(item: object, index: int) -> _Call:
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
    return _Call(name, dict(args))


def _parse_reference_calls(calls: Sequence[Mapping[str, Any]]) -> list[_Call]:
    """Validate reference calls; `ValueError` naming the bad item (evaluators call this at construction)."""
    if isinstance(calls, (str, bytes, Mapping)) or not isinstance(calls, Sequence):
        raise ValueError(f'reference_tool_calls must be a list of {{"name", "args"}} mappings, got {calls!r}')
    return [_parse_call(item, i) for i, item in enumerate(calls)]


# -- name-based metrics (the pydantic-evals built-ins' semantics) -------------------------------------


def _counts(counter: Counter[str]) -> str:
    return ', '.join(f'{name!r} (x{count})' for name, count in sorted(counter.items()))


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
    observed = _observed(actual, include_failed, agent, include_subagents, need_args=False)
    if isinstance(observed, str):
        return MetricResult(False, observed)
    called = [c.name for c in observed]
    missing, extra = multiset_diff(list(expected_tools), called)
    scope = _scope_suffix(agent, include_subagents)
    problems: list[str] = []
    if missing:
        problems.append(f'missing tools: {_counts(missing)}')
    if extra and not allow_extra:
        problems.append(f'unexpected tools: {_counts(extra)}')
    if problems:
        return MetricResult(False, '; '.join(problems) + scope)
    summary = _counts(Counter(called)) if called else 'no tools'
    return MetricResult(True, f'called {summary}{scope}')


def trajectory_match(
    actual: Calls,
    expected_trajectory: Sequence[str],
    *,
    order: Literal['exact', 'in_order', 'any_order'] = 'in_order',
    include_failed: bool = False,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """F1 of the tool-name sequence against `expected_trajectory` (see `TrajectoryMatch`)."""
    observed = _observed(actual, include_failed, agent, include_subagents, need_args=False)
    if isinstance(observed, str):
        return MetricResult(0.0, observed)
    called = [c.name for c in observed]
    expected = list(expected_trajectory)
    scope = _scope_suffix(agent, include_subagents)
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
    observed = _observed(actual, include_failed, agent, include_subagents, need_args=True)
    if isinstance(observed, str):
        return MetricResult(False, observed)
    scope = _scope_suffix(agent, include_subagents)
    matches = [c for c in observed if c.name == tool_name]
    if not matches:
        return MetricResult(False, f'No calls to tool {tool_name!r} were recorded.{scope}')
    call: _Call | None = None
    if occurrence == 'first':
        call = matches[0]
    elif occurrence == 'last':
        call = matches[-1]
    elif isinstance(occurrence, int) and 0 <= occurrence < len(matches):
        call = matches[occurrence]
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
    return MetricResult(True, f'Tool {tool_name!r} called with {call.args!r}{scope}')


# -- ragas' argument-aware metrics ---------------------------------------------------------------------


def canonical_json(value: object) -> str:
    """The text two argument values are compared by: JSON with sorted keys, `1.0` written as `1`.

    So `{'a': 1, 'b': 2}` equals `{'b': 2, 'a': 1}` and `1` equals `1.0` (JSON has one number type),
    while `1`, `'1'` and `True` all differ. ragas compares `str()` of the values instead.
    """
    return json.dumps(_normalise(value), sort_keys=True, ensure_ascii=False, separators=(',', ':'), default=repr)


def _normalise(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(v) for v in value]
    return value


def _identity(call: _Call) -> tuple[str, str | None]:
    """Equal identities mean equal calls; unreadable arguments equal nothing (callers check for `None`)."""
    return call.name, None if call.args is None else canonical_json(call.args)


def _show(call: _Call) -> str:
    if call.args is None:
        return f'{call.name}(<arguments {call.problem}>)'
    return f'{call.name}({", ".join(f"{k}={v!r}" for k, v in sorted(call.args.items()))})'


def _sort_key(call: _Call) -> tuple[str, ...]:
    """ragas' flexible-order key (name, then each argument name and value) with nested values made canonical."""
    key = [call.name]
    for name in sorted(call.args or {}):
        value = (call.args or {})[name]
        key += [name, value if isinstance(value, str) else canonical_json(value)]
    return tuple(key)


def _argument_score(call: _Call, reference: _Call) -> float:
    """Share of the reference's arguments the call got right; extra arguments in the call cost nothing."""
    if call.args is None:
        return 0.0
    if not reference.args:
        return 0.0 if call.args else 1.0
    right = sum(k in call.args and canonical_json(call.args[k]) == canonical_json(v) for k, v in reference.args.items())
    return right / len(reference.args)


def _argument_problems(call: _Call, reference: _Call, *, exact: bool) -> list[str]:
    """What keeps `call` from matching `reference`: under `exact` (F1) every key counts, else only the reference's."""
    if call.args is None:
        return [f'arguments {call.problem}']
    ref_args = reference.args or {}
    if not ref_args and call.args and not exact:
        return [f'expected no arguments, got {dict(sorted(call.args.items()))!r}']
    problems: list[str] = []
    for key in sorted(ref_args):
        if key not in call.args:
            problems.append(f'missing key {key!r}')
        elif canonical_json(call.args[key]) != canonical_json(ref_args[key]):
            problems.append(f'key {key!r}: expected {ref_args[key]!r}, got {call.args[key]!r}')
    if exact:
        problems += [f'unexpected key {k!r}' for k in sorted(call.args) if k not in ref_args]
    return problems


def _mismatch(call: _Call, reference: _Call, *, exact: bool) -> str | None:
    problems = _argument_problems(call, reference, exact=exact)
    return f'{_show(reference)} vs {_show(call)}: {", ".join(problems)}' if problems else None


def _listing(calls: list[_Call]) -> str:
    counts = Counter(_show(c) for c in calls)
    return ', '.join(f'{shown} (x{n})' if n > 1 else shown for shown, n in sorted(counts.items()))


def _sections(*parts: tuple[str, str]) -> str:
    return ''.join(f'; {label}: {text}' for label, text in parts if text)


def _compare(calls: list[_Call], reference: list[_Call]) -> tuple[list[_Call], list[_Call], list[_Call]]:
    """`(matched, missing, extra)` as multisets: a call matches a reference call with the same identity."""
    pool: dict[tuple[str, str | None], list[_Call]] = {}
    for call in calls:
        if call.args is not None:
            pool.setdefault(_identity(call), []).append(call)
    matched: list[_Call] = []
    missing: list[_Call] = []
    for ref in reference:
        candidates = pool.get(_identity(ref))
        if candidates:
            candidates.pop(0)
            matched.append(ref)
        else:
            missing.append(ref)
    leftover = {id(c) for group in pool.values() for c in group}
    extra = [c for c in calls if c.args is None or id(c) in leftover]
    return matched, missing, extra


def _near_misses(missing: list[_Call], extra: list[_Call]) -> list[str]:
    """Missing and extra calls of the same tool, paired in sorted order, with their argument differences."""
    found: list[str] = []
    for name in sorted({c.name for c in missing} & {c.name for c in extra}):
        wanted = sorted((c for c in missing if c.name == name), key=_sort_key)
        got = sorted((c for c in extra if c.name == name), key=_sort_key)
        found += filter(None, (_mismatch(call, ref, exact=True) for ref, call in zip(wanted, got, strict=False)))
    return found


def _accuracy(calls: list[_Call], reference: list[_Call], strict_order: bool) -> tuple[float, str]:
    mode = 'strict order' if strict_order else 'any order'
    if not calls and not reference:
        return 1.0, 'both reference and actual calls are empty'
    if not calls or not reference:
        listing = _sections(('missing', _listing(reference)), ('extra', _listing(calls)))
        return 0.0, f'{len(reference)} reference call(s), {len(calls)} actual call(s){listing}'
    if not strict_order:
        calls, reference = sorted(calls, key=_sort_key), sorted(reference, key=_sort_key)
    names, expected = [c.name for c in calls], [r.name for r in reference]
    if names != expected:
        missing, extra = multiset_diff(expected, names)
        detail = _sections(('missing tools', _counts(missing)), ('unexpected tools', _counts(extra)))
        return 0.0, f'tool names not aligned ({mode}): expected {expected!r}, actual {names!r}{detail}'
    pairs = list(zip(calls, reference, strict=True))
    total = sum(_argument_score(call, ref) for call, ref in pairs)
    value = total / len(reference)
    mismatches = [m for call, ref in pairs if (m := _mismatch(call, ref, exact=False)) is not None]
    matched = [ref for call, ref in pairs if _argument_score(call, ref) == 1.0]
    detail = _sections(('matched', _listing(matched)), ('argument mismatches', '; '.join(sorted(mismatches))))
    return value, f'tool names aligned ({mode}), argument accuracy={total:g}/{len(reference)}={value:.3f}{detail}'


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
    reference = _parse_reference_calls(reference_tool_calls)
    observed = _observed(actual, include_failed, agent, include_subagents, need_args=True)
    if isinstance(observed, str):
        return MetricResult(0.0, observed)
    value, reason = _accuracy(observed, reference, strict_order)
    return MetricResult(value, reason + _scope_suffix(agent, include_subagents))


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
    reference = _parse_reference_calls(reference_tool_calls)
    observed = _observed(actual, include_failed, agent, include_subagents, need_args=True)
    if isinstance(observed, str):
        return MetricResult(0.0, observed)
    scope = _scope_suffix(agent, include_subagents)
    if not observed and not reference:
        return MetricResult(1.0, f'both reference and actual calls are empty{scope}')
    matched, missing, extra = _compare(observed, reference)
    score = F1Score(len(matched), len(observed), len(reference))
    reason = score.describe('matched calls') + _sections(
        ('matched', _listing(matched)),
        ('missing', _listing(missing)),
        ('extra', _listing(extra)),
        ('argument mismatches', '; '.join(_near_misses(missing, extra))),
    )
    return MetricResult(score.value, reason + scope)
