"""Pass or fail on the expected tool calls: LangChain's trajectory match modes and ADK's IN_ORDER."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext

from ..scoring.argument_rules import ArgumentsMode
from ..scoring.tool_call_match import Config, ToolCallMatchMode, ToolCallMatchResult, parse_config
from ..trajectory.trajectory import Trajectory
from . import _checks as checks
from ._base import ConversationSource, EvaluationValue, ScoreEvaluator, as_reason


@dataclass(repr=False)
class ToolCallMatch(ScoreEvaluator):
    """Pass when the agent made the expected calls, under `mode`, with matching arguments.

    The reason lists the pairing, the missing and extra calls, and each argument mismatch. Calls
    pair one to one by a maximum matching, so a valid pairing is found whenever one exists.

    Args:
        expected_calls: The expected calls, `[{"name": "refund", "arguments": {"amount": 10}}]`
            (without `arguments`, any call of the tool matches), or a conversation (pydantic-ai,
            OpenAI chat or ragas/LangChain messages), whose model responses `strict` compares. A
            list of such lists is one expectation per turn: the value is then the share of turns
            that match (ADK's `tool_trajectory_avg_score`), a score that `threshold` can gate.
        mode: `'strict'` (default: the same responses in order, each one's calls in any order),
            `'unordered'`, `'subset'`, `'superset'` or `'in_order'`.
        arguments: `'exact'` (default), `'ignore'`, `'subset'` (the call's arguments are a subset
            of the expected ones) or `'superset'` (the call has every expected key and value).
        tool_arguments: Per tool: a mode, a list of dotted keys to compare alone, or (from Python)
            a callable `(actual, expected) -> bool`.
        argument_rules: Per tool (or `'*'` for all), per dotted key: `ignore`, or a mapping of
            `abs`/`rel` (numeric tolerance), `regex`, `ignore_case`, `ignore_whitespace`, `one_of`,
            or (from Python) a callable `(actual, expected) -> bool`.
        include_failed: Also pair attempts that failed.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Score only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
        conversation: Score the conversation in the case's `'output'` or `'inputs'` instead of the spans.
        threshold: With per-turn expectations, also report `<name>_pass`: whether the share of
            matching turns is at least this.
    """

    expected_calls: list[Any]
    mode: ToolCallMatchMode = 'strict'
    arguments: ArgumentsMode = 'exact'
    tool_arguments: dict[str, Any] | None = None
    argument_rules: dict[str, dict[str, Any]] | None = None
    include_failed: bool = False
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None
    threshold: float | None = None

    def problems(self) -> list[str | None]:
        try:
            self._config = parse_config(
                self.expected_calls, self.mode, self.arguments, self.tool_arguments, self.argument_rules
            )
        except ValueError as e:
            return [str(e)]
        single = self.threshold is not None and not self._config.per_turn
        return [
            checks.flag('include_failed', self.include_failed),
            'threshold needs expected calls per turn (one expectation is pass/fail already)' if single else None,
        ]

    _config: Config = field(init=False, repr=False, compare=False)

    def build_serialization_arguments(self) -> dict[str, Any]:
        arguments = super().build_serialization_arguments()
        arguments.pop('_config', None)
        return arguments

    @property
    def failing_value(self) -> EvaluationValue:
        return 0.0 if self._config.per_turn else False

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return as_reason(self.match(trajectory))

    def match(self, trajectory: Trajectory) -> ToolCallMatchResult:
        """The result with its pairing (what `assert_trajectory` draws its diff from)."""
        return self._config.score(trajectory, self.include_failed, self.agent, self.include_subagents)
