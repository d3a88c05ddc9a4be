"""LLM judges with scripted models: what each judge is shown, how scores follow its answers, failures."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext, llm_as_a_judge
from pydantic_evals.evaluators.llm_as_a_judge import set_default_judge_model
from pydantic_evals.otel import SpanTree, SpanTreeRecordingError
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
from agentic_evals.evaluators.judges.prompts import (
    GOAL_INFERRED_PROMPT,
    GOAL_WITH_REFERENCE_PROMPT,
    TOPIC_ADHERENCE_PROMPT,
    TRAJECTORY_JUDGE_PROMPT,
)

from ...factories import EPOCH, TreeBuilder
from ...real_runs import expected_calls

JUDGES: list[type[Evaluator[object, object, object]]] = [AgentGoalAccuracy, TopicAdherence, TrajectoryJudge]
NO_TREE = SpanTreeRecordingError('no tracer provider')
NO_SPAN_TREE = 'No span tree available — ensure logfire/instrumentation is configured. (no tracer provider)'


# --- a scripted judge --------------------------------------------------------------------------------


@dataclass
class ScriptedJudge:
    """A `FunctionModel` that gives `answers` in turn (a dict is the structured answer, a str a text
    reply, an exception is raised) and records every request it is sent."""

    answers: list[Any]
    requests: list[list[ModelMessage]] = field(default_factory=list)

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self._respond, model_name='scripted-judge')

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        answer = self.answers[min(len(self.requests), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, str):
            return ModelResponse(parts=[TextPart(answer)])
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, answer)])

    @property
    def prompt(self) -> str:
        """The user prompt of the first request: everything the judge was shown about the case."""
        return _part(self.requests[0], UserPromptPart)

    @property
    def system_prompt(self) -> str:
        return _part(self.requests[0], SystemPromptPart)


def _part(messages: list[ModelMessage], kind: type[UserPromptPart] | type[SystemPromptPart]) -> str:
    first = messages[0]
    assert isinstance(first, ModelRequest)
    [content] = [p.content for p in first.parts if isinstance(p, kind)]
    assert isinstance(content, str)
    return content


def judge(*answers: Any) -> ScriptedJudge:
    return ScriptedJudge(list(answers))


def evaluate(evaluator: Evaluator[object, object, object], ctx: EvaluatorContext[object, object, object]) -> Any:
    return evaluator.evaluate_sync(ctx)


def reason(value: float | bool, text: str) -> EvaluationReason:
    return EvaluationReason(value=value, reason=text)


# --- a small support-agent trace ---------------------------------------------------------------------

PROMPT = 'Where is order 42? Also, refund my last order.'
OUTPUT = 'Order 42 ships tomorrow. I could not issue the refund.'


def support_tree() -> SpanTree:
    """`support` looks up an order, fails a refund (retry), and delegates a charge check to `billing`."""
    b = TreeBuilder()
    messages = [{'role': 'user', 'parts': [{'type': 'text', 'content': PROMPT}]}]
    support = b.span(
        'invoke_agent support',
        **{
            'gen_ai.agent.name': 'support',
            'gen_ai.operation.name': 'invoke_agent',
            'pydantic_ai.all_messages': json.dumps(messages),
            'final_result': OUTPUT,
        },
    )
    b.chat(support, **{'gen_ai.usage.input_tokens': 100, 'gen_ai.usage.output_tokens': 20})
    b.tool('lookup_order', support, arguments={'order_id': 42}, **{'gen_ai.tool.call.result': 'ships tomorrow'})
    b.tool(
        'refund',
        support,
        arguments={'order_id': 41},
        status='error',
        **{'pydantic_ai.tool.failure_stage': 'retry', 'gen_ai.tool.call.result': 'refunds need a reason'},
    )
    ask = b.tool('ask_billing', support, arguments={'question': 'charged?'}, **{'gen_ai.tool.call.result': 'yes'})
    billing = b.agent('billing', ask)
    b.chat(billing, **{'gen_ai.usage.input_tokens': 30, 'gen_ai.usage.output_tokens': 5})
    b.tool('charges', billing, arguments={'order_id': 41}, **{'gen_ai.tool.call.result': '[]'})
    return b.build()


SUPPORT_TRAJECTORY = """\
agents: support, support > billing
model requests: 2 (test-model x2); tokens: 130 input, 25 output
tool calls: 4
1. [support] lookup_order -> ok
   arguments: {"order_id": 42}
   result: ships tomorrow
2. [support] refund -> failed: the tool asked the model to retry
   arguments: {"order_id": 41}
   result: refunds need a reason
3. [support] ask_billing -> ok
   arguments: {"question": "charged?"}
   result: yes
4. [support > billing] charges -> ok
   arguments: {"order_id": 41}
   result: []"""


def support_context(**kwargs: Any) -> EvaluatorContext[object, object, object]:
    return evaluator_context(support_tree(), name='case', **kwargs)


# --- render_trajectory --------------------------------------------------------------------------------


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


@pytest.fixture(scope='module')
def scenario_tree() -> SpanTree:
    provider = TracerProvider()
    with capture(provider) as captured:
        run_scenario(version=5, tracer_provider=provider)
    return captured.tree


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


# --- TopicAdherence ------------------------------------------------------------------------------------

TOPICS = {
    'topics': [
        {'topic': 'order status', 'answered': True, 'reference_topic': 'orders'},
        {'topic': 'refund', 'answered': True, 'reference_topic': 'Refunds'},  # spelling is normalised
        {'topic': 'weather', 'answered': True, 'reference_topic': None},
        {'topic': 'card fraud', 'answered': False, 'reference_topic': 'refunds'},
        {'topic': 'politics', 'answered': False, 'reference_topic': None},
    ]
}
GROUPS = (
    "answered on-topic: 'order status' -> 'orders', 'refund' -> 'refunds'; answered off-topic: 'weather';"
    " refused on-topic: 'card fraud' -> 'refunds'; refused off-topic: 'politics'"
)


def test_topic_adherence_shows_the_conversation_trajectory_and_topics() -> None:
    scripted = judge(TOPICS)
    result = evaluate(TopicAdherence(['orders', 'refunds'], mode='precision', model=scripted.model), support_context())
    assert result == reason(2 / 3, f'precision=2/3=0.667; {GROUPS}')
    assert scripted.system_prompt == TOPIC_ADHERENCE_PROMPT
    assert (
        scripted.prompt
        == f"""\
<Input>
{PROMPT}
</Input>
<Output>
{OUTPUT}
</Output>
<Trajectory>
{SUPPORT_TRAJECTORY}
</Trajectory>
<ReferenceTopics>
orders
refunds
</ReferenceTopics>"""
    )


@pytest.mark.parametrize(
    ('mode', 'value', 'summary'),
    [
        ('precision', 2 / 3, 'precision=2/3=0.667'),
        ('recall', 2 / 3, 'recall=2/3=0.667'),
        ('f1', 2 / 3, 'F1=0.667 (precision=2/3=0.667, recall=2/3=0.667)'),
    ],
)
def test_topic_adherence_modes(mode: Any, value: float, summary: str) -> None:
    result = evaluate(TopicAdherence(['orders', 'refunds'], mode=mode, model=judge(TOPICS).model), support_context())
    assert result == reason(value, f'{summary}; {GROUPS}')


def topics(*rows: tuple[str, bool, str | None]) -> dict[str, Any]:
    return {'topics': [{'topic': t, 'answered': a, 'reference_topic': r} for t, a, r in rows]}


@pytest.mark.parametrize(
    ('answer', 'mode', 'value', 'reason_text'),
    [
        (
            topics(('a', True, 'x'), ('b', False, 'x')),
            'f1',
            2 / 3,
            "F1=0.667 (precision=1/1=1.000, recall=1/2=0.500); answered on-topic: 'a' -> 'x'; answered off-topic: none; refused on-topic: 'b' -> 'x'; refused off-topic: none",
        ),
        (
            topics(('a', False, 'x')),
            'precision',
            0.0,
            "precision=0/0 (undefined, scored 0); answered on-topic: none; answered off-topic: none; refused on-topic: 'a' -> 'x'; refused off-topic: none",
        ),
        (
            topics(('a', True, None)),
            'recall',
            0.0,
            "recall=0/0 (undefined, scored 0); answered on-topic: none; answered off-topic: 'a'; refused on-topic: none; refused off-topic: none",
        ),
        (
            topics(('a', True, None)),
            'f1',
            0.0,
            "F1=0.000 (precision=0/1=0.000, recall=0/0 (undefined, scored 0)); answered on-topic: none; answered off-topic: 'a'; refused on-topic: none; refused off-topic: none",
        ),
        (topics(), 'f1', 0.0, 'the judge found no topics in the conversation'),
    ],
    ids=['f1', 'nothing-answered', 'nothing-on-topic', 'f1-zero', 'no-topics'],
)
def test_topic_adherence_edge_scores(answer: dict[str, Any], mode: Any, value: float, reason_text: str) -> None:
    result = evaluate(TopicAdherence(['x'], mode=mode, model=judge(answer).model), support_context())
    assert result == reason(value, reason_text)


def test_topic_adherence_asks_again_when_a_reference_topic_is_unknown() -> None:
    scripted = judge(topics(('a', True, 'shipping')), topics(('a', True, 'orders')))
    result = evaluate(TopicAdherence(['orders'], model=scripted.model), support_context())
    assert result.value == 1.0
    # The retry goes back as a RetryPromptPart (2.4) or a retried ToolReturnPart (2.62): same text.
    retry = scripted.requests[1][-1]
    assert isinstance(retry, ModelRequest)
    assert [str(getattr(p, 'content', '')) for p in retry.parts] == [
        "reference_topic must be one of ['orders'] or null; got ['shipping']"
    ]


def test_topic_adherence_fails_when_the_judge_keeps_inventing_topics() -> None:
    result = evaluate(TopicAdherence(['orders'], model=judge(topics(('a', True, 'shipping'))).model), support_context())
    assert result == reason(
        0.0,
        'judge failed: UnexpectedModelBehavior: Exceeded maximum output retries (1) (last error: ModelRetry:'
        " reference_topic must be one of ['orders'] or null; got ['shipping'])",
    )


# --- AgentGoalAccuracy ---------------------------------------------------------------------------------

GOAL = {'outcome': 'Reported the shipping date; no refund.', 'reason': 'The refund was not issued.', 'achieved': False}


def test_goal_accuracy_with_a_reference() -> None:
    scripted = judge(GOAL)
    result = evaluate(AgentGoalAccuracy('Order 41 refunded', model=scripted.model), support_context())
    assert result == reason(
        0.0, "goal not achieved: The refund was not issued. (outcome: 'Reported the shipping date; no refund.')"
    )
    assert scripted.system_prompt == GOAL_WITH_REFERENCE_PROMPT
    assert scripted.prompt.endswith(
        f'<Trajectory>\n{SUPPORT_TRAJECTORY}\n</Trajectory>\n<Reference>\nOrder 41 refunded\n</Reference>'
    )
    assert scripted.prompt.startswith(f'<Input>\n{PROMPT}\n</Input>\n<Output>\n{OUTPUT}\n</Output>\n')


def test_goal_accuracy_infers_the_goal_without_a_reference() -> None:
    scripted = judge({'goal': 'Track order 42 and get a refund.', **GOAL, 'achieved': True, 'reason': 'Both done.'})
    result = evaluate(AgentGoalAccuracy(model=scripted.model), support_context())
    assert result == reason(
        1.0,
        "goal achieved: Both done. (inferred goal: 'Track order 42 and get a refund.';"
        " outcome: 'Reported the shipping date; no refund.')",
    )
    assert scripted.system_prompt == GOAL_INFERRED_PROMPT
    assert scripted.prompt.endswith('</Trajectory>')  # no <Reference> section


def test_goal_accuracy_reference_from_expected_output() -> None:
    scripted = judge({**GOAL, 'achieved': True})
    ctx = support_context(expected_output={'refunded': 41})
    assert evaluate(AgentGoalAccuracy(use_expected_output=True, model=scripted.model), ctx).value == 1.0
    assert scripted.prompt.endswith('<Reference>\n{"refunded":41}\n</Reference>')
    # An explicit reference wins over the expected output.
    scripted = judge(GOAL)
    evaluate(AgentGoalAccuracy('Order 41 refunded', use_expected_output=True, model=scripted.model), ctx)
    assert scripted.prompt.endswith('<Reference>\nOrder 41 refunded\n</Reference>')


def test_goal_accuracy_fails_without_calling_the_judge_when_the_expected_output_is_missing() -> None:
    scripted = judge(GOAL)
    result = evaluate(AgentGoalAccuracy(use_expected_output=True, model=scripted.model), support_context())
    assert result == reason(0.0, 'no reference: `reference` is not set and the case has no expected_output')
    assert scripted.requests == []


# --- TrajectoryJudge -----------------------------------------------------------------------------------

GRADING: dict[str, Any] = {'reason': 'It retried the refund without a reason.', 'pass': False, 'score': 0.25}


def test_trajectory_judge_prompt_and_default_output() -> None:
    scripted = judge(GRADING)
    rubric = 'The agent never calls refund without a reason.'
    result = evaluate(TrajectoryJudge(rubric, model=scripted.model), support_context(expected_output='ignored'))
    assert result == {'TrajectoryJudge': reason(False, 'It retried the refund without a reason.')}
    assert scripted.system_prompt == TRAJECTORY_JUDGE_PROMPT
    assert (
        scripted.prompt
        == f"""\
<Input>
{PROMPT}
</Input>
<Output>
{OUTPUT}
</Output>
<Trajectory>
{SUPPORT_TRAJECTORY}
</Trajectory>
<Rubric>
{rubric}
</Rubric>"""
    )


def test_trajectory_judge_shows_the_expected_output_when_asked() -> None:
    scripted = judge(GRADING)
    ctx = support_context(expected_output={'shipped': True})
    evaluate(TrajectoryJudge('r', include_expected_output=True, model=scripted.model), ctx)
    assert scripted.prompt.endswith(
        '</Trajectory>\n<ExpectedOutput>\n{"shipped":true}\n</ExpectedOutput>\n<Rubric>\nr\n</Rubric>'
    )


@pytest.mark.parametrize(
    ('options', 'expected'),
    [
        ({'score': {}}, {'TrajectoryJudge_score': 0.25, 'TrajectoryJudge_pass': reason(False, GRADING['reason'])}),
        (
            {'score': {'evaluation_name': 'quality', 'include_reason': True}, 'assertion': False},
            {'quality': reason(0.25, GRADING['reason'])},
        ),
        ({'assertion': {}, 'evaluation_name': 'tools'}, {'tools': False}),
        (
            {'score': {}, 'evaluation_name': 'tools'},
            {'tools_score': 0.25, 'tools_pass': reason(False, GRADING['reason'])},
        ),
    ],
)
def test_trajectory_judge_outputs_follow_llm_judge(options: dict[str, Any], expected: dict[str, Any]) -> None:
    assert evaluate(TrajectoryJudge('r', model=judge(GRADING).model, **options), support_context()) == expected


def test_trajectory_judge_needs_a_span_tree() -> None:
    scripted = judge(GRADING)
    ctx = evaluator_context(NO_TREE, inputs='q', output='a')
    result = evaluate(TrajectoryJudge('r', model=scripted.model, score={}), ctx)
    assert result == {
        'TrajectoryJudge_score': reason(0.0, NO_SPAN_TREE),
        'TrajectoryJudge_pass': reason(False, NO_SPAN_TREE),
    }
    assert scripted.requests == []


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


@pytest.fixture
def default_model() -> Iterator[None]:
    before = default_judge_model()
    yield
    set_default_judge_model(before)  # type: ignore[arg-type]


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


# --- configuration and files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('make', 'message'),
    [
        (lambda: TopicAdherence([]), 'reference_topics must be a non-empty list of topics, got []'),
        (lambda: TopicAdherence(['a', ' ']), "reference_topics must be a non-empty list of topics, got ['a', ' ']"),
        (
            lambda: TopicAdherence(['a'], mode='f2'),  # type: ignore[arg-type]
            "mode must be 'precision', 'recall' or 'f1', got 'f2'",
        ),
        (lambda: AgentGoalAccuracy(''), "reference must be a non-empty string or None, got ''"),
        (lambda: TrajectoryJudge(''), "rubric must be a non-empty string, got ''"),
        (
            lambda: TrajectoryJudge('r', assertion=False),
            'score and assertion are both False: the judge would report nothing',
        ),
    ],
)
def test_bad_configuration_raises(make: Any, message: str) -> None:
    with pytest.raises(ValueError) as error:
        make()
    assert str(error.value) == message


ROUND_TRIP: list[Evaluator[object, object, object]] = [
    TopicAdherence(['orders', 'refunds']),
    AgentGoalAccuracy(),
    AgentGoalAccuracy('Order 41 refunded'),
    TrajectoryJudge('never retries a failed call'),
    TopicAdherence(
        ['orders'],
        mode='precision',
        model='openai:gpt-4o',
        model_settings={'temperature': 0.0},
        evaluation_name='topics',
        agent='support',
        include_subagents=False,
    ),
    AgentGoalAccuracy(use_expected_output=True, model='anthropic:claude-sonnet-4-5', evaluation_name='goal'),
    TrajectoryJudge(
        'r',
        include_expected_output=True,
        score={'evaluation_name': 'quality', 'include_reason': True},
        assertion=False,
        agent='billing',
    ),
]


@pytest.mark.parametrize('suffix', ['.yaml', '.json'])
def test_yaml_round_trip(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f'dataset{suffix}'
    dataset = Dataset[object, object, object](name='d', cases=[Case(name='c', inputs='x')], evaluators=ROUND_TRIP)
    dataset.to_file(path, custom_evaluator_types=JUDGES)
    loaded = Dataset[object, object, object].from_file(path, custom_evaluator_types=JUDGES)
    assert loaded.evaluators == ROUND_TRIP
    if suffix == '.yaml':
        text = path.read_text()
        assert '- TopicAdherence:\n  - orders\n  - refunds\n' in text
        assert '- AgentGoalAccuracy\n' in text
        assert '- AgentGoalAccuracy: Order 41 refunded\n' in text
        assert '- TrajectoryJudge: never retries a failed call\n' in text


def test_a_model_instance_is_written_as_its_id(tmp_path: Path) -> None:
    path = tmp_path / 'dataset.yaml'
    evaluators: list[Evaluator[object, object, object]] = [TrajectoryJudge('r', model=judge(GRADING).model)]
    Dataset[object, object, object](name='d', cases=[Case(name='c', inputs='x')], evaluators=evaluators).to_file(
        path, custom_evaluator_types=JUDGES
    )
    assert '- TrajectoryJudge:\n    rubric: r\n    model: function:scripted-judge\n' in path.read_text()


def test_hand_written_yaml(tmp_path: Path) -> None:
    path = tmp_path / 'dataset.yaml'
    path.write_text(
        'cases:\n- name: c\n  inputs: x\n'
        'evaluators:\n'
        '- TopicAdherence: [orders, refunds]\n'
        '- AgentGoalAccuracy\n'
        '- TrajectoryJudge: {rubric: r, model: "openai:gpt-4o", score: {}, agent: billing}\n'
    )
    loaded = Dataset[object, object, object].from_file(path, custom_evaluator_types=JUDGES)
    assert loaded.evaluators == [
        TopicAdherence(['orders', 'refunds']),
        AgentGoalAccuracy(),
        TrajectoryJudge('r', model='openai:gpt-4o', score={}, agent='billing'),
    ]


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
