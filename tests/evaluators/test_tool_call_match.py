"""`ToolCallMatch` the evaluator: the same values and reasons as `tool_call_match` on real traces,
agent scoping, `strict` on the responses real spans record, the YAML forms, and the pass
`threshold` of the score evaluators through a real `Dataset.evaluate`."""

from __future__ import annotations

import dataclasses
import math
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EvaluationReason, Evaluator
from pydantic_evals.otel import SpanTreeRecordingError

import agentic_evals as ae
from agentic_evals import (
    ToolCallAccuracy,
    ToolCallF1,
    ToolCallMatch,
    Trajectory,
    TrajectoryMatch,
    capture,
    evaluator_context,
    evaluator_types,
    extract_trajectory,
    load_traces,
    tool_call_match,
)

from ..real_runs import EXPECTED_REQUESTS
from ..real_runs import expected_calls as scenario_rows
from . import read_dataset, write_dataset

FRAMEWORKS = Path(__file__).resolve().parents[2] / 'fixtures' / 'frameworks'
FILES = sorted(str(path.relative_to(FRAMEWORKS)) for path in FRAMEWORKS.glob('*/*.otlp.jsonl'))
TRIP = {'city': 'Paris', 'dates': {'from': '2026-05-01', 'to': '2026-05-03'}, 'travellers': 2}


def tree_from(path: Path) -> Any:
    """The run a fixture file records: its largest trace (beside it, a file may hold side traces, or
    an unpropagated sub-agent's run)."""
    return max((trace.tree for trace in load_traces(path)), key=lambda tree: len(tree.nodes_by_id))


def tree_of(file: str) -> Any:
    return tree_from(FRAMEWORKS / file)


# -- the function equals the evaluator on real traces -----------------------------------------------------

CONFIGS: dict[str, dict[str, Any]] = {
    'in order, names only': {
        'expected_calls': [{'name': 'get_weather'}, {'name': 'book_trip'}, {'name': 'search_docs'}],
        'mode': 'in_order',
    },
    'strict, flat': {
        'expected_calls': [
            {'name': 'get_weather', 'arguments': {'city': 'Paris'}},
            {'name': 'book_trip', 'arguments': {'trip': TRIP}},
            {'name': 'ask_expert', 'arguments': {'question': 'what is otel?'}},
            {'name': 'search_docs', 'arguments': {'query': 'otel'}},
        ]
    },
    'strict, the parallel calls swapped, failed ones in': {
        'expected_calls': [{'name': 'flaky'}, {'name': 'get_weather'}, {'name': 'book_trip'}, {'name': 'ask_expert'}],
        'include_failed': True,
        'agent': 'orchestrator',
        'include_subagents': False,
    },
    'strict, one call moved into the wrong response': {
        'expected_calls': [{'name': 'get_weather'}, {'name': 'book_trip'}, {'name': 'flaky'}, {'name': 'ask_expert'}],
        'include_failed': True,
        'agent': 'orchestrator',
        'include_subagents': False,
    },
    'superset with rules on nested keys': {
        'expected_calls': [{'name': 'book_trip', 'arguments': {'trip': {'city': 'paris', 'travellers': 2.4}}}],
        'mode': 'superset',
        'arguments': 'superset',
        'argument_rules': {'book_trip': {'trip.city': {'ignore_case': True}, 'trip.travellers': {'abs': 0.5}}},
    },
    'unordered, extra expected': {
        'expected_calls': [{'name': 'search_docs'}, {'name': 'get_weather'}, {'name': 'refund'}],
        'mode': 'unordered',
        'arguments': 'ignore',
    },
    'the expert alone': {
        'expected_calls': [{'name': 'search_docs', 'arguments': {'query': 'otel'}}],
        'agent': 'expert',
    },
    'the expert, other arguments': {
        'expected_calls': [{'name': 'search_docs', 'arguments': {'query': 'OTel'}}],
        'agent': 'expert',
        'mode': 'subset',
    },
    'an agent that is not there': {'expected_calls': [], 'agent': 'nobody'},
    'subset, top level only': {
        'expected_calls': [{'name': 'get_weather'}, {'name': 'book_trip'}, {'name': 'ask_expert'}, {'name': 'x'}],
        'mode': 'subset',
        'include_subagents': False,
    },
    'per turn': {
        'expected_calls': [
            [{'name': 'get_weather'}, {'name': 'book_trip'}, {'name': 'ask_expert'}, {'name': 'search_docs'}]
        ],
        'mode': 'superset',
    },
    'per turn, a turn too many': {
        'expected_calls': [[{'name': 'get_weather'}], [{'name': 'book_trip'}]],
        'mode': 'superset',
    },
}
OPTIONS = ('include_failed', 'agent', 'include_subagents')


@pytest.mark.parametrize('config', list(CONFIGS))
@pytest.mark.parametrize('file', FILES)
def test_the_function_gives_what_the_evaluator_gives(file: str, config: str) -> None:
    tree = tree_of(file)
    options = CONFIGS[config]
    evaluated = ToolCallMatch(**options).evaluate(evaluator_context(tree))
    assert isinstance(evaluated, EvaluationReason)
    computed = tool_call_match(extract_trajectory(tree), **options)
    assert (evaluated.value, evaluated.reason) == (computed.value, computed.reason)
    assert type(evaluated.value) is type(computed.value)


# what the scenario (fixtures/frameworks/SCENARIO.md) must score; the routes that cannot record
# something say what differs
SCENARIO_VALUES: dict[str, Any] = {
    'in order, names only': True,
    'strict, flat': True,
    'strict, the parallel calls swapped, failed ones in': True,  # one response issued both: a multiset
    'strict, one call moved into the wrong response': False,
    'superset with rules on nested keys': True,
    'unordered, extra expected': False,
    'the expert alone': True,
    'the expert, other arguments': False,
    'an agent that is not there': False,
    'subset, top level only': True,
    'per turn': 1.0,
    'per turn, a turn too many': 0.5,
}
DIFFERENCES: dict[str, dict[str, Any]] = {
    # no model spans: strict compares the calls one by one, in the order they ran
    'crewai/openinference.otlp.jsonl': {'strict, the parallel calls swapped, failed ones in': False},
    # no content: no arguments to compare
    'google_adk/v2-no-content.otlp.jsonl': {
        'strict, flat': False,
        'superset with rules on nested keys': False,
        'the expert alone': False,
    },
    # no content (Haystack 3): no arguments to compare
    'haystack3/otel-no-content.otlp.jsonl': {
        'strict, flat': False,
        'superset with rules on nested keys': False,
        'the expert alone': False,
    },
    # ... and without content no call at all: no verdict on the calls (nothing passes on their absence)
    'haystack/otel-no-content.otlp.jsonl': {
        'in order, names only': False,
        'strict, flat': False,
        'strict, the parallel calls swapped, failed ones in': False,
        'superset with rules on nested keys': False,
        'the expert alone': False,
        'subset, top level only': False,
        'per turn': 0.0,
        'per turn, a turn too many': 0.0,
    },
    # the unpropagated sub-agent's run is a trace of its own: the orchestrator's holds no search_docs
    **{
        f'langgraph_js/openinference-unpropagated.{encoding}.otlp.jsonl': {
            'in order, names only': False,
            'strict, flat': False,
            'the expert alone': False,
            'per turn': 0.0,
        }
        for encoding in ('sdk', 'collector')
    },
    # DSPy's ReAct issues one call per response: strict sees two responses where the scenario has one
    **{
        f'dspy/openinference{route}.otlp.jsonl': {
            'strict, the parallel calls swapped, failed ones in': False,
            'the expert alone': False,
        }
        for route in ('', '-litellm', '-litellm-async')
    },
}
RENAMED_EXPERT = ('autogen/', 'mastra/', 'smolagents/')
"""Frameworks whose sub-agent call is not `ask_expert{question}` (`expert{task}`, `agent-expert{prompt}`, a
managed agent with `final_answer` calls): their own tests score them."""
SCENARIO_FILES = [f for f in FILES if not f.startswith(RENAMED_EXPERT)]


@pytest.mark.parametrize('file', SCENARIO_FILES)
def test_what_the_scenario_scores_on_every_route(file: str) -> None:
    trajectory = extract_trajectory(tree_of(file))
    values = {name: tool_call_match(trajectory, **options).value for name, options in CONFIGS.items()}
    assert values == {**SCENARIO_VALUES, **DIFFERENCES.get(file, {})}


def test_reasons_on_the_pydantic_ai_trace() -> None:
    trajectory = extract_trajectory(tree_of('pydantic_ai/scenario.otlp.jsonl'))

    def reason(config: str) -> str:
        return tool_call_match(trajectory, **CONFIGS[config]).reason

    assert reason('strict, the parallel calls swapped, failed ones in') == (
        'match (strict, arguments exact): 4 expected, 4 actual call(s); paired: flaky(...) ~ flaky(attempt=1),'
        " get_weather(...) ~ get_weather(city='Paris'), book_trip(...) ~ book_trip(trip={'city': 'Paris', 'dates':"
        " {'from': '2026-05-01', 'to': '...), ask_expert(...) ~ ask_expert(question='what is otel?')"
        " (agent 'orchestrator', sub-agents excluded)"
    )
    assert reason('strict, one call moved into the wrong response').startswith(
        'no match (strict, arguments exact): response 1: expected get_weather(...), book_trip(...);'
        " got get_weather(city='Paris'), flaky(attempt=1); paired: "
    )
    assert reason('the expert, other arguments') == (
        # subset leaves expected calls over, and still lists them
        "no match (subset, arguments exact): 1 of 1 call(s) not expected; missing: search_docs(query='OTel');"
        " extra: search_docs(query='otel');"
        " argument mismatches: search_docs(query='OTel') vs search_docs(query='otel'): key 'query': expected 'OTel',"
        " got 'otel' (agent 'expert')"
    )
    assert reason('an agent that is not there') == (
        "agent 'nobody' not found in the trace; agents seen: ['expert', 'orchestrator']"
    )
    assert reason('per turn, a turn too many') == (
        '2 turn(s), 1 fully matched, mean=0.500; turn 1: match (superset, arguments exact): 1 expected, 4 actual'
        " call(s); paired: get_weather(...) ~ get_weather(city='Paris'); extra: book_trip(trip={'city': 'Paris',"
        " 'dates': {'from': '2026-05-01', 'to': '...), ask_expert(question='what is otel?'),"
        " search_docs(query='otel'); turn 2: expected, but the conversation has 1 turn(s)"
    )


# -- the scripted pydantic-ai scenario, every instrumentation version ----------------------------------

SCENARIO = sorted((FRAMEWORKS.parent / 'scenario').glob('v*.otlp.jsonl'))


def scenario_responses(content: bool, path: tuple[str, ...] | None = None) -> list[list[tuple[str, Any]]]:
    """The scenario's model responses (`real_runs.EXPECTED_REQUESTS`), each with the calls it issued
    (`real_runs.expected_calls`: failed attempts in, deferred calls and the output function out)."""
    rows = scenario_rows(content, validation_spans=True, retry_cause=True)
    responses: list[list[tuple[str, Any]]] = [[] for _ in EXPECTED_REQUESTS]
    for name, status, _, _, arguments, output, issued_by in rows:
        if status != 'deferred' and not output:
            responses[issued_by].append((name, arguments))
    return [
        group
        for group, (_, agent_path) in zip(responses, EXPECTED_REQUESTS, strict=True)
        if path is None or agent_path == path
    ]


def chat(responses: list[list[tuple[str, Any]]]) -> list[dict[str, Any]]:
    """The responses as an OpenAI chat conversation (arguments left out: compared with `ignore`)."""
    messages: list[dict[str, Any]] = [{'role': 'user', 'content': 'Write a short report.'}]
    for number, calls in enumerate(responses):
        tool_calls = [
            {'id': f'{number}-{i}', 'type': 'function', 'function': {'name': name, 'arguments': '{}'}}
            for i, (name, _) in enumerate(calls)
        ]
        messages.append({'role': 'assistant', 'content': None if calls else 'text', 'tool_calls': tool_calls})
    return messages


@pytest.mark.parametrize('path', SCENARIO, ids=[p.name for p in SCENARIO])
def test_the_scenario_in_every_instrumentation_version(path: Path) -> None:
    content = 'no-content' not in path.name
    tree = tree_from(path)
    every = scenario_responses(content)
    parallel = next(i for i, group in enumerate(every) if len(group) == 3)  # search, fetch and a failed compute
    shuffled = [group[::-1] if i == parallel else group for i, group in enumerate(every)]
    moved = [list(group) for group in every]
    moved[parallel + 1].insert(0, moved[parallel].pop())
    ok_calls = [
        {'name': name, 'arguments': arguments}
        for name, status, _, _, arguments, output, _ in scenario_rows(True, validation_spans=True, retry_cause=True)
        if status == 'ok' and not output
    ]
    checks: list[tuple[dict[str, Any], Any]] = [
        ({'expected_calls': chat(every), 'include_failed': True, 'arguments': 'ignore'}, True),
        ({'expected_calls': chat(shuffled), 'include_failed': True, 'arguments': 'ignore'}, True),
        ({'expected_calls': chat(moved), 'include_failed': True, 'arguments': 'ignore'}, False),
        ({'expected_calls': chat(every), 'arguments': 'ignore'}, False),  # the failed attempts are not left out
        (
            {
                'expected_calls': chat(scenario_responses(content, ('main', 'expert'))),
                'agent': 'expert',
                'arguments': 'ignore',
            },
            True,
        ),
        (
            {
                'expected_calls': chat(scenario_responses(content, ('main',))),
                'agent': 'main',
                'include_subagents': False,
                'include_failed': True,
                'arguments': 'ignore',
            },
            True,
        ),
        ({'expected_calls': ok_calls, 'mode': 'unordered'}, content),  # without content no arguments compare
        ({'expected_calls': ok_calls[::-1], 'mode': 'unordered', 'arguments': 'ignore'}, True),
        ({'expected_calls': ok_calls[::-1], 'mode': 'in_order', 'arguments': 'ignore'}, False),
        (
            {
                'expected_calls': [[{'name': 'search'}], [{'name': 'delete_draft'}], [{'name': 'explode'}]],
                'mode': 'superset',
                'include_failed': True,
            },
            1.0,
        ),
    ]
    ctx = evaluator_context(tree)
    trajectory = extract_trajectory(tree)
    for options, value in checks:
        evaluated = ToolCallMatch(**options).evaluate(ctx)
        assert isinstance(evaluated, EvaluationReason)
        computed = tool_call_match(trajectory, **options)
        assert (evaluated.value, evaluated.reason) == (computed.value, computed.reason)
        assert computed.value == value, (options, computed.reason)


# -- strict reads the responses from the spans ---------------------------------------------------------


def moved(trajectory: Trajectory, name: str, *, keep_issuer: bool) -> Trajectory:
    """The trajectory with `name`'s call started after the next model request began."""
    requests = trajectory.model_requests
    calls = []
    for call in trajectory.tool_calls:
        if call.name == name:
            assert call.issued_by is not None
            later = requests[call.issued_by + 1].start + timedelta(microseconds=1)
            call = dataclasses.replace(call, start=later, issued_by=call.issued_by if keep_issuer else None)
        calls.append(call)
    return Trajectory(calls, requests, trajectory.agents, trajectory.notes)


def test_strict_groups_real_pydantic_ai_calls_by_the_response_that_issued_them() -> None:
    trajectory = extract_trajectory(tree_of('pydantic_ai/scenario.otlp.jsonl'))
    assert [(c.name, c.issued_by) for c in trajectory.tool_calls] == [
        ('get_weather', 0),
        ('flaky', 0),
        ('book_trip', 1),
        ('ask_expert', 2),
        ('search_docs', 3),
    ]
    options = CONFIGS['strict, the parallel calls swapped, failed ones in']
    # the response's recorded output says which calls it issued, whenever they ran
    assert tool_call_match(moved(trajectory, 'flaky', keep_issuer=True), **options).value is True
    # without it a call belongs to the last request that started before it: here the wrong one
    late = tool_call_match(moved(trajectory, 'flaky', keep_issuer=False), **options)
    assert late.value is False
    assert late.reason.startswith(
        # the flat expectation is cut to the responses the spans now show: (get_weather), (book_trip, flaky), ...
        "no match (strict, arguments exact): response 1: expected flaky(...); got get_weather(city='Paris');"
    )
    moved_options = CONFIGS['strict, one call moved into the wrong response']
    assert tool_call_match(moved(trajectory, 'flaky', keep_issuer=False), **moved_options).value is True


def test_strict_against_the_conversation_of_the_same_responses() -> None:
    trajectory = extract_trajectory(tree_of('pydantic_ai/scenario.otlp.jsonl'))

    def chat(*responses: list[str]) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = [{'role': 'user', 'content': 'Plan a trip to Paris.'}]
        for number, names in enumerate(responses):
            calls = [
                {'id': f'{number}{n}', 'type': 'function', 'function': {'name': name, 'arguments': '{}'}}
                for n, name in enumerate(names)
            ]
            messages.append(
                {'role': 'assistant', 'content': None if calls else 'Booked: Paris, sunny.', 'tool_calls': calls}
            )
            messages += [{'role': 'tool', 'tool_call_id': call['id'], 'content': 'ok'} for call in calls]
        return messages

    own = {'agent': 'orchestrator', 'include_subagents': False, 'include_failed': True, 'arguments': 'ignore'}
    assert tool_call_match(trajectory, chat(['flaky', 'get_weather'], ['book_trip'], ['ask_expert'], []), **own).value
    assert not tool_call_match(trajectory, chat(['flaky', 'get_weather'], ['book_trip'], ['ask_expert']), **own).value
    assert not tool_call_match(
        trajectory, chat(['get_weather'], ['flaky', 'book_trip'], ['ask_expert'], []), **own
    ).value
    # the expert's two responses (a call, then its answer) come between the orchestrator's
    everyone = {'include_failed': True, 'arguments': 'ignore'}
    responses = (['get_weather', 'flaky'], ['book_trip'], ['ask_expert'], ['search_docs'], [], [])
    assert tool_call_match(trajectory, chat(*responses), **everyone).value
    assert tool_call_match(trajectory, chat(*responses[1:]), **everyone).reason.startswith(
        'no match (strict, arguments ignore): expected 5 model response(s), got 6;'
    )
    # failed calls left out (the default): the response that issued flaky issued get_weather alone
    assert tool_call_match(trajectory, chat(['get_weather'], *responses[1:]), arguments='ignore').value


# -- a real pydantic-ai run ------------------------------------------------------------------------------


def global_provider() -> None:
    """pydantic-evals records a case's spans from the global provider: make sure there is one."""
    with capture():  # installs an SDK provider as the global one when none is set
        pass


def support_agent() -> Agent[None, str]:
    """Looks the order up, then refunds and notifies in one response (refund's amount depends on the prompt)."""

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(isinstance(message, ModelResponse) for message in messages)
        prompts = [part.content for m in messages for part in m.parts if isinstance(part, UserPromptPart)]
        if step == 0:
            return ModelResponse(parts=[ToolCallPart('lookup_order', {'order_id': 'A1'})])
        if step == 1 and 'refund' in str(prompts[0]):
            return ModelResponse(
                parts=[
                    ToolCallPart('refund', {'order_id': 'A1', 'amount': 12.004}),
                    ToolCallPart('notify', {'text': 'Refunded'}),
                ]
            )
        return ModelResponse(parts=[TextPart('done')])

    agent: Agent[None, str] = Agent(FunctionModel(script), name='support')
    agent.instrument = True  # the global provider, as pydantic-evals records from

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        return 'found'

    @agent.tool_plain
    def refund(order_id: str, amount: float) -> str:
        return 'refunded'

    @agent.tool_plain
    def notify(text: str) -> str:
        return 'sent'

    return agent


def test_a_real_run_scores_alike_from_its_spans_and_its_messages() -> None:
    global_provider()
    agent = support_agent()
    with capture() as captured:
        result = agent.run_sync('Please refund order A1.')
    ctx = evaluator_context(captured, output=result)
    expected = [
        {'name': 'lookup_order', 'arguments': {'order_id': 'A1'}},
        {'name': 'notify', 'arguments': {'text': 'Refunded'}},
        {'name': 'refund', 'arguments': {'order_id': 'A1', 'amount': 12}},
    ]
    rules = {'refund': {'amount': {'abs': 0.01}}}
    for evaluator, value in [
        (ToolCallMatch(expected, argument_rules=rules), True),
        (ToolCallMatch([expected[1], expected[0], expected[2]], argument_rules=rules), False),
        (ToolCallMatch(expected), False),
        (ToolCallMatch(result.all_messages(), arguments='superset'), True),  # the run's own messages as the reference
        (ToolCallMatch(expected[:2], mode='superset', agent='support'), True),
        (ToolCallMatch(expected[:2], mode='in_order', argument_rules=rules), True),
        (ToolCallMatch(expected[::-1], mode='in_order', argument_rules=rules), False),
    ]:
        from_spans = evaluator.evaluate(ctx)
        from_messages = dataclasses.replace(evaluator, conversation='output').evaluate(ctx)
        assert isinstance(from_spans, EvaluationReason) and isinstance(from_messages, EvaluationReason)
        assert from_spans.value is value, evaluator
        assert (from_messages.value, from_messages.reason) == (from_spans.value, from_spans.reason)
        computed = tool_call_match(extract_trajectory(captured.tree), **function_options(evaluator))
        assert (computed.value, computed.reason) == (from_spans.value, from_spans.reason)


def function_options(evaluator: ToolCallMatch) -> dict[str, Any]:
    """The evaluator's fields that `tool_call_match` takes too."""
    options = evaluator.build_serialization_arguments()
    for name in ('evaluation_name', 'conversation', 'threshold'):
        options.pop(name, None)
    return options


# -- the evaluator's own behaviour -------------------------------------------------------------------


def test_no_span_tree_fails_with_the_usual_reason() -> None:
    ctx = evaluator_context(SpanTreeRecordingError('nothing configured'))
    single = ToolCallMatch([{'name': 'a'}]).evaluate(ctx)
    assert isinstance(single, EvaluationReason) and single.value is False
    assert single.reason is not None and single.reason.startswith('No span tree available')
    per_turn = ToolCallMatch([[{'name': 'a'}]], threshold=0.5).evaluate(ctx)
    assert isinstance(per_turn, dict)
    assert {name: r.value for name, r in per_turn.items()} == {'ToolCallMatch': 0.0, 'ToolCallMatch_pass': False}


def test_a_conversation_that_is_not_one() -> None:
    ctx = evaluator_context(SpanTreeRecordingError('x'), output=[{'role': 'user', 'content': 'x'}, {'name': 'a'}])
    result = ToolCallMatch([{'name': 'a'}], conversation='output').evaluate(ctx)
    assert isinstance(result, EvaluationReason)
    assert result.value is False
    assert result.reason is not None and result.reason.startswith('ctx.output is not a conversation: ')
    none = ToolCallMatch([[{'name': 'a'}]], conversation='inputs').evaluate(
        evaluator_context(SpanTreeRecordingError('x'))
    )
    assert isinstance(none, EvaluationReason)
    assert (none.value, none.reason) == (0.0, 'no conversation to score: ctx.inputs is None')


@pytest.mark.parametrize(
    ('options', 'message'),
    [
        (
            {'expected_calls': [], 'mode': 'any_order'},
            "mode must be one of 'strict', 'unordered', 'subset', 'superset', 'in_order'; got 'any_order'",
        ),
        (
            {'expected_calls': [], 'mode': True},
            "mode must be one of 'strict', 'unordered', 'subset', 'superset', 'in_order'; got True",
        ),
        (
            {'expected_calls': [], 'arguments': 'loose'},
            "arguments must be one of 'exact', 'ignore', 'subset', 'superset'; got 'loose'",
        ),
        (
            {'expected_calls': [{'name': 'a', 'arguments': 'oops'}]},
            "expected_calls[0] ('a'): arguments could not be parsed as JSON",
        ),
        ({'expected_calls': [{'nom': 'a'}]}, 'expected_calls[0]: expected a {"name": str, "arguments": dict} mapping'),
        (
            {'expected_calls': {'name': 'a'}},
            "expected_calls must be a list of calls or a conversation, got {'name': 'a'}",
        ),
        ({'expected_calls': [], 'include_failed': 'yes'}, 'include_failed must be true or false'),
        ({'expected_calls': [], 'agent': 3}, 'agent must be'),
        ({'expected_calls': [], 'conversation': 'outputs'}, 'conversation must be one of'),
        (
            {'expected_calls': [], 'threshold': 0.5},
            'threshold needs expected calls per turn (one expectation is pass/fail already)',
        ),
        ({'expected_calls': [[]], 'threshold': 2}, 'threshold must be a number from 0 to 1, got 2'),
        (
            {'expected_calls': [], 'argument_rules': {'refund': {'amount': {'abs': -1}}}},
            "argument_rules['refund']['amount']: abs must be a number >= 0, got -1",
        ),
    ],
)
def test_configuration_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match='^ToolCallMatch: ' + re.escape(message)):
        ToolCallMatch(**options)


# -- YAML ------------------------------------------------------------------------------------------------

SHORT_YAML = """\
name: refunds
cases:
- name: refund
  inputs: Please refund order A1.
evaluators:
- ToolCallMatch:
  - {name: lookup_order, arguments: {order_id: A1}}
  - {name: refund}
- ToolCallMatch:
  - - {name: lookup_order}
  - - {name: notify}
"""
LONG_YAML = """\
name: refunds
cases:
- name: refund
  inputs: Please refund order A1.
  evaluators:
  - ToolCallMatch:
      expected_calls:
      - {name: refund, arguments: {order_id: A1, amount: 12, meta: {id: 1}}}
      - {name: notify, args: '{"text": "Refunded"}'}
      mode: superset
      arguments: superset
      tool_arguments: {notify: ignore, lookup_order: [order_id]}
      argument_rules:
        '*': {meta.id: ignore}
        refund: {amount: {abs: 0.01}, reason: {regex: '(?i)damaged.*', ignore_whitespace: true}, order_id: {one_of: [A1, A2]}}
      include_failed: true
      evaluation_name: refund amount
      agent: support
      include_subagents: false
  - ToolCallMatch:
      expected_calls: [[{name: lookup_order}], [{name: notify}]]
      mode: in_order
      threshold: 0.5
      conversation: output
"""

SHORT = [
    ToolCallMatch([{'name': 'lookup_order', 'arguments': {'order_id': 'A1'}}, {'name': 'refund'}]),
    ToolCallMatch([[{'name': 'lookup_order'}], [{'name': 'notify'}]]),
]
LONG = [
    ToolCallMatch(
        [
            {'name': 'refund', 'arguments': {'order_id': 'A1', 'amount': 12, 'meta': {'id': 1}}},
            {'name': 'notify', 'args': '{"text": "Refunded"}'},
        ],
        mode='superset',
        arguments='superset',
        tool_arguments={'notify': 'ignore', 'lookup_order': ['order_id']},
        argument_rules={
            '*': {'meta.id': 'ignore'},
            'refund': {
                'amount': {'abs': 0.01},
                'reason': {'regex': '(?i)damaged.*', 'ignore_whitespace': True},
                'order_id': {'one_of': ['A1', 'A2']},
            },
        },
        include_failed=True,
        evaluation_name='refund amount',
        agent='support',
        include_subagents=False,
    ),
    ToolCallMatch(
        [[{'name': 'lookup_order'}], [{'name': 'notify'}]], mode='in_order', threshold=0.5, conversation='output'
    ),
]


def test_yaml_in_the_short_and_the_long_form() -> None:
    short = Dataset[object, object, object].from_text(SHORT_YAML, custom_evaluator_types=evaluator_types())
    assert short.evaluators == SHORT
    long = Dataset[object, object, object].from_text(LONG_YAML, custom_evaluator_types=evaluator_types())
    assert long.cases[0].evaluators == LONG
    # built from YAML, each is as ready as one built in Python: the configuration was parsed
    trajectory = ae.trajectory_from_messages(
        [
            {'role': 'user', 'content': 'refund'},
            {
                'role': 'assistant',
                'tool_calls': [
                    {
                        'id': '1',
                        'type': 'function',
                        'function': {
                            'name': 'refund',
                            'arguments': '{"order_id": "A2", "amount": 12.004, "reason": "DAMAGED  box", "meta": {"id": 9}}',
                        },
                    },
                    {'id': '2', 'type': 'function', 'function': {'name': 'notify', 'arguments': '{"text": "Bye"}'}},
                ],
            },
            {'role': 'tool', 'tool_call_id': '1', 'content': 'refunded'},
            {'role': 'tool', 'tool_call_id': '2', 'content': 'sent'},
        ],
        agent='support',
    )
    loaded = long.cases[0].evaluators[0]
    assert isinstance(loaded, ToolCallMatch)
    result = loaded.score_scoped(trajectory, evaluator_context(SpanTreeRecordingError('x')))
    assert (result.value, result.reason) == (True, tool_call_match(trajectory, **function_options(loaded)).reason)
    assert result.reason is not None and result.reason.startswith(
        'match (superset, arguments superset): 2 expected, 2 actual'
    )


@pytest.mark.parametrize('suffix', ['.yaml', '.json'])
@pytest.mark.parametrize('evaluators', [SHORT, LONG], ids=['short', 'long'])
def test_round_trip(tmp_path: Path, suffix: str, evaluators: list[Evaluator[object, object, object]]) -> None:
    path = tmp_path / f'dataset{suffix}'
    write_dataset(path, evaluators)
    text = path.read_text()
    assert '_config' not in text
    assert '_config' not in (tmp_path / 'dataset_schema.json').read_text()
    loaded = read_dataset(path)
    assert loaded.evaluators == evaluators
    assert [e.build_serialization_arguments() for e in loaded.evaluators] == [
        e.build_serialization_arguments() for e in evaluators
    ]


def test_the_short_form_is_written_when_only_the_expected_calls_are_set(tmp_path: Path) -> None:
    path = tmp_path / 'dataset.yaml'
    write_dataset(path, SHORT)
    text = path.read_text()
    assert '- ToolCallMatch:\n  - name: lookup_order\n    arguments:\n      order_id: A1\n  - name: refund\n' in text
    assert '- ToolCallMatch:\n  - - name: lookup_order\n  - - name: notify\n' in text


def test_the_parsed_configuration_is_never_serialised() -> None:
    for evaluator in (*SHORT, *LONG, ToolCallMatch([], threshold=None)):
        arguments = evaluator.build_serialization_arguments()
        assert '_config' not in arguments
        assert '_config' not in repr(evaluator)
        spec = evaluator.as_spec()
        assert '_config' not in str(spec)
    assert LONG[1].build_serialization_arguments() == {
        'expected_calls': [[{'name': 'lookup_order'}], [{'name': 'notify'}]],
        'mode': 'in_order',
        'threshold': 0.5,
        'conversation': 'output',
    }
    # equal configurations are equal evaluators, whatever was parsed from them
    assert ToolCallMatch([{'name': 'a'}]) == ToolCallMatch([{'name': 'a'}])
    assert ToolCallMatch([{'name': 'a'}]) != ToolCallMatch([{'name': 'a'}], mode='subset')


THRESHOLDS: list[Evaluator[object, object, object]] = [
    TrajectoryMatch(['lookup_order', 'refund', 'notify'], threshold=0.75),
    TrajectoryMatch([['lookup_order'], ['refund']], order='exact', threshold=1),
    ToolCallAccuracy([{'name': 'lookup_order', 'args': {'order_id': 'A1'}}], threshold=0.0, evaluation_name='accuracy'),
    ToolCallF1([{'name': 'lookup_order', 'args': {'order_id': 'A1'}}], threshold=0.5),
]


@pytest.mark.parametrize('suffix', ['.yaml', '.json'])
def test_thresholds_round_trip(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f'dataset{suffix}'
    write_dataset(path, THRESHOLDS)
    loaded = read_dataset(path)
    assert loaded.evaluators == THRESHOLDS
    assert [getattr(e, 'threshold', None) for e in loaded.evaluators] == [0.75, 1, 0.0, 0.5]
    assert path.read_text().count('threshold') == 4
    # without a threshold nothing is written for it, and the short form stays available
    other = tmp_path / f'other{suffix}'
    write_dataset(other, [TrajectoryMatch(['a'])])
    assert 'threshold' not in other.read_text()
    if suffix == '.yaml':
        assert '- TrajectoryMatch:\n  - a\n' in other.read_text()


# -- thresholds in a real Dataset.evaluate --------------------------------------------------------------


def test_a_threshold_gives_each_case_a_pass_assertion() -> None:
    global_provider()
    agent = support_agent()

    def task(prompt: str) -> str:
        return agent.run_sync(prompt).output

    def two_turns(prompt: str) -> str:
        first = agent.run_sync(prompt)
        return agent.run_sync('and notify me', message_history=first.all_messages()).output

    reference = [
        {'name': 'lookup_order', 'args': {'order_id': 'A1'}},
        {'name': 'refund', 'args': {'order_id': 'A1', 'amount': 12.004}},
        {'name': 'notify', 'args': {'text': 'Refunded'}},
    ]
    evaluators: list[Evaluator[str, str, None]] = [
        TrajectoryMatch(['lookup_order', 'refund', 'notify'], threshold=0.75),
        ToolCallAccuracy(reference, threshold=0.9, evaluation_name='accuracy'),
        ToolCallF1(reference, threshold=0.5),
        TrajectoryMatch(['lookup_order'], threshold=1, evaluation_name='lookup only'),
    ]
    dataset = Dataset[str, str, None](
        name='thresholds',
        cases=[Case(name='refund', inputs='Please refund order A1.'), Case(name='lookup', inputs='Where is A1?')],
        evaluators=evaluators,
    )
    report = dataset.evaluate_sync(task, progress=False)
    by_case = {case.name: case for case in report.cases}
    scores = {case: {name: s.value for name, s in by_case[case].scores.items()} for case in by_case}
    passes = {case: {name: a.value for name, a in by_case[case].assertions.items()} for case in by_case}
    # 'refund' makes the three calls; 'lookup' only looks the order up
    assert scores == {
        'refund': {'TrajectoryMatch': 1.0, 'accuracy': 1.0, 'ToolCallF1': 1.0, 'lookup only': 0.5},
        'lookup': {'TrajectoryMatch': 0.5, 'accuracy': 0.0, 'ToolCallF1': 0.5, 'lookup only': 1.0},
    }
    assert passes == {
        'refund': {
            'TrajectoryMatch_pass': True,
            'accuracy_pass': True,
            'ToolCallF1_pass': True,
            'lookup only_pass': False,
        },
        # one bad case fails on its own, whatever the mean; a score equal to the threshold passes
        'lookup': {
            'TrajectoryMatch_pass': False,
            'accuracy_pass': False,
            'ToolCallF1_pass': True,
            'lookup only_pass': True,
        },
    }
    reasons = {name: a.reason for name, a in by_case['lookup'].assertions.items()}
    assert reasons == {
        'TrajectoryMatch_pass': '0.500 < threshold 0.75',
        'accuracy_pass': '0.000 < threshold 0.9',
        'ToolCallF1_pass': '0.500 >= threshold 0.5',
        'lookup only_pass': '1.000 >= threshold 1',
    }

    # per turn: ToolCallMatch's share of matching turns, with its own pass
    per_turn = Dataset[str, str, None](
        name='turns',
        cases=[Case(name='two turns', inputs='Please refund order A1.')],
        evaluators=[
            ToolCallMatch(
                [[{'name': 'lookup_order'}, {'name': 'refund'}], [{'name': 'notify'}]], mode='superset', threshold=0.5
            ),
            ToolCallMatch(
                [[{'name': 'lookup_order'}], [{'name': 'lookup_order'}]],
                mode='superset',
                threshold=1,
                evaluation_name='both',
            ),
        ],
    )
    case = per_turn.evaluate_sync(two_turns, progress=False).cases[0]
    # turn 1 looks the order up and refunds; turn 2 (after the history's two responses) only answers
    assert {name: s.value for name, s in case.scores.items()} == {'ToolCallMatch': 0.5, 'both': 0.5}
    assert {name: a.value for name, a in case.assertions.items()} == {'ToolCallMatch_pass': True, 'both_pass': False}


@pytest.mark.parametrize('threshold', [-0.1, 1.5, True, '0.5', math.nan, math.inf])
@pytest.mark.parametrize(
    'build',
    [
        lambda t: TrajectoryMatch(['a'], threshold=t),
        lambda t: ToolCallAccuracy([{'name': 'a', 'args': {}}], threshold=t),
        lambda t: ToolCallF1([{'name': 'a', 'args': {}}], threshold=t),
        lambda t: ToolCallMatch([[{'name': 'a'}]], threshold=t),
    ],
    ids=['TrajectoryMatch', 'ToolCallAccuracy', 'ToolCallF1', 'ToolCallMatch'],
)
def test_threshold_validation(build: Any, threshold: Any) -> None:
    with pytest.raises(ValueError, match=r'^\w+: threshold must be a number from 0 to 1, got '):
        build(threshold)


@pytest.mark.parametrize('threshold', [0, 0.0, 1, 1.0, 0.25])
def test_thresholds_at_the_bounds_are_accepted(threshold: float) -> None:
    assert TrajectoryMatch(['a'], threshold=threshold).threshold == threshold
    assert ToolCallMatch([[]], threshold=threshold).threshold == threshold
