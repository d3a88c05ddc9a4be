"""Whether the agent made the reference calls, arguments included: ragas' two deterministic tool metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext

from ..scoring.metrics import parse_reference_calls, tool_call_accuracy, tool_call_f1
from ..trajectory.trajectory import Trajectory
from . import _checks as checks
from ._base import ConversationSource, ScoreEvaluator, as_reason


def _reference_problem(reference_tool_calls: object) -> str | None:
    """A bad reference call list fails at construction, naming the bad call, not at evaluation."""
    try:
        parse_reference_calls(reference_tool_calls)  # type: ignore[arg-type]
    except ValueError as e:
        return str(e)
    return None


@dataclass(repr=False)
class ToolCallAccuracy(ScoreEvaluator):
    """Score from 0.0 to 1.0 how well the calls and their arguments match `reference_tool_calls`.

    ragas' ToolCallAccuracy: 0.0 unless the tool names line up with the reference (in order, or in
    any order with `strict_order=False`); then the share of reference arguments the calls got right,
    averaged over the reference calls. Values compare as canonical JSON, where ragas compares `str()`
    (see `docs/ragas.md` for the differences).

    Args:
        reference_tool_calls: The expected calls, in order: `[{"name": "search", "args": {"q": "x"}}]`.
        strict_order: Require the calls in the reference's order (default `True`).
        include_failed: Also score attempts that failed.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Score only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
        conversation: Score the conversation in the case's `'output'` or `'inputs'` (pydantic-ai
            messages, OpenAI chat messages or ragas messages) instead of the spans.
        threshold: Also report the assertion `<name>_pass`: whether the score is at least this.
    """

    reference_tool_calls: list[dict[str, Any]]
    strict_order: bool = True
    include_failed: bool = False
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None
    threshold: float | None = None

    def problems(self) -> list[str | None]:
        return [_reference_problem(self.reference_tool_calls), checks.flag('include_failed', self.include_failed)]

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return as_reason(
            tool_call_accuracy(
                trajectory,
                self.reference_tool_calls,
                strict_order=self.strict_order,
                include_failed=self.include_failed,
                **self.scope(),
            )
        )


@dataclass(repr=False)
class ToolCallF1(ScoreEvaluator):
    """F1 from 0.0 to 1.0 of the calls (name and arguments) against `reference_tool_calls`, in any order.

    ragas' ToolCallF1 counted on multisets: a call made twice must be expected twice, and no calls
    with no reference calls scores 1.0 (ragas collapses repeats and scores that 0.0).

    Args:
        reference_tool_calls: The expected calls: `[{"name": "search", "args": {"q": "x"}}]`.
        include_failed: Also score attempts that failed.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Score only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
        conversation: Score the conversation in the case's `'output'` or `'inputs'` (pydantic-ai
            messages, OpenAI chat messages or ragas messages) instead of the spans.
        threshold: Also report the assertion `<name>_pass`: whether the score is at least this.
    """

    reference_tool_calls: list[dict[str, Any]]
    include_failed: bool = False
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None
    threshold: float | None = None

    def problems(self) -> list[str | None]:
        return [_reference_problem(self.reference_tool_calls), checks.flag('include_failed', self.include_failed)]

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return as_reason(
            tool_call_f1(trajectory, self.reference_tool_calls, include_failed=self.include_failed, **self.scope())
        )
