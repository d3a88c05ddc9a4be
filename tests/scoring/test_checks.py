"""The checks as plain functions: permissions, loops and the budgets, on trajectories built from records.

Whole reasons for each rule, the construction errors, and hypothesis properties: the loop finder
against a brute-force search, permissions independent of call order, budgets monotone in the limit.
"""

from __future__ import annotations

import json
import random
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentic_evals import (
    AgentRun,
    MetricResult,
    ModelRequest,
    ToolCall,
    Trajectory,
    max_cost,
    max_duration,
    max_failed_calls,
    max_tokens,
    no_loops,
    tool_permission,
)
from agentic_evals.scoring.checks import _loops, _primitive

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
MAIN = ('main',)
EXPERT = ('main', 'expert')


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def call(
    name: str,
    args: dict[str, Any] | None = None,
    *,
    path: tuple[str, ...] = MAIN,
    status: str = 'ok',
    stage: str | None = None,
    start: float = 0.0,
    seconds: float = 0.001,
    raw: str | None = None,
) -> ToolCall:
    if args is None and raw is None:
        args = {}
    return ToolCall(
        name=name,
        arguments=args,
        raw_arguments=json.dumps(args) if args is not None else raw,
        arguments_problem=None if args is not None else 'is not valid JSON',
        call_id=None,
        result=None,
        status=status,  # type: ignore[arg-type]
        failure_stage=stage,  # type: ignore[arg-type]
        agent=path[-1] if path else None,
        agent_path=path,
        start=at(start),
        end=at(start + seconds),
        span_id=0,
    )


def unrecorded(name: str, path: tuple[str, ...] = MAIN) -> ToolCall:
    """A call whose arguments were not recorded (content recording off)."""
    return ToolCall(name, None, None, 'not available', None, None, 'ok', None, path[-1], path, T0, T0, 0)


def request(
    input_tokens: int = 0,
    output_tokens: int = 0,
    cost: float | None = None,
    *,
    path: tuple[str, ...] = MAIN,
    start: float = 0.0,
    seconds: float = 0.5,
) -> ModelRequest:
    return ModelRequest(
        'm', 'chat', input_tokens, output_tokens, 0, 0, cost, path[-1], path, at(start), at(start + seconds), 0
    )


def run(path: tuple[str, ...], start: float, seconds: float) -> AgentRun:
    return AgentRun(path[-1], path, 0, at(start), at(start + seconds))


def of(*calls: ToolCall, requests: tuple[ModelRequest, ...] = (), agents: tuple[AgentRun, ...] = ()) -> Trajectory:
    paths = {c.agent_path for c in calls} | {r.agent_path for r in requests}
    runs = agents or tuple(run(p, 0, 0) for p in sorted(paths, key=len))
    return Trajectory(calls, requests, runs)


def named(*names: str, path: tuple[str, ...] = MAIN) -> list[ToolCall]:
    return [call(n, path=path) for n in names]


# -- ToolPermission -----------------------------------------------------------------------------


def delegation() -> Trajectory:
    return of(
        call('search'),
        call('delete', status='failed', stage='raised'),
        call('ask_expert'),
        call('lookup', path=EXPERT),
        call('search', path=EXPERT),
        call('delete'),
    )


def test_tool_permission_names_each_offending_tool_agent_and_count() -> None:
    t = delegation()
    assert tool_permission(t, forbidden=['delete']) == MetricResult(
        False, "2 of 6 tool call(s) not permitted: 'delete' called 2 time(s) by agent 'main' (in forbidden)"
    )
    assert tool_permission(t, forbidden=['delete'], include_failed=False) == MetricResult(
        False, "1 of 5 tool call(s) not permitted: 'delete' called 1 time(s) by agent 'main' (in forbidden)"
    )
    assert tool_permission(t, ['search', 'lookup', 'ask_expert']) == MetricResult(
        False, "2 of 6 tool call(s) not permitted: 'delete' called 2 time(s) by agent 'main' (not in allowed)"
    )
    assert tool_permission(t, agents={'expert': {'allowed': ['lookup']}, 'main': {'forbidden': ['lookup']}}) == (
        MetricResult(
            False,
            "1 of 6 tool call(s) not permitted: 'search' called 1 time(s) by agent 'expert'"
            " (not in agents['expert'].allowed)",
        )
    )
    both = tool_permission(t, forbidden=['delete'], agents={'expert': {'forbidden': ['search']}})
    assert both == MetricResult(
        False,
        "3 of 6 tool call(s) not permitted: 'delete' called 2 time(s) by agent 'main' (in forbidden);"
        " 'search' called 1 time(s) by agent 'expert' (in agents['expert'].forbidden)",
    )


def test_tool_permission_passes_and_scopes() -> None:
    t = delegation()
    assert tool_permission(t, forbidden=['rm']) == MetricResult(True, '6 tool call(s), all permitted')
    # the expert's own calls only: main's forbidden delete is out of scope
    assert tool_permission(t, ['lookup', 'search'], agent='expert') == MetricResult(
        True, "2 tool call(s), all permitted (agent 'expert')"
    )
    assert tool_permission(t, forbidden=['lookup'], include_subagents=False) == MetricResult(
        True, '4 tool call(s), all permitted (top-level agent only)'
    )
    assert tool_permission(t, forbidden=['lookup']).value is False
    assert tool_permission(t, agents={'reseacher': {'forbidden': ['search']}}) == MetricResult(
        True, "6 tool call(s), all permitted; rules for agent(s) not in the trace: 'reseacher'"
    )
    assert tool_permission(t, forbidden=['x'], agent='critic') == MetricResult(
        False, "agent 'critic' not found in the trace; agents seen: ['expert', 'main']"
    )


def test_tool_permission_outside_any_agent_run() -> None:
    t = Trajectory([call('rm', path=())])
    assert tool_permission(t, forbidden=['rm']).reason == (
        "1 of 1 tool call(s) not permitted: 'rm' called 1 time(s) outside any agent run (in forbidden)"
    )


@pytest.mark.parametrize(
    ('kwargs', 'message'),
    [
        ({}, 'give allowed, forbidden or agents: with no rule every call is permitted'),
        ({'allowed': 'search'}, "allowed must be a list of tool names or None, got 'search'"),
        ({'forbidden': [1]}, 'forbidden must hold tool names (strings), got 1'),
        ({'allowed': ['a', 'b'], 'forbidden': ['b']}, "allowed and forbidden: 'b' both allowed and forbidden"),
        ({'agents': ['x']}, "agents must be a mapping of agent names to {allowed, forbidden} rules, got ['x']"),
        ({'agents': {'x': {'allow': ['a']}}}, "agents['x'] takes allowed and/or forbidden, got ['allow']"),
        ({'agents': {'x': {}}}, "agents['x'] takes allowed and/or forbidden, got []"),
        (
            {'agents': {'x': ['a']}},
            "agents['x'] must map an agent name to {allowed: [...], forbidden: [...]}, got ['a']",
        ),
        ({'agents': {'x': {'allowed': 'a'}}}, "agents['x'].allowed must be a list of tool names or None, got 'a'"),
        ({'agents': {'x': {'allowed': ['a'], 'forbidden': ['a']}}}, "agents['x']: 'a' both allowed and forbidden"),
        (
            {'forbidden': ['a'], 'agents': {'x': {'allowed': ['a']}}},
            "agents['x'].allowed: 'a' forbidden to every agent",
        ),
        ({'allowed': ['a'], 'agents': {'x': {'allowed': ['a', 'b']}}}, "agents['x'].allowed: 'b' not in allowed"),
    ],
)
def test_tool_permission_rejects_bad_rules(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        tool_permission(delegation(), **kwargs)
    assert str(raised.value) == message


tool_names = st.sampled_from(['search', 'fetch', 'delete', 'lookup'])
call_lists = st.lists(st.tuples(tool_names, st.sampled_from([MAIN, EXPERT]), st.booleans()), max_size=12)


@given(call_lists, st.randoms(use_true_random=False))
def test_tool_permission_does_not_depend_on_call_order(specs: list[Any], rnd: random.Random) -> None:
    def build(items: list[Any]) -> Trajectory:
        return of(
            *(call(n, path=p, status='failed' if f else 'ok', stage='raised' if f else None) for n, p, f in items),
            agents=(run(MAIN, 0, 1), run(EXPERT, 0, 1)),
        )

    shuffled = list(specs)
    rnd.shuffle(shuffled)
    rules: dict[str, Any] = {'forbidden': ['delete'], 'agents': {'expert': {'allowed': ['lookup', 'search']}}}
    assert tool_permission(build(specs), **rules) == tool_permission(build(shuffled), **rules)
    assert tool_permission(build(specs), ['search', 'fetch']) == tool_permission(build(shuffled), ['search', 'fetch'])


# -- NoLoops ------------------------------------------------------------------------------------


def test_no_loops_names_a_repeated_call() -> None:
    t = of(call('search', {'q': 'a'}), *[call('lookup', {'id': 'B200'})] * 3, call('answer'))
    assert no_loops(t) == MetricResult(
        False, "1 loop(s): lookup(id='B200') made 3 times in a row from call 1 by agent 'main' (max_repeats=2)"
    )
    assert no_loops(t, 3).value is True
    assert no_loops(t, 3).reason == (
        'no loops in 5 call(s) (no call more than 3 time(s) in a row, no cycle of 2-3 calls more than 2 time(s))'
    )


def test_arguments_make_calls_different_and_compare_canonically() -> None:
    progress = of(*(call('lookup', {'page': i}) for i in range(5)))
    assert no_loops(progress).value is True
    same = of(call('f', {'a': 1, 'b': [1.0]}), call('f', {'b': [1], 'a': 1.0}), call('f', {'b': [1], 'a': 1}))
    assert no_loops(same).reason == (
        "1 loop(s): f(a=1, b=[1.0]) made 3 times in a row from call 0 by agent 'main' (max_repeats=2)"
    )
    typed = of(call('f', {'a': 1}), call('f', {'a': '1'}), call('f', {'a': True}))
    assert no_loops(typed).value is True


def test_no_loops_names_a_cycle() -> None:
    t = of(call('plan'), *[call('search', {'q': 'x'}), call('fetch', {'url': 'u'})] * 3, call('search', {'q': 'x'}))
    assert no_loops(t) == MetricResult(
        False,
        "1 loop(s): cycle search(q='x') -> fetch(url='u') made 3 times in a row from call 1 by agent 'main'"
        ' (max_cycle_repeats=2)',
    )
    assert no_loops(t, max_cycle_repeats=3).value is True
    assert no_loops(t, max_cycle_length=1).reason == (
        'no loops in 8 call(s) (no call more than 2 time(s) in a row, cycles not checked)'
    )
    triple = of(*named('a', 'b', 'c') * 3)
    assert no_loops(triple).reason == (
        "1 loop(s): cycle a() -> b() -> c() made 3 times in a row from call 0 by agent 'main' (max_cycle_repeats=2)"
    )
    assert no_loops(triple, max_cycle_length=2).value is True


def test_a_repeated_call_is_not_also_a_cycle() -> None:
    """`a a a a a a` is one call made six times, not the cycle `a a` made three times."""
    assert no_loops(of(*named('a') * 6)).reason == (
        "1 loop(s): a() made 6 times in a row from call 0 by agent 'main' (max_repeats=2)"
    )
    # a b a b a b a b is the 2-cycle, not also the 4-cycle a b a b twice
    assert no_loops(of(*named('a', 'b') * 4), max_cycle_length=4, max_cycle_repeats=1).reason == (
        "1 loop(s): cycle a() -> b() made 4 times in a row from call 0 by agent 'main' (max_cycle_repeats=1)"
    )


def test_each_agent_loops_on_its_own() -> None:
    """The expert's calls in between do not break main's loop, and do not join it either."""
    interleaved = [c for _ in range(3) for c in (call('ask', {'q': 1}), call('lookup', {'k': 'x'}, path=EXPERT))]
    t = of(*interleaved)
    assert no_loops(t) == MetricResult(
        False,
        "2 loop(s): ask(q=1) made 3 times in a row from call 0 by agent 'main' (max_repeats=2);"
        " lookup(k='x') made 3 times in a row from call 1 by agent 'expert' (max_repeats=2)",
    )
    assert no_loops(t, agent='expert').reason == (
        "1 loop(s): lookup(k='x') made 3 times in a row from call 0 by agent 'expert' (max_repeats=2) (agent 'expert')"
    )
    assert no_loops(t, include_subagents=False).reason == (
        "1 loop(s): ask(q=1) made 3 times in a row from call 0 by agent 'main' (max_repeats=2) (top-level agent only)"
    )


def test_failed_attempts_and_unreadable_arguments() -> None:
    retried = of(*[call('pay', {'id': 1}, status='failed', stage='retry')] * 3, call('pay', {'id': 1}))
    assert no_loops(retried).value is False
    assert no_loops(retried, include_failed=False).value is True
    # the same invalid JSON sent again and again is a loop; unrecorded arguments compare to nothing
    broken = of(*[call('add', raw='{"a": 1,')] * 3)
    assert no_loops(broken).reason == (
        """1 loop(s): add(<arguments '{"a": 1,'>) made 3 times in a row from call 0 by agent 'main' (max_repeats=2)"""
    )
    blind = of(*[unrecorded('search')] * 4)
    assert no_loops(blind) == MetricResult(
        True,
        'no loops in 4 call(s) (no call more than 2 time(s) in a row, no cycle of 2-3 calls more than 2 time(s));'
        ' 4 call(s) without recorded arguments not compared',
    )


def test_many_loops_are_cut_short() -> None:
    t = of(*[c for name in 'abcdefg' for c in named(name) * 3])
    reason = no_loops(t).reason
    assert reason.startswith("7 loop(s): a() made 3 times in a row from call 0 by agent 'main' (max_repeats=2); b()")
    assert reason.endswith("e() made 3 times in a row from call 12 by agent 'main' (max_repeats=2); and 2 more")


@pytest.mark.parametrize(
    ('kwargs', 'message'),
    [
        ({'max_repeats': 0}, 'max_repeats must be a whole number >= 1, got 0'),
        ({'max_cycle_length': 2.5}, 'max_cycle_length must be a whole number >= 1, got 2.5'),
        ({'max_cycle_repeats': True}, 'max_cycle_repeats must be a whole number >= 1, got True'),
    ],
)
def test_no_loops_rejects_bad_limits(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        no_loops(of(), **kwargs)
    assert str(raised.value) == message


def _brute_force_loops(sequence: list[int], limits: list[int]) -> set[tuple[int, int]]:
    """Every (start, length) at which a primitive block of `length` occurs more than its limit in a row."""
    found = set()
    for length, limit in enumerate(limits, start=1):
        for start in range(len(sequence)):
            block = sequence[start : start + length]
            if len(block) < length or (length > 1 and not _primitive(block)):
                continue
            times = 1
            while sequence[start + times * length : start + (times + 1) * length] == block:
                times += 1
            if times > limit:
                found.add((start, length))
    return found


@given(st.lists(st.integers(0, 2), max_size=24), st.lists(st.integers(1, 3), min_size=1, max_size=4))
def test_the_loop_finder_agrees_with_a_brute_force_search(sequence: list[int], limits: list[int]) -> None:
    loops = _loops(sequence, list(range(len(sequence))), named(*map(str, sequence)), limits)
    for loop in loops:  # each reported loop is one: a primitive block repeated more than allowed
        block = sequence[loop.start : loop.start + loop.length]
        assert sequence[loop.start : loop.start + loop.length * loop.times] == block * loop.times
        assert loop.times > limits[loop.length - 1] and (loop.length == 1 or _primitive(block))
        assert sequence[loop.start + loop.length * loop.times :][: loop.length] != block  # counted to its end
    # and every loop the brute force finds lies inside a reported one of the same length
    for start, length in _brute_force_loops(sequence, limits):
        assert any(
            loop.length == length and loop.start <= start and start + length <= loop.start + loop.length * loop.times
            for loop in loops
        ), (start, length)


def _no_equal_neighbours(items: list[str]) -> list[str] | None:
    """`items` rearranged so that no two neighbours are equal (most frequent first), or `None`."""
    left = {name: items.count(name) for name in set(items)}
    out: list[str] = []
    while left:
        options = sorted((n for n in left if not out or n != out[-1]), key=lambda n: (-left[n], n))
        if not options:
            return None
        out.append(options[0])
        left[options[0]] -= 1
        if not left[options[0]]:
            del left[options[0]]
    return out


@given(st.lists(st.sampled_from(['a', 'b', 'c']), max_size=15))
def test_calls_with_no_equal_neighbours_never_repeat(items: list[str]) -> None:
    arranged = _no_equal_neighbours(items)
    if arranged is None:
        return
    assert no_loops(of(*named(*arranged)), 1, max_cycle_length=1) == MetricResult(
        True, f'no loops in {len(items)} call(s) (no call more than 1 time(s) in a row, cycles not checked)'
    )
    # with cycles looked for too, whatever is found is a cycle, never a repeated call
    sequence = [ord(name) for name in arranged]
    loops = _loops(sequence, list(range(len(sequence))), named(*arranged), [1, 1, 1])
    assert all(loop.length > 1 for loop in loops)
    # and the same calls, sorted so that equal ones are side by side, repeat
    if len(set(items)) < len(items):
        assert any(loop.length == 1 for loop in _loops(sorted(sequence), list(range(len(items))), named(*sorted(arranged)), [1]))  # fmt: skip


def test_no_loops_is_linear_on_long_trajectories() -> None:
    """3,000 calls, the worst shapes for each cycle length: well under a second, not minutes."""
    shapes = {
        'one call': named('a') * 3000,
        'a 2-cycle': named('a', 'b') * 1500,
        'a 3-cycle': named('a', 'b', 'c') * 1000,
        'progress': [call('page', {'n': i}) for i in range(3000)],
    }
    for shape, calls in shapes.items():
        t = of(*calls)
        started = time.perf_counter()
        result = no_loops(t, max_cycle_length=10)
        assert time.perf_counter() - started < 1.0, shape
        assert result.value is (shape == 'progress'), result.reason


# -- MaxTokens ----------------------------------------------------------------------------------


def spending() -> Trajectory:
    return of(
        call('search'),
        call('lookup', path=EXPERT),
        requests=(request(100, 20, 0.01), request(300, 50, 0.02, path=EXPERT), request(200, 30, None)),
    )


def test_max_tokens_names_the_limits_that_broke() -> None:
    t = spending()
    assert max_tokens(t, 700) == MetricResult(
        True, '600 input + 100 output = 700 tokens over 3 model request(s), within max_total=700'
    )
    assert max_tokens(t, 699, max_input=500, max_output=100) == MetricResult(
        False,
        'total tokens 700 > max_total=699; input tokens 600 > max_input=500'
        ' (600 input + 100 output = 700 tokens over 3 model request(s))',
    )
    assert max_tokens(t, max_output=40, agent='expert') == MetricResult(
        False,
        "output tokens 50 > max_output=40 (300 input + 50 output = 350 tokens over 1 model request(s)) (agent 'expert')",
    )
    assert max_tokens(t, max_input=300, include_subagents=False) == MetricResult(
        True, '300 input + 50 output = 350 tokens over 2 model request(s), within max_input=300 (top-level agent only)'
    )


def test_max_tokens_never_passes_on_unrecorded_usage() -> None:
    assert max_tokens(of(call('a'), requests=(request(), request())), 10) == MetricResult(
        False, 'no token usage recorded on the 2 model request(s)'
    )
    assert max_tokens(of(call('a')), 10) == MetricResult(False, 'no model request recorded, so no tokens to check')
    partial = of(requests=(request(5, 1), request()))
    assert max_tokens(partial, 10).reason == (
        '5 input + 1 output = 6 tokens over 2 model request(s) (1 with no token usage recorded), within max_total=10'
    )


@pytest.mark.parametrize(
    ('args', 'kwargs', 'message'),
    [
        ((), {}, 'give max_total, max_input or max_output'),
        ((-1,), {}, 'max_total must be a whole number >= 0, got -1'),
        ((), {'max_input': 1.5}, 'max_input must be a whole number >= 0, got 1.5'),
        ((), {'max_output': '10'}, "max_output must be a whole number >= 0, got '10'"),
    ],
)
def test_max_tokens_rejects_bad_limits(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        max_tokens(spending(), *args, **kwargs)
    assert str(raised.value) == message


# -- MaxCost ------------------------------------------------------------------------------------


def test_max_cost_sums_what_was_recorded_and_says_what_was_not() -> None:
    t = spending()
    assert max_cost(t, 0.03) == MetricResult(
        True, 'cost 0.03 over 2 model request(s), not recorded on 1 more, within max_cost=0.03'
    )
    assert max_cost(t, 0.025) == MetricResult(
        False, 'cost 0.03 > max_cost=0.025 (over 2 model request(s), not recorded on 1 more)'
    )
    assert max_cost(t, 0.01, agent='expert') == MetricResult(
        False, "cost 0.02 > max_cost=0.01 (over 1 model request(s)) (agent 'expert')"
    )
    assert max_cost(of(requests=(request(1, 1), request(1, 1))), 1) == MetricResult(
        False, 'cost not recorded on any of the 2 model request(s), so max_cost=1 cannot be checked'
    )
    assert max_cost(of(call('a')), 1) == MetricResult(
        False, 'no model request recorded, so no cost to check against max_cost=1'
    )


@pytest.mark.parametrize('bad', [-0.5, float('nan'), float('inf'), '1', None, True])
def test_max_cost_rejects_bad_budgets(bad: object) -> None:
    with pytest.raises(ValueError) as raised:
        max_cost(spending(), bad)  # type: ignore[arg-type]
    assert str(raised.value) == f'max_cost must be a number >= 0, got {bad!r}'


# -- MaxDuration --------------------------------------------------------------------------------


def timed() -> Trajectory:
    """main runs 0-10s and again 20-25s; the expert runs 2-6s; fetch is slow once."""
    return of(
        call('search', start=1, seconds=0.5),
        call('fetch', start=2, seconds=3.25),
        call('fetch', start=6, seconds=0.5, status='failed', stage='raised'),
        call('lookup', path=EXPERT, start=3, seconds=1.5),
        call('fetch', start=21, seconds=0.25),
        requests=(request(start=0.5, seconds=0.25), request(start=25, seconds=1.5)),
        agents=(run(MAIN, 0, 10), run(EXPERT, 2, 4), run(MAIN, 20, 5)),
    )


def test_max_duration_of_the_run() -> None:
    t = timed()
    # unscoped: every span; the last request ends after the last run
    assert max_duration(t, 30) == MetricResult(True, 'run took 26.5s (first span start to last end), limit 30s')
    assert max_duration(t, 26) == MetricResult(False, 'run took 26.5s (first span start to last end), limit 26s')
    assert max_duration(t, timedelta(seconds=27)).value is True
    assert max_duration(t, 4, agent='expert') == MetricResult(
        True, "run took 4s (1 agent run(s)), limit 4s (agent 'expert')"
    )
    assert max_duration(t, 20, agent='main', include_subagents=False) == MetricResult(
        False, "run took 25s (2 agent run(s)), limit 20s (agent 'main', sub-agents excluded)"
    )
    # a measured run time replaces the spans' extent when unscoped, and only then
    assert max_duration(t, 30, run_duration=31.25) == MetricResult(False, 'run took 31.25s (task duration), limit 30s')
    assert max_duration(t, 5, run_duration=31.25, agent='expert').value is True


def test_max_duration_per_tool_and_per_agent_name_the_slowest() -> None:
    t = timed()
    assert max_duration(t, per_tool={'fetch': 1, 'search': 1}, per_agent={'expert': 5, 'main': 9}) == MetricResult(
        False,
        "'fetch' calls: 1 of 3 over 1s, slowest 3.25s (call 1 by agent 'main'); agent 'main' runs: 1 of 2 over 9s,"
        ' slowest 10s (run 1 of 2)',
    )
    assert max_duration(t, 30, per_tool={'fetch': 4, 'absent': 1}, per_agent={'expert': 5}) == MetricResult(
        True,
        "run took 26.5s (first span start to last end), limit 30s; 'fetch' calls: 3 within 4s, slowest 3.25s;"
        " 'absent' calls: none; agent 'expert' runs: 1 within 5s, slowest 4s",
    )
    assert max_duration(t, per_tool={'fetch': 0.3}, agent='main', include_subagents=False).reason == (
        "'fetch' calls: 2 of 3 over 0.3s, slowest 3.25s (call 1 by agent 'main') (agent 'main', sub-agents excluded)"
    )


def test_max_duration_without_agent_runs_times_the_calls_and_requests() -> None:
    t = Trajectory([call('a', start=1, seconds=1), call('b', start=4, seconds=1)], [request(start=0, seconds=0.5)])
    assert max_duration(t, 5).reason == 'run took 5s (first span start to last end), limit 5s'
    assert max_duration(Trajectory(), 5) == MetricResult(False, 'no run time to check: nothing in scope was timed')


@pytest.mark.parametrize(
    ('args', 'kwargs', 'message'),
    [
        ((), {}, 'give seconds, per_tool or per_agent'),
        ((-1,), {}, 'seconds must be a number >= 0 or None, got -1'),
        ((timedelta(seconds=-1),), {}, 'seconds must be >= 0, got datetime.timedelta(days=-1, seconds=86399)'),
        ((), {'per_tool': ['fetch']}, "per_tool must be a mapping of tool names to seconds, got ['fetch']"),
        ((), {'per_agent': {'x': 'slow'}}, "per_agent['x'] must be a number of seconds >= 0, got 'slow'"),
    ],
)
def test_max_duration_rejects_bad_limits(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        max_duration(timed(), *args, **kwargs)
    assert str(raised.value) == message


# -- MaxFailedCalls -----------------------------------------------------------------------------


def failing() -> Trajectory:
    return of(
        call('compute', status='failed', stage='validation'),
        call('compute', status='failed', stage='validation'),
        call('compute'),
        call('check', status='failed', stage='retry'),
        call('lookup', path=EXPERT, status='failed', stage=None),
        call('run_job', status='deferred'),
    )


def test_max_failed_calls_lists_them_by_tool_and_stage() -> None:
    t = failing()
    assert max_failed_calls(t, 3) == MetricResult(
        False,
        "4 failed call(s), budget=3: 'check' (retry x1), 'compute' (validation x2), 'lookup' (unknown stage x1)",
    )
    assert max_failed_calls(t, 1, stages=['retry', 'raised']) == MetricResult(
        True,
        "1 failed call(s), budget=1 (stages: retry, raised): 'check' (retry x1);"
        ' not counted: 3 failed call(s) at other stages',
    )
    assert max_failed_calls(t, 0, agent='expert') == MetricResult(
        False, "1 failed call(s), budget=0: 'lookup' (unknown stage x1) (agent 'expert')"
    )
    assert max_failed_calls(of(call('a')), 0) == MetricResult(True, '0 failed call(s), budget=0')


@pytest.mark.parametrize(
    ('args', 'kwargs', 'message'),
    [
        ((-1,), {}, 'max_failed must be a whole number >= 0, got -1'),
        (
            (1,),
            {'stages': 'retry'},
            "stages must be a non-empty list of validation, retry, raised or None, got 'retry'",
        ),
        ((1,), {'stages': []}, 'stages must be a non-empty list of validation, retry, raised or None, got []'),
        ((1,), {'stages': ['retried']}, "stages: 'retried' is not a failure stage (validation, retry, raised)"),
    ],
)
def test_max_failed_calls_rejects_bad_options(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        max_failed_calls(failing(), *args, **kwargs)
    assert str(raised.value) == message


# -- budgets are monotone in their limit ----------------------------------------------------------

usage = st.lists(
    st.tuples(st.integers(0, 500), st.integers(0, 500), st.one_of(st.none(), st.floats(0, 1)), st.booleans()),
    max_size=6,
)


@given(usage, st.integers(0, 3000), st.integers(0, 3000))
def test_token_and_cost_budgets_are_monotone(rows: list[Any], low: int, high: int) -> None:
    low, high = sorted((low, high))
    t = of(requests=tuple(request(i, o, c, path=EXPERT if sub else MAIN) for i, o, c, sub in rows))
    for kwargs in ({}, {'agent': 'expert'}, {'include_subagents': False}):
        if t.has_agent('expert') or 'agent' not in kwargs:
            for limit in ('max_total', 'max_input', 'max_output'):
                if max_tokens(t, **{limit: low}, **kwargs).value:
                    assert max_tokens(t, **{limit: high}, **kwargs).value
            if max_cost(t, low / 1000, **kwargs).value:
                assert max_cost(t, high / 1000, **kwargs).value


failures = st.lists(st.tuples(st.sampled_from(['validation', 'retry', 'raised', None]), st.booleans()), max_size=8)


@given(failures, st.integers(0, 8), st.integers(0, 8), st.floats(0, 10), st.floats(0, 10))
def test_failure_and_duration_budgets_are_monotone(
    rows: list[Any], low: int, high: int, fast: float, slow: float
) -> None:
    low, high = sorted((low, high))
    fast, slow = sorted((fast, slow))
    calls = [
        call('t', status='ok' if stage is None and ok else 'failed', stage=stage, start=i, seconds=i / 3)
        for i, (stage, ok) in enumerate(rows)
    ]
    t = of(*calls)
    for stages in (None, ['retry'], ['validation', 'raised']):
        if max_failed_calls(t, low, stages=stages).value:  # type: ignore[arg-type]
            assert max_failed_calls(t, high, stages=stages).value  # type: ignore[arg-type]
    for kwargs in ({'seconds': fast}, {'per_tool': {'t': fast}}, {'per_agent': {'main': fast}}):
        if max_duration(t, **kwargs).value:  # type: ignore[arg-type]
            looser = {k: slow if k == 'seconds' else {name: slow for name in v} for k, v in kwargs.items()}  # type: ignore[union-attr]
            assert max_duration(t, **looser).value  # type: ignore[arg-type]


def test_a_permission_reason_stays_short_on_thousands_of_broken_calls() -> None:
    from agentic_evals import trajectory_from_messages

    calls = [{'id': str(i), 'type': 'function', 'function': {'name': f't{i}', 'arguments': '{}'}} for i in range(3000)]
    messages = [{'role': 'assistant', 'tool_calls': calls}]
    messages += [{'role': 'tool', 'tool_call_id': str(i), 'content': ''} for i in range(3000)]
    result = tool_permission(trajectory_from_messages(messages), allowed=['t0'])
    assert result.value is False
    assert len(result.reason) < 600
    assert result.reason.endswith('; and 2994 more')
    long_name = 'x' * 100_000
    calls = [{'id': '1', 'type': 'function', 'function': {'name': long_name, 'arguments': '{}'}}]
    messages = [{'role': 'assistant', 'tool_calls': calls}, {'role': 'tool', 'tool_call_id': '1', 'content': ''}]
    assert len(tool_permission(trajectory_from_messages(messages), forbidden=[long_name]).reason) < 400
