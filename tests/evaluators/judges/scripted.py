"""Shared by the judge tests: a scripted judge model, a small support-agent trace, and a YAML round trip.

A scripted judge is a pydantic-ai `FunctionModel` that gives prepared answers and records what it
was sent, so a test can assert both the prompt a judge builds and the score it computes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext
from pydantic_evals.otel import SpanTree, SpanTreeRecordingError

from agentic_evals import AgentGoalAccuracy, TopicAdherence, TrajectoryJudge, evaluator_context

from ...factories import TreeBuilder

JUDGES: list[type[Evaluator[object, object, object]]] = [AgentGoalAccuracy, TopicAdherence, TrajectoryJudge]
NO_TREE = SpanTreeRecordingError('no tracer provider')
NO_SPAN_TREE = (
    'No span tree available — ensure logfire/instrumentation is configured. (no spans were recorded: set any'
    ' OpenTelemetry SDK tracer provider before the case runs, e.g. trace.set_tracer_provider(TracerProvider()),'
    ' or call logfire.configure())'
)


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


# --- answers each judge accepts -------------------------------------------------------------------------


def topics(*rows: tuple[str, bool, str | None]) -> dict[str, Any]:
    """A `TopicAdherence` answer: (topic, answered, reference topic) per row."""
    return {'topics': [{'topic': t, 'answered': a, 'reference_topic': r} for t, a, r in rows]}


GOAL = {'outcome': 'Reported the shipping date; no refund.', 'reason': 'The refund was not issued.', 'achieved': False}
"""An `AgentGoalAccuracy` answer with a reference."""

GRADING: dict[str, Any] = {'reason': 'It retried the refund without a reason.', 'pass': False, 'score': 0.25}
"""A `TrajectoryJudge` answer."""


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
"""`support_tree()` as the judges are shown it."""


def support_context(**kwargs: Any) -> EvaluatorContext[object, object, object]:
    return evaluator_context(support_tree(), name='case', **kwargs)


# --- dataset files ----------------------------------------------------------------------------------------


def round_trip(evaluators: list[Evaluator[object, object, object]], path: Path) -> str:
    """Write `evaluators` in a dataset file, check they load back equal, and return the file's text."""
    dataset = Dataset[object, object, object](name='d', cases=[Case(name='c', inputs='x')], evaluators=evaluators)
    dataset.to_file(path, custom_evaluator_types=JUDGES)
    loaded = Dataset[object, object, object].from_file(path, custom_evaluator_types=JUDGES)
    assert loaded.evaluators == evaluators
    return path.read_text()


def load_evaluators(tmp_path: Path, yaml_list: str) -> list[Evaluator[object, object, object]]:
    """The evaluators of a hand-written dataset file whose `evaluators:` list is `yaml_list`."""
    path = tmp_path / 'dataset.yaml'
    path.write_text(f'cases:\n- name: c\n  inputs: x\nevaluators:\n{yaml_list}')
    return Dataset[object, object, object].from_file(path, custom_evaluator_types=JUDGES).evaluators
