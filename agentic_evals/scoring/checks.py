"""The pass/fail checks beyond call counts, as plain functions: permissions, loops and budgets.

Each takes a `Trajectory` and the options of the evaluator of the same name (`ToolPermission`,
`NoLoops`, `MaxTokens`, `MaxCost`, `MaxDuration`, `MaxFailedCalls`) with the same agent scope,
and returns the `MetricResult` that evaluator reports. A reason names what broke (the tool, the
agent, where, how often, the figure against its limit), and a check that could not measure what
it checks (no tokens or cost recorded, nothing recognised in the trace) fails saying so rather
than passing on nothing. Bad options raise `ValueError`, as the evaluators do at construction.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, get_args

from ..trajectory.records import FailureStage, ToolCall, belongs_to
from ..trajectory.trajectory import Trajectory
from .call_matching import canonical_json
from .metrics import MetricResult, missing_agent, scope_suffix
from .sequences import short_repr

FAILURE_STAGES: tuple[FailureStage, ...] = get_args(FailureStage)
PERMISSION_KEYS = ('allowed', 'forbidden')
_LISTED = 5
"""How many loops a reason shows before `and N more`."""


def _raise(problems: Iterable[str | None]) -> None:
    found = [p for p in problems if p is not None]
    if found:
        raise ValueError('; '.join(found))


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(name: str, value: object, least: int) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= least:
        return None
    return f'{name} must be a whole number >= {least}, got {value!r}'


def _limit(name: str, value: object, *, optional: bool = False) -> str | None:
    if (optional and value is None) or (_number(value) and value >= 0):  # type: ignore[operator]
        return None
    return f'{name} must be a number >= 0{" or None" if optional else ""}, got {value!r}'


def _unrecognised_calls(trajectory: Trajectory) -> str | None:
    """The reason of a check of calls on a trace that cannot say how many calls there were: no call
    counted, and why (no verdict on nothing)."""
    if trajectory.call_count(include_failed=True) == 0 and (note := trajectory.unrecorded('tool calls')) is not None:
        return f'no tool call counted: {note}'
    return None


def _unrecognised_requests(trajectory: Trajectory) -> str | None:
    """The same for a check of model requests (their count, tokens or cost)."""
    if trajectory.request_count() == 0 and (note := trajectory.unrecorded('model requests')) is not None:
        return f'no model request counted: {note}'
    return None


def _by(agent: str | None) -> str:
    return 'outside any agent run' if agent is None else f'by agent {agent!r}'


def _more(shown: list[str], total: int) -> str:
    return '; '.join(shown) + (f'; and {total - len(shown)} more' if total > len(shown) else '')


# -- ToolPermission ---------------------------------------------------------------------------------


def _tool_list(name: str, value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        return f'{name} must be a list of tool names or None, got {value!r}'
    bad = [item for item in value if not isinstance(item, str)]
    return f'{name} must hold tool names (strings), got {bad[0]!r}' if bad else None


def _both(where: str, allowed: Sequence[str] | None, forbidden: Sequence[str] | None) -> str | None:
    clash = sorted(set(allowed or ()) & set(forbidden or ()))
    return f'{where}: {", ".join(map(repr, clash))} both allowed and forbidden' if clash else None


def permission_problems(allowed: object, forbidden: object, agents: object) -> list[str | None]:
    """What is wrong with a set of permission rules (`None` entries are fine).

    A call must satisfy the top-level rules and its own agent's, so an agent rule can only narrow
    them: a tool an agent is allowed must also be allowed (and not forbidden) at the top level.
    """
    problems: list[str | None] = [_tool_list('allowed', allowed), _tool_list('forbidden', forbidden)]
    if agents is not None and not isinstance(agents, Mapping):
        problems.append(f'agents must be a mapping of agent names to {{allowed, forbidden}} rules, got {agents!r}')
    if any(p is not None for p in problems):
        return problems
    top_allowed: list[str] | None = allowed  # type: ignore[assignment]
    top_forbidden: list[str] = forbidden or []  # type: ignore[assignment]
    problems.append(_both('allowed and forbidden', top_allowed, top_forbidden))
    rules: Mapping[object, object] = agents or {}  # type: ignore[assignment]
    for agent, rule in rules.items():
        where = f'agents[{agent!r}]'
        if not isinstance(agent, str) or not isinstance(rule, Mapping):
            problems.append(f'{where} must map an agent name to {{allowed: [...], forbidden: [...]}}, got {rule!r}')
            continue
        unknown = sorted(str(k) for k in rule if k not in PERMISSION_KEYS)
        if unknown or not rule:
            problems.append(f'{where} takes allowed and/or forbidden, got {sorted(map(str, rule))!r}')
            continue
        own_allowed, own_forbidden = rule.get('allowed'), rule.get('forbidden')
        checked = [_tool_list(f'{where}.allowed', own_allowed), _tool_list(f'{where}.forbidden', own_forbidden)]
        problems += checked
        if any(checked):
            continue
        problems.append(_both(where, own_allowed, own_forbidden))
        widened = sorted(set(own_allowed or ()) & set(top_forbidden))
        if widened:
            problems.append(f'{where}.allowed: {", ".join(map(repr, widened))} forbidden to every agent')
        if top_allowed is not None:
            outside = sorted(set(own_allowed or ()) - set(top_allowed))
            if outside:
                problems.append(f'{where}.allowed: {", ".join(map(repr, outside))} not in allowed')
    if top_allowed is None and not top_forbidden and not rules:
        problems.append('give allowed, forbidden or agents: with no rule every call is permitted')
    return problems


def tool_permission(
    trajectory: Trajectory,
    allowed: Sequence[str] | None = None,
    forbidden: Sequence[str] | None = None,
    *,
    agents: Mapping[str, Mapping[str, Sequence[str] | None]] | None = None,
    include_failed: bool = True,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when every call in scope is permitted (see `ToolPermission`).

    `allowed` (any tool when `None`) and `forbidden` apply to every call; `agents` maps an agent
    name to its own `allowed` / `forbidden`, which apply to the calls that agent made itself. Failed
    attempts count by default: attempting a forbidden tool is the violation.
    """
    _raise(permission_problems(allowed, forbidden, agents))
    if (missing := missing_agent(trajectory, agent)) is not None:
        return MetricResult(False, missing)
    if (unrecognised := _unrecognised_calls(trajectory)) is not None:
        return MetricResult(False, unrecognised)
    scope: dict[str, Any] = {'include_failed': include_failed, 'agent': agent, 'include_subagents': include_subagents}
    names = trajectory.call_names(**scope)
    calls = trajectory.calls(**scope)  # the same selection, in the same order; records made when read
    top_allowed = None if allowed is None else set(allowed)
    top_forbidden = set(forbidden or ())
    rules = {name: (rule.get('allowed'), set(rule.get('forbidden') or ())) for name, rule in (agents or {}).items()}
    broken: Counter[tuple[str, str, str | None]] = Counter()  # (rule, tool, agent) -> calls
    for index, name in enumerate(names):
        why: str | None = None
        if name in top_forbidden:
            why = 'in forbidden'
        elif top_allowed is not None and name not in top_allowed:
            why = 'not in allowed'
        if why is None and not rules:
            continue
        made_by = calls[index].agent
        rule = rules.get(made_by) if made_by is not None else None
        if why is None and rule is not None:
            own_allowed, own_forbidden = rule
            if name in own_forbidden:
                why = f'in agents[{made_by!r}].forbidden'
            elif own_allowed is not None and name not in own_allowed:
                why = f'not in agents[{made_by!r}].allowed'
        if why is not None:
            broken[why, name, made_by] += 1
    unseen = sorted(name for name in rules if not trajectory.has_agent(name))
    tail = f'; rules for agent(s) not in the trace: {_more([short_repr(n, 60) for n in unseen[:_LISTED]], len(unseen))}'
    tail = tail if unseen else ''
    suffix = scope_suffix(agent, include_subagents)
    if not broken:
        return MetricResult(True, f'{len(names)} tool call(s), all permitted{suffix}{tail}')
    ordered = sorted(broken.items(), key=lambda item: (item[0][1], item[0][2] or '', item[0][0]))
    shown = [
        f'{short_repr(tool, 60)} called {count} time(s) {_by(made_by)} ({why})'
        for (why, tool, made_by), count in ordered[:_LISTED]
    ]
    total = sum(broken.values())
    listed = _more(shown, len(ordered))
    return MetricResult(False, f'{total} of {len(names)} tool call(s) not permitted: {listed}{suffix}{tail}')


# -- NoLoops ----------------------------------------------------------------------------------------


def loop_problems(max_repeats: object, max_cycle_length: object, max_cycle_repeats: object) -> list[str | None]:
    return [
        _whole('max_repeats', max_repeats, 1),
        _whole('max_cycle_length', max_cycle_length, 1),
        _whole('max_cycle_repeats', max_cycle_repeats, 1),
    ]


def _shown_call(call: ToolCall) -> str:
    if call.arguments is not None:
        shown = ', '.join(f'{k}={short_repr(v, 60)}' for k, v in sorted(call.arguments.items()))
        return f'{call.name}({shown})'
    return f'{call.name}(<arguments {short_repr(call.raw_arguments, 60)}>)'


def _primitive(block: Sequence[int]) -> bool:
    """Not a smaller block repeated (`a b a b` is `a b` twice: reported at that length, not this)."""
    size = len(block)
    return not any(
        size % period == 0 and all(block[k] == block[k + period] for k in range(size - period))
        for period in range(1, size)
    )


@dataclass(frozen=True)
class _Loop:
    start: int
    """Position in the scoped calls of the first call of the loop."""
    length: int
    times: int
    calls: tuple[ToolCall, ...]


def _loops(
    sequence: Sequence[int], positions: Sequence[int], calls: Sequence[ToolCall], limits: Sequence[int]
) -> list[_Loop]:
    """Every maximal stretch of `sequence` that is one block of `length` calls (`limits[length - 1]`
    is how many times it may occur in a row) repeated more often than allowed.

    A stretch with period `length` is a run of positions `i` with `s[i] == s[i + length]`: one
    linear scan per length, so the cost is `len(sequence) * len(limits)` comparisons.
    """
    found: list[_Loop] = []
    size = len(sequence)
    for length, limit in enumerate(limits, start=1):
        i = 0
        while i + length < size:
            if sequence[i] != sequence[i + length]:
                i += 1
                continue
            j = i
            while j + length < size and sequence[j] == sequence[j + length]:
                j += 1
            times = (j - i + length) // length
            block = sequence[i : i + length]
            if times > limit and (length == 1 or _primitive(block)):
                found.append(_Loop(positions[i], length, times, tuple(calls[i : i + length])))
            i = j + 1
    return found


def no_loops(
    trajectory: Trajectory,
    max_repeats: int = 2,
    *,
    max_cycle_length: int = 3,
    max_cycle_repeats: int = 2,
    include_failed: bool = True,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when no agent repeated itself (see `NoLoops`).

    A loop is the same call (name and arguments, compared as `canonical_json`) made more than
    `max_repeats` times in a row, or a cycle of 2 to `max_cycle_length` calls made more than
    `max_cycle_repeats` times in a row (`search, fetch, search, fetch, search, fetch`). Each agent's
    own calls are a sequence of their own, so a sub-agent's calls never break or make its parent's
    loop. A call whose arguments were not recorded equals no other call.
    """
    _raise(loop_problems(max_repeats, max_cycle_length, max_cycle_repeats))
    if (missing := missing_agent(trajectory, agent)) is not None:
        return MetricResult(False, missing)
    if (unrecognised := _unrecognised_calls(trajectory)) is not None:
        return MetricResult(False, unrecognised)
    calls = list(trajectory.calls(include_failed=include_failed, agent=agent, include_subagents=include_subagents))
    ids: dict[tuple[str, str, str], int] = {}
    unknown = 0
    groups: dict[tuple[str, ...], tuple[list[int], list[int], list[ToolCall]]] = {}
    for position, call in enumerate(calls):
        if call.arguments is not None:
            identity = ids.setdefault((call.name, 'json', canonical_json(call.arguments)), len(ids))
        elif call.raw_arguments is not None:  # the same invalid text sent again is a loop too
            identity = ids.setdefault((call.name, 'raw', call.raw_arguments), len(ids))
        else:
            unknown += 1
            identity = -unknown  # equal to nothing
        sequence, positions, members = groups.setdefault(call.agent_path, ([], [], []))
        sequence.append(identity)
        positions.append(position)
        members.append(call)
    limits = [max_repeats, *[max_cycle_repeats] * (max_cycle_length - 1)]
    loops = sorted(
        (
            loop
            for sequence, positions, members in groups.values()
            for loop in _loops(sequence, positions, members, limits)
        ),
        key=lambda loop: (loop.start, loop.length),
    )
    suffix = scope_suffix(agent, include_subagents)
    note = f'; {unknown} call(s) without recorded arguments not compared' if unknown else ''
    if not loops:
        cycles = (
            f'no cycle of 2-{max_cycle_length} calls more than {max_cycle_repeats} time(s)'
            if max_cycle_length >= 2
            else 'cycles not checked'
        )
        rules = f'no call more than {max_repeats} time(s) in a row, {cycles}'
        return MetricResult(True, f'no loops in {len(calls)} call(s) ({rules}){suffix}{note}')
    shown: list[str] = []
    for loop in loops[:_LISTED]:
        where = f'in a row from call {loop.start} {_by(loop.calls[0].agent)}'
        if loop.length == 1:
            shown.append(f'{_shown_call(loop.calls[0])} made {loop.times} times {where} (max_repeats={max_repeats})')
        else:
            cycle = ' -> '.join(_shown_call(c) for c in loop.calls)
            shown.append(f'cycle {cycle} made {loop.times} times {where} (max_cycle_repeats={max_cycle_repeats})')
    return MetricResult(False, f'{len(loops)} loop(s): {_more(shown, len(loops))}{suffix}{note}')


# -- MaxTokens, MaxCost -----------------------------------------------------------------------------


def token_problems(max_total: object, max_input: object, max_output: object) -> list[str | None]:
    limits = {'max_total': max_total, 'max_input': max_input, 'max_output': max_output}
    problems: list[str | None] = [None if value is None else _whole(name, value, 0) for name, value in limits.items()]
    if all(value is None for value in limits.values()):
        problems.append('give max_total, max_input or max_output')
    return problems


def max_tokens(
    trajectory: Trajectory,
    max_total: int | None = None,
    *,
    max_input: int | None = None,
    max_output: int | None = None,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when the scoped model requests' tokens stay within every limit given (see `MaxTokens`).

    Input and output tokens are summed over the requests (`ModelRequest.input_tokens` and
    `output_tokens`); the total is their sum. Fails when no request recorded any token.
    """
    _raise(token_problems(max_total, max_input, max_output))
    if (missing := missing_agent(trajectory, agent)) is not None:
        return MetricResult(False, missing)
    if (unrecognised := _unrecognised_requests(trajectory)) is not None:
        return MetricResult(False, unrecognised)
    suffix = scope_suffix(agent, include_subagents)
    requests = trajectory.requests(agent=agent, include_subagents=include_subagents)
    if not requests:
        return MetricResult(False, f'no model request recorded, so no tokens to check{suffix}')
    counted = [r for r in requests if r.input_tokens or r.output_tokens]
    if not counted:
        return MetricResult(False, f'no token usage recorded on the {len(requests)} model request(s){suffix}')
    used_in = sum(r.input_tokens for r in requests)
    used_out = sum(r.output_tokens for r in requests)
    figures = {'max_total': used_in + used_out, 'max_input': used_in, 'max_output': used_out}
    words = {'max_total': 'total', 'max_input': 'input', 'max_output': 'output'}
    limits = {'max_total': max_total, 'max_input': max_input, 'max_output': max_output}
    over = [
        f'{words[name]} tokens {figures[name]} > {name}={limit}'
        for name, limit in limits.items()
        if limit is not None and figures[name] > limit
    ]
    usage = f'{used_in} input + {used_out} output = {used_in + used_out} tokens over {len(requests)} model request(s)'
    if len(counted) < len(requests):
        usage += f' ({len(requests) - len(counted)} with no token usage recorded)'
    if over:
        return MetricResult(False, f'{"; ".join(over)} ({usage}){suffix}')
    within = ', '.join(f'{name}={limit}' for name, limit in limits.items() if limit is not None)
    return MetricResult(True, f'{usage}, within {within}{suffix}')


def cost_problems(max_cost: object) -> list[str | None]:
    return [_limit('max_cost', max_cost)]


def max_cost(
    trajectory: Trajectory,
    max_cost: float,
    *,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when the recorded cost of the scoped model requests is at most `max_cost` (see `MaxCost`).

    The cost is `ModelRequest.cost`, in whatever unit the instrumentation records (pydantic-ai's
    `operation.cost` and OpenInference's `llm.cost.total` are USD). With no cost recorded on any
    request it fails: a budget that cannot be measured does not pass.
    """
    _raise(cost_problems(max_cost))
    if (missing := missing_agent(trajectory, agent)) is not None:
        return MetricResult(False, missing)
    if (unrecognised := _unrecognised_requests(trajectory)) is not None:
        return MetricResult(False, unrecognised)
    suffix = scope_suffix(agent, include_subagents)
    requests = trajectory.requests(agent=agent, include_subagents=include_subagents)
    budget = f'max_cost={max_cost:g}'
    if not requests:
        return MetricResult(False, f'no model request recorded, so no cost to check against {budget}{suffix}')
    recorded = [r.cost for r in requests if r.cost is not None]
    if not recorded:
        return MetricResult(
            False,
            f'cost not recorded on any of the {len(requests)} model request(s), so {budget} cannot be checked{suffix}',
        )
    total = math.fsum(recorded)
    detail = f'over {len(recorded)} model request(s)'
    if len(recorded) < len(requests):
        detail += f', not recorded on {len(requests) - len(recorded)} more'
    if total > max_cost:
        return MetricResult(False, f'cost {total:.6g} > {budget} ({detail}){suffix}')
    return MetricResult(True, f'cost {total:.6g} {detail}, within {budget}{suffix}')


# -- MaxDuration ------------------------------------------------------------------------------------


def _seconds(value: float) -> str:
    """Microseconds at most (what span timestamps hold), without trailing zeros: `0.000178s`, `2.1s`."""
    return f'{value:.6f}'.rstrip('0').rstrip('.') + 's'


def _as_seconds(value: float | timedelta) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _limits(name: str, value: object, keys: str) -> list[str | None]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [f'{name} must be a mapping of {keys} to seconds, got {value!r}']
    return [
        f'{name}[{key!r}] must be a number of seconds >= 0, got {limit!r}'
        for key, limit in value.items()
        if not isinstance(key, str) or not (_number(limit) and limit >= 0)
    ]


def duration_problems(seconds: object, per_tool: object, per_agent: object) -> list[str | None]:
    problems: list[str | None] = []
    if isinstance(seconds, timedelta):
        if seconds < timedelta(0):
            problems.append(f'seconds must be >= 0, got {seconds!r}')
    else:
        problems.append(_limit('seconds', seconds, optional=True))
    problems += _limits('per_tool', per_tool, 'tool names')
    problems += _limits('per_agent', per_agent, 'agent names')
    if seconds is None and not per_tool and not per_agent:
        problems.append('give seconds, per_tool or per_agent')
    return problems


def task_duration(duration: float, seconds: float | timedelta) -> MetricResult:
    """The run-time check on a measured task duration (pydantic-evals' `ctx.duration`), spans unread."""
    limit = _as_seconds(seconds)
    return MetricResult(duration <= limit, f'run took {_seconds(duration)} (task duration), limit {_seconds(limit)}')


class _Timed(Protocol):
    @property
    def start(self) -> datetime: ...

    @property
    def end(self) -> datetime: ...


def _extent(*groups: Iterable[_Timed]) -> float | None:
    """First start to last end of the records, in seconds; `None` when there are none."""
    spans = [item for group in groups for item in group]
    if not spans:
        return None
    return (max(s.end for s in spans) - min(s.start for s in spans)).total_seconds()


def _slowest(label: str, durations: list[tuple[float, str]], limit: float) -> tuple[bool, str]:
    """`(within, text)` for one per-tool or per-agent limit: how many went over, the slowest with where."""
    over = sorted((d for d in durations if d[0] > limit), key=lambda d: -d[0])
    if over:
        worst, where = over[0]
        return (
            False,
            f'{label}: {len(over)} of {len(durations)} over {_seconds(limit)}, slowest {_seconds(worst)} ({where})',
        )
    if not durations:
        return True, f'{label}: none'
    return True, f'{label}: {len(durations)} within {_seconds(limit)}, slowest {_seconds(max(d for d, _ in durations))}'


def max_duration(
    trajectory: Trajectory,
    seconds: float | timedelta | None = None,
    *,
    per_tool: Mapping[str, float] | None = None,
    per_agent: Mapping[str, float] | None = None,
    run_duration: float | None = None,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when the run, and each call and agent run given a limit, took no longer than allowed
    (see `MaxDuration`).

    The run is the whole trajectory (its agent runs, calls and requests, first start to last end)
    or, scoped to an agent, that agent's runs; `run_duration`, when given, is the measured time of the
    whole run (pydantic-evals' `ctx.duration`) and replaces the spans' extent for an unscoped check.
    `per_tool` limits each call (failed attempts included) of a tool, `per_agent` each run of an agent.
    """
    _raise(duration_problems(seconds, per_tool, per_agent))
    if (missing := missing_agent(trajectory, agent)) is not None:
        return MetricResult(False, missing)
    unscoped = agent is None and include_subagents
    if trajectory.request_count() == 0 and (note := trajectory.unrecognised) is not None:
        # The task's own clock would still pass: a run whose agent recorded nothing is not timed.
        return MetricResult(False, f'no run time to check: {note}')
    if seconds is not None and run_duration is not None and unscoped and not per_tool and not per_agent:
        return task_duration(run_duration, seconds)
    suffix = scope_suffix(agent, include_subagents)
    calls = trajectory.calls(include_failed=True, agent=agent, include_subagents=include_subagents)
    runs = [a for a in trajectory.agents if belongs_to(a.path, agent, include_subagents)]
    checks: list[tuple[bool, str]] = []
    if seconds is not None:
        limit = _as_seconds(seconds)
        if unscoped and run_duration is not None:
            elapsed: float | None = run_duration
            source = 'task duration'
        elif unscoped:
            elapsed = _extent(trajectory.agents, trajectory.tool_calls, trajectory.model_requests)
            source = 'first span start to last end'
        elif runs:
            elapsed, source = _extent(runs), f'{len(runs)} agent run(s)'
        else:
            requests = trajectory.requests(agent=agent, include_subagents=include_subagents)
            elapsed, source = _extent(calls, requests), 'its calls and requests'
        if elapsed is None:
            note = trajectory.unrecorded('tool calls')
            why = f'; {note}' if note is not None else ''
            return MetricResult(False, f'no run time to check: nothing in scope was timed{suffix}{why}')
        checks.append((elapsed <= limit, f'run took {_seconds(elapsed)} ({source}), limit {_seconds(limit)}'))
    for tool, limit in (per_tool or {}).items():
        timed = [
            (c.duration.total_seconds(), f'call {i} {_by(c.agent)}') for i, c in enumerate(calls) if c.name == tool
        ]
        checks.append(_slowest(f'{tool!r} calls', timed, float(limit)))
    for name, limit in (per_agent or {}).items():
        own = [a for a in runs if a.name == name]
        timed = [((a.end - a.start).total_seconds(), f'run {i + 1} of {len(own)}') for i, a in enumerate(own)]
        checks.append(_slowest(f'agent {name!r} runs', timed, float(limit)))
    failing = [text for ok, text in checks if not ok]
    if failing:
        return MetricResult(False, '; '.join(failing) + suffix)
    return MetricResult(True, '; '.join(text for _, text in checks) + suffix)


# -- MaxFailedCalls ---------------------------------------------------------------------------------


def failed_call_problems(max_failed: object, stages: object) -> list[str | None]:
    problems = [_whole('max_failed', max_failed, 0)]
    if stages is not None:
        if isinstance(stages, str) or not isinstance(stages, (list, tuple)) or not stages:
            problems.append(f'stages must be a non-empty list of {", ".join(FAILURE_STAGES)} or None, got {stages!r}')
        else:
            bad = [s for s in stages if s not in FAILURE_STAGES]
            if bad:
                problems.append(f'stages: {bad[0]!r} is not a failure stage ({", ".join(FAILURE_STAGES)})')
    return problems


def max_failed_calls(
    trajectory: Trajectory,
    max_failed: int,
    *,
    stages: Sequence[FailureStage] | None = None,
    agent: str | None = None,
    include_subagents: bool = True,
) -> MetricResult:
    """`True` when at most `max_failed` tool call attempts failed (see `MaxFailedCalls`).

    `stages` counts only failures at those stages (`validation`, `retry`, `raised`); a failure whose
    stage the instrumentation does not record is then left out, and the reason says how many were.
    """
    _raise(failed_call_problems(max_failed, stages))
    if (missing := missing_agent(trajectory, agent)) is not None:
        return MetricResult(False, missing)
    if (unrecognised := _unrecognised_calls(trajectory)) is not None:
        return MetricResult(False, unrecognised)
    suffix = scope_suffix(agent, include_subagents)
    calls = trajectory.calls(include_failed=True, agent=agent, include_subagents=include_subagents)
    failed = [c for c in calls if c.status == 'failed']
    counted = failed if stages is None else [c for c in failed if c.failure_stage in stages]
    tally = Counter((c.name, c.failure_stage or 'unknown stage') for c in counted)
    listed = ', '.join(f'{name!r} ({stage} x{n})' for (name, stage), n in sorted(tally.items()))
    reason = f'{len(counted)} failed call(s), budget={max_failed}'
    if stages is not None:
        reason += f' (stages: {", ".join(stages)})'
    if listed:
        reason += f': {listed}'
    if len(counted) < len(failed):
        reason += f'; not counted: {len(failed) - len(counted)} failed call(s) at other stages'
    return MetricResult(len(counted) <= max_failed, reason + suffix)
