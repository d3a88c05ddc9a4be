"""ToolPermission, NoLoops and the budgets beyond counts as evaluators: YAML in both forms, construction
errors, agent scoping on real traces, and the same value and reason as the plain functions on real runs."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EvaluationReason, Evaluator
from pydantic_evals.evaluators import MaxDuration as BuiltinMaxDuration
from pydantic_evals.otel import SpanTree
from scenario import SUPPORTED_VERSIONS, run_scenario

from agentic_evals import (
    MaxCost,
    MaxDuration,
    MaxFailedCalls,
    MaxTokens,
    NoLoops,
    ToolPermission,
    Trajectory,
    capture,
    evaluator_context,
    evaluator_types,
    extract_trajectory,
    load_traces,
    max_cost,
    max_duration,
    max_failed_calls,
    max_tokens,
    no_loops,
    tool_permission,
)
from agentic_evals.evaluators._base import NO_SPAN_TREE_REASON
from agentic_evals.offline.matching import without_side_traces

from ..factories import TreeBuilder
from . import read_dataset, write_dataset
from .test_unrecognised import unknown_tree

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / 'fixtures'
FRAMEWORK_TRACES = sorted((FIXTURES / 'frameworks').glob('*/*.otlp.jsonl'))
SCENARIO_TRACES = sorted((FIXTURES / 'scenario').glob('v*.otlp.jsonl'))
SUPPORT_TRACES = sorted((FIXTURES / 'support').glob('*.otlp.jsonl'))


def result(evaluator: Evaluator[object, object, object], tree: object, duration: float = 0.0) -> tuple[Any, Any]:
    outcome = evaluator.evaluate(evaluator_context(tree, name='case', duration=duration))  # type: ignore[arg-type]
    assert isinstance(outcome, EvaluationReason)
    return outcome.value, outcome.reason


def tree_of(path: Path, index: int = 0) -> SpanTree:
    return list(load_traces(path))[index].tree


# -- YAML -------------------------------------------------------------------------------------------

SHORT: list[Evaluator[object, object, object]] = [
    ToolPermission(['search', 'fetch']),
    NoLoops(3),
    MaxTokens(5000),
    MaxCost(0.25),
    MaxDuration(10.5),
    MaxFailedCalls(1),
]
LONG: list[Evaluator[object, object, object]] = [
    ToolPermission(
        forbidden=['delete'],
        agents={'researcher': {'allowed': ['search', 'fetch']}, 'writer': {'forbidden': ['search']}},
        include_failed=False,
        agent='main',
    ),
    ToolPermission(['search'], ['delete'], evaluation_name='tools', conversation='output'),
    NoLoops(max_repeats=1, max_cycle_length=4, max_cycle_repeats=3, include_failed=False, include_subagents=False),
    MaxTokens(max_input=4000, max_output=1000, agent='expert', evaluation_name='expert tokens'),
    MaxCost(0.5, agent='expert', include_subagents=False),
    MaxDuration(30, per_tool={'fetch': 2.5}, per_agent={'expert': 10}, evaluation_name='time'),
    MaxDuration(per_tool={'search': 1}),
    MaxFailedCalls(0, stages=['validation', 'raised'], agent='main', conversation='inputs'),
]


@pytest.mark.parametrize('suffix', ['.yaml', '.json'])
@pytest.mark.parametrize('evaluators', [SHORT, LONG], ids=['short', 'long'])
def test_round_trip(tmp_path: Path, suffix: str, evaluators: list[Evaluator[object, object, object]]) -> None:
    path = tmp_path / f'dataset{suffix}'
    write_dataset(path, evaluators)
    loaded = read_dataset(path)
    assert loaded.evaluators == evaluators
    assert all(type(e).__module__.startswith('agentic_evals.') for e in loaded.evaluators)


def test_the_short_form_is_written_for_the_main_argument(tmp_path: Path) -> None:
    path = tmp_path / 'dataset.yaml'
    write_dataset(path, SHORT)
    text = path.read_text()
    for line in (
        '- ToolPermission:\n  - search\n  - fetch\n',
        '- NoLoops: 3\n',
        '- MaxTokens: 5000\n',
        '- MaxCost: 0.25\n',
        '- MaxDuration: 10.5\n',
        '- MaxFailedCalls: 1\n',
    ):
        assert line in text


def test_hand_written_yaml_in_both_forms() -> None:
    text = """\
name: d
cases:
- name: c
  inputs: x
evaluators:
- NoLoops: 2
- NoLoops
- ToolPermission: [search, fetch]
- ToolPermission:
    forbidden: [delete_account]
    agents:
      researcher: {allowed: [search, fetch]}
- MaxTokens: 8000
- MaxTokens: {max_input: 6000, max_output: 2000, agent: researcher}
- MaxCost: 0.05
- MaxDuration: 30
- MaxDuration: {seconds: 30}
- MaxDuration: {per_tool: {fetch: 5}, per_agent: {researcher: 20}}
- MaxFailedCalls: 2
- MaxFailedCalls: {max_failed: 0, stages: [validation]}
"""
    loaded = Dataset[object, object, object].from_text(text, custom_evaluator_types=evaluator_types())
    assert loaded.evaluators == [
        NoLoops(2),
        NoLoops(),
        ToolPermission(['search', 'fetch']),
        ToolPermission(forbidden=['delete_account'], agents={'researcher': {'allowed': ['search', 'fetch']}}),
        MaxTokens(8000),
        MaxTokens(max_input=6000, max_output=2000, agent='researcher'),
        MaxCost(0.05),
        MaxDuration(30),
        MaxDuration(seconds=30),  # the built-in's own long form loads ours
        MaxDuration(per_tool={'fetch': 5}, per_agent={'researcher': 20}),
        MaxFailedCalls(2),
        MaxFailedCalls(0, stages=['validation']),
    ]
    assert type(loaded.evaluators[8]) is MaxDuration


# -- construction ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('make', 'message'),
    [
        (lambda: ToolPermission(), 'ToolPermission: give allowed, forbidden or agents: with no rule every call is permitted'),
        (lambda: ToolPermission(['a'], ['a']), "ToolPermission: allowed and forbidden: 'a' both allowed and forbidden"),
        (lambda: ToolPermission('search'), "ToolPermission: allowed must be a list of tool names or None, got 'search'"),
        (
            lambda: ToolPermission(forbidden=['rm'], agents={'x': {'allowed': ['rm']}}, include_failed='yes'),
            "ToolPermission: agents['x'].allowed: 'rm' forbidden to every agent; include_failed must be true or false, got 'yes'",
        ),
        (lambda: ToolPermission(agents={'x': {'alowed': ['a']}}), "ToolPermission: agents['x'] takes allowed and/or forbidden, got ['alowed']"),
        (lambda: NoLoops(0), 'NoLoops: max_repeats must be a whole number >= 1, got 0'),
        (lambda: NoLoops(max_cycle_length='3'), "NoLoops: max_cycle_length must be a whole number >= 1, got '3'"),
        (lambda: NoLoops(include_failed=None), 'NoLoops: include_failed must be true or false, got None'),
        (lambda: MaxTokens(), 'MaxTokens: give max_total, max_input or max_output'),
        (lambda: MaxTokens(max_input=-5), 'MaxTokens: max_input must be a whole number >= 0, got -5'),
        (lambda: MaxCost('0.1'), "MaxCost: max_cost must be a number >= 0, got '0.1'"),
        (lambda: MaxCost(math.inf), 'MaxCost: max_cost must be a number >= 0, got inf'),
        (lambda: MaxDuration(), 'MaxDuration: give seconds, per_tool or per_agent'),
        (lambda: MaxDuration(per_tool={'fetch': -1}), "MaxDuration: per_tool['fetch'] must be a number of seconds >= 0, got -1"),
        (lambda: MaxDuration(5, agent=3), 'MaxDuration: agent must be a string or None, got 3'),
        (lambda: MaxFailedCalls(1.5), 'MaxFailedCalls: max_failed must be a whole number >= 0, got 1.5'),
        (lambda: MaxFailedCalls(1, stages=['timeout']), "MaxFailedCalls: stages: 'timeout' is not a failure stage (validation, retry, raised)"),
    ],
)  # fmt: skip
def test_bad_configuration_fails_at_construction(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        make()
    assert str(raised.value) == message


# -- whole reasons on real traces with a sub-agent -------------------------------------------------

PYDANTIC_AI = FIXTURES / 'frameworks' / 'pydantic_ai' / 'scenario.otlp.jsonl'
"""orchestrator: get_weather, flaky (fails, retry), book_trip, ask_expert -> expert: search_docs."""


def test_tool_permission_scoped_to_agents_on_a_real_trace() -> None:
    tree = tree_of(PYDANTIC_AI)
    assert result(ToolPermission(agents={'expert': {'allowed': ['search_docs']}}), tree) == (
        True,
        '5 tool call(s), all permitted',
    )
    assert result(ToolPermission(agents={'orchestrator': {'forbidden': ['search_docs', 'flaky']}}), tree) == (
        False,
        "1 of 5 tool call(s) not permitted: 'flaky' called 1 time(s) by agent 'orchestrator'"
        " (in agents['orchestrator'].forbidden)",
    )
    assert result(ToolPermission(forbidden=['search_docs']), tree) == (
        False,
        "1 of 5 tool call(s) not permitted: 'search_docs' called 1 time(s) by agent 'expert' (in forbidden)",
    )
    assert result(ToolPermission(forbidden=['search_docs'], agent='orchestrator', include_subagents=False), tree) == (
        True,
        "4 tool call(s), all permitted (agent 'orchestrator', sub-agents excluded)",
    )
    assert result(ToolPermission(forbidden=['flaky'], include_failed=False), tree) == (
        True,
        '4 tool call(s), all permitted',
    )
    assert result(ToolPermission(['search_docs'], agent='researcher'), tree) == (
        False,
        "agent 'researcher' not found in the trace; agents seen: ['expert', 'orchestrator']",
    )


def test_no_loops_finds_the_real_regression() -> None:
    """In the regressed support run the agent looked the same order up three times."""
    looping, *_ = [t.tree for t in load_traces(FIXTURES / 'support' / 'regressed.otlp.jsonl')][1:2]
    assert result(NoLoops(), looping) == (
        False,
        "1 loop(s): lookup_order(order_id='B200') made 3 times in a row from call 0 by agent 'support' (max_repeats=2)",
    )
    assert result(NoLoops(3), looping) == (
        True,
        'no loops in 3 call(s) (no call more than 3 time(s) in a row, no cycle of 2-3 calls more than 2 time(s))',
    )
    assert result(NoLoops(agent='billing'), looping) == (
        False,
        "agent 'billing' not found in the trace; agents seen: ['support']",
    )


def test_budgets_scoped_to_agents_on_a_real_trace() -> None:
    tree = tree_of(PYDANTIC_AI)
    assert result(MaxTokens(693), tree) == (
        True,
        '630 input + 63 output = 693 tokens over 6 model request(s), within max_total=693',
    )
    assert result(MaxTokens(max_output=10, agent='expert'), tree) == (
        False,
        "output tokens 11 > max_output=10 (110 input + 11 output = 121 tokens over 2 model request(s)) (agent 'expert')",
    )
    assert result(MaxCost(1.0), tree) == (
        False,
        'cost not recorded on any of the 6 model request(s), so max_cost=1 cannot be checked',
    )
    assert result(MaxFailedCalls(0), tree) == (False, "1 failed call(s), budget=0: 'flaky' (retry x1)")
    assert result(MaxFailedCalls(0, agent='expert'), tree) == (True, "0 failed call(s), budget=0 (agent 'expert')")
    assert result(MaxFailedCalls(0, stages=['raised']), tree) == (
        True,
        '0 failed call(s), budget=0 (stages: raised); not counted: 1 failed call(s) at other stages',
    )
    trajectory = extract_trajectory(tree)
    [expert] = [run for run in trajectory.agents if run.name == 'expert']
    expert_seconds = (expert.end - expert.start).total_seconds()
    assert result(MaxDuration(expert_seconds, agent='expert'), tree)[0] is True
    assert result(MaxDuration(expert_seconds * 0.99, agent='expert'), tree)[0] is False
    assert result(MaxDuration(per_agent={'expert': 0}), tree)[1].startswith(
        "agent 'expert' runs: 1 of 1 over 0s, slowest "
    )


def test_max_cost_on_a_trace_that_records_cost() -> None:
    tree = tree_of(FIXTURES / 'frameworks' / 'crewai' / 'openinference-litellm.otlp.jsonl')
    assert result(MaxCost(0.01), tree) == (True, 'cost 0.002205 over 6 model request(s), within max_cost=0.01')
    assert result(MaxCost(0.002), tree) == (False, 'cost 0.002205 > max_cost=0.002 (over 6 model request(s))')
    assert result(MaxCost(0.00035, agent='expert'), tree) == (
        False,
        "cost 0.000385 > max_cost=0.00035 (over 2 model request(s)) (agent 'expert')",
    )
    assert result(MaxCost(0.002, agent='orchestrator', include_subagents=False), tree) == (
        True,
        "cost 0.00182 over 4 model request(s), within max_cost=0.002 (agent 'orchestrator', sub-agents excluded)",
    )


def test_max_tokens_on_a_trace_without_token_counts() -> None:
    tree = tree_of(FIXTURES / 'frameworks' / 'openai_agents' / 'openllmetry.otlp.jsonl')
    assert result(MaxTokens(10**9), tree) == (False, 'no token usage recorded on the 6 model request(s)')


# -- MaxDuration as the built-in's drop-in ---------------------------------------------------------


def test_max_duration_reads_the_task_duration_as_the_builtin_does() -> None:
    tree = tree_of(PYDANTIC_AI)
    for seconds in (0.5, 2.0):
        ctx = evaluator_context(tree, name='case', duration=1.25)
        assert MaxDuration(seconds).evaluate(ctx).value is BuiltinMaxDuration(seconds).evaluate(ctx)
    assert result(MaxDuration(2), tree, duration=1.25) == (True, 'run took 1.25s (task duration), limit 2s')
    # no span tree is needed for it, as for the built-in; the per-tool limits need one
    missing = evaluator_context(no_tree(), name='case', duration=1.25)
    assert MaxDuration(1).evaluate(missing).reason == 'run took 1.25s (task duration), limit 1s'
    assert MaxDuration(1, per_tool={'x': 1}).evaluate(missing).reason == NO_SPAN_TREE_REASON
    # scoped, the agent's runs are timed from the spans whatever the task took
    assert result(MaxDuration(1, agent='expert'), tree, duration=99.0)[0] is True


def no_tree() -> object:
    from pydantic_evals.otel import SpanTreeRecordingError

    return SpanTreeRecordingError('no tracer provider')


# -- nothing recognised ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    'evaluator',
    [ToolPermission(['x']), NoLoops(), MaxFailedCalls(3), MaxTokens(10), MaxCost(1), MaxDuration(10)],
    ids=lambda e: type(e).__name__,
)
def test_nothing_recognised_fails_saying_so(evaluator: Evaluator[object, object, object]) -> None:
    value, reason = result(evaluator, unknown_tree())
    note = extract_trajectory(unknown_tree()).unrecognised
    assert value is False
    assert note is not None and reason.endswith(note) and reason.count('no agent run') == 1


# -- the evaluators report exactly the plain functions, on real runs -------------------------------

Check = tuple[Evaluator[object, object, object], Callable[[Trajectory], Any]]


def checks_for(trajectory: Trajectory) -> list[Check]:
    """Configurations that hit pass and fail on any trace: built from the tools and agents it has."""
    names = sorted(set(trajectory.call_names(include_failed=True))) or ['a tool no trace calls']
    first, rest = names[:1], names[1:]
    sub = trajectory.agent_names[0]  # some agent of this trace (the sub-agent in most)
    agents = {sub: {'forbidden': rest[:1]}}
    scoped = {'agent': sub}
    own = {'agent': sub, 'include_subagents': False}
    top = {'include_subagents': False}
    return [
        (ToolPermission(forbidden=first), lambda t: tool_permission(t, forbidden=first)),
        (ToolPermission(names[:2]), lambda t: tool_permission(t, names[:2])),
        (ToolPermission(agents=agents), lambda t: tool_permission(t, agents=agents)),
        (ToolPermission(forbidden=first, include_failed=False, **own), lambda t: tool_permission(t, forbidden=first, include_failed=False, **own)),
        (NoLoops(), lambda t: no_loops(t)),
        (NoLoops(1, max_cycle_length=4, max_cycle_repeats=1), lambda t: no_loops(t, 1, max_cycle_length=4, max_cycle_repeats=1)),
        (NoLoops(1, **scoped), lambda t: no_loops(t, 1, **scoped)),
        (NoLoops(1, include_failed=False, **top), lambda t: no_loops(t, 1, include_failed=False, **top)),
        (MaxTokens(500), lambda t: max_tokens(t, 500)),
        (MaxTokens(max_input=100, max_output=10**6, **scoped), lambda t: max_tokens(t, max_input=100, max_output=10**6, **scoped)),
        (MaxTokens(10**6, **own), lambda t: max_tokens(t, 10**6, **own)),
        (MaxCost(0.001), lambda t: max_cost(t, 0.001)),
        (MaxCost(1.0, **scoped), lambda t: max_cost(t, 1.0, **scoped)),
        (MaxDuration(1.0), lambda t: max_duration(t, 1.0)),
        (MaxDuration(0.05, **scoped), lambda t: max_duration(t, 0.05, **scoped)),
        (MaxDuration(per_tool=dict.fromkeys(names, 0.0005)), lambda t: max_duration(t, per_tool=dict.fromkeys(names, 0.0005))),
        (MaxDuration(60, per_agent={sub: 0.01}, **top), lambda t: max_duration(t, 60, per_agent={sub: 0.01}, **top)),
        (MaxFailedCalls(0), lambda t: max_failed_calls(t, 0)),
        (MaxFailedCalls(0, stages=['retry'], **scoped), lambda t: max_failed_calls(t, 0, stages=['retry'], **scoped)),
        (MaxFailedCalls(1, **own), lambda t: max_failed_calls(t, 1, **own)),
    ]  # fmt: skip


def assert_same(tree: SpanTree) -> tuple[int, int]:
    """Every check's evaluator against its function on `tree`; returns (passes, failures) seen."""
    trajectory = extract_trajectory(tree)
    outcomes = []
    for evaluator, function in checks_for(trajectory):
        expected = function(trajectory)
        assert result(evaluator, tree) == (expected.value, expected.reason), evaluator
        outcomes.append(expected.value)
    return outcomes.count(True), outcomes.count(False)


@pytest.mark.parametrize(
    'path', [*FRAMEWORK_TRACES, *SCENARIO_TRACES, *SUPPORT_TRACES], ids=lambda p: f'{p.parent.name}/{p.name}'
)
def test_evaluators_equal_the_functions_on_recorded_runs(path: Path) -> None:
    seen = [assert_same(trace.tree) for trace in without_side_traces(load_traces(path))]
    assert sum(p for p, _ in seen) and sum(f for _, f in seen)  # both outcomes were compared


@pytest.fixture(scope='module')
def live_trees() -> dict[tuple[int, bool], SpanTree]:
    provider = TracerProvider()
    trees: dict[tuple[int, bool], SpanTree] = {}
    for version in SUPPORTED_VERSIONS:
        for content in (True, False):
            with capture(provider) as captured:
                run_scenario(version=version, include_content=content, tracer_provider=provider)
            trees[version, content] = captured.tree
    return trees


@pytest.mark.parametrize('version', SUPPORTED_VERSIONS)
@pytest.mark.parametrize('content', [True, False], ids=['content', 'no-content'])
def test_evaluators_equal_the_functions_on_live_runs(
    live_trees: dict[tuple[int, bool], SpanTree], version: int, content: bool
) -> None:
    passes, failures = assert_same(live_trees[version, content])
    assert passes and failures


@pytest.mark.skipif(
    6 not in SUPPORTED_VERSIONS, reason='the figures are those of the scenario at instrumentation version 6'
)
def test_the_live_scenario_reasons(live_trees: dict[tuple[int, bool], SpanTree]) -> None:
    """main calls check_status twice with the same arguments (a failed attempt, then the retry):
    one retry is allowed; no retry at all flags it. Without content, no arguments are compared."""
    tree = live_trees[6, True]
    assert result(NoLoops(), tree)[0] is True
    assert result(NoLoops(1, max_cycle_length=1), tree) == (
        False,
        "1 loop(s): check_status(service='tracing') made 2 times in a row from call 2 by agent 'main' (max_repeats=1)",
    )
    assert result(NoLoops(1, max_cycle_length=1, include_failed=False), tree)[0] is True
    blind = live_trees[6, False]
    # every call of the run is blind (how many depends on the pydantic-ai version's scenario)
    blind_reason = result(NoLoops(1), blind)[1]
    counted = re.match(r'no loops in (\d+) call\(s\)', blind_reason)
    assert counted is not None
    assert blind_reason.endswith(f'; {counted[1]} call(s) without recorded arguments not compared')
    assert result(MaxFailedCalls(3), tree) == (
        False,
        "4 failed call(s), budget=3: 'check_status' (retry x1), 'compute' (validation x2), 'explode' (raised x1)",
    )
    assert result(ToolPermission(forbidden=['explode']), tree) == (
        False,
        "1 of 14 tool call(s) not permitted: 'explode' called 1 time(s) by agent 'crasher' (in forbidden)",
    )
    # the crasher's request is not main's (token figures are the model's estimates: read them off the run)
    trajectory = extract_trajectory(tree)
    main = trajectory.requests(agent='main')
    used = sum(r.input_tokens + r.output_tokens for r in main)
    assert (len(main), len(trajectory.model_requests)) == (13, 14)
    assert result(MaxTokens(used, agent='main'), tree) == (
        True,
        f'{sum(r.input_tokens for r in main)} input + {sum(r.output_tokens for r in main)} output = {used} tokens'
        f" over 13 model request(s), within max_total={used} (agent 'main')",
    )
    assert result(MaxTokens(used - 1, agent='main'), tree)[0] is False
    everyone = sum(r.input_tokens + r.output_tokens for r in trajectory.model_requests)
    assert result(MaxTokens(everyone), tree)[1].endswith(
        f'= {everyone} tokens over 14 model request(s), within max_total={everyone}'
    )


# -- a conversation --------------------------------------------------------------------------------


def test_budgets_on_a_conversation() -> None:
    from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart
    from pydantic_ai.usage import RequestUsage

    messages = [
        ModelRequest(parts=[UserPromptPart('hi')]),
        ModelResponse(parts=[ToolCallPart('search', {'q': 'x'}, 'c1')], usage=RequestUsage(input_tokens=50, output_tokens=5)),
        ModelRequest(parts=[ToolReturnPart('search', 'found', 'c1')]),
        ModelResponse(parts=[ToolCallPart('search', {'q': 'x'}, 'c2')], usage=RequestUsage(input_tokens=70, output_tokens=5)),
        ModelRequest(parts=[ToolReturnPart('search', 'found', 'c2')]),
    ]  # fmt: skip
    ctx = evaluator_context(TreeBuilder().build(), name='case', output=messages)
    assert MaxTokens(100, conversation='output').evaluate(ctx).reason == (
        'total tokens 130 > max_total=100 (120 input + 10 output = 130 tokens over 2 model request(s))'
    )
    assert MaxCost(1, conversation='output').evaluate(ctx).reason == (
        'cost not recorded on any of the 2 model request(s), so max_cost=1 cannot be checked'
    )
    assert NoLoops(1, conversation='output').evaluate(ctx).reason == (
        "1 loop(s): search(q='x') made 2 times in a row from call 0 by agent 'main' (max_repeats=1)"
    )
    assert ToolPermission(forbidden=['search'], conversation='output', agent='bot').evaluate(ctx).reason == (
        "2 of 2 tool call(s) not permitted: 'search' called 2 time(s) by agent 'bot' (in forbidden) (agent 'bot')"
    )


# -- in a Dataset ------------------------------------------------------------------------------------


def test_in_a_dataset_run() -> None:
    with capture():  # pydantic-evals records from the global provider: this installs one when none is set
        pass

    def task(_: str) -> str:
        run_scenario(version=SUPPORTED_VERSIONS[-1], include_content=True)  # on the global provider
        return 'done'

    dataset = Dataset[str, str, None](
        name='checks',
        cases=[Case(name='scenario', inputs='x')],
        evaluators=[
            ToolPermission(forbidden=['explode'], evaluation_name='permission'),
            NoLoops(),
            MaxTokens(2000),
            MaxDuration(60),
            MaxFailedCalls(4),
        ],
    )
    report = dataset.evaluate_sync(task, progress=False)
    assertions = report.cases[0].assertions
    assert {name: a.value for name, a in assertions.items()} == {
        'permission': False,
        'NoLoops': True,
        'MaxTokens': True,
        'MaxDuration': True,
        'MaxFailedCalls': True,
    }
    assert re.fullmatch(  # the number of calls depends on the pydantic-ai version's scenario
        r"1 of \d+ tool call\(s\) not permitted: 'explode' called 1 time\(s\) by agent 'crasher' \(in forbidden\)",
        str(assertions['permission'].reason),
    )
    assert assertions['MaxDuration'].reason is not None
    assert assertions['MaxDuration'].reason.endswith('s (task duration), limit 60s')
