"""Turns: `Trajectory.turns()` on spans and on message histories, per-turn scoring and its mean, and
a real two-turn pydantic-ai conversation scored from its spans and from its messages."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_evals.evaluators import EvaluationReason

from agentic_evals import (
    ToolCallMatch,
    Trajectory,
    TrajectoryMatch,
    capture,
    evaluator_context,
    extract_trajectory,
    tool_call_match,
    trajectory_from_messages,
    trajectory_match,
)
from agentic_evals.scoring.turns import score_turns

from ..factories import TreeBuilder


def names(trajectory: Trajectory) -> list[str]:
    return [call.name for call in trajectory.tool_calls]


# -- turns of spans ----------------------------------------------------------------------------------


def test_one_run_or_none_is_one_turn() -> None:
    nothing = extract_trajectory(TreeBuilder().build())
    assert nothing.turns() == [nothing]
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('a', root, arguments={})
    expert = b.agent('expert', root)  # a sub-agent's run is no turn of its own
    b.tool('b', expert, arguments={})
    one = extract_trajectory(b.build())
    (turn,) = one.turns()
    assert turn is one


def two_turns() -> Trajectory:
    b = TreeBuilder()
    b.tool('early', None, arguments={})  # before any run: the first turn's
    first = b.agent('main')
    b.chat(first, issued=['c1', 'c2'])
    b.tool('a', first, arguments={'n': 1}, call_id='c1')
    expert = b.agent('expert', first)
    b.chat(expert, issued=['c3'])
    b.tool('s', expert, arguments={}, call_id='c3')
    b.chat(expert)
    b.chat(first)
    second = b.agent('main')
    b.tool('b', second, arguments={}, call_id='c2')  # approved in the second run, issued in the first
    b.chat(second, issued=['c4'])
    b.tool('c', second, arguments={}, call_id='c4')
    b.chat(second)
    return extract_trajectory(b.build())


def test_each_outermost_run_is_a_turn() -> None:
    trajectory = two_turns()
    assert [(c.name, c.issued_by) for c in trajectory.tool_calls] == [
        ('early', None),
        ('a', 0),
        ('s', 1),
        ('b', 0),
        ('c', 4),
    ]
    first, second = trajectory.turns()
    assert names(first) == ['early', 'a', 's']  # the sub-agent's calls stay in their run's turn
    assert names(second) == ['b', 'c']
    assert [r.agent_path for r in first.model_requests] == [
        ('main',),
        ('main', 'expert'),
        ('main', 'expert'),
        ('main',),
    ]
    assert [r.agent_path for r in second.model_requests] == [('main',), ('main',)]
    assert [run.name for run in first.agents] == ['main', 'expert']
    assert [run.name for run in second.agents] == ['main']
    # `issued_by` indexes the turn's own requests; an issuer in another turn is no issuer here
    assert [c.issued_by for c in first.tool_calls] == [None, 0, 1]
    assert [c.issued_by for c in second.tool_calls] == [None, 0]
    for turn in (first, second):
        for call in turn.tool_calls:
            assert call.issued_by is None or turn.model_requests[call.issued_by].start <= call.start


def test_runs_of_different_agents_are_turns_too() -> None:
    b = TreeBuilder()
    b.tool('a', b.agent('main'), arguments={})
    b.tool('x', b.agent('crasher'), arguments={})
    first, second = extract_trajectory(b.build()).turns()
    assert (names(first), names(second)) == (['a'], ['x'])
    assert (first.agent_names, second.agent_names) == (['main'], ['crasher'])


# -- turns of message histories ------------------------------------------------------------------------


def openai_turns(*turns: list[str], system: bool = True) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{'role': 'system', 'content': 'be brief'}] if system else []
    ids = iter(range(100))
    for number, calls in enumerate(turns):
        messages.append({'role': 'user', 'content': f'question {number}'})
        for name in calls:
            i = str(next(ids))
            messages.append(
                {
                    'role': 'assistant',
                    'tool_calls': [{'id': i, 'type': 'function', 'function': {'name': name, 'arguments': '{}'}}],
                }
            )
            messages.append({'role': 'tool', 'tool_call_id': i, 'content': 'ok'})
        messages.append({'role': 'assistant', 'content': f'answer {number}'})
    return messages


def ragas_turns(*turns: list[str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for number, calls in enumerate(turns):
        messages.append({'type': 'human', 'content': f'question {number}'})
        for name in calls:
            messages += [
                {'type': 'ai', 'content': '', 'tool_calls': [{'name': name, 'args': {}}]},
                {'type': 'tool', 'content': 'ok'},
            ]
        messages.append({'type': 'ai', 'content': f'answer {number}'})
    return messages


def pydantic_ai_turns(*turns: list[str]) -> list[ModelMessage]:
    """Messages built by hand: the responses carry a timestamp (their default), the requests none."""
    messages: list[ModelMessage] = []
    ids = iter(range(100))
    for number, calls in enumerate(turns):
        messages.append(ModelRequest(parts=[UserPromptPart(f'question {number}')]))
        for name in calls:
            i = f'c{next(ids)}'
            messages.append(ModelResponse(parts=[ToolCallPart(name, {}, tool_call_id=i)]))
            messages.append(ModelRequest(parts=[ToolReturnPart(name, 'ok', tool_call_id=i)]))
        messages.append(ModelResponse(parts=[TextPart(f'answer {number}')]))
    return messages


def pydantic_ai_dicts(*turns: list[str]) -> list[dict[str, Any]]:
    """Serialised messages with a timestamp on every message, as a real run records them."""
    clock = (f'2026-01-01T00:00:{second:02d}Z' for second in range(60))
    messages: list[dict[str, Any]] = []
    ids = iter(range(100))

    def request(*parts: dict[str, Any]) -> dict[str, Any]:
        return {'kind': 'request', 'timestamp': next(clock), 'parts': list(parts)}

    def response(*parts: dict[str, Any]) -> dict[str, Any]:
        return {'kind': 'response', 'timestamp': next(clock), 'parts': list(parts)}

    for number, calls in enumerate(turns):
        messages.append(request({'part_kind': 'user-prompt', 'content': f'question {number}'}))
        for name in calls:
            i = f'c{next(ids)}'
            messages.append(response({'part_kind': 'tool-call', 'tool_name': name, 'args': {}, 'tool_call_id': i}))
            messages.append(
                request({'part_kind': 'tool-return', 'tool_name': name, 'content': 'ok', 'tool_call_id': i})
            )
        messages.append(response({'part_kind': 'text', 'content': f'answer {number}'}))
    return messages


FORMATS = {
    'openai': openai_turns,
    'ragas': ragas_turns,
    'pydantic-ai': pydantic_ai_dicts,
    'pydantic-ai, requests without timestamps': pydantic_ai_turns,
}


@pytest.mark.parametrize('form', list(FORMATS))
def test_each_user_prompt_after_a_response_starts_a_turn(form: str) -> None:
    trajectory = trajectory_from_messages(FORMATS[form](['a', 'b'], [], ['c']), agent='bot')
    turns = trajectory.turns()
    assert [names(turn) for turn in turns] == [['a', 'b'], [], ['c']]
    assert [len(turn.model_requests) for turn in turns] == [3, 1, 2]  # the answers are responses too
    assert [[run.name for run in turn.agents] for turn in turns] == [['bot'], ['bot'], ['bot']]
    # each call was issued by a response of its own turn
    for turn in turns:
        assert [c.issued_by for c in turn.tool_calls] == list(range(len(turn.tool_calls)))
    single = trajectory_from_messages(FORMATS[form](['a', 'b']))
    assert single.turns() == [single]


def test_messages_made_within_one_clock_tick_keep_their_turns() -> None:
    """A scripted model answers within a clock tick: every message can carry the same timestamp (it
    made the turns flaky). The order of the history decides."""
    messages = pydantic_ai_turns(['a', 'b'], [], ['c'])
    tick = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for message in messages:
        message.timestamp = tick
        for part in message.parts:
            if hasattr(part, 'timestamp'):
                part.timestamp = tick
    turns = trajectory_from_messages(messages, agent='bot').turns()
    assert [names(turn) for turn in turns] == [['a', 'b'], [], ['c']]
    assert [len(turn.model_requests) for turn in turns] == [3, 1, 2]


def test_prompts_with_no_response_between_are_one_turn() -> None:
    messages = [
        {'role': 'user', 'content': 'hello'},
        {'role': 'user', 'content': 'are you there?'},
        {
            'role': 'assistant',
            'tool_calls': [{'id': '1', 'type': 'function', 'function': {'name': 'a', 'arguments': '{}'}}],
        },
        {'role': 'tool', 'tool_call_id': '1', 'content': 'ok'},
        {'role': 'assistant', 'content': 'yes'},
        {'role': 'user', 'content': 'thanks'},
        {'role': 'user', 'content': 'bye'},
    ]
    turns = trajectory_from_messages(messages).turns()
    assert [names(turn) for turn in turns] == [['a'], []]
    assert [len(turn.model_requests) for turn in turns] == [2, 0]


def test_a_conversation_without_prompts_is_one_turn() -> None:
    messages = [
        {
            'role': 'assistant',
            'tool_calls': [{'id': '1', 'type': 'function', 'function': {'name': 'a', 'arguments': '{}'}}],
        }
    ]
    trajectory = trajectory_from_messages(messages)
    assert trajectory.turns() == [trajectory]


# -- scoring turn by turn -------------------------------------------------------------------------------


def test_each_turn_is_scored_alone_and_the_value_is_their_mean() -> None:
    trajectory = trajectory_from_messages(openai_turns(['a', 'b'], [], ['c']))
    exact = [[{'name': 'a'}, {'name': 'b'}], [], [{'name': 'c'}]]
    result = tool_call_match(trajectory, exact)
    assert result.value == 1.0
    assert result.reason == (
        '3 turn(s), 3 fully matched, mean=1.000; turn 1: match (strict, arguments exact): 2 expected, 2 actual'
        ' call(s); paired: a(...) ~ a(), b(...) ~ b(); turn 2: match (strict, arguments exact): 0 expected, 0 actual'
        ' call(s); turn 3: match (strict, arguments exact): 1 expected, 1 actual call(s); paired: c(...) ~ c()'
    )
    assert [turn.value for turn in result.turns] == [True, True, True]
    # all the calls in one turn: the calls are all there, but not turn by turn
    lumped = tool_call_match(trajectory, [[{'name': 'a'}, {'name': 'b'}, {'name': 'c'}], [], []], mode='superset')
    assert lumped.value == pytest.approx(2 / 3)
    assert [turn.value for turn in lumped.turns] == [False, True, True]  # nothing expected: superset passes
    # the same expectation as one list: one verdict for the whole conversation
    assert tool_call_match(trajectory, [{'name': 'a'}, {'name': 'b'}, {'name': 'c'}], mode='superset').value is True


def test_turns_missing_or_not_expected_score_zero() -> None:
    trajectory = trajectory_from_messages(openai_turns(['a'], ['b']))
    short = tool_call_match(trajectory, [[{'name': 'a'}]])
    assert short.value == 0.5
    assert short.reason == (
        '2 turn(s), 1 fully matched, mean=0.500; turn 1: match (strict, arguments exact): 1 expected, 1 actual'
        ' call(s); paired: a(...) ~ a(); turn 2: not expected (1 expected)'
    )
    assert len(short.turns) == 1
    long = tool_call_match(trajectory, [[{'name': 'a'}], [{'name': 'b'}], [{'name': 'c'}], []])
    assert long.value == 0.5
    assert long.reason.endswith(
        'turn 3: expected, but the conversation has 2 turn(s); turn 4: expected, but the conversation has 2 turn(s)'
    )
    names_short = trajectory_match(trajectory, [['a']])
    assert names_short.value == 0.5
    assert names_short.reason.endswith('; turn 2: not expected (1 expected)')
    names_long = trajectory_match(trajectory, [['a'], ['b'], ['c']])
    assert names_long.value == pytest.approx(2 / 3)
    assert names_long.reason.endswith('; turn 3: expected, but the conversation has 2 turn(s)')


def test_a_turn_score_is_the_metrics_own_value() -> None:
    trajectory = trajectory_from_messages(openai_turns(['a', 'b'], ['c', 'd']))
    # in_order F1 per turn: 1.0, then LCS 1 of 2 calls against 1 expected: precision 1/2, recall 1, F1 2/3
    result = trajectory_match(trajectory, [['a', 'b'], ['d']])
    assert result.value == pytest.approx((1.0 + 2 / 3) / 2)
    assert result.reason.startswith('2 turn(s), 1 fully matched, mean=0.833; turn 1: LCS=2,')


def test_per_turn_scoring_with_an_agent_scope() -> None:
    trajectory = two_turns()
    # the expert ran in the first turn only: the second is scored on no calls
    assert tool_call_match(trajectory, [[{'name': 's'}], []], agent='expert').value == 1.0
    assert tool_call_match(trajectory, [[{'name': 's'}], [{'name': 's'}]], agent='expert').value == 0.5
    assert trajectory_match(trajectory, [['s'], []], agent='expert').value == 1.0
    assert trajectory_match(trajectory, [['s'], ['s']], agent='expert').value == 0.5
    own = tool_call_match(
        trajectory, [[{'name': 'a'}], [{'name': 'b'}, {'name': 'c'}]], agent='main', include_subagents=False
    )
    assert own.value == 1.0
    assert own.reason.endswith(" (agent 'main', sub-agents excluded)")
    # an agent in no turn: nothing to score
    missing = tool_call_match(trajectory, [[], []], agent='nobody')
    assert (missing.value, missing.reason) == (
        0.0,
        "agent 'nobody' not found in the trace; agents seen: ['expert', 'main']",
    )
    assert trajectory_match(trajectory, [[], []], agent='nobody').value == 0.0


def test_score_turns_alone() -> None:
    trajectory = trajectory_from_messages(openai_turns(['a'], ['b'], ['c']))
    seen: list[tuple[list[str], str]] = []

    class Result:
        def __init__(self, value: float, reason: str) -> None:
            self.value, self.reason = value, reason

    def score(turn: Trajectory, expected: str) -> Result:
        seen.append((names(turn), expected))
        return Result(0.25 if expected == 'x' else 1.0, f'saw {names(turn)}')

    mean, reason, results = score_turns(trajectory, ['x', 'y'], score)
    assert seen == [(['a'], 'x'), (['b'], 'y')]
    assert mean == pytest.approx((0.25 + 1.0 + 0.0) / 3)
    assert (
        reason
        == "3 turn(s), 1 fully matched, mean=0.417; turn 1: saw ['a']; turn 2: saw ['b']; turn 3: not expected (2 expected)"
    )
    assert [r.value for r in results] == [0.25, 1.0]


# -- a real two-turn conversation ---------------------------------------------------------------------


def weather_agent() -> Agent[None, str]:
    """Turn 1 (a city): the weather there and in Paris, in one response; turn 2: book, then answer."""

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        asked = isinstance(last, ModelRequest) and any(isinstance(p, UserPromptPart) for p in last.parts)
        prompts = [str(p.content) for m in messages for p in m.parts if isinstance(p, UserPromptPart)]
        if asked and len(prompts) == 1:
            return ModelResponse(
                parts=[ToolCallPart('weather', {'city': 'Lyon'}), ToolCallPart('weather', {'city': 'Paris'})]
            )
        if asked:
            return ModelResponse(parts=[ToolCallPart('book', {'city': 'Lyon', 'nights': 2})])
        return ModelResponse(parts=[TextPart('done')])

    agent: Agent[None, str] = Agent(FunctionModel(script), name='planner')
    agent.instrument = True

    @agent.tool_plain
    def weather(city: str) -> str:
        return 'sunny'

    @agent.tool_plain
    def book(city: str, nights: int) -> str:
        return 'booked'

    return agent


@pytest.fixture(scope='module')
def conversation() -> tuple[Any, Any]:
    with capture():  # a global SDK provider for the instrumented agent, when none is set yet
        pass
    agent = weather_agent()
    with capture() as captured:
        first = agent.run_sync('Weather in Lyon?')
        second = agent.run_sync('Book Lyon for two nights.', message_history=first.all_messages())
    return captured, second


PER_TURN = [
    [{'name': 'weather', 'arguments': {'city': 'Paris'}}, {'name': 'weather', 'arguments': {'city': 'Lyon'}}],
    [{'name': 'book', 'arguments': {'city': 'Lyon', 'nights': 2}}],
]


def test_a_real_conversation_has_two_turns(conversation: tuple[Any, Any]) -> None:
    captured, result = conversation
    trajectory = extract_trajectory(captured.tree)
    first, second = trajectory.turns()
    assert [(c.name, c.arguments) for c in first.calls()] == [
        ('weather', {'city': 'Lyon'}),
        ('weather', {'city': 'Paris'}),
    ]
    assert [(c.name, c.arguments) for c in second.calls()] == [('book', {'city': 'Lyon', 'nights': 2})]
    assert (len(first.model_requests), len(second.model_requests)) == (2, 2)
    # the message history splits at the second prompt the same way
    from_messages = trajectory_from_messages(result.all_messages()).turns()
    assert [names(turn) for turn in from_messages] == [['weather', 'weather'], ['book']]
    assert [len(turn.model_requests) for turn in from_messages] == [2, 2]


@pytest.mark.parametrize(
    ('evaluator', 'value'),
    [
        (ToolCallMatch(PER_TURN), 1.0),  # strict: both weather calls came in one response, in any order
        (ToolCallMatch(PER_TURN[::-1], mode='unordered'), 0.0),
        (
            ToolCallMatch(
                [PER_TURN[0], [{'name': 'book', 'arguments': {'city': 'Paris', 'nights': 2}}]], mode='superset'
            ),
            0.5,
        ),
        # in_order: Lyon's call came before Paris's, and the expectation asks for Paris first
        (ToolCallMatch([PER_TURN[0], [{'name': 'book'}]], mode='in_order', threshold=0.5), 0.5),
        (ToolCallMatch([PER_TURN[0][::-1], [{'name': 'book'}]], mode='in_order'), 1.0),
        (ToolCallMatch([PER_TURN[0]], mode='superset'), 0.5),  # the second turn was not expected
        (ToolCallMatch([*PER_TURN, [{'name': 'book'}]], mode='superset'), pytest.approx(2 / 3)),  # nor reached
        (ToolCallMatch([[{'name': 'weather'}], []], mode='subset'), 0.0),  # a weather call too many; an unexpected book
        (TrajectoryMatch([['weather', 'weather'], ['book']]), 1.0),
        (TrajectoryMatch([['weather'], ['book']], threshold=0.9), pytest.approx((2 / 3 + 1) / 2)),
        (TrajectoryMatch([['weather', 'weather']], order='exact'), 0.5),
        (TrajectoryMatch([['weather', 'weather'], ['book'], ['book']], order='any_order'), pytest.approx(2 / 3)),
    ],
)
def test_per_turn_checks_on_the_real_conversation(conversation: tuple[Any, Any], evaluator: Any, value: Any) -> None:
    captured, result = conversation
    ctx = evaluator_context(captured, output=result, inputs=result.all_messages())

    def plain(outcome: Any) -> tuple[Any, Any]:
        if isinstance(outcome, dict):  # with a threshold: the score and its pass
            outcome = outcome[evaluator.get_default_evaluation_name()]
        assert isinstance(outcome, EvaluationReason)
        return outcome.value, outcome.reason

    from_spans = plain(evaluator.evaluate(ctx))
    assert from_spans[0] == value
    for source in ('output', 'inputs'):  # the run's result, and its messages
        scored = type(evaluator)(**{**evaluator.build_serialization_arguments(), 'conversation': source})
        assert plain(scored.evaluate(ctx)) == from_spans
    # the plain functions give the same
    options = evaluator.build_serialization_arguments()
    options.pop('threshold', None)
    trajectory = extract_trajectory(captured.tree)
    if isinstance(evaluator, ToolCallMatch):
        computed = tool_call_match(trajectory, **options)
    else:
        computed = trajectory_match(trajectory, **options)
    assert (computed.value, computed.reason) == from_spans
