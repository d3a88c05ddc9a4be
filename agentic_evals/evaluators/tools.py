"""Which tools were called, and with which arguments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext

from ..scoring.metrics import argument_correctness_of, tool_correctness, tool_correctness_of
from ..trajectory.trajectory import Trajectory
from . import _checks as checks
from ._base import ConversationSource, TrajectoryEvaluator, as_reason, prepared_names

ArgumentMatchMode = Literal['exact', 'subset']
"""`'subset'`: every expected key is present with an equal value; `'exact'`: the same keys too."""

ArgumentOccurrence = Literal['first', 'last']
"""Which call to check when the tool was called several times (or a 0-based index)."""


@dataclass(repr=False)
class ToolCorrectness(TrajectoryEvaluator):
    """Pass when the agent called exactly the expected tools, compared as a multiset.

    Order is ignored; repeats matter (`['search', 'search']` needs two calls). Drop-in for
    pydantic-evals' `ToolCorrectness`, plus `agent` / `include_subagents` scoping.

    Args:
        expected_tools: Tool names the agent should call, with repeats.
        allow_extra: Also pass when the agent called tools beyond the expected ones.
        include_failed: Count attempts that failed (raised, asked for a retry, invalid arguments).
        evaluation_name: Name shown in reports instead of the class name.
        agent: Score only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents of `agent`
            (of the top-level agent when `agent` is `None`).
        conversation: Score the conversation in the case's `'output'` or `'inputs'` (pydantic-ai
            messages, OpenAI chat messages or ragas messages) instead of the spans.
    """

    expected_tools: list[str]
    allow_extra: bool = False
    include_failed: bool = False
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        return [
            checks.texts('expected_tools', self.expected_tools),
            checks.flag('allow_extra', self.allow_extra),
            checks.flag('include_failed', self.include_failed),
        ]

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        expected = prepared_names(self, 'expected_tools')
        if expected is not None:
            value, reason = tool_correctness_of(
                trajectory, expected, self.allow_extra, self.include_failed, self.agent, self.include_subagents
            )
            return EvaluationReason(value=value, reason=reason)
        return as_reason(
            tool_correctness(
                trajectory,
                self.expected_tools,
                allow_extra=self.allow_extra,
                include_failed=self.include_failed,
                **self.scope(),
            )
        )


@dataclass(repr=False)
class ArgumentCorrectness(TrajectoryEvaluator):
    """Pass when one call of `tool_name` received the expected arguments.

    Only top-level keys are compared, each value with `==` (a nested dict must be equal as a
    whole). Drop-in for pydantic-evals' `ArgumentCorrectness`, plus agent scoping.

    Args:
        tool_name: The tool whose call is checked.
        expected_arguments: The expected argument names and values.
        match_mode: `'subset'` (default) allows extra keys in the call; `'exact'` does not.
        occurrence: `'first'`, `'last'` or a 0-based index among the tool's calls.
        include_failed: Consider failed attempts too; each attempt is its own occurrence.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Consider only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
        conversation: Score the conversation in the case's `'output'` or `'inputs'` (pydantic-ai
            messages, OpenAI chat messages or ragas messages) instead of the spans.
    """

    tool_name: str
    expected_arguments: dict[str, Any]
    match_mode: ArgumentMatchMode = 'subset'
    occurrence: ArgumentOccurrence | int = 'first'
    include_failed: bool = False
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        # An out-of-range index is not a configuration error: it fails the evaluation with a reason,
        # as pydantic-evals' ArgumentCorrectness does, since how often a tool is called varies.
        occurrence_ok = self.occurrence in ('first', 'last') or (
            isinstance(self.occurrence, int) and not isinstance(self.occurrence, bool)
        )
        return [
            checks.text('tool_name', self.tool_name),
            checks.mapping('expected_arguments', self.expected_arguments),
            checks.choice('match_mode', self.match_mode, ('subset', 'exact')),
            None if occurrence_ok else f"occurrence must be 'first', 'last' or an index, got {self.occurrence!r}",
            checks.flag('include_failed', self.include_failed),
        ]

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        value, reason = argument_correctness_of(
            trajectory,
            self.tool_name,
            self.expected_arguments,
            self.match_mode,
            self.occurrence,
            self.include_failed,
            self.agent,
            self.include_subagents,
        )
        return EvaluationReason(value=value, reason=reason)
