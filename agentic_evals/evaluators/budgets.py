"""Whether the agent stayed within its budget of tool calls and model requests."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext
from pydantic_evals.otel import SpanTreeRecordingError

from ..conventions.pydantic_evals import REQUESTS_METRIC
from ..scoring.metrics import budget_reason, max_model_requests, max_tool_calls
from ..trajectory.trajectory import Trajectory
from . import _checks as checks
from ._base import ConversationSource, TrajectoryEvaluator, as_reason

_FROM_METRIC = f'ctx.metrics[{REQUESTS_METRIC!r}]'
_METRIC_SUFFIXES: dict[object, str] = {}
"""`MaxModelRequests`' reason after the count, by budget (a budget is a small int)."""


@dataclass(repr=False)
class MaxToolCalls(TrajectoryEvaluator):
    """Pass when the agent made at most `max_calls` tool calls.

    Failed attempts count by default: they cost time and tokens like any other call. Deferred
    calls and output functions never count. Drop-in for pydantic-evals' `MaxToolCalls`.

    Args:
        max_calls: The budget.
        include_failed: Count failed attempts (default `True`).
        evaluation_name: Name shown in reports instead of the class name.
        agent: Count only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
        conversation: Score the conversation in the case's `'output'` or `'inputs'` (pydantic-ai
            messages, OpenAI chat messages or ragas messages) instead of the spans.
    """

    max_calls: int
    include_failed: bool = True
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        return [
            checks.non_negative_int('max_calls', self.max_calls),
            checks.flag('include_failed', self.include_failed),
        ]

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        if trajectory.call_count(include_failed=True) == 0 and (note := trajectory.unrecognised) is not None:
            return EvaluationReason(value=False, reason=f'no tool call counted: {note}')
        return as_reason(max_tool_calls(trajectory, self.max_calls, include_failed=self.include_failed, **self.scope()))


@dataclass(repr=False)
class MaxModelRequests(TrajectoryEvaluator):
    """Pass when the agent made at most `max_requests` model requests.

    Without agent scoping, pydantic-evals' `requests` metric is used when the case has it (it is
    counted from the same spans); otherwise, and whenever `agent` narrows the scope, the model
    request spans are counted. Drop-in for pydantic-evals' `MaxModelRequests`.

    Args:
        max_requests: The budget.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Count only the requests of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out requests made by sub-agents.
        conversation: Count the model responses of the conversation in the case's `'output'` or
            `'inputs'` instead of the spans.
    """

    max_requests: int
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        return [checks.non_negative_int('max_requests', self.max_requests)]

    def evaluate(self, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        # pydantic-evals counted the requests already: read its metric and extract nothing. This is
        # all the evaluator does on most cases, so it does no more than the built-in does.
        metric = ctx.metrics.get(REQUESTS_METRIC)
        if (
            (isinstance(metric, int) or (isinstance(metric, float) and math.isfinite(metric)))
            and metric != 0  # pydantic-evals counts only its own kind of request span: a 0 is checked
            and self.conversation is None
            and self.agent is None
            and self.include_subagents
        ):
            try:
                _ = ctx.span_tree  # checked first, as the built-in does
            except SpanTreeRecordingError:
                return super().evaluate(ctx)
            count = int(metric)
            # The shared phrase with the count left out, made once per budget: formatting it on
            # every case would cost more than the rest of this path.
            suffix = _METRIC_SUFFIXES.get(self.max_requests)
            if suffix is None:
                suffix = _METRIC_SUFFIXES[self.max_requests] = budget_reason(
                    0, _FROM_METRIC, self.max_requests, None, True
                )[1:]
            return EvaluationReason(value=count <= self.max_requests, reason=f'{count}{suffix}')
        return super().evaluate(ctx)

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        source = 'span tree' if self.conversation is None else f'ctx.{self.conversation}'
        if trajectory.request_count() == 0 and (note := trajectory.unrecognised) is not None:
            return EvaluationReason(value=False, reason=f'no model request counted: {note}')
        return as_reason(max_model_requests(trajectory, self.max_requests, source=source, **self.scope()))
