"""Whether the agent stayed within its budgets: tool calls, model requests, tokens, cost, time, failures."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import timedelta

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext
from pydantic_evals.otel import SpanTreeRecordingError

from ..conventions.pydantic_evals import REQUESTS_METRIC
from ..scoring.checks import (
    cost_problems,
    duration_problems,
    failed_call_problems,
    max_cost,
    max_duration,
    max_failed_calls,
    max_tokens,
    task_duration,
    token_problems,
)
from ..scoring.metrics import budget_reason, calls_budget_reason, max_model_requests, max_tool_calls_of
from ..trajectory.records import FailureStage
from ..trajectory.trajectory import Recorded, Trajectory
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
        every = trajectory.call_count(include_failed=True)
        if every == 0 and (note := trajectory.unrecorded('tool calls')) is not None:
            return EvaluationReason(value=False, reason=f'no tool call counted: {note}')
        if self.include_failed and self.agent is None and self.include_subagents:
            # `max_tool_calls_of`'s count is the one just made: not counted again.
            return EvaluationReason(value=every <= self.max_calls, reason=calls_budget_reason(every, self.max_calls))
        value, reason = max_tool_calls_of(
            trajectory, self.max_calls, self.include_failed, self.agent, self.include_subagents
        )
        return EvaluationReason(value=value, reason=reason)


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

    def reads(self) -> Recorded:
        return 'model requests'

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
        return as_reason(max_model_requests(trajectory, self.max_requests, source=source, **self.scope()))


@dataclass(repr=False)
class MaxTokens(TrajectoryEvaluator):
    """Pass when the model requests in scope used at most the given tokens; fail naming the limit
    that broke, with the figures.

    Counted from the model-request spans only, never from pydantic-evals' `ctx.metrics`: the spans
    can be scoped to an agent, and on pydantic-ai runs the two agree (pydantic-evals sums the same
    usage attributes). A trace whose requests recorded no token usage fails: a limit that cannot be
    measured does not pass.

    Args:
        max_total: At most this many input plus output tokens.
        max_input: At most this many input tokens.
        max_output: At most this many output tokens.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Count only the requests of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out requests made by sub-agents.
        conversation: Count the model responses of the conversation in the case's `'output'` or
            `'inputs'` (with the usage they carry) instead of the spans.
    """

    def reads(self) -> Recorded:
        return 'model requests'

    max_total: int | None = None
    max_input: int | None = None
    max_output: int | None = None
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        return token_problems(self.max_total, self.max_input, self.max_output)

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return as_reason(
            max_tokens(trajectory, self.max_total, max_input=self.max_input, max_output=self.max_output, **self.scope())
        )


@dataclass(repr=False)
class MaxCost(TrajectoryEvaluator):
    """Pass when the recorded cost of the model requests in scope is at most `max_cost`.

    Summed from the request spans (`operation.cost`, `llm.cost.total`), in the unit they record
    (USD for pydantic-ai and OpenInference), never from `ctx.metrics` (see `MaxTokens`). When no
    request recorded a cost it fails saying so, rather than passing on zero.

    Args:
        max_cost: The budget.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Count only the requests of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out requests made by sub-agents.
        conversation: Sum the cost recorded on the conversation's responses in the case's `'output'`
            or `'inputs'` instead of the spans.
    """

    def reads(self) -> Recorded:
        return 'model requests'

    max_cost: float
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        return cost_problems(self.max_cost)

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return as_reason(max_cost(trajectory, self.max_cost, **self.scope()))


def _measured(duration: object) -> float | None:
    """`ctx.duration` when the task's time was measured; 0 (a context built by hand) was not."""
    if isinstance(duration, (int, float)) and not isinstance(duration, bool) and math.isfinite(duration):
        return float(duration) if duration > 0 else None
    return None


@dataclass(repr=False)
class MaxDuration(TrajectoryEvaluator):
    """Pass when the run took at most `seconds`, and each call or agent run given a limit took no
    longer than it; fail naming the slowest offenders.

    A drop-in for pydantic-evals' `MaxDuration` (the same first field, `seconds`, and the same
    figure): unscoped, the run time is the task's measured duration, `ctx.duration`, so no span
    tree is needed. Scoped to an agent it is the wall time of that agent's runs (first start to
    last end), from the spans; with no measured duration, the extent of every span in the run.

    Args:
        seconds: The longest the run may take (`None`: only the per-tool and per-agent limits).
        per_tool: `{tool: seconds}`: the longest one call of that tool may take (failed attempts too).
        per_agent: `{agent: seconds}`: the longest one run of that agent may take.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Time the runs and calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out the runs and calls of sub-agents.
        conversation: Time the conversation in the case's `'output'` or `'inputs'`, by its
            messages' timestamps, instead of the spans.
    """

    seconds: float | timedelta | None = None
    per_tool: dict[str, float] | None = None
    per_agent: dict[str, float] | None = None
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        return duration_problems(self.seconds, self.per_tool, self.per_agent)

    def evaluate(self, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        # The built-in's check, and all this does on most cases: no span tree needed.
        if (
            self.seconds is not None
            and not self.per_tool
            and not self.per_agent
            and self.conversation is None
            and self.agent is None
            and self.include_subagents
            and (duration := _measured(ctx.duration)) is not None
        ):
            return as_reason(task_duration(duration, self.seconds))
        return super().evaluate(ctx)

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        measured = _measured(ctx.duration) if self.conversation is None else None
        return as_reason(
            max_duration(
                trajectory,
                self.seconds,
                per_tool=self.per_tool,
                per_agent=self.per_agent,
                run_duration=measured,
                **self.scope(),
            )
        )


@dataclass(repr=False)
class MaxFailedCalls(TrajectoryEvaluator):
    """Pass when at most `max_failed` tool call attempts failed; the reason lists them by tool and
    failure stage.

    Args:
        max_failed: The budget.
        stages: Count only failures at these stages: `validation` (the arguments did not validate),
            `retry` (the tool asked the model to retry), `raised` (the tool raised); `None`: all.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Count only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
        conversation: Count the failed calls of the conversation in the case's `'output'` or
            `'inputs'` instead of the spans.
    """

    max_failed: int
    stages: list[FailureStage] | None = None
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        return failed_call_problems(self.max_failed, self.stages)

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return as_reason(max_failed_calls(trajectory, self.max_failed, stages=self.stages, **self.scope()))
