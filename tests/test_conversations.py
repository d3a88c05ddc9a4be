"""Trajectories from conversations: real pydantic-ai runs against their own spans, then each format's rules."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pydantic_ai
import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, InstrumentationSettings, ToolOutput
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_evals.evaluators import EvaluationReason
from pydantic_evals.otel import SpanTree
from scenario import SUPPORTED_VERSIONS, ScenarioRun, run_scenario

from agentic_evals import (
    ArgumentCorrectness,
    MaxModelRequests,
    MaxToolCalls,
    ToolCall,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCorrectness,
    Trajectory,
    TrajectoryMatch,
    capture,
    extract_trajectory,
    trajectory_from_messages,
)
from agentic_evals.conversations import detect_format
from agentic_evals.evaluators._base import TrajectoryEvaluator

from .factories import context
from .real_runs import VALIDATION_SPANS

MAIN = {'agent': 'main', 'include_subagents': False}
"""Messages hold only the main agent's side, so spans are compared on the main agent's own calls."""


@pytest.fixture(scope='module')
def runs() -> dict[int, tuple[Trajectory, ScenarioRun]]:
    provider = TracerProvider()
    out: dict[int, tuple[Trajectory, ScenarioRun]] = {}
    for version in SUPPORTED_VERSIONS:
        with capture(provider) as captured:
            run = run_scenario(version=version, tracer_provider=provider)
        out[version] = extract_trajectory(captured.tree), run
    return out


def rows(trajectory: Trajectory, include_failed: bool) -> list[tuple[Any, ...]]:
    return [
        (c.name, c.status, c.failure_stage, c.arguments, c.arguments_problem, c.is_output_function, c.agent_path)
        for c in trajectory.calls(include_failed=include_failed, **MAIN)
    ]


def without_documented_differences(trajectory: Trajectory) -> Trajectory:
    """Drop what only the conversation shows (see docs/conversations.md, "Spans and messages")."""

    def kept(call: ToolCall) -> bool:
        if call.call_id == 'call_job':  # result supplied through DeferredToolResults: ok here, deferred in spans
            return False
        # pydantic-ai before 2.27.1 emits no span for a call that fails validation
        return VALIDATION_SPANS or call.failure_stage != 'validation'

    return Trajectory(
        tool_calls=[c for c in trajectory.tool_calls if kept(c)],
        model_requests=trajectory.model_requests,
        agents=trajectory.agents,
        notes=trajectory.notes,
    )


@pytest.mark.parametrize('version', SUPPORTED_VERSIONS)
def test_messages_give_the_calls_and_requests_spans_give(
    runs: dict[int, tuple[Trajectory, ScenarioRun]], version: int
) -> None:
    spans, run = runs[version]
    from_objects = trajectory_from_messages(run.messages)
    from_json = trajectory_from_messages(ModelMessagesTypeAdapter.dump_python(run.messages, mode='json'))
    assert from_objects.tool_calls == from_json.tool_calls
    assert from_objects.model_requests == from_json.model_requests
    conversation = without_documented_differences(from_objects)
    for include_failed in (False, True):
        assert rows(conversation, include_failed) == rows(spans, include_failed)
    tokens = [(r.model, r.input_tokens, r.output_tokens, r.cost, r.agent_path) for r in spans.requests(**MAIN)]
    assert [(r.model, r.input_tokens, r.output_tokens, r.cost, r.agent_path) for r in conversation.model_requests] == (
        tokens
    )
    output = [c for c in from_objects.tool_calls if c.is_output_function]
    assert [(c.name, c.status) for c in output] == [('submit_report', 'ok')]
    assert from_objects.agent_names == ['main']
    assert from_objects.notes == ()


@pytest.mark.parametrize('version', SUPPORTED_VERSIONS)
def test_the_documented_differences(runs: dict[int, tuple[Trajectory, ScenarioRun]], version: int) -> None:
    spans, run = runs[version]
    conversation = trajectory_from_messages(run.messages)
    job = [(c.status, c.result) for c in conversation.tool_calls if c.name == 'run_report_job']
    assert job == [('ok', 'weekly report job finished: 3 pages')]
    assert [c.status for c in spans.tool_calls if c.name == 'run_report_job'] == ['deferred']
    validation = [c.call_id for c in conversation.tool_calls if c.failure_stage == 'validation']
    assert validation == ['call_compute_bad', 'call_par_compute']
    assert len([c for c in spans.tool_calls if c.failure_stage == 'validation']) == (2 if VALIDATION_SPANS else 0)
    # `issued_by` indexes each trajectory's own model requests; the conversation has no sub-agent requests.
    assert [c.issued_by for c in conversation.tool_calls][-3:] == [8, 8, 9]


@pytest.mark.parametrize('version', SUPPORTED_VERSIONS)
def test_first_run_alone_leaves_the_deferred_calls_unanswered(
    runs: dict[int, tuple[Trajectory, ScenarioRun]], version: int
) -> None:
    _, run = runs[version]
    first_run = run.messages[:-3]  # up to the response that asked for approval and external execution
    trajectory = trajectory_from_messages(first_run)
    assert [(c.name, c.status) for c in trajectory.tool_calls[-2:]] == [
        ('delete_draft', 'deferred'),
        ('run_report_job', 'deferred'),
    ]
    assert 'run_report_job' not in [c.name for c in trajectory.calls(include_failed=True)]


@pytest.mark.parametrize('version', SUPPORTED_VERSIONS)
def test_the_crashed_run(runs: dict[int, tuple[Trajectory, ScenarioRun]], version: int) -> None:
    spans, run = runs[version]
    crasher = trajectory_from_messages(run.crasher_messages, agent='crasher')
    in_spans = [(c.name, c.status, c.failure_stage) for c in spans.tool_calls if c.agent == 'crasher']
    assert in_spans == [('explode', 'failed', 'raised')]
    interrupted = any(getattr(m, 'state', None) == 'interrupted' for m in run.crasher_messages)
    # Only pydantic-ai releases that record the interrupted request tell a crash from a pending call.
    expected = in_spans if interrupted else [('explode', 'deferred', None)]
    assert [(c.name, c.status, c.failure_stage) for c in crasher.tool_calls] == expected


def evaluators(include_failed: bool) -> list[TrajectoryEvaluator]:
    reference = [
        {'name': 'search', 'args': {'query': 'opentelemetry genai tool spans'}},
        {'name': 'fetch', 'args': {'url': 'https://example.com/genai-spans'}},
        {'name': 'check_status', 'args': {'service': 'tracing'}},
        {'name': 'compute', 'args': {'a': 2, 'b': 3}},
    ]
    everything = [
        *reference,
        {'name': 'search', 'args': {'query': 'span ordering'}},
        {'name': 'fetch', 'args': {'url': 'https://example.com/ordering'}},
        {'name': 'ask_expert', 'args': {'question': 'Which attribute holds tool arguments?'}},
        {'name': 'delete_draft', 'args': {'path': 'drafts/new.md'}},  # one argument wrong
    ]
    flags: dict[str, Any] = {'include_failed': include_failed, **MAIN}
    return [
        ToolCorrectness(['search', 'fetch', 'check_status', 'compute', 'ask_expert', 'delete_draft'], **flags),
        ToolCorrectness(['search', 'fetch'], allow_extra=True, **flags),
        TrajectoryMatch(['search', 'fetch', 'compute', 'ask_expert'], **flags),
        TrajectoryMatch(['compute', 'search', 'delete_draft'], order='any_order', **flags),
        TrajectoryMatch(['search', 'fetch'], order='exact', **flags),
        ArgumentCorrectness('compute', {'a': 2}, **flags),
        ArgumentCorrectness('compute', {'a': 1}, occurrence='last', **flags),
        ArgumentCorrectness('search', {'query': 'span ordering'}, occurrence=1, match_mode='exact', **flags),
        MaxToolCalls(8, **flags),
        MaxModelRequests(10, **MAIN),
        ToolCallAccuracy(reference, **flags),
        ToolCallAccuracy(reference, strict_order=False, **flags),
        ToolCallF1(reference, **flags),
        ToolCallAccuracy(everything, **flags),
        ToolCallF1(everything, **flags),
    ]


@pytest.mark.parametrize('include_failed', [False, True])
@pytest.mark.parametrize('version', SUPPORTED_VERSIONS)
def test_every_deterministic_evaluator_scores_messages_as_it_scores_spans(
    runs: dict[int, tuple[Trajectory, ScenarioRun]], version: int, include_failed: bool
) -> None:
    spans, run = runs[version]
    conversation = without_documented_differences(trajectory_from_messages(run.messages))
    ctx = context(SpanTree())
    for evaluator in evaluators(include_failed):
        from_spans = evaluator.score(spans, ctx)
        from_messages = evaluator.score(conversation, ctx)
        assert isinstance(from_spans, EvaluationReason)
        assert (from_messages.value, from_messages.reason) == (from_spans.value, from_spans.reason), evaluator


def step(messages: list[ModelMessage]) -> int:
    return sum(isinstance(m, ModelResponse) for m in messages)


def spans_and_messages(
    build: Callable[[InstrumentationSettings], Agent[None, Any]], **run: Any
) -> tuple[Trajectory, Trajectory]:
    """Run a one-off agent named `a`; its spans' trajectory and its history's."""
    provider = TracerProvider()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        settings = InstrumentationSettings(tracer_provider=provider, version=SUPPORTED_VERSIONS[-1])
    agent = build(settings)
    with capture(provider) as captured:
        first = agent.run_sync('go')
        result = agent.run_sync(message_history=first.all_messages(), **run) if run else first
    return extract_trajectory(captured.tree), trajectory_from_messages(result.all_messages(), agent='a')


def scripted(*responses: list[Any]) -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=list(responses[step(messages)])))


def test_unknown_tools_have_no_span_but_a_failed_attempt_in_the_history() -> None:
    def build(settings: InstrumentationSettings) -> Agent[None, Any]:
        agent = Agent(
            scripted([ToolCallPart('nope', {}, 'n')], [TextPart('done')]),
            name='a',
            capabilities=[Instrumentation(settings=settings)],
        )
        agent.tool_plain(lambda x: x, name='real')
        return agent

    spans, messages = spans_and_messages(build)
    assert [(c.name, c.status) for c in spans.tool_calls] == []
    assert [(c.name, c.status, c.failure_stage) for c in messages.tool_calls] == [('nope', 'failed', 'validation')]
    assert spans.calls() == messages.calls() == []


def test_denied_calls_are_not_counted_either_way() -> None:
    def build(settings: InstrumentationSettings) -> Agent[None, Any]:
        agent = Agent(
            scripted([ToolCallPart('danger', {}, 'd')], [TextPart('done')]),
            name='a',
            output_type=[str, DeferredToolRequests],
            capabilities=[Instrumentation(settings=settings)],
        )
        agent.tool_plain(requires_approval=True, name='danger')(lambda: 'boom')
        return agent

    spans, messages = spans_and_messages(build, deferred_tool_results=DeferredToolResults(approvals={'d': False}))
    assert [(c.name, c.status) for c in messages.tool_calls] == [('danger', 'deferred')]
    assert spans.calls(include_failed=True) == messages.calls(include_failed=True) == []


def test_output_tools_and_tool_failed() -> None:
    tool_failed = getattr(pydantic_ai, 'ToolFailed', None)

    def build(settings: InstrumentationSettings) -> Agent[None, Any]:
        calls = [ToolCallPart('final_result', {'response': 'x'}, 'o'), ToolCallPart('work', {}, 'w')]
        agent = Agent(
            scripted([ToolCallPart('bad', {}, 'b')], calls),
            name='a',
            output_type=ToolOutput(str, name='final_result'),
            capabilities=[Instrumentation(settings=settings)],
        )

        @agent.tool_plain
        def bad() -> str:
            if tool_failed is None:
                raise pydantic_ai.ModelRetry('no')
            raise tool_failed('no')

        agent.tool_plain(lambda: 'done', name='work')
        return agent

    spans, messages = spans_and_messages(build)
    in_spans = [(c.name, c.status, c.failure_stage) for c in spans.calls(include_failed=True)]
    in_messages = [(c.name, c.status, c.failure_stage) for c in messages.calls(include_failed=True)]
    if tool_failed is None:  # pydantic-ai 2.4: no ToolFailed, ModelRetry instead
        assert in_spans == in_messages == [('bad', 'failed', 'retry'), ('work', 'ok', None)]
    else:
        assert in_spans == [('bad', 'failed', 'retry'), ('work', 'ok', None)]
        assert in_messages == [('bad', 'failed', 'raised'), ('work', 'ok', None)]
    assert [(c.name, c.is_output_function) for c in messages.tool_calls if c.is_output_function] == [
        ('final_result', True)
    ]


# -- pydantic-ai rules on hand-written histories (the JSON form) ----------------------------------------


def call(name: str, args: Any, call_id: str) -> dict[str, Any]:
    return {'part_kind': 'tool-call', 'tool_name': name, 'args': args, 'tool_call_id': call_id}


def response(*parts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {'kind': 'response', 'parts': list(parts), 'model_name': 'm', **fields}


def answer(name: str, call_id: str, content: Any, **fields: Any) -> dict[str, Any]:
    return {'part_kind': 'tool-return', 'tool_name': name, 'tool_call_id': call_id, 'content': content, **fields}


def request(*parts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {'kind': 'request', 'parts': list(parts), **fields}


def summary(trajectory: Trajectory) -> list[tuple[Any, ...]]:
    return [(c.name, c.status, c.failure_stage, c.is_output_function) for c in trajectory.tool_calls]


def test_pydantic_ai_outcomes() -> None:
    messages = [
        request({'part_kind': 'user-prompt', 'content': 'go'}),
        response(
            call('a', {}, '1'),
            call('b', {}, '2'),
            call('c', {}, '3'),
            call('d', {}, '4'),
            call('e', {}, '5'),
            call('f', {}, '6'),
            call('g', {}, '7'),
            call('h', {}, '8'),
        ),
        request(
            answer('a', '1', 'fine'),
            answer('b', '2', 'boom', outcome='failed'),
            answer('c', '3', 'denied', outcome='denied'),
            answer('d', '4', 'gone', outcome='interrupted'),
            answer('e', '5', 'again', outcome='retried', retry={'cause': 'model_retry'}),
            answer('f', '6', [{'msg': 'bad'}], outcome='retried', retry={'cause': 'validation_error'}),
            answer('g', '7', "Unknown tool name: 'g'", outcome='retried', retry={'cause': 'unknown_tool'}),
        ),
    ]
    assert summary(trajectory_from_messages(messages)) == [
        ('a', 'ok', None, False),
        ('b', 'failed', 'raised', False),
        ('c', 'deferred', None, False),
        ('d', 'failed', 'raised', False),
        ('e', 'failed', 'retry', False),
        ('f', 'failed', 'validation', False),
        ('g', 'failed', 'validation', False),
        ('h', 'deferred', None, False),  # never answered
    ]


def test_pydantic_ai_retry_prompts_of_older_releases() -> None:
    def retry(name: str | None, call_id: str, content: Any) -> dict[str, Any]:
        return {'part_kind': 'retry-prompt', 'tool_name': name, 'tool_call_id': call_id, 'content': content}

    messages = [
        response(call('a', {}, '1'), call('b', {}, '2'), call('c', {}, '3')),
        request(
            retry('a', '1', 'try again'),
            retry('b', '2', [{'type': 'int_parsing', 'loc': ['x'], 'msg': 'bad'}]),
            retry('c', '3', "Unknown tool name: 'c'. Available tools: 'a'"),
            retry(None, 'x', 'output was wrong'),  # answers no call
        ),
    ]
    assert summary(trajectory_from_messages(messages)) == [
        ('a', 'failed', 'retry', False),
        ('b', 'failed', 'validation', False),
        ('c', 'failed', 'validation', False),
    ]


def test_output_tools() -> None:
    messages = [
        response(call('final_result', {'x': 1}, '1'), call('report', {}, '2'), call('skip', {}, '3')),
        request(
            answer('final_result', '1', 'Final result processed.'),
            answer('report', '2', 'Output tool not used - output failed validation.'),
            answer('skip', '3', 'Tool not executed - a final result was already processed.'),
        ),
        response(call('submit', {}, '4'), call('report', {}, '5')),
        request(
            answer('submit', '4', 'ok'),
            answer('report', '5', [{'msg': 'bad'}], outcome='retried', retry={'cause': 'validation_error'}),
        ),
    ]
    trajectory = trajectory_from_messages(messages, output_tools=['submit'])
    assert summary(trajectory) == [
        ('final_result', 'ok', None, True),
        ('report', 'ok', None, True),
        ('submit', 'ok', None, True),
        ('report', 'failed', 'validation', True),  # known as an output tool from its other call
    ]
    assert trajectory.notes == (
        "message 1: call 'skip' ('3') skipped: Tool not executed - a final result was already processed.",
    )
    assert trajectory.calls(include_failed=True) == []


def test_pydantic_ai_records() -> None:
    messages = [
        request({'part_kind': 'user-prompt', 'content': 'go'}, timestamp='2026-01-01T00:00:00Z'),
        response(
            call('search', '{"q": "x"}', 's'),
            call('broken', '{"q": ', 'b'),
            call('listed', '[1]', 'l'),
            call('empty', None, 'e'),
            usage={'input_tokens': 10, 'output_tokens': 3, 'cache_read_tokens': 2, 'cost': 0.5},
            timestamp='2026-01-01T00:00:01Z',
        ),
        request(answer('search', 's', {'hits': [1]}, timestamp='2026-01-01T00:00:02Z')),
        response(usage={'request_tokens': 7, 'response_tokens': 1}, model_name=None),
        request(answer('ghost', 'zz', 'hello')),
    ]
    trajectory = trajectory_from_messages(messages, agent='researcher')
    search, broken, listed, empty = trajectory.tool_calls
    assert (search.arguments, search.raw_arguments, search.result, search.call_id) == (
        {'q': 'x'},
        '{"q": "x"}',
        '{"hits":[1]}',
        's',
    )
    assert (search.duration.total_seconds(), search.agent, search.agent_path, search.issued_by) == (
        1.0,
        'researcher',
        ('researcher',),
        0,
    )
    assert (broken.arguments, broken.arguments_problem) == (
        None,
        'could not be parsed as JSON: the model sent \'{"q": \'',
    )
    assert (listed.arguments, listed.arguments_problem) == (None, 'are not a JSON object: [1]')
    assert (empty.arguments, empty.raw_arguments, empty.status) == ({}, None, 'deferred')
    assert [
        (r.model, r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cost) for r in trajectory.model_requests
    ] == [
        ('m', 10, 3, 2, 0.5),
        (None, 7, 1, 0, None),
    ]
    assert [(a.name, a.path) for a in trajectory.agents] == [('researcher', ('researcher',))]
    assert trajectory.notes == ("message 4: answer to 'ghost' ('zz') matches no call; ignored",)


def test_an_interrupted_request_fails_the_calls_it_was_answering() -> None:
    messages = [response(call('a', {}, '1'), call('b', {}, '2')), request(answer('a', '1', 'ok'), state='interrupted')]
    assert summary(trajectory_from_messages(messages)) == [('a', 'ok', None, False), ('b', 'failed', 'raised', False)]


def test_without_an_agent_name() -> None:
    trajectory = trajectory_from_messages([response(call('a', {}, '1'))], agent=None)
    assert (trajectory.agents, trajectory.tool_calls[0].agent_path, trajectory.tool_calls[0].agent) == ((), (), None)


# -- OpenAI chat completions ----------------------------------------------------------------------------


def openai_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {'id': call_id, 'type': 'function', 'function': {'name': name, 'arguments': arguments}}


def test_openai_messages() -> None:
    messages = [
        {'role': 'system', 'content': 'be brief'},
        {'role': 'user', 'content': 'weather in Paris and Rome?'},
        {
            'role': 'assistant',
            'content': None,
            'tool_calls': [
                openai_call('c1', 'get_weather', '{"city": "Paris"}'),
                openai_call('c2', 'get_weather', '{"city": "Rome"}'),
            ],
        },
        {'role': 'tool', 'tool_call_id': 'c2', 'content': '21C'},
        {'role': 'tool', 'tool_call_id': 'c1', 'content': '18C'},
        {'role': 'assistant', 'content': '', 'tool_calls': [openai_call('c3', 'book', '{"city": ')]},
        {'role': 'tool', 'tool_call_id': 'c3', 'content': 'error'},
        {'role': 'assistant', 'content': None, 'function_call': {'name': 'legacy', 'arguments': '{}'}},
        {'role': 'function', 'name': 'legacy', 'content': 'done'},
        {'role': 'assistant', 'tool_calls': [openai_call('c4', 'later', '{}'), {'id': 'x', 'type': 'custom'}]},
    ]
    assert detect_format(messages) == 'openai'
    trajectory = trajectory_from_messages(messages)
    assert [(c.name, c.arguments, c.status, c.result, c.issued_by) for c in trajectory.tool_calls] == [
        ('get_weather', {'city': 'Paris'}, 'ok', '18C', 0),
        ('get_weather', {'city': 'Rome'}, 'ok', '21C', 0),
        ('book', None, 'ok', 'error', 1),  # chat messages record no failures
        ('legacy', {}, 'ok', 'done', 2),
        ('later', {}, 'deferred', None, 3),
    ]
    assert len(trajectory.model_requests) == 4
    assert trajectory.notes == ("message 9: 'custom' tool call skipped: not a function",)


def test_openai_sdk_objects_and_usage() -> None:
    function = SimpleNamespace(name='search', arguments='{"q": "x"}')
    assistant = SimpleNamespace(
        role='assistant',
        tool_calls=[SimpleNamespace(id='1', type='function', function=function)],
        usage=SimpleNamespace(prompt_tokens=12, completion_tokens=4),
        model='gpt-x',
    )
    tool = SimpleNamespace(role='tool', tool_call_id='1', content='found')
    trajectory = trajectory_from_messages([assistant, tool])
    assert [(c.name, c.arguments, c.status) for c in trajectory.tool_calls] == [('search', {'q': 'x'}, 'ok')]
    assert [(r.model, r.input_tokens, r.output_tokens) for r in trajectory.model_requests] == [('gpt-x', 12, 4)]


# -- ragas and LangChain ----------------------------------------------------------------------------------


class HumanMessage:
    type = 'human'

    def __init__(self, content: str) -> None:
        self.content = content


class ToolCallObject:
    def __init__(self, name: str, args: dict[str, Any]) -> None:
        self.name, self.args = name, args


class AIMessage:
    type = 'ai'

    def __init__(self, content: str, tool_calls: list[ToolCallObject] | None = None) -> None:
        self.content, self.tool_calls = content, tool_calls


class ToolMessage:
    type = 'tool'

    def __init__(self, content: str) -> None:
        self.content = content


def test_ragas_objects_and_dicts_read_the_same() -> None:
    objects = [
        HumanMessage('weather?'),
        AIMessage('', [ToolCallObject('weather', {'city': 'Paris'}), ToolCallObject('uv', {'city': 'Paris'})]),
        ToolMessage('18C'),
        AIMessage('', [ToolCallObject('book', {})]),
        AIMessage('It is 18C.'),
    ]
    dicts = [
        {'type': 'human', 'content': 'weather?'},
        {
            'type': 'ai',
            'content': '',
            'tool_calls': [{'name': 'weather', 'args': {'city': 'Paris'}}, {'name': 'uv', 'args': {'city': 'Paris'}}],
        },
        {'type': 'tool', 'content': '18C'},
        {'type': 'ai', 'content': '', 'tool_calls': [{'name': 'book', 'args': {}}]},
        {'type': 'ai', 'content': 'It is 18C.'},
    ]
    expected = [
        ('weather', {'city': 'Paris'}, 'ok', '18C'),  # tool messages answer the calls in order
        ('uv', {'city': 'Paris'}, 'ok', None),  # ragas counts every call, answered or not
        ('book', {}, 'ok', None),
    ]
    for messages in (objects, dicts):
        assert detect_format(messages) == 'ragas'
        trajectory = trajectory_from_messages(messages)
        assert [(c.name, c.arguments, c.status, c.result) for c in trajectory.tool_calls] == expected
        assert len(trajectory.model_requests) == 3


def test_langchain_ids_status_and_usage() -> None:
    messages = [
        {'type': 'system', 'content': 'be brief'},
        {
            'type': 'ai',
            'content': '',
            'tool_calls': [{'name': 'a', 'args': {}, 'id': 'x'}, {'name': 'b', 'args': {}, 'id': 'y'}],
            'usage_metadata': {'input_tokens': 5, 'output_tokens': 2},
            'response_metadata': {'model_name': 'claude'},
        },
        {'type': 'tool', 'content': 'failed', 'tool_call_id': 'y', 'status': 'error'},
        {'type': 'tool', 'content': 'ok', 'tool_call_id': 'x'},
    ]
    trajectory = trajectory_from_messages(messages)
    assert summary(trajectory) == [('a', 'ok', None, False), ('b', 'failed', 'raised', False)]
    assert [(r.model, r.input_tokens, r.output_tokens) for r in trajectory.model_requests] == [('claude', 5, 2)]


# -- input handling -------------------------------------------------------------------------------------


def test_json_text_and_empty_conversations() -> None:
    text = json.dumps([{'role': 'assistant', 'tool_calls': [openai_call('1', 'a', '{}')]}])
    assert [c.name for c in trajectory_from_messages(text).tool_calls] == ['a']
    assert [c.name for c in trajectory_from_messages(text.encode()).tool_calls] == ['a']
    empty = trajectory_from_messages([])
    assert (empty.tool_calls, empty.model_requests, empty.agent_names) == ((), (), ['main'])
    assert detect_format([]) == 'pydantic-ai'


@pytest.mark.parametrize(
    ('messages', 'error'),
    [
        ({'role': 'user'}, 'expected a list of messages, got dict'),
        ([{'role': 'user'}, 42], 'message 1: not a pydantic-ai, OpenAI chat or ragas message: 42'),
        (
            [{'type': 'human', 'content': 'x'}, {'role': 'user', 'content': 'y'}],
            'message 1 is a openai message, but message 0 is ragas: formats cannot mix',
        ),
        ([{'role': 'assistant', 'tool_calls': {'id': '1'}}], "message 0: tool_calls must be a list, got {'id': '1'}"),
        (
            [{'role': 'assistant', 'tool_calls': [openai_call('1', '', '{}')]}],
            "message 0: tool call without a name: ''",
        ),
        ([{'role': 'tool', 'content': 'x'}], 'message 0: tool message without a tool_call_id'),
        ([{'type': 'ai', 'content': '', 'tool_calls': [{'args': {}}]}], 'message 0: tool call without a name: None'),
        ([request(), {'kind': 'response', 'parts': 'text'}], "message 1: parts must be a list, got 'text'"),
        ([response(call(None, {}, '1'))], 'message 0: tool call without a name: None'),  # type: ignore[arg-type]
    ],
)
def test_malformed_input_names_the_message(messages: Any, error: str) -> None:
    with pytest.raises(ValueError) as info:
        trajectory_from_messages(messages)
    assert str(info.value) == error
