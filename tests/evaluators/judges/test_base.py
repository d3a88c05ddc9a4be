"""What the judges share (`judges/base.py`): what they are shown, the model they call, failures, settings.

The rendered trajectory every judge is shown is tested here too, from the judges' side:
`render_trajectory` (in `trajectory/rendering.py`) exists for them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import Evaluator, llm_as_a_judge
from pydantic_evals.evaluators.llm_as_a_judge import set_default_judge_model
from pydantic_evals.otel import SpanTree
from scenario import run_scenario

from agentic_evals import (
    AgentGoalAccuracy,
    AgentRun,
    ToolCall,
    TopicAdherence,
    Trajectory,
    TrajectoryJudge,
    capture,
    evaluate_traces_sync,
    evaluator_context,
    extract_trajectory,
    render_trajectory,
)
from agentic_evals import ModelRequest as RequestRecord
from agentic_evals.evaluators.judges.base import default_judge_model

from ...factories import EPOCH, TreeBuilder
from ...real_runs import expected_calls
from .scripted import (
    GOAL,
    GRADING,
    JUDGES,
    NO_TREE,
    SUPPORT_TRAJECTORY,
    evaluate,
    judge,
    reason,
    support_context,
    support_tree,
    topics,
)

# --- the rendered trajectory ---------------------------------------------------------------------------


def _call(name: str, **overrides: Any) -> ToolCall:
    values: dict[str, Any] = {
        'name': name,
        'arguments': {},
        'raw_arguments': '{}',
        'arguments_problem': None,
        'call_id': None,
        'result': 'done',
        'status': 'ok',
        'failure_stage': None,
        'agent': 'main',
        'agent_path': ('main',),
        'start': EPOCH,
        'end': EPOCH + timedelta(seconds=1),
        'span_id': 1,
    }
    values.update(overrides)
    return ToolCall(**values)


def _request(model: str | None, agent_path: tuple[str, ...], cost: float | None = None) -> RequestRecord:
    return RequestRecord(
        model=model,
        operation='chat',
        input_tokens=10,
        output_tokens=2,
        cache_read_tokens=0,
        cache_write_tokens=0,
        cost=cost,
        agent=agent_path[-1],
        agent_path=agent_path,
        start=EPOCH,
        end=EPOCH,
        span_id=1,
    )


EVERY_SHAPE = Trajectory(
    tool_calls=(
        _call('search', arguments={'query': 'café', 'n': [1, 2]}, result='line one\nline two'),
        _call(
            'fetch',
            status='failed',
            failure_stage='validation',
            arguments=None,
            arguments_problem="could not be parsed as JSON: the model sent '{\"u'",
            result='invalid',
        ),
        _call('check', status='failed', failure_stage='retry', result='try again'),
        _call('explode', status='failed', failure_stage='raised', result=None),
        _call(
            'lookup',
            agent='expert',
            agent_path=('main', 'expert'),
            arguments=None,
            arguments_problem='not available in span (`include_content` may be disabled).',
            result=None,
        ),
        _call('job', status='deferred', result=None),
        _call('submit', is_output_function=True, result='x' * 30),
    ),
    model_requests=(
        _request('gpt', ('main',), cost=0.25),
        _request('gpt', ('main',)),
        _request('mini', ('main', 'expert'), cost=0.125),
        _request(None, ('main',)),
    ),
    agents=(AgentRun('main', ('main',), 1, EPOCH, EPOCH), AgentRun('expert', ('main', 'expert'), 2, EPOCH, EPOCH)),
    notes=("span 'execute_tool ?' skipped: gen_ai.tool.name is int 3, not a string",),
)


def test_render_every_call_shape() -> None:
    assert (
        render_trajectory(EVERY_SHAPE, max_result_chars=20)
        == """\
agents: main, main > expert
model requests: 4 (gpt x2, mini x1, unknown model x1); tokens: 40 input, 8 output; cost: 0.375000
tool calls: 7
1. [main] search -> ok
   arguments: {"query": "café", "n": [1, 2]}
   result: line one\\nline two
2. [main] fetch -> failed: its arguments did not validate
   arguments could not be parsed as JSON: the model sent '{"u'
   result: invalid
3. [main] check -> failed: the tool asked the model to retry
   arguments: {}
   result: try again
4. [main] explode -> failed: the tool raised an exception
   arguments: {}
   result: not recorded
5. [main > expert] lookup -> ok
   arguments not available in span (`include_content` may be disabled).
   result: not recorded
6. [main] job -> deferred: waiting for approval or external execution, did not run
   arguments: {}
7. [main] submit -> ok (output function: its return value is the final output)
   arguments: {}
   result: xxxxxxxxxxxxxxxxxxxx... (10 more characters)
skipped span: span 'execute_tool ?' skipped: gen_ai.tool.name is int 3, not a string"""
    )


def test_render_scoped_to_an_agent() -> None:
    assert (
        render_trajectory(EVERY_SHAPE, agent='expert')
        == """\
scope: agent 'expert', sub-agents included
agents: main > expert
model requests: 1 (mini x1); tokens: 10 input, 2 output; cost: 0.125000
tool calls: 1
1. [main > expert] lookup -> ok
   arguments not available in span (`include_content` may be disabled).
   result: not recorded
skipped span: span 'execute_tool ?' skipped: gen_ai.tool.name is int 3, not a string"""
    )
    top_level = render_trajectory(EVERY_SHAPE, include_subagents=False)
    assert top_level.splitlines()[:4] == [
        'scope: the top-level agents, sub-agents excluded',
        'agents: main',
        'model requests: 3 (gpt x2, unknown model x1); tokens: 30 input, 6 output; cost: 0.250000',
        'tool calls: 6',
    ]
    assert 'lookup' not in top_level


def test_render_empty_trajectory() -> None:
    assert render_trajectory(Trajectory()) == 'agents: none recorded\nmodel requests: none\ntool calls: none'


def test_render_hand_built_tree() -> None:
    assert render_trajectory(extract_trajectory(support_tree())) == SUPPORT_TRAJECTORY


def test_render_real_run(scenario_tree: SpanTree) -> None:
    """Every recorded attempt is shown, in order, with the real run's agents, statuses and arguments."""
    text = render_trajectory(extract_trajectory(scenario_tree))
    assert text.splitlines()[0] == 'agents: main, main > expert, crasher'
    headers = [line for line in text.splitlines() if line[:1].isdigit()]
    rows = expected_calls(content=True)
    assert len(headers) == len(rows)
    assert text.splitlines()[2] == f'tool calls: {len(rows)}'
    for header, (name, status, _stage, path, _arguments, _output_function, _issued) in zip(headers, rows, strict=True):
        assert header.split('. ', 1)[1].startswith(f'[{" > ".join(path)}] {name} -> {status}')
    assert '   arguments: {"a": 2, "b": 3}' in text
    assert '[crasher] explode -> failed: the tool raised an exception' in text
    assert '[main] run_report_job -> deferred' in text
    assert '[main] submit_report -> ok (output function' in text
    # Deterministic: nothing run-specific (ids, timings) leaks into what the judge reads.
    assert render_trajectory(extract_trajectory(scenario_tree)) == text


def test_render_real_run_without_content() -> None:
    provider = TracerProvider()
    with capture(provider) as captured:
        run_scenario(version=5, include_content=False, tracer_provider=provider)
    text = render_trajectory(extract_trajectory(captured.tree))
    assert (
        '1. [main] search -> ok\n   arguments not available in span (`include_content` may be disabled).\n   result: not recorded\n'
        in text
    )


# --- inputs, output and scope ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    'make', [lambda m: TopicAdherence(['x'], model=m), lambda m: AgentGoalAccuracy('done', model=m)]
)
def test_without_a_span_tree_the_judge_sees_inputs_and_output(make: Any) -> None:
    scripted = judge(topics(('a', True, 'x')) if 'Topic' in repr(make(None)) else {**GOAL, 'achieved': True})
    result = evaluate(make(scripted.model), evaluator_context(NO_TREE, inputs={'question': 'q'}, output='a'))
    assert result.value == 1.0
    assert scripted.prompt.startswith(
        '<Input>\n{"question":"q"}\n</Input>\n<Output>\na\n</Output>\n<Trajectory>\nno trajectory recorded\n</Trajectory>\n'
    )


def test_without_anything_to_judge_the_judge_is_not_called() -> None:
    scripted = judge(GOAL)
    result = evaluate(AgentGoalAccuracy(model=scripted.model), evaluator_context(NO_TREE))
    assert result == reason(0.0, 'nothing to judge: no inputs, no output and no span tree')
    assert scripted.requests == []


def test_case_inputs_and_output_win_over_the_trace() -> None:
    scripted = judge(GOAL)
    evaluate(AgentGoalAccuracy('r', model=scripted.model), support_context(inputs='case input', output=['case', 1]))
    assert scripted.prompt.startswith('<Input>\ncase input\n</Input>\n<Output>\n["case",1]\n</Output>\n')


def test_missing_inputs_and_output_are_marked_not_recorded() -> None:
    scripted = judge(GRADING)
    b = TreeBuilder()
    b.tool('search', b.agent('main'), arguments={})
    evaluate(TrajectoryJudge('r', model=scripted.model), evaluator_context(b.build()))
    assert scripted.prompt.startswith('<Input>\nnot recorded\n</Input>\n<Output>\nnot recorded\n</Output>\n')


def test_agent_scope() -> None:
    scripted = judge(GRADING)
    evaluate(TrajectoryJudge('r', model=scripted.model, agent='billing'), support_context())
    assert "<Trajectory>\nscope: agent 'billing', sub-agents included\nagents: support > billing\n" in scripted.prompt
    assert 'lookup_order' not in scripted.prompt
    scripted = judge(GOAL)
    result = evaluate(AgentGoalAccuracy('r', model=scripted.model, agent='nobody'), support_context())
    assert result == reason(0.0, "agent 'nobody' not found in the trace; agents seen: ['billing', 'support']")
    assert scripted.requests == []


# --- failures ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('answer', 'prefix'),
    [
        (RuntimeError('provider is down'), 'judge failed: RuntimeError: provider is down'),
        (ConnectionError('network unreachable'), 'judge failed: ConnectionError: network unreachable'),
        (
            'I think it passes.',
            'judge failed: UnexpectedModelBehavior: Exceeded maximum output retries (1) (last error:',
        ),
        (
            {'reason': 'ok', 'pass': True, 'score': 7},
            'judge failed: UnexpectedModelBehavior: Exceeded maximum output retries (1) (last error: score: Input should be less than or equal to 1)',
        ),
        (
            {'reason': 'ok'},
            'judge failed: UnexpectedModelBehavior: Exceeded maximum output retries (1) (last error: pass: Field required; score: Field required)',
        ),
    ],
    ids=['raises', 'network', 'text-instead-of-structure', 'score-out-of-range', 'fields-missing'],
)
def test_a_failing_judge_gives_a_failing_result(answer: Any, prefix: str) -> None:
    ctx = support_context()
    goal = evaluate(AgentGoalAccuracy(model=judge(answer).model), ctx)
    topic = evaluate(TopicAdherence(['x'], model=judge(answer).model), ctx)
    graded = evaluate(TrajectoryJudge('r', model=judge(answer).model, score={}), ctx)
    assert goal.value == 0.0 and topic.value == 0.0
    assert graded['TrajectoryJudge_score'].value == 0.0 and graded['TrajectoryJudge_pass'].value is False
    if isinstance(answer, dict):  # the other judges reject this answer for their own missing fields
        assert graded['TrajectoryJudge_pass'].reason == prefix
    else:
        for result in (goal, topic, graded['TrajectoryJudge_score'], graded['TrajectoryJudge_pass']):
            assert result.reason.startswith(prefix)


def test_an_unknown_model_name_is_a_failing_result_not_a_crash() -> None:
    result = evaluate(AgentGoalAccuracy('r', model='no-such-provider:model'), support_context())
    assert result.value == 0.0
    assert result.reason.startswith('judge failed: ')
    assert 'no-such-provider' in result.reason


def test_long_errors_are_cut() -> None:
    result = evaluate(AgentGoalAccuracy('r', model=judge(RuntimeError('x' * 2000)).model), support_context())
    assert len(result.reason) == len('judge failed: ') + 503
    assert result.reason.endswith('x...')


# --- model choice -----------------------------------------------------------------------------------------


def test_no_model_uses_pydantic_evals_default_judge_model(default_model: None) -> None:
    """`set_default_judge_model` switches `LLMJudge` and these judges together."""
    assert default_judge_model() == getattr(llm_as_a_judge, '_default_model')  # noqa: B009
    scripted = judge(GOAL)
    set_default_judge_model(scripted.model)
    assert isinstance(default_judge_model(), FunctionModel)
    assert evaluate(AgentGoalAccuracy('r'), support_context()).reason.startswith('goal not achieved')
    assert len(scripted.requests) == 1


def test_model_settings_reach_the_model() -> None:
    seen: list[Any] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.model_settings)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, GOAL)])

    evaluate(
        AgentGoalAccuracy('r', model=FunctionModel(respond), model_settings={'temperature': 0.0}), support_context()
    )
    assert seen == [{'temperature': 0.0}]


def test_test_model_gives_a_valid_structured_answer() -> None:
    """pydantic-ai's `TestModel` fills the output schema itself: the schemas are satisfiable as declared."""
    ctx = support_context()
    assert evaluate(AgentGoalAccuracy(model=TestModel()), ctx).reason.startswith('goal ')
    assert isinstance(evaluate(TrajectoryJudge('r', model=TestModel(), score={}), ctx)['TrajectoryJudge_score'], float)
    assert evaluate(TopicAdherence(['a'], model=TestModel()), ctx).reason.startswith('F1=')


def test_judges_run_concurrently() -> None:
    async def main() -> list[Any]:
        runs = [
            AgentGoalAccuracy('r', model=judge({**GOAL, 'achieved': i % 2 == 0}).model).evaluate(support_context())
            for i in range(20)
        ]
        return await asyncio.gather(*runs)

    assert [r.value for r in asyncio.run(main())] == [1.0, 0.0] * 10


# --- the settings every judge has -------------------------------------------------------------------------

# One valid instance of each judge, so a test can set one shared field to a bad value.
MAKERS: dict[str, Any] = {
    'TopicAdherence': lambda **kw: TopicAdherence(['orders'], **kw),
    'AgentGoalAccuracy': lambda **kw: AgentGoalAccuracy(**kw),
    'TrajectoryJudge': lambda **kw: TrajectoryJudge('r', **kw),
}

SHARED_BAD_SETTINGS = [
    ('model', 3, "model must be a model name (e.g. 'openai:gpt-4o'), a pydantic-ai Model or None, got 3"),
    ('model', ' ', "model must be a model name (e.g. 'openai:gpt-4o'), a pydantic-ai Model or None, got ' '"),
    ('model_settings', 'cold', "model_settings must be a mapping of setting names to values, got 'cold'"),
    ('evaluation_name', 7, 'evaluation_name must be a string or None, got 7'),
    ('agent', 3, 'agent must be a string or None, got 3'),
    ('include_subagents', 'no', "include_subagents must be true or false, got 'no'"),
]


@pytest.mark.parametrize('judge_name', MAKERS)
@pytest.mark.parametrize(('field', 'value', 'problem'), SHARED_BAD_SETTINGS, ids=lambda x: str(x)[:20])
def test_a_bad_shared_setting_raises_naming_the_judge_and_field(
    judge_name: str, field: str, value: object, problem: str
) -> None:
    with pytest.raises(ValueError) as error:
        MAKERS[judge_name](**{field: value})
    assert str(error.value) == f'{judge_name}: {problem}'


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ValueError) as error:
        TopicAdherence([], agent=3, include_subagents=None)  # type: ignore[arg-type]
    assert str(error.value) == (
        'TopicAdherence: reference_topics must be a non-empty list of topics, got []; agent must be a string or None,'
        ' got 3; include_subagents must be true or false, got None'
    )


def test_good_shared_settings_construct() -> None:
    for make in MAKERS.values():
        make(
            model=TestModel(),
            model_settings={'temperature': 0.0},
            evaluation_name='x',
            agent='support',
            include_subagents=False,
        )
        make(model='openai:gpt-4o')


# --- dataset files ----------------------------------------------------------------------------------------


def test_a_model_instance_is_written_as_its_id(tmp_path: Path) -> None:
    path = tmp_path / 'dataset.yaml'
    evaluators: list[Evaluator[object, object, object]] = [TrajectoryJudge('r', model=judge(GRADING).model)]
    Dataset[object, object, object](name='d', cases=[Case(name='c', inputs='x')], evaluators=evaluators).to_file(
        path, custom_evaluator_types=JUDGES
    )
    assert '- TrajectoryJudge:\n    rubric: r\n    model: function:scripted-judge\n' in path.read_text()


# --- inside a pydantic-evals Dataset --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Trace:
    trace_id: str
    tree: SpanTree
    name: str


def test_judges_in_a_dataset_over_a_captured_trace(scenario_tree: SpanTree) -> None:
    """A real run's trace, replayed inside a Dataset case: the judges see the trace's prompt, output and calls."""
    topic_judge = judge(topics(('tool spans', True, 'tracing'), ('cache', False, None)))
    goal_judge = judge({**GOAL, 'achieved': True})
    trajectory_judge = judge(GRADING)
    dataset = Dataset[object, object, object](
        name='d',
        cases=[Case(name='scenario', inputs=None)],
        evaluators=[
            TopicAdherence(['tracing'], model=topic_judge.model),
            AgentGoalAccuracy('A report on tool spans', model=goal_judge.model),
            TrajectoryJudge('r', model=trajectory_judge.model, score={}, agent='expert'),
        ],
    )
    report = evaluate_traces_sync([_Trace('0' * 32, scenario_tree, 'scenario')], dataset=dataset)
    assert report.failures == []
    [case] = report.cases
    assert {name: (r.value, r.reason) for name, r in case.scores.items()} == {
        'TopicAdherence': (
            1.0,
            "F1=1.000 (precision=1/1=1.000, recall=1/1=1.000); answered on-topic: 'tool spans' -> 'tracing';"
            " answered off-topic: none; refused on-topic: none; refused off-topic: 'cache'",
        ),
        'AgentGoalAccuracy': (
            1.0,
            "goal achieved: The refund was not issued. (outcome: 'Reported the shipping date; no refund.')",
        ),
        'TrajectoryJudge_score': (0.25, None),
    }
    assert {name: (r.value, r.reason) for name, r in case.assertions.items()} == {
        'TrajectoryJudge_pass': (False, GRADING['reason'])
    }
    shown = topic_judge.prompt
    assert shown.startswith(
        '<Input>\nWrite a short report on how tool calls appear in OpenTelemetry spans.\n</Input>\n'
        '<Output>\nTool spans: Arguments live on execute_tool spans.\n</Output>\n<Trajectory>\nagents: main, main > expert, crasher\n'
    )
    assert '[main > expert] lookup -> ok' in trajectory_judge.prompt
    assert '[main] search' not in trajectory_judge.prompt
